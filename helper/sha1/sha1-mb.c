/*
 * SHA-1 of 16 messages at once with AVX-512, and the choice of the lanes
 * for this CPU: see sha1-mb.h.
 *
 * FIPS 180-4, 6.1.2, for each 512-bit block M of a message, with
 * W[t] = M[t] (big-endian words) for t < 16 and
 * W[t] = ROTL1(W[t-3] ^ W[t-8] ^ W[t-14] ^ W[t-16]) after, runs 80 rounds
 *
 *   T = ROTL5(a) + f_t(b, c, d) + e + K_t + W[t]
 *   e = d; d = c; c = ROTL30(b); b = a; a = T
 *
 * with f and K changing every 20 rounds (Ch, Parity, Maj, Parity), then
 * adds a..e to the hash value. Here every variable is a vector of 16
 * lanes, one per message: each of Ch, Parity, Maj and the three-way xor of
 * the schedule is one vpternlogd, each rotation one vprold.
 *
 * The functions using AVX-512 are compiled for it alone (git's flags
 * target the baseline x86-64) and only called once sha1_mb_lanes() has
 * checked the CPU.
 */
#include "../libgit.h"
#include "config.h"
#include "sha1-mb.h"

const unsigned char sha1_mb_zeros[SHA1_MB_MAX_RUN * 64];

const uint32_t sha1_initial[5] = {
	0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0,
};

#ifdef HAVE_SHA1_MB
#include <immintrin.h>
#endif

/*
 * The lanes for this CPU: AVX-512's 16; else the SHA extensions' 2, which
 * beat AVX2's 8 once both cores hash, where cores share vector units
 * (sha1-mb.h); else AVX2's 8; else none. `want` (8 or 2) asks for those
 * lanes when the CPU has them.
 */
static int cpu_lanes(int want)
{
#ifdef HAVE_SHA1_MB
	int avx2, sha_ni;

	__builtin_cpu_init();
	avx2 = __builtin_cpu_supports("avx2");
	sha_ni = sha1_has_sha_ni();
	if (want == 8 && avx2)
		return 8;
	if (want == 2 && sha_ni)
		return 2;
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl"))
		return 16;
	if (sha_ni)
		return 2;
	if (avx2)
		return 8;
#endif
	return 0;
}

int sha1_mb_lanes(void)
{
	static int lanes = -1;

	if (lanes < 0) {
		const char *env = getenv("CINNABAR_SHA1_MB");

		if (env && (!strcmp(env, "8") || !strcmp(env, "2")))
			lanes = cpu_lanes(atoi(env));
		else if (!git_env_bool("CINNABAR_SHA1_MB", 1))
			lanes = 0;
		else
			lanes = cpu_lanes(0);
	}
	return lanes;
}

#ifdef HAVE_SHA1_MB
#define MB_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

/* vpternlogd truth tables (bit a*4 + b*2 + c of the immediate). */
#define TL_CH 0xca	/* a ? b : c */
#define TL_PARITY 0x96	/* a ^ b ^ c */
#define TL_MAJ 0xe8	/* majority of a, b, c */

/*
 * Load one 64-byte block per lane and turn the 16 rows (a lane's 16
 * words) into 16 columns (word t of every lane), in big-endian order.
 */
static MB_TARGET void load_words(__m512i w[16],
				 const unsigned char *const data[16],
				 size_t offset)
{
	const __m512i bswap = _mm512_set_epi8(
		12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
		12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
		12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
		12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
	__m512i r[16], t[16];
	int i, j;

	for (i = 0; i < 16; i++)
		r[i] = _mm512_shuffle_epi8(
			_mm512_loadu_si512((const void *)(data[i] + offset)),
			bswap);
	/*
	 * Within each 128-bit quarter: pairs of rows interleaved, then
	 * quads, so that quarter k of u[4g + j] holds word 4k + j of rows
	 * 4g..4g+3.
	 */
	for (i = 0; i < 16; i += 4) {
		__m512i a = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		__m512i b = _mm512_unpackhi_epi32(r[i], r[i + 1]);
		__m512i c = _mm512_unpacklo_epi32(r[i + 2], r[i + 3]);
		__m512i d = _mm512_unpackhi_epi32(r[i + 2], r[i + 3]);
		t[i] = _mm512_unpacklo_epi64(a, c);
		t[i + 1] = _mm512_unpackhi_epi64(a, c);
		t[i + 2] = _mm512_unpacklo_epi64(b, d);
		t[i + 3] = _mm512_unpackhi_epi64(b, d);
	}
	/* Then gather quarter k of the four groups into column 4k + j. */
	for (j = 0; j < 4; j++) {
		__m512i xlo = _mm512_shuffle_i32x4(t[j], t[4 + j], 0x44);
		__m512i xhi = _mm512_shuffle_i32x4(t[j], t[4 + j], 0xee);
		__m512i ylo = _mm512_shuffle_i32x4(t[8 + j], t[12 + j], 0x44);
		__m512i yhi = _mm512_shuffle_i32x4(t[8 + j], t[12 + j], 0xee);
		w[j] = _mm512_shuffle_i32x4(xlo, ylo, 0x88);
		w[4 + j] = _mm512_shuffle_i32x4(xlo, ylo, 0xdd);
		w[8 + j] = _mm512_shuffle_i32x4(xhi, yhi, 0x88);
		w[12 + j] = _mm512_shuffle_i32x4(xhi, yhi, 0xdd);
	}
}

/* W[t] for t >= 16, in place of W[t-16] in the ring of 16. */
#define SCHEDULE(t) (w[(t) & 15] = _mm512_rol_epi32(_mm512_xor_si512( \
	_mm512_ternarylogic_epi32(w[((t) - 3) & 15], w[((t) - 8) & 15], \
				  w[((t) - 14) & 15], TL_PARITY), \
	w[(t) & 15]), 1))

#define ROUND(fn, k, wt) do { \
	__m512i tmp_ = _mm512_add_epi32( \
		_mm512_add_epi32(_mm512_rol_epi32(a, 5), \
				 _mm512_ternarylogic_epi32(b, c, d, fn)), \
		_mm512_add_epi32(e, _mm512_add_epi32(k, wt))); \
	e = d; \
	d = c; \
	c = _mm512_rol_epi32(b, 30); \
	b = a; \
	a = tmp_; \
} while (0)

static MB_TARGET void compress16(struct sha1_mb_state *state,
				 const unsigned char *const data[16],
				 size_t nblocks)
{
	const __m512i k0 = _mm512_set1_epi32(0x5a827999);
	const __m512i k1 = _mm512_set1_epi32(0x6ed9eba1);
	const __m512i k2 = _mm512_set1_epi32(0x8f1bbcdc);
	const __m512i k3 = _mm512_set1_epi32(0xca62c1d6);
	__m512i h0 = _mm512_load_si512((void *)state->h[0]);
	__m512i h1 = _mm512_load_si512((void *)state->h[1]);
	__m512i h2 = _mm512_load_si512((void *)state->h[2]);
	__m512i h3 = _mm512_load_si512((void *)state->h[3]);
	__m512i h4 = _mm512_load_si512((void *)state->h[4]);
	size_t n;

	for (n = 0; n < nblocks; n++) {
		__m512i w[16], a = h0, b = h1, c = h2, d = h3, e = h4;
		int t;

		load_words(w, data, n * 64);
#pragma GCC unroll 16
		for (t = 0; t < 16; t++)
			ROUND(TL_CH, k0, w[t]);
#pragma GCC unroll 4
		for (t = 16; t < 20; t++)
			ROUND(TL_CH, k0, SCHEDULE(t));
#pragma GCC unroll 20
		for (t = 20; t < 40; t++)
			ROUND(TL_PARITY, k1, SCHEDULE(t));
#pragma GCC unroll 20
		for (t = 40; t < 60; t++)
			ROUND(TL_MAJ, k2, SCHEDULE(t));
#pragma GCC unroll 20
		for (t = 60; t < 80; t++)
			ROUND(TL_PARITY, k3, SCHEDULE(t));
		h0 = _mm512_add_epi32(h0, a);
		h1 = _mm512_add_epi32(h1, b);
		h2 = _mm512_add_epi32(h2, c);
		h3 = _mm512_add_epi32(h3, d);
		h4 = _mm512_add_epi32(h4, e);
	}
	_mm512_store_si512((void *)state->h[0], h0);
	_mm512_store_si512((void *)state->h[1], h1);
	_mm512_store_si512((void *)state->h[2], h2);
	_mm512_store_si512((void *)state->h[3], h3);
	_mm512_store_si512((void *)state->h[4], h4);
}
#endif

void sha1_mb_compress(struct sha1_mb_state *state,
		      const unsigned char *const data[SHA1_MB_LANES],
		      size_t nblocks)
{
	switch (sha1_mb_lanes()) {
#ifdef HAVE_SHA1_MB
	case 16:
		compress16(state, data, nblocks);
		break;
#endif
	case 8:
		sha1_mb8_compress(state, data, nblocks);
		break;
	case 2:
		sha1_ni2_compress(state, data, nblocks);
		break;
	default:
		BUG("sha1_mb_compress without the vector instructions");
	}
}
