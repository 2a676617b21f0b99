/*
 * The parents of a stored file revision. The metadata does not keep them
 * (git-cinnabar's format has no place for them), yet a file revision's id
 * is the SHA-1 of its sorted parents and its text: so they are found by
 * hashing the text with candidate pairs, which checks the text against
 * the id on the way. What a push sends, or uses as a delta base, must be
 * what the server has under that id.
 */
#ifndef CINNABAR_FILE_PARENTS_H
#define CINNABAR_FILE_PARENTS_H

#include "hg-id.h"

/*
 * The parents Mercurial can have given revision `node` of a path whose
 * revisions in the parent manifests of the changeset that made it are
 * `a` and `b` (null when absent): tried in turn; 0 with *p1 and *p2 set
 * when a pair and `text` give `node`, else -1.
 */
int file_parents_among(const struct hg_oid *node, const struct strbuf *text,
		       const struct hg_oid *a, const struct hg_oid *b,
		       struct hg_oid *p1, struct hg_oid *p2);

/*
 * The same for revision `node` of `path` found in the stored manifest
 * `start`: the manifest that introduced it is searched back from `start`,
 * along first parents that still have `node` at `path` (then a merge's
 * second parent that has it), and its parents give the candidates. The
 * search reads each manifest commit on the way (once per start: kept
 * for the next search) but the trees of only a few, 1, 2, 4... back
 * then bisected: a push checking many paths from one parent manifest
 * does not read every manifest of their history; when `where` is NULL,
 * the revision of `path` in the first manifest probed without `node` is
 * tried as its parent first, which most often spares the bisection. It
 * looks at most `max_steps` manifests back (0: no limit). Return 0 with
 * *p1 and *p2 set; -1 when `start` does not have `node` at `path`, or
 * no manifest introducing it is found within `max_steps`; -2 when one
 * is and no pair of candidates gives `node` with `text` (the text, or
 * the history, is not what the id says). Unless
 * `where` is NULL, where[0] and where[1] get the manifests of the parents
 * of the manifest that introduced `node` (null when it has fewer
 * parents): where the revisions *p1 and *p2 were found.
 */
int file_parents_and_manifests(const char *path, const struct hg_oid *node,
			       const struct strbuf *text,
			       const struct hg_oid *start, size_t max_steps,
			       struct hg_oid *p1, struct hg_oid *p2,
			       struct hg_oid where[2]);

/*
 * Drop the manifest trees the searches above keep (each is read once
 * while kept, up to a bound): a push calls it once its checks are done.
 */
void file_parents_forget(void);

#endif
