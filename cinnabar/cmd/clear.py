"""Remove all the cinnabar metadata from this repository.

usage: git cinnabar clear

Deletes every ref under refs/cinnabar/ (the metadata, the fetch refs,
refs/cinnabar/checked and broken, and refs of older git-cinnabar
versions), refs/notes/cinnabar, and the fetch refs saved for rollback.
Your own branches and tags, and remote-tracking refs, are left alone;
the git objects stay until `git gc` finds nothing refers to them. The
next fetch from a Mercurial repository imports everything again (the
same commits for the same changesets).
"""

from cinnabar import git, metadata, snapshots
from cinnabar.errors import Abort

USAGE = 'usage: git cinnabar clear'
PREFIXES = ('refs/cinnabar/', 'refs/notes/cinnabar')


def run(args):
    if args:
        raise Abort('clear takes no argument', hint=USAGE)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    doomed = [name for name, _ in metadata.refs_under(*PREFIXES)
              if name.startswith('refs/cinnabar/')
              or name == 'refs/notes/cinnabar']
    metadata.update_refs({name: None for name in doomed})
    snapshots.forget_all(git_dir)
    print('removed %d cinnabar ref%s' % (len(doomed),
                                         '' if len(doomed) == 1 else 's'))
    return 0
