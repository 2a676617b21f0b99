/*
 * Checking stored manifests from their manifest trees, for `fsck` (see
 * fsck.h), without building whole manifest texts.
 *
 * A manifest tree (layout in metadata.h) gives the manifest text by a walk
 * in tree order: an entry "_<name>" is a directory (its entries follow,
 * under "<base><name>/") or a file revision, the line
 *     <base><name>\0<40 hex of the gitlink id><flag>\n
 * with the flag from the gitlink's mode: 160755 "x", 160644 "", 160000 "l".
 * Any other entry makes the tree damaged (the check dies, naming it).
 *
 * Consecutive manifests share most of their subtrees, so the lines of
 * each subtree are kept between manifests (up to a memory budget), keyed
 * by the subtree's id and its path: hashing a manifest hashes those kept
 * pieces in order, and only new subtrees are read and formatted. The
 * file revisions a manifest introduces come from comparing its tree with
 * its parents' trees, skipping the subtrees a parent has unchanged. The
 * git tree of a manifest's files (what git-tree.c builds) is computed
 * along with its text, each new subtree's from its subdirectories'.
 */
#ifndef CINNABAR_FSCK_MANIFEST_H
#define CINNABAR_FSCK_MANIFEST_H

#include "hg-id.h"

/*
 * The hg id of the manifest text of `tree` with parents p1 and p2, in
 * `result`. When it is `expected`, return 0 with the git tree of its
 * files in `git_tree` (git-tree.h; its id only, nothing is stored),
 * dying if hg2git lacks one of them; else return -1.
 */
int manifest_tree_check(const struct object_id *tree,
			const struct hg_oid *expected,
			const struct hg_oid *p1, const struct hg_oid *p2,
			struct hg_oid *result, struct object_id *git_tree);

/*
 * Call `fn` for every file revision of manifest tree `tree` that is not
 * the revision of the same path in parent tree a nor in b (each may be
 * NULL), in path order, with the path's revisions in a and b (the null id
 * where a parent has no such file). A non-zero return stops the walk and
 * is returned.
 */
typedef int (*manifest_change_fn)(const char *path, size_t len,
				  const struct hg_oid *node,
				  const struct hg_oid *a,
				  const struct hg_oid *b, void *data);
int manifest_tree_changes(const struct object_id *tree,
			  const struct object_id *a,
			  const struct object_id *b,
			  manifest_change_fn fn, void *data);

/* Free the subtrees kept. */
void manifest_trees_reset(void);

#endif
