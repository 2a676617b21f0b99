/* Sorted id tables read through mmap: see id-table.h. */
#include "libgit.h"
#include "id-table.h"

#define MAGIC "CNBI"
#define VERSION 2
#define COMMIT_OFFSET 8
#define CHECK_OFFSET (4 + 4 + GIT_SHA1_RAWSZ + 8 + 256 * 4)
#define HEADER_SIZE (CHECK_OFFSET + 4)
#define SAMPLE_EVERY 64
#define SAMPLE_SIZE 8
#define CHECK_SIZE 4
/* Records read by walks between two trims of the mapped pages (640 kB). */
#define TRIM_EVERY 16384
/* Records a lookup reads at a time. */
#define LOOKUP_CHUNK SAMPLE_EVERY
/*
 * Records a writer keeps before writing them (64 kB): small, because a
 * merge into a table can come at the helper's peak, and the buffer (and
 * what it grows to) adds to it.
 */
#define WRITE_RECORDS 1638

static size_t samples_nr(size_t nr)
{
	return DIV_ROUND_UP(nr, SAMPLE_EVERY);
}

static size_t table_size(size_t nr)
{
	return HEADER_SIZE + nr * ID_RECORD_SIZE +
	       samples_nr(nr) * (SAMPLE_SIZE + CHECK_SIZE);
}

/*
 * The CRC-32 of the index of a table: its header but the commit (checked
 * for itself) and the check, then its samples and the blocks' CRCs.
 */
static uint32_t index_crc(const unsigned char *header,
			  const unsigned char *samples, size_t samples_len,
			  const unsigned char *checks, size_t checks_len)
{
	uLong crc = crc32(0, header, COMMIT_OFFSET);

	crc = crc32(crc, header + COMMIT_OFFSET + GIT_SHA1_RAWSZ,
		    CHECK_OFFSET - COMMIT_OFFSET - GIT_SHA1_RAWSZ);
	crc = crc32(crc, samples, samples_len);
	return crc32(crc, checks, checks_len);
}

static size_t block_len(const struct id_table *t, size_t block)
{
	size_t nr = t->nr - block * SAMPLE_EVERY;
	return (nr < SAMPLE_EVERY ? nr : SAMPLE_EVERY) * ID_RECORD_SIZE;
}

/*
 * Whether `records`, block `block` of the table, are as written. A block
 * found intact is not checked again: the file is never written in place
 * (a new table is a new file, renamed over), so reading it again gives
 * the same bytes, and a lookup reads the same few blocks over and over
 * (their CRCs were a few percent of a fetch's CPU).
 */
static int block_intact(const struct id_table *t, size_t block,
			const unsigned char *records)
{
	unsigned char bit = 1 << (block % 8);

	if (t->intact[block / 8] & bit)
		return 1;
	if (crc32(0, records, block_len(t, block)) !=
	    get_be32(t->checks + block * CHECK_SIZE))
		return 0;
	t->intact[block / 8] |= bit;
	return 1;
}

static int check_fanout(struct id_table *t, const unsigned char *p)
{
	uint32_t previous = 0;
	int i;

	for (i = 0; i < 256; i++) {
		t->fanout[i] = get_be32(p + 4 * i);
		if (t->fanout[i] < previous)
			return -1;
		previous = t->fanout[i];
	}
	return previous == t->nr ? 0 : -1;
}

int id_table_open(struct id_table *t, int fd, const struct object_id *commit)
{
	struct stat st;
	const unsigned char *p;
	uint64_t nr;

	memset(t, 0, sizeof(*t));
	if (fstat(fd, &st) || st.st_size < HEADER_SIZE) {
		close(fd);
		return -1;
	}
	t->map_len = xsize_t(st.st_size);
	t->map = xmmap(NULL, t->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	t->fd = fd;
	p = t->map;
	nr = ((uint64_t)get_be32(p + 28) << 32) | get_be32(p + 32);
	if (memcmp(p, MAGIC, 4) || get_be32(p + 4) != VERSION ||
	    (commit && !hasheq(p + COMMIT_OFFSET, commit->hash,
			       &hash_algos[GIT_HASH_SHA1])) ||
	    nr > t->map_len / ID_RECORD_SIZE ||
	    table_size(nr) != t->map_len) {
		id_table_close(t);
		return -1;
	}
	t->nr = nr;
	t->records = p + HEADER_SIZE;
	t->samples = t->records + t->nr * ID_RECORD_SIZE;
	t->checks = t->samples + samples_nr(t->nr) * SAMPLE_SIZE;
	t->intact = xcalloc(DIV_ROUND_UP(samples_nr(t->nr), 8), 1);
	if (index_crc(p, t->samples, samples_nr(t->nr) * SAMPLE_SIZE,
		      t->checks, samples_nr(t->nr) * CHECK_SIZE) !=
	    get_be32(p + CHECK_OFFSET)) {
		id_table_close(t);
		return ID_TABLE_DAMAGED;
	}
	if (check_fanout(t, p + 36)) {
		id_table_close(t);
		return -1;
	}
	return 0;
}

int id_table_verify(struct id_table *t)
{
	size_t block;

	for (block = 0; block < samples_nr(t->nr); block++) {
		if (!block_intact(t, block, id_table_key(t, block *
							 SAMPLE_EVERY)))
			return ID_TABLE_DAMAGED;
		id_table_touch(t, SAMPLE_EVERY);
	}
	return 0;
}

void id_table_close(struct id_table *t)
{
	if (t->map) {
		munmap(t->map, t->map_len);
		close(t->fd);
	}
	free(t->intact);
	memset(t, 0, sizeof(*t));
}

void id_table_touch(struct id_table *t, unsigned long n)
{
	t->touched += n;
	if (t->touched < TRIM_EVERY || !t->nr)
		return;
	t->touched = 0;
	/*
	 * From the start of the map (madvise wants a page boundary) to the
	 * end of the records: the samples, read by all lookups, stay. Only
	 * a hint: the pages are read again from the file when needed.
	 */
	madvise(t->map, HEADER_SIZE + t->nr * ID_RECORD_SIZE, MADV_DONTNEED);
}

/* The index of the first sample above `key`'s, from [lo, hi). */
static size_t sample_above(const struct id_table *t, const unsigned char *key,
			   size_t lo, size_t hi, int or_equal)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = memcmp(t->samples + mid * SAMPLE_SIZE, key,
				 SAMPLE_SIZE);
		if (cmp < 0 || (!cmp && !or_equal))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Look for `key` among records [lo, hi), whole blocks, read with pread()
 * a block at a time and checked against its CRC: `t->value` gets its
 * value. 1 when found, 0 when not, ID_TABLE_DAMAGED.
 */
static int find_in_records(struct id_table *t, const unsigned char *key,
			   size_t lo, size_t hi)
{
	unsigned char chunk[LOOKUP_CHUNK * ID_RECORD_SIZE];

	if (lo % LOOKUP_CHUNK)
		BUG("id table lookup from record %"PRIuMAX, (uintmax_t)lo);
	while (lo < hi) {
		size_t nr = hi - lo < LOOKUP_CHUNK ? hi - lo : LOOKUP_CHUNK;
		size_t a = 0, b = nr;
		off_t at = HEADER_SIZE + (off_t)lo * ID_RECORD_SIZE;

		if (pread_in_full(t->fd, chunk, nr * ID_RECORD_SIZE, at) !=
		    (ssize_t)(nr * ID_RECORD_SIZE))
			die_errno("cannot read an id table");
		if (nr * ID_RECORD_SIZE != block_len(t, lo / SAMPLE_EVERY))
			BUG("id table lookup of part of a block");
		if (!block_intact(t, lo / SAMPLE_EVERY, chunk))
			return ID_TABLE_DAMAGED;
		while (a < b) {
			size_t mid = a + (b - a) / 2;
			int cmp = memcmp(chunk + mid * ID_RECORD_SIZE, key,
					 GIT_SHA1_RAWSZ);
			if (!cmp) {
				memcpy(t->value, chunk + mid * ID_RECORD_SIZE +
				       GIT_SHA1_RAWSZ, GIT_SHA1_RAWSZ);
				return 1;
			}
			if (cmp < 0)
				a = mid + 1;
			else
				b = mid;
		}
		if (a < nr)
			return 0;	/* the key would be in this chunk */
		lo += nr;
	}
	return 0;
}

int id_table_find(struct id_table *t, const unsigned char *key)
{
	size_t lo = key[0] ? t->fanout[key[0] - 1] : 0;
	size_t hi = t->fanout[key[0]];
	size_t first, last;

	if (lo >= hi)
		return 0;
	/*
	 * The records that may hold `key`: from the block of the last
	 * sample below its 8 bytes to the first sample above them.
	 */
	first = sample_above(t, key, lo / SAMPLE_EVERY,
			     samples_nr(hi), 1);
	last = sample_above(t, key, first, samples_nr(hi), 0);
	lo = first ? (first - 1) * SAMPLE_EVERY : 0;
	hi = last * SAMPLE_EVERY < t->nr ? last * SAMPLE_EVERY : t->nr;
	return find_in_records(t, key, lo, hi);
}

static void write_at(int fd, const void *buf, size_t len, off_t offset)
{
	if (lseek(fd, offset, SEEK_SET) < 0 ||
	    write_in_full(fd, buf, len) < 0)
		die_errno("cannot write an id table");
}

/*
 * Add the records of `buf` not in the CRC of the block begun yet: a
 * block's at once, rather than 20 bytes at a time (zlib's crc32 is
 * several times as fast on a block as on a key).
 */
static void crc_added(struct id_table_writer *w)
{
	if (w->buf.len > w->crc_from)
		w->block_crc = crc32(w->block_crc,
				     (unsigned char *)w->buf.buf + w->crc_from,
				     w->buf.len - w->crc_from);
	w->crc_from = w->buf.len;
}

static void flush_records(struct id_table_writer *w)
{
	crc_added(w);
	if (write_in_full(w->fd, w->buf.buf, w->buf.len) < 0)
		die_errno("cannot write an id table");
	strbuf_reset(&w->buf);
	w->crc_from = 0;
}

void id_table_writer_start(struct id_table_writer *w, int fd)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	strbuf_init(&w->buf, (WRITE_RECORDS + 1) * ID_RECORD_SIZE);
	strbuf_init(&w->samples, 0);
	strbuf_init(&w->checks, 0);
	strbuf_addchars(&w->buf, 0, HEADER_SIZE);
	w->crc_from = HEADER_SIZE;
	w->sorted = 1;
}

/* Add the CRC of the block of records ending (an empty one: nothing). */
static void end_block(struct id_table_writer *w)
{
	unsigned char crc[CHECK_SIZE];

	if (!w->in_block)
		return;
	put_be32(crc, w->block_crc);
	strbuf_add(&w->checks, crc, CHECK_SIZE);
	w->in_block = 0;
}

/*
 * Count record `i` of the final table, whose key is `key`, for its fanout
 * and samples, ending the block before it when it begins one; its bytes
 * go to the block's CRC after it (crc_added, or sort_records).
 */
static void index_record(struct id_table_writer *w, const unsigned char *key,
			 size_t i)
{
	w->fanout[key[0]]++;
	if (!(i % SAMPLE_EVERY)) {
		crc_added(w);
		end_block(w);
		strbuf_add(&w->samples, key, SAMPLE_SIZE);
		w->block_crc = crc32(0, NULL, 0);
		w->in_block = 1;
	}
}

void id_table_add(struct id_table_writer *w, const unsigned char *key,
		  const unsigned char *value)
{
	if (w->nr && memcmp(w->last, key, GIT_SHA1_RAWSZ) >= 0)
		w->sorted = 0;
	memcpy(w->last, key, GIT_SHA1_RAWSZ);
	index_record(w, key, w->nr);
	strbuf_add(&w->buf, key, GIT_SHA1_RAWSZ);
	strbuf_add(&w->buf, value, GIT_SHA1_RAWSZ);
	w->nr++;
	if (w->buf.len >= WRITE_RECORDS * ID_RECORD_SIZE)
		flush_records(w);
}

static int record_cmp(const void *a, const void *b)
{
	return memcmp(a, b, GIT_SHA1_RAWSZ);
}

/*
 * Sort the records of the file (of equal keys, the last written stays),
 * counting them again for the index. Only for tables whose records did
 * not come in order (a notes tree of an unusual layout).
 */
static void sort_records(struct id_table_writer *w)
{
	size_t len = HEADER_SIZE + w->nr * ID_RECORD_SIZE, i, kept = 0;
	unsigned char *map = xmmap(NULL, len, PROT_READ | PROT_WRITE,
				   MAP_SHARED, w->fd, 0);
	unsigned char *records = map + HEADER_SIZE;

	git_stable_qsort(records, w->nr, ID_RECORD_SIZE, record_cmp);
	memset(w->fanout, 0, sizeof(w->fanout));
	strbuf_reset(&w->samples);
	strbuf_reset(&w->checks);
	w->in_block = 0;
	for (i = 0; i < w->nr; i++) {
		unsigned char *r = records + i * ID_RECORD_SIZE;
		if (i + 1 < w->nr && !record_cmp(r, r + ID_RECORD_SIZE))
			continue;
		if (kept != i)
			memcpy(records + kept * ID_RECORD_SIZE, r,
			       ID_RECORD_SIZE);
		index_record(w, r, kept++);
		w->block_crc = crc32(w->block_crc, r, ID_RECORD_SIZE);
	}
	munmap(map, len);
	w->nr = kept;
	if (ftruncate(w->fd, HEADER_SIZE + kept * ID_RECORD_SIZE))
		die_errno("cannot write an id table");
}

void id_table_writer_finish(struct id_table_writer *w,
			    const struct object_id *commit)
{
	unsigned char header[HEADER_SIZE];
	uint32_t total = 0;
	int i;

	flush_records(w);
	strbuf_release(&w->buf);
	if (!w->sorted)
		sort_records(w);
	end_block(w);
	memcpy(header, MAGIC, 4);
	put_be32(header + 4, VERSION);
	if (commit)
		memcpy(header + COMMIT_OFFSET, commit->hash, GIT_SHA1_RAWSZ);
	else
		memset(header + COMMIT_OFFSET, 0, GIT_SHA1_RAWSZ);
	put_be32(header + 28, (uint64_t)w->nr >> 32);
	put_be32(header + 32, w->nr & 0xffffffff);
	for (i = 0; i < 256; i++) {
		total += w->fanout[i];
		put_be32(header + 36 + 4 * i, total);
	}
	put_be32(header + CHECK_OFFSET,
		 index_crc(header, (unsigned char *)w->samples.buf,
			   w->samples.len, (unsigned char *)w->checks.buf,
			   w->checks.len));
	write_at(w->fd, header, HEADER_SIZE, 0);
	strbuf_addbuf(&w->samples, &w->checks);
	write_at(w->fd, w->samples.buf, w->samples.len,
		 HEADER_SIZE + w->nr * ID_RECORD_SIZE);
	strbuf_release(&w->samples);
	strbuf_release(&w->checks);
}

void id_table_set_commit(int fd, const struct object_id *commit)
{
	write_at(fd, commit->hash, GIT_SHA1_RAWSZ, COMMIT_OFFSET);
}
