/*
 * The filters (pack-filter.h) of the store's older finished packs, kept
 * in a file rather than in memory: a byte per object in memory would grow
 * with history, when objects are hardly ever found in packs older than
 * the newest few. Every new object is still looked for in every
 * pack.
 *
 * The file is laid out by rows: row i holds block i of each filter, one
 * after another in the order they were added (a "slot" each), so that
 * one pread answers for all the filters at once. Every filter is given
 * the number of blocks of one for a full pack (a smaller one is repeated
 * to that size, pack_filter_block()); a larger one is refused, and stays
 * in memory. When the rows are full, the file is copied to one with
 * twice as many slots. The file is unlinked as soon as it is created:
 * nothing is left behind, whatever ends the process.
 */
#ifndef CINNABAR_FILTER_ROWS_H
#define CINNABAR_FILTER_ROWS_H

#include "pack-filter.h"

struct filter_rows {
	int fd;			/* -1 until a filter is added */
	uint32_t mask;		/* blocks in a filter - 1 */
	unsigned bits;		/* the filters' bits per id */
	unsigned nr, slots;	/* filters added, room for */
	uint64_t *row;		/* the row read last, nr blocks */
};

#define FILTER_ROWS_INIT { .fd = -1 }

/* Rows of filters of `density` for up to `nr` ids each. */
void filter_rows_init(struct filter_rows *r, size_t nr,
		      enum pack_filter_density density);

/*
 * Add the filter `f`: its slot, or -1 when it is larger than that or of
 * another density.
 */
int filter_rows_add(struct filter_rows *r, const struct pack_filter *f);

/* Read the row of `hash`, for filter_rows_may_hold(). */
void filter_rows_read(struct filter_rows *r, const unsigned char *hash);

/* Whether the filter in `slot` may hold `hash`, whose row was read. */
int filter_rows_may_hold(const struct filter_rows *r, unsigned slot,
			 const unsigned char *hash);

void filter_rows_release(struct filter_rows *r);

#endif
