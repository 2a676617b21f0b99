/*
 * Reading the words of the helper's command lines (PROTOCOL.md, Framing),
 * and the paths of http's X-Cinnabar-Body-File and X-Cinnabar-Output-File
 * lines, framed the same way: a word that starts with '"' is C-quoted
 * (git's unquote_c_style: \\, \", \a \b \f \n \r \t \v and three octal
 * digits) and ends at its closing quote; any other word is taken as it
 * is, up to the next space. No word holds a NUL byte. Whatever breaks
 * these rules dies: the line cannot be read the way it was meant.
 */
#ifndef CINNABAR_WORDS_H
#define CINNABAR_WORDS_H

/* The most words a command line has, its command name included. */
#define MAX_WORDS 7

/*
 * Split the command line `line` (without its LF) into its words, kept in
 * `buf`; `argv` gets them, then NULL.
 */
void split_words(const struct strbuf *line, struct strbuf *buf,
		 const char *argv[MAX_WORDS + 1]);

/* `text`, one word filling it all, into `out`; `what` names it. */
void read_one_word(const char *text, struct strbuf *out, const char *what);

#endif
