/*
 * Mercurial manifests and their git storage.
 *
 * A manifest lists a changeset's files, sorted by path, one per line:
 *     <path>\0<file id hex>[<flag>]\n
 * where the flag is empty (regular file), "x" (executable) or "l"
 * (symlink). The manifest is stored as a git commit (metadata.h) whose
 * tree holds the same entries; the changeset's git commit gets a tree of
 * real blobs built from it.
 */
#ifndef CINNABAR_MANIFEST_H
#define CINNABAR_MANIFEST_H

#include "hg-id.h"
#include "block-text.h"

struct id_verify;
struct rev_chunk;
struct raw_commit;

/*
 * A changegroup's manifests are imported in two passes, in their order.
 * The first, while the changegroup still comes (import.c), checks each
 * revision's delta and text, and stores its manifest tree and commit: it
 * needs nothing but the manifests. The
 * second, once the files are in, stores the git trees, which need the
 * files' blobs, and verifies the ids the early check (manifest-precheck.h)
 * did not.
 *
 * import_manifest_tree() is the first pass for one revision: 0 when it
 * was stored already (nothing for the second pass), else 1, the chunk's
 * delta then rewritten, where it was against another revision than the
 * last one imported, against that one (into `rebased`, which the chunk
 * then points into): the second pass is given the revisions in the same
 * order with those deltas, each against the one before it.
 */
int import_manifest_tree(struct rev_chunk *chunk, struct strbuf *rebased);
/*
 * The end of the first pass: keeps on disk the text of the last manifest
 * imported, the first delta base of the next fetch or the parent of the
 * next push (manifest-cache.h), and lets go of the manifest tree.
 */
void manifest_trees_end(void);
/*
 * The second pass for the `index`th manifest of the changegroup, `chunk`
 * as the first pass left it (verifying its id, unless `id_checked`).
 */
void import_manifest_git_tree(struct id_verify *verify,
			      struct rev_chunk *chunk, size_t index,
			      int id_checked);

/*
 * How many texts of stored manifests were made from their trees, and how
 * many read back from the disk instead (manifest-cache.h), so far.
 */
void manifest_text_counts(unsigned *from_trees, unsigned *read_back);

/* The text of a stored manifest (empty for the null id). */
void manifest_text(const struct hg_oid *node, struct strbuf *out);
/* The same, as a block text (block-text.h) into `out`. */
void manifest_block_text(const struct hg_oid *node, struct block_text *out);

/*
 * Texts offered to the next import, made and checked against their ids by
 * the caller: it takes them instead of making them again from trees. Two
 * are kept, until taken or until manifest_reset_cache().
 *
 * The text of the stored manifest `node`, made by a push (the parent of
 * what it imports back).
 */
void manifest_offer_text(const struct hg_oid *node, const char *buf,
			 size_t len);
/* The offered text of `node`, or NULL. */
const struct block_text *manifest_offered_text(const struct hg_oid *node);
/*
 * The text of the stored manifest `node`, made from its trees and offered
 * when a slot is free (the early id check, manifest-precheck.h, makes the
 * first delta base of a changegroup this way, and the import takes it as
 * its first base); NULL when none is free.
 */
const struct block_text *manifest_offer_stored(const struct hg_oid *node);
/*
 * The text of the new manifest `node`, made by the early id check from a
 * stored revision (a snapshot): the import rebuilds that revision against
 * the last one it imported, and would have made the stored one again.
 * Offered (sharing `text`'s blocks) when a slot is free.
 */
void manifest_offer_made(const struct hg_oid *node,
			 const struct block_text *text);

/*
 * The flag of a manifest line ("x", "l" or "") for the mode of its entry
 * in a manifest tree (a gitlink: 0160755, 0160000, 0160644); NULL for a
 * mode no line has.
 */
const char *manifest_flag_of_mode(unsigned mode);

/*
 * One manifest line, read strictly, as Mercurial reads it: a path that is
 * not empty and has no line break, a NUL, 40 hex digits, a flag "x", "l"
 * or none, and the line break.
 */
struct manifest_line {
	const char *path;
	size_t path_len;
	struct hg_oid oid;
	char flag;	/* 'x', 'l' or '\0' */
};

/* Parse the line at *p (before end) and advance *p; -1 if malformed. */
int manifest_line_parse(const char **p, const char *end,
			struct manifest_line *line);

/* Append the line of `path` (`len` bytes) to `out`. */
void manifest_line_add(struct strbuf *out, const char *path, size_t len,
		       const struct hg_oid *oid, char flag);

/*
 * Mercurial's order of manifest paths: byte by byte, a path before the
 * longer ones it starts. (Not git's order of tree entries: tree-iter.h.)
 */
int manifest_path_cmp(const char *a, size_t a_len, const char *b,
		      size_t b_len);

/*
 * The hg id the message of a manifest commit names (its whole message is
 * the id in hex); -1 when it is not one. manifest_commit_node reads
 * commit `commit` first, -1 also when it is not a readable commit.
 */
int manifest_commit_body_node(const struct raw_commit *c, struct hg_oid *node);
int manifest_commit_node(const struct object_id *commit, struct hg_oid *node);

/* Drop the manifest text kept in memory between revisions. */
void manifest_reset_cache(void);

#endif
