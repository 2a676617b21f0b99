"""A push whose client side fails at a chosen system call, through
strace's fault injection, to an `hg serve` on 127.0.0.1 (whose own
writes are never faulted). Only one process is traced: git-remote-hg's
Python (`remote`) or the helper (`helper`), through a wrapper that runs
it under strace; the call to fault is found in a trace of the same
push, unfaulted, on copies of both repositories.

- `error=ENOSPC` or `error=EIO`: the push fails (git reports the ref
  `[remote rejected]`, exits non-zero) with why, no traceback; refs and
  metadata are as before, nothing of ours is left in TMPDIR. Where the
  server already took the changesets (the helper failing to record
  them), the message says so, and `git fetch` then `git push` end with
  the ids an unfaulted push gives.
- `signal=KILL`: the process dies there; the next push lands the
  commits with those ids, and leaves nothing of ours behind.

strace counts each call per process: `when=N` faults the N-th.
"""

import errno
import os
import re
import shutil
from pathlib import Path

import pytest

from lib.checks import assert_no_traceback, error_lines
from lib.env import helper_under_test
from lib.git import clone, git, git2hg
from lib.push import Author, git_commit, make_hg_repo

AUTHOR = Author('Faulted Pusher', 'faulted@example.com')
PUSH_TIP = 'HEAD:refs/heads/branches/default/tip'
STRACE = shutil.which('strace')
CALLS = 'write,rename,unlink,fsync,ftruncate'
# What git itself leaves when one of its processes dies (not ours).
GIT_TEMPORARY = ('tmp_obj_', 'tmp_idx_', 'tmp_rev_')


def wrap(bin_dir, strace_args):
    """Scripts in `bin_dir` running git-remote-hg and the helper under
    `strace <strace_args>`: {side: its script}."""
    bin_dir.mkdir(exist_ok=True)
    scripts = {}
    for side, real, name in (
            ('remote', shutil.which('git-remote-hg'), 'git-remote-hg'),
            ('helper', helper_under_test(), 'helper')):
        script = bin_dir / side / name
        script.parent.mkdir(exist_ok=True)
        args = ' '.join(strace_args.get(side, ()))
        strace = f'{STRACE} -qq {args} ' if args else ''
        script.write_text(f'#!/bin/sh\nexec {strace}{real} "$@"\n')
        script.chmod(0o755)
        scripts[side] = script
    return scripts


def push(work, tmpdir, wrapped=None, **kwargs):
    env = {'TMPDIR': str(tmpdir), 'PYTHONHASHSEED': '0'}
    if wrapped:
        env['PATH'] = f'{wrapped["remote"].parent}:{os.environ["PATH"]}'
        env['GIT_CINNABAR_HELPER'] = str(wrapped['helper'])
    return git('push', 'origin', PUSH_TIP, cwd=work, check=False,
               extra_env=env, timeout=120, **kwargs)


def repo_state(work):
    """What a failed push must leave as it was: every ref, and the files
    of the git directory but git's own temporary ones, the caches (named
    after the metadata they are made from, see helper/id-table.h), logs
    and the lock file (cinnabar.repolock: kept, flock(2)ed)."""
    refs = git('for-each-ref', '--format=%(refname) %(objectname)',
               cwd=work).out
    gitdir = Path(work) / '.git'
    files = sorted(
        str(p.relative_to(gitdir)) for p in gitdir.rglob('*')
        if p.is_file() and not p.name.startswith(GIT_TEMPORARY)
        and p.suffix != '.idx' and p.name not in ('index', 'cinnabar.lock')
        and 'logs' not in p.relative_to(gitdir).parts)
    return refs, files


def leftovers(work, tmpdir):
    """What is left of ours: anything in TMPDIR; in the git directory,
    temporary names of ours (`<name>-<pid>-<random>`, cinnabar.tmpfiles),
    locks, and pack files being written (`tmp_pack_`, but empty ones:
    git's fast-import, which `git fetch` starts, leaves those)."""
    found = [str(p) for p in Path(tmpdir).iterdir()]
    gitdir = Path(work) / '.git'
    for path in gitdir.rglob('*'):
        ours = re.fullmatch(r'[a-z0-9]+-\d+-\w+', path.name) and \
            path.parent.name == 'cinnabar'
        if ours or (path.name.endswith('.lock') and
                    path.name != 'cinnabar.lock') or (
                path.name.startswith('tmp_pack_') and path.stat().st_size):
            found.append(str(path))
    return sorted(found)


def nth_call(trace, call, target, last=False):
    """In a strace -y output (one process), the number of the first (or
    `last`) `call` whose first argument's path matches `target` (a
    regex), counting calls of that name."""
    count = 0
    found = []
    for line in trace.read_text().splitlines():
        if not line.startswith(call + '('):
            continue
        count += 1
        if re.search(target, line.split(',')[0]):
            found.append(count)
    assert found, f'no {call} on {target} in {trace}'
    return found[-1] if last else found[0]


class Case:
    """An hg repository served over HTTP, a clone with two new commits;
    `expected`, the hg ids an unfaulted push gives them, on copies of
    both, traced (`traces`, {side: path})."""

    def __init__(self, hg, hg_serve, tmp_path):
        self.hg = hg
        self.tmp = tmp_path
        self.server = make_hg_repo(hg, tmp_path / 'server',
                                   {'file': 'base\n'})
        self.work = tmp_path / 'work'
        clone(f'hg::{hg_serve(self.server).url}', self.work)
        self.commits = []
        for n in range(2):
            (self.work / 'file').write_text(f'changed {n}\n')
            (self.work / f'new{n}').write_text(f'new {n}\n' * 100)
            git('add', '.', cwd=self.work)
            self.commits.append(git_commit(
                self.work, f'change {n}', AUTHOR, f'170000000{n} +0000'))
        self.tmpdir = tmp_path / 'tmp'
        self.tmpdir.mkdir()
        self.traces = {s: tmp_path / f'{s}.trace' for s in ('remote',
                                                            'helper')}
        self.expected = self._unfaulted(hg_serve)
        self.before = repo_state(self.work)

    def _unfaulted(self, hg_serve):
        server = self.tmp / 'server-copy'
        shutil.copytree(self.server, server)
        work = self.tmp / 'work-copy'
        shutil.copytree(self.work, work, symlinks=True)
        git('remote', 'set-url', 'origin', f'hg::{hg_serve(server).url}',
            cwd=work)
        wrapped = wrap(self.tmp / 'trace-bin', {
            side: ('-y', '-e', f'trace={CALLS}', '-o', str(trace))
            for side, trace in self.traces.items()})
        result = push(work, self.tmpdir, wrapped)
        assert result.returncode == 0, result.describe()
        return self.hg.nodes(server, '1:')

    def push_faulted(self, side, call, target, action, last=False):
        """Push with the first (`last`) `call` of `side` on a path
        matching `target` faulted with `action`."""
        when = nth_call(self.traces[side], call, target, last)
        wrapped = wrap(self.tmp / 'fault-bin', {side: (
            '-o', '/dev/null', '-e', f'trace={call}',
            '-e', f'inject={call}:{action}:when={when}')})
        return push(self.work, self.tmpdir, wrapped)

    def pushed_ids(self):
        mapped = git2hg(self.work, self.commits)
        return [mapped[c] for c in self.commits]

    def assert_rejected(self, result, *words):
        """The push failed for people: the ref rejected, saying `words`,
        no traceback, no other error of ours."""
        assert result.returncode != 0, result.describe()
        assert_no_traceback(result)
        rejected = [line for line in result.err.splitlines()
                    if '[remote rejected]' in line]
        assert len(rejected) == 1 and all(
            w in rejected[0] for w in words), result.describe()
        assert [line for line in error_lines(result)
                if 'failed to push some refs' not in line] == [], \
            result.describe()

    def assert_recovers(self, fetch=False):
        """(After `git fetch`, with `fetch`) the next push lands the
        commits with the expected ids, and nothing of ours is left."""
        if fetch:
            assert_no_traceback(git('fetch', 'origin', cwd=self.work))
        result = push(self.work, self.tmpdir)
        assert result.returncode == 0, result.describe()
        assert_no_traceback(result)
        assert self.hg.nodes(self.server, '1:') == self.expected
        assert self.pushed_ids() == self.expected, result.describe()
        assert leftovers(self.work, self.tmpdir) == []
        git('fsck', '--no-progress', cwd=self.work)
        assert_no_traceback(git('cinnabar', 'fsck', cwd=self.work))


@pytest.fixture
def case(hg, hg_serve, tmp_path):
    if STRACE is None:
        pytest.fail('these tests need strace')
    return Case(hg, hg_serve, tmp_path)


@pytest.mark.parametrize('error', ('ENOSPC', 'EIO'))
def test_bundle_write_fails(case, error):
    """Early: the Python side cannot write the bundle it sends."""
    result = case.push_faulted('remote', 'write', r'/bundle>$',
                               f'error={error}')
    case.assert_rejected(result, 'cannot write',
                         os.strerror(getattr(errno, error)))
    assert repo_state(case.work) == case.before
    assert case.hg.nodes(case.server) == case.hg.nodes(case.server, '0')
    assert leftovers(case.work, case.tmpdir) == []
    case.assert_recovers()


@pytest.mark.parametrize('target', (
    r'/objects/pack/tmp_pack_\w+>$',
    r'/cinnabar/hg2git-',
    r'/refs/cinnabar/metadata\.lock>$',
), ids=('objects', 'id-table', 'metadata-ref'))
def test_recording_fails(case, target):
    """Once the server took the changesets, the helper cannot write
    their objects (the last write of the pack), an id table or the
    metadata ref."""
    result = case.push_faulted('helper', 'write', target, 'error=ENOSPC',
                               last=True)
    case.assert_rejected(result, 'the server took the changesets',
                         'git fetch')
    assert repo_state(case.work) == case.before
    assert case.hg.nodes(case.server, '1:') == case.expected
    case.assert_recovers(fetch=True)


@pytest.mark.parametrize('side, call, target, last', (
    ('remote', 'write', r'{tmpdir}/', False),
    ('remote', 'write', r'/bundle>$', False),
    ('helper', 'write', r'/objects/pack/tmp_pack_\w+>$', True),
    ('helper', 'rename', r'/refs/cinnabar/metadata\.lock"$', False),
), ids=('tmpdir', 'bundle', 'objects', 'metadata-ref'))
def test_killed_at_a_write(case, side, call, target, last):
    """The Python side killed at its first write under TMPDIR, or
    writing the bundle; the helper writing the objects of what the server
    took, or the metadata ref (git's lock of it left behind)."""
    target = target.replace('{tmpdir}', re.escape(str(case.tmpdir)))
    result = case.push_faulted(side, call, target, 'signal=KILL', last)
    assert result.returncode != 0, result.describe()
    case.assert_recovers(fetch=True)
