"""Mercurial's command server for the tests' own hg commands, through chg.

Each `hg` a test runs as an oracle or to set a repository up costs a
Python start and Mercurial's imports: over thousands of them, a large
part of the suite's time.  chg (Mercurial's `contrib/chg`, a
small C client; Debian's `mercurial` package installs it) hands the
command, its arguments, environment, working directory and standard
streams to a command server (`hg serve --cmdserver chgunix`) of the hg
under test, which forks and runs it there: same hg, same code, without
the start.  `CHGHG` names that hg; `CHGSOCKNAME` the server's socket.

A server serves the commands whose sensitive settings (extensions, aliases,
HGRCPATH, PATH, HGPLAIN...) are its own; for others, chg starts another
server beside it (`<socket>-<hash>`, in the same directory), which it then
reuses.  `ChgServers` starts the first one and, at the end, stops them all
by pid, found by the address each was given, in the session's own
directory.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .proc import wait_then_kill_group

START_TIMEOUT = 60
STOP_TIMEOUT = 10


class ChgServers:
    """The command servers of one test session for `hg_exe`, reached by
    running `chg` with `env()` added to the environment."""

    def __init__(self, chg_exe, hg_exe, hg_env=None):
        self.chg = str(chg_exe)
        self.hg = str(hg_exe)
        # What a wrapper `hg_exe` sets of chg's sensitive variables, for
        # the client to say the same (else chg takes the server for
        # another hg's, and gives up).
        self.hg_env = dict(hg_env or {})
        # Short: a Unix socket's path has at most 107 bytes.
        self.dir = Path(tempfile.mkdtemp(prefix='chg-', dir='/tmp'))
        self.socket = self.dir / 'server'
        self.proc = None

    def env(self):
        return {**self.hg_env, 'CHGHG': self.hg,
                'CHGSOCKNAME': str(self.socket)}

    def start(self):
        """The first server, with the session's environment."""
        self.proc = subprocess.Popen(
            [self.hg, 'serve', '--no-profile', '--cmdserver', 'chgunix',
             '--address', str(self.socket)],
            cwd='/', env={**os.environ, **self.env()},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while not self.socket.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f'{self.hg}: no chg command server')
            time.sleep(0.02)
        return self

    def pids(self):
        """Pids of this session's servers, the first one's and those chg
        started: their command lines name an address in its directory
        (the processes they fork for each command, which have the same
        command line, are left out)."""
        mark = f'--address\0{self.dir}/'.encode()
        found = {int(entry.name): entry for entry in Path('/proc').iterdir()
                 if entry.name.isdigit() and mark in _cmdline(entry)}
        return [pid for pid, entry in found.items()
                if _parent(entry) not in found]

    def stop(self):
        """SIGTERM to each server, by pid; SIGKILL to those still there
        after STOP_TIMEOUT."""
        pids = self.pids()
        _signal(pids, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline and any(map(running, pids)):
            time.sleep(0.05)
        _signal([pid for pid in pids if running(pid)], signal.SIGKILL)
        if self.proc is not None:
            wait_then_kill_group(self.proc)
            self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)


def _cmdline(entry):
    try:
        return (entry / 'cmdline').read_bytes()
    except OSError:
        return b''


def _parent(entry):
    try:
        stat = (entry / 'stat').read_text()
    except OSError:
        return None
    return int(stat.rsplit(')', 1)[1].split()[1])


def running(pid):
    """Whether `pid` exists and is not a zombie."""
    try:
        stat = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return False
    return stat.rsplit(')', 1)[1].split()[0] != 'Z'


def _signal(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
