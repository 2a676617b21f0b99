"""The entry point of `git-remote-hg`: git runs it as `git-remote-hg
<remote> [<url>]` (gitremote-helpers(7)); it chooses the remote helper
for the URL (cinnabar.remote's RemoteHelper for Mercurial repositories,
cinnabar.tagsremote's for `hg::tags:`) and runs its command loop.

Its own module, so that neither of those two depends on the other.
"""

import contextlib
import sys

from cinnabar import git, repolock
from cinnabar.errors import Abort, run_guarded
from cinnabar.hg.url import strip_prefix
from cinnabar.remote import RemoteHelper


def _remote_name(name):
    """The configured remote's name, or None for an anonymous URL."""
    if name.startswith(('hg::', 'hg://')):
        return None
    return name


def session(argv):
    if len(argv) not in (2, 3):
        raise Abort('usage: git-remote-hg <remote> [<url>]',
                    hint='git-remote-hg is run by git for hg:: URLs')
    url = strip_prefix(argv[-1])
    helper_class = RemoteHelper
    if url == 'tags:':
        # Its own import: a fetch from a Mercurial server needs none of
        # cinnabar.tags.
        from cinnabar.tagsremote import TagsRemoteHelper
        helper_class = TagsRemoteHelper
    with contextlib.ExitStack() as resources:
        if helper_class is RemoteHelper:
            resources.enter_context(repolock.held(git.git_dir()))
        remote = helper_class(_remote_name(argv[0]), url,
                              sys.stdin.buffer, sys.stdout.buffer, resources)
        remote.run()
    return 0


def main(argv=None):
    return run_guarded(session, sys.argv[1:] if argv is None else argv)
