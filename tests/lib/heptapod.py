"""A Mercurial server with Heptapod's server-side rules, without a GitLab.

`make heptapod-venv` installs the `heptapod` package (Heptapod's hg
extension and hooks, with the Mercurial 7.1 and hg-evolve 11.1 it pins)
in build/heptapod-venv. Its `required.hgrc` enables them; its hooks
need, per request: `HEPTAPOD_SKIP_ALL_GITLAB_HOOKS=yes` (else the
`pretxnclose.heptapod_sync` hook calls GitLab's internal API and every
push fails with "heptapod.gitlab-internal-api-secret-file config parameter
is missing"), and `REMOTE_USER`, the user whose permissions the hooks
check (`web.allow-publish`; none: everything is allowed). Plain `hg
serve` cannot give them: its WSGI environ holds only the request's. So
the repository is served by Mercurial's own hgweb WSGI application under
the standard library's wsgiref server, whose environ starts from the
process's (`python -m lib.heptapod REPO`, run by the venv's Python).
"""

import os
import subprocess
import sys
from pathlib import Path

from .env import ROOT, SetupError
from .hg import Hg
from .proc import wait_then_kill_group

VENV = ROOT / 'build' / 'heptapod-venv'
PYTHON = VENV / 'bin' / 'python'
# Who pushes: a developer, not allowed to publish (as on Heptapod).
USER = 'developer'
ENVIRON = {'HEPTAPOD_SKIP_ALL_GITLAB_HOOKS': 'yes', 'REMOTE_USER': USER}


def available():
    return (VENV / '.version').exists()


def hg():
    """Heptapod's hg (its venv's), for commands on the server."""
    if not available():
        raise SetupError(f'no {VENV}: run `make heptapod-venv`')
    return HeptapodHg(VENV / 'bin' / 'hg')


class HeptapodHg(Hg):
    """hg on the server, as Heptapod runs it for its own operations: no
    GitLab hooks, no REMOTE_USER (allowed everything)."""

    def __call__(self, *args, **kwargs):
        kwargs['extra_env'] = {'HEPTAPOD_SKIP_ALL_GITLAB_HOOKS': 'yes',
                               **kwargs.get('extra_env', {})}
        return super().__call__(*args, **kwargs)


def hgrc(repo):
    """Heptapod's configuration of a project repository, for `repo`."""
    required = next(VENV.glob('lib/python*/site-packages/heptapod/'
                              'required.hgrc'))
    return (f'%include {required}\n'
            f'[heptapod]\nrepositories-root = {Path(repo).parent}\n'
            f'[logging]\nfile = {Path(repo).parent / "heptapod.log"}\n'
            '[web]\npush_ssl = no\nallow-push = *\n'
            'allow-publish = maintainer\n')


class HeptapodServer:
    """The hgweb WSGI application of `repo` on 127.0.0.1 (a free port),
    in its own process group, stopped by pid."""

    def __init__(self, repo):
        self.proc = subprocess.Popen(
            [str(PYTHON), '-m', 'lib.heptapod', str(repo)],
            cwd=ROOT / 'tests', stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, start_new_session=True,
            env={**os.environ, **ENVIRON})
        port = self.proc.stdout.readline().strip()
        if not port.isdigit():
            self.stop()
            raise SetupError('the Heptapod server did not start')
        self.url = f'http://127.0.0.1:{int(port)}/'

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        wait_then_kill_group(self.proc)


def _serve(repo):
    from mercurial import demandimport
    demandimport.enable()
    from wsgiref.simple_server import WSGIRequestHandler, make_server
    from mercurial.hgweb import hgweb

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = make_server('127.0.0.1', 0, hgweb(os.fsencode(repo)),
                         handler_class=Quiet)
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == '__main__':
    _serve(sys.argv[1])
