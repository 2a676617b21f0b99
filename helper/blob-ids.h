/*
 * The git ids of several blobs at once.
 *
 * A blob's id is the SHA-1 of "blob <size in decimal>\0" followed by its
 * content (git's object header, as format_object_header() writes it).
 * Hashed one after the other, each takes the one-message speed of SHA-1; on the
 * lanes of sha1/sha1-lanes.h, 16 with AVX-512, several blobs are hashed
 * by the same instructions, about three times as fast over a batch of
 * file revisions (file.c, "Small revisions in batches"). Without
 * multi-lane code, each is hashed with git's SHA-1 (OpenSSL's).
 */
#ifndef CINNABAR_BLOB_IDS_H
#define CINNABAR_BLOB_IDS_H

#include "hash.h"

struct blob_text {
	const char *buf;
	size_t len;
	struct object_id id;	/* what blob_ids() computes */
};

/* Compute the id of each of the `nr` blobs. */
void blob_ids(struct blob_text *blobs, size_t nr);

/*
 * The id of one object of type `type` and content `buf`, as git's
 * hash_object_file() gives it, faster with OpenSSL 3 (see
 * object_id_evp()): every id of a single object the helper computes.
 */
void object_id_of(enum object_type type, const void *buf, size_t len,
		  struct object_id *oid);

#endif
