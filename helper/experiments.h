/*
 * git-cinnabar's experiments: the setting `experiments`, from the
 * environment variable GIT_CINNABAR_EXPERIMENTS, else the git
 * configuration cinnabar.experiments. Its value is a comma-separated list
 * of words, as git-cinnabar 0.7 reads it:
 *     merge            (merges are always pushed here: accepted, no effect)
 *     git_commit       pushed changesets get a `git_commit:<commit id>`
 *                      extra
 *     branch, tag      handled by the Python side
 *     similarity=<n>   renames and copies by similarity when pushing, as
 *                      cinnabar.similarity=<n> (which wins when both are
 *                      set), 0 <= n <= 100
 * Unknown words are ignored (git-cinnabar ignores them too).
 */
#ifndef CINNABAR_EXPERIMENTS_H
#define CINNABAR_EXPERIMENTS_H

/* Whether the experiment `name` (a plain word) is enabled. */
int experiment(const char *name);

/*
 * The similarity percentage of the copies pushes record (push-convert.c):
 * cinnabar.similarity, else the similarity=<n> experiment, else 100 (an
 * invalid value warns and counts as unset). 0 is git's default score
 * (50%), as git-cinnabar 0.7's `-C0%` gives.
 */
int push_similarity(void);

#endif
