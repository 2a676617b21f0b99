/*
 * Manifest ids checked as the changegroup arrives.
 *
 * A changegroup sends the manifests before the files they list, and
 * storing a manifest with its git tree needs the files' blobs, so the
 * import keeps the manifests aside until the files are in (import.c).
 * Their ids need nothing but their texts: checking them as they arrive
 * lets the hashing (most of the CPU of cloning a large-manifest history)
 * run while the server is still sending the files and the helper is
 * importing them, instead of after.
 *
 * The texts are rebuilt from the deltas. A delta against the previous
 * revision or the empty text is always followed, one against an older
 * revision (Mercurial's snapshots) when that revision is among the last
 * few such ones, which are kept, and one against a revision of the
 * repository from its git tree. Otherwise that revision, and those after
 * it on the same chain, are left to the import, which checks the ids of
 * the revisions it is not told were checked here.
 */
#ifndef CINNABAR_MANIFEST_PRECHECK_H
#define CINNABAR_MANIFEST_PRECHECK_H

#include "changegroup.h"

/* Start (or not, when manifest checks are off) for a new changegroup. */
void manifest_precheck_start(void);
/* Check the `index`th manifest of the changegroup (in order) if we can. */
void manifest_precheck(const struct rev_chunk *chunk, size_t index);
/* Drop the texts kept; what was checked is remembered. */
void manifest_precheck_stop(void);
/* Whether the `index`th manifest's id was (or is being) checked. */
int manifest_prechecked(size_t index);
/* Forget everything. */
void manifest_precheck_reset(void);

#endif
