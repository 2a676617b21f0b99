"""Mercurial behind the servers people put in front of it (lib.frontends).

- hgwebdir with two repositories under gunicorn, over HTTPS with a test
  certificate authority given through `http.sslCAInfo`, every request
  behind HTTP Basic authentication, answered by `credential.helper store`
  with a file the test writes: a clone and a push work; a wrong password
  is reported as such, and nothing is cloned;
- OpenSSH's sshd with `hg-ssh` as the forced command, reached as
  `ssh://user@127.0.0.1:PORT/path` through `core.sshCommand` (no
  GIT_SSH_COMMAND): a clone and a push work; a path hg-ssh does not
  allow is refused with its message;
- tinyproxy through `http.proxy`: a clone goes through it.
"""

import getpass
import os
import shlex
import shutil
import socket

import pytest

from lib import frontends
from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import clone, git, hg2git, rev_parse
from lib.hg import Hg, free_port
from lib.push import Author, assert_pushed, git_commit, make_hg_repo
from lib.push import pushed_nodes
from lib.tls import make_authority_and_certificate

DEBIAN_HG = Hg('/usr/bin/hg')
AUTHOR = Author('Front Tester', 'front@example.com')
USER, PASSWORD = 'tester', 'sesame'
PUSH_TIP = 'HEAD:refs/heads/branches/default/tip'


def need(*programs):
    missing = [p for p in programs if not shutil.which(p)]
    if missing:
        pytest.fail(f'{", ".join(missing)} not installed: run '
                    '.ci/install-deps (make deps) as root')


def commit_and_push(work, url_ref='origin', date='1700000000 +0000',
                    **kwargs):
    (work / 'pushed').write_text(date + '\n')
    git('add', 'pushed', cwd=work)
    commit = git_commit(work, 'pushed through a front end', AUTHOR, date)
    assert_pushed(git('push', url_ref, PUSH_TIP, cwd=work, check=False,
                      **kwargs))
    return commit


def assert_landed(work, repo, commit):
    node = pushed_nodes(work, [commit])[commit]
    assert DEBIAN_HG.nodes(repo, 'tip') == [node]


@pytest.fixture(scope='module')
def repos(tmp_path_factory):
    root = tmp_path_factory.mktemp('frontend-repos')
    made = {name: make_hg_repo(DEBIAN_HG, root / name, {'file': name + '\n'})
            for name in ('one', 'two', 'ro')}
    # Read-only but for someone else: hgweb refuses the user's push.
    (made['ro'] / '.hg' / 'hgrc').write_text(
        '[web]\nallow-push = someone-else\n')
    return made


@pytest.fixture(scope='module')
def hgweb(repos, tmp_path_factory, request):
    need(frontends.GUNICORN)
    workdir = tmp_path_factory.mktemp('hgweb')
    ca, cert, key = make_authority_and_certificate(workdir / 'tls')
    server = frontends.HgwebGunicorn(workdir, repos, {USER: PASSWORD},
                                     cert, key)
    request.addfinalizer(server.stop)
    server.start(dict(os.environ))
    return server, ca


def credentials(tmp_path, server, password):
    store = tmp_path / 'credentials'
    store.write_text(f'https://{USER}:{password}@127.0.0.1:{server.port}\n')
    store.chmod(0o600)
    return ['-c', f'credential.helper=store --file={store}']


def test_hgweb_https_basic_auth(hgweb, repos, tmp_path):
    server, ca = hgweb
    work = tmp_path / 'work'
    config = ['-c', f'http.sslCAInfo={ca}',
              *credentials(tmp_path, server, PASSWORD)]
    result = git(*config, 'clone', f'hg::{server.url("two")}', work.name,
                 cwd=tmp_path)
    assert_no_traceback(result)
    node = DEBIAN_HG.nodes(repos['two'])[0]
    assert rev_parse(work, 'HEAD') == hg2git(work, [node])[node]
    for item in config[1::2]:
        git('config', *item.split('=', 1), cwd=work)
    commit = commit_and_push(work)
    assert_landed(work, repos['two'], commit)
    # The push went through the authentication, as the user.
    access = (server.workdir / 'access.log').read_text().splitlines()
    assert [line for line in access
            if 'cmd=unbundle' in line and f' {USER} ' in line], access


def test_hgweb_push_not_authorized(hgweb, repos, tmp_path):
    """The user's credentials are good, the repository read-only to
    them: hgweb's `401 push not authorized` (no challenge) is relayed,
    nothing is asked for, and the credential helper keeps the password
    (git's http.c would have rejected it for any 401)."""
    server, ca = hgweb
    work = tmp_path / 'work'
    config = ['-c', f'http.sslCAInfo={ca}',
              *credentials(tmp_path, server, PASSWORD)]
    assert_no_traceback(git(*config, 'clone', f'hg::{server.url("ro")}',
                            work.name, cwd=tmp_path))
    store = (tmp_path / 'credentials').read_text()
    assert f'{USER}:{PASSWORD}@' in store
    (work / 'pushed').write_text('x\n')
    git('add', 'pushed', cwd=work)
    git_commit(work, 'refused', AUTHOR, '1700000000 +0000')
    result = git(*config, 'push', 'origin', PUSH_TIP, cwd=work, check=False,
                 extra_env={'GIT_TERMINAL_PROMPT': '0'})
    assert_failed_for_people(result)
    assert 'refused the request: push not authorized (HTTP 401)' in \
        result.err, result.describe()
    assert 'Username' not in result.err and 'authentication failed' \
        not in result.err, result.describe()
    assert (tmp_path / 'credentials').read_text() == store
    assert len(DEBIAN_HG.nodes(repos['ro'])) == 1


def test_hgweb_wrong_password(hgweb, tmp_path):
    server, ca = hgweb
    result = git('-c', f'http.sslCAInfo={ca}',
                 *credentials(tmp_path, server, 'wrong'),
                 'clone', f'hg::{server.url("one")}', 'work',
                 cwd=tmp_path, check=False)
    assert_failed_for_people(result, 'authentication failed')
    assert not (tmp_path / 'work').exists()


def test_hgweb_untrusted_certificate(hgweb, tmp_path):
    server, _ = hgweb
    result = git(*credentials(tmp_path, server, PASSWORD), 'clone',
                 f'hg::{server.url("one")}', 'work', cwd=tmp_path,
                 check=False)
    assert_failed_for_people(result, ('certificate', 'SSL'))


@pytest.fixture(scope='module')
def sshd(repos, tmp_path_factory, request):
    need(frontends.SSHD, frontends.HG_SSH, 'ssh')
    server = frontends.Sshd(tmp_path_factory.mktemp('sshd'),
                            [repos['one']])
    request.addfinalizer(server.stop)
    return server.start()


def test_real_sshd_with_hg_ssh(sshd, repos, tmp_path, monkeypatch):
    monkeypatch.delenv('GIT_SSH_COMMAND')
    ssh_config = tmp_path / 'ssh_config'
    sshd.client_config(ssh_config, getpass.getuser())
    command = f'core.sshCommand=ssh -F {shlex.quote(str(ssh_config))}'
    url = f'hg::ssh://{getpass.getuser()}@127.0.0.1:{sshd.port}/' \
          f'{repos["one"]}'
    work = tmp_path / 'work'
    assert_no_traceback(git('-c', command, 'clone', url, work.name,
                            cwd=tmp_path))
    node = DEBIAN_HG.nodes(repos['one'])[0]
    assert rev_parse(work, 'HEAD') == hg2git(work, [node])[node]
    git('config', *command.split('=', 1), cwd=work)
    commit = commit_and_push(work)
    assert_landed(work, repos['one'], commit)
    # hg-ssh allows only the repositories it was given.
    refused = git('-c', command, 'clone', url.replace('/one', '/two'),
                  'refused', cwd=tmp_path, check=False)
    assert_failed_for_people(refused)
    assert 'Illegal repository' in refused.err, refused.describe()


def test_clone_through_tinyproxy(hg_serve, repos, tmp_path):
    need(frontends.TINYPROXY)
    server = hg_serve(repos['one'])
    proxy = frontends.Tinyproxy(tmp_path / 'proxy').start()
    try:
        work = tmp_path / 'work'
        result = clone(f'hg::{server.url}', work,
                       '--no-checkout', '-c',
                       f'http.proxy=http://127.0.0.1:{proxy.port}')
        assert_no_traceback(result)
        assert f'GET http://127.0.0.1:{server.port}/?cmd=getbundle' in \
            proxy.requests(), proxy.requests()
    finally:
        proxy.stop()


def test_a_taken_port_is_left_for_another(tmp_path, monkeypatch):
    """sshd and tinyproxy are given a port that was free a moment ago:
    when another process took it meanwhile, the daemon starts again on
    another one (here tinyproxy, its first port taken on purpose)."""
    need(frontends.TINYPROXY)
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        ports = [taken.getsockname()[1]]
        monkeypatch.setattr(frontends, 'free_port',
                            lambda: ports.pop() if ports else free_port())
        proxy = frontends.Tinyproxy(tmp_path / 'proxy').start()
        try:
            assert not ports
            assert proxy.port != taken.getsockname()[1]
            assert proxy.proc.poll() is None, proxy.log()
        finally:
            proxy.stop()
