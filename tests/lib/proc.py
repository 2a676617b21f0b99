"""Run programs in their own process group.

A test that hangs must not take the whole run with it, and a program that
is killed must not leave its children behind: every program runs as the
leader of a new process group, and a timeout kills the whole group.
"""

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

DEFAULT_TIMEOUT = 300


class Result:
    """What a finished program did."""

    def __init__(self, args, returncode, stdout, stderr):
        self.args = args
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    @property
    def out(self):
        return self.stdout.decode('utf-8', 'replace')

    @property
    def err(self):
        return self.stderr.decode('utf-8', 'replace')

    def describe(self):
        return (f'$ {" ".join(map(str, self.args))}\n'
                f'exit code {self.returncode}\n'
                f'--- stdout\n{self.out[-4000:]}\n'
                f'--- stderr\n{self.err[-4000:]}')


class CommandFailed(AssertionError):
    def __init__(self, result):
        super().__init__(result.describe())
        self.result = result


def kill_group(pgid, sig=signal.SIGKILL):
    """Send `sig` to the process group `pgid` if it still has members."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def wait_then_kill_group(proc, timeout=10):
    """Wait up to `timeout` seconds for `proc` (a group leader asked to
    end) to exit, SIGKILL its group if it has not, and then anything it
    left behind in its group."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait()
    kill_group(proc.pid, signal.SIGKILL)


def wait_for(ready, proc, timeout, interval=0.05):
    """Call `ready()` every `interval` seconds until it returns something
    true, and return that; None once `proc` (the Popen of a server
    starting up) has exited, or after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = ready()
        if found:
            return found
        if proc.poll() is not None:
            return None
        time.sleep(interval)
    return None


def run(args, *, cwd=None, input=None, extra_env=None, env=None,
        timeout=DEFAULT_TIMEOUT, check=True):
    """Run `args` to completion and return a `Result`.

    `env` replaces the environment (default: os.environ); `extra_env` is
    added on top.  With `check`, a non-zero exit raises `CommandFailed`.
    """
    full_env = dict(os.environ if env is None else env)
    full_env.update(extra_env or {})
    proc = subprocess.Popen(
        [str(a) for a in args], cwd=cwd, env=full_env,
        stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True)
    try:
        stdout, stderr = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        stdout, stderr = proc.communicate()
        result = Result(args, proc.returncode, stdout, stderr)
        raise AssertionError(f'timed out after {timeout}s\n'
                             + result.describe())
    finally:
        # Whatever the program left running in its group goes too.
        kill_group(proc.pid)
    result = Result(args, proc.returncode, stdout, stderr)
    if check and result.returncode != 0:
        raise CommandFailed(result)
    return result


def in_terminal(args, cwd=None, extra_env=None, timeout=60, idle=None):
    """Run `args` with stdout and stderr on a pseudo-terminal, in its own
    process group (as a shell runs a command), as a person sees it: (its
    Popen, [(seconds since the start, line)] of what was drawn until the
    last process holding the terminal was gone, a line being what ends
    with `\\r` or `\\n`). `idle(seconds since the start)` is called
    whenever nothing was drawn for 5 ms, until it returns False."""
    main, side = pty.openpty()
    start = time.monotonic()
    env = dict(os.environ, **(extra_env or {}))
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=side, stderr=side, start_new_session=True)
    os.close(side)
    lines, pending = [], b''
    while True:
        if idle and not select.select([main], [], [], 0.005)[0]:
            idle = idle(time.monotonic() - start) and idle
            continue
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the last writer is gone
            break
        if not data:
            break
        now = time.monotonic() - start
        parts = re.split(rb'(?<=[\r\n])', pending + data)
        pending = parts.pop()
        lines += [(now, p.decode().rstrip('\r\n').rstrip()) for p in parts
                  if p.strip()]
    os.close(main)
    proc.wait(timeout=timeout)
    return proc, lines


def run_in_terminal(args, cwd=None, timeout=60, idle=None):
    """`in_terminal`, for a command that must succeed: what it drew."""
    proc, lines = in_terminal(args, cwd=cwd, timeout=timeout, idle=idle)
    assert proc.returncode == 0, lines[-5:]
    return lines


# Runs argv[2:] with files limited to argv[1] bytes (0: no limit) and
# prints the largest resident size any of its descendants reached (kB) on
# standard error's last line. Descendants left behind by a process that
# did not wait for them (git dies without waiting for its remote helper)
# come to it (PR_SET_CHILD_SUBREAPER) and are waited for too.
_MEASURED = ('import ctypes, os, resource, subprocess, sys\n'
             'ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)\n'
             'limit = int(sys.argv[1])\n'
             'if limit:\n'
             '    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))\n'
             'code = subprocess.run(sys.argv[2:]).returncode\n'
             'try:\n'
             '    while True:\n'
             '        os.wait()\n'
             'except ChildProcessError:\n'
             '    pass\n'
             'rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n'
             'print("max rss", rss, file=sys.stderr)\n'
             'sys.exit(code)\n')


def run_measured(args, file_limit=0, **kwargs):
    """Run `args` as `run` does (check=False); returns (the Result, the
    largest resident size of its processes in kB). With `file_limit`, a
    process writing a file past that many bytes is killed (SIGXFSZ)."""
    result = run([sys.executable, '-c', _MEASURED, str(file_limit), *args],
                 check=False, **kwargs)
    last = result.err.strip().splitlines()[-1]
    assert last.startswith('max rss '), result.describe()
    result.stderr = result.stderr[:result.stderr.rindex(b'max rss ')]
    return result, int(last.split()[-1])
