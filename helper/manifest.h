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

struct rev_chunk;

/*
 * Import one manifest revision of a changegroup (verifying its id), with
 * the git tree of its files: the files must have been imported first.
 */
/* id_checked: its id was checked already (manifest-precheck.h). */
void import_manifest(struct rev_chunk *chunk, int id_checked);

/* The text of a stored manifest (empty for the null id). */
void manifest_text(const struct hg_oid *node, struct strbuf *out);
/* The same, as a block text (block-text.h) into `out`. */
void manifest_block_text(const struct hg_oid *node, struct block_text *out);

/*
 * The flag of a manifest line ("x", "l" or "") for the mode of its entry
 * in a manifest tree (a gitlink: 0160755, 0160000, 0160644); NULL for a
 * mode no line has.
 */
const char *manifest_flag_of_mode(unsigned mode);

/* The tree of a manifest or changeset commit. */
void commit_tree_oid(const struct object_id *commit, struct object_id *tree);

/* Drop the manifest text kept in memory between revisions. */
void manifest_reset_cache(void);

#endif
