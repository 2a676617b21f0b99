/*
 * Git commits as they are stored, for everything in the helper that reads
 * one (metadata commits, manifest commits, changeset commits):
 *
 *   tree <hex>\n            (the first line)
 *   parent <hex>\n          (zero or more, directly after `tree`)
 *   author <ident>\n
 *   committer <ident>\n
 *   <other headers>          (encoding, gpgsig and its continuation lines
 *                             starting with a space, mergetag, ...)
 *   \n
 *   <message>
 *
 * Read as git reads it (parse_commit_buffer in git's commit.c): a `parent`
 * line after any other header is not a parent, but an other header.
 */
#ifndef CINNABAR_RAW_COMMIT_H
#define CINNABAR_RAW_COMMIT_H

#include "hash.h"
#include "oid-array.h"
#include "slice.h"

struct raw_commit {
	char *buf;			/* owned after raw_commit_read */
	unsigned long len;
	struct object_id tree;
	struct oid_array parents;
	struct slice author, committer;	/* empty buf: no such header */
	const char *body;		/* the message, up to buf + len */
	size_t body_len;
	const char *other_header;	/* the first other header, or NULL */
};

/*
 * Parse the `len` bytes at `buf` (not copied: `c` points into them);
 * return -1 when they are not a commit (no tree line first, a bad parent
 * line among those after it, no empty line ending the headers).
 */
int raw_commit_parse(struct raw_commit *c, const char *buf, size_t len);

/*
 * Read and parse commit `oid`; return -1 when it is NULL, missing, not a commit
 * or damaged (`c` then needs no release).
 */
int raw_commit_read(struct raw_commit *c, const struct object_id *oid);

void raw_commit_release(struct raw_commit *c);

/* The tree of `commit`; dies when it is not a readable commit. */
void commit_tree_oid(const struct object_id *commit, struct object_id *tree);

#endif
