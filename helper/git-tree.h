/* Git trees for manifests: see git-tree.c. */
#ifndef CINNABAR_GIT_TREE_H
#define CINNABAR_GIT_TREE_H

#include "hg-id.h"

/* The git tree for the files of a stored manifest. */
void git_tree_for_manifest(const struct hg_oid *manifest,
			   struct object_id *result);
/* The same; -1 when the manifest is not stored. */
int git_tree_for_stored_manifest(const struct hg_oid *manifest,
				 struct object_id *result);
/* The same, from the manifest's tree (metadata.h layout). */
void git_tree_from_manifest_tree(const struct object_id *manifest_tree,
				 struct object_id *result);
/* Record the git tree of a manifest built while importing it. */
void remember_git_tree(const struct hg_oid *manifest,
		       const struct object_id *tree);
/*
 * Record the git tree of the manifest of `changeset` when it is stored:
 * the tree of its git commit (made from that manifest), read with its
 * git2hg note. Without it, the first manifest of a fetch, whose base is
 * the manifest of a stored parent, built that parent's git tree again
 * from the manifest tree: every file of the manifest looked up.
 */
void learn_git_tree_of_changeset(const struct hg_oid *changeset);
/* The git blob of a file revision; dies if it is unknown. */
const struct object_id *git_blob_for_file(const struct hg_oid *file);
/*
 * The same, when the empty blob was stored already if `file` is the empty
 * file: nothing is stored (git_blob_for_file() stores it every time).
 */
const struct object_id *git_blob_of_stored_file(const struct hg_oid *file);

/* Forget what was built (after the objects were dropped). */
void git_tree_reset_caches(void);

#endif
