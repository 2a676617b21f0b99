"""The disk filling up (a size-limited tmpfs the test mounts, as root)
during a clone, a fetch and a push over HTTP: each fails with a clear
error and no traceback, the clone's refs are as before, and once there
is room again the next fetch or push is right and fsck is clean.
"""

import os
import subprocess

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import clone, git, git2hg, hg2git, refs, rev_parse
from lib.push import Author, git_commit, hg_commit, make_hg_repo

AUTHOR = Author('Full Disk', 'full@example.com')
SIZE = '2m'
BIG = 3 * 1024 * 1024
DEFAULT_TIP = 'refs/remotes/origin/branches/default/tip'
# What a failed fetch must leave as it was (refs/cinnabar/refs/ and the
# like are scratch refs, cleared before each import: cinnabar.remote).
KEPT_REFS = ('refs/heads', 'refs/remotes', 'refs/tags',
             'refs/cinnabar/metadata', 'refs/notes')
FULL_SAYS = ('No space left on device', 'Out of diskspace')


@pytest.fixture
def small_disk(tmp_path):
    """A directory on a tmpfs of SIZE, unmounted after the test."""
    if os.geteuid() != 0:
        pytest.fail('mounting a tmpfs needs root (CI runs as root)')
    mount = tmp_path / 'small'
    mount.mkdir()
    subprocess.run(['mount', '-t', 'tmpfs', '-o', f'size={SIZE}', 'tmpfs',
                    str(mount)], check=True)
    yield mount
    subprocess.run(['umount', '-l', str(mount)], check=True)


def random_text(size):
    return os.urandom(size // 2).hex()


def fill(disk, leave=64 * 1024):
    """A file taking all the room of `disk` but `leave` bytes."""
    stat = os.statvfs(disk)
    free = stat.f_bavail * stat.f_frsize
    filler = disk / 'filler'
    with open(filler, 'wb') as f:
        f.write(b'\0' * max(0, free - leave))
    return filler


@pytest.fixture
def server(hg, hg_serve, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'server', {'small': 'small\n'})
    return repo, hg_serve(repo)


def test_clone_on_a_full_disk(hg, server, small_disk):
    repo, served = server
    hg_commit(hg, repo, {'big': random_text(BIG)}, 'too big for the disk')
    result = clone(f'hg::{served.url}', small_disk / 'work', check=False)
    assert_failed_for_people(result)
    assert any(says in result.err for says in FULL_SAYS), result.describe()
    assert not (small_disk / 'work').exists()


def test_fetch_on_a_full_disk(hg, server, small_disk):
    repo, served = server
    work = small_disk / 'work'
    assert_no_traceback(clone(f'hg::{served.url}', work))
    before = refs(work, *KEPT_REFS)
    hg_commit(hg, repo, {'big': random_text(BIG // 4)}, 'big')
    filler = fill(small_disk)
    result = git('fetch', 'origin', cwd=work, check=False)
    assert_failed_for_people(result)
    assert any(says in result.err for says in FULL_SAYS), result.describe()
    assert refs(work, *KEPT_REFS) == before
    filler.unlink()
    assert_no_traceback(git('fetch', 'origin', cwd=work))
    tip = hg.nodes(repo, 'tip')[0]
    assert rev_parse(work, DEFAULT_TIP) == hg2git(work, [tip])[tip]
    git('fsck', '--no-progress', cwd=work)
    assert_no_traceback(git('cinnabar', 'fsck', cwd=work))


def test_push_on_a_full_disk(hg, server, small_disk):
    repo, served = server
    work = small_disk / 'work'
    assert_no_traceback(clone(f'hg::{served.url}', work))
    (work / 'big').write_text(random_text(BIG // 8))
    git('add', 'big', cwd=work)
    commit = git_commit(work, 'pushed on a full disk', AUTHOR,
                        '1700000000 +0000')
    before = refs(work, *KEPT_REFS)
    filler = fill(small_disk, leave=4096)
    result = git('push', 'origin', 'HEAD:refs/heads/branches/default/tip',
                 cwd=work, check=False, timeout=300)
    filler.unlink()
    assert_failed_for_people(result)
    assert any(says in result.err for says in FULL_SAYS), result.describe()
    assert refs(work, *KEPT_REFS) == before
    assert_no_traceback(git('fetch', 'origin', cwd=work))
    result = git('push', 'origin', 'HEAD:refs/heads/branches/default/tip',
                 cwd=work, check=False, timeout=300)
    assert result.returncode == 0, result.describe()
    assert git2hg(work, [commit])[commit] == hg.nodes(repo, 'tip')[0]
    git('fsck', '--no-progress', cwd=work)
    assert_no_traceback(git('cinnabar', 'fsck', cwd=work))
