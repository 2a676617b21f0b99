"""Rebuild the metadata and the Mercurial history from the remotes.

usage: git cinnabar reclone [-v] [--rebase]

Imports again, into new metadata, all the heads of every remote whose URL
is hg::..., as a fresh clone would, and keeps your refs: a ref outside
refs/cinnabar/ on a commit made from a Mercurial changeset moves to the
new commit of the same changeset, and your own commits on top of such
commits are written again on the new ones (same tree, author, committer
and message) when the ids changed. When the ids did not change, nothing
moves. Use it after the metadata was damaged, or to get the commits a
newer conversion makes.

As with git-cinnabar, your local branches and tags (refs/heads/,
refs/tags/) move only with --rebase; without it, only the other refs
(remote-tracking refs, ...) do, and reclone says how to move the others.

As git-cinnabar, it prints `Fetching <remote>` for each remote and, when
local branches were left alone, how to move them, on standard output;
the refs it moved on standard error; `-v` (`--verbose`) adds a summary
(refs moved, commits written again, the new metadata) on standard error.

The new metadata is made visible and the refs are moved only at the
end; when anything fails before, the metadata and every ref are left as
they were.
"""

import sys

from cinnabar import git, metadata
from cinnabar.cmd.options import VERBOSE, say, split_options, usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.reclone import commits_changed, reclone

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = ('--rebase',) + VERBOSE


def run(args):
    given, words = split_options(args, OPTIONS, USAGE)
    if words:
        raise UsageError('unexpected argument %s' % words[0], hint=USAGE)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    rebase = '--rebase' in given
    result = reclone(git_dir, rebase)
    for commit in result.kept:
        sys.stderr.write('warning: no remote has the changeset of %s any '
                         'more; kept as it is\n' % commit)
    for ref, (old, new) in sorted(result.moved.items()):
        sys.stderr.write('%s: %s -> %s\n' % (ref, old, new))
    say(given, '%d refs moved, %d local commits written again; metadata %s'
        % (len(result.moved), result.rewritten, result.new_metadata))
    if result.old_metadata not in (None, result.new_metadata):
        say(given, 'the previous metadata was %s' % result.old_metadata)
    # The way back names the previous metadata: only when rollback can
    # go there (it was a metadata commit, not, say, a damaged ref).
    if commits_changed(result) and not rebase and \
            metadata.format_problem(result.old_metadata) is None:
        print('your local branches and tags were left as they were: '
              'they may be based on commits of the previous metadata; '
              'to move them too, run\n'
              '  git cinnabar rollback --force %s\n'
              '  git cinnabar reclone --rebase' % result.old_metadata)
    return 0
