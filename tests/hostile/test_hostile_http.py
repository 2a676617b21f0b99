"""Hostile HTTP servers (lib.hostile_http, two origins on 127.0.0.1 in front of
a real `hg serve`): credentials never reach another origin than the one
they were given for (redirects, clone bundles and cinnabarclone metadata
hosted elsewhere), nor do the http.* settings given for one URL (extra
headers, cookie file, TLS verification and authorities), a 401
with a body asks the credential helpers, https never downgrades to http,
a redirect to another scheme than http(s) is never followed,
answers cut short or endless are errors that change nothing, an ssh
server announcing an absurd length is refused, and no secret shows in
messages or trace files (mode 0600)."""

import base64
import json
import os
import shlex
import socket
import stat
import sys
import threading
import time

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.checks import error_lines
from lib.env import ROOT, SSH_WRAPPER
from lib.git import git, init, refs
from lib.hostile import fake_ssh
from lib.push import hg_commit, make_hg_repo
from lib.tls import make_authority_and_certificate

pytestmark = pytest.mark.clientpython

ALICE = ('alice', 'alice-s3cret')
BOB = ('bob', 'bob-s3cret')
# What http.<hg server URL>.* settings hand to that server only.
TOKEN = 'Bearer token-s3cret'
EXTRA = ('X-Token', 'extra-s3cret')
COOKIE = ('session', 'cookie-s3cret')
SECRETS = (ALICE[1], BOB[1], 'token-s3cret', EXTRA[1], COOKIE[1])
CINNABARCLONE = ROOT / 'hg' / 'cinnabarclone.py'

CREDENTIAL_HELPER = '''#!%s
"""A git credential helper for the tests: logs what it is asked (one
JSON line a call) and answers `get` from a {host: [user, password]}
file."""
import json
import os
import sys

action = sys.argv[1]
fields = dict(line.split('=', 1) for line in sys.stdin.read().splitlines()
              if '=' in line)
with open(%r, 'a') as log:
    log.write(json.dumps({'action': action, 'host': fields.get('host'),
                          'protocol': fields.get('protocol'),
                          'username': fields.get('username'),
                          'gnutls': os.environ.get('GNUTLS_NO_IMPLICIT_INIT')})
              + '\\n')
with open(%r) as f:
    answers = json.load(f)
if action == 'get' and fields.get('host') in answers:
    user, password = answers[fields['host']]
    print('username=%%s' %% user)
    print('password=%%s' %% password)
'''


@pytest.fixture(scope='module')
def upstream(hg, hg_serve_module, tmp_path_factory):
    """An hg server with two changesets and a bookmark."""
    repo = make_hg_repo(hg, tmp_path_factory.mktemp('hostile') / 'repo',
                        {'f': 'one\n'})
    hg_commit(hg, repo, {'f': 'two\n'}, 'second')
    hg('-R', repo, 'bookmark', '-r', '0', 'marked')
    return hg_serve_module(repo)


class CredentialHelper:
    def __init__(self, directory, answers):
        self.log = directory / 'credential.log'
        answers_file = directory / 'answers.json'
        answers_file.write_text(json.dumps(answers))
        self.path = directory / 'credential-helper'
        self.path.write_text(CREDENTIAL_HELPER % (
            sys.executable, str(self.log), str(answers_file)))
        self.path.chmod(0o755)

    def config(self):
        return ['-c', f'credential.helper={self.path}']

    def calls(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().split(
            '\n') if line]


def basic(credentials):
    return 'Basic ' + base64.b64encode(
        ('%s:%s' % credentials).encode()).decode()


def with_userinfo(url, credentials):
    scheme, rest = url.split('://', 1)
    return '%s://%s:%s@%s' % (scheme, credentials[0], credentials[1], rest)


def clone(tmp_path, url, *config, check=True, log=True):
    env = {'GIT_CINNABAR_LOG': str(tmp_path / 'trace.log')} if log else {}
    return git(*config, 'clone', 'hg::' + url, 'work', cwd=tmp_path,
               extra_env=env, check=check)


def assert_no_secret(tmp_path, result):
    shown = result.out + result.err
    trace = tmp_path / 'trace.log'
    if trace.exists():
        shown += trace.read_text()
        assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    for secret in SECRETS:
        assert secret not in shown, result.describe()


def test_redirect_to_another_host_asks_afresh(upstream, hostile, tmp_path):
    """Alice's credentials (in the URL) go to origin a only; origin b,
    which a redirects to, gets Bob's from the credential helper, asked
    for b's host because b's 401 (with a body) asked for credentials."""
    server = hostile(upstream_port=upstream.port)
    server.auth = {'a': ALICE, 'b': BOB}
    server.redirect['a'] = server.url('b')
    helper = CredentialHelper(tmp_path, {
        f'127.0.0.1:{server.port("b")}': BOB})
    result = clone(tmp_path, with_userinfo(server.url('a'), ALICE) + '/',
                   *helper.config())
    assert_no_traceback(result)
    assert 'marked' in ' '.join(refs(tmp_path / 'work'))
    to_b = server.requests_to('b')
    assert to_b and all(r['authorization'] in (None, basic(BOB))
                        for r in to_b)
    assert any(r['authorization'] == basic(BOB) for r in to_b)
    assert all(r['authorization'] in (None, basic(ALICE))
               for r in server.requests_to('a'))
    asked = [c for c in helper.calls() if c['action'] == 'get']
    assert [c['host'] for c in asked] == [f'127.0.0.1:{server.port("b")}']
    assert_no_secret(tmp_path, result)


@pytest.mark.parametrize('follow', ['initial', 'true'])
def test_redirect_without_user_keeps_credentials_to_their_host(
        follow, upstream, hostile, tmp_path):
    """A URL without a user: origin a asks for credentials (the helper
    gives Alice's for a's host), then redirects to origin b, which asks
    too. Alice's never go to b (neither offered first nor sent after b's
    401): the helper is asked afresh for b's host, and b gets Bob's;
    whoever follows the redirect (git-cinnabar, or the helper with
    http.followRedirects=true)."""
    server = hostile(upstream_port=upstream.port)
    server.auth = {'a': ALICE, 'b': BOB}
    server.redirect['a'] = server.url('b')
    host_a = f'127.0.0.1:{server.port("a")}'
    host_b = f'127.0.0.1:{server.port("b")}'
    helper = CredentialHelper(tmp_path, {host_a: ALICE, host_b: BOB})
    result = clone(tmp_path, server.url('a') + '/', *helper.config(),
                   '-c', f'http.followRedirects={follow}')
    assert_no_traceback(result)
    assert 'marked' in ' '.join(refs(tmp_path / 'work'))
    to_a, to_b = server.requests_to('a'), server.requests_to('b')
    assert any(r['authorization'] == basic(ALICE) for r in to_a)
    assert all(r['authorization'] in (None, basic(ALICE)) for r in to_a)
    assert any(r['authorization'] == basic(BOB) for r in to_b)
    assert all(r['authorization'] in (None, basic(BOB)) for r in to_b), \
        [r['authorization'] for r in to_b]
    asked = [c['host'] for c in helper.calls() if c['action'] == 'get']
    assert asked == [host_a, host_b]
    assert_no_secret(tmp_path, result)


def test_401_with_a_body_asks_the_credential_helper(upstream, hostile,
                                                    tmp_path):
    server = hostile(upstream_port=upstream.port)
    server.auth = {'a': BOB}
    host = f'127.0.0.1:{server.port("a")}'
    helper = CredentialHelper(tmp_path, {host: BOB})
    result = clone(tmp_path, server.url('a') + '/', *helper.config())
    assert_no_traceback(result)
    assert [c['action'] for c in helper.calls()][:1] == ['get']
    assert 'store' in [c['action'] for c in helper.calls()]
    # The variable the helper is started with (cinnabar/helper.py) is not
    # passed on to what it runs.
    assert {c['gnutls'] for c in helper.calls()} == {None}
    assert_no_secret(tmp_path, result)


def test_wrong_credentials_are_refused_and_erased(upstream, hostile,
                                                  tmp_path):
    server = hostile(upstream_port=upstream.port)
    server.auth = {'a': BOB}
    helper = CredentialHelper(tmp_path, {
        f'127.0.0.1:{server.port("a")}': (BOB[0], 'wrong')})
    result = clone(tmp_path, server.url('a') + '/', *helper.config(),
                   check=False)
    assert_failed_for_people(result)
    assert 'authentication failed' in result.err
    assert 'erase' in [c['action'] for c in helper.calls()]
    assert not (tmp_path / 'work').exists()


def bundled_repo(hg, tmp_path):
    """(repository, directory): an hg repository with the clonebundles
    extension, and a directory holding a bundle of it, `full.hg`."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    with open(repo / '.hg' / 'hgrc', 'a') as f:
        f.write('[extensions]\nclonebundles =\n')
    files = tmp_path / 'files'
    files.mkdir()
    hg('-R', repo, 'bundle', '-q', '--type', 'none-v2', '--all',
       files / 'full.hg')
    return repo, files


def advertise_bundle(repo, base_url):
    (repo / '.hg' / 'clonebundles.manifest').write_text(
        base_url + '/full.hg BUNDLESPEC=none-v2\n')


def test_clone_bundle_elsewhere_gets_no_credentials(hg, hostile, tmp_path,
                                                    hg_serve):
    """A clone bundle on another origin is fetched without the hg
    server's credentials."""
    repo, files = bundled_repo(hg, tmp_path)
    upstream = hg_serve(repo)
    server = hostile(upstream_port=upstream.port)
    server.auth = {'a': ALICE}
    bundles = hostile(files=files)
    advertise_bundle(repo, bundles.url('a'))
    result = clone(tmp_path, with_userinfo(server.url('a'), ALICE) + '/')
    assert_no_traceback(result)
    assert 'Getting clone bundle from' in result.err
    fetched = bundles.requests_to('a')
    assert fetched and all(r['authorization'] is None for r in fetched)
    assert any(r['authorization'] == basic(ALICE)
               for r in server.requests_to('a'))
    assert_no_secret(tmp_path, result)


def scoped_settings(url, tmp_path):
    """`-c` options: the settings that carry a secret, for `url` only (as
    CI hands a token to one server): an Authorization header, another
    extra header, a cookie file."""
    cookies = tmp_path / 'cookies.txt'
    cookies.write_text('127.0.0.1\tFALSE\t/\tFALSE\t4102444800\t%s\t%s\n'
                       % COOKIE)
    return ['-c', f'http.{url}/.extraHeader=Authorization: {TOKEN}',
            '-c', f'http.{url}/.extraHeader={EXTRA[0]}: {EXTRA[1]}',
            '-c', f'http.{url}/.cookieFile={cookies}']


def secrets_carried(request):
    """Which of the scoped settings' secrets a recorded request carried."""
    headers = request['headers']
    return {name for name, carried in (
        ('authorization', headers.get('authorization') == TOKEN),
        ('extra header', headers.get(EXTRA[0].lower()) == EXTRA[1]),
        ('cookie', COOKIE[1] in headers.get('cookie', '')),
    ) if carried}


def assert_settings_stayed(server, elsewhere):
    """Every request to side a of `server` carried all the scoped
    secrets, none to `elsewhere` (requests) did."""
    assert elsewhere
    assert [secrets_carried(r) for r in elsewhere] == [set()] * len(
        elsewhere), elsewhere
    to_a = server.requests_to('a')
    assert to_a
    assert [secrets_carried(r) for r in to_a] == [
        {'authorization', 'extra header', 'cookie'}] * len(to_a)


def test_settings_of_the_hg_server_stay_off_the_clone_bundle_host(
        hg, hostile, tmp_path, hg_serve):
    """http.<hg server>.* settings go with every request to the hg server
    and none to the clone bundle host; http.<bundle host>.extraHeader
    goes to the bundle host only."""
    repo, files = bundled_repo(hg, tmp_path)
    server = hostile(upstream_port=hg_serve(repo).port)
    bundles = hostile(files=files)
    advertise_bundle(repo, bundles.url('a'))
    result = clone(tmp_path, server.url('a') + '/',
                   *scoped_settings(server.url('a'), tmp_path),
                   '-c', f'http.{bundles.url("a")}/.extraHeader=X-Bundle: b')
    assert_no_traceback(result)
    assert 'Getting clone bundle from' in result.err
    assert_settings_stayed(server, bundles.requests_to('a'))
    assert all(r['headers'].get('x-bundle') == 'b'
               for r in bundles.requests_to('a'))
    assert not any('x-bundle' in r['headers']
                   for r in server.requests_to('a'))
    assert_no_secret(tmp_path, result)


@pytest.mark.parametrize('follow', ['initial', 'true'])
def test_settings_of_the_hg_server_stay_off_a_redirect_target(
        follow, upstream, hostile, tmp_path):
    """Side a redirects every request to side b. With git's default
    http.followRedirects (`initial`), git-cinnabar follows the redirect
    of `capabilities` and goes on with b; with `true`, the helper follows
    each request's redirect, each hop a request of its own."""
    server = hostile(upstream_port=upstream.port)
    server.redirect['a'] = server.url('b')
    result = clone(tmp_path, server.url('a') + '/',
                   '-c', f'http.followRedirects={follow}',
                   *scoped_settings(server.url('a'), tmp_path))
    assert_no_traceback(result)
    assert 'marked' in ' '.join(refs(tmp_path / 'work'))
    assert_settings_stayed(server, server.requests_to('b'))
    redirected = [r['command'] for r in server.requests_to('a')]
    assert ('getbundle' in redirected) == (follow == 'true'), redirected
    assert_no_secret(tmp_path, result)


def test_settings_of_the_hg_server_stay_off_the_cinnabarclone_host(
        hg, hostile, tmp_path, hg_serve):
    """The metadata a cinnabarclone manifest names elsewhere (here, a
    bundle that is not there: the clone goes on without it) is asked for
    without the hg server's settings, by git (ls-remote) and by us."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    with open(repo / '.hg' / 'hgrc', 'a') as f:
        f.write(f'[extensions]\ncinnabarclone = {CINNABARCLONE}\n')
    server = hostile(upstream_port=hg_serve(repo).port)
    metadata = hostile(files=tmp_path)
    (repo / '.hg' / 'cinnabar.manifest').write_text(
        metadata.url('a') + '/metadata.bundle\n')
    result = clone(tmp_path, server.url('a') + '/',
                   *scoped_settings(server.url('a'), tmp_path))
    assert_no_traceback(result)
    assert 'falling back to a normal clone' in result.err
    asked = metadata.requests_to('a')
    assert any(r['path'] == '/metadata.bundle' for r in asked), asked
    assert_settings_stayed(server, asked)
    assert_no_secret(tmp_path, result)


@pytest.mark.parametrize('case', ['unverified', 'authorities'])
def test_tls_settings_of_the_hg_server_stay_with_it(case, hg, hostile,
                                                    tmp_path, hg_serve):
    """Both hosts speak https, each with a certificate of its own
    authority. `unverified`: http.<hg server>.sslVerify=false lets the
    hg server's certificate through, not the clone bundle host's (the
    clone goes on without the bundle). `authorities`: each host's
    http.<host>.sslCAInfo is the one its certificate is checked
    against."""
    repo, files = bundled_repo(hg, tmp_path)
    ca, *hg_tls = make_authority_and_certificate(tmp_path / 'hg-tls')
    bundle_ca, *bundle_tls = make_authority_and_certificate(
        tmp_path / 'bundle-tls')
    server = hostile(upstream_port=hg_serve(repo).port, tls=hg_tls)
    bundles = hostile(files=files, tls=bundle_tls)
    advertise_bundle(repo, bundles.url('a'))
    if case == 'unverified':
        config = ['-c', f'http.{server.url("a")}/.sslVerify=false']
    else:
        config = ['-c', f'http.{server.url("a")}/.sslCAInfo={ca}',
                  '-c', f'http.{bundles.url("a")}/.sslCAInfo={bundle_ca}']
    result = clone(tmp_path, server.url('a') + '/', *config)
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    commands = [r['command'] for r in server.requests_to('a')]
    if case == 'unverified':
        assert 'warning: the clone bundle failed' in result.err
        assert 'certificate' in result.err, result.describe()
        assert bundles.requests_to('a') == []
        assert 'getbundle' in commands
    else:
        assert 'Getting clone bundle from' in result.err
        assert bundles.requests_to('a')
        assert 'clone bundle failed' not in result.err, result.describe()


def test_unbundle_url_credentials_neither_shown_nor_stored(
        hg, hostile, tmp_path):
    """`git cinnabar unbundle http://user:password@host/x.hg`: the URL is
    shown without them, and the resume data of a cut download keeps
    none; the download then resumes from the same URL."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    files = tmp_path / 'files'
    files.mkdir()
    hg('-R', repo, 'bundle', '-q', '--type', 'none-v2', '--all',
       files / 'full.hg')
    server = hostile(files=files)
    server.auth = {'a': ALICE}
    server.cut[None] = 'with-length'
    shown = server.url('a') + '/full.hg'
    work = init(tmp_path / 'work')
    env = {'GIT_CINNABAR_LOG': str(tmp_path / 'trace.log')}
    result = git('cinnabar', 'unbundle', with_userinfo(shown, ALICE),
                 cwd=work, extra_env=env, check=False)
    assert_failed_for_people(
        result, 'the download of %s failed 5 times' % shown)
    assert 'Downloading %s\n' % shown in result.err
    assert_no_secret(tmp_path, result)
    downloads = work / '.git' / 'cinnabar' / 'downloads'
    [info] = downloads.glob('*.json')
    assert json.loads(info.read_text())['url'] == shown
    # What an earlier version stored, with the password: forgotten.
    (downloads / 'old.json').write_text(json.dumps(
        {'url': with_userinfo(shown, BOB), 'validator': '"x"', 'total': 9}))
    (downloads / 'old.part').write_bytes(b'part')
    server.cut.clear()
    result = git('cinnabar', 'unbundle', with_userinfo(shown, ALICE),
                 cwd=work, extra_env=env)
    assert 'resuming the download of %s at ' % shown in result.err
    assert_no_secret(tmp_path, result)
    assert list(downloads.iterdir()) == []


@pytest.mark.parametrize('spelling', [
    'hg://{user}:{password}@127.0.0.1:{port}.http/',
    'hg::hg://{user}:{password}@127.0.0.1:{port}.http/',
    'hg::http://{user}:{password}@127.0.0.1:{port}/',
])
def test_url_with_a_password(spelling, upstream, hostile, tmp_path):
    """A URL holding a password works in each spelling, and neither it nor
    a broken one (a port that is none, no scheme) shows the password."""
    server = hostile(upstream_port=upstream.port)
    server.auth = {'a': ALICE}
    url = spelling.format(user=ALICE[0], password=ALICE[1],
                          port=server.port('a'))
    env = {'GIT_CINNABAR_LOG': str(tmp_path / 'trace.log')}
    result = git('clone', url, 'work', cwd=tmp_path, extra_env=env)
    assert_no_traceback(result)
    assert 'marked' in ' '.join(refs(tmp_path / 'work'))
    to_a = server.requests_to('a')
    assert any(r['authorization'] == basic(ALICE) for r in to_a)
    assert all(r['authorization'] in (None, basic(ALICE)) for r in to_a)
    assert_no_secret(tmp_path, result)
    broken = url.replace(f':{server.port("a")}.http/', ':x1.http/').replace(
        f':{server.port("a")}/', ':x1/')
    for wrong in (broken, broken.replace(':x1.http/', ':1./')):
        result = git('clone', wrong, 'broken', cwd=tmp_path, check=False,
                     extra_env=env)
        assert_failed_for_people(result)
        assert_no_secret(tmp_path, result)
        assert not (tmp_path / 'broken').exists()


def test_https_to_http_redirect_is_refused(upstream, hostile, tmp_path,
                                           tls_certificate):
    server = hostile(upstream_port=upstream.port, tls=tls_certificate)
    server.redirect['a'] = server.url('b')
    result = git('clone', 'hg::' + server.url('a') + '/', 'work',
                 cwd=tmp_path, check=False,
                 extra_env={'GIT_SSL_CAINFO': str(tls_certificate[0])})
    assert_failed_for_people(result)
    assert 'it leaves https' in result.err
    assert server.requests_to('a')
    assert server.requests_to('b') == []
    assert not (tmp_path / 'work').exists()


class Listener:
    """A TCP port of 127.0.0.1 that counts the connections made to it and
    closes each at once: the host a redirect to another scheme names."""

    def __init__(self):
        self.socket = socket.create_server(('127.0.0.1', 0))
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def stop(self):
        # close() alone does not wake a thread blocked in accept(): it
        # would go on waiting on the descriptor's number, and take the
        # connections of the next socket given that number (another
        # test's server). shutdown() makes accept() fail at once.
        self.socket.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), 'the listener thread did not end'
        self.socket.close()


@pytest.fixture
def listener(request):
    listener = Listener()
    request.addfinalizer(listener.stop)
    return listener


@pytest.mark.parametrize('follow', ['initial', 'true'])
@pytest.mark.parametrize('target', ['ftp://127.0.0.1:{port}',
                                    'ssh://127.0.0.1:{port}',
                                    'FTP://127.0.0.1:{port}',
                                    'file://{path}'])
def test_redirect_to_another_scheme_is_refused(target, follow, upstream,
                                               hostile, listener, tmp_path):
    """A redirect from http to another scheme is never followed, whoever
    follows it (git-cinnabar with http.followRedirects=initial, the
    helper with true): one `fatal:` line naming it, nothing asked of the
    host it names, no clone."""
    server = hostile(upstream_port=upstream.port)
    secret = tmp_path / 'secret'
    secret.mkdir()
    location = target.format(port=listener.port, path=secret)
    server.redirect['a'] = location
    result = clone(tmp_path, server.url('a') + '/',
                   '-c', f'http.followRedirects={follow}', check=False)
    assert_failed_for_people(
        result, f'refusing a redirect to {location}/?cmd=capabilities: not '
        'an http(s) URL')
    assert listener.connections == 0
    assert [r['command'] for r in server.requests_to('a')] == \
        ['capabilities']
    assert not (tmp_path / 'work').exists()


@pytest.mark.parametrize('command,mode', [
    ('capabilities', 'with-length'), ('batch', 'with-length'),
    ('batch', 'chunked')])
def test_answers_cut_short_are_errors(command, mode, upstream, hostile,
                                      tmp_path):
    server = hostile(upstream_port=upstream.port)
    server.cut[command] = mode
    result = clone(tmp_path, server.url('a') + '/', check=False)
    assert command in [r['command'] for r in server.requests]
    assert_failed_for_people(result)
    assert 'cut short' in result.err
    assert not (tmp_path / 'work').exists()


def test_endless_capabilities_are_refused(upstream, hostile, tmp_path):
    server = hostile(upstream_port=upstream.port)
    server.endless['capabilities'] = 'application/mercurial-0.1'
    result = clone(tmp_path, server.url('a') + '/', check=False, log=False)
    assert_failed_for_people(result)
    assert 'larger than' in result.err
    assert not (tmp_path / 'work').exists()


def test_fetch_with_a_cut_answer_changes_nothing(upstream, hostile,
                                                 tmp_path):
    server = hostile(upstream_port=upstream.port)
    clone(tmp_path, server.url('a') + '/')
    before = refs(tmp_path / 'work')
    server.cut['batch'] = 'with-length'
    result = git('fetch', 'origin', cwd=tmp_path / 'work', check=False)
    assert_failed_for_people(result, 'to batch was cut short')
    assert refs(tmp_path / 'work') == before


def test_stalled_answer_gives_up_at_low_speed_limit(upstream, hostile,
                                                    tmp_path):
    """http.lowSpeedLimit/http.lowSpeedTime, as git honours them: a
    server that stops sending in the middle of an answer is given up on
    after lowSpeedTime seconds below lowSpeedLimit bytes a second."""
    server = hostile(upstream_port=upstream.port)
    clone(tmp_path, server.url('a') + '/')
    before = refs(tmp_path / 'work')
    server.stall['batch'] = 120
    started = time.monotonic()
    result = git('-c', 'http.lowSpeedLimit=1000', '-c', 'http.lowSpeedTime=2',
                 'fetch', 'origin', cwd=tmp_path / 'work', check=False,
                 timeout=100)
    elapsed = time.monotonic() - started
    assert_failed_for_people(result, LOW_SPEED_MESSAGE)
    assert 2 <= elapsed < 60, elapsed
    assert refs(tmp_path / 'work') == before


LOW_SPEED_MESSAGE = ('the server sent less than 1000 bytes/s for 2 s '
                     '(http.lowSpeedLimit/http.lowSpeedTime)')


@pytest.fixture
def behind(hg, hg_serve, hostile, tmp_path):
    """A clone (tmp_path/work), through a hostile server, of an hg
    repository that then got one more changeset: the next fetch asks for
    a bundle (getbundle)."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    server = hostile(upstream_port=hg_serve(repo).port)
    clone(tmp_path, server.url('a') + '/')
    hg_commit(hg, repo, {'f': 'two\n'}, 'second')
    return server


def assert_import_failed(result, work, before, expected):
    """A fetch that failed while importing: our one line, none of git's
    after it; nothing changed, the fetch refs git reads an import from
    included, and no fast-import crash report left behind."""
    assert_failed_for_people(result, expected)
    lines = error_lines(result)
    assert len(lines) == 1 and expected in lines[0], result.describe()
    assert refs(work) == before
    assert not list((work / '.git').glob('fast_import_crash_*'))


@pytest.mark.parametrize('rule', ['cut', 'stall'])
def test_fetch_failing_mid_import_changes_nothing(rule, behind, tmp_path):
    """The bundle's answer cut short, or stalled below http.lowSpeedLimit:
    the fetch fails saying so, and the next one gets everything."""
    work = tmp_path / 'work'
    before = refs(work)
    if rule == 'cut':
        behind.cut['getbundle'] = 'with-length'
        expected = 'failed during the transfer: Transferred a partial file'
    else:
        behind.stall['getbundle'] = 120
        expected = 'failed during the transfer: ' + LOW_SPEED_MESSAGE
    result = git('-c', 'http.lowSpeedLimit=1000', '-c', 'http.lowSpeedTime=2',
                 'fetch', 'origin', cwd=work, check=False, timeout=100)
    assert_import_failed(result, work, before, expected)
    behind.cut.clear()
    behind.stall.clear()
    git('fetch', 'origin', cwd=work)
    log = git('log', '--format=%s', 'origin/branches/default/tip', cwd=work)
    assert log.out.split('\n')[:2] == ['second', 'initial import']


@pytest.mark.parametrize('answer,message', [
    ('printf "99999999999999999999\\n"', 'more than the'),
    ("head -c 200000 /dev/zero | tr '\\0' 1", 'longer than')])
def test_ssh_absurd_answers_are_refused(answer, message, tmp_path):
    """A server announcing an absurd length, or sending an endless line,
    in the ssh handshake gets a clear error, not a traceback (nor an
    attempt to read all that)."""
    fake = tmp_path / 'fake-ssh'
    # It reads what it is sent (`<&0`: sh gives a background command
    # /dev/null otherwise), so the client never meets a closed pipe before
    # the answer.
    fake.write_text('#!/bin/sh\ncat <&0 >/dev/null &\n%s\n' % answer)
    fake.chmod(0o755)
    result = git('clone', 'hg::ssh://localhost/repo', 'work', cwd=tmp_path,
                 check=False, extra_env={'GIT_SSH_COMMAND': str(fake)})
    assert_failed_for_people(result)
    assert message in result.err
    assert not (tmp_path / 'work').exists()


def test_ssh_answer_of_a_server_that_stopped_reading(tmp_path):
    """A server that answers and exits without reading what it is sent:
    the client's write fails (a broken pipe), and its answer, not "the
    connection ended", is what the user is told."""
    fake = tmp_path / 'fake-ssh'
    fake.write_text('#!/bin/sh\nexec 0<&-\n'
                    'printf "99999999999999999999\\n"\n')
    fake.chmod(0o755)
    result = git('clone', 'hg::ssh://localhost/repo', 'work', cwd=tmp_path,
                 check=False, extra_env={'GIT_SSH_COMMAND': str(fake)})
    assert_failed_for_people(result)
    assert 'more than the' in result.err, result.describe()
    assert not (tmp_path / 'work').exists()


@pytest.mark.parametrize('engines,expected', [
    ('zlib', 'zlib'), ('none', 'none'), ('zstd,zlib', 'zstd')])
def test_compression_negotiated(engines, expected, hg, hg_serve, hostile,
                                tmp_path):
    """test-http-protocol.t: with `server.compressionengines`, hg serve
    answers a bundle (getbundle) as application/mercurial-0.2 compressed
    with the first engine of its list that the client offered
    (X-HgProto-1: the helper reads zstd, zlib, none and bzip2); other
    answers (capabilities, batch) stay application/mercurial-0.1. The
    clone is right whichever."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    hg_commit(hg, repo, {'f': 'two\n'}, 'second')
    with open(repo / '.hg' / 'hgrc', 'a') as hgrc:
        hgrc.write(f'[server]\ncompressionengines = {engines}\n')
    server = hostile(upstream_port=hg_serve(repo).port)
    clone(tmp_path, server.url('a') + '/')
    types = {(a['command'], a['content_type'], a['engine'])
             for a in server.answers}
    assert types == {
        ('capabilities', 'application/mercurial-0.1', None),
        ('batch', 'application/mercurial-0.1', None),
        ('getbundle', 'application/mercurial-0.2', expected)}, types
    log = git('log', '--format=%s', 'origin/branches/default/tip',
              cwd=tmp_path / 'work')
    assert log.out.splitlines() == ['second', 'initial import']


def test_ssh_banner_before_the_answers(upstream, tmp_path):
    """test-ssh-proto.t: lines a login prints (a motd) before the real
    `hg serve --stdio` answers are skipped."""
    env = fake_ssh(tmp_path, "printf 'Welcome to the server\\n\\n"
                   "Last login: today\\n'\nexec %s \"$@\"\n"
                   % shlex.quote(str(SSH_WRAPPER)))
    result = git('clone', '--no-checkout',
                 f'hg::ssh://localhost/{upstream.repo}', 'work', cwd=tmp_path,
                 extra_env=env)
    assert_no_traceback(result)
    log = git('log', '--format=%s', 'origin/branches/default/tip',
              cwd=tmp_path / 'work')
    assert log.out.splitlines() == ['second', 'initial import']


def test_ssh_server_that_is_not_mercurial(tmp_path):
    """test-ssh-proto.t: no hg at the other end (the shell says so on
    stderr and exits): one line saying no Mercurial server answered, the
    server's words shown as `remote:`."""
    env = fake_ssh(tmp_path, 'cat <&0 >/dev/null &\n'
                   "printf 'Welcome\\n'\n"
                   "echo 'sh: 1: hg: not found' >&2\nexit 127\n")
    result = git('clone', 'hg::ssh://localhost/repo', 'work', cwd=tmp_path,
                 check=False, extra_env=env)
    assert_failed_for_people(result)
    assert 'remote: sh: 1: hg: not found' in result.err, result.describe()
    assert len(error_lines(result)) == 1, result.describe()
    assert not (tmp_path / 'work').exists()


def test_ssh_own_errors_are_not_the_servers(tmp_path):
    """What ssh says itself (here: it cannot resolve the host name) is not
    labelled `remote:`, and a GIT_SSH_COMMAND that is not found is
    refused as ours; the server's words are labelled (above)."""
    result = git('clone', 'hg::ssh://nonexistent.invalid/repo', 'work',
                 cwd=tmp_path, check=False,
                 extra_env={'GIT_SSH_COMMAND': 'ssh -o BatchMode=yes'})
    assert_failed_for_people(result)
    lines = result.err.splitlines()
    assert any(line.startswith('ssh: Could not resolve hostname '
                               'nonexistent.invalid') for line in lines), \
        result.describe()
    assert not any(line.startswith('remote: ') for line in lines), \
        result.describe()
    result = git('clone', 'hg::ssh://localhost/repo', 'work', cwd=tmp_path,
                 check=False,
                 extra_env={'GIT_SSH_COMMAND': 'no-such-ssh-program -v'})
    assert_failed_for_people(
        result, 'cannot run no-such-ssh-program: command not found')
    assert 'remote: ' not in result.err, result.describe()
    assert not (tmp_path / 'work').exists()


def test_ssh_capabilities_without_getbundle(tmp_path):
    """test-ssh-proto.t's odd `hello` answers: capabilities a server we can
    fetch from must have are missing (getbundle): refused, naming it."""
    answer = b'capabilities: lookup branchmap\n'
    env = fake_ssh(tmp_path, 'cat <&0 >/dev/null &\n'
                   "printf '%d\\n%s\\n1\\n\\n'\nsleep 5\n"
                   % (len(answer), answer.decode().strip()))
    result = git('clone', 'hg::ssh://localhost/repo', 'work', cwd=tmp_path,
                 check=False, extra_env=env)
    assert_failed_for_people(result, 'getbundle')
    assert not (tmp_path / 'work').exists()


def test_no_secret_in_errors_or_traces(hostile, tmp_path):
    """A server that is gone: the error names it without the password."""
    server = hostile(upstream_port=None)
    url = with_userinfo(server.url('a'), ALICE) + '/'
    server.stop()
    result = clone(tmp_path, url, check=False)
    assert_failed_for_people(result)
    assert '127.0.0.1' in result.err
    assert_no_secret(tmp_path, result)
    assert os.path.exists(tmp_path / 'trace.log')
    # Tracing to stderr: the trace of the helper's commands shows the URL
    # without the password (a request that gets no answer is an answer,
    # `status 0`, not the helper's death and crash report).
    traced = git('clone', 'hg::' + url, 'work2', cwd=tmp_path, check=False,
                 extra_env={'GIT_CINNABAR_TRACE': '1'})
    assert_failed_for_people(traced)
    assert 'helper> http fetch http://127.0.0.1' in traced.err
    assert 'helper< status 0' in traced.err
    assert_no_secret(tmp_path, traced)
