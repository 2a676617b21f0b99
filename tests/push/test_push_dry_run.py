"""`git push --dry-run` sends nothing and keeps nothing.

A new commit pushed with --dry-run to the default branch, and to a new
bookmark: the push succeeds, the server is unchanged (changesets, heads,
bookmarks) and so are the clone's refs under refs/cinnabar (the metadata
does not know the commit) and refs/remotes.  The same push without
--dry-run then works, and a fetch after it imports nothing.
"""

import pytest

from lib.git import NULL_ID, clone, git, git2hg
from lib.push import BRANCH_TIP, Author, assert_fetch_imports_nothing
from lib.push import assert_hg_verify, assert_pushed, git_commit
from lib.push import make_hg_repo, nothing_changes, pushed_nodes, push
from lib.push import writable_remote

TIP = BRANCH_TIP.format('default')
AUTHOR = Author('Careful Pusher', 'careful@example.com')


@pytest.mark.parametrize('transport', ('http', 'ssh'))
def test_dry_run_sends_and_keeps_nothing(transport, hg, hg_serve, tmp_path,
                                         monkeypatch):
    server = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    src = writable_remote(transport, server, hg_serve, tmp_path,
                          monkeypatch.setenv)
    work = tmp_path / 'work'
    clone(src.url, work)
    (work / 'file').write_text('changed\n')
    git('add', 'file', cwd=work)
    commit = git_commit(work, 'Pushed for real only once', AUTHOR,
                        '1700000000 -0800')

    for ref in (TIP, 'refs/heads/bookmarks/dry'):
        with nothing_changes(hg, server, work):
            result = push(work, '--dry-run', 'origin', f'HEAD:{ref}')
            assert_pushed(result)
        assert git2hg(work, [commit]) == {commit: NULL_ID}, (
            f'the dry run to {ref} kept the changeset in the metadata')

    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    assert_hg_verify(hg, server)
    node = pushed_nodes(work, [commit])[commit]
    assert hg.heads(server) == [(node, 'default')]
    assert hg.bookmarks(server) == {}
    assert_fetch_imports_nothing(work, 'origin')
