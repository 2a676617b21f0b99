"""Remove changesets and their descendants from the metadata (experiment).

usage: git cinnabar strip [-v] <commit or hg id>...

The `strip` experiment of git-cinnabar (`git config cinnabar.experiments
strip`): forgets the Mercurial changesets of the given commits (git
commits, or Mercurial ids, full or abbreviated) and of every descendant
the metadata knows, as if they had never been fetched; the branch heads
are what is left. The git commits and your refs stay; a later fetch of
those changesets imports them again, as the same commits. The previous
metadata stays in the chain: `git cinnabar rollback` undoes a strip.

    -v, --verbose   say what was forgotten, on standard error

Refused, changing nothing: without the experiment, with metadata fsck
marked broken, or for a name that is no commit of a changeset.
"""

from cinnabar import config, git, metadata
from cinnabar.cmd.options import (
    VERBOSE, changeset_commit, say, split_options, usage_of)
from cinnabar.errors import Abort
from cinnabar.helper import Helper
from cinnabar.strip import Stripper

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = VERBOSE


def resolve(helper, names):
    """The changeset commits the names stand for."""
    commits = []
    with git.CommitResolver() as resolver:
        for name in names:
            commit = changeset_commit(helper, resolver, name)
            if commit is None:
                raise Abort('bad revision %r' % name,
                            hint='give a git commit or a Mercurial id')
            if helper.git2hg(commit).is_null:
                raise Abort('%s is not the commit of a Mercurial changeset'
                            % name, hint=USAGE)
            commits.append(commit)
    return commits


def run(args):
    given, names = split_options(args, OPTIONS, USAGE)
    if not config.experiment('strip'):
        raise Abort('git cinnabar strip is an experiment',
                    hint='enable it with `git config cinnabar.experiments '
                         'strip` (with the others you use, comma-separated)')
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    if not names:
        return 0
    metadata.check_usable()
    current = metadata.read_ref(metadata.METADATA_REF)
    if current is None:
        raise Abort('there is no cinnabar metadata')
    with Helper.start(git_dir) as helper:
        commits = resolve(helper, names)
        new, count = Stripper(helper, current).strip(commits)
    git2hg = metadata.read_commit(new).parents[
        metadata.PARTS.index('git2hg')]
    metadata.update_refs({metadata.METADATA_REF: new,
                          metadata.NOTES_REF: git2hg})
    say(given, 'stripped %d changeset%s; metadata %s'
        % (count, '' if count == 1 else 's', new))
    return 0
