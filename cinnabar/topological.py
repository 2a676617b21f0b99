"""The topological heads of the metadata: its changeset heads that are not
an ancestor of another one (Mercurial reads the tags of those).

Without a commit-graph, telling them apart walks the history down to the
heads' merge bases (`git merge-base --independent`: 70 ms on nginx's
10,000 changesets, growing with the history), and a fetch needs them
before and after its import. So:

- they are kept, for the set of head commits they were computed for, in
  `<common git dir>/cinnabar/topological-heads`: a line `<git id> 1`
  (topological) or `<git id> 0` (not) for each head. Commits cannot
  change, so the file holds for any metadata with those heads; another set
  of heads, or a file that does not read as written, is computed again;
- after an import, the helper says which heads a changeset it imported has
  for parent (`heads-with-children`, helper/PROTOCOL.md): together with
  the topological heads before the import, that is all it takes
  (`after_import`).
"""

import os

from cinnabar import git

CACHE_NAME = 'topological-heads'
CACHE = os.path.join('cinnabar', CACHE_NAME)
# What it may leave in `<common git dir>/cinnabar/` (a write cut short
# leaves the second).
CACHE_FILES = (CACHE_NAME, CACHE_NAME + '.tmp')


def compute(commits):
    """The commits (GitIds, in their order) that are not ancestors of
    another of them."""
    if len(commits) < 2:
        return list(commits)
    out = git.run(['merge-base', '--independent'] + list(commits)).stdout
    independent = set(out.decode('ascii').split())
    return [c for c in commits if c in independent]


def _cache_path(git_dir):
    return os.path.join(git.common_dir(git_dir), CACHE)


def read_cache(git_dir, commits):
    """The topological ones of `commits` (in their order) as the cache
    has them, or None when it has no answer for exactly these commits."""
    try:
        with open(_cache_path(git_dir), 'rb') as f:
            lines = f.read().decode('ascii').splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    flags = {}
    for line in lines:
        commit, _, flag = line.partition(' ')
        if (len(commit) != 40 or flag not in ('0', '1')
                or commit in flags
                or commit.strip('0123456789abcdef')):
            return None
        flags[commit] = flag == '1'
    if set(flags) != set(commits):
        return None
    return [c for c in commits if flags[c]]


def write_cache(git_dir, commits, topological):
    """Keep `topological`, the topological ones of `commits`; a cache that
    cannot be written is only a cache: nothing is said."""
    kept = set(topological)
    text = ''.join('%s %d\n' % (c, c in kept) for c in sorted(set(commits)))
    path = _cache_path(git_dir)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + '.tmp', 'w', encoding='ascii') as f:
            f.write(text)
        os.replace(path + '.tmp', path)
    except OSError:
        pass


def of(commits, git_dir=None):
    """compute(commits), from the cache of `git_dir` when it has them
    (and into it when it did not)."""
    if git_dir is None or len(commits) < 2:
        return compute(commits)
    found = read_cache(git_dir, commits)
    if found is None:
        found = compute(commits)
        write_cache(git_dir, commits, found)
    return found


def after_import(before, before_topological, heads, with_children):
    """The topological ones of the metadata's `heads` after an import that
    only added changesets, from `before` and `before_topological`, the
    heads and topological heads before it, and `with_children`, the heads
    a changeset imported since has for parent (all GitIds).

    The metadata's heads are its branch heads, which reach every
    changeset: the topological ones are those without a child. A head
    without one before has one now only if an imported changeset has it for
    parent, and a new head too; a head with one keeps it."""
    old = set(before)
    kept = set(before_topological)
    children = set(with_children)
    return [c for c in heads
            if c not in children and (c in kept or c not in old)]
