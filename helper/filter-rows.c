/* The filters of the older finished packs, in a file: see filter-rows.h. */
#include "libgit.h"
#include "filter-rows.h"

#define BLOCK PACK_FILTER_BLOCK_BYTES
#define FIRST_SLOTS 8

static off_t block_at(uint32_t row, unsigned slots, unsigned slot)
{
	return ((off_t)row * slots + slot) * BLOCK;
}

static int new_file(void)
{
	struct strbuf path = STRBUF_INIT;
	int fd = cinnabar_mkstemp(&path, "pack/tmp_filters_XXXXXX");

	/* Open, it lasts as long as the descriptor; no child needs it. */
	if (unlink(path.buf))
		warning_errno("cannot remove '%s'", path.buf);
	if (fcntl(fd, F_SETFD, FD_CLOEXEC))
		warning_errno("cannot keep '%s' from other programs", path.buf);
	strbuf_release(&path);
	return fd;
}

static void read_at(int fd, void *buf, size_t len, off_t at)
{
	if (pread_in_full(fd, buf, len, at) != (ssize_t)len)
		die_errno("cannot read the filters of the finished packs");
}

static void write_at(int fd, const void *buf, size_t len, off_t at)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die_errno("cannot write the filters of the finished "
				  "packs");
		p += n;
		len -= n;
		at += n;
	}
}

/* Copy the rows to a file with twice the slots. */
static void grow(struct filter_rows *r)
{
	unsigned slots = r->slots ? 2 * r->slots : FIRST_SLOTS;
	int fd = new_file();
	uint32_t i;

	for (i = 0; r->nr && i <= r->mask; i++) {
		read_at(r->fd, r->row, r->nr * BLOCK, block_at(i, r->slots, 0));
		write_at(fd, r->row, r->nr * BLOCK, block_at(i, slots, 0));
	}
	if (r->fd >= 0)
		close(r->fd);
	r->fd = fd;
	r->slots = slots;
	r->row = xrealloc(r->row, st_mult(slots, BLOCK));
}

void filter_rows_init(struct filter_rows *r, size_t nr,
		      enum pack_filter_density density)
{
	r->fd = -1;
	r->mask = pack_filter_mask_for(nr, density);
	r->bits = pack_filter_bits_for(density);
	r->nr = r->slots = 0;
	r->row = NULL;
}

int filter_rows_add(struct filter_rows *r, const struct pack_filter *f)
{
	uint32_t i;

	if (f->mask > r->mask || f->bits != r->bits)
		return -1;
	if (r->nr == r->slots)
		grow(r);
	for (i = 0; i <= r->mask; i++)
		write_at(r->fd, pack_filter_block(f, i), BLOCK,
			 block_at(i, r->slots, r->nr));
	return r->nr++;
}

void filter_rows_read(struct filter_rows *r, const unsigned char *hash)
{
	uint32_t i = pack_filter_block_index(hash, r->mask);

	read_at(r->fd, r->row, r->nr * BLOCK, block_at(i, r->slots, 0));
}

int filter_rows_may_hold(const struct filter_rows *r, unsigned slot,
			 const unsigned char *hash)
{
	return pack_filter_block_may_hold(r->row + slot * (BLOCK / 8), r->bits,
					  hash);
}

void filter_rows_release(struct filter_rows *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->nr = r->slots = 0;
	FREE_AND_NULL(r->row);
}
