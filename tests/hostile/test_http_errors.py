"""What people read when a clone, fetch or push fails for a reason outside
the data: one `fatal:` line saying what failed, naming the repository as
given (never the wire command's query, `?cmd=capabilities`), then a
`hint:` line where there is something to do, as git says them.

- A server whose certificate an authority the client does not trust
  signed (a real TLS server, lib.tls's test authority): the verification
  failed, against which CA file; the hint names http.sslCAInfo /
  GIT_SSL_CAINFO and http.sslVerify; trusting the authority as the hint
  says gets past it.
- https:// to a port speaking plain HTTP (hg serve): the TLS handshake
  failed, hint: use http://.
- A refused port; a host name that cannot resolve (`.invalid`, RFC 6761).
- A push hg serve refuses with its reason (`web.push_ssl=true` over plain
  HTTP: `403 ssl required`; `web.allow_push` naming someone else or
  `web.deny_push=*`: `401 push not authorized`, without a challenge, so
  no credentials are asked for): git's rejection line gives that reason,
  not "access denied" or "authentication failed".
- `git cinnabar fetch <name>` where <name> is neither a remote nor a
  repository; `hg::` in front of a git repository, local (work tree or
  bare) or behind git's smart HTTP (`git http-backend`, lib.githttp):
  drop it.
Nothing is left behind: no clone directory, no ref, no changeset.
"""

from pathlib import Path

import pytest

from lib.checks import assert_failed_for_people
from lib.git import clone, git, hg_url, refs
from lib.githttp import GitHttpServer
from lib.hg import closed_port
from lib.push import Author, git_commit, make_hg_repo, nothing_changes, push
from lib.push import rejection_lines
from lib.tls import make_authority_and_certificate

AUTHOR = Author('Pusher', 'pusher@example.com')
TLS_HINT = 'hint: if the server speaks plain HTTP on that port, use an ' \
    'http:// URL'
CERTIFICATE_HINT = (
    "hint: if you trust the authority that signed the server's "
    'certificate, name its certificate with http.sslCAInfo or '
    'GIT_SSL_CAINFO (http.sslVerify=false turns the check off, unsafely)')


def said(result):
    """The fatal: and hint: lines."""
    return [line for line in result.err.splitlines()
            if line.startswith(('fatal: ', 'hint: '))]


def clone_fails(url, tmp_path, *options):
    """`git clone hg::<url>` fails, leaving nothing; its fatal:/hint:
    lines, which never show a wire command's query."""
    result = clone(hg_url(url), tmp_path / 'work', *options, check=False)
    assert_failed_for_people(result)
    assert not (tmp_path / 'work').exists()
    assert '?cmd=' not in result.err, result.describe()
    return said(result)


@pytest.fixture(scope='module')
def authorities(tmp_path_factory):
    """(the server's authority, its certificate, key; another authority)."""
    root = tmp_path_factory.mktemp('authorities')
    ca, cert, key = make_authority_and_certificate(root / 'server')
    other, _, _ = make_authority_and_certificate(root / 'other')
    return ca, cert, key, other


def test_untrusted_certificate(authorities, bundle_server, tmp_path):
    ca, cert, key, other = authorities
    root = tmp_path / 'root'
    root.mkdir()
    url = bundle_server(root, tls=(cert, key)).url('repo')
    lines = clone_fails(url, tmp_path, '-c', f'http.sslCAInfo={other}')
    assert len(lines) == 2, lines
    assert lines[0].startswith(
        f'fatal: cannot reach {url}: server certificate verification '
        f'failed: unable to get local issuer certificate (CA file: '
        f'{other}'), lines
    assert lines[1] == CERTIFICATE_HINT
    # As the hint says: trusting the authority gets past the check (to
    # the file server's 404).
    lines = clone_fails(url, tmp_path, '-c', f'http.sslCAInfo={ca}')
    assert lines == [f'fatal: repository not found at {url}'], lines


def test_tls_to_plain_http(hg, hg_serve, tmp_path):
    server = hg_serve(make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'}))
    url = f'https://127.0.0.1:{server.port}/'
    lines = clone_fails(url, tmp_path)
    assert len(lines) == 2, lines
    assert lines[0].startswith(
        f'fatal: cannot reach {url}: the TLS handshake with 127.0.0.1 port '
        f'{server.port} failed ('), lines
    assert lines[1] == TLS_HINT


def test_refused_port(tmp_path):
    with closed_port() as port:
        url = f'http://127.0.0.1:{port}/repo'
        assert clone_fails(url, tmp_path) == [
            f'fatal: cannot reach {url}: cannot connect to 127.0.0.1 port '
            f'{port} (connection refused)']


def test_unknown_host(tmp_path):
    url = 'https://nosuchhost.invalid/repo'
    assert clone_fails(url, tmp_path) == [
        f"fatal: cannot reach {url}: could not resolve the host name "
        f"'nosuchhost.invalid'"]


@pytest.mark.parametrize('config, reason', [
    ({'web.push_ssl': 'True'}, 'ssl required (HTTP 403)'),
    ({'web.allow_push': 'someone-else'}, 'push not authorized (HTTP 401)'),
    ({'web.deny_push': '*'}, 'push not authorized (HTTP 401)'),
], ids=['ssl', 'allow-push', 'deny-push'])
def test_push_refused_with_the_servers_reason(hg, hg_serve, tmp_path,
                                              config, reason):
    """hgweb's 401 carries no challenge (WWW-Authenticate): no credential
    would do, and none is asked for (without a terminal, git's prompt
    fails with `could not read Username`)."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    server = hg_serve(repo, config=config)
    work = tmp_path / 'work'
    clone(hg_url(server.url), work, '-q')
    (work / 'b').write_text('b\n')
    git('add', 'b', cwd=work)
    git_commit(work, 'b', AUTHOR, '1000000000 +0000')
    before = refs(work)
    with nothing_changes(hg, repo, work):
        result = push(work, 'origin', 'HEAD:refs/heads/branches/default/tip',
                      extra_env={'GIT_TERMINAL_PROMPT': '0'})
    assert_failed_for_people(result)
    assert rejection_lines(result) == [
        f' ! [remote rejected] HEAD -> branches/default/tip ({server.url} '
        f'refused the request: {reason})'], result.describe()
    assert 'Username' not in result.err
    assert refs(work) == before


def test_fetch_from_neither_remote_nor_repository(hg, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    work = tmp_path / 'work'
    clone(hg_url(repo), work, '-q')
    before = refs(work)
    result = git('cinnabar', 'fetch', 'nosuchremote', '0' * 12, cwd=work,
                 check=False)
    assert_failed_for_people(result)
    assert said(result) == [
        'fatal: nosuchremote is neither a git remote nor a Mercurial '
        'repository',
        'hint: give the name of a remote with an hg:: URL, or a Mercurial '
        'URL or path']
    assert refs(work) == before


@pytest.mark.parametrize('kind', ['work tree', 'bare'])
def test_hg_prefix_on_a_git_repository(kind, tmp_path):
    source = tmp_path / 'source'
    git('init', '-q', *(['--bare'] if kind == 'bare' else []), source.name,
        cwd=tmp_path)
    assert clone_fails(str(source), tmp_path) == [
        f'fatal: {source} is a git repository, not a Mercurial one',
        'hint: drop `hg::` from the URL: git reads git repositories itself']
    assert Path(source).is_dir()


def test_hg_prefix_on_git_smart_http(tmp_path, request):
    root = tmp_path / 'served'
    root.mkdir()
    git('init', '-q', '--bare', 'repo.git', cwd=root)
    server = GitHttpServer(root)
    request.addfinalizer(server.stop)
    url = server.start().url('repo.git')
    assert clone_fails(url, tmp_path) == [
        f'fatal: {url} is a git repository, not a Mercurial one',
        'hint: drop `hg::` from the URL: git reads git repositories itself']
    # One question to the server beyond what a Mercurial clone asks.
    assert [path for _, path, _ in server.requests()] == [
        '/repo.git?cmd=capabilities',
        '/repo.git/info/refs?service=git-upload-pack']
