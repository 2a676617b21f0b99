"""core.ignorecase=true (git's default on macOS and Windows) changes
nothing: Mercurial paths are bytes, `README` and `readme` are two files,
and git-cinnabar gives the same commits, trees and hg changesets as with
core.ignorecase=false, on fetch and on push.

(fast-import's tree code, which the helper builds on, compares names with
fspathcmp(), which folds case when core.ignorecase is set: it used to
merge such files into one, with the wrong ids and contents.)
"""

from lib.git import clone, git, hg2git, hg_url, refs
from lib.gitobj import ObjectWriter
from lib.push import BRANCH_TIP, assert_hg_verify, assert_pushed
from lib.push import hg_commit, make_hg_repo, push, writable_remote

FOLDED = ['-c', 'core.ignorecase=true']
TIP = BRANCH_TIP.format('default')
FILES = {'README': 'upper\n', 'readme': 'lower\n', 'Dir/a': 'a\n',
         'dir/b': 'b\n'}
ENV = {'GIT_AUTHOR_NAME': 'Case', 'GIT_AUTHOR_EMAIL': 'case@example.com',
       'GIT_AUTHOR_DATE': '1700000000 +0000', 'GIT_COMMITTER_NAME': 'Case',
       'GIT_COMMITTER_EMAIL': 'case@example.com',
       'GIT_COMMITTER_DATE': '1700000000 +0000'}


def tree_listing(repo, rev):
    return git('ls-tree', '-r', rev, cwd=repo).out


def test_ignorecase_fetch_and_push(hg, hg_serve, tmp_path, monkeypatch):
    server = make_hg_repo(hg, tmp_path / 'server', FILES)
    hg_commit(hg, server, {'README': 'upper 2\n'}, 'second')
    nodes = hg.nodes(server)
    plain = tmp_path / 'plain'
    clone(hg_url(server), plain, '--no-checkout')
    src = writable_remote('http', server, hg_serve, tmp_path,
                          monkeypatch.setenv)
    folded = tmp_path / 'folded'
    git(*FOLDED, 'clone', '--no-checkout', src.url, folded.name,
        cwd=tmp_path)
    git('config', 'core.ignorecase', 'true', cwd=folded)

    # Fetch: same commits and trees.
    assert hg2git(folded, nodes) == hg2git(plain, nodes)
    assert refs(folded, 'refs/remotes/') == refs(plain, 'refs/remotes/')
    listing = tree_listing(folded, 'origin/branches/default/tip')
    assert listing == tree_listing(plain, 'origin/branches/default/tip')
    assert len(listing.splitlines()) == 4

    # Push: a commit adding `NEW` beside `new` and editing `readme`.
    objects = ObjectWriter(folded)
    files = {tuple(p.encode().split(b'/')): objects.blob(t.encode())
             for p, t in FILES.items()}
    files[(b'README',)] = objects.blob(b'upper 2\n')
    files[(b'readme',)] = objects.blob(b'lower 2\n')
    files[(b'NEW',)] = objects.blob(b'NEW\n')
    files[(b'new',)] = objects.blob(b'new\n')
    head = refs(folded, 'refs/remotes/origin/branches/default/tip')
    commit = git('commit-tree', objects.tree_of_paths(files), '-p',
                 *head.values(), '-m', 'case', cwd=folded,
                 extra_env=ENV).out.strip()
    assert_pushed(push(folded, 'origin', f'{commit}:{TIP}'))
    assert_hg_verify(hg, server)
    out = hg('-R', server, 'cat', '-r', 'tip', '-T', '{path}={data}',
             'NEW', 'new', 'readme', 'README', cwd=server).out
    assert sorted(out.splitlines()) == ['NEW=NEW', 'README=upper 2',
                                        'new=new', 'readme=lower 2']
    # A fresh clone without folding gives the pushed commit back.
    fresh = tmp_path / 'fresh'
    clone(hg_url(server), fresh, '--no-checkout')
    tip = hg.nodes(server, 'tip')
    assert hg2git(fresh, tip) == hg2git(folded, tip) == {tip[0]: commit}
