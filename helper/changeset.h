/*
 * Mercurial changesets and their git commits.
 *
 * A raw changeset is:
 *     <manifest id hex>\n
 *     <user>\n
 *     <timestamp> <utcoffset>[ <extra>]\n
 *     [<file>\n ...]
 *     \n
 *     <description>
 * where <extra> is `key:value` pairs (escaped) joined by NUL bytes, sorted.
 *
 * The git commit for a changeset (as git-cinnabar makes it) has the tree of
 * the changeset's files, the git commits of its parents, the user as author
 * and committer (or the "committer" extra as committer), and the
 * description as message. What the commit cannot hold is kept in a blob in
 * the git2hg notes, one `key value` per line, without a final newline:
 *     changeset <hg id>
 *     manifest <hg id>           (absent for the null manifest)
 *     author <hg user>           (when the user does not round-trip)
 *     extra <extra>              (extra, without a committer that
 *                                 round-trips; absent when empty)
 *     files <file>\0<file>...    (the changeset's file list)
 *     patch <start>,<end>,<data>\0...  (byte edits turning the changeset
 *                                 rebuilt from the above into the real one;
 *                                 data is percent-encoded; as git-cinnabar
 *                                 0.7 makes them: the hunks of git's line
 *                                 diff, each without its common ends)
 * Two changesets that would give the same commit get newlines appended to
 * the later one's message until the commit is unique (the note's patch
 * removes them); with cinnabar.compat=0.6, NUL bytes instead (git-cinnabar
 * 0.6's way, no patch: the NULs are dropped while the hash does not match).
 */
#ifndef CINNABAR_CHANGESET_H
#define CINNABAR_CHANGESET_H

#include "hg-id.h"
#include "slice.h"

struct hg_changeset {
	struct hg_oid manifest;
	struct slice user, timestamp, utcoffset, extra, files, body;
	int has_extra, has_files;
};

/* Parse a raw changeset; return -1 if it is malformed. */
int parse_changeset(struct hg_changeset *cs, const char *buf, size_t len);

/* The git commit for a changeset, without the NUL bytes of conflicts. */
void changeset_commit(struct strbuf *out, const struct hg_changeset *cs,
		      const struct object_id *tree,
		      const struct object_id *parents, int nr_parents);

/* The git2hg note for a changeset stored as `commit` (a raw commit). */
void changeset_note(struct strbuf *out, const struct hg_oid *node,
		    const struct hg_oid *p1, const struct hg_oid *p2,
		    const char *raw, size_t raw_len,
		    const char *commit, size_t commit_len);

/*
 * Rebuild the raw changeset from its commit and note. p1/p2 are the hg ids
 * of the commit's parents (for the conflict NULs). Return -1 if the note
 * is malformed.
 */
int changeset_from_commit(struct strbuf *out, const char *commit,
			  size_t commit_len, const char *note, size_t note_len,
			  const struct hg_oid *p1, const struct hg_oid *p2);

/* The value of the "branch" extra (not NUL-terminated), or NULL. */
const char *changeset_extra_branch(const struct hg_changeset *cs,
				   size_t *len);

/* Read "changeset <hex>" from the start of a note; -1 if malformed. */
int note_changeset_id(const char *note, size_t len, struct hg_oid *node);

/* The manifest a note names (the null id when none); -1 if malformed. */
int note_manifest_id(const char *note, size_t len, struct hg_oid *manifest);

#endif
