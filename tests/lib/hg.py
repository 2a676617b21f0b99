"""Mercurial repositories and `hg serve`, driven through the real `hg`."""

import contextlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from .proc import kill_group, run, wait_for, wait_then_kill_group

SERVE_READY_TIMEOUT = 60
# What `hg serve` prints once it listens (Mercurial 6.3 and 7.2 alike).
BOUND = re.compile(r'\(bound to 127\.0\.0\.1:(\d+)\)')


class Hg:
    """The hg executable under test; its commands run through `chg`
    (lib.chg's ChgServers of that hg) when given one."""

    def __init__(self, exe, chg_servers=None):
        self.exe = exe
        self.chg_servers = chg_servers

    def __call__(self, *args, extra_env=None, **kwargs):
        servers = self.chg_servers
        if servers is None:
            return run([self.exe, *args], extra_env=extra_env, **kwargs)
        return run([servers.chg, *args],
                   extra_env={**servers.env(), **(extra_env or {})},
                   **kwargs)

    def version(self):
        """The first line of `hg version`."""
        return self('version').out.splitlines()[0].strip()

    def repo_from_bundle(self, bundle, dest):
        """`hg init` + `hg unbundle`: a repository holding `bundle`."""
        self('init', dest)
        self('-R', dest, 'unbundle', '-q', bundle, timeout=900)
        return Path(dest)

    def nodes(self, repo, revset='all()'):
        """Changeset ids of `revset`, in revision order."""
        out = self('-R', repo, 'log', '-r', revset, '-T', '{node}\n').out
        return out.split()

    def heads(self, repo):
        """Open branch heads as (node, branch) pairs, highest rev first."""
        out = self('-R', repo, 'heads', '-T', '{node} {branch}\n').out
        return [tuple(line.split(' ', 1)) for line in out.splitlines()]

    def bookmarks(self, repo):
        """{bookmark name: changeset id}."""
        out = self('-R', repo, 'bookmarks', '-T',
                   '{bookmark} {node}\n').out
        pairs = (line.rsplit(' ', 1) for line in out.splitlines())
        return {name: node for name, node in pairs}


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (someone else
    may take it since: servers here bind port 0 instead, and a port
    nothing answers on is `closed_port`)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def closed_port():
    """A port on 127.0.0.1 where connections are refused: bound by us and
    not listening, for as long as the context lasts (so no other server,
    such as the other CI run's, can take it meanwhile)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        yield sock.getsockname()[1]


def http_get(url, timeout=10):
    """GET `url` without any proxy; return (status, body)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class ServeError(Exception):
    pass


class HgServer:
    """`hg serve` of one repository on 127.0.0.1.

    The server binds port 0 (the system picks a free port) and the port is
    read from the line hg prints once it listens ("listening at ... (bound
    to 127.0.0.1:PORT)"), so a test never reaches another process's server.
    It runs in the foreground as the leader of its own process group;
    `stop` kills that group.  Pushes are allowed over plain HTTP, unless
    `config` ({'section.name': value}) says otherwise.
    """

    def __init__(self, hg, repo, logdir, attempts=1, config=None):
        self.hg = hg
        self.config = {'web.push_ssl': 'False', 'web.allow_push': '*',
                       **(config or {})}
        self.repo = Path(repo)
        self.logdir = Path(logdir)
        self.attempts = attempts  # kept for callers; one start suffices
        self.proc = None
        self.port = None

    @property
    def url(self):
        return f'http://127.0.0.1:{self.port}/'

    def start(self):
        self.logdir.mkdir(parents=True, exist_ok=True)
        # A log of its own: the port is read from it.
        with tempfile.NamedTemporaryFile(dir=self.logdir, prefix='hg-serve-',
                                         suffix='.log', delete=False) as log:
            self.logfile = Path(log.name)
            self.proc = subprocess.Popen(
                [self.hg.exe, 'serve', '-R', str(self.repo),
                 '-a', '127.0.0.1', '-p', '0',
                 '--accesslog', str(self.logdir / 'access.log'),
                 *(arg for name, value in self.config.items()
                   for arg in ('--config', f'{name}={value}'))],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        self.port = self._bound_port()
        if self.port is None:
            self.stop()
            raise ServeError(f'hg serve did not start:\n{self.log()}')
        return self

    def _bound_port(self):
        """The port hg says it bound, once it listens; None if it exits
        or says nothing within SERVE_READY_TIMEOUT."""
        found = wait_for(lambda: BOUND.search(self.log()), self.proc,
                         SERVE_READY_TIMEOUT, interval=0.02)
        return int(found.group(1)) if found else None

    def log(self):
        try:
            return self.logfile.read_text(errors='replace')
        except OSError:
            return ''

    def stop(self):
        if self.proc is None:
            return
        kill_group(self.proc.pid, signal.SIGTERM)
        wait_then_kill_group(self.proc)
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class RepoCache:
    """Pristine repositories made from corpus bundles, made once each.

    `get` returns a repository nobody may write to; `copy` makes a
    writable clone of it.
    """

    def __init__(self, hg, corpus, workdir):
        self.hg = hg
        self.corpus = corpus
        self.workdir = Path(workdir)
        self.repos = {}

    def get(self, name):
        if name not in self.repos:
            dest = self.workdir / name
            if dest.exists():
                shutil.rmtree(dest)
            self.hg.repo_from_bundle(self.corpus.bundle(name), dest)
            self.repos[name] = dest
        return self.repos[name]

    def copy(self, name, dest, rev=None):
        """A writable clone of the repository of `name` (up to `rev`)."""
        args = ['clone', '-U', '-q']
        if rev is not None:
            args += ['-r', str(rev)]
        self.hg(*args, self.get(name), dest, timeout=900)
        return Path(dest)
