/*
 * SHA-1 (FIPS 180-4, section 6.1) of 16 independent messages at once.
 *
 * One message per 32-bit lane of an AVX-512 register: each round of the
 * compression function is done for the 16 messages by the same few vector
 * instructions, several times the throughput of one core's SHA
 * instructions on long messages. Used to verify manifest ids, megabytes
 * each (the helper's id-verify.h; sha1-lanes.h).
 *
 * The state of the 16 messages is kept word by word: h[i][lane] is word i
 * (H0..H4) of the lane's intermediate hash value.
 */
#ifndef CINNABAR_SHA1_MB_H
#define CINNABAR_SHA1_MB_H

#include <stdint.h>
#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define HAVE_SHA1_MB 1
#endif

#define SHA1_MB_LANES 16
/* The most blocks one call of sha1_mb_compress() may be given per lane. */
#define SHA1_MB_MAX_RUN 256

struct sha1_mb_state {
	uint32_t h[5][SHA1_MB_LANES] __attribute__((aligned(64)));
};

/*
 * Whether this CPU can run sha1_mb_compress(), and the environment does
 * not turn it off (CINNABAR_SHA1_MB=0 forces the one-message path).
 */
int sha1_mb_available(void);

/*
 * Process `nblocks` (1 to SHA1_MB_MAX_RUN) consecutive 64-byte blocks
 * from data[lane] for every lane, updating the lane's state. Every lane
 * is processed: give unused lanes sha1_mb_zeros, and ignore their state.
 */
void sha1_mb_compress(struct sha1_mb_state *state,
		      const unsigned char *const data[SHA1_MB_LANES],
		      size_t nblocks);

/* The same for 8 lanes (0 to 7 of the state) with AVX2: sha1-mb8.c. */
void sha1_mb8_compress(struct sha1_mb_state *state,
		       const unsigned char *const data[8], size_t nblocks);

/* SHA1_MB_MAX_RUN blocks of zeros, input for unused lanes. */
extern const unsigned char sha1_mb_zeros[SHA1_MB_MAX_RUN * 64];

/* The initial hash value H(0), word i. */
extern const uint32_t sha1_initial[5];

/*
 * The same compression for one message (SHA extensions when the CPU has
 * them, else plain C): `nblocks` consecutive 64-byte blocks from `data`.
 */
void sha1_one_compress(uint32_t h[5], const unsigned char *data,
		       size_t nblocks);

#endif
