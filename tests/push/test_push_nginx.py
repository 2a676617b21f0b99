"""Round trip of real history: a git clone of nginx.hg (9,828 changesets,
22 heads, all on default) pushes all of it to an empty hg repository.

The clone pushes every branch head ref it has (the branch tip and the
other heads, `refs/remotes/origin/branches/...` to `refs/heads/
branches/...`) in one `git push` to an empty repository served over HTTP
(and, to compare, over SSH).  Then the two hg repositories have the same
changesets (`hg log -T '{node}\\n'`, sorted), the same heads on the same
branches, `hg verify` is clean, and fetching from the new repository
imports nothing: the metadata is unchanged and the refs it shows are
the clone's.
"""

import pytest

from lib.checks import assert_no_traceback
from lib.corpus import NGINX
from lib.git import METADATA_REF, git, refs, rev_parse
from lib.push import assert_hg_verify, assert_pushed, push
from lib.push import writable_remote

pytestmark = pytest.mark.slow
TIMEOUT = 600
ORIGIN = 'refs/remotes/origin/'


@pytest.fixture(scope='module')
def nginx_git(git_clones, tmp_path_factory):
    """A --no-checkout clone of nginx.hg (from its local path)."""
    return git_clones.copy(NGINX,
                           tmp_path_factory.mktemp('nginx-push') / 'clone')


def head_refspecs(repo):
    """`refs/remotes/origin/X:refs/heads/X` for each branch head and
    bookmark ref of the clone, the branch tips first: changesets go in
    the order `git rev-list --topo-order --reverse` gives for the refs as
    given (git-cinnabar's), where the history only the first ref reaches
    comes last, so that its head is the server's newest, its tip."""
    names = refs(repo, ORIGIN + 'branches', ORIGIN + 'bookmarks')
    names = sorted(names, key=lambda name: not name.endswith('/tip'))
    return [f'{name}:refs/heads/{name[len(ORIGIN):]}' for name in names]


def sorted_nodes(hg, repo):
    out = hg('-R', repo, 'log', '-T', '{node}\n', timeout=TIMEOUT).out
    return sorted(out.split())


@pytest.mark.parametrize('transport', ('http', 'ssh'))
def test_nginx_round_trip(transport, nginx_git, hg, hg_repos, hg_serve,
                          tmp_path, monkeypatch):
    original = hg_repos.get(NGINX)
    target = tmp_path / 'empty'
    hg('init', target)
    dest = writable_remote(transport, target, hg_serve, tmp_path,
                           monkeypatch.setenv)
    specs = head_refspecs(nginx_git)
    assert len(specs) == 22

    assert_pushed(push(nginx_git, dest.url, *specs, timeout=TIMEOUT))
    dest.assert_used()
    assert sorted_nodes(hg, target) == sorted_nodes(hg, original)
    assert sorted(hg.heads(target)) == sorted(hg.heads(original))
    assert hg.bookmarks(target) == hg.bookmarks(original)
    assert_hg_verify(hg, target)

    metadata = rev_parse(nginx_git, METADATA_REF)
    copies = f'refs/remotes/copy-{transport}/'
    result = git('fetch', dest.url, f'refs/heads/*:{copies}*',
                 cwd=nginx_git, timeout=TIMEOUT)
    assert_no_traceback(result)
    assert rev_parse(nginx_git, METADATA_REF) == metadata, (
        'fetching what was just pushed changed the metadata')
    copy = {name[len(copies):]: oid for name, oid in
            refs(nginx_git, copies).items()}
    origin = {name[len(ORIGIN):]: oid for name, oid in
              refs(nginx_git, ORIGIN).items() if name != ORIGIN + 'HEAD'}
    assert copy == origin
