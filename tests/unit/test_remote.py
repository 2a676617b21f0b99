"""The remote-helper command loop, with a fake server, helper and git."""

import contextlib
import io
import subprocess
import sys

import pytest

from cinnabar import push, remote, remote_main
from cinnabar.errors import Abort
from cinnabar.hg.wire import RemoteState
from cinnabar.ids import GitId, HgId, NULL_GIT
from lib import env as test_env

D1, D2, S1, BK, NEW = (HgId(c * 40) for c in '12345')
GIT = {D1: GitId('a' * 40), D2: GitId('b' * 40), S1: GitId('c' * 40),
       BK: GitId('d' * 40)}


class FakePeer:
    def __init__(self):
        self.getbundles = []
        self.closed = False

    def state(self):
        return RemoteState([('default', [D1, D2]), ('stable', [S1, NEW])],
                           [D2, S1, NEW], {'feature': BK})

    def known(self, nodes):
        return [n != D1 for n in nodes]

    def getbundle(self, helper, heads, common):
        self.getbundles.append((heads, common))
        helper.known[NEW] = GitId('e' * 40)

    def close(self):
        self.closed = True


class FakeHelper:
    def __init__(self):
        self.known = dict(GIT)
        self.log = []

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *rest):
        self.log.append('abort' if exc_type else 'close')

    def ready(self):
        return self

    def hg2git_many(self, hg_ids):
        return [self.known.get(h, NULL_GIT) for h in hg_ids]

    def heads(self):
        class Head:
            def __init__(self, hg_id, branch):
                self.hg_id, self.branch = hg_id, branch
                self.git_id = None
        return [Head(D1, 'default'), Head(S1, 'stable'), Head(BK, 'gone')]

    def heads_with_children(self):
        return []

    def finish(self):
        self.log.append('finish')


@pytest.fixture
def fakes(monkeypatch):
    peer, helper = FakePeer(), FakeHelper()
    deleted = []
    monkeypatch.setattr(remote.git, 'git_dir', lambda: '/repo/.git')
    monkeypatch.setattr(remote.git, 'delete_refs',
                        lambda prefixes, names=None: deleted.extend(prefixes))
    monkeypatch.setattr(remote.git, 'read_config_soon', lambda: None)
    # The tracers read git's configuration (which otherwise only an
    # earlier test may have read for this directory).
    monkeypatch.setattr(remote.git, 'config', lambda key: None)
    monkeypatch.setattr(remote.config, 'lookup', lambda name, r=None: None)
    monkeypatch.setattr(remote.Helper, 'start', lambda git_dir: helper)
    monkeypatch.setattr(remote.Helper, 'spawn', lambda git_dir: helper)
    monkeypatch.setattr(remote.hg, 'connector',
                        lambda scheme: lambda url, helper: peer)
    return peer, helper, deleted


def session(text):
    stdout = io.BytesIO()
    with contextlib.ExitStack() as resources:
        helper = remote.RemoteHelper('origin', '/src', io.BytesIO(
            text.encode()), stdout, resources)
        helper.run()
    return stdout.getvalue().decode()


def test_capabilities_and_options(fakes):
    out = session('capabilities\noption progress false\noption verbosity 2\n'
                  'option check-connectivity true\n\n')
    assert out == '\n'.join(remote.CAPABILITIES) + '\n\nok\nok\nunsupported\n'


def test_list(fakes):
    out = session('list\n\n')
    assert out.splitlines() == [
        '@refs/heads/branches/default/tip HEAD',
        'd' * 40 + ' refs/heads/bookmarks/feature',
        'a' * 40 + ' refs/heads/branches/default/' + D1,
        'b' * 40 + ' refs/heads/branches/default/tip',
        'c' * 40 + ' refs/heads/branches/stable/' + S1,
        '? refs/heads/branches/stable/tip',
        '',
    ]


def test_import_fetches_then_writes_a_fast_import_stream(fakes):
    peer, helper, deleted = fakes
    out = session('list\nimport refs/heads/branches/stable/tip\n'
                  'import refs/heads/bookmarks/feature\n\n\n')
    stream = out.split('\n\n', 1)[1]
    assert stream == (
        'feature done\n'
        'feature force\n'
        'reset refs/cinnabar/refs/heads/branches/stable/tip\n'
        'from %s\n\n'
        'reset refs/cinnabar/refs/heads/bookmarks/feature\n'
        'from %s\n\n'
        'done\n' % ('e' * 40, 'd' * 40))
    # Only NEW is missing; our heads of the server's branches that it
    # knows are the common ones.
    assert peer.getbundles == [([NEW], [S1])]
    assert helper.log == ['finish', 'close']
    assert 'refs/cinnabar/refs/' in deleted
    assert peer.closed


def test_import_of_known_refs_fetches_nothing(fakes):
    peer, helper, _ = fakes
    out = session('import refs/heads/branches/default/tip\n\n\n')
    assert out == ('feature done\nfeature force\nreset refs/cinnabar/refs/'
                   'heads/branches/default/tip\nfrom %s\n\ndone\n'
                   % ('b' * 40))
    assert peer.getbundles == []
    assert helper.log == ['close']


def test_import_head(fakes):
    out = session('list\nimport HEAD\n\n\n')
    assert 'reset refs/cinnabar/HEAD\nfrom %s\n' % ('b' * 40) in out


def test_unknown_ref_aborts_and_helper_drops_work(fakes):
    peer, helper, _ = fakes
    with pytest.raises(Abort):
        session('list\nimport refs/heads/nope\n\n')
    assert helper.log == ['abort']


def test_unknown_command(fakes):
    with pytest.raises(Abort) as error:
        session('frobnicate\n')
    assert 'frobnicate' in error.value.message


def test_bad_list_argument(fakes):
    with pytest.raises(Abort):
        session('list for-fun\n')


def test_remote_name():
    assert remote_main._remote_name('origin') == 'origin'
    assert remote_main._remote_name('hg::/some/path') is None


def test_usage():
    with pytest.raises(Abort):
        remote_main.session([])


class FakePusher:
    made = []

    def __init__(self, peer, helper, state, styles, force, dry_run,
                 remote=None, quiet=False):
        self.options = (force, dry_run)
        FakePusher.made.append(self)

    def push(self, specs):
        self.specs = specs
        return [(s.dst, None if s.src else 'cannot delete\nthis')
                for s in specs]


def test_push_batch(fakes, monkeypatch):
    FakePusher.made = []
    monkeypatch.setattr(push, 'Pusher', FakePusher)
    out = session('option dry-run true\noption force false\n'
                  'push refs/heads/a:refs/heads/bookmarks/a\n'
                  'push +:refs/heads/bookmarks/b\n'
                  'option verbosity 1\n\n\n')
    assert out == ('ok\nok\nok refs/heads/bookmarks/a\n'
                   'error refs/heads/bookmarks/b cannot delete this\n\n')
    pusher, = FakePusher.made
    assert pusher.options == (False, True)
    assert [tuple(s) for s in pusher.specs] == [
        ('refs/heads/a', 'refs/heads/bookmarks/a', False),
        ('', 'refs/heads/bookmarks/b', True)]


def test_push_capability(fakes):
    assert 'push' in session('capabilities\n\n').splitlines()


def test_push_outside_a_repository(fakes, monkeypatch):
    monkeypatch.setattr(remote.git, 'git_dir', lambda: None)
    with pytest.raises(Abort):
        session('push a:refs/heads/bookmarks/a\n\n')


def test_the_helper_starts_before_the_session_modules_load():
    """git-remote-hg starts the helper as soon as the repository is
    locked (cinnabar.remote_main): what it imports before loads none of
    the session's modules, nor subprocess, re or urllib.parse."""
    code = ('import sys; import cinnabar.remote_main; '
            'print(" ".join(sorted(sys.modules)))')
    loaded = subprocess.run(
        [sys.executable, '-S', '-c', code], cwd=test_env.ROOT, check=True,
        stdout=subprocess.PIPE, text=True).stdout.split()
    assert 'cinnabar.helper' in loaded
    early = {'cinnabar.remote', 'cinnabar.hg.wire', 'subprocess', 're',
             'urllib.parse'}
    assert early.isdisjoint(loaded), early.intersection(loaded)
