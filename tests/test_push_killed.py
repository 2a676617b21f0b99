"""A push whose client is killed (SIGKILL: git, git-remote-hg, the
helper, ssh; not the ssh wrapper's server side) at a point of the
exchange the server marks with a hook, over HTTP and SSH:

- `applying`: while the server runs `pretxnchangegroup`, before its
  transaction is committed (the server then finishes on its own, or,
  over SSH, may abort on the closed connection: either is fine);
- `applied`: in the `changegroup` hook, after the server committed the
  changesets, before our side could record anything.

Either way, the next `git fetch` gives the clone whatever the server
kept, each changeset as the very commit that was pushed (the conversion
is exact both ways); the next `git push` then lands what is missing, or
has nothing to send; `hg verify`, `git fsck` and `git cinnabar fsck` are
clean. No lock is left behind (cinnabar.repolock).

And the server killed while it applies a push: the ref is rejected with
why, nothing of ours changes, and once the server is recovered the push
lands.
"""

import os
import signal
import subprocess
import time

import pytest

from lib.checks import assert_no_traceback
from lib.git import NULL_ID, clone, git, git2hg, refs
from lib.proc import kill_group
from lib.push import Author, assert_hg_verify, assert_pushed, git_commit
from lib.push import make_hg_repo, writable_remote

AUTHOR = Author('Killed Pusher', 'killed@example.com')
HOOKS = {'applying': 'pretxnchangegroup', 'applied': 'changegroup'}
PUSH_TIP = 'HEAD:refs/heads/branches/default/tip'


def kill_client(pgid):
    """SIGKILL the processes of the group `pgid` but the `hg serve
    --stdio` the ssh wrapper runs there (and its `sh -c`): a real ssh
    server's hg is not in the client's group, and sees the connection
    close instead."""
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/cmdline', 'rb') as f:
                words = f.read().split(b'\0')
            if os.getpgid(int(entry)) != pgid:
                continue
        except OSError:
            continue
        if b'--stdio' in b' '.join(words):
            continue
        try:
            os.kill(int(entry), signal.SIGKILL)
        except ProcessLookupError:
            pass


def push_killed_at(work, marker):
    """Start `git push`, SIGKILL its process group once `marker` exists."""
    proc = subprocess.Popen(['git', 'push', 'origin', PUSH_TIP], cwd=work,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            kill_group(proc.pid)
            out, err = proc.communicate()
            raise AssertionError('the push never reached the hook:\n'
                                 + err.decode(errors='replace'))
        time.sleep(0.02)
    kill_client(proc.pid)
    proc.communicate()


def wait_unlocked(repo, timeout=30):
    """Wait for the server (still in its hook) to release its lock."""
    lock = repo / '.hg' / 'store' / 'lock'
    deadline = time.monotonic() + timeout
    while os.path.lexists(lock):
        assert time.monotonic() < deadline, 'the server keeps its lock'
        time.sleep(0.05)


@pytest.mark.parametrize('point', sorted(HOOKS))
@pytest.mark.parametrize('transport', ('http', 'ssh'))
def test_push_killed_then_fetch_and_push(transport, point, hg, hg_serve,
                                         tmp_path, monkeypatch):
    server = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    marker = tmp_path / 'reached'
    with open(server / '.hg' / 'hgrc', 'a') as hgrc:
        hgrc.write(f'[hooks]\n{HOOKS[point]}.test = '
                   f'touch {marker}; sleep 2\n')
    src = writable_remote(transport, server, hg_serve, tmp_path,
                          monkeypatch.setenv)
    work = tmp_path / 'work'
    clone(src.url, work)
    (work / 'file').write_text('pushed\n')
    git('add', 'file', cwd=work)
    commit = git_commit(work, 'killed while pushed', AUTHOR,
                        '1700000000 +0000')

    push_killed_at(work, marker)
    wait_unlocked(server)
    kept = len(hg.nodes(server)) == 2

    assert_no_traceback(git('fetch', 'origin', cwd=work))
    mapped = git2hg(work, [commit])[commit]
    if kept:
        assert mapped == hg.nodes(server, 'tip')[0], (
            'the fetch did not give the pushed commit back')
    else:
        assert mapped == NULL_ID
    marker.unlink(missing_ok=True)
    result = git('push', 'origin', PUSH_TIP, cwd=work, check=False,
                 timeout=300)
    assert_pushed(result)
    assert (marker.exists()) == (not kept), result.describe()
    assert git2hg(work, [commit])[commit] == hg.nodes(server, 'tip')[0]
    assert len(hg.nodes(server)) == 2
    assert_hg_verify(hg, server)
    git('fsck', '--no-progress', cwd=work)
    assert_no_traceback(git('cinnabar', 'fsck', cwd=work))


def test_server_killed_while_applying(hg, hg_serve, tmp_path):
    """The server (`hg serve`, its whole process group) SIGKILLed while it
    applies a push: a clear error, no ref of ours changed; after
    `hg recover` on the server, the push lands."""
    server = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    marker = tmp_path / 'reached'
    with open(server / '.hg' / 'hgrc', 'a') as hgrc:
        hgrc.write(f'[hooks]\npretxnchangegroup.test = '
                   f'touch {marker}; sleep 30\n')
    served = hg_serve(server)
    work = tmp_path / 'work'
    clone(f'hg::{served.url}', work)
    (work / 'file').write_text('pushed\n')
    git('add', 'file', cwd=work)
    commit = git_commit(work, 'the server dies', AUTHOR, '1700000000 +0000')
    before = refs(work, 'refs/remotes', 'refs/cinnabar/metadata')
    proc = subprocess.Popen(['git', 'push', 'origin', PUSH_TIP], cwd=work,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    kill_group(served.proc.pid)
    _, err = proc.communicate(timeout=120)
    err = err.decode(errors='replace')
    assert proc.returncode != 0, err
    assert 'Traceback' not in err, err
    assert '[remote rejected]' in err and 'cmd=unbundle failed' in err, err
    assert refs(work, 'refs/remotes', 'refs/cinnabar/metadata') == before
    served.stop()

    hg('-R', server, 'recover', check=False)
    with open(server / '.hg' / 'hgrc', 'w') as hgrc:
        hgrc.write('')
    again = hg_serve(server)
    git('remote', 'set-url', 'origin', f'hg::{again.url}', cwd=work)
    assert_pushed(git('push', 'origin', PUSH_TIP, cwd=work, check=False,
                      timeout=300))
    assert git2hg(work, [commit])[commit] == hg.nodes(server, 'tip')[0]
    assert_hg_verify(hg, server)
