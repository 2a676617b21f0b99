"""The entry point of `git-remote-hg`: git runs it as `git-remote-hg
<remote> [<url>]` (gitremote-helpers(7)); it chooses the remote helper
for the URL (cinnabar.remote's RemoteHelper for Mercurial repositories,
cinnabar.tagsremote's for `hg::tags:`) and runs its command loop.

Its own module, so that neither of those two depends on the other.

A fetch with nothing new, which people run all day, mostly waits: for
Python to load its modules, for the helper to load its libraries (libcurl
and its thirty-odd), for the server. So the helper is started as soon as
the repository is locked, before the modules of the session
(cinnabar.remote and what it imports: the wire protocol, HTTP,
urllib.parse, re) are loaded: the helper is ready when the first request
is made. It also gives the session git's configuration (it reads it as it
starts), instead of a `git config` process. The modules imported here
load none of those.
"""

import sys

from cinnabar import git, repolock, tmpfiles
from cinnabar.errors import Abort, report_failure, run_guarded
from cinnabar import helper
from cinnabar.hg.url import strip_prefix, url_scheme
from cinnabar.resources import Resources


def _remote_name(name):
    """The configured remote's name, or None for an anonymous URL."""
    if name.startswith(('hg::', 'hg://')):
        return None
    return name


def _start_helper(resources, git_dir, url):
    """The helper, started without waiting for it, when the session will
    need one (cinnabar.helper.needed); else None."""
    if not helper.needed(git_dir, url_scheme(url)):
        return None
    return resources.enter_context(helper.Helper.spawn(git_dir))


def _end_without_answering(stdin, stdout):
    """After an error before the session answered git: git 2.47 and later
    say "remote helper 'hg' aborted session" when the helper ends before
    answering `capabilities`, a second fatal line after ours (older ones
    could die of SIGPIPE writing it).  So we answer it with no
    capability, and end when git sends its next command (`list`): every
    git, finding no answer to that, exits (128) without a word.  Not
    when a person runs us by hand."""
    if stdin.isatty():
        return
    try:
        if stdin.readline().rstrip(b'\n') != b'capabilities':
            return
        stdout.write(b'\n')
        stdout.flush()
        stdin.readline()
    except (BrokenPipeError, ConnectionResetError):
        pass


def session(argv):
    if len(argv) not in (2, 3):
        raise Abort('usage: git-remote-hg <remote> [<url>]',
                    hint='git-remote-hg is run by git for hg:: URLs')
    url = strip_prefix(argv[-1])
    remote = None
    try:
        with Resources() as resources:
            try:
                remote = _remote_helper(argv, url, resources)
            except Abort as error:
                failed = error
            else:
                remote.run()
                return 0
    except BrokenPipeError:
        raise   # nobody to tell (cinnabar.errors)
    except Exception as error:
        # Raised through the session's resources, which clean up after
        # a failure (cinnabar.tmpfiles): the helper, the lock are gone.
        failed = error
    status = report_failure(failed)
    if remote is None:
        _end_without_answering(sys.stdin.buffer, sys.stdout.buffer)
    else:
        from cinnabar.remote import stop_git
        stop_git(remote)
    return status


def _remote_helper(argv, url, resources):
    """The session's remote helper, the repository locked for it."""
    if url == 'tags:':
        # Its own import: a fetch from a Mercurial server needs none
        # of cinnabar.tags.
        from cinnabar.tagsremote import TagsRemoteHelper
        git.require_sha1(git.git_dir())
        helper_class, spawned = TagsRemoteHelper, None
    else:
        git_dir = git.git_dir()
        git.require_sha1(git_dir)
        resources.enter_context(repolock.held(git_dir))
        # The helper first: it is what the session waits for (its
        # libraries load for longer than git config runs).
        spawned = _start_helper(resources, git_dir, url)
        git.read_config_soon(spawned)
        # While they start (git's fast-import, whose tmp_pack files
        # these are, starts only once we answer git).
        resources.enter_context(tmpfiles.importer_packs(git_dir))
        if git_dir is not None:
            common_dir = git.common_dir(git_dir)
            tmpfiles.remove_stale_caches(common_dir)
        from cinnabar.remote import RemoteHelper
        helper_class = RemoteHelper
    return helper_class(_remote_name(argv[0]), url, sys.stdin.buffer,
                        sys.stdout.buffer, resources, spawned)


def main(argv=None):
    return run_guarded(session, sys.argv[1:] if argv is None else argv)
