"""Pushes that must be refused, over HTTP and SSH.

Each refused push exits non-zero, reports the ref as rejected with why
and what to do, and changes nothing: not the server (changesets, phases,
heads, bookmarks), not the clone's refs under refs/cinnabar and
refs/remotes.  The cases:

- a race: the server moved (a changeset committed there directly) after
  the clone's last fetch; and over HTTP, a changeset committed on the
  server while the push is under way, just before the changesets are
  sent (`unbundle`), through a proxy;
- a new head on a branch (a commit diverging from the server's head),
  then accepted with `git push -f`; the same to a ref git has not got,
  refused by our check of the branch's heads rather than by git;
- a new root (`git checkout --orphan`), to the branch ref and to a new
  bookmark;
- a bookmark move that is not a fast-forward;
- a server hook refusing the changesets (pretxnchangegroup): the ref is
  rejected with the server's message;
- deleting a branch ref;
- a push of a head the server has to another head ref of its branch
  (one that is a head no more): it would change nothing.
"""

import pytest

from lib.git import clone, git, hg2git, hg_url, refs, rev_parse
from lib.push import BRANCH_TIP, Author, ServerState
from lib.push import assert_fetch_imports_nothing
from lib.push import assert_hg_verify, assert_pushed, assert_refused
from lib.push import git_commit, hg_commit, make_hg_repo, nothing_changes
from lib.push import pushed_nodes, push, rejection_lines, writable_remote

pytestmark = pytest.mark.hgserver

TRANSPORTS = ('http', 'ssh')
TIP = BRANCH_TIP.format('default')
AUTHOR = Author('Refused Pusher', 'refused@example.com')
HOOK_MESSAGE = 'pushes are closed today, ask the release team'


@pytest.fixture
def setup(hg, hg_serve, tmp_path, monkeypatch):
    """setup(transport, hgrc='') -> (server repo, Source, git clone); the
    server has one changeset, its .hg/hgrc gets `hgrc`."""
    def make(transport, hgrc=''):
        server = make_hg_repo(hg, tmp_path / 'server',
                              {'file': 'base\n', 'other': 'other\n'})
        (server / '.hg' / 'hgrc').write_text(hgrc)
        src = writable_remote(transport, server, hg_serve, tmp_path,
                              monkeypatch.setenv)
        work = tmp_path / 'work'
        clone(src.url, work)
        return server, src, work
    return make


def commit_file(repo, path, text, message, date='1700000000 +0100'):
    (repo / path).write_text(text)
    git('add', path, cwd=repo)
    return git_commit(repo, message, AUTHOR, date)


def commit_on_server(hg, server, text='moved on the server\n'):
    return hg_commit(hg, server, {'file': text}, 'Committed on the server',
                     date='1700000050 0')


@pytest.mark.parametrize('transport', TRANSPORTS)
def test_race_server_moved_since_fetch(transport, setup, hg):
    server, src, work = setup(transport)
    commit_on_server(hg, server)
    commit_file(work, 'mine', 'mine\n', 'Made without fetching')
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'HEAD:{TIP}')
    assert_refused(result, 'branches/default/tip', 'fetch')


def test_race_during_push(hg, hg_serve, hg_proxy, tmp_path):
    """The server moves between the moment the push looks at its heads
    and the moment the changesets arrive (`unbundle`, delayed by a proxy
    until a changeset is committed on the server): the server refuses
    them, and git-cinnabar says to fetch first."""
    server = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    proxy = hg_proxy(hg_serve(server))
    work = tmp_path / 'work'
    clone(hg_url(proxy.url), work)
    commit_file(work, 'mine', 'mine\n', 'Pushed while the server moves')
    raced = []
    proxy.before['unbundle'] = lambda: raced.append(
        commit_on_server(hg, server))
    before = ServerState(hg, server)
    ours = refs(work, 'refs/cinnabar', 'refs/remotes')
    result = push(work, 'origin', f'HEAD:{TIP}')
    assert raced, 'the push never sent unbundle\n' + result.describe()
    assert_refused(result, 'branches/default/tip', 'fetch')
    after = ServerState(hg, server)
    assert after.changesets == sorted(before.changesets
                                      + [f'{raced[0]} draft']), (
        f'the server got more than the racing changeset: {after}')
    assert after.bookmarks == before.bookmarks
    assert refs(work, 'refs/cinnabar', 'refs/remotes') == ours


@pytest.mark.parametrize('transport', TRANSPORTS)
def test_new_head_refused_then_forced(transport, setup, hg, tmp_path):
    server, src, work = setup(transport)
    theirs = commit_on_server(hg, server)
    git('fetch', '-q', 'origin', cwd=work)
    commit_file(work, 'mine', 'mine\n', 'Diverging from the server')
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'HEAD:{TIP}')
    assert_refused(result, 'branches/default/tip',
                   ('new head', 'non-fast-forward', 'fetch first'),
                   ('merge', 'pull', '-f', 'force'))

    mine = rev_parse(work, 'HEAD')
    assert_pushed(push(work, '-f', 'origin', f'HEAD:{TIP}'))
    assert_hg_verify(hg, server)
    node = pushed_nodes(work, [mine])[mine]
    assert sorted(hg.heads(server)) == sorted([(node, 'default'),
                                               (theirs, 'default')])
    their_commit = hg2git(work, [theirs])[theirs]
    other_head = f'branches/default/{theirs}'
    assert_fetch_imports_nothing(work, 'origin', moves={
        f'refs/remotes/origin/{other_head}': their_commit,
        f'refs/cinnabar/refs/heads/{other_head}': their_commit})


def test_new_head_to_a_new_ref_refused(setup, hg):
    """The same diverging commit pushed to a ref git has not got (so git
    sees no non-fast-forward): refused by the check of the branch's
    heads, saying so."""
    server, src, work = setup('http')
    commit_on_server(hg, server)
    git('fetch', '-q', 'origin', cwd=work)
    commit_file(work, 'mine', 'mine\n', 'Diverging from the server')
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', 'HEAD:refs/heads/branches/default/mine')
    assert_refused(result, 'branches/default/mine',
                   'would create a new head on branch default',
                   'git push -f')


@pytest.mark.parametrize('transport', TRANSPORTS)
@pytest.mark.parametrize('ref', (TIP, 'refs/heads/bookmarks/orphan'))
def test_new_root_refused(transport, ref, setup, hg):
    server, src, work = setup(transport)
    git('checkout', '-q', '--orphan', 'orphan', cwd=work)
    git('rm', '-q', '-r', '-f', '.', cwd=work)
    commit_file(work, 'unrelated', 'no common history\n', 'A new root')
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'HEAD:{ref}')
    if ref == TIP:
        # git may refuse it first, as not a fast-forward.
        assert_refused(result, ref[len('refs/heads/'):],
                       ('root', 'non-fast-forward'), ('-f', 'force', 'pull'))
    else:
        assert_refused(result, 'bookmarks/orphan', 'root', ('-f', 'force'))


@pytest.mark.parametrize('transport', TRANSPORTS)
def test_non_fast_forward_bookmark_refused(transport, setup, hg):
    server, src, work = setup(transport)
    marked = commit_on_server(hg, server)
    hg('-R', server, 'bookmark', '-r', marked, 'feature')
    git('fetch', '-q', 'origin', cwd=work)
    assert rev_parse(work, 'refs/remotes/origin/bookmarks/feature')
    commit_file(work, 'mine', 'mine\n', 'Not on top of the bookmark')
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', 'HEAD:refs/heads/bookmarks/feature')
    assert_refused(result, 'bookmarks/feature',
                   ('fast-forward', 'fetch first'))
    assert hg.bookmarks(server) == {'feature': marked}


@pytest.mark.parametrize('transport', TRANSPORTS)
def test_server_hook_rejection(transport, setup, hg):
    hgrc = ('[hooks]\n'
            f"pretxnchangegroup.reject = echo '{HOOK_MESSAGE}'; false\n")
    server, src, work = setup(transport, hgrc)
    commit_file(work, 'mine', 'mine\n', 'Refused by the hook')
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'HEAD:{TIP}')
    assert_refused(result, 'branches/default/tip', HOOK_MESSAGE)
    rejected = rejection_lines(result)
    assert any('remote rejected' in line
               and 'pretxnchangegroup.reject' in line
               for line in rejected), result.describe()


@pytest.mark.parametrize('transport', TRANSPORTS)
def test_branch_deletion_refused(transport, setup, hg):
    server, src, work = setup(transport)
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f':{TIP}')
    assert_refused(result, 'branches/default/tip', 'delete')
    assert rev_parse(work, 'refs/remotes/origin/branches/default/tip')


def test_push_to_a_former_head_ref_refused(setup, hg):
    """`branches/default/<id>` of a changeset that is no longer a head:
    the server has HEAD already, nothing would change; refused, naming
    the ref the server lists HEAD as (git said `[new branch]` and made a
    remote-tracking ref the server does not have)."""
    server, src, work = setup('http')
    former = hg.heads(server)[0][0]
    commit_file(work, 'next', 'next\n', 'After the first')
    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    stale = f'refs/heads/branches/default/{former}'
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'HEAD:{stale}')
    assert_refused(result, 'nothing to push', 'already a head of branch '
                   f'default on the server ({TIP})', f'{stale} is not a ref')
