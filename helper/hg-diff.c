/* Making Mercurial deltas between two texts: see hg-diff.h. */
#include "libgit.h"
#include "strbuf.h"
#include "xdiff/xdiff.h"
#include "hg-diff.h"
#include "hg-delta.h"

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
	size_t offset;		/* where the compared parts start */
	struct strbuf *delta;
};

/* xdiff's hunk callback: line numbers are 0-based. */
static int add_line_hunk(long start_a, long count_a, long start_b,
			 long count_b, void *data)
{
	struct diff_state *d = data;
	size_t from = d->text.at[start_b], to = d->text.at[start_b + count_b];

	hg_delta_add_hunk(d->delta, d->offset + d->base.at[start_a],
			  d->offset + d->base.at[start_a + count_a],
			  d->text_buf + from, to - from);
	return 0;
}

/* Whether `pos` starts a line, knowing that `line_start` does. */
static int starts_line(const char *buf, size_t pos, size_t line_start)
{
	return pos == line_start || buf[pos - 1] == '\n';
}

/*
 * The lengths of the longest common leading and trailing runs of whole
 * lines of the two texts, which need no diffing (xdiff would hash them).
 */
static void common_lines(const char *a, size_t a_len, const char *b,
			 size_t b_len, size_t *prefix, size_t *suffix)
{
	size_t p = 0, s = 0, max = a_len < b_len ? a_len : b_len;

	while (p < max && a[p] == b[p])
		p++;
	while (p && a[p - 1] != '\n')
		p--;
	while (s < max - p && a[a_len - 1 - s] == b[b_len - 1 - s])
		s++;
	/* The suffix must start a line in both texts. */
	while (s && !(starts_line(a, a_len - s, p) &&
		      starts_line(b, b_len - s, p)))
		s--;
	*prefix = p;
	*suffix = s;
}

void hg_diff(const char *base, size_t base_len, const char *text,
	     size_t len, struct strbuf *delta)
{
	static struct diff_state d;
	size_t prefix, suffix;
	mmfile_t a, b;
	xpparam_t xpp = { 0 };
	xdemitconf_t xecfg = { 0 };
	xdemitcb_t ecb = { 0 };
	size_t delta_len = delta->len;

	common_lines(base, base_len, text, len, &prefix, &suffix);
	a.ptr = (char *)base + prefix;
	a.size = base_len - prefix - suffix;
	b.ptr = (char *)text + prefix;
	b.size = len - prefix - suffix;
	if (!a.size || !b.size) {
		/* Only an insertion or a removal: nothing to diff. */
		if (a.size || b.size)
			hg_delta_add_hunk(delta, prefix, base_len - suffix,
					  b.ptr, b.size);
		return;
	}
	find_lines(&d.base, a.ptr, a.size);
	find_lines(&d.text, b.ptr, b.size);
	d.text_buf = b.ptr;
	d.offset = prefix;
	d.delta = delta;
	xecfg.hunk_func = add_line_hunk;
	ecb.priv = &d;
	if (xdl_diff(&a, &b, &xpp, &xecfg, &ecb) < 0) {
		/* Out of memory in xdiff: one hunk replacing the middle. */
		strbuf_setlen(delta, delta_len);
		hg_delta_add_hunk(delta, prefix, base_len - suffix, b.ptr, b.size);
	}
}
