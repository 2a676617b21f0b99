/*
 * Sorted tables of 20-byte keys and 20-byte values, in files: what the
 * notes maps (notes-map.c) keep of a metadata commit, and what an
 * import spills there of the entries it adds, so that the memory they
 * take does not grow with history. Walks (merges, writing a notes tree)
 * read the records through mmap and let go of their pages as they go;
 * a lookup reads the samples through mmap and its block of records
 * with pread(): nothing of it stays mapped. (Through mmap, lookups
 * mapped much more than the 128 kB each was counted for, the kernel 6.18
 * here mapping whole large folios of a file just written, it seems:
 * trimmed every 20 lookups, 5.1 MB of a 6.7 MB table stayed mapped at
 * 66,000 changesets.)
 *
 * File format (numbers in network order):
 *
 *   "CNBI"        magic
 *   uint32        version, 1
 *   20 bytes      the notes commit the table is of (zeros: of none, a
 *                 table of an import in progress)
 *   uint32 x 2    number of records, high and low halves
 *   uint32 x 256  fanout: entry i is the number of records whose key's
 *                 first byte is i or less
 *   records       key (20 bytes) then value (20 bytes), sorted by key,
 *                 each key once
 *   samples       the first 8 bytes of the key of every 64th record (0,
 *                 64, ...): a lookup reads them, then the 64 records
 *                 (2.5 kB) that may hold its key, a page or two of the
 *                 file, instead of the dozen a binary search of the
 *                 records would
 *
 * A table whose size, fanout or commit disagree is not used (a cache
 * is then made again from the notes tree).
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
	unsigned long touched;		/* records read since the last trim */
	int fd;				/* of the file, while mapped */
	unsigned char value[GIT_SHA1_RAWSZ];	/* of the last key found */
};

/*
 * Map the table of file `fd` (closed by the call); when `commit` is
 * given, the table must be of it. 0 when usable, -1 otherwise (then the
 * table is empty).
 */
int id_table_open(struct id_table *t, int fd, const struct object_id *commit);
void id_table_close(struct id_table *t);

/*
 * The value of `key` in the table (in `t->value`, until the next lookup),
 * or NULL.
 */
const unsigned char *id_table_find(struct id_table *t,
				   const unsigned char *key);

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
