/*
 * SHA-1 of up to 16 (or 8) messages at once, each given in pieces of any length
 * (e.g. 40 bytes of parent ids, then the blocks of a block_text).
 *
 * Each lane streams its message: whole 64-byte blocks are read where
 * they lie in a piece; a block that straddles two pieces, and the final
 * padding (FIPS 180-4, 5.1.1: 0x80, zeros, the length in bits as 64-bit
 * big-endian, to a multiple of 64 bytes), go through the lane's staging
 * buffer. A lane that finishes can be given a new message while the
 * others go on. With many lanes busy, a step runs the multi-lane code
 * (sha1-mb.h: 16 lanes with AVX-512, 8 with AVX2) for as many blocks as
 * every busy lane has ready; with few, it runs the one-message code on one
 * lane, from that lane's state. Without either, every step is one lane's.
 */
#ifndef CINNABAR_SHA1_LANES_H
#define CINNABAR_SHA1_LANES_H

#include "sha1-mb.h"

/*
 * Piece i of the message `src` (0 first), or NULL after the last one;
 * pieces may be empty. Called from the thread running the lanes.
 */
typedef const char *(*sha1_piece_fn)(const void *src, size_t i, size_t *len);

struct sha1_lane {
	const void *src;	/* NULL: the lane is free */
	sha1_piece_fn piece;
	const char *data;	/* current piece, and the position in it */
	size_t piece_nr, piece_len, off;
	uint64_t len;		/* bytes of the message read so far */
	int at_end;		/* every piece read, padding staged */
	int staged, stage_pos;	/* blocks waiting in stage, first one */
	unsigned char stage[128];
	unsigned char digest[20];	/* once done */
};

struct sha1_lanes {
	struct sha1_mb_state state;
	struct sha1_lane lane[SHA1_MB_LANES];
	int nr;			/* lanes in use: sha1_mb_lanes(), or 16 */
	int busy;		/* lanes with a message */
};

/*
 * As many lanes as sha1_mb_compress() runs, or SHA1_MB_LANES lanes hashed
 * one at a time without it.
 */
void sha1_lanes_init(struct sha1_lanes *l);
/* Whether a lane is free for sha1_lanes_add(). */
int sha1_lanes_has_room(const struct sha1_lanes *l);
/* Start hashing `src` in a free lane. */
void sha1_lanes_add(struct sha1_lanes *l, sha1_piece_fn piece,
		    const void *src);
/*
 * Hash some more: a run of the multi-lane code if at least `min_mb` lanes
 * are busy, else up to `max_blocks` blocks of one lane. Call only with a
 * busy lane.
 */
void sha1_lanes_step(struct sha1_lanes *l, int min_mb, size_t max_blocks);
/*
 * Take a finished message out of its lane: return its `src` and write
 * its digest, or return NULL if none has finished.
 */
const void *sha1_lanes_take_done(struct sha1_lanes *l,
				 unsigned char digest[20]);

#endif
