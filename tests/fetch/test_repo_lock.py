"""Two git-cinnabar processes at once in one repository (cinnabar.repolock).

A fetch is held by the server (a `preoutgoing` hook that waits until the
test creates a marker file, so it holds the repository's lock for as long
as the test needs); while it is held, in the same clone:
- a second fetch waits for it, says so, and then succeeds; or, told to
  wait no longer (GIT_CINNABAR_LOCK_TIMEOUT=0), fails with one line saying
  another process is updating the repository and to retry, never with
  git's ref lock messages;
- a push waits for it, then lands;
- `git gc` runs to its end.
Each time, the clone ends with every server changeset, its refs at the
server's heads, and `git fsck` and `git cinnabar fsck` clean.
"""

import fcntl
import subprocess
import time

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import clone, git, hg2git, rev_parse
from lib.push import Author, git_commit, hg_commit
from lib.push import make_hg_repo, pushed_nodes
from lib.proc import kill_group

AUTHOR = Author('Lock Tester', 'lock@example.com')
DEFAULT_TIP = 'refs/remotes/origin/branches/default/tip'
# The hook's bound, should the test never release it.
HOOK_LIMIT_SECONDS = 120
WAIT_SAYS = 'waiting for another git-cinnabar process'
RAW_GIT = ('cannot lock ref', 'could not read ref', 'Unable to create')


def lock_is_held(work):
    """Whether someone holds .git/cinnabar.lock (tried without waiting)."""
    path = work / '.git' / 'cinnabar.lock'
    if not path.exists():
        return False
    with open(path) as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False


class Background:
    """A git command in the background, its stderr in a file to watch."""

    def __init__(self, args, cwd, log):
        self.log = log
        with open(log, 'wb') as err:
            self.proc = subprocess.Popen(
                ['git', *args], cwd=cwd, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=err, start_new_session=True)

    def wait_for(self, ready, what, seconds=60):
        deadline = time.monotonic() + seconds
        while not ready():
            assert self.proc.poll() is None, f'{what}: {self.describe()}'
            assert time.monotonic() < deadline, f'{what}: {self.describe()}'
            time.sleep(0.02)

    def wait_for_text(self, text):
        """Until the command has said `text` on its stderr."""
        self.wait_for(lambda: text in self.log.read_text(errors='replace'),
                      f'never said {text!r}')

    def describe(self):
        if self.proc.poll() is None:
            return f'still running\n{self.log.read_text(errors="replace")}'
        return (f'exit code {self.proc.returncode}\n'
                f'{self.log.read_text(errors="replace")}')

    def finish(self):
        self.proc.communicate(timeout=120)
        return self.describe()

    def assert_succeeds(self):
        text = self.finish()
        assert self.proc.returncode == 0, text
        assert 'Traceback' not in text, text

    def kill(self):
        if self.proc.poll() is None:
            kill_group(self.proc.pid)
            self.proc.wait()


class HeldFetch(Background):
    """`git fetch` in the background, once it holds the lock, held by
    the server's hook until `release`."""

    def __init__(self, work, release_marker):
        super().__init__(['fetch', 'origin'], work,
                         work.parent / 'held-fetch.err')
        self.release_marker = release_marker
        self.wait_for(lambda: lock_is_held(work), 'the fetch took no lock')

    def release(self):
        self.release_marker.touch()


@pytest.fixture
def slow_server(hg, hg_serve, tmp_path):
    """(hg repository, clone, marker): the clone is up to date, then the
    server gets a new changeset and a hook holding fetches until the
    marker file exists."""
    repo = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    server = hg_serve(repo)
    work = tmp_path / 'work'
    assert_no_traceback(clone(f'hg::{server.url}', work))
    hg('-R', repo, 'update', '-q', 'default')
    hg_commit(hg, repo, {'file': 'newer\n'}, 'newer on the server')
    with open(repo / '.hg' / 'hgrc', 'a') as hgrc:
        hgrc.write(hold_hook(marker := tmp_path / 'release'))
    return repo, work, marker


def hold_hook(marker):
    """An hgrc [hooks] section whose preoutgoing hook waits for `marker`
    (HOOK_LIMIT_SECONDS at most)."""
    polls = HOOK_LIMIT_SECONDS * 20
    return ('[hooks]\npreoutgoing = i=0; while [ ! -e ' f"'{marker}'" ' ]'
            f' && [ $i -lt {polls} ]; do sleep 0.05; i=$((i+1)); done\n')


def held_fetch(slow_server, request):
    """The clone's fetch, started and holding the lock."""
    repo, work, marker = slow_server
    first = HeldFetch(work, marker)
    request.addfinalizer(first.kill)
    request.addfinalizer(first.release)
    return first


def assert_consistent(hg, repo, work):
    """The clone has every changeset of the server, its default tip at
    the server's, and both fsck are clean."""
    nodes = hg.nodes(repo)
    mapped = hg2git(work, nodes)
    assert '0' * 40 not in mapped.values(), mapped
    tip = hg.nodes(repo, 'max(branch(default))')[0]
    assert rev_parse(work, DEFAULT_TIP) == mapped[tip]
    git('fsck', '--no-progress', cwd=work)
    assert_no_traceback(git('cinnabar', 'fsck', cwd=work))


def test_second_fetch_waits(hg, slow_server, request):
    repo, work, _ = slow_server
    first = held_fetch(slow_server, request)
    second = Background(['fetch', 'origin'], work, work.parent / 'second')
    request.addfinalizer(second.kill)
    second.wait_for_text(WAIT_SAYS)
    first.release()
    first.assert_succeeds()
    text = second.finish()
    assert second.proc.returncode == 0, text
    assert not any(raw in text for raw in RAW_GIT), text
    assert_consistent(hg, repo, work)


# git 2.47 and later add a line of their own when the remote helper ends
# before answering `capabilities` (cinnabar.remote_main).
@pytest.mark.usergit
def test_second_fetch_gives_up_in_one_line(hg, slow_server, request):
    repo, work, _ = slow_server
    before = rev_parse(work, 'refs/cinnabar/metadata')
    first = held_fetch(slow_server, request)
    second = git('fetch', 'origin', cwd=work, check=False,
                 extra_env={'GIT_CINNABAR_LOCK_TIMEOUT': '0'})
    line = assert_failed_for_people(second, 'another git-cinnabar process')
    assert 'retry' in line
    assert not any(raw in second.err for raw in RAW_GIT), second.describe()
    errors = [x for x in second.err.splitlines()
              if x.startswith(('fatal:', 'error:'))]
    assert errors == [line], second.describe()
    # The first is still held in the server's hook: nothing changed yet.
    assert rev_parse(work, 'refs/cinnabar/metadata') == before
    first.release()
    first.assert_succeeds()
    assert_consistent(hg, repo, work)


def test_push_waits_for_fetch(hg, slow_server, request):
    repo, work, _ = slow_server
    (work / 'pushed').write_text('pushed\n')
    git('add', 'pushed', cwd=work)
    commit = git_commit(work, 'pushed while fetching', AUTHOR,
                        '1700000000 +0000')
    first = held_fetch(slow_server, request)
    # On the changeset the clone had: the server's newer one is another
    # head of default, so the push needs --force, as hg push -f would.
    push = Background(['push', '--force', 'origin',
                       'HEAD:refs/heads/branches/default/tip'],
                      work, work.parent / 'push')
    request.addfinalizer(push.kill)
    push.wait_for_text(WAIT_SAYS)
    first.release()
    first.assert_succeeds()
    text = push.finish()
    assert push.proc.returncode == 0, text
    assert 'Traceback' not in text, text
    node = pushed_nodes(work, [commit])[commit]
    assert node in hg.nodes(repo)
    git('fsck', '--no-progress', cwd=work)
    assert_no_traceback(git('cinnabar', 'fsck', cwd=work))


def test_gc_during_fetch(hg, slow_server, request):
    """`git gc` ends while the fetch is still held."""
    repo, work, _ = slow_server
    first = held_fetch(slow_server, request)
    gc = git('gc', '--quiet', cwd=work, check=False, timeout=120)
    assert gc.returncode == 0, gc.describe()
    assert first.proc.poll() is None, first.describe()
    first.release()
    first.assert_succeeds()
    assert_consistent(hg, repo, work)


def test_fetch_in_a_linked_worktree_shares_the_lock(hg, slow_server, request,
                                                    tmp_path):
    """A linked worktree's fetch updates the same metadata: it takes the
    lock of the common git directory (named by the worktree's
    `commondir`), not one of its own."""
    repo, work, _ = slow_server
    linked = tmp_path / 'linked'
    git('worktree', 'add', '-q', '--detach', str(linked), cwd=work)
    first = held_fetch(slow_server, request)
    second = git('fetch', 'origin', cwd=linked, check=False,
                 extra_env={'GIT_CINNABAR_LOCK_TIMEOUT': '0'})
    assert_failed_for_people(second, 'another git-cinnabar process')
    assert not (work / '.git' / 'worktrees' / 'linked' /
                'cinnabar.lock').exists()
    first.release()
    first.assert_succeeds()
    assert_consistent(hg, repo, work)


@pytest.mark.parametrize('name', ['refs/cinnabar/metadata.lock',
                                  'refs/notes/cinnabar.lock'])
def test_ref_lock_of_a_dead_process_is_taken_over(name, hg, hg_serve,
                                                  tmp_path):
    """The lock file git makes while the helper moves the metadata refs,
    left by a helper killed then (what SIGKILL at that write leaves): only
    a process holding our lock makes it, so the next fetch, holding it,
    removes it and updates the metadata, instead of failing on git's
    "Unable to create ...: File exists" until someone removes it."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'f': 'one\n'})
    url = 'hg::' + hg_serve(repo).url
    work = tmp_path / 'work'
    clone(url, work, '--no-checkout')
    node = hg_commit(hg, repo, {'f': 'two\n'}, 'second')
    (work / '.git' / name).write_text('')
    result = git('fetch', 'origin', cwd=work, check=False)
    assert result.returncode == 0, result.describe()
    assert not (work / '.git' / name).exists()
    assert hg2git(work, [node]) == {node: rev_parse(work, DEFAULT_TIP)}
