/*
 * Checking the metadata against the git objects (`git cinnabar fsck`).
 *
 * Every hg id is computed again from what the metadata keeps:
 *   - a changeset's from its git commit, its git2hg note and the hg ids of
 *     its parent commits; the changeset must name a known manifest, and
 *     the commit's tree must be the git tree that manifest gives;
 *   - a manifest's from its manifest tree and its parent manifest commits;
 *   - a file revision's from its blob and files-meta entry, with parents
 *     found among the revisions of the same path in the parent manifests
 *     (the metadata does not keep file parents), for every file revision a
 *     manifest has that neither of its parents has.
 * The full check also goes through every hg2git entry and every git2hg
 * note (each must map back to the other) and files-meta entry (each must
 * be of a file revision hg2git maps to a blob), and recomputes the
 * changeset and manifest heads. Each changeset's commit must be the one
 * an import makes of its text (changeset_commit_id, import.h), but in a
 * repository that grafted (FSCK_GRAFTED). Each problem found is one line for people naming the
 * hg id and the git object concerned.
 *
 * Each changeset checked is also compared with what Mercurial's commit
 * makes of the same change (fsck-changes.h): its files list, and the
 * parents and copy metadata of the file revisions its manifest
 * introduces. A difference is an "unlike-hg" line, not a problem.
 */
#ifndef CINNABAR_FSCK_H
#define CINNABAR_FSCK_H

#include "oid-array.h"

struct fsck_counts {
	unsigned changesets, manifests, files, problems;
};

/*
 * With this flag among the `checks`, a changeset's commit need not be the
 * one an import makes of it: a repository that grafted changesets onto
 * existing commits (cinnabar.graft, graft.h) keeps those.
 */
#define FSCK_GRAFTED 0x100

/*
 * Check everything (commits == NULL) or only the given changeset commits
 * with their manifests and the file revisions those introduce. Problems
 * are written to `out` as "problem <message>" lines, differences from
 * what Mercurial records as "unlike-hg <message>" lines. `checks` (CHECK_*
 * flags, check-setting.h) says which ids are computed again: without
 * CHECK_NODEID, changeset ids are not, without CHECK_FILES, file ids are
 * not; manifest ids always are (the git tree each changeset's commit
 * must have comes out of the same walk). `grafts` (or NULL): commits that
 * may stand for a changeset without being what an import makes of it, as
 * a fetch grafts (graft.h): with the changeset's date as author date, and
 * their changeset's id computed again whatever `checks` says (FSCK_GRAFTED
 * allows any commit, unchecked).
 *
 * A replace map (replace-map.h) makes our own metadata FSCK_GRAFTED, but
 * not metadata received (`grafts` given): there each replacement must be
 * the commit an import makes of its changeset (even when listed), and
 * each replaced commit one of `grafts`, with its replacement's tree and
 * author date.
 */
void fsck_metadata(const struct oid_array *commits, unsigned checks,
		   struct oid_array *grafts, FILE *out,
		   struct fsck_counts *counts);

#endif
