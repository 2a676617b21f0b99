"""Fixtures of the end-to-end tests: real git, real hg, real servers.

Every child process runs in an isolated environment (see `lib.env`):
its own HOME, no system git config, an empty HGRCPATH, HGPLAIN, and the
hg under test first on PATH.  Servers listen on 127.0.0.1 only and are
stopped, by process group, when the test (or module) that started them
ends.
"""

import os
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib import env as test_env  # noqa: E402
from lib.chg import ChgServers  # noqa: E402
from lib.corpus import Corpus  # noqa: E402
from lib.git import CloneCache  # noqa: E402
from lib.hg import Hg, HgServer, RepoCache  # noqa: E402
from lib.hostile_http import HostileServer  # noqa: E402
from lib.proc import run  # noqa: E402
from lib.proxy import HgProxy  # noqa: E402
from lib.sources import make_source  # noqa: E402


# Read before the isolated environment replaces os.environ.
IN_CI = os.environ.get('CI') == 'true'
TESTS = Path(__file__).parent
NOTES = pytest.StashKey[dict]()
# Files that need what `make test` does not make: each of their tests is
# reported as skipped, with the reason (CI=true fails a run on a skip, so
# the CI runs that are not meant to run them deselect them by name).
NEEDS = {  # by path from tests/
    'compat/test_server_matrix.py': (
        lambda: not os.environ.get('CINNABAR_HG_MATRIX'),
        'needs the older Mercurial releases: run it with '
        '`make hg-matrix-test` (CINNABAR_HG_MATRIX)'),
    'compat/test_heptapod.py': (
        lambda: not (Path(__file__).parent.parent / 'build' / 'heptapod-venv'
                     / '.version').exists(),
        'needs build/heptapod-venv: run `make heptapod-venv` first'),
}
# The time limit of a test marked slow (nginx.hg, cloned, fetched or pushed
# whole, sometimes twice), in place of pytest.ini's 300 s.
SLOW_TIMEOUT = 900
# Each test file's time, for --shard; a file it does not list counts this.
WEIGHTS = Path(__file__).parent.parent / '.ci' / 'test-weights.txt'
DEFAULT_WEIGHT = 15
SESSION_SKIPPED = []
# Printed after the summary unless a test noted otherwise (session_note).
LANES_TEST = '(tests/helper/test_sha1_lanes.py)'
DEFAULT_NOTES = {
    'SHA-1 16-lane (AVX-512) path': f'not tested in this run {LANES_TEST}',
    'SHA-1 8-lane (AVX2) path': f'not tested in this run {LANES_TEST}',
    'SHA-1 2-lane (SHA instructions) path':
        f'not tested in this run {LANES_TEST}',
}


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'slow: works on nginx.hg (about 10,000 changesets)')
    config.addinivalue_line(
        'markers', 'usergit: run again with each git release of '
        '`make test-user-git` as the git on PATH')
    config.addinivalue_line(
        'markers', 'hgserver: run again by CI with Debian\'s Mercurial 6.3 '
        'at the other end and the oldest Python as the client\'s (.ci/run)')
    config.addinivalue_line(
        'markers', 'clientpython: run again by CI with the newest Python '
        'as the client\'s (.ci/run)')
    config.stash[NOTES] = dict(DEFAULT_NOTES)
    test_env.interruptible()


def pytest_addoption(parser):
    parser.addoption(
        '--shard', metavar='K/N',
        help='run only the K-th (1..N) of N parts of the test files, of '
        'about the same time by .ci/test-weights.txt (CI runs the parts '
        'side by side)')


def shard_of_files(files, weights, count):
    """{file: part (0..count-1)}: the heaviest file first, each to the
    part with the least time so far."""
    load = [0] * count
    parts = {}
    for name in sorted(files, key=lambda f: (-weights.get(f, DEFAULT_WEIGHT),
                                             f)):
        part = load.index(min(load))
        parts[name] = part
        load[part] += weights.get(name, DEFAULT_WEIGHT)
    return parts


def read_weights():
    weights = {}
    for line in WEIGHTS.read_text().splitlines():
        if line.strip() and not line.startswith('#'):
            seconds, name = line.split(None, 1)
            weights[name] = float(seconds)
    return weights


def parse_shard(value):
    try:
        index, count = (int(x) for x in value.split('/'))
    except ValueError:
        index = count = 0
    if not 1 <= index <= count:
        raise pytest.UsageError(f'--shard {value}: want K/N, 1 <= K <= N')
    return index - 1, count


def keep_shard(config, items):
    """Deselect the tests of the files of the other parts."""
    value = config.getoption('shard')
    if not value:
        return
    index, count = parse_shard(value)
    names = {item: item.path.relative_to(config.rootpath).as_posix()
             for item in items}
    parts = shard_of_files(set(names.values()), read_weights(), count)
    kept = [item for item in items if parts[names[item]] == index]
    config.hook.pytest_deselected(
        items=[item for item in items if parts[names[item]] != index])
    items[:] = kept


def pytest_collection_modifyitems(config, items):
    """The tests of a file whose needs are not met are skipped, not left
    out: a run says what it did not test; --shard keeps one part."""
    keep_shard(config, items)
    missing = {name: pytest.mark.skip(reason=reason)
               for name, (lacking, reason) in NEEDS.items() if lacking()}
    for item in items:
        mark = missing.get(item.path.relative_to(TESTS).as_posix())
        if mark is not None:
            item.add_marker(mark, append=False)
        if item.get_closest_marker('slow') and \
                not item.get_closest_marker('timeout'):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))


# The threads alive when each test file's first test was set up.
MODULE_THREADS = {}
# How long the threads a test file started may take to end after its last
# test, its module fixtures' teardown included.
THREAD_GRACE = 5


def pytest_runtest_setup(item):
    if item.path not in MODULE_THREADS:
        MODULE_THREADS[item.path] = set(threading.enumerate())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """A test file leaves no thread of the test process running: a server
    thread left behind goes on holding (or, blocked on a closed
    descriptor's number, taking over) what later tests open. Checked
    after the file's last test, when its module fixtures are gone."""
    result = yield
    if nextitem is not None and nextitem.path == item.path:
        return result
    before = MODULE_THREADS.pop(item.path, set())
    deadline = time.monotonic() + THREAD_GRACE
    left = [t for t in threading.enumerate() if t not in before]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [t for t in left if t.is_alive()]
    if left:
        pytest.fail(f'{item.path.name} left {len(left)} thread(s) running '
                    f'after its tests: ' + ', '.join(t.name for t in left),
                    pytrace=False)
    return result


def pytest_runtest_logreport(report):
    """Skipped tests (not expected failures), for the CI check below."""
    if report.skipped and not hasattr(report, 'wasxfail'):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) \
            else str(report.longrepr)
        SESSION_SKIPPED.append(f'{report.nodeid}: {reason}')


def pytest_sessionfinish(session, exitstatus):
    """Under CI (CI=true), a skipped test fails the run: a green run
    means every collected test ran."""
    if IN_CI and SESSION_SKIPPED and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def session_note(request):
    """session_note(key, value): a line printed after the summary (e.g.
    which SHA-1 code a test ran); one value per key, the last wins."""
    def note(key, value):
        request.config.stash[NOTES][key] = value
    return note


def _setup_line(what, find, describe):
    """describe(find()), or that `what` was not found (SetupError)."""
    try:
        found = find()
    except test_env.SetupError as e:
        return f'{what}: NOT FOUND: {e}'
    return describe(found)


def _hg_version(exe):
    result = run([exe, 'version'], check=False, timeout=60,
                 extra_env={'HGRCPATH': os.devnull, 'HGPLAIN': '1'})
    first = (result.out.splitlines() or ['?'])[0]
    return f'mercurial under test: {first} ({exe})'


def _client_python(exe):
    result = run([exe, '-c', 'import sys; print(sys.version.split()[0])'],
                 check=False, timeout=60)
    return f'client Python (git-remote-hg, git-cinnabar): ' \
        f'{result.out.strip() or "?"} ({exe})'


def _helper(path):
    given = ' (CINNABAR_TEST_HELPER)' if os.environ.get(
        'CINNABAR_TEST_HELPER') else ''
    return f'helper under test: {path}{given}'


def _chg(chg):
    if chg is None:
        return 'hg commands of the tests: hg itself (no CINNABAR_TEST_CHG)'
    return f'hg commands of the tests: through {chg} (CINNABAR_TEST_CHG)'


def _setup_lines():
    return [
        _setup_line('mercurial', test_env.hg_executable, _hg_version),
        _setup_line('chg', test_env.chg_executable, _chg),
        _setup_line('client Python', test_env.client_python, _client_python),
        _setup_line('helper', test_env.helper_under_test, _helper),
        _setup_line('git', test_env.git_under_test, _git),
    ]


def _git(found):
    exe, version = found
    given = ' (CINNABAR_TEST_GIT_VERSION)' if os.environ.get(
        'CINNABAR_TEST_GIT_VERSION') else ''
    return f'git under test: {version} ({exe}){given}'


def pytest_sessionstart(session):
    """With CINNABAR_TEST_GIT_VERSION, a git on PATH of another version,
    or one that would run another git-remote-hg than the checkout's, stops
    the run before any test: it would test something else."""
    if os.environ.get('CINNABAR_TEST_GIT_VERSION'):
        try:
            test_env.git_under_test()
        except test_env.SetupError as e:
            raise pytest.UsageError(str(e))


def pytest_report_header(config):
    return _setup_lines()


def pytest_terminal_summary(terminalreporter, config):
    for line in _setup_lines():
        terminalreporter.write_line(line)
    notes = config.stash.get(NOTES, {})
    for key in sorted(notes):
        terminalreporter.write_line(f'{key}: {notes[key]}')
    if IN_CI and SESSION_SKIPPED:
        terminalreporter.write_line(
            f'CI=true: {len(SESSION_SKIPPED)} test(s) skipped, which fails '
            'the run:', red=True)
        for line in SESSION_SKIPPED:
            terminalreporter.write_line(f'  {line}', red=True)


@pytest.fixture(scope='session', autouse=True)
def isolated_environment(tmp_path_factory):
    """os.environ, for the whole session, is the isolated environment."""
    home = tmp_path_factory.mktemp('home')
    try:
        hg = test_env.hg_executable()
    except test_env.SetupError:
        hg = None  # the `hg` fixture reports it to the tests needing hg
    saved = dict(os.environ)
    isolated = test_env.isolated_env(home, hg)
    os.environ.clear()
    os.environ.update(isolated)
    yield os.environ
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope='session')
def hg():
    """The hg under test; its commands go through chg when
    CINNABAR_TEST_CHG names it (lib.chg), the servers stopped at the
    end."""
    exe = test_env.hg_executable()
    chg = test_env.chg_executable()
    if chg is None:
        yield Hg(exe)
        return
    servers = ChgServers(chg, exe).start()
    yield Hg(exe, servers)
    servers.stop()


@pytest.fixture(scope='session')
def corpus():
    return Corpus(test_env.corpus_dir())


@pytest.fixture(scope='session')
def hg_repos(hg, corpus, tmp_path_factory):
    """Pristine hg repositories of corpus bundles, unbundled once."""
    return RepoCache(hg, corpus, tmp_path_factory.mktemp('hg-repos'))


def _server_factory(hg, tmp_path_factory, addfinalizer):
    def start(repo, config=None):
        server = HgServer(hg, repo, tmp_path_factory.mktemp('hg-serve'),
                          config=config)
        addfinalizer(server.stop)
        return server.start()
    return start


@pytest.fixture(scope='session')
def git_clones(hg_repos, tmp_path_factory):
    """Clones of corpus repositories to start from, made once (lib.git's
    CloneCache)."""
    return CloneCache(hg_repos, tmp_path_factory.mktemp('git-clones'))


@pytest.fixture
def hg_serve(hg, tmp_path_factory, request):
    """hg_serve(repo, config=None) -> a started HgServer (`config`: hg
    settings, see HgServer), stopped after the test."""
    return _server_factory(hg, tmp_path_factory, request.addfinalizer)


@pytest.fixture(scope='module')
def hg_serve_module(hg, tmp_path_factory, request):
    """Like hg_serve, the servers living until the module ends."""
    return _server_factory(hg, tmp_path_factory, request.addfinalizer)


@pytest.fixture
def hg_proxy(request):
    """hg_proxy(server, cut=None) -> a started HgProxy in front of it."""
    def start(server, cut=None):
        proxy = HgProxy(server.port, cut)
        request.addfinalizer(proxy.stop)
        return proxy.start()
    return start


@pytest.fixture
def hostile(request):
    """hostile(**options) -> a started lib.hostile_http.HostileServer,
    stopped after the test."""
    def start(**options):
        server = HostileServer(**options)
        request.addfinalizer(server.stop)
        return server.start()
    return start


@pytest.fixture
def source(hg_repos, corpus, hg_serve, tmp_path_factory, monkeypatch):
    """source(transport, bundle name) -> a Source of that corpus bundle."""
    def make(transport, name):
        return make_source(transport, hg_repos.get(name),
                           corpus.bundle(name), hg_serve,
                           tmp_path_factory.mktemp('source'),
                           monkeypatch.setenv)
    return make


@pytest.fixture(scope='module')
def module_monkeypatch():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope='module')
def module_source(hg_repos, corpus, hg_serve_module, tmp_path_factory,
                  module_monkeypatch):
    """Like `source`, the Sources (and servers) living for the module,
    one per (transport, bundle)."""
    sources = {}

    def make(transport, name):
        if (transport, name) not in sources:
            sources[transport, name] = make_source(
                transport, hg_repos.get(name), corpus.bundle(name),
                hg_serve_module, tmp_path_factory.mktemp('source'),
                module_monkeypatch.setenv)
        return sources[transport, name]
    return make


@pytest.fixture
def bundle_server(tmp_path_factory, request):
    """bundle_server(root, cut_after=None, cuts=1) -> a started
    BundleServer (lib.bundleserver) serving the directory `root`,
    stopped after the test."""
    from lib.bundleserver import BundleServer

    def start(root, **options):
        server = BundleServer(root, tmp_path_factory.mktemp('bundle-server'),
                              **options)
        request.addfinalizer(server.stop)
        return server.start()
    return start


@pytest.fixture(scope='session')
def tls_certificate(tmp_path_factory):
    """(certificate, key) of a self-signed certificate for 127.0.0.1
    (lib.tls), for servers speaking https."""
    from lib.tls import make_certificate
    return make_certificate(tmp_path_factory.mktemp('tls'))


@pytest.fixture(scope='session')
def release_key():
    """A release signing key made for this session (lib.signing)."""
    from lib.signing import ReleaseKey
    return ReleaseKey()


@pytest.fixture
def trusted_release(monkeypatch, tls_certificate, release_key):
    """git cinnabar download and self-update trust the test's certificate
    and release key."""
    monkeypatch.setenv('GIT_SSL_CAINFO', str(tls_certificate[0]))
    for name, value in release_key.env().items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def https_server(bundle_server, tls_certificate):
    """A bundle_server factory speaking https with the test certificate."""
    return lambda root: bundle_server(root, tls=tls_certificate)
