/*
 * SHA-1 of 8 messages at once with AVX2: see sha1-mb.h.
 *
 * The same rounds as sha1-mb.c (FIPS 180-4, 6.1.2), one message per
 * 32-bit lane of a 256-bit register. AVX2 has neither a rotation nor a
 * three-input logic instruction: ROTL_n(x) is (x << n) | (x >> (32 - n))
 * (ROTL1 as (x + x) | (x >> 31), an add instead of a shift: shifts go to
 * fewer execution ports than adds), and the round functions are
 *
 *   Ch(b, c, d)     = d ^ (b & (c ^ d))
 *   Parity(b, c, d) = b ^ c ^ d
 *   Maj(b, c, d)    = (b & c) | (d & (b | c))
 *
 * The functions using AVX2 are compiled for it alone and only called once
 * sha1_mb_lanes() has chosen them for this CPU (sha1_mb_compress()).
 */
#include "git-compat-util.h"
#include "sha1-mb.h"

#ifdef HAVE_SHA1_MB
#include <immintrin.h>

#define MB8_TARGET __attribute__((target("avx2")))

/*
 * Load 32 bytes (8 words) from each lane, at `offset` into its block, and
 * turn the 8 rows into 8 columns (word t of every lane, lane i in element
 * i), in big-endian order.
 */
static inline MB8_TARGET void load_8words(__m256i w[8],
				   const unsigned char *const data[8],
				   size_t offset)
{
	const __m256i bswap = _mm256_set_epi8(
		12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3,
		12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
	__m256i r[8], t[8], u[8];
	int i;

	for (i = 0; i < 8; i++)
		r[i] = _mm256_shuffle_epi8(_mm256_loadu_si256(
			(const __m256i *)(data[i] + offset)), bswap);
	/* Pairs of rows interleaved within each 128-bit half... */
	for (i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
	}
	/* ...then quads: half h of u[4g + j] is word 4h + j of rows 4g.. */
	for (i = 0; i < 8; i += 4) {
		u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
		u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
		u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
		u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	/* ...and the halves of rows 0-3 and 4-7 put side by side. */
	for (i = 0; i < 4; i++) {
		w[i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x20);
		w[4 + i] = _mm256_permute2x128_si256(u[i], u[4 + i], 0x31);
	}
}

#define ROTL(x, n) _mm256_or_si256(_mm256_slli_epi32((x), (n)), \
				   _mm256_srli_epi32((x), 32 - (n)))
#define ROTL1(x) _mm256_or_si256(_mm256_add_epi32((x), (x)), \
				 _mm256_srli_epi32((x), 31))
#define XOR _mm256_xor_si256

#define F_CH(b, c, d) XOR(d, _mm256_and_si256(b, XOR(c, d)))
#define F_PARITY(b, c, d) XOR(XOR(b, c), d)
#define F_MAJ(b, c, d) _mm256_or_si256(_mm256_and_si256(b, c), \
		_mm256_and_si256(d, _mm256_or_si256(b, c)))

/* W[t] for t >= 16, in place of W[t-16] in the ring of 16. */
#define SCHEDULE(t) (w[(t) & 15] = ROTL1(XOR(XOR(w[((t) - 3) & 15], \
	w[((t) - 8) & 15]), XOR(w[((t) - 14) & 15], w[(t) & 15]))))

#define ROUND(f, k, wt) do { \
	__m256i tmp_ = _mm256_add_epi32( \
		_mm256_add_epi32(ROTL(a, 5), f(b, c, d)), \
		_mm256_add_epi32(e, _mm256_add_epi32(k, wt))); \
	e = d; \
	d = c; \
	c = ROTL(b, 30); \
	b = a; \
	a = tmp_; \
} while (0)

MB8_TARGET void sha1_mb8_compress(struct sha1_mb_state *state,
				  const unsigned char *const data[8],
				  size_t nblocks)
{
	const __m256i k0 = _mm256_set1_epi32(0x5a827999);
	const __m256i k1 = _mm256_set1_epi32(0x6ed9eba1);
	const __m256i k2 = _mm256_set1_epi32(0x8f1bbcdc);
	const __m256i k3 = _mm256_set1_epi32(0xca62c1d6);
	__m256i h0 = _mm256_load_si256((void *)state->h[0]);
	__m256i h1 = _mm256_load_si256((void *)state->h[1]);
	__m256i h2 = _mm256_load_si256((void *)state->h[2]);
	__m256i h3 = _mm256_load_si256((void *)state->h[3]);
	__m256i h4 = _mm256_load_si256((void *)state->h[4]);
	size_t n;

	for (n = 0; n < nblocks; n++) {
		__m256i w[16], a = h0, b = h1, c = h2, d = h3, e = h4;
		int t;

		load_8words(w, data, n * 64);
		load_8words(w + 8, data, n * 64 + 32);
#pragma GCC unroll 16
		for (t = 0; t < 16; t++)
			ROUND(F_CH, k0, w[t]);
#pragma GCC unroll 4
		for (t = 16; t < 20; t++)
			ROUND(F_CH, k0, SCHEDULE(t));
#pragma GCC unroll 20
		for (t = 20; t < 40; t++)
			ROUND(F_PARITY, k1, SCHEDULE(t));
#pragma GCC unroll 20
		for (t = 40; t < 60; t++)
			ROUND(F_MAJ, k2, SCHEDULE(t));
#pragma GCC unroll 20
		for (t = 60; t < 80; t++)
			ROUND(F_PARITY, k3, SCHEDULE(t));
		h0 = _mm256_add_epi32(h0, a);
		h1 = _mm256_add_epi32(h1, b);
		h2 = _mm256_add_epi32(h2, c);
		h3 = _mm256_add_epi32(h3, d);
		h4 = _mm256_add_epi32(h4, e);
	}
	_mm256_store_si256((void *)state->h[0], h0);
	_mm256_store_si256((void *)state->h[1], h1);
	_mm256_store_si256((void *)state->h[2], h2);
	_mm256_store_si256((void *)state->h[3], h3);
	_mm256_store_si256((void *)state->h[4], h4);
}
#else
void sha1_mb8_compress(struct sha1_mb_state *state,
		       const unsigned char *const data[8], size_t nblocks)
{
	BUG("sha1_mb8_compress without AVX2");
}
#endif
