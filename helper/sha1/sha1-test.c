/* Test hooks of the multi-lane SHA-1: see sha1-test.h. */
#include "../libgit.h"
#include "sha1-lanes.h"
#include "sha1-test.h"
#include <openssl/evp.h>
#include <time.h>

/* A message cut into pieces. */
struct test_msg {
	unsigned char *buf;
	size_t len;
	size_t *cuts;		/* piece i is [cuts[i], cuts[i + 1]) */
	size_t nr_cuts;
	unsigned char want[20];
};

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

static size_t rnd_below(size_t n)
{
	return n ? (((uint64_t)rnd() << 32) | rnd()) % n : 0;
}

/* Lengths 0..300, around multiples of 64, and large ones. */
static size_t pick_length(unsigned i)
{
	static const int near[] = { -9, -8, -7, -1, 0, 1, 55 - 64, 56 - 64 };
	switch (i % 4) {
	case 0:
		return i / 4 <= 300 ? i / 4 : rnd_below(301);
	case 1: {
		size_t m = 1 + rnd_below(40);
		return 64 * m + near[rnd_below(ARRAY_SIZE(near))];
	}
	case 2:
		return rnd_below(5000);
	default:
		return 20000 + rnd_below(400000);
	}
}

static void make_msg(struct test_msg *m, size_t len)
{
	size_t i, pos = 0, alloc = 0;
	int style = rnd_below(4);

	m->len = len;
	m->buf = xmalloc(len + 1);
	for (i = 0; i < len; i++)
		m->buf[i] = rnd();
	m->cuts = NULL;
	m->nr_cuts = 0;
	ALLOC_GROW(m->cuts, m->nr_cuts + 1, alloc);
	m->cuts[m->nr_cuts++] = 0;
	/* Like id-verify's: 40 bytes of parents first, when long enough. */
	if (style && len >= 40) {
		ALLOC_GROW(m->cuts, m->nr_cuts + 1, alloc);
		m->cuts[m->nr_cuts++] = pos = 40;
	}
	while (pos < len) {
		size_t piece;
		switch (style) {
		case 0:
			piece = len - pos;		/* whole */
			break;
		case 1:
			piece = rnd_below(200);		/* small, empty ones */
			break;
		case 2:
			piece = 1 + rnd_below(70000);	/* blocks of texts */
			break;
		default:
			piece = 64 * rnd_below(300) + rnd_below(3);
			break;
		}
		if (piece > len - pos)
			piece = len - pos;
		pos += piece;
		ALLOC_GROW(m->cuts, m->nr_cuts + 1, alloc);
		m->cuts[m->nr_cuts++] = pos;
	}
	if (!EVP_Digest(m->buf, len, m->want, NULL, EVP_sha1(), NULL))
		die("SHA-1 computation failed");
}

static const char *msg_piece(const void *src, size_t i, size_t *len)
{
	const struct test_msg *m = src;

	if (i + 1 >= m->nr_cuts)
		return NULL;
	*len = m->cuts[i + 1] - m->cuts[i];
	return (const char *)m->buf + m->cuts[i];
}

unsigned sha1_test_messages(unsigned seed, unsigned count)
{
	struct sha1_lanes lanes;
	struct test_msg *msgs;
	unsigned next = 0, done = 0, bad = 0, i;

	rng_state = 0x9e3779b97f4a7c15ULL ^ seed;
	CALLOC_ARRAY(msgs, count);
	for (i = 0; i < count; i++)
		make_msg(&msgs[i], pick_length(i));
	sha1_lanes_init(&lanes);
	while (done < count) {
		unsigned char digest[20];
		const struct test_msg *m;
		int min_mb;

		/* Refill some free lanes, sometimes not all of them. */
		while (next < count && sha1_lanes_has_room(&lanes) &&
		       (rnd_below(8) || !lanes.busy))
			sha1_lanes_add(&lanes, msg_piece, &msgs[next++]);
		/* The multi-lane code mostly; the one-lane code now and then. */
		min_mb = rnd_below(4) ? 1 + rnd_below(4) : SHA1_MB_LANES + 1;
		sha1_lanes_step(&lanes, min_mb, 1 + rnd_below(300));
		while ((m = sha1_lanes_take_done(&lanes, digest))) {
			done++;
			if (memcmp(digest, m->want, 20)) {
				bad++;
				error("SHA-1 of message %d (%"PRIuMAX
				      " bytes, %"PRIuMAX" pieces) is wrong",
				      (int)(m - msgs), (uintmax_t)m->len,
				      (uintmax_t)m->nr_cuts - 1);
			}
		}
	}
	for (i = 0; i < count; i++) {
		free(msgs[i].buf);
		free(msgs[i].cuts);
	}
	free(msgs);
	return bad;
}

const char *sha1_test_path(void)
{
	switch (sha1_mb_lanes()) {
	case 16:
		return "16-lane";
	case 8:
		return "8-lane";
	case 2:
		return "2-lane";
	default:
		return "one-lane";
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void sha1_test_speed(unsigned mb)
{
	size_t len = (size_t)mb << 20, i;
	struct test_msg msgs[SHA1_MB_LANES];
	struct sha1_lanes lanes;
	unsigned char digest[20];
	uint32_t h[5];
	double t;

	rng_state = 1;
	for (i = 0; i < SHA1_MB_LANES; i++) {
		msgs[i].len = len;
		msgs[i].buf = xmalloc(len);
		memset(msgs[i].buf, i, len);
		msgs[i].cuts = xmalloc(2 * sizeof(size_t));
		msgs[i].cuts[0] = 0;
		msgs[i].cuts[1] = len;
		msgs[i].nr_cuts = 2;
	}
	t = now();
	EVP_Digest(msgs[0].buf, len, digest, NULL, EVP_sha1(), NULL);
	printf("openssl %.2f GB/s\n", len / (now() - t) / 1e9);
	memcpy(h, sha1_initial, sizeof(h));
	t = now();
	sha1_one_compress(h, msgs[0].buf, len / 64);
	printf("one %.2f GB/s\n", len / (now() - t) / 1e9);
	if (sha1_mb_lanes()) {
		sha1_lanes_init(&lanes);
		for (i = 0; i < (size_t)lanes.nr; i++)
			sha1_lanes_add(&lanes, msg_piece, &msgs[i]);
		t = now();
		while (lanes.busy) {
			sha1_lanes_step(&lanes, 1, 0);
			while (sha1_lanes_take_done(&lanes, digest))
				;
		}
		printf("%s %.2f GB/s\n", sha1_test_path(),
		       lanes.nr * len / (now() - t) / 1e9);
	}
	for (i = 0; i < SHA1_MB_LANES; i++) {
		free(msgs[i].buf);
		free(msgs[i].cuts);
	}
}
