"""One git-cinnabar process at a time updates a repository's metadata.

A fetch or a push reads `refs/cinnabar/metadata` when its helper starts
and moves it when it is done; two at once in one repository would each
build on the same metadata, and the second to finish would fail on git's
ref lock (`cannot lock ref 'refs/cinnabar/metadata': is at ... but
expected ...`), leaving the user a raw git message. So each process that
may update the metadata (git-remote-hg, and the `git cinnabar` commands
that write) first holds an exclusive lock on the file `cinnabar.lock` in
the repository's common git directory (shared by its worktrees).

The lock is an advisory `flock(2)`, which the system drops when the
process ends however it ends (even by SIGKILL): a lock is never left
behind. The file holds the process id of its last holder, to name it.
A process that finds the lock held waits for it, saying so once, for
the setting `lock-timeout` (seconds; default 600, as Mercurial waits for
its own repository lock; GIT_CINNABAR_LOCK_TIMEOUT or
`cinnabar.lock-timeout`), then gives up with one line saying another
process is updating the repository and to retry.

Child processes (a `git fetch` run by `git cinnabar fetch`, and the
git-remote-hg it runs) are told through GIT_CINNABAR_LOCKED that their
ancestor holds the lock, and do not wait for it.

git's own lock files of the metadata refs (`refs/cinnabar/metadata.lock`,
`refs/notes/cinnabar.lock`: the helper's ref transaction makes them while
it moves the metadata) are made only by a git-cinnabar process holding
this lock; one found once we hold it is what a killed process left, and
would make every later update fail ("Unable to create ...: File
exists"): it is removed (cinnabar.tmpfiles.remove_stale_ref_locks).
"""

import fcntl
import os
import sys
import time

from cinnabar import config, git, tmpfiles
from cinnabar.errors import Abort

LOCK_NAME = 'cinnabar.lock'
HELD_ENV = 'GIT_CINNABAR_LOCKED'
DEFAULT_TIMEOUT = 600
POLL_SECONDS = 0.1


def _lock_path(git_dir):
    """The lock file, in the common git directory (git.common_dir)."""
    return os.path.join(git.common_dir(git_dir), LOCK_NAME)


def _timeout():
    value = config.lookup('lock-timeout')
    if value is None:
        return DEFAULT_TIMEOUT
    try:
        return max(0.0, float(value))
    except ValueError:
        raise Abort('lock-timeout must be a number of seconds, not %r'
                    % value, hint='see `git config cinnabar.lock-timeout`')


def _holder(handle):
    """The process id the lock file names, or '?'."""
    handle.seek(0)
    text = handle.read().strip()
    return text if text.isdigit() else '?'


def _try_lock(handle):
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _acquire(handle, path):
    """Hold the lock on `handle`, waiting up to the timeout."""
    if _try_lock(handle):
        return
    timeout = _timeout()
    sys.stderr.write('waiting for another git-cinnabar process (pid %s) '
                     'to finish updating this repository\n' % _holder(handle))
    sys.stderr.flush()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        if _try_lock(handle):
            return
    raise Abort('another git-cinnabar process (pid %s) is updating this '
                'repository (%s is locked); retry when it is done'
                % (_holder(handle), path))


def held(git_dir):
    """Hold the repository's lock for the `with` block (nothing to do
    outside a repository, or when an ancestor process holds it)."""
    return _Lock(git_dir)


def _locked_file(path):
    """The lock file `path`, open, locked and naming this process."""
    try:
        handle = open(path, 'a+')
    except OSError as error:
        raise Abort('cannot open the lock file %s: %s'
                    % (path, error.strerror))
    try:
        _acquire(handle, path)
        handle.seek(0)
        handle.truncate()
        handle.write('%d\n' % os.getpid())
        handle.flush()
    except BaseException:
        handle.close()
        raise
    return handle


class _Lock:
    """What `held` returns: a class, not a contextlib generator, as
    importing contextlib (with collections and functools, which it
    imports) would be a large part of a fetch with nothing new
    (doc/performance.md, "A fetch with nothing new")."""

    def __init__(self, git_dir):
        self._git_dir = git_dir
        self._handle = None

    def __enter__(self):
        if self._git_dir is None or os.environ.get(HELD_ENV):
            return self
        path = _lock_path(self._git_dir)
        self._handle = _locked_file(path)
        os.environ[HELD_ENV] = path
        tmpfiles.remove_stale_ref_locks(git.common_dir(self._git_dir))
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if self._handle is None:
            return
        del os.environ[HELD_ENV]
        self._handle.close()
        self._handle = None
