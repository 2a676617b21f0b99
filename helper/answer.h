/*
 * Writing the helper's answers (PROTOCOL.md): main.c's one-line answers
 * go through answer_vprintf, and fsck (fsck.c, fsck-files.c) writes its
 * `problem` and `unlike-hg` lines with answer_message as it finds them,
 * in a forked checker too. (main.c writes its block streams and lists
 * itself; http's response is written by http-client.c.)
 */
#ifndef CINNABAR_ANSWER_H
#define CINNABAR_ANSWER_H

/*
 * Flush the answers written to `out`; die when they cannot be written (the
 * other end would wait for them for ever).
 */
void answer_flush(FILE *out);

/* An answer formatted as by printf, flushed. */
__attribute__((format (printf, 2, 0)))
void answer_vprintf(FILE *out, const char *fmt, va_list ap);

/*
 * A line `<word> <message>\n` whose message is for people: one line, a
 * newline in it written as a space. Not flushed: the lines of fsck come
 * before its final answer, which is.
 */
void answer_message(FILE *out, const char *word, const char *msg,
		    size_t len);
__attribute__((format (printf, 3, 4)))
void answer_messagef(FILE *out, const char *word, const char *fmt, ...);

#endif
