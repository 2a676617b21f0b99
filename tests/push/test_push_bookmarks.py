"""Pushing to refs/heads/bookmarks/<name> sets hg bookmarks.

In order, on one server and one clone:
1. a commit the server already has, pushed to bookmarks/base: the
   bookmark is created there, and no changeset is sent;
2. a new commit on the default branch pushed to bookmarks/feature: the
   changeset is sent and the bookmark created on it;
3. a child of it pushed to bookmarks/feature: a fast-forward, the
   bookmark moves;
4. a sibling of that child (not a fast-forward): refused, with a message,
   and nothing changes, neither on the server (bookmark, changesets) nor
   under refs/cinnabar and refs/remotes in the clone.
After each accepted push, a fetch imports nothing (the default branch's
tip moves along with the bookmark: the clone already has that commit).
"""

import pytest

from lib.git import clone, git, rev_parse
from lib.push import Author, ServerState, assert_fetch_imports_nothing
from lib.push import assert_hg_verify, assert_pushed, assert_refused
from lib.push import git_commit, make_hg_repo, nothing_changes
from lib.push import pushed_nodes, push, writable_remote

AUTHOR = Author('Book Keeper', 'books@example.com')
ORIGIN = 'refs/remotes/origin/'
DEFAULT_TIP = ORIGIN + 'branches/default/tip'
FEATURE = 'refs/heads/bookmarks/feature'


def commit_file(repo, path, text, message, date):
    (repo / path).write_text(text)
    git('add', path, cwd=repo)
    return git_commit(repo, message, AUTHOR, date)


def fetch_moves_default_tip(repo, commit):
    """What a fetch changes after a push moved the default branch's tip
    to `commit` through a bookmark ref."""
    return {DEFAULT_TIP: commit, ORIGIN + 'HEAD': commit,
            'refs/cinnabar/refs/heads/branches/default/tip': commit}


@pytest.mark.parametrize('transport', ('http', 'ssh'))
def test_bookmarks_create_move_and_refuse(transport, hg, hg_serve,
                                          tmp_path, monkeypatch):
    server = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    src = writable_remote(transport, server, hg_serve, tmp_path,
                          monkeypatch.setenv)
    work = tmp_path / 'work'
    clone(src.url, work)
    base = rev_parse(work, 'HEAD')
    base_node = hg.nodes(server)[0]

    # 1. A bookmark on a changeset the server has.
    before = ServerState(hg, server)
    assert_pushed(push(work, 'origin', 'HEAD:refs/heads/bookmarks/base'))
    assert hg.bookmarks(server) == {'base': base_node}
    assert ServerState(hg, server).changesets == before.changesets
    assert rev_parse(work, ORIGIN + 'bookmarks/base') == base
    assert_fetch_imports_nothing(work, 'origin')

    # 2. A bookmark on a new changeset.
    first = commit_file(work, 'file', 'first\n', 'First feature commit',
                        '1700000000 +0200')
    assert_pushed(push(work, 'origin', f'HEAD:{FEATURE}'))
    assert_hg_verify(hg, server)
    first_node = pushed_nodes(work, [first])[first]
    assert hg.bookmarks(server) == {'base': base_node, 'feature': first_node}
    assert hg.heads(server) == [(first_node, 'default')]
    assert rev_parse(work, ORIGIN + 'bookmarks/feature') == first
    assert_fetch_imports_nothing(work, 'origin',
                                 moves=fetch_moves_default_tip(work, first))

    # 3. A fast-forward moves it.
    second = commit_file(work, 'file', 'second\n', 'Second feature commit',
                         '1700000100 +0200')
    assert_pushed(push(work, 'origin', f'HEAD:{FEATURE}'))
    assert_hg_verify(hg, server)
    second_node = pushed_nodes(work, [second])[second]
    assert hg.bookmarks(server) == {'base': base_node,
                                    'feature': second_node}
    assert rev_parse(work, ORIGIN + 'bookmarks/feature') == second
    assert_fetch_imports_nothing(work, 'origin',
                                 moves=fetch_moves_default_tip(work, second))

    # 4. Not a fast-forward: refused.
    git('reset', '-q', '--hard', first, cwd=work)
    commit_file(work, 'other', 'elsewhere\n', 'Another way',
                '1700000200 -0100')
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'HEAD:{FEATURE}')
    assert_refused(result, 'bookmarks/feature',
                   ('fast-forward', 'fetch first'))
    assert hg.bookmarks(server)['feature'] == second_node
