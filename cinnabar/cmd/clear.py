"""Remove all the cinnabar metadata from this repository.

usage: git cinnabar clear [-v]

Deletes every ref under refs/cinnabar/ (the metadata, the fetch refs,
refs/cinnabar/checked and broken, and refs of older git-cinnabar
versions), refs/notes/cinnabar, the fetch refs saved for rollback, and
the caches of the id maps and of manifest texts under .git/cinnabar/.
Your own branches and tags, and remote-tracking refs, are left alone;
the git objects stay until `git gc` finds nothing refers to them. The
next fetch from a Mercurial repository imports everything again (the
same commits for the same changesets). As with git-cinnabar, nothing is
printed; `-v` (`--verbose`) says how many refs were removed, on standard error.
"""

import os

from cinnabar import git, metadata, snapshots, topological
from cinnabar.cmd.options import VERBOSE, say, split_options, usage_of
from cinnabar.errors import Abort, UsageError

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = VERBOSE
PREFIXES = ('refs/cinnabar/', 'refs/notes/cinnabar')


def forget_id_caches(git_dir):
    """Remove the caches of metadata that is no more (the id maps'
    `.git/cinnabar/<map>.idx`, the manifest texts of
    `.git/cinnabar/manifests/`: doc/architecture.md, and the topological
    heads of `.git/cinnabar/topological-heads`), then the directory when
    nothing else is in it."""
    directory = os.path.join(git.common_dir(git_dir), 'cinnabar')
    if not os.path.isdir(directory):
        return
    texts = os.path.join(directory, 'manifests')
    if os.path.isdir(texts):
        for name in os.listdir(texts):
            os.unlink(os.path.join(texts, name))
        os.rmdir(texts)
    for name in os.listdir(directory):
        if name.endswith('.idx') or name in topological.CACHE_FILES:
            os.unlink(os.path.join(directory, name))
    try:
        os.rmdir(directory)
    except OSError:
        pass


def run(args):
    given, words = split_options(args, OPTIONS, USAGE)
    if words:
        raise UsageError('clear takes no argument', hint=USAGE)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    doomed = [name for name, _ in metadata.refs_under(*PREFIXES)
              if name.startswith('refs/cinnabar/')
              or name == 'refs/notes/cinnabar']
    metadata.update_refs({name: None for name in doomed})
    snapshots.forget_all(git_dir)
    forget_id_caches(git_dir)
    say(given, 'removed %d cinnabar ref%s'
        % (len(doomed), '' if len(doomed) == 1 else 's'))
    return 0
