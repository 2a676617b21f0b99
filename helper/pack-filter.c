/* Filters of the object ids a pack holds: see pack-filter.h. */
#include "git-compat-util.h"
#include "pack-filter.h"

#define WORDS_PER_BLOCK 8

uint32_t pack_filter_mask_for(size_t nr, enum pack_filter_density density)
{
	size_t blocks = 1;
	size_t ids_per_block = PACK_FILTER_BLOCK_BYTES / density;

	while (blocks < nr / ids_per_block && blocks < (1UL << 31))
		blocks <<= 1;
	return blocks - 1;
}

/*
 * Near the best for the bits per id (8 ln 2 and 16 ln 2 would be 5.5
 * and 11), within the 63 bits of the id a block's bits are taken from.
 */
unsigned pack_filter_bits_for(enum pack_filter_density density)
{
	return density == PACK_FILTER_TWO_BYTES ? 7 : 4;
}

void pack_filter_init(struct pack_filter *f, size_t nr,
		      enum pack_filter_density density)
{
	size_t bytes;

	f->mask = pack_filter_mask_for(nr, density);
	f->bits = pack_filter_bits_for(density);
	bytes = st_mult((size_t)f->mask + 1, WORDS_PER_BLOCK * sizeof(uint64_t));
	/* A block in one cache line. */
	if (posix_memalign((void **)&f->blocks, 64, bytes))
		die("out of memory");
	memset(f->blocks, 0, bytes);
}

void pack_filter_release(struct pack_filter *f)
{
	FREE_AND_NULL(f->blocks);
	f->mask = 0;
	f->bits = 0;
}

/*
 * The block of `hash` in a filter of `mask` + 1 blocks (its bytes 16-19),
 * and its bits in the block (bytes 8-15, 9 bits per bit set): ids are
 * uniform, any bytes do.
 */
uint32_t pack_filter_block_index(const unsigned char *hash, uint32_t mask)
{
	return get_be32(hash + 16) & mask;
}

static uint64_t *block_of(const struct pack_filter *f,
			  const unsigned char *hash)
{
	return f->blocks +
	       pack_filter_block_index(hash, f->mask) * WORDS_PER_BLOCK;
}

void pack_filter_add(struct pack_filter *f, const unsigned char *hash)
{
	uint64_t bits = get_be64(hash + 8), *block = block_of(f, hash);
	unsigned i;

	for (i = 0; i < f->bits; i++, bits >>= 9)
		block[(bits & 511) >> 6] |= (uint64_t)1 << (bits & 63);
}

int pack_filter_block_may_hold(const uint64_t *block, unsigned n,
			       const unsigned char *hash)
{
	uint64_t bits = get_be64(hash + 8);
	unsigned i;

	for (i = 0; i < n; i++, bits >>= 9)
		if (!(block[(bits & 511) >> 6] & ((uint64_t)1 << (bits & 63))))
			return 0;
	return 1;
}

int pack_filter_may_hold(const struct pack_filter *f,
			 const unsigned char *hash)
{
	return pack_filter_block_may_hold(block_of(f, hash), f->bits, hash);
}

const uint64_t *pack_filter_block(const struct pack_filter *f, size_t i)
{
	return f->blocks + (i & f->mask) * WORDS_PER_BLOCK;
}

void pack_filter_prefetch(const struct pack_filter *f,
			  const unsigned char *hash)
{
	__builtin_prefetch(block_of(f, hash));
}
