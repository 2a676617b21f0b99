"""Two git-cinnabar processes at once in one repository (cinnabar.repolock).

A fetch is made slow by the server (a `preoutgoing` hook that sleeps, so
it holds the repository's lock for seconds); while it runs, in the same
clone:
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
from lib.push import Author, assert_pushed, git_commit, hg_commit
from lib.push import make_hg_repo, pushed_nodes
from lib.proc import kill_group

AUTHOR = Author('Lock Tester', 'lock@example.com')
DEFAULT_TIP = 'refs/remotes/origin/branches/default/tip'
HOOK_SECONDS = 3
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


class SlowFetch:
    """`git fetch` in the background, once it holds the lock."""

    def __init__(self, work):
        self.proc = subprocess.Popen(
            ['git', 'fetch', 'origin'], cwd=work, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        deadline = time.monotonic() + 30
        while not lock_is_held(work):
            assert self.proc.poll() is None, self.describe()
            assert time.monotonic() < deadline, 'the fetch took no lock'
            time.sleep(0.05)

    def describe(self):
        out, err = self.proc.communicate(timeout=120)
        return (f'exit code {self.proc.returncode}\n'
                f'{err.decode(errors="replace")}')

    def assert_succeeds(self):
        text = self.describe()
        assert self.proc.returncode == 0, text
        assert 'Traceback' not in text, text

    def kill(self):
        if self.proc.poll() is None:
            kill_group(self.proc.pid)
            self.proc.wait()


@pytest.fixture
def slow_server(hg, hg_serve, tmp_path):
    """(hg repository, clone, its URL): the clone is up to date, then the
    server gets a new changeset and a hook making fetches slow."""
    repo = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    server = hg_serve(repo)
    work = tmp_path / 'work'
    assert_no_traceback(clone(f'hg::{server.url}', work))
    hg('-R', repo, 'update', '-q', 'default')
    hg_commit(hg, repo, {'file': 'newer\n'}, 'newer on the server')
    with open(repo / '.hg' / 'hgrc', 'a') as hgrc:
        hgrc.write(f'[hooks]\npreoutgoing = sleep {HOOK_SECONDS}\n')
    return repo, work


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
    repo, work = slow_server
    first = SlowFetch(work)
    request.addfinalizer(first.kill)
    second = git('fetch', 'origin', cwd=work, timeout=120)
    first.assert_succeeds()
    assert WAIT_SAYS in second.err, second.describe()
    assert not any(raw in second.err for raw in RAW_GIT), second.describe()
    assert_consistent(hg, repo, work)


def test_second_fetch_gives_up_in_one_line(hg, slow_server, request):
    repo, work = slow_server
    before = rev_parse(work, 'refs/cinnabar/metadata')
    first = SlowFetch(work)
    request.addfinalizer(first.kill)
    second = git('fetch', 'origin', cwd=work, check=False,
                 extra_env={'GIT_CINNABAR_LOCK_TIMEOUT': '0'})
    line = assert_failed_for_people(second, 'another git-cinnabar process')
    assert 'retry' in line
    assert not any(raw in second.err for raw in RAW_GIT), second.describe()
    errors = [x for x in second.err.splitlines()
              if x.startswith(('fatal:', 'error:'))]
    assert errors == [line], second.describe()
    # The first is still in the server's hook: nothing changed yet.
    assert rev_parse(work, 'refs/cinnabar/metadata') == before
    first.assert_succeeds()
    assert_consistent(hg, repo, work)


def test_push_waits_for_fetch(hg, slow_server, request):
    repo, work = slow_server
    (work / 'pushed').write_text('pushed\n')
    git('add', 'pushed', cwd=work)
    commit = git_commit(work, 'pushed while fetching', AUTHOR,
                        '1700000000 +0000')
    first = SlowFetch(work)
    request.addfinalizer(first.kill)
    # On the changeset the clone had: the server's newer one is another
    # head of default, so the push needs --force, as hg push -f would.
    pushed = git('push', '--force', 'origin',
                 'HEAD:refs/heads/branches/default/tip', cwd=work,
                 check=False, timeout=120)
    assert_pushed(pushed)
    assert WAIT_SAYS in pushed.err, pushed.describe()
    first.assert_succeeds()
    node = pushed_nodes(work, [commit])[commit]
    assert node in hg.nodes(repo)
    git('fsck', '--no-progress', cwd=work)
    assert_no_traceback(git('cinnabar', 'fsck', cwd=work))


def test_gc_during_fetch(hg, slow_server, request):
    repo, work = slow_server
    first = SlowFetch(work)
    request.addfinalizer(first.kill)
    gc = git('gc', '--quiet', cwd=work, check=False, timeout=120)
    assert gc.returncode == 0, gc.describe()
    first.assert_succeeds()
    assert_consistent(hg, repo, work)


def test_fetch_in_a_linked_worktree_shares_the_lock(hg, slow_server, request,
                                                    tmp_path):
    """A linked worktree's fetch updates the same metadata: it takes the
    lock of the common git directory (named by the worktree's
    `commondir`), not one of its own."""
    repo, work = slow_server
    linked = tmp_path / 'linked'
    git('worktree', 'add', '-q', '--detach', str(linked), cwd=work)
    first = SlowFetch(work)
    request.addfinalizer(first.kill)
    second = git('fetch', 'origin', cwd=linked, check=False,
                 extra_env={'GIT_CINNABAR_LOCK_TIMEOUT': '0'})
    assert_failed_for_people(second, 'another git-cinnabar process')
    assert not (work / '.git' / 'worktrees' / 'linked' /
                'cinnabar.lock').exists()
    first.assert_succeeds()
    assert_consistent(hg, repo, work)
