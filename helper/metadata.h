/*
 * git-cinnabar's metadata: refs/cinnabar/metadata.
 *
 * The metadata commit has the message "files-meta unified-manifests-v2"
 * (its format flags), a tree of replaced commits (replace-map.h; empty
 * unless a graft replaced a commit) and, in this order, the parents:
 *   1. changesets: a commit whose parents are the git commits of the
 *      changeset branch heads and whose message lists them, one
 *      "<hg id> <branch>" per line, in the order they were added;
 *   2. manifests: a commit whose parents are the manifest head commits,
 *      sorted by id, with an empty message;
 *   3. hg2git, 4. git2hg, 5. files-meta: commits of notes trees (see
 *      notes-map.h);
 *   6. the previous metadata commit, if any.
 * refs/notes/cinnabar follows the git2hg part (as in git-cinnabar 0.7), so
 * that `git log --notes=cinnabar` shows the hg ids.
 * All of these commits have the author and committer " <cinnabar@git> 0
 * +0000". A manifest is stored as a commit whose tree holds the manifest's
 * files, each path component prefixed with "_", as gitlinks to the file's
 * hg id with mode 160644 (regular), 160755 (executable) or 160000
 * (symlink); its parents are the commits of its hg parents and its message
 * is its hg id.
 */
#ifndef CINNABAR_METADATA_H
#define CINNABAR_METADATA_H

#include "hg-id.h"
#include "notes-map.h"
#include "oid-array.h"

#define METADATA_REF "refs/cinnabar/metadata"
#define NOTES_REF "refs/notes/cinnabar"
#define METADATA_FLAGS "files-meta unified-manifests-v2"

struct metadata {
	struct object_id commit;	/* refs/cinnabar/metadata, or null */
	struct object_id changesets, manifests;
	struct notes_map hg2git, git2hg, files_meta;
	struct oid_array manifest_heads;
	int manifest_heads_dirty;
};

extern struct metadata metadata;

/* Load the metadata; dies with a hint when its format is unsupported. */
void metadata_load(void);
/*
 * The same from a metadata commit that refs/cinnabar/metadata does not
 * (yet) point to, e.g. to check it before it does (the null id: none).
 */
void metadata_load_commit(const struct object_id *commit);

/* Git id for an hg id, or NULL when unknown. */
const struct object_id *hg2git(const struct hg_oid *oid);
void set_hg2git(const struct hg_oid *oid, const struct object_id *git);

/*
 * The hg changeset of a git commit (of its replacement when it is
 * replaced, replace-map.h): 0, or -1 when it has none.
 */
int git2hg(const struct object_id *commit, struct hg_oid *node);
/*
 * The manifest the git2hg note of `commit` names (the null id when none):
 * 0, or -1 when it has no note, or one that is not a blob naming one.
 */
int git2hg_manifest(const struct object_id *commit, struct hg_oid *manifest);

/* Record a new manifest commit as a head (its parents stop being heads). */
void add_manifest_head(const struct object_id *commit,
		       const struct object_id *parents, int nr_parents);

/* Changeset branch heads. */
void add_changeset_head(const struct hg_oid *node,
			const struct hg_oid *parents, int nr_parents,
			const char *branch, size_t branch_len,
			const struct object_id *commit);
typedef void (*each_head_fn)(const struct hg_oid *node,
			     const struct object_id *commit,
			     const char *branch, void *data);
void for_each_changeset_head(each_head_fn fn, void *data);
/*
 * The heads (in the same order) that a changeset imported since the helper
 * started has for parent: changesets of another branch made them no
 * longer topological heads (an ancestor of another head) without ending
 * them as their branch's.
 */
void for_each_changeset_head_with_child(each_head_fn fn, void *data);

struct meter;

/*
 * Store the metadata commits; `result` receives the new metadata commit.
 * Return 0 when nothing changed (result is then the current commit).
 * `meter` (or NULL) counts the METADATA_PARTS parts stored.
 */
#define METADATA_PARTS 5
int metadata_store(struct object_id *result, struct meter *meter);
/*
 * Point refs/cinnabar/metadata (and refs/notes/cinnabar) at `commit`, in
 * two steps, each dying on failure: lock both refs and write their new
 * values (before `commit` is in git's object store), then make them the
 * refs' values, atomically.
 */
struct ref_transaction;
struct ref_transaction *metadata_prepare_ref(const struct object_id *commit);
void metadata_commit_ref(struct ref_transaction *t,
			 const struct object_id *commit);

#endif
