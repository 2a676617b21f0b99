/* Looking ids up in a pack's .idx with pread(): see idx-lookup.h. */
#include "libgit.h"
#include "pack.h"
#include "idx-lookup.h"

#define HEADER 8
#define FANOUT_BYTES (256 * 4)
#define ID GIT_SHA1_RAWSZ
/* Ids read around the estimated place of one: see idx_lookup_find. */
#define WINDOW 64

int idx_lookup_open(struct idx_lookup *idx, const char *path)
{
	unsigned char head[HEADER + FANOUT_BYTES];
	uint32_t prev = 0;
	struct stat st;
	int i;

	idx->fd = git_open(path);
	if (idx->fd < 0)
		return -1;
	if (fstat(idx->fd, &st) ||
	    read_in_full(idx->fd, head, sizeof(head)) != sizeof(head) ||
	    get_be32(head) != PACK_IDX_SIGNATURE || get_be32(head + 4) != 2)
		goto bad;
	for (i = 0; i < 256; i++) {
		idx->fanout[i] = get_be32(head + HEADER + 4 * i);
		if (idx->fanout[i] < prev)
			goto bad;
		prev = idx->fanout[i];
	}
	idx->nr = prev;
	/* ids, CRCs, 4-byte offsets, the pack's and the .idx's checksums */
	if ((uint64_t)st.st_size <
	    HEADER + FANOUT_BYTES + (uint64_t)idx->nr * (ID + 8) + 2 * ID)
		goto bad;
	return 0;
bad:
	idx_lookup_close(idx);
	return -1;
}

void idx_lookup_close(struct idx_lookup *idx)
{
	if (idx->fd >= 0)
		close(idx->fd);
	idx->fd = -1;
	idx->nr = 0;
}

static int read_at(struct idx_lookup *idx, void *buf, size_t len, off_t at)
{
	return pread_in_full(idx->fd, buf, len, at) == (ssize_t)len ? 0 : -1;
}

/* The offset of the `pos`th object. */
static off_t offset_of(struct idx_lookup *idx, uint32_t pos)
{
	off_t table = HEADER + FANOUT_BYTES + (off_t)idx->nr * (ID + 4);
	unsigned char buf[8];
	uint32_t off;

	if (read_at(idx, buf, 4, table + (off_t)pos * 4))
		return 0;
	off = get_be32(buf);
	if (!(off & 0x80000000))
		return off;
	table += (off_t)idx->nr * 4;
	if (read_at(idx, buf, 8, table + (off_t)(off & 0x7fffffff) * 8))
		return 0;
	return get_be64(buf);
}

/*
 * Ids are uniform: the one looked for is about as far into the ids of
 * its first byte as its next two bytes are into 0-65535. WINDOW ids
 * around that place are read (the place is off by up to ~sqrt(n)/2 ids,
 * n the number of ids of that first byte: 11 for 512, the average in a
 * pack of the store's 131,072 objects), then the ids before or after
 * them when it is not among them.
 */
off_t idx_lookup_find(struct idx_lookup *idx, const unsigned char *hash)
{
	unsigned char buf[WINDOW * ID];
	uint32_t lo = hash[0] ? idx->fanout[hash[0] - 1] : 0;
	uint32_t hi = idx->fanout[hash[0]];
	uint32_t est, start, n;

	if (idx->fd < 0 || lo >= hi)
		return 0;
	est = lo + (uint32_t)(((uint64_t)(hi - lo) *
			       ((hash[1] << 8) | hash[2])) >> 16);
	start = est > lo + WINDOW / 2 ? est - WINDOW / 2 : lo;
	for (;;) {
		uint32_t a = 0, b;
		int cmp;

		n = hi - start < WINDOW ? hi - start : WINDOW;
		if (read_at(idx, buf, (size_t)n * ID,
			    HEADER + FANOUT_BYTES + (off_t)start * ID))
			return 0;
		if (memcmp(hash, buf, ID) < 0) {
			if (start == lo)
				return 0;
			hi = start;
			start = hi - lo > WINDOW ? hi - WINDOW : lo;
			continue;
		}
		if (memcmp(hash, buf + (n - 1) * ID, ID) > 0) {
			if (start + n >= hi)
				return 0;
			lo = start + n;
			start = lo;
			continue;
		}
		b = n;
		while (a < b) {
			uint32_t mid = a + (b - a) / 2;
			cmp = memcmp(hash, buf + mid * ID, ID);
			if (!cmp)
				return offset_of(idx, start + mid);
			if (cmp < 0)
				b = mid;
			else
				a = mid + 1;
		}
		return 0;
	}
}
