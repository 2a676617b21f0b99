/*
 * SHA-1 compression of one message from a given intermediate hash value
 * (sha1-mb.h): for a message the multi-lane code leaves alone, continuing
 * from where the lanes were. And two messages at once with the SHA
 * extensions (the 2 lanes of sha1-mb.h).
 *
 * With the CPU's SHA extensions (sha1rnds4 does four rounds of FIPS
 * 180-4, 6.1.2; sha1msg1 and sha1msg2 compute four words of the message
 * schedule; sha1nexte derives the next rounds' e from the a of four rounds
 * before), else plain C.
 */
#include "git-compat-util.h"
#include "sha1-mb.h"

#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static uint32_t get_be32_(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void compress_c(uint32_t h[5], const unsigned char *data,
		       size_t nblocks)
{
	for (; nblocks--; data += 64) {
		uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3],
			 e = h[4];
		int t;

		for (t = 0; t < 16; t++)
			w[t] = get_be32_(data + 4 * t);
		for (; t < 80; t++)
			w[t] = ROTL(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^
				    w[t - 16], 1);
		for (t = 0; t < 80; t++) {
			uint32_t f, k, tmp;
			if (t < 20) {
				f = (b & c) | (~b & d);
				k = 0x5a827999;
			} else if (t < 40) {
				f = b ^ c ^ d;
				k = 0x6ed9eba1;
			} else if (t < 60) {
				f = (b & c) | (b & d) | (c & d);
				k = 0x8f1bbcdc;
			} else {
				f = b ^ c ^ d;
				k = 0xca62c1d6;
			}
			tmp = ROTL(a, 5) + f + e + k + w[t];
			e = d;
			d = c;
			c = ROTL(b, 30);
			b = a;
			a = tmp;
		}
		h[0] += a;
		h[1] += b;
		h[2] += c;
		h[3] += d;
		h[4] += e;
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <cpuid.h>
#define SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

int sha1_has_sha_ni(void)
{
	static int have = -1;
	unsigned a, b, c, d;

	if (have < 0)
		/* CPUID leaf 7: EBX bit 29 is SHA. */
		have = __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
		       (b & (1u << 29));
	return have;
}

/* Four rounds; the function (0 to 3) must be a constant. */
static SHA_TARGET __m128i rounds4(__m128i abcd, __m128i e, int fn)
{
	switch (fn) {
	case 0:
		return _mm_sha1rnds4_epu32(abcd, e, 0);
	case 1:
		return _mm_sha1rnds4_epu32(abcd, e, 1);
	case 2:
		return _mm_sha1rnds4_epu32(abcd, e, 2);
	default:
		return _mm_sha1rnds4_epu32(abcd, e, 3);
	}
}

/*
 * abcd holds a in its highest 32 bits, d in its lowest; the words of the
 * schedule go four by four, W[4g] highest. Group g of four words, for
 * g >= 4: sha1msg2(sha1msg1(M[g-4], M[g-3]) ^ M[g-2], M[g-1]).
 */
static SHA_TARGET void compress_ni(uint32_t h[5], const unsigned char *data,
				   size_t nblocks)
{
	const __m128i bswap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					   11, 12, 13, 14, 15);
	__m128i abcd = _mm_set_epi32(h[0], h[1], h[2], h[3]);
	__m128i e0 = _mm_set_epi32(h[4], 0, 0, 0);

	for (; nblocks--; data += 64) {
		__m128i abcd_save = abcd, e_save = e0, m[4], prev, e;
		int g;

		for (g = 0; g < 4; g++)
			m[g] = _mm_shuffle_epi8(_mm_loadu_si128(
				(const __m128i *)(data + 16 * g)), bswap);
		e = _mm_add_epi32(e0, m[0]);
		prev = abcd;
		abcd = rounds4(abcd, e, 0);
#pragma GCC unroll 19
		for (g = 1; g < 20; g++) {
			if (g >= 4)
				m[g & 3] = _mm_sha1msg2_epu32(_mm_xor_si128(
					_mm_sha1msg1_epu32(m[g & 3],
							   m[(g + 1) & 3]),
					m[(g + 2) & 3]), m[(g + 3) & 3]);
			e = _mm_sha1nexte_epu32(prev, m[g & 3]);
			prev = abcd;
			abcd = rounds4(abcd, e, g / 5);
		}
		e0 = _mm_sha1nexte_epu32(prev, e_save);
		abcd = _mm_add_epi32(abcd, abcd_save);
	}
	h[0] = _mm_extract_epi32(abcd, 3);
	h[1] = _mm_extract_epi32(abcd, 2);
	h[2] = _mm_extract_epi32(abcd, 1);
	h[3] = _mm_extract_epi32(abcd, 0);
	h[4] = _mm_extract_epi32(e0, 3);
}

/*
 * Two messages, the instructions of each round interleaved: each
 * sha1rnds4 needs the result of the one before, so one message leaves the
 * SHA unit waiting most of the time; the other message's rounds fill it.
 * The same steps as compress_ni(), for lanes 0 and 1 of the state.
 */
SHA_TARGET void sha1_ni2_compress(struct sha1_mb_state *state,
				  const unsigned char *const data[2],
				  size_t nblocks)
{
	const __m128i bswap = _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					   11, 12, 13, 14, 15);
	__m128i abcd[2], e0[2];
	size_t n;
	int g, j;

	for (j = 0; j < 2; j++) {
		abcd[j] = _mm_set_epi32(state->h[0][j], state->h[1][j],
					state->h[2][j], state->h[3][j]);
		e0[j] = _mm_set_epi32(state->h[4][j], 0, 0, 0);
	}
	for (n = 0; n < nblocks; n++) {
		__m128i abcd_save[2], e_save[2], m[2][4], prev[2], e[2];

		for (j = 0; j < 2; j++) {
			abcd_save[j] = abcd[j];
			e_save[j] = e0[j];
			for (g = 0; g < 4; g++)
				m[j][g] = _mm_shuffle_epi8(_mm_loadu_si128(
					(const __m128i *)(data[j] + 64 * n +
							  16 * g)), bswap);
			e[j] = _mm_add_epi32(e0[j], m[j][0]);
			prev[j] = abcd[j];
			abcd[j] = rounds4(abcd[j], e[j], 0);
		}
#pragma GCC unroll 19
		for (g = 1; g < 20; g++) {
#pragma GCC unroll 2
			for (j = 0; j < 2; j++) {
				__m128i *mj = m[j];
				if (g >= 4)
					mj[g & 3] = _mm_sha1msg2_epu32(
						_mm_xor_si128(_mm_sha1msg1_epu32(
							mj[g & 3],
							mj[(g + 1) & 3]),
							mj[(g + 2) & 3]),
						mj[(g + 3) & 3]);
				e[j] = _mm_sha1nexte_epu32(prev[j], mj[g & 3]);
				prev[j] = abcd[j];
				abcd[j] = rounds4(abcd[j], e[j], g / 5);
			}
		}
		for (j = 0; j < 2; j++) {
			e0[j] = _mm_sha1nexte_epu32(prev[j], e_save[j]);
			abcd[j] = _mm_add_epi32(abcd[j], abcd_save[j]);
		}
	}
	for (j = 0; j < 2; j++) {
		state->h[0][j] = _mm_extract_epi32(abcd[j], 3);
		state->h[1][j] = _mm_extract_epi32(abcd[j], 2);
		state->h[2][j] = _mm_extract_epi32(abcd[j], 1);
		state->h[3][j] = _mm_extract_epi32(abcd[j], 0);
		state->h[4][j] = _mm_extract_epi32(e0[j], 3);
	}
}

void sha1_one_compress(uint32_t h[5], const unsigned char *data,
		       size_t nblocks)
{
	if (sha1_has_sha_ni())
		compress_ni(h, data, nblocks);
	else
		compress_c(h, data, nblocks);
}
#else
int sha1_has_sha_ni(void)
{
	return 0;
}

void sha1_ni2_compress(struct sha1_mb_state *state,
		       const unsigned char *const data[2], size_t nblocks)
{
	BUG("sha1_ni2_compress without the SHA extensions");
}

void sha1_one_compress(uint32_t h[5], const unsigned char *data,
		       size_t nblocks)
{
	compress_c(h, data, nblocks);
}
#endif
