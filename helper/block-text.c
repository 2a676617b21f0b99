/* Large texts as shared blocks: see block-text.h. */
#include "libgit.h"
#include "hg-delta.h"
#include "block-text.h"

#define MIN_BLOCK (BLOCK_TEXT_SIZE / 4)

struct text_block {
	unsigned refs;
	size_t len;
	char data[FLEX_ARRAY];
};

static void block_unref(struct text_block *b)
{
	if (!--b->refs)
		free(b);
}

void block_text_release(struct block_text *text)
{
	size_t i;
	for (i = 0; i < text->nr; i++)
		block_unref(text->blocks[i]);
	free(text->blocks);
	free(text->starts);
	memset(text, 0, sizeof(*text));
}

/* Room for `nr` blocks in `text`. */
static void reserve_blocks(struct block_text *text, size_t nr)
{
	size_t alloc = text->alloc;

	ALLOC_GROW(text->blocks, nr, text->alloc);
	/* Grown with the blocks (a realloc() per push: 1.4% of a wide import). */
	if (text->alloc != alloc)
		REALLOC_ARRAY(text->starts, text->alloc);
}

static void push_block(struct block_text *text, struct text_block *b)
{
	reserve_blocks(text, text->nr + 1);
	text->blocks[text->nr] = b;
	text->starts[text->nr++] = text->len;
	text->len += b->len;
}

static void push_bytes(struct block_text *text, const char *buf, size_t len)
{
	struct text_block *b = xmalloc(st_add(sizeof(*b), len));
	b->refs = 1;
	b->len = len;
	memcpy(b->data, buf, len);
	push_block(text, b);
	text->own += len;
}

void block_text_set(struct block_text *text, const char *buf, size_t len)
{
	block_text_release(text);
	while (len) {
		size_t n = len < 2 * BLOCK_TEXT_SIZE ? len : BLOCK_TEXT_SIZE;
		push_bytes(text, buf, n);
		buf += n;
		len -= n;
	}
}

/*
 * Building a text: bytes not yet in a block wait in `pending`; whole
 * blocks of the base are shared when nothing is pending before them.
 */
struct builder {
	struct block_text *out;
	struct strbuf pending;
};

/* Move the bytes of `pending` into blocks, keeping back less than a block. */
static void flush_full(struct block_text *out, struct strbuf *pending)
{
	size_t done = 0;
	while (pending->len - done >= BLOCK_TEXT_SIZE) {
		push_bytes(out, pending->buf + done, BLOCK_TEXT_SIZE);
		done += BLOCK_TEXT_SIZE;
	}
	strbuf_remove(pending, 0, done);
}

static void flush_all(struct block_text *out, struct strbuf *pending)
{
	flush_full(out, pending);
	if (pending->len)
		push_bytes(out, pending->buf, pending->len);
	strbuf_reset(pending);
}

void block_text_append(struct block_text *text, struct strbuf *buf, int all)
{
	if (all)
		flush_all(text, buf);
	else if (buf->len >= BLOCK_TEXT_SIZE)
		flush_full(text, buf);
}

static void add_bytes(struct builder *b, const char *buf, size_t len)
{
	strbuf_add(&b->pending, buf, len);
	flush_full(b->out, &b->pending);
}

/* Index of the block holding `pos` (< len). */
static size_t find_block(const struct block_text *text, size_t pos)
{
	size_t lo = 0, hi = text->nr;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (text->starts[mid] <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Add the bytes [from, to) of `base`. */
static void add_range(struct builder *b, const struct block_text *base,
		      size_t from, size_t to)
{
	size_t i;
	if (from >= to)
		return;
	for (i = find_block(base, from); from < to; i++) {
		struct text_block *blk = base->blocks[i];
		size_t start = base->starts[i], end = start + blk->len;
		size_t n = (to < end ? to : end) - from;

		int whole = from == start && to >= end &&
			    blk->len >= MIN_BLOCK;

		if (whole && (!b->pending.len || b->pending.len >= MIN_BLOCK)) {
			flush_all(b->out, &b->pending);
			blk->refs++;
			push_block(b->out, blk);
		} else if (whole && b->pending.len + blk->len <=
				    2 * BLOCK_TEXT_SIZE) {
			/*
			 * Too little pending for a block of its own (after
			 * a line added or removed): it goes with this
			 * block, so that the blocks after it are shared,
			 * not every one copied until the next hunk.
			 */
			strbuf_add(&b->pending, blk->data, blk->len);
			push_bytes(b->out, b->pending.buf, b->pending.len);
			strbuf_reset(&b->pending);
		} else {
			add_bytes(b, blk->data + (from - start), n);
		}
		from += n;
	}
}

int block_text_apply(const struct block_text *base, const char *delta,
		     size_t delta_len, struct block_text *out)
{
	struct builder b = { out, STRBUF_INIT };
	struct hg_delta_iter it;
	struct hg_hunk h;
	size_t pos = 0;
	int ret;

	if (base == out)
		BUG("block_text_apply in place");
	block_text_release(out);
	/*
	 * Grown once, not from nothing at each text (reallocating was
	 * half the cost of applying a small delta to a 1 MB manifest): as
	 * many blocks as the base and a few, and what is pending stays
	 * under two blocks, but for a long hunk.
	 */
	reserve_blocks(out, base->nr + 4);
	strbuf_grow(&b.pending, 2 * BLOCK_TEXT_SIZE);
	hg_delta_iter_init(&it, delta, delta_len);
	while ((ret = hg_delta_next(&it, &h)) > 0) {
		if (h.start < pos || h.end < h.start || h.end > base->len)
			break;
		add_range(&b, base, pos, h.start);
		add_bytes(&b, h.data, h.len);
		pos = h.end;
	}
	if (!ret)
		add_range(&b, base, pos, base->len);
	flush_all(b.out, &b.pending);
	strbuf_release(&b.pending);
	return ret ? -1 : 0;
}

void block_text_share(const struct block_text *from, struct block_text *to)
{
	size_t i;

	block_text_release(to);
	for (i = 0; i < from->nr; i++) {
		from->blocks[i]->refs++;
		push_block(to, from->blocks[i]);
	}
}

void block_text_copy(const struct block_text *text, size_t start, size_t end,
		     struct strbuf *out)
{
	size_t i;
	if (start >= end)
		return;
	for (i = find_block(text, start); start < end; i++) {
		size_t off = start - text->starts[i];
		size_t n = text->blocks[i]->len - off;
		if (n > end - start)
			n = end - start;
		strbuf_add(out, text->blocks[i]->data + off, n);
		start += n;
	}
}

char block_text_at(const struct block_text *text, size_t pos)
{
	size_t i = find_block(text, pos);
	return text->blocks[i]->data[pos - text->starts[i]];
}

size_t block_text_after_prev(const struct block_text *text, size_t pos,
			     char c)
{
	size_t i;
	if (!pos)
		return 0;
	for (i = find_block(text, pos - 1) + 1; i--;) {
		const char *data = text->blocks[i]->data;
		size_t n = pos - text->starts[i];
		const char *found = memrchr(data, c, n);
		if (found)
			return text->starts[i] + (found - data) + 1;
		pos = text->starts[i];
	}
	return 0;
}

size_t block_text_after_next(const struct block_text *text, size_t pos,
			     char c)
{
	size_t i;
	if (pos >= text->len)
		return text->len;
	for (i = find_block(text, pos); i < text->nr; i++) {
		const char *data = text->blocks[i]->data;
		size_t off = pos - text->starts[i];
		const char *found = memchr(data + off, c,
					   text->blocks[i]->len - off);
		if (found)
			return text->starts[i] + (found - data) + 1;
		pos = text->starts[i] + text->blocks[i]->len;
	}
	return text->len;
}

const char *block_text_block(const struct block_text *text, size_t i,
			     size_t *len)
{
	*len = text->blocks[i]->len;
	return text->blocks[i]->data;
}

void block_text_each(const struct block_text *text,
		     void (*fn)(const char *data, size_t len, void *cb_data),
		     void *cb_data)
{
	size_t i;
	for (i = 0; i < text->nr; i++)
		fn(text->blocks[i]->data, text->blocks[i]->len, cb_data);
}
