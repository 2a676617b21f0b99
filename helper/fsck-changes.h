/*
 * What Mercurial's commit records of a change, checked by `fsck` (see
 * fsck.h): a changeset's files list and the parents of the file revisions
 * its manifest introduces must be what Mercurial makes of the same change
 * (its manifest against its parents' manifests). A changeset made
 * otherwise (a faulty push, another tool) keeps ids that hash right, so
 * the id checks cannot see it; Mercurial itself stores it without
 * complaint, and `hg verify` passes. Such a difference is reported as
 * "unlike-hg" rather than as a problem: the metadata is a faithful copy
 * of the server's history, which a rollback or a reclone cannot change.
 *
 * Mercurial's rules (mercurial/commit.py, `hg help internals.changelog`),
 * for a changeset with manifest M and parent manifests M1, M2:
 *   - files list: every path whose line (revision or flag) differs from
 *     M1's, and every path of M1 that M lacks. For one parent (or none:
 *     M1 empty), exactly those. A merge lists the paths whose revision is
 *     new (in neither parent), those both parents have and M lacks, those
 *     with M1's revision and another flag, and those whose line is M2's
 *     only when M1 has them with another flag (commit keeps M2's revision
 *     then, and compares flags with M1's); never a path whose line is
 *     M1's (unless M2 has it with another flag: commit's shortcut for
 *     reused revisions compares flags with both parents) nor one none of
 *     the three has. Whether it lists a path with M2's revision and
 *     another flag depends on which of commit's two ways it took, and
 *     whether it lists a path only one parent has and M lacks on the
 *     merge ancestor (the "removal filter", which needs the changelog's
 *     common ancestors): either is accepted.
 *   - parents of a new file revision at path f, with a = M1[f] and
 *     b = M2[f] (null when absent): without copy metadata, (a, null) for
 *     one parent; for a merge (a, b), or (a, null) / (b, null) when one is
 *     an ancestor of the other or the merge state picked a side (the
 *     filelog's ancestry and the merge state are not in the metadata, so
 *     any of the three is accepted), never (null, null) when a or b is
 *     not null, never (a, a). With copy metadata ("copy", "copyrev"):
 *     (null, null) for one parent; for a merge, one of a, b or null with
 *     null (never both a and b).
 *   - a copy is recorded from another path (commit drops a copy source
 *     equal to the path itself).
 * Parents are compared as a set: a revision id hashes them sorted, so
 * their order (swapped by some Mercurial versions, issue6528) cannot be
 * seen nor matters.
 */
#ifndef CINNABAR_FSCK_CHANGES_H
#define CINNABAR_FSCK_CHANGES_H

#include "hg-id.h"
#include "changeset.h"

/*
 * Compare the files list `files` (the changeset's, "\n"-separated) with
 * the change from manifest trees `parents[0..nparents)` (NULL for the
 * null manifest) to manifest tree `tree` (NULL: the null manifest). When
 * they differ, return 1 with a message for people in `out` (what is
 * listed and should not be, what is missing); else return 0.
 */
int files_list_unlike_hg(struct strbuf *out, struct slice files,
			 const struct object_id *tree,
			 const struct object_id *const *parents,
			 size_t nparents);

/*
 * Whether Mercurial's commit could give a new file revision the parents
 * {p1, p2}, the path's revisions in the parent manifests being a and b;
 * `merge`: its manifest has two parents; `copy`: it has copy metadata.
 */
int file_parents_like_hg(int merge, int copy, const struct hg_oid *a,
			 const struct hg_oid *b, const struct hg_oid *p1,
			 const struct hg_oid *p2);

/*
 * The copy source in files-meta text (the "key: value" lines between the
 * "\1\n" markers), with its length in `src_len`; NULL when it has none.
 */
const char *file_meta_copy(const char *meta, size_t len, size_t *src_len);

#endif
