/* Texts read as streams: see delta-stream.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "hg-delta.h"
#include "git-delta.h"
#include "delta-stream.h"

struct hg_patch {
	struct stream base;
	uint64_t base_len, base_pos;
	/* The hunks: in memory (`it`), or the one of `one`. */
	struct hg_delta_iter it;
	struct stream *data;		/* the data of `one`, or NULL */
	uint64_t one_start, one_end, one_len;
	int one_taken;
	/* The hunk being applied. */
	uint64_t start, end, len, pos;
	const char *hunk_data;		/* in memory, or NULL */
	int in_hunk, no_more;
	char *what;
};

static NORETURN void malformed(struct hg_patch *p)
{
	die("malformed %s in the changegroup (corrupt data)", p->what);
}

/* Take the next hunk; 0 when there is none. */
static int next_hunk(struct hg_patch *p)
{
	if (p->data) {
		if (p->one_taken)
			return 0;
		p->one_taken = 1;
		p->start = p->one_start;
		p->end = p->one_end;
		p->len = p->one_len;
		p->hunk_data = NULL;
	} else {
		struct hg_hunk h;
		int ret = hg_delta_next(&p->it, &h);
		if (ret < 0)
			malformed(p);
		if (!ret)
			return 0;
		p->start = h.start;
		p->end = h.end;
		p->len = h.len;
		p->hunk_data = h.data;
	}
	if (p->start < p->base_pos || p->end < p->start ||
	    p->end > p->base_len)
		malformed(p);
	p->pos = 0;
	return 1;
}

/* Up to `len` bytes of the base, which must have them. */
static size_t read_base(struct hg_patch *p, void *buf, size_t len)
{
	size_t n = stream_read(&p->base, buf, len);
	if (!n)
		die("the delta base of %s is shorter than its size says "
		    "(corrupt repository?)", p->what);
	p->base_pos += n;
	return n;
}

static size_t hg_patch_read(struct stream *s, void *buf, size_t len)
{
	struct hg_patch *p = s->data;

	for (;;) {
		uint64_t to;

		if (!p->in_hunk && !p->no_more) {
			p->in_hunk = next_hunk(p);
			p->no_more = !p->in_hunk;
		}
		to = p->in_hunk ? p->start : p->base_len;
		if (p->base_pos < to)
			return read_base(p, buf, to - p->base_pos < len ?
						 to - p->base_pos : len);
		if (!p->in_hunk)
			return 0;
		if (p->pos < p->len) {
			size_t n = p->len - p->pos < len ? p->len - p->pos
							 : len;
			if (p->hunk_data)
				memcpy(buf, p->hunk_data + p->pos, n);
			else
				stream_read_exact(p->data, buf, n);
			p->pos += n;
			return n;
		}
		/* The bytes the hunk replaces. */
		stream_skip(&p->base, p->end - p->start);
		p->base_pos = p->end;
		p->in_hunk = 0;
	}
}

static void hg_patch_release(struct stream *s)
{
	struct hg_patch *p = s->data;
	stream_release(&p->base);
	free(p->what);
	free(p);
}

static struct hg_patch *hg_patch_init(struct stream *s, struct stream *base,
				      uint64_t base_len, const char *what)
{
	struct hg_patch *p = xcalloc(1, sizeof(*p));

	p->base = *base;
	p->base_len = base_len;
	p->what = xstrdup(what);
	memset(s, 0, sizeof(*s));
	s->read = hg_patch_read;
	s->release = hg_patch_release;
	s->data = p;
	return p;
}

void stream_init_hg_patch(struct stream *s, struct stream *base,
			  uint64_t base_len, const char *delta,
			  size_t delta_len, const char *what)
{
	struct hg_patch *p = hg_patch_init(s, base, base_len, what);
	hg_delta_iter_init(&p->it, delta, delta_len);
}

void stream_init_hg_hunk(struct stream *s, struct stream *base,
			 uint64_t base_len, uint64_t start, uint64_t end,
			 struct stream *data, uint64_t len, const char *what)
{
	struct hg_patch *p = hg_patch_init(s, base, base_len, what);
	p->data = data;
	p->one_start = start;
	p->one_end = end;
	p->one_len = len;
}

/* git deltas. */

int git_delta_is_forward(const char *delta, size_t len, uint64_t *base_len,
			 uint64_t *result_len)
{
	const unsigned char *p = (const unsigned char *)delta, *end = p + len;
	size_t base, result, made = 0, last = 0;

	if (git_delta_read_size(&p, end, &base) ||
	    git_delta_read_size(&p, end, &result))
		return 0;
	while (p < end) {
		struct git_delta_op op;

		if (git_delta_read_op(&p, end, &op))
			return 0;
		if (op.copy) {
			if (op.off < last || op.off > base ||
			    op.size > base - op.off)
				return 0;
			last = op.off + op.size;
		}
		made += op.size;
	}
	if (made != result)
		return 0;
	*base_len = base;
	*result_len = result;
	return 1;
}

struct git_patch {
	struct stream base;
	uint64_t base_pos;
	char *delta;
	const unsigned char *p, *end;
	struct git_delta_op op;		/* the one being applied */
};

static size_t git_patch_read(struct stream *s, void *buf, size_t len)
{
	struct git_patch *g = s->data;
	size_t n;

	while (!g->op.size) {
		if (g->p == g->end)
			return 0;
		/* Checked by git_delta_is_forward(). */
		if (git_delta_read_op(&g->p, g->end, &g->op))
			BUG("git delta malformed after its check");
	}
	n = g->op.size < len ? g->op.size : len;
	if (!g->op.copy) {
		memcpy(buf, g->op.data, n);
		g->op.data += n;
	} else {
		if (g->base_pos < g->op.off) {
			stream_skip(&g->base, g->op.off - g->base_pos);
			g->base_pos = g->op.off;
		}
		stream_read_exact(&g->base, buf, n);
		g->base_pos += n;
		g->op.off += n;
	}
	g->op.size -= n;
	return n;
}

static void git_patch_release(struct stream *s)
{
	struct git_patch *g = s->data;
	stream_release(&g->base);
	free(g->delta);
	free(g);
}

void stream_init_git_patch(struct stream *s, struct stream *base,
			   char *delta, size_t len)
{
	struct git_patch *g = xcalloc(1, sizeof(*g));
	size_t size;

	g->base = *base;
	g->delta = delta;
	g->p = (const unsigned char *)delta;
	g->end = g->p + len;
	if (git_delta_read_size(&g->p, g->end, &size) ||
	    git_delta_read_size(&g->p, g->end, &size))
		BUG("git delta malformed after its check");
	memset(s, 0, sizeof(*s));
	s->read = git_patch_read;
	s->release = git_patch_release;
	s->data = g;
}
