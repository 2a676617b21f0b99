/*
 * The replace map of git-cinnabar's metadata ("replace" grafts).
 *
 * The tree of the metadata commit (empty when nothing was replaced) has
 * one entry per replaced commit: a gitlink (mode 160000) named by the hex
 * id of the replaced commit, a commit of a graft (a git mirror's), and
 * pointing at its replacement, the commit of the changeset that stands
 * for it. A graft makes one when the first commit it records a changeset
 * onto is not what the metadata can give back as is (graft.h): the
 * changeset then gets a commit of its own and the mirror's commit is
 * replaced by it. Reading the history of the mirror's commits goes
 * through the replacement: git2hg of a replaced commit is its
 * replacement's changeset, and the commits made for changesets whose
 * parent's commit is a replacement get the replaced commit as parent (as
 * the rest of the mirror's history has it).
 *
 * As git-cinnabar 0.7 reads it: an entry that is not a gitlink makes the
 * metadata unusable, as does a replaced commit named twice; a name that
 * is not a hex commit id, or an entry replacing a commit with itself, is
 * ignored with a warning. The refs refs/cinnabar/replace/<replaced> point
 * at the replacements (they keep them from being pruned) and follow the
 * metadata ref (replace_map_ref_updates).
 */
#ifndef CINNABAR_REPLACE_MAP_H
#define CINNABAR_REPLACE_MAP_H

#include "hash.h"

struct ref_transaction;
struct strbuf;

#define REPLACE_REFS_PREFIX "refs/cinnabar/replace/"

/* Forget the map, then read the one of metadata tree `tree` (or none). */
void replace_map_load(const struct object_id *tree);

/* The replacement of `commit`, or `commit` itself. */
const struct object_id *replace_lookup(const struct object_id *commit);
/* The commit `commit` replaces, or `commit` itself. */
const struct object_id *replace_original(const struct object_id *commit);
/* Whether `commit` is replaced. */
int is_replaced(const struct object_id *commit);

void set_replace(const struct object_id *replaced,
		 const struct object_id *replacement);
size_t replace_map_size(void);

typedef void (*each_replace_fn)(const struct object_id *replaced,
				const struct object_id *replacement,
				void *data);
/* In the order of the replaced commits' ids. */
void for_each_replace(each_replace_fn fn, void *data);

/* Store the tree of the map (the empty tree when it is empty). */
void replace_map_store(struct object_id *tree);

/*
 * Add to `t` the updates making refs/cinnabar/replace/ hold exactly the
 * entries of metadata tree `tree`; -1 (with `err`) on failure.
 */
int replace_map_ref_updates(struct ref_transaction *t,
			    const struct object_id *tree, struct strbuf *err);

#endif
