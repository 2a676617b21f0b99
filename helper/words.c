/* Reading the words of command lines: see words.h. */
#include "libgit.h"
#include "quote.h"
#include "words.h"

/*
 * The word at `p` appended to `out`, NUL-terminated; returns where it
 * ends (a space or the end of the string).
 */
static const char *read_word(const char *p, struct strbuf *out,
			     const char *what)
{
	size_t start = out->len;
	const char *end;

	if (*p == '"') {
		if (unquote_c_style(out, p, &end))
			die("%s has a badly quoted word", what);
		if (memchr(out->buf + start, '\0', out->len - start))
			die("%s holds a NUL byte", what);
		if (*end && *end != ' ')
			die("%s has a quoted word followed by more than a space",
			    what);
	} else {
		end = strchrnul(p, ' ');
		if (end == p)
			die("%s has an empty word (a word may be \"\")", what);
		strbuf_add(out, p, end - p);
	}
	strbuf_addch(out, '\0');
	return end;
}

void split_words(const struct strbuf *line, struct strbuf *buf,
		 const char *argv[MAX_WORDS + 1])
{
	static const char what[] = "helper command line";
	size_t start[MAX_WORDS];
	const char *p = line->buf;
	int argc = 0, i;

	if (memchr(line->buf, '\0', line->len))
		die("%s holds a NUL byte", what);
	strbuf_reset(buf);
	for (;;) {
		if (argc == MAX_WORDS)
			die("%s has more than %d words", what, MAX_WORDS);
		start[argc++] = buf->len;
		p = read_word(p, buf, what);
		if (!*p)
			break;
		p++;
	}
	/* Pointers only now: buf may have moved as it grew. */
	for (i = 0; i < argc; i++)
		argv[i] = buf->buf + start[i];
	argv[argc] = NULL;
}

void read_one_word(const char *text, struct strbuf *out, const char *what)
{
	strbuf_reset(out);
	if (*read_word(text, out, what))
		die("%s has more than one word", what);
	/* read_word's terminating NUL is not part of the word. */
	strbuf_setlen(out, out->len - 1);
}
