/*
 * Texts of large stored manifests, kept on disk beside the id maps'
 * caches: .git/cinnabar/manifests/<node>.
 *
 * Making a stored manifest's text from its trees reads every directory's
 * tree through its delta chain, much more than reading the text back
 * and checking it: twice in a fetch whose changegroup holds a snapshot
 * (its first delta base, the last manifest fetched before, and the
 * stored revision the snapshot comes against), once in a push (the
 * parent's text).
 *
 * Each file is one line, "<p1> <p2> <tree>" (hex), then the text. It is
 * used only when the text hashes to its node with those parents and the
 * manifest's stored commit has that tree: the text the import made from
 * the changegroup and checked, for the trees it made with it. A file
 * that does not pass is removed. Nothing needs invalidating: a node names
 * its text, and a rollback or another conversion changes the tree.
 *
 * Kept: the last manifest of each changegroup imported and the snapshots
 * (manifests sent against an older revision than the previous one: later
 * snapshots come against them). Between imports, texts of
 * MANIFEST_CACHE_MIN bytes or more (CINNABAR_TEST_MANIFEST_CACHE_MIN in
 * the environment for tests), the newest MANIFEST_CACHE_FILES. During an
 * import, snapshots and full texts of MANIFEST_CACHE_SNAPSHOT_MIN bytes
 * or more (or the test's bound, when lower), the
 * MANIFEST_CACHE_IMPORT_FILES written or read last: a
 * sparse revlog sends each snapshot against one of the few before it,
 * and a text made from its trees costs ~20 ms a megabyte where reading
 * it back and hashing it costs ~1 ms (a 250,000-changeset history whose
 * manifests grow to 1.4 MB sends 229 snapshots against another; the last
 * eight used hold the base of 227 of them).
 */
#ifndef CINNABAR_MANIFEST_CACHE_H
#define CINNABAR_MANIFEST_CACHE_H

#include "block-text.h"

struct hg_oid;
struct object_id;

#define MANIFEST_CACHE_MIN (1024 * 1024)
#define MANIFEST_CACHE_FILES 3
#define MANIFEST_CACHE_SNAPSHOT_MIN (64 * 1024)
#define MANIFEST_CACHE_IMPORT_FILES 8

/*
 * The text of the stored manifest `node`, whose commit has the tree
 * `tree`, into `blocks` when given, else into `flat`. 0 when read and
 * checked (the file then counts as used last); -1 (nothing added)
 * otherwise.
 */
int manifest_cache_read(const struct hg_oid *node,
			const struct object_id *tree, struct strbuf *flat,
			struct block_text *blocks);

/*
 * Keep `text`, the text of `node` (parents p1, p2), stored with `tree`:
 * the last manifest of an import, or a snapshot (or full text) during one
 * (`snapshot`).
 */
void manifest_cache_write(const struct hg_oid *node, const struct hg_oid *p1,
			  const struct hg_oid *p2,
			  const struct object_id *tree,
			  const struct block_text *text, int snapshot);

/* At the end of an import: what stays until the next (see above). */
void manifest_cache_trim(void);

#endif
