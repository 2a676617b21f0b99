/*
 * Filters of the object ids a pack holds: a Bloom filter that says
 * "not in this pack" for most ids it was not given, without reading the
 * pack's .idx. A lookup of an id the pack lacks otherwise reads a few
 * pages of its .idx; over an import of a long history, which looks up
 * every new object in every finished pack (store.c), those pages add up
 * to whole .idx files kept in memory (~28 bytes per object).
 *
 * Blocked: the bits of an id are all in one 64-byte block (one cache
 * line), chosen by 4 bytes of the id; 9 bits of the id each choose a bit
 * in it. Two densities: a byte per id and 4 bits each (1% to 3% of the
 * ids absent pass), or two bytes per id and 7 bits each (about 0.1%
 * pass), for a filter asked about many times more ids than it holds.
 */
#ifndef CINNABAR_PACK_FILTER_H
#define CINNABAR_PACK_FILTER_H

enum pack_filter_density {
	PACK_FILTER_BYTE = 1,		/* bytes per id */
	PACK_FILTER_TWO_BYTES = 2,
};

struct pack_filter {
	uint64_t *blocks;	/* 8 words per block */
	uint32_t mask;		/* number of blocks - 1 */
	unsigned bits;		/* set per id */
};

/* A filter sized for `nr` ids, and the mask and bits per id it has. */
void pack_filter_init(struct pack_filter *f, size_t nr,
		      enum pack_filter_density density);
uint32_t pack_filter_mask_for(size_t nr, enum pack_filter_density density);
unsigned pack_filter_bits_for(enum pack_filter_density density);
void pack_filter_release(struct pack_filter *f);
void pack_filter_add(struct pack_filter *f, const unsigned char *hash);
/* 0 when `hash` was not added; 1 when it may have been. */
int pack_filter_may_hold(const struct pack_filter *f,
			 const unsigned char *hash);

/*
 * The blocks themselves, for a filter kept elsewhere (filter-rows.h):
 * block `i` of a filter of more blocks than `f` has (both a power of
 * two) is its block `i` modulo its size, which answers the same.
 */
#define PACK_FILTER_BLOCK_BYTES 64
const uint64_t *pack_filter_block(const struct pack_filter *f, size_t i);
uint32_t pack_filter_block_index(const unsigned char *hash, uint32_t mask);
int pack_filter_block_may_hold(const uint64_t *block, unsigned bits,
			       const unsigned char *hash);

/* Start reading the block `hash` would be in. */
void pack_filter_prefetch(const struct pack_filter *f,
			  const unsigned char *hash);

#endif
