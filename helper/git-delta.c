/* Reading git's delta format: see git-delta.h. */
#include "git-compat-util.h"
#include "git-delta.h"

int git_delta_read_size(const unsigned char **p, const unsigned char *end,
			size_t *out)
{
	int shift = 0;

	*out = 0;
	for (;;) {
		if (*p == end || shift > 56)
			return -1;
		*out |= (size_t)(**p & 0x7f) << shift;
		shift += 7;
		if (!(*(*p)++ & 0x80))
			return 0;
	}
}

int git_delta_read_op(const unsigned char **p, const unsigned char *end,
		      struct git_delta_op *op)
{
	unsigned c = *(*p)++;
	int i;

	if (!c)
		return -1;
	if (!(c & 0x80)) {
		if ((size_t)(end - *p) < c)
			return -1;
		op->copy = 0;
		op->size = c;
		op->data = *p;
		*p += c;
		return 0;
	}
	op->copy = 1;
	op->off = op->size = 0;
	for (i = 0; i < 7; i++) {
		if (!(c & (1 << i)))
			continue;
		if (*p == end)
			return -1;
		if (i < 4)
			op->off |= (size_t)*(*p)++ << (8 * i);
		else
			op->size |= (size_t)*(*p)++ << (8 * (i - 4));
	}
	if (!op->size)
		op->size = 0x10000;
	return 0;
}
