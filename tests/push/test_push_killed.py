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

And killed before it sends (`before-sending`: it has worked out what
to push and asks the server to take it, but a relay holds that request
back: lib.hostile_http's `hold`, tests/bin/ssh-holding-wrapper): the
server is unchanged, and the next push lands everything.

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
from lib.env import SSH_WRAPPER, TESTS
from lib.git import NULL_ID, clone, git, git2hg, hg_url, refs
from lib.hostile_http import HostileServer
from lib.proc import kill_group
from lib.push import Author, assert_hg_verify, assert_pushed, git_commit
from lib.push import make_hg_repo, writable_remote

AUTHOR = Author('Killed Pusher', 'killed@example.com')
HOOKS = {'applying': 'pretxnchangegroup', 'applied': 'changegroup'}
PUSH_TIP = 'HEAD:refs/heads/branches/default/tip'
SSH_HOLDING_WRAPPER = TESTS / 'bin' / 'ssh-holding-wrapper'


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


def push_killed_at(work, marker, env=None):
    """Start `git push` (with `env` added to the environment), SIGKILL
    its process group once `marker` exists."""
    proc = subprocess.Popen(['git', 'push', 'origin', PUSH_TIP], cwd=work,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            env=dict(os.environ, **(env or {})))
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


def held_unbundle(transport, server, hg_serve, marker, request):
    """(URL, environment, release): through that URL with that
    environment, the `unbundle` request of a push to `server` is held
    back, `marker` made once it is; after release(), no longer."""
    if transport == 'ssh':
        return (hg_url(f'ssh://localhost/{server}'),
                {'GIT_SSH_COMMAND': str(SSH_HOLDING_WRAPPER),
                 'CINNABAR_TEST_SSH_HOLD': f'unbundle:{marker}'},
                lambda: None)
    relay = HostileServer(upstream_port=hg_serve(server).port)
    request.addfinalizer(relay.stop)
    relay.start().hold['unbundle'] = marker
    return hg_url(relay.url('a') + '/'), {}, relay.hold.clear


@pytest.mark.parametrize('transport', ('http', 'ssh'))
def test_push_killed_before_sending(transport, hg, hg_serve, tmp_path,
                                    request):
    server = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    marker = tmp_path / 'held'
    url, env, release = held_unbundle(transport, server, hg_serve, marker,
                                      request)
    work = tmp_path / 'work'
    clone(url, work)
    commits = []
    for text in ('one\n', 'two\n'):
        (work / 'file').write_text(text)
        git('add', 'file', cwd=work)
        commits.append(git_commit(work, 'held ' + text, AUTHOR,
                                  '1700000000 +0000'))
    remote_refs = refs(work, 'refs/remotes')

    push_killed_at(work, marker, env)
    assert len(hg.nodes(server)) == 1
    assert_no_traceback(git('fetch', 'origin', cwd=work))
    assert refs(work, 'refs/remotes') == remote_refs
    release()
    result = git('push', 'origin', PUSH_TIP, cwd=work, check=False,
                 timeout=120,
                 extra_env={'GIT_SSH_COMMAND': str(SSH_WRAPPER)})
    assert_pushed(result)
    assert len(hg.nodes(server)) == 3
    mapped = git2hg(work, commits)
    assert [mapped[c] for c in commits] == hg.nodes(server, '1:2')
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
    # The push's request failed (the connection cut, or refused if the
    # helper had to open another), said about the repository's URL, never
    # with the internal query string.
    assert '[remote rejected]' in err and \
        f'cannot reach {served.url.rstrip("/")}' in err, err
    assert 'cmd=' not in err, err
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
