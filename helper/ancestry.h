#ifndef CINNABAR_ANCESTRY_H
#define CINNABAR_ANCESTRY_H

struct object_id;

/*
 * Whether commit `ancestor` is `descendant` or one of its ancestors, as
 * `git merge-base --is-ancestor` says, asked in this process: the commits
 * one question parses stay parsed for the next, where a git process a
 * question walks the history from its packs each time (a push to a branch
 * with many heads asks one question a head).  1 or 0; -1 when a commit of
 * the walk is missing (a shallow clone: the history is walked whole, its
 * shallow file ignored, as the push's git commands do).
 */
int is_ancestor(const struct object_id *ancestor,
		const struct object_id *descendant);

/*
 * The history walks of this process ignore the repository's shallow file,
 * and keep no commit's text once parsed (a walk of the whole history would
 * hold all of it); called before any commit is parsed.
 */
void setup_history_walks(void);

#endif
