"""The test harness itself: corpus loading, hg serve, the ssh wrapper, the
HTTP proxy.  These run without git-cinnabar, so that a broken fixture is
told apart from a broken implementation."""

import os
import shlex
import subprocess
import sys

import pytest

from cinnabar.helper import PROTOCOL
from cinnabar.helper_version import expected_build_id

from lib import env as test_env
from lib.corpus import NGINX, Corpus
from lib.chg import ChgServers, running
from lib.hg import Hg, http_get
from lib.proc import run

pytestmark = [pytest.mark.clientpython, pytest.mark.hgserver]

BUNDLES = Corpus(test_env.corpus_dir()).hgtests_bundles()
NOT_BUNDLES = {'README.txt', 'MANIFEST.tsv', 'repo-tars'}


def test_manifest_lists_every_bundle(corpus):
    present = set(os.listdir(corpus.root / 'hgtests')) - NOT_BUNDLES
    assert present == set(BUNDLES)
    assert (corpus.root / NGINX).is_file()


@pytest.mark.parametrize('bundle', BUNDLES + [NGINX])
def test_bundle_unbundles_with_every_expected_changeset(
        bundle, corpus, hg, hg_repos):
    nodes = hg.nodes(hg_repos.get(bundle))
    expected = corpus.expected(bundle)
    assert expected, f'{bundle}: empty expected file'
    assert set(expected) <= set(nodes)
    rows = {row['file']: row for row in corpus.manifest()}
    if bundle in rows:
        assert len(nodes) == int(rows[bundle]['changesets'])


def test_hg_serve_answers_and_stops(hg, hg_repos, hg_serve):
    server = hg_serve(hg_repos.get('rebase.hg'))
    status, body = http_get(server.url + '?cmd=capabilities')
    assert status == 200
    assert b'unbundle' in body
    pid = server.proc.pid
    server.stop()
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    with pytest.raises(OSError):
        http_get(server.url + '?cmd=capabilities', timeout=2)


def listening_ports(pid):
    """The TCP ports the process `pid` listens on (its sockets' inodes
    looked up in /proc/net/tcp, state 0A: LISTEN)."""
    inodes = set()
    for fd in os.listdir(f'/proc/{pid}/fd'):
        try:
            target = os.readlink(f'/proc/{pid}/fd/{fd}')
        except OSError:
            continue
        if target.startswith('socket:['):
            inodes.add(target[8:-1])
    ports = set()
    with open('/proc/net/tcp') as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[3] == '0A' and fields[9] in inodes:
                ports.add(int(fields[1].split(':')[1], 16))
    return ports


def test_hg_serve_port_is_its_own(hg, hg_repos, hg_serve):
    """The port a server is reached on is the one its own process bound
    (port 0, read back), not one another server may hold."""
    servers = [hg_serve(hg_repos.get('rebase.hg')) for _ in range(2)]
    assert servers[0].port != servers[1].port
    for server in servers:
        assert listening_ports(server.proc.pid) == {server.port}


def _ssh(*args, **kwargs):
    return run([test_env.SSH_WRAPPER, *args], **kwargs)


def test_ssh_wrapper_runs_hg_serve_stdio(hg_repos, tmp_path, monkeypatch):
    log = tmp_path / 'ssh.log'
    monkeypatch.setenv('CINNABAR_TEST_SSH_LOG', str(log))
    repo = hg_repos.get('rebase.hg')
    result = _ssh('-p', '22', '-o', 'BatchMode=yes', 'user@localhost',
                  'hg', '-R', repo, 'serve', '--stdio',
                  input=b'hello\n', timeout=60)
    length, _, rest = result.stdout.partition(b'\n')
    assert int(length) == len(rest)
    assert rest.startswith(b'capabilities: ')
    assert b'getbundle' in rest
    destination, port, command = log.read_text().split('\t')
    assert (destination, port) == ('user@localhost', '22')
    assert command.startswith(shlex.quote(os.environ['CINNABAR_TEST_HG'])
                              + ' -R ')


def test_ssh_wrapper_refuses_other_hosts():
    result = _ssh('example.com', 'true', check=False)
    assert result.returncode != 0
    assert 'refusing' in result.err


def test_hg_on_path_is_hg_under_test(hg):
    on_path = run(['hg', 'version']).out.splitlines()[0]
    via_ssh = _ssh('localhost', 'hg version').out.splitlines()[0]
    assert on_path == via_ssh == hg.version()


def test_hg_commands_run_the_hg_under_test(hg):
    """The hg fixture's commands, through chg (CINNABAR_TEST_CHG) or not,
    run in the hg under test: its Python, its modules, its version."""
    template = '{pythonexe}\n{hgmodules}\n{hgver}\n'
    direct = run([hg.exe, 'debuginstall', '-T', template], check=False)
    fixture = hg('debuginstall', '-T', template, check=False)
    assert direct.out.count('\n') == 3, direct.describe()
    assert fixture.out == direct.out


@pytest.fixture
def chg_exe():
    chg = test_env.chg_executable()
    if chg is None:
        pytest.skip('needs chg: CINNABAR_TEST_CHG (make test gives '
                    'Debian\'s /usr/bin/chg)')
    return chg


def test_chg_servers_stop_by_pid(chg_exe, hg, tmp_path):
    """A command with other settings (here an extension) is served by
    another server, which chg starts; `stop` ends both, leaving
    nothing."""
    servers = ChgServers(chg_exe, hg.exe).start()
    rc = tmp_path / 'hgrc'
    rc.write_text('[extensions]\nrebase =\n')
    try:
        usage = Hg(hg.exe, servers)('rebase', '--help',
                                    extra_env={'HGRCPATH': str(rc)}).out
        assert usage.startswith('hg rebase ')
        pids = servers.pids()
        assert len(pids) == 2 and servers.proc.pid in pids
    finally:
        servers.stop()
    assert not [pid for pid in pids if running(pid)]
    assert not servers.dir.exists()


def test_launchers_run_the_client_python():
    """git-cinnabar starts with `#!/usr/bin/env python3`, git-remote-hg
    with a shell line running `python3 -S`: the tests' PATH gives both
    the client Python (CINNABAR_TEST_PYTHON, set by CI to the oldest and
    the newest Python we support)."""
    code = 'import sys; print(sys.executable); print(*sys.version_info[:2])'
    exe, version = run(['python3', '-c', code]).out.splitlines()
    assert os.path.realpath(exe) == test_env.client_python()
    assert tuple(map(int, version.split())) >= (3, 9)
    launcher = (test_env.ROOT / 'git-cinnabar').read_text().splitlines()[0]
    assert launcher == '#!/usr/bin/env python3'
    remote = (test_env.ROOT / 'git-remote-hg').read_text().splitlines()
    assert remote[:2] == ['#!/bin/sh', '"""": ; exec python3 -S "$0" "$@"']


def test_commands_run_the_helper_under_test(tmp_path):
    """`git cinnabar --version` names the helper it runs: the one of
    CINNABAR_TEST_HELPER when given (CI's `make dist` run), else the
    checkout's; and that helper answers with this checkout's build id (a
    stale or foreign helper would be refused)."""
    out = run(['git', 'cinnabar', '--version']).out
    helper_line = [line for line in out.splitlines()
                   if line.startswith('helper: ')]
    assert len(helper_line) == 1, out
    named = helper_line[0].rsplit(' (', 1)[1].rstrip(')')
    assert os.path.samefile(named, test_env.helper_under_test())
    assert f'protocol {PROTOCOL}, build {expected_build_id()}' \
        in helper_line[0]


def test_proxy_forwards_and_counts(hg, hg_repos, hg_serve, hg_proxy,
                                   tmp_path):
    server = hg_serve(hg_repos.get('rebase.hg'))
    proxy = hg_proxy(server)
    hg('clone', '-U', '-q', proxy.url, tmp_path / 'copy')
    assert hg.nodes(tmp_path / 'copy') == hg.nodes(server.repo)
    assert proxy.bytes_by_command['getbundle'] > 0


@pytest.mark.parametrize('cut', ['with-length', 'without-length'])
def test_cutting_proxy_breaks_hg_clone(cut, hg, hg_repos, hg_serve,
                                       hg_proxy, tmp_path):
    server = hg_serve(hg_repos.get('hgweb+obs.hg'))
    proxy = hg_proxy(server, cut=cut)
    result = hg('clone', '-U', proxy.url, tmp_path / 'copy', check=False)
    assert result.returncode != 0, result.describe()
    assert proxy.calls_by_command['getbundle'] == 1


def test_run_kills_the_process_group_on_timeout(tmp_path):
    marker = tmp_path / 'marker'
    script = f'(sleep 3; touch {marker}) & sleep 30'
    with pytest.raises(AssertionError, match='timed out'):
        run(['sh', '-c', script], timeout=1)
    subprocess.run(['sleep', '3.5'])
    assert not marker.exists()


def _pytest_session(tmp_path, **env):
    """A pytest session of this suite collecting one test, with `env`
    added to the environment."""
    return run([sys.executable, '-m', 'pytest', '-p',
                'no:cacheprovider', '--collect-only', '-q',
                f'--basetemp={tmp_path / "basetemp"}',
                'tests/test_harness.py::test_ssh_wrapper_refuses_other_hosts'],
               cwd=test_env.ROOT, extra_env=env, check=False)


def test_session_stops_on_another_git_than_named(tmp_path):
    """CINNABAR_TEST_GIT_VERSION (make test-user-git): a session whose
    git on PATH is of another version stops before its first test."""
    version = run(['git', '--version']).out.split()[-1]
    result = _pytest_session(tmp_path, CINNABAR_TEST_GIT_VERSION='0.0.0')
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.describe()
    assert "CINNABAR_TEST_GIT_VERSION=0.0.0: the git on PATH, " in result.err
    assert f"is 'git version {version}'" in result.err
    result = _pytest_session(tmp_path, CINNABAR_TEST_GIT_VERSION=version)
    assert result.returncode == 0, result.describe()


def test_session_stops_on_a_git_running_another_remote_hg(tmp_path):
    """...and one whose git would run a git-remote-hg of its exec path
    rather than the checkout's."""
    other = tmp_path / 'exec-path' / 'git-remote-hg'
    other.parent.mkdir()
    other.write_text('#!/bin/sh\nexit 1\n')
    other.chmod(0o755)
    version = run(['git', '--version']).out.split()[-1]
    result = _pytest_session(tmp_path, CINNABAR_TEST_GIT_VERSION=version,
                             GIT_EXEC_PATH=str(other.parent))
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.describe()
    assert f'would run {other} as git-remote-hg' in result.err


def test_a_test_file_leaving_a_thread_fails(tmp_path):
    """A thread a test file started and left running fails the file's
    last test (see pytest_runtest_teardown in tests/conftest.py)."""
    sample = test_env.ROOT / 'tests' / 'lib' / 'thread_leak_sample.py'
    result = run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider',
                  '-q', f'--basetemp={tmp_path / "basetemp"}', str(sample)],
                 cwd=test_env.ROOT, check=False, extra_env={'CI': ''})
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, \
        result.describe()
    assert 'ERROR tests/lib/thread_leak_sample.py::test_after_it' \
        in result.out, result.describe()
    assert ('thread_leak_sample.py left 1 thread(s) running after its '
            'tests: left-behind') in result.out, result.describe()
    assert 'Warning' not in result.out, result.describe()
