/* Making Mercurial deltas between two texts: see hg-diff.h. */
#include "cache.h"
#include "strbuf.h"
#include "xdiff/xdiff.h"
#include "hg-diff.h"

/* Where each line of a text starts, and its length as a last entry. */
struct line_starts {
	size_t *at;
	size_t nr, alloc;
};

static void find_lines(struct line_starts *l, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	l->nr = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		ALLOC_GROW(l->at, l->nr + 1, l->alloc);
		l->at[l->nr++] = p - buf;
		p = nl ? nl + 1 : end;
	}
	ALLOC_GROW(l->at, l->nr + 1, l->alloc);
	l->at[l->nr] = len;
}

struct diff_state {
	struct line_starts base, text;
	const char *text_buf;
	struct strbuf *delta;
};

static void add_hunk(struct strbuf *delta, size_t start, size_t end,
		     const char *data, size_t len)
{
	unsigned char header[12];
	put_be32(header, start);
	put_be32(header + 4, end);
	put_be32(header + 8, len);
	strbuf_add(delta, header, 12);
	strbuf_add(delta, data, len);
}

/* xdiff's hunk callback: line numbers are 0-based. */
static int add_line_hunk(long start_a, long count_a, long start_b,
			 long count_b, void *data)
{
	struct diff_state *d = data;
	size_t from = d->text.at[start_b], to = d->text.at[start_b + count_b];

	add_hunk(d->delta, d->base.at[start_a], d->base.at[start_a + count_a],
		 d->text_buf + from, to - from);
	return 0;
}

void hg_diff(const char *base, size_t base_len, const char *text,
	     size_t len, struct strbuf *delta)
{
	static struct diff_state d;
	mmfile_t a = { (char *)base, base_len }, b = { (char *)text, len };
	xpparam_t xpp = { 0 };
	xdemitconf_t xecfg = { 0 };
	xdemitcb_t ecb = { 0 };
	size_t delta_len = delta->len;

	find_lines(&d.base, base, base_len);
	find_lines(&d.text, text, len);
	d.text_buf = text;
	d.delta = delta;
	xecfg.hunk_func = add_line_hunk;
	ecb.priv = &d;
	if (xdl_diff(&a, &b, &xpp, &xecfg, &ecb) < 0) {
		/* Out of memory in xdiff: one hunk replacing everything. */
		strbuf_setlen(delta, delta_len);
		add_hunk(delta, 0, base_len, text, len);
	}
}
