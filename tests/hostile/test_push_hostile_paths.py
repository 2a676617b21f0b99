"""Pushes of git trees holding paths Mercurial refuses are refused before
anything is sent: the server is unchanged (`hg verify` clean, same
changesets), and so are the clone's refs under refs/cinnabar and
refs/remotes.  The message names the file.

The paths are those Mercurial's path auditor (pathutil.py) and manifest
writer refuse, on every platform: '\\n' or '\\r' in a name, a `.hg`
component at the top or below (in any case, with code points HFS+ ignores,
or as the Windows short names `HG~1`, `HG8B6C~2`), `..` and `.`, an
absolute path or an empty component (a tree entry with an empty name),
and paths deeper than 4096 components (git's core.maxTreeDepth).  Windows
reserved names (`CON`, `a:b`) are only refused by hg on Windows, and are
pushed.

The trees are written as loose objects (lib.gitobj): git's porcelain
refuses to make most of them.
"""

import pytest

from lib.git import clone, git, refs, rev_parse
from lib.gitobj import ObjectWriter
from lib.push import BRANCH_TIP, assert_hg_verify, assert_pushed
from lib.push import assert_refused, make_hg_repo, nothing_changes, push
from lib.push import writable_remote

TIP = BRANCH_TIP.format('default')
ENV = {
    'GIT_AUTHOR_NAME': 'Hostile Pusher',
    'GIT_AUTHOR_EMAIL': 'hostile@example.com',
    'GIT_AUTHOR_DATE': '1700000000 +0000',
    'GIT_COMMITTER_NAME': 'Hostile Pusher',
    'GIT_COMMITTER_EMAIL': 'hostile@example.com',
    'GIT_COMMITTER_DATE': '1700000000 +0000',
}

# (path components, what the message says, how the message shows it)
REFUSED = [
    ((b'evil\nname',), "'\\n' or '\\r'", 'evil\\nname'),
    ((b'evil\rname',), "'\\n' or '\\r'", 'evil\\rname'),
    ((b'.hg', b'x'), '.hg', '.hg/x'),
    ((b'.HG.', b'hgrc'), '.hg', '.HG./hgrc'),
    ((b'sub', b'.hg', b'x'), '.hg', 'sub/.hg/x'),
    (('.h\u200cg'.encode(), b'x'), '.hg', '/x'),
    ((b'HG~1', b'x'), 'short name', 'HG~1/x'),
    ((b'HG8B6C~2', b'x'), 'short name', 'HG8B6C~2/x'),
    ((b'sub', b'hg8b6c~1', b'x'), 'short name', 'sub/hg8b6c~1/x'),
    ((b'sub', b'Hg8b6C~12'), 'short name', 'sub/Hg8b6C~12'),
    ((b'sub', b'..', b'x'), "'..'", 'sub/../x'),
    ((b'sub', b'.', b'x'), "'.' or '..'", 'sub/./x'),
    ((b'', b'x'), 'absolute', "'/x'"),
    ((b'sub', b'', b'x'), 'empty component', 'sub//x'),
]


@pytest.fixture
def pushable(hg, hg_serve, tmp_path, monkeypatch):
    """pushable(transport) -> (server, clone, ObjectWriter)."""
    def make(transport):
        server = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
        src = writable_remote(transport, server, hg_serve, tmp_path,
                              monkeypatch.setenv)
        work = tmp_path / 'work'
        clone(src.url, work)
        return server, work, ObjectWriter(work)
    return make


def commit_with(work, objects, tree):
    head = rev_parse(work, 'HEAD')
    return git('commit-tree', tree, '-p', head, '-m', 'hostile', cwd=work,
               extra_env=ENV).out.strip()


def tree_plus(work, objects, parts, data=b'hostile\n'):
    """HEAD's tree with the file `parts` added."""
    files = {(b'file',): objects.blob(b'base\n'),
             tuple(parts): objects.blob(data)}
    return objects.tree_of_paths(files)


def assert_no_signal(result):
    assert result.returncode > 0, result.describe()
    assert 'Aborted' not in result.err and 'Segmentation' not in result.err


def assert_refused_cleanly(hg, server, work, commit, *words):
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'{commit}:{TIP}')
    assert_refused(result, *words)
    assert_no_signal(result)
    assert_hg_verify(hg, server)
    return result


@pytest.mark.parametrize('transport', ['http', 'ssh'])
def test_newline_in_name_refused(transport, pushable, hg):
    server, work, objects = pushable(transport)
    commit = commit_with(work, objects,
                         tree_plus(work, objects, [b'evil\nname']))
    result = assert_refused_cleanly(hg, server, work, commit,
                                    "'evil\\nname'", "'\\n' or '\\r'")
    assert "cannot push the file 'evil\\nname'" in result.err


def test_paths_hg_refuses(pushable, hg):
    """Over a local path: every case in turn, then a path 5,000 deep, then
    names close to the refused ones, which hg accepts on POSIX: they are
    pushed, and hg sees them as they are.  The refs are compared after
    each refusal, the server once after all of them (hg is slow to
    start)."""
    server, work, objects = pushable('local')
    cases = [(commit_with(work, objects, tree_plus(work, objects, parts)),
              why, shown) for parts, why, shown in REFUSED]
    cases.append((commit_with(work, objects, objects.deep_tree(5000)),
                  '4096', 'd/d/d/d'))
    with nothing_changes(hg, server, work):
        for commit, why, shown in cases:
            before = refs(work, 'refs/cinnabar', 'refs/remotes')
            result = push(work, 'origin', f'{commit}:{TIP}')
            assert_refused(result, why, shown)
            assert_no_signal(result)
            assert refs(work, 'refs/cinnabar', 'refs/remotes') == before
    assert_hg_verify(hg, server)

    names = [b'.hgx', b'x.hg', b'.hgignore', b'hg~x', b'...', b'CON',
             b'a:b', b'sub/.hga', b'sub/hg~1a', b'hg8b6c~', b'hg8b6c~1x',
             b'xhg8b6c~1', b'hg8b6d~1', b'sub/hg8b6c~1~2', b'hg8b6~1']
    files = {(b'file',): objects.blob(b'base\n')}
    files.update({tuple(n.split(b'/')): objects.blob(n) for n in names})
    commit = commit_with(work, objects, objects.tree_of_paths(files))
    assert_pushed(push(work, 'origin', f'{commit}:{TIP}'))
    assert_hg_verify(hg, server)
    out = hg('-R', server, 'manifest', '-r', 'tip').out.split('\n')
    assert sorted(o for o in out if o) == sorted(
        [n.decode() for n in names] + ['file'])
