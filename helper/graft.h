/*
 * Grafting: recording incoming changesets onto git commits that already
 * exist (a git mirror of the Mercurial repository) instead of making new
 * ones.
 *
 * The candidates are the commits given to `graft_add_candidate` (the
 * Python side lists them: see cinnabar/graft.py). A changeset is grafted
 * onto a candidate that has:
 *   - the tree the changeset's commit would have;
 *   - the changeset's parents' commits as parents, in order;
 *   - the changeset's date as author date (seconds since the epoch).
 * When several candidates qualify, those with the changeset's first
 * description line are kept, then, if still several, those with its
 * user as author, then those that need no `patch` in their note (git
 * would have made them the same); several left is an error. A candidate
 * is used once. What the commit does not hold exactly (message, user,
 * committer) goes into its git2hg note, whose rebuilt changeset must
 * give the changeset's id, or the candidate is not used.
 *
 * These rules are git-cinnabar 0.7's (src/graft.rs), but for parents:
 * git-cinnabar ignores them until it has grafted through a "replace";
 * we always require them.
 */
#ifndef CINNABAR_GRAFT_H
#define CINNABAR_GRAFT_H

#include "changeset.h"

struct strbuf;

/* Index commit `oid` as a candidate; -1 if it is not a readable commit. */
int graft_add_candidate(const struct object_id *oid);

/*
 * Find the candidate for changeset `node` (raw text `raw`, hg parents
 * p1/p2), whose commit would have `tree` and `parents`. On success,
 * return 1 with `commit_oid` set and `commit` holding the candidate's raw
 * commit; else return 0 (counted as not grafted). Dies when the choice
 * is ambiguous.
 */
int graft_find(const struct hg_oid *node, const struct hg_oid *p1,
	       const struct hg_oid *p2, const char *raw, size_t raw_len,
	       const struct object_id *tree, const struct object_id *parents,
	       int nr_parents, struct strbuf *commit,
	       struct object_id *commit_oid);

struct raw_commit;

/*
 * Whether the author date of commit `c` is the date of changeset `cs`
 * (seconds since the epoch), as a candidate must have it.
 */
int graft_same_date(const struct raw_commit *c, const struct hg_changeset *cs);

struct graft_stats {
	unsigned candidates, grafted, not_grafted;
};
void graft_get_stats(struct graft_stats *stats);

#endif
