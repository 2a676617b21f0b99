/* SHA-1 of up to 16 messages given in pieces: see sha1-lanes.h. */
#include "git-compat-util.h"
#include "sha1-lanes.h"

void sha1_lanes_init(struct sha1_lanes *l)
{
	memset(l, 0, sizeof(*l));
	l->nr = sha1_mb_lanes();
	if (!l->nr)
		l->nr = SHA1_MB_LANES;
}

int sha1_lanes_has_room(const struct sha1_lanes *l)
{
	return l->busy < l->nr;
}

void sha1_lanes_add(struct sha1_lanes *l, sha1_piece_fn piece,
		    const void *src)
{
	int i, j;

	for (i = 0; i < l->nr && l->lane[i].src; i++)
		;
	if (i == l->nr)
		BUG("sha1_lanes_add without a free lane");
	memset(&l->lane[i], 0, sizeof(l->lane[i]));
	l->lane[i].src = src;
	l->lane[i].piece = piece;
	for (j = 0; j < 5; j++)
		l->state.h[j][i] = sha1_initial[j];
	l->busy++;
}

/* Make sure the current piece has bytes left; 0 when there are no more. */
static int has_bytes(struct sha1_lane *ln)
{
	while (ln->off == ln->piece_len) {
		if (!ln->piece)
			return 0;
		ln->data = ln->piece(ln->src, ln->piece_nr++, &ln->piece_len);
		ln->off = 0;
		if (!ln->data) {
			ln->piece = NULL;	/* no more pieces */
			ln->piece_len = 0;
			return 0;
		}
	}
	return 1;
}

/* The last block(s): what is left of the message, then the padding. */
static void stage_rest(struct sha1_lane *ln)
{
	size_t n = 0, total;

	while (n < 64 && has_bytes(ln)) {
		size_t k = ln->piece_len - ln->off;
		if (k > 64 - n)
			k = 64 - n;
		memcpy(ln->stage + n, ln->data + ln->off, k);
		n += k;
		ln->off += k;
	}
	ln->len += n;
	ln->stage_pos = 0;
	if (n == 64) {
		ln->staged = 1;
		return;
	}
	total = n < 56 ? 64 : 128;
	ln->stage[n] = 0x80;
	memset(ln->stage + n + 1, 0, total - 8 - n - 1);
	put_be32(ln->stage + total - 8, (uint32_t)(ln->len >> 29));
	put_be32(ln->stage + total - 4, (uint32_t)(ln->len << 3));
	ln->staged = total / 64;
	ln->at_end = 1;
}

/*
 * Where the lane's next blocks are, and how many follow one another
 * there (at most SHA1_MB_MAX_RUN); 0 when the lane is done.
 */
static size_t peek(struct sha1_lane *ln, const unsigned char **at)
{
	size_t n;

	if (!ln->staged) {
		if (ln->at_end)
			return 0;
		if (!has_bytes(ln) || ln->piece_len - ln->off < 64)
			stage_rest(ln);
	}
	if (ln->staged) {
		*at = ln->stage + 64 * ln->stage_pos;
		return ln->staged;
	}
	n = (ln->piece_len - ln->off) / 64;
	*at = (const unsigned char *)ln->data + ln->off;
	return n < SHA1_MB_MAX_RUN ? n : SHA1_MB_MAX_RUN;
}

static void advance(struct sha1_lane *ln, size_t n)
{
	if (ln->staged) {
		ln->staged -= n;
		ln->stage_pos += n;
	} else {
		ln->off += 64 * n;
		ln->len += 64 * n;
	}
}

static int lane_done(const struct sha1_lane *ln)
{
	return ln->at_end && !ln->staged;
}

/*
 * Keep the digest of a lane that has just finished: later runs of the
 * multi-lane code overwrite the state of lanes that have nothing to hash.
 */
static void keep_digest(struct sha1_lanes *l, int i)
{
	int j;

	if (lane_done(&l->lane[i]))
		for (j = 0; j < 5; j++)
			put_be32(l->lane[i].digest + 4 * j, l->state.h[j][i]);
}

static void step_mb(struct sha1_lanes *l)
{
	const unsigned char *at[SHA1_MB_LANES];
	size_t n = SHA1_MB_MAX_RUN;
	int i, any = 0;

	for (i = 0; i < l->nr; i++) {
		struct sha1_lane *ln = &l->lane[i];
		size_t k;

		at[i] = sha1_mb_zeros;
		if (!ln->src || !(k = peek(ln, &at[i])))
			continue;
		any = 1;
		if (k < n)
			n = k;
	}
	if (!any)
		return;
	sha1_mb_compress(&l->state, at, n);
	for (i = 0; i < l->nr; i++)
		if (at[i] != sha1_mb_zeros) {
			advance(&l->lane[i], n);
			keep_digest(l, i);
		}
}

static void step_one(struct sha1_lanes *l, int i, size_t max_blocks)
{
	struct sha1_lane *ln = &l->lane[i];
	const unsigned char *at;
	uint32_t h[5];
	size_t n;
	int j;

	for (j = 0; j < 5; j++)
		h[j] = l->state.h[j][i];
	while (max_blocks && (n = peek(ln, &at))) {
		if (n > max_blocks)
			n = max_blocks;
		sha1_one_compress(h, at, n);
		advance(ln, n);
		max_blocks -= n;
	}
	for (j = 0; j < 5; j++)
		l->state.h[j][i] = h[j];
	keep_digest(l, i);
}

void sha1_lanes_step(struct sha1_lanes *l, int min_mb, size_t max_blocks)
{
	int i, hashing = 0, first = -1;

	for (i = 0; i < l->nr; i++) {
		if (!l->lane[i].src || lane_done(&l->lane[i]))
			continue;
		hashing++;
		if (first < 0)
			first = i;
	}
	if (!hashing)
		return;
	if (hashing >= min_mb && sha1_mb_lanes())
		step_mb(l);
	else
		step_one(l, first, max_blocks);
}

const void *sha1_lanes_take_done(struct sha1_lanes *l,
				 unsigned char digest[20])
{
	int i;

	for (i = 0; i < l->nr; i++) {
		struct sha1_lane *ln = &l->lane[i];
		const void *src = ln->src;

		if (!src || !lane_done(ln))
			continue;
		memcpy(digest, ln->digest, 20);
		ln->src = NULL;
		l->busy--;
		return src;
	}
	return NULL;
}
