"""A git commit on top of a named branch's tip, pushed to that branch's
ref, becomes an hg changeset on that branch.

The server has `default` and `stable` (whose head is not the tip of the
repository).  The clone commits on top of
refs/remotes/origin/branches/stable/tip and pushes to
refs/heads/branches/stable/tip: the new changeset is on `stable`, a child
of its previous head, `stable` has only that head and `default` is
untouched; a fresh clone gives the same commits and a fetch after the
push imports nothing.
"""

import pytest

from lib.git import clone, git, rev_parse
from lib.push import BRANCH_TIP, Author, assert_fetch_imports_nothing
from lib.push import assert_fresh_clone_matches, assert_hg_verify
from lib.push import assert_pushed, changeset, git_commit, hg_commit
from lib.push import hg_date, make_hg_repo, pushed_nodes, push
from lib.push import writable_remote

STABLE = 'refs/remotes/origin/branches/stable/tip'
AUTHOR = Author('Stable Maintainer', 'stable@example.com')


def make_server(hg, path):
    """rev 0 (default) - 1 (stable); rev 0 - 2 (default)."""
    repo = make_hg_repo(hg, path, {'version': '1.0\n', 'notes': 'x\n'})
    stable = hg_commit(hg, repo, {'version': '1.0.1\n'}, 'Start stable',
                       branch='stable', date='1600000100 0')
    hg('-R', repo, 'update', '-q', '0')
    default = hg_commit(hg, repo, {'version': '2.0-dev\n'}, 'Open 2.0',
                        date='1600000200 0')
    return repo, stable, default


@pytest.mark.parametrize('transport', ('http', 'ssh'))
def test_push_onto_named_branch(transport, hg, hg_serve, tmp_path,
                                monkeypatch):
    server, stable, default = make_server(hg, tmp_path / 'server')
    src = writable_remote(transport, server, hg_serve, tmp_path,
                          monkeypatch.setenv)
    work = tmp_path / 'work'
    clone(src.url, work)
    git('checkout', '-q', '-b', 'fix', STABLE, cwd=work)
    (work / 'version').write_text('1.0.2\n')
    (work / 'CHANGES').write_text('1.0.2: a fix\n')
    git('add', '-A', cwd=work)
    date = '1700000000 +0100'
    commit = git_commit(work, 'Fix for 1.0.2', AUTHOR, date)

    assert_pushed(push(work, 'origin', f'HEAD:{BRANCH_TIP.format("stable")}'))
    assert_hg_verify(hg, server)
    assert rev_parse(work, STABLE) == commit
    node = pushed_nodes(work, [commit])[commit]
    cs = changeset(hg, server, node)
    assert cs.branch == 'stable'
    assert cs.parents == [stable]
    assert cs.user == AUTHOR.hg_user and cs.date == hg_date(date)
    assert (cs.adds, cs.mods) == ({'CHANGES'}, {'version'})
    assert sorted(hg.heads(server)) == sorted([(node, 'stable'),
                                               (default, 'default')])
    assert_fresh_clone_matches(src.url, tmp_path / 'fresh', work,
                               hg.nodes(server))
    assert_fetch_imports_nothing(work, 'origin')
