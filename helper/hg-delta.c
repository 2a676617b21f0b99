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

int hg_delta_apply(const char *base, size_t base_len, const char *delta,
		   size_t delta_len, struct strbuf *out)
{
	struct hg_delta_iter it;
	struct hg_hunk hunk;
	size_t last = 0;
	int ret;

	strbuf_grow(out, base_len + delta_len);
	hg_delta_iter_init(&it, delta, delta_len);
	while ((ret = hg_delta_next(&it, &hunk)) > 0) {
		if (hunk.start < last || hunk.end > base_len)
			return -1;
		strbuf_add(out, base + last, hunk.start - last);
		strbuf_add(out, hunk.data, hunk.len);
		last = hunk.end;
	}
	if (ret < 0)
		return -1;
	strbuf_add(out, base + last, base_len - last);
	return 0;
}
