/* Deltas between sorted manifest texts: see manifest-delta.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "manifest-delta.h"
#include "hg-delta.h"

/* One line of a manifest text: [start, end) with the '\n'. */
struct mline_span {
	const char *start, *end, *limit;
	size_t path_len;
};

static void span_at(struct mline_span *s, const char *p, const char *limit)
{
	const char *nl = p < limit ? memchr(p, '\n', limit - p) : NULL;
	const char *nul;

	s->start = p;
	s->limit = limit;
	s->end = nl ? nl + 1 : limit;
	nul = memchr(p, '\0', s->end - p);
	s->path_len = (nul ? nul : s->end) - p;
}

static int span_done(const struct mline_span *s)
{
	return s->start >= s->limit;
}

static void span_next(struct mline_span *s)
{
	span_at(s, s->end, s->limit);
}

static int span_same(const struct mline_span *a, const struct mline_span *b)
{
	size_t len = a->end - a->start;
	return len == (size_t)(b->end - b->start) &&
	       !memcmp(a->start, b->start, len);
}

/* Order of the paths; -1 when `a` comes first. */
static int span_cmp(const struct mline_span *a, const struct mline_span *b)
{
	size_t min = a->path_len < b->path_len ? a->path_len : b->path_len;
	int cmp = memcmp(a->start, b->start, min);
	if (cmp)
		return cmp < 0 ? -1 : 1;
	return a->path_len < b->path_len ? -1 : a->path_len > b->path_len;
}

void manifest_delta(const char *base, size_t base_len, const char *text,
		    size_t len, struct strbuf *delta)
{
	struct mline_span a, b;

	span_at(&a, base, base + base_len);
	span_at(&b, text, text + len);
	while (!span_done(&a) || !span_done(&b)) {
		const char *hunk_a = a.start, *hunk_b = b.start;

		if (!span_done(&a) && !span_done(&b) && span_same(&a, &b)) {
			span_next(&a);
			span_next(&b);
			continue;
		}
		/* A run of differing lines, up to the next common one. */
		do {
			int cmp = span_done(&a) ? 1 : span_done(&b) ? -1 :
				  span_cmp(&a, &b);
			if (cmp <= 0)
				span_next(&a);
			if (cmp >= 0)
				span_next(&b);
		} while ((!span_done(&a) || !span_done(&b)) &&
			 (span_done(&a) || span_done(&b) || !span_same(&a, &b)));
		hg_delta_add_hunk(delta, hunk_a - base, a.start - base,
				  hunk_b, b.start - hunk_b);
	}
}
