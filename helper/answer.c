/* Writing the helper's answers: see answer.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "answer.h"

void answer_flush(FILE *out)
{
	if (fflush(out) || ferror(out))
		die_errno("cannot write an answer");
}

void answer_vprintf(FILE *out, const char *fmt, va_list ap)
{
	vfprintf(out, fmt, ap);
	answer_flush(out);
}

void answer_message(FILE *out, const char *word, const char *msg,
		    size_t len)
{
	size_t i;

	fputs(word, out);
	fputc(' ', out);
	for (i = 0; i < len; i++)
		fputc(msg[i] == '\n' ? ' ' : msg[i], out);
	fputc('\n', out);
}

void answer_messagef(FILE *out, const char *word, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	answer_message(out, word, msg.buf, msg.len);
	strbuf_release(&msg);
}
