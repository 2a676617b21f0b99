/*
 * Differences between two stored manifests, from their git trees (the
 * manifest trees of metadata.h: each path component prefixed with '_',
 * files as gitlinks whose id is the file revision's hg id and whose mode
 * gives the flag: 160755 'x', 160644 none, 160000 'l').
 *
 * Subtrees with the same id are skipped, so consecutive manifests cost
 * what changed between them, not their size. Pushing uses it to make each
 * manifest from one it already has (see push.c).
 */
#ifndef CINNABAR_MANIFEST_TREE_DIFF_H
#define CINNABAR_MANIFEST_TREE_DIFF_H

#include "hg-id.h"

/* A path of the new manifest whose line is new, or one removed. */
struct manifest_change {
	char *path;
	size_t len;
	struct hg_oid node;
	char flag;
	int removed;
};

struct manifest_changes {
	struct manifest_change *items;
	size_t nr, alloc;
};

/*
 * Append the changes from manifest tree `old` to `new` to `out`, sorted by
 * path (the order of manifest lines). Dies on a damaged tree.
 */
void manifest_tree_diff(const struct object_id *old,
			const struct object_id *new,
			struct manifest_changes *out);

void manifest_changes_clear(struct manifest_changes *c);

#endif
