/*
 * Importing changegroups: every revision's full text is rebuilt from its
 * delta, its hg id checked, and it is stored as git objects with its
 * mapping recorded in the metadata (manifests, then files, then the
 * changesets, whose commits need both).
 */
#ifndef CINNABAR_IMPORT_H
#define CINNABAR_IMPORT_H

#include "metadata.h"

struct bundle;
struct hg_oid;
struct object_id;
struct strbuf;

struct import_stats {
	unsigned changesets, manifests, files;
};

void import_bundle(struct bundle *b, struct import_stats *stats);

/*
 * Give the heap's free pages back to the system (glibc returns only the
 * top of the heap by itself): between the phases of an import, and
 * before the metadata is written.
 */
void release_free_memory(void);

/*
 * The id of the commit an import stores for changeset `node`, from
 * `commit`, the commit changeset_commit makes of it: its own id, or,
 * while that id is another changeset's commit (git2hg), the id after
 * `filler` is appended to the message, as often as needed (`commit` is
 * left as that commit). `filler` is what cinnabar.compat says: a
 * newline, or a NUL byte for 0.6.
 */
void changeset_commit_id(struct strbuf *commit, const struct hg_oid *node,
			 char filler, struct object_id *result);

/* The raw text of a stored changeset; dies if it is unknown. */
void changeset_text(const struct hg_oid *node, struct strbuf *out);

/*
 * The branch heads of the bundle's changesets (`bundle-heads`), in bundle
 * order: `fn` is called for each, with its commit when it has one.
 */
void list_bundle_heads(struct bundle *b, each_head_fn fn, void *data);

/*
 * Die with SIGKILL (or the signal CINNABAR_TEST_DIE_SIGNAL numbers) when
 * CINNABAR_TEST_DIE_AT names `phase` (tests).
 */
void test_die_at(const char *phase);

#endif
