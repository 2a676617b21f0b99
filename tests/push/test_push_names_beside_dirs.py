"""Pushing files whose names sort next to a directory's, checked against
what Mercurial's own `hg commit` makes of the same changes.

git orders a tree's entries as if a directory's name ended with '/':
`a.b` (0x2e) and `a-c` come before the directory `a/`, `a0` after it,
while Mercurial orders whole paths byte by byte (`a.b` < `a/x` < `a0`).
A push that pairs the entries of two git trees in the wrong order sees
files of `a/` as changed when only `a.b` is (the changeset then lists
`a.b a/x a/y` and gives `a/x`, `a/y` new revisions without parents).

The same scripted series of working-tree changes is committed with git
and pushed, and replayed with `hg addremove` (`hg mv --after` for the
renames the push records as copies) and `hg commit` in another hg
repository: every changeset's manifest id (which covers every file
revision's id, and so its parents and copy metadata) and files list must
be Mercurial's own.  Each series is pushed whole (parents in the same
push) and one commit per push (parents already on the server), to an
empty repository.
"""

import os
import shutil
import stat
from pathlib import Path

import pytest

from lib.git import git, hg_url
from lib.push import Author, assert_hg_verify, assert_pushed, git_commit
from lib.push import push

AUTHOR = Author('Ann Author', 'ann@example.com')
TIP = 'refs/heads/branches/default/tip'

# Each step: (message, changes); a change is path -> text (a file),
# path -> ('x', text) (an executable file), path -> None (removed),
# or ('mv', source, dest) (an exact rename).
BESIDE = [
    ('files beside a directory', {
        'a/x': 'ax\n', 'a/y': 'ay\n', 'a.b': 'ab\n', 'a-c': 'ac\n',
        'a0': 'a0\n', 'x/y/z': 'xyz\n', 'x/y.z': 'x y.z\n',
        'x/y0': 'x y0\n', 'x.y': 'xy\n', 'x/q': 'xq\n'}),
    ('remove a.b', {'a.b': None}),
    ('add a.b back, modify a-c', {'a.b': 'ab again\n', 'a-c': 'ac 2\n'}),
    ('chmod a0 and x/y.z', {'a0': ('x', 'a0\n'), 'x/y.z': ('x', 'x y.z\n')}),
    ('rename a-c to a.c', [('mv', 'a-c', 'a.c')]),
    ('modify beside and inside', {'x/y.z': ('x', 'x y.z 2\n'),
                                  'x/y/z': 'xyz 2\n', 'a0': 'a0 2\n'}),
    ('remove nested beside', {'x/y.z': None, 'x/y0': None}),
    ('rename into the directory', [('mv', 'a.b', 'a/b')]),
]

SWAP = [
    ('a file a0 and a directory a', {
        'a/x': 'ax\n', 'a0': 'a0\n', 'a.b': 'ab\n', 'x/y': 'xy\n'}),
    ('a0 becomes a directory', {'a0': None, 'a0/f': 'a0f\n'}),
    ('a.b becomes a directory', {'a.b': None, 'a.b/g': 'abg\n'}),
    ('x/y becomes a directory', {'x/y': None, 'x/y/z': 'xyz\n'}),
    ('a0 becomes a file again', {'a0/f': None, 'a0': 'a0 back\n'}),
    ('the directory a becomes a file', {'a/x': None, 'a': 'a file\n'}),
    ('x/y becomes a file again', {'x/y/z': None, 'x/y': 'xy back\n'}),
]

SERIES = {'beside': BESIDE, 'swap': SWAP}


def apply_changes(root, changes):
    """Change the working tree at `root`; returns the renames made."""
    renames = []
    if isinstance(changes, list):
        for _, source, dest in changes:
            (root / dest).parent.mkdir(parents=True, exist_ok=True)
            os.rename(root / source, root / dest)
            renames.append((source, dest))
        return renames
    # Removals first: a file may make way for a directory of its name.
    for path, content in sorted(changes.items(),
                                key=lambda i: i[1] is not None):
        target = root / path
        if content is None:
            target.unlink()
            parent = target.parent
            while parent != root and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
            continue
        executable = isinstance(content, tuple)
        text = content[1] if executable else content
        if target.is_dir():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        mode = target.stat().st_mode
        if executable:
            mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        else:
            mode &= ~(stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        target.chmod(mode)
    return renames


def git_step(repo, n, message, changes):
    apply_changes(repo, changes)
    git('add', '-A', cwd=repo)
    return git_commit(repo, message, AUTHOR, f'{1600000000 + n} +0000')


def hg_step(hg, repo, n, message, changes):
    renames = apply_changes(repo, changes)
    hg('-R', repo, 'addremove', '-q', '-s', '0', cwd=repo)
    for source, dest in renames:
        hg('-R', repo, 'mv', '--after', source, dest, cwd=repo)
    hg('-R', repo, 'commit', '-q', '-m', message, '-u', AUTHOR.hg_user,
       '-d', f'{1600000000 + n} 0', cwd=repo)


def changesets(hg, repo):
    """[(manifest id, files)] of every changeset of `repo`, in order."""
    count = int(hg('-R', repo, 'log', '-r', 'tip', '-T', '{rev}').out) + 1
    result = []
    for rev in range(count):
        raw = hg('-R', repo, 'debugdata', '-c', str(rev)).stdout
        head = raw.split(b'\n\n', 1)[0].split(b'\n')
        result.append((head[0].decode(), [f.decode() for f in head[3:]]))
    return result


def manifest(hg, repo, rev):
    return hg('-R', repo, 'manifest', '--debug', '-r', str(rev)).out


@pytest.mark.parametrize('series', sorted(SERIES))
@pytest.mark.parametrize('pushes', ['whole', 'each'])
def test_push_equals_hg_commit(hg, tmp_path, series, pushes):
    steps = SERIES[series]
    server, reference = tmp_path / 'server', tmp_path / 'reference'
    for repo in (server, reference):
        hg('init', repo)
    work = tmp_path / 'work'
    git('init', '-q', work)
    for n, (message, changes) in enumerate(steps):
        git_step(work, n, message, changes)
        hg_step(hg, reference, n, message, changes)
        if pushes == 'each':
            assert_pushed(push(work, hg_url(server), f'HEAD:{TIP}'),
                          f'of step {n} ({message})')
    if pushes == 'whole':
        assert_pushed(push(work, hg_url(server), f'HEAD:{TIP}'))
    assert_hg_verify(hg, server)
    ours, theirs = changesets(hg, server), changesets(hg, reference)
    assert len(ours) == len(theirs) == len(steps)
    for rev, (mine, hgs) in enumerate(zip(ours, theirs)):
        assert mine[1] == hgs[1], (
            f'changeset {rev} ({steps[rev][0]}) lists other files than '
            f'hg commit: {mine[1]} instead of {hgs[1]}')
        assert mine[0] == hgs[0], (
            f'changeset {rev} ({steps[rev][0]}) has another manifest than '
            f'hg commit:\n--- pushed\n{manifest(hg, server, rev)}'
            f'--- hg commit\n{manifest(hg, reference, rev)}')


def test_reference_is_not_our_own(hg, tmp_path):
    """The reference repository is made by hg alone: no git involved."""
    reference = Path(tmp_path) / 'reference'
    hg('init', reference)
    for n, (message, changes) in enumerate(BESIDE[:2]):
        hg_step(hg, reference, n, message, changes)
    assert changesets(hg, reference)[1][1] == ['a.b']
