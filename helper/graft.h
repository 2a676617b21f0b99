/*
 * Grafting: recording incoming changesets onto git commits that already
 * exist (a git mirror of the Mercurial repository) instead of making new
 * ones.
 *
 * The candidates are the commits given to `graft_add_candidate` (the
 * Python side lists them: see cinnabar/graft.py). A changeset may be
 * recorded onto a candidate that has:
 *   - the tree the changeset's commit would have;
 *   - the changeset's date as author date (seconds since the epoch);
 *   - once something was replaced (replace-map.h), the changeset's parents
 *     as the changesets of its parents, in any order, through the replace
 *     map (parents the metadata does not know are left out); before that,
 *     any parents.
 * When several candidates qualify, those with the changeset's first
 * description line are taken, and among several of those the ones with
 * its user as author: when that leaves one, it is the one. Then, when
 * several are left, those that need a `patch` in their note are kept
 * (commits the conversion would not make itself: a repository already
 * converted and a git mirror of it give two sets of candidates, and the
 * mirror's are wanted); none left is no graft, several an error.
 * A candidate is used once. What a commit recorded onto does not hold
 * exactly (message, user, committer) goes into its git2hg note, whose
 * rebuilt changeset must give the changeset's id, or the candidate is
 * not used.
 *
 * While nothing is replaced, the candidate chosen replaces instead of
 * being recorded onto when it needs a `patch`, when its number of parents
 * is not the changeset's, or when its parents are not the changeset's
 * parents' commits: the changeset gets a commit of its own and the
 * candidate is replaced by it (after which the rest of the mirror's
 * history is recorded onto through the replacement).
 *
 * These rules are git-cinnabar 0.7.5's (src/graft.rs, src/store.rs), but
 * for the last condition of a replace (git-cinnabar records onto a
 * candidate whose parents are other commits, a history its metadata then
 * cannot give back) and the round trip of the note.
 */
#ifndef CINNABAR_GRAFT_H
#define CINNABAR_GRAFT_H

#include "changeset.h"

struct strbuf;

/* Index commit `oid` as a candidate; -1 if it is not a readable commit. */
int graft_add_candidate(const struct object_id *oid);

enum graft_result {
	GRAFT_NONE,	/* no candidate: a commit of its own */
	GRAFT_ONTO,	/* recorded onto the candidate */
	GRAFT_REPLACE,	/* a commit of its own, replacing the candidate */
};

/*
 * Find the candidate for changeset `node` (raw text `raw`, hg parents
 * p1/p2), whose commit would have `tree` and `parents`. GRAFT_ONTO:
 * `commit_oid` is the candidate and `commit` holds its raw commit;
 * GRAFT_REPLACE: `commit_oid` is the candidate, `commit` is left alone
 * (the commit to make), and the caller calls set_replace once it has
 * made it. Dies when the choice is ambiguous.
 */
enum graft_result graft_find(const struct hg_oid *node, const struct hg_oid *p1,
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
	unsigned candidates, grafted, not_grafted, replaced;
};
void graft_get_stats(struct graft_stats *stats);

#endif
