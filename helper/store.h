/*
 * The object store: git's fast-import, compiled from the pinned git tree
 * (builtin/fast-import.c, unmodified, included by store.c), driven through
 * its internal functions instead of its command language.
 *
 * Objects go to one pack being written; they can be read back before the
 * pack is finished. Nothing is visible to other git processes until
 * store_finish(); store_abort() (and dying) throws the pack away.
 */
#ifndef CINNABAR_STORE_H
#define CINNABAR_STORE_H

#include "object.h"

void store_init(void);
/* Cap git's caches of objects read; call after reading the config. */
void store_limit_memory(void);
/*
 * Between store_read_scattered(1) and (0), objects are read from all
 * over the packs (a push's checks, fsck): more of them stay mapped.
 */
void store_read_scattered(int on);
/* The same, and every object is read, some more than once (fsck). */
void store_read_all(int on);

/* Store an object; `result` receives its id. */
void store_object_buf(enum object_type type, const char *buf, size_t len,
		      struct object_id *result);
/* The same for an object whose id `id` the caller computed (object_id_of). */
void store_object_with_id(enum object_type type, const char *buf, size_t len,
			  const struct object_id *id);
/*
 * Store a tree that names `named` (one of its entries, NULL for none
 * known): when that is an object the pack being written holds first, the
 * tree cannot be in an older pack, and is not looked for there (store.c,
 * names_new_object). A commit, stored as above, names its tree or its
 * first parent.
 */
void store_tree_naming(const char *buf, size_t len,
		       const struct object_id *named, struct object_id *result);
/*
 * Store a blob whose id `id` the caller computed (blob-ids.h), as a delta
 * against `base` when it is an object of the pack being written
 * (base_data/base_len being its content).
 */
void store_blob_with_base(const char *buf, size_t len,
			  const struct object_id *id,
			  const struct object_id *base, const char *base_data,
			  size_t base_len);

/*
 * Store blob `id` of `len` bytes given as a git delta against `base`, a
 * blob of the pack being written. Return -1 (nothing stored) when the
 * base does not qualify; the caller then stores the blob another way.
 */
int store_blob_from_delta(size_t len, const struct object_id *id,
			  const struct object_id *base, const char *delta,
			  size_t delta_len);

/*
 * Blobs too large to hold, as streams (store.c, "Blobs too large to
 * hold"). store_blob_stream stores the `size` bytes `content` gives next
 * as a blob, whole; store_hash_blob_stream only hashes them, into the
 * blob's id. When store_can_delta_against(base) says that `base` is an
 * object of the pack being written that can be a delta base (at `depth`
 * in its delta chain),
 * store_blob_delta_with_id, called next, stores blob `oid` (known to be
 * what git delta `delta` makes of `base`) as that delta.
 */
struct stream;
void store_blob_stream(struct stream *content, uint64_t size,
		       struct object_id *result);
void store_hash_blob_stream(struct stream *content, uint64_t size,
			    struct object_id *result);
int store_can_delta_against(const struct object_id *base, unsigned *depth);
void store_blob_delta_with_id(const struct object_id *oid,
			      const struct object_id *base, const char *delta,
			      size_t delta_len);
/* A blob's size, without reading it. Dies if `oid` is no blob. */
uint64_t store_blob_size(const struct object_id *oid);
/*
 * A stream of a blob's content (read from the pack as it is read where
 * it can be, else whole), its size into `size`.
 */
void store_open_blob(const struct object_id *oid, struct stream *s,
		     uint64_t *size);

/* Read an object written in this session or present in the repository. */
void *store_read_object(const struct object_id *oid, enum object_type *type,
			unsigned long *size);
/* Same, dying unless the object exists and has the expected type. */
void *store_read_object_typed(const struct object_id *oid,
			      enum object_type type, unsigned long *size);

/*
 * Trees being edited path by path with fast-import's tree functions, and
 * stored with deltas against their previous version: the tree of the
 * manifest being imported (layout in metadata.h) and the matching git
 * tree of real blobs.
 */
enum edit_tree { EDIT_MANIFEST, EDIT_GIT };
void edit_tree_load(enum edit_tree which, const struct object_id *tree);
void edit_tree_set(enum edit_tree which, const char *path,
		   const struct object_id *oid, unsigned mode);
void edit_tree_remove(enum edit_tree which, const char *path);
/*
 * Whether setting a file at `path` would clash with the tree: a leading
 * part of `path` is a file, or `path` is a directory.
 */
int edit_tree_conflict(enum edit_tree which, const char *path);
/*
 * Write the edited tree into the pack, its id into `result`. What is not
 * edited may be let go of from memory on the way (read back when edited
 * again): store.c, "The edited trees in memory".
 */
void edit_tree_store(enum edit_tree which, struct object_id *result);
/*
 * The same in parts, for a caller that edits a tree directory after
 * directory and is done with each in turn: start (where the pack may be
 * checkpointed: no other object may be stored until the end, which would
 * change where), write_dir for each directory done with ("a/b", a path
 * of the tree), then end. The objects are those edit_tree_store() would
 * write, in the same order, when each directory is written after those
 * under it and after the directories before it in the order the tree
 * first had them (a whole manifest's lines, sorted, added to an empty
 * tree); the directory's contents are let go of.
 */
void edit_tree_write_start(enum edit_tree which);
void edit_tree_write_dir(enum edit_tree which, const char *path);
void edit_tree_write_end(enum edit_tree which, struct object_id *result);

/* Finish the pack and make its objects visible (kept with a .keep file). */
void store_finish(void);
/* Remove the .keep files of the packs written, once refs point to them. */
void store_unkeep(void);
/* Throw away the pack being written. Safe to call from a die handler. */
void store_abort(void);

#endif
