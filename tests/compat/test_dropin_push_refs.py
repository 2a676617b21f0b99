"""Drop-in for git-cinnabar 0.7 users: the ref names a push may go to,
against a real `hg serve`.

- `refs/heads/branches/<branch>/<any name>` is a head of `<branch>`, as
  with git-cinnabar: `branches/default/new-head` pushes a new head
  (refused without -f, as any new head, server unchanged; with -f, hg
  has two heads); `git ls-remote` then shows HEAD at the tip's commit.
- A ref outside the layout (`refs/heads/HEAD`, from pushing
  `refs/remotes/origin/*` with origin/HEAD) sends its commits as any other
  and succeeds when the push sent changesets, else "nothing changed on
  remote", as git-cinnabar 0.7.5 does (checked by hand against it, on the
  same corpus repository: the same changesets, exit codes and report).
"""

from lib.git import clone, git, git2hg, hg_url, ls_remote
from lib.push import Author, assert_hg_verify, assert_pushed
from lib.push import assert_refused, git_commit, hg_commit, make_hg_repo
from lib.push import nothing_changes, push, rejection_lines

AUTHOR = Author('Head Pusher', 'heads@example.com')
NEW_HEAD = 'refs/heads/branches/default/new-head'


def commit_file(repo, path, message, date='1700000000 +0100'):
    (repo / path).write_text(message + '\n')
    git('add', path, cwd=repo)
    return git_commit(repo, message, AUTHOR, date)


def hg_heads(hg, repo):
    return set(hg('-R', repo, 'heads', '-T', '{node}\n').out.split())


def test_push_to_a_named_head_of_a_branch(hg, hg_serve, tmp_path):
    server = make_hg_repo(hg, tmp_path / 'server', {'a': 'a\n'})
    hg_commit(hg, server, {'b': 'b\n'}, 'second')
    url = hg_url(hg_serve(server).url)
    work = tmp_path / 'work'
    clone(url, work, '-q')
    git('checkout', '-q', 'HEAD^', cwd=work)
    head = commit_file(work, 'c', 'another head')

    with nothing_changes(hg, server, work):
        refused = push(work, 'origin', 'HEAD:' + NEW_HEAD)
        assert_refused(refused, 'new head', '-f')
        assert 'not a Mercurial branch' not in refused.err

    assert_pushed(push(work, '-f', 'origin', 'HEAD:' + NEW_HEAD))
    node = git2hg(work, [head])[head]
    assert node in hg_heads(hg, server) and len(hg_heads(hg, server)) == 2
    assert hg('-R', server, 'log', '-r', node, '-T', '{branch}').out \
        == 'default'
    assert_hg_verify(hg, server)

    # HEAD is the tip's commit (the newest head, ours), in this clone and
    # in a fresh one.
    listed = ls_remote('origin', work)
    assert listed['HEAD'] == listed['refs/heads/branches/default/tip'] \
        == head
    fresh = tmp_path / 'fresh'
    clone(url, fresh, '-q', '--no-checkout')
    assert ls_remote('origin', fresh)['HEAD'] == head

    # A new head of a branch that is a child of the server's head is a
    # plain push, under any name.
    git('checkout', '-q', head, cwd=work)
    child = commit_file(work, 'd', 'on top of the new head')
    assert_pushed(push(work, 'origin', 'HEAD:refs/heads/branches/default/x'))
    assert git2hg(work, [child])[child] in hg_heads(hg, server)


def hg_bookmarks(hg, repo):
    out = hg('-R', repo, 'bookmarks', '-T', '{bookmark}\t{node}\n').out
    return dict(line.split('\t') for line in out.splitlines())


def test_names_with_percent_and_spaces(hg, hg_serve, tmp_path):
    """`%` and spaces are `%25` and `%20` in branch and bookmark refs
    alike (git-cinnabar cuts a bookmark name at its first space); a push
    to such a ref reaches that very bookmark or branch."""
    server = make_hg_repo(hg, tmp_path / 'server', {'a': 'a\n'})
    hg('-R', server, 'bookmark', '-r', '0', 'esc%ped again')
    hg_commit(hg, server, {'s': 's\n'}, 'on a spaced branch',
              branch='my 100% branch')
    url = hg_url(hg_serve(server).url)
    work = tmp_path / 'work'
    clone(url, work, '-q')
    listed = ls_remote('origin', work)
    bookmark = 'refs/heads/bookmarks/esc%25ped%20again'
    branch = 'refs/heads/branches/my%20100%25%20branch/tip'
    assert bookmark in listed and branch in listed

    git('checkout', '-q', listed[bookmark], cwd=work)
    moved = commit_file(work, 'b', 'bookmark moves')
    assert_pushed(push(work, 'origin', 'HEAD:' + bookmark))
    marks = hg_bookmarks(hg, server)
    assert marks == {'esc%ped again': git2hg(work, [moved])[moved]}

    assert_pushed(push(work, 'origin', 'HEAD:refs/heads/bookmarks/new%20one'))
    assert set(hg_bookmarks(hg, server)) == {'esc%ped again', 'new one'}

    git('checkout', '-q', listed[branch], cwd=work)
    spaced = commit_file(work, 'c', 'on the spaced branch')
    assert_pushed(push(work, 'origin', 'HEAD:' + branch))
    node = git2hg(work, [spaced])[spaced]
    assert hg('-R', server, 'log', '-r', node, '-T', '{branch}').out == \
        'my 100% branch'
    assert_hg_verify(hg, server)


MIRROR = 'refs/remotes/origin/*:refs/heads/*'


def hg_nodes(hg, repo, revs='all()'):
    return set(hg('-R', repo, 'log', '-r', revs, '-T', '{node}\n').out.split())


def empty_server(hg, hg_serve, path):
    hg('init', path)
    return hg_url(hg_serve(path).url)


def test_push_a_whole_mirror_with_its_head(hg, hg_repos, hg_serve, tmp_path):
    """`git push <empty hg> 'refs/remotes/origin/*:refs/heads/*'` from a
    clone: every changeset goes, origin/HEAD -> HEAD is a new branch for
    git and no bookmark for hg, exit 0. The same push again sends nothing:
    HEAD alone is rejected (nothing changed on remote). HEAD alone to
    another empty server sends the tip's history."""
    source = hg_repos.get('rebase.hg')
    work = tmp_path / 'work'
    clone(hg_url(source), work, '-q', '--no-checkout')
    git('config', 'cinnabar.data', 'never', cwd=work)
    server = tmp_path / 'dst'
    url = empty_server(hg, hg_serve, server)

    result = push(work, url, MIRROR)
    assert_pushed(result)
    assert ' * [new branch]      origin/HEAD -> HEAD' in result.err, \
        result.describe()
    assert not rejection_lines(result)
    assert hg_nodes(hg, server) == hg_nodes(hg, source)
    assert hg('-R', server, 'bookmarks', '-T', '{bookmark}\n').out == ''
    assert_hg_verify(hg, server)

    with nothing_changes(hg, server, work):
        again = push(work, url, MIRROR)
        assert_refused(again, 'nothing changed on remote')
        rejected = rejection_lines(again)
        assert len(rejected) == 1 and ' origin/HEAD -> HEAD (nothing ' \
            'changed on remote' in rejected[0], again.describe()

    other = tmp_path / 'other'
    url = empty_server(hg, hg_serve, other)
    result = push(work, url,
                  'refs/remotes/origin/HEAD:refs/heads/HEAD')
    assert_pushed(result)
    assert ' * [new branch]      origin/HEAD -> HEAD' in result.err
    assert hg_nodes(hg, other) == hg_nodes(hg, source, '::tip')
    assert len(hg_nodes(hg, other)) < len(hg_nodes(hg, source))
    assert_hg_verify(hg, other)
