"""Starting a child process with pipes, cheaply: `Process`.

A fetch with nothing new, which people run all day, starts two
processes (the helper and `git config`) while it is itself starting:
importing `subprocess` and what it imports (signal, threading,
selectors, locale, re, enum...) would be a large part of its start
(doc/performance.md, "A fetch with nothing new"). `Process` is the
little of `subprocess.Popen` those two need, on `os.posix_spawnp` (one
vfork and exec) and `os.pipe`, using only modules Python has loaded when
it starts.
Where `os.posix_spawnp` is missing, `subprocess` does the work.

Like `subprocess.Popen`: the program is looked up on PATH (unless it has
a slash), a program that cannot be run raises OSError from the
constructor, the child's SIGPIPE and SIGXFSZ are back to their default
action (see DEFAULT_SIGNALS). Unlike it: file descriptors we inherited
as inheritable (none, from git) are not closed in the child; the ones
Python opens are never inheritable (PEP 446).
"""

import os
import time

try:
    # The constants only: `signal` itself imports enum.
    import _signal as signals
except ImportError:  # pragma: no cover (another Python implementation)
    import signal as signals

# The signals Python ignores, which subprocess gives back their default
# action in the child (restore_signals): an ignored signal stays ignored
# across exec.
DEFAULT_SIGNALS = tuple(getattr(signals, name) for name in ('SIGPIPE',
                                                            'SIGXFSZ')
                        if hasattr(signals, name))

PIPE = -1
DEVNULL = -3
# How often `wait` with a timeout looks at the child.
POLL_SECONDS = 0.01


class TimeoutExpired(Exception):
    """`Process.wait` timed out."""


class Process:
    """A running child `args` (a list; `env`: the environment, default
    ours). `stdin` and `stdout` are PIPE (then file objects, buffered, to
    write and to read) or None (ours); `stderr` is None (ours) or
    DEVNULL."""

    def __init__(self, args, env=None, stdin=PIPE, stdout=PIPE,
                 stderr=None):
        self.args = args
        self.returncode = None
        self.stdin = self.stdout = None
        self._popen_object = None
        if not hasattr(os, 'posix_spawnp'):
            self._popen(args, env, stdin, stdout, stderr)
            return
        actions, ours, theirs = [], [], []
        try:
            if stdin == PIPE:
                read, write = os.pipe()
                theirs.append(read)
                ours.append(write)
                actions.append((os.POSIX_SPAWN_DUP2, read, 0))
            if stdout == PIPE:
                read, write = os.pipe()
                theirs.append(write)
                ours.append(read)
                actions.append((os.POSIX_SPAWN_DUP2, write, 1))
            if stderr == DEVNULL:
                actions.append((os.POSIX_SPAWN_OPEN, 2, os.devnull,
                                os.O_WRONLY, 0))
            self.pid = os.posix_spawnp(
                args[0], args, os.environ if env is None else env,
                file_actions=actions, setsigdef=DEFAULT_SIGNALS)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        ours.reverse()
        if stdin == PIPE:
            self.stdin = open(ours.pop(), 'wb')
        if stdout == PIPE:
            self.stdout = open(ours.pop(), 'rb')

    def _popen(self, args, env, stdin, stdout, stderr):
        import subprocess
        codes = {PIPE: subprocess.PIPE, DEVNULL: subprocess.DEVNULL,
                 None: None}
        popen = subprocess.Popen(args, env=env, stdin=codes[stdin],
                                 stdout=codes[stdout], stderr=codes[stderr])
        self._popen_object = popen
        self.pid = popen.pid
        self.stdin, self.stdout = popen.stdin, popen.stdout

    def _reap(self, options):
        """The exit status if the child is done (waiting for it unless
        `options` is WNOHANG), else None."""
        if self.returncode is None:
            if self._popen_object is not None:
                self.returncode = self._popen_object.wait() if not options \
                    else self._popen_object.poll()
                return self.returncode
            pid, status = os.waitpid(self.pid, options)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self):
        """The exit status (negative: the signal that killed it), or None
        while it runs."""
        return self._reap(os.WNOHANG)

    def wait(self, timeout=None):
        """Wait for the child to exit; its exit status. With `timeout`
        (seconds), raises TimeoutExpired when it is not done by then."""
        if timeout is None:
            return self._reap(0)
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() >= deadline:
                raise TimeoutExpired('%s did not exit within %s seconds'
                                     % (self.args[0], timeout))
            time.sleep(POLL_SECONDS)
        return self.returncode

    def read_all(self):
        """All the child's standard output, once it exited (its standard
        input, if a pipe, is closed first)."""
        if self.stdin is not None:
            self.stdin.close()
        with self.stdout:
            data = self.stdout.read()
        self.wait()
        return data
