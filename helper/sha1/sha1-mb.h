/*
 * SHA-1 (FIPS 180-4, section 6.1) of 16, 8 or 2 independent messages at
 * once ("lanes").
 *
 * With AVX-512, 16 lanes (sha1-mb.c): one message per 32-bit lane of a
 * vector register, each round of the compression function done for all
 * the messages by the same few vector instructions, several times the
 * throughput of one core's SHA instructions on long messages. With AVX2,
 * 8 lanes the same way (sha1-mb8.c). With the SHA instructions, 2
 * messages whose rounds are interleaved (sha1-one.c). Used to verify
 * manifest ids, megabytes each (the helper's id-verify.h; sha1-lanes.h).
 *
 * One message through the SHA instructions leaves the unit idle while each
 * round's sha1rnds4 waits for the one before; two messages interleaved
 * fill those gaps, more add nothing. The 8 AVX2 lanes beat one message on
 * one core, but where two cores share vector units and both hash (as the
 * helper's two workers do), they fall behind the 2 interleaved messages.
 * So the 2 lanes are chosen where the CPU has both (AVX-512's 16 still
 * first). `test-sha1 speed` measures the paths on a given CPU.
 *
 * The state of the messages is kept word by word: h[i][lane] is word i
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
 * How many lanes sha1_mb_compress() runs on this CPU: 16 with AVX-512, 2
 * with the SHA extensions, 8 with AVX2, else 0 (one message at a time,
 * sha1_one_compress()). The environment may choose: CINNABAR_SHA1_MB=0
 * forces the one-message path, CINNABAR_SHA1_MB=8 (or 2) those lanes
 * where the CPU has them.
 */
int sha1_mb_lanes(void);

/*
 * Process `nblocks` (1 to SHA1_MB_MAX_RUN) consecutive 64-byte blocks
 * from data[lane] for each of the sha1_mb_lanes() first lanes, updating
 * the lane's state (the other entries are not read). Every such lane is
 * processed: give unused ones sha1_mb_zeros, and ignore their state.
 */
void sha1_mb_compress(struct sha1_mb_state *state,
		      const unsigned char *const data[SHA1_MB_LANES],
		      size_t nblocks);

/*
 * For sha1_mb_compress() only: the 8 AVX2 lanes (0 to 7 of the state,
 * sha1-mb8.c), the 2 lanes of the SHA extensions (0 and 1, sha1-one.c).
 */
void sha1_mb8_compress(struct sha1_mb_state *state,
		       const unsigned char *const data[8], size_t nblocks);
void sha1_ni2_compress(struct sha1_mb_state *state,
		       const unsigned char *const data[2], size_t nblocks);

/* Whether the CPU has the SHA extensions. */
int sha1_has_sha_ni(void);

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
