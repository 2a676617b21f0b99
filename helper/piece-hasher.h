/*
 * The hg id of a text given in pieces, hashed on a thread of its own
 * while the caller goes on (with one CPU, as the pieces come).
 *
 * For texts too large to hold (file.c, "Large file revisions"): the
 * importer reads each piece once, for the hg id, the blob id and the
 * pack; the hg id's SHA-1 goes to the other core. The pieces are copied
 * into a small ring of buffers, the caller waiting when all are full.
 */
#ifndef CINNABAR_PIECE_HASHER_H
#define CINNABAR_PIECE_HASHER_H

#include "hg-id.h"

struct piece_hasher;

struct piece_hasher *piece_hasher_start(const struct hg_oid *p1,
					const struct hg_oid *p2);
void piece_hasher_add(struct piece_hasher *h, const void *buf, size_t len);
/* The id of everything added, into `id`; `h` is freed. */
void piece_hasher_finish(struct piece_hasher *h, struct hg_oid *id);

#endif
