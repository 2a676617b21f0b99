/*
 * Sorted tables of 20-byte keys and 20-byte values, in files: what the
 * notes maps (notes-map.c) keep of a metadata commit, and what an
 * import spills there of the entries it adds, so that the memory they
 * take does not grow with history. Walks (merges, writing a notes tree)
 * read the records through mmap and let go of their pages as they go;
 * a lookup reads the samples through mmap and its block of records
 * with pread(): nothing of it stays mapped. (Through mmap, a lookup maps
 * much more than the pages it reads, the kernel mapping large folios of
 * a file just written, so that the mapped part of the table grows with
 * history even when trimmed.)
 *
 * File format (numbers in network order):
 *
 *   "CNBI"        magic
 *   uint32        version, 2
 *   20 bytes      the notes commit the table is of (zeros: of none, a
 *                 table of an import in progress)
 *   uint32 x 2    number of records, high and low halves
 *   uint32 x 256  fanout: entry i is the number of records whose key's
 *                 first byte is i or less
 *   uint32        CRC-32 of the index: the bytes above but the commit,
 *                 the samples and the blocks' CRCs
 *   records       key (20 bytes) then value (20 bytes), sorted by key,
 *                 each key once
 *   samples       the first 8 bytes of the key of every 64th record (0,
 *                 64, ...): a lookup reads them, then the 64 records
 *                 (2.5 kB) that may hold its key, a page or two of the
 *                 file, instead of the dozen a binary search of the
 *                 records would
 *   uint32 x n    CRC-32 of each block of 64 records (the last one may
 *                 be shorter), the blocks of the samples
 *
 * A table whose size, fanout or commit disagree is not used (a cache
 * is then made again from the notes tree). The CRCs make what a cache
 * says as sure as the notes tree it was made of, as git's pack .idx
 * CRCs vouch for the data they copy: a lookup checks its block (the first
 * time it is read: the file never changes in place), a walk checks every
 * block first (id_table_verify), and a block or index that does not
 * match its CRC makes the table ID_TABLE_DAMAGED. (The commit
 * is left out of the index CRC: it is checked for itself, and set once
 * the table is written, id_table_set_commit.)
 */
#ifndef CINNABAR_ID_TABLE_H
#define CINNABAR_ID_TABLE_H

#include "hash.h"

#define ID_RECORD_SIZE (2 * GIT_SHA1_RAWSZ)

struct id_table {
	unsigned char *map;		/* the whole file, or NULL when empty */
	size_t map_len;
	const unsigned char *records;
	size_t nr;
	uint32_t fanout[256];
	const unsigned char *samples;
	const unsigned char *checks;	/* the blocks' CRCs */
	unsigned char *intact;		/* a bit per block found intact */
	unsigned long touched;		/* records read since the last trim */
	int fd;				/* of the file, while mapped */
	unsigned char value[GIT_SHA1_RAWSZ];	/* of the last key found */
};

#define ID_TABLE_DAMAGED (-2)

/*
 * Map the table of file `fd` (closed by the call); when `commit` is
 * given, the table must be of it. 0 when usable, -1 when not (another
 * commit, version or size), ID_TABLE_DAMAGED when its index does not
 * match its CRC (then the table is empty).
 */
int id_table_open(struct id_table *t, int fd, const struct object_id *commit);
void id_table_close(struct id_table *t);

/*
 * Look `key` up: 1 when found (its value in `t->value`, until the next
 * lookup), 0 when not there, ID_TABLE_DAMAGED when the block that would
 * hold it does not match its CRC.
 */
int id_table_find(struct id_table *t, const unsigned char *key);

/* Check every block against its CRC: 0, or ID_TABLE_DAMAGED. */
int id_table_verify(struct id_table *t);

static inline const unsigned char *id_table_key(const struct id_table *t,
						size_t i)
{
	return t->records + i * ID_RECORD_SIZE;
}

/*
 * Count `n` records read; past a few MB of them, let go of the table's
 * pages (they stay in the page cache): the memory of a walk stays
 * bounded whatever the table's size.
 */
void id_table_touch(struct id_table *t, unsigned long n);

/* Writing a table to a file, records given in any order. */
struct id_table_writer {
	int fd;
	struct strbuf buf;		/* records not written yet */
	struct strbuf samples;
	struct strbuf checks;		/* CRCs of the blocks ended */
	uint32_t block_crc;		/* of the records of the block begun */
	size_t crc_from;		/* in buf: records not in it yet */
	int in_block;
	uint32_t fanout[256];		/* records by first byte */
	size_t nr;
	int sorted;			/* each key above the one before */
	unsigned char last[GIT_SHA1_RAWSZ];
};

void id_table_writer_start(struct id_table_writer *w, int fd);
void id_table_add(struct id_table_writer *w, const unsigned char *key,
		  const unsigned char *value);
/*
 * Sort the records when they were not (of equal keys, the last added is
 * kept), write the header, and leave `w->fd` open.
 */
void id_table_writer_finish(struct id_table_writer *w,
			    const struct object_id *commit);
/* Write the commit of the table of `fd` in its header. */
void id_table_set_commit(int fd, const struct object_id *commit);

#endif
