/* Mercurial binary deltas: see hg-delta.h. */
#include "git-compat-util.h"
#include "strbuf.h"
#include "hg-delta.h"

void hg_delta_iter_init(struct hg_delta_iter *it, const char *delta,
			size_t len)
{
	it->cur = delta;
	it->end = delta + len;
}

int hg_delta_next(struct hg_delta_iter *it, struct hg_hunk *hunk)
{
	if (it->cur == it->end)
		return 0;
	if (it->end - it->cur < 12)
		return -1;
	hunk->start = get_be32(it->cur);
	hunk->end = get_be32(it->cur + 4);
	hunk->len = get_be32(it->cur + 8);
	it->cur += 12;
	if (hunk->end < hunk->start || (size_t)(it->end - it->cur) < hunk->len)
		return -1;
	hunk->data = it->cur;
	it->cur += hunk->len;
	return 1;
}

/* hg_delta_next, and -1 for a hunk not after `last` or past the base. */
static int next_fitting(struct hg_delta_iter *it, struct hg_hunk *hunk,
			size_t last, size_t base_len)
{
	int ret = hg_delta_next(it, hunk);

	if (ret > 0 && (hunk->start < last || hunk->end > base_len))
		return -1;
	return ret;
}

int hg_delta_apply(const char *base, size_t base_len, const char *delta,
		   size_t delta_len, struct strbuf *out)
{
	struct hg_delta_iter it;
	struct hg_hunk hunk;
	size_t last = 0;
	int ret;

	strbuf_grow(out, base_len + delta_len);
	hg_delta_iter_init(&it, delta, delta_len);
	while ((ret = next_fitting(&it, &hunk, last, base_len)) > 0) {
		strbuf_add(out, base + last, hunk.start - last);
		strbuf_add(out, hunk.data, hunk.len);
		last = hunk.end;
	}
	if (ret < 0)
		return -1;
	strbuf_add(out, base + last, base_len - last);
	return 0;
}

int hg_delta_result_len(const char *delta, size_t delta_len, size_t base_len,
			size_t *result_len)
{
	struct hg_delta_iter it;
	struct hg_hunk hunk;
	size_t last = 0, len = 0;
	int ret;

	hg_delta_iter_init(&it, delta, delta_len);
	while ((ret = next_fitting(&it, &hunk, last, base_len)) > 0) {
		len += hunk.start - last + hunk.len;
		last = hunk.end;
	}
	if (ret < 0)
		return -1;
	*result_len = len + base_len - last;
	return 0;
}

static void add_varint(struct strbuf *out, size_t v)
{
	do {
		unsigned char c = v & 0x7f;
		v >>= 7;
		if (v)
			c |= 0x80;
		strbuf_addch(out, c);
	} while (v);
}

static void add_copy(struct strbuf *out, size_t offset, size_t len)
{
	while (len) {
		size_t n = len > 0x10000 ? 0x10000 : len;
		unsigned char op = 0x80, bytes[8];
		int i, nr = 0;
		for (i = 0; i < 4; i++) {
			unsigned char b = (offset >> (8 * i)) & 0xff;
			if (b) {
				op |= 1 << i;
				bytes[nr++] = b;
			}
		}
		if (n != 0x10000) {
			for (i = 0; i < 2; i++) {
				unsigned char b = (n >> (8 * i)) & 0xff;
				if (b) {
					op |= 0x10 << i;
					bytes[nr++] = b;
				}
			}
		}
		strbuf_addch(out, op);
		strbuf_add(out, bytes, nr);
		offset += n;
		len -= n;
	}
}

static void add_insert(struct strbuf *out, const char *data, size_t len)
{
	while (len) {
		size_t n = len > 127 ? 127 : len;
		strbuf_addch(out, n);
		strbuf_add(out, data, n);
		data += n;
		len -= n;
	}
}

void hg_delta_to_git(const char *delta, size_t delta_len, size_t base_len,
		     size_t result_len, struct strbuf *out)
{
	struct hg_delta_iter it;
	struct hg_hunk h;
	size_t last = 0;

	strbuf_reset(out);
	add_varint(out, base_len);
	add_varint(out, result_len);
	hg_delta_iter_init(&it, delta, delta_len);
	while (hg_delta_next(&it, &h) > 0) {
		add_copy(out, last, h.start - last);
		add_insert(out, h.data, h.len);
		last = h.end;
	}
	add_copy(out, last, base_len - last);
}

/* How many bytes `a` and `b` (`len` each) have in common from the start. */
static size_t common_start(const char *a, const char *b, size_t len)
{
	size_t n = 0;

	/* memcmp whole chunks first: it compares many bytes at once. */
	while (n + 64 <= len && !memcmp(a + n, b + n, 64))
		n += 64;
	while (n < len && a[n] == b[n])
		n++;
	return n;
}

/* The same from the end: `a` and `b` point past their last bytes. */
static size_t common_end(const char *a, const char *b, size_t len)
{
	size_t n = 0;

	while (n + 64 <= len && !memcmp(a - n - 64, b - n - 64, 64))
		n += 64;
	while (n < len && a[-1 - (ssize_t)n] == b[-1 - (ssize_t)n])
		n++;
	return n;
}

int git_delta_of_one_span(const char *base, size_t base_len,
			  const char *text, size_t len, size_t max_span,
			  struct strbuf *out)
{
	size_t shorter = base_len < len ? base_len : len;
	size_t start = common_start(base, text, shorter);
	size_t end = common_end(base + base_len, text + len, shorter - start);
	struct strbuf hunk = STRBUF_INIT;

	if (len - start - end > max_span)
		return -1;
	hg_delta_add_hunk(&hunk, start, base_len - end, text + start,
			  len - start - end);
	hg_delta_to_git(hunk.buf, hunk.len, base_len, len, out);
	strbuf_release(&hunk);
	return 0;
}

void hg_delta_hunk_header(unsigned char header[12], size_t start,
			  size_t end, size_t len)
{
	put_be32(header, start);
	put_be32(header + 4, end);
	put_be32(header + 8, len);
}

void hg_delta_add_hunk(struct strbuf *delta, size_t start, size_t end,
		       const char *data, size_t len)
{
	unsigned char header[12];
	hg_delta_hunk_header(header, start, end, len);
	strbuf_add(delta, header, 12);
	strbuf_add(delta, data, len);
}
