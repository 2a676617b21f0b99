"""Drop-in for git-cinnabar 0.7 users: what their pushes rely on, against
a real `hg serve`.

- `git push origin :bookmarks/x` deletes the server's bookmark (pushkey
  from its value to nothing); deleting a bookmark the server does not
  have, or a branch ref, is refused and changes nothing.
- From a repository without metadata, pushing to a server that is not
  empty is refused, with -f too (git-cinnabar refuses as well; before,
  -f pushed a second root holding a copy of the files).
- `remote.<remote>.cinnabar-data never` drops the pushed changesets'
  metadata; `cinnabar.data force` keeps what `git push --dry-run` made,
  without sending anything.
"""

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import NULL_ID, clone, git, git2hg, hg_url, refs
from lib.push import (assert_pushed, assert_refused, hg_commit,
                      make_hg_repo, nothing_changes, push)

BOOKMARK = 'refs/heads/bookmarks/x'


@pytest.fixture
def served(hg, hg_serve, tmp_path):
    """An hg repository with a bookmark x, served; (repo, server)."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    hg_commit(hg, repo, {'b': 'b\n'}, 'second')
    hg('-R', repo, 'bookmark', '-r', '0', 'x')
    return repo, hg_serve(repo)


def commit_file(repo, name, text, message):
    (repo / name).write_text(text)
    git('add', name, cwd=repo)
    git('commit', '-q', '-m', message, cwd=repo)
    return git('rev-parse', 'HEAD', cwd=repo).out.strip()


def test_delete_bookmark(served, hg, tmp_path):
    repo, server = served
    work = tmp_path / 'work'
    clone(hg_url(server.url), work, '-q')
    assert 'refs/remotes/origin/bookmarks/x' in refs(work)
    with nothing_changes(hg, repo, work):
        # git itself refuses a ref the list of the remote does not have.
        assert_failed_for_people(push(work, 'origin', ':bookmarks/nope'),
                                 "unable to delete 'bookmarks/nope': remote "
                                 'ref does not exist')
        assert_refused(push(work, 'origin', ':branches/default/tip'),
                       'branches/default/tip', 'delete')
    assert_pushed(push(work, 'origin', ':bookmarks/x'))
    assert hg.bookmarks(repo) == {}
    assert 'refs/remotes/origin/bookmarks/x' not in refs(work)


def test_unrelated_push_refused_even_forced(served, hg, tmp_path):
    repo, server = served
    work = tmp_path / 'work'
    git('init', '-q', work)
    git('remote', 'add', 'origin', hg_url(server.url), cwd=work)
    commit_file(work, 'a', 'a\n', 'same files, no metadata')
    with nothing_changes(hg, repo, work):
        for args in ([], ['-f']):
            result = push(work, *args, 'origin',
                          'HEAD:refs/heads/branches/default/tip')
            assert_refused(result, 'branches/default/tip',
                           'without fetching')
    assert not refs(work, 'refs/cinnabar/')


def test_data_settings(served, hg, tmp_path):
    repo, server = served
    work = tmp_path / 'work'
    clone(hg_url(server.url), work, '-q')
    git('checkout', '-q', 'origin/branches/default/tip', cwd=work)
    # force: a dry run keeps the changeset it made, and sends nothing.
    first = commit_file(work, 'c', 'c\n', 'third')
    before = hg.nodes(repo)
    result = push(work, '--dry-run', 'origin',
                  'HEAD:refs/heads/branches/default/tip',
                  extra_env={'GIT_CINNABAR_DATA': 'force'})
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    assert hg.nodes(repo) == before
    dry = git2hg(work, [first])[first]
    assert dry != NULL_ID
    # never, for this remote: the changeset is on the server, its
    # metadata is not kept (the one of the dry run stays).
    second = commit_file(work, 'd', 'd\n', 'fourth')
    git('config', 'remote.origin.cinnabar-data', 'never', cwd=work)
    assert_pushed(push(work, 'origin',
                       'HEAD:refs/heads/branches/default/tip'))
    assert git2hg(work, [second])[second] == NULL_ID
    assert dry in hg.nodes(repo)
    # A wrong value is refused before anything is sent.
    git('config', 'remote.origin.cinnabar-data', 'sometimes', cwd=work)
    commit_file(work, 'e', 'e\n', 'fifth')
    with nothing_changes(hg, repo, work):
        result = push(work, 'origin', 'HEAD:refs/heads/branches/default/tip')
        assert_failed_for_people(result)
        assert 'sometimes' in result.err


def test_experiments(hg, hg_serve, tmp_path):
    """cinnabar.experiments as git-cinnabar reads it: `merge` accepted,
    `similarity=50` as cinnabar.similarity=50, `git_commit` giving pushed
    changesets a git_commit extra (a fresh clone maps them back to the
    same commits)."""
    lines = ''.join('line %d\n' % i for i in range(20))
    repo = make_hg_repo(hg, tmp_path / 'hg', {'old.txt': lines})
    server = hg_serve(repo)
    work = tmp_path / 'work'
    clone(hg_url(server.url), work, '-q')
    git('config', 'cinnabar.experiments', 'merge,git_commit,similarity=50',
        cwd=work)
    git('mv', 'old.txt', 'new.txt', cwd=work)
    commit = commit_file(work, 'new.txt', lines + 'one more\n', 'renamed')
    assert_pushed(push(work, 'origin', 'HEAD:refs/heads/branches/default/tip'))
    out = hg('-R', repo, 'log', '-r', 'tip', '-T',
             '{extras % "{key}={value}\\n"}{file_copies % "{name}<{source}"}'
             ).out
    assert f'git_commit={commit}\n' in out
    assert out.endswith('new.txt<old.txt')
    fresh = tmp_path / 'fresh'
    clone(hg_url(server.url), fresh, '-q')
    assert refs(fresh, 'refs/remotes/origin/branches/') == refs(
        work, 'refs/remotes/origin/branches/')


def test_tag_experiment(hg, hg_serve, tmp_path):
    """`git cinnabar tag` (the tag experiment): a commit editing .hgtags as
    hg tag does, which pushed makes the server's tags; -l lists them; -d
    removes one; Mercurial's refusals; nothing without the experiment."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    first = hg('-R', repo, 'log', '-r', 'tip', '-T', '{node}').out
    server = hg_serve(repo)
    work = tmp_path / 'work'
    clone(hg_url(server.url), work, '-q')
    assert_failed_for_people(git('cinnabar', 'tag', 'v1', cwd=work,
                                 check=False),
                             'git cinnabar tag is an experiment')
    git('config', 'cinnabar.experiments', 'tag', cwd=work)
    for bad, says in (('tip', "'tip' is reserved"),
                      ('12', 'cannot be an integer'),
                      ('a:b', "cannot contain ':'"),
                      (' x', 'cannot start or end with white space')):
        assert_failed_for_people(git('cinnabar', 'tag', bad, cwd=work,
                                     check=False), says)
    assert_no_traceback(git('cinnabar', 'tag', 'v1', cwd=work))
    assert git('log', '-1', '--format=%s', cwd=work).out.strip() == \
        f'Added tag v1 for changeset {first[:12]}'
    assert_failed_for_people(git('cinnabar', 'tag', 'v1', cwd=work,
                                 check=False), "tag 'v1' already exists")
    assert_pushed(push(work, 'origin', 'HEAD:refs/heads/branches/default/tip'))
    assert f'v1 0:{first[:12]}' in ' '.join(
        hg('-R', repo, 'tags').out.split())
    listed = git('cinnabar', 'tag', '-l', '--format',
                 '%(tagname) %(hg::objectname)', cwd=work).out
    assert listed == f'v1 {first}\n'
    assert_no_traceback(git('cinnabar', 'tag', '-d', 'v1', cwd=work))
    assert_pushed(push(work, 'origin', 'HEAD:refs/heads/branches/default/tip'))
    assert 'v1' not in hg('-R', repo, 'tags').out
    assert git('cinnabar', 'tag', '-l', cwd=work).out == ''


TAGGER = {'GIT_AUTHOR_NAME': 'Tagger', 'GIT_AUTHOR_EMAIL': 't@example.com',
          'GIT_COMMITTER_NAME': 'Tagger',
          'GIT_COMMITTER_EMAIL': 't@example.com'}


def tag_as(work, date):
    """`git cinnabar tag v1` in `work` as TAGGER at `date` (git's raw
    format); returns the tag commit."""
    git('config', 'cinnabar.experiments', 'tag', cwd=work)
    assert_no_traceback(git('cinnabar', 'tag', 'v1', cwd=work, extra_env=dict(
        TAGGER, GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)))
    return git('rev-parse', 'HEAD', cwd=work).out.strip()


def test_push_of_changesets_the_server_has(hg, hg_serve, tmp_path):
    """Commits that convert to changesets the server already has (here
    the commit `git cinnabar tag` makes, as `hg tag` made it on the
    server, which moved the active bookmark b there): pushed to the branch
    or to the bookmark, a success adding nothing (but publishing them, as
    hg push does), as with git-cinnabar 0.7.5; a tag commit made at
    another time is refused ("fetch first")."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    hg('-R', repo, 'bookmark', 'b', cwd=repo)
    server = hg_serve(repo)
    works = [tmp_path / 'branch', tmp_path / 'bookmark']
    for work in works:
        clone(hg_url(server.url), work, '-q')
    hg('-R', repo, 'tag', '-u', 'Tagger <t@example.com>', '-d',
       '1700000000 0', 'v1', cwd=repo)
    tagged = hg.nodes(repo, 'tip')[0]
    assert hg.bookmarks(repo) == {'b': tagged}
    before = hg.nodes(repo), hg.heads(repo)
    for work, ref in zip(works, ('branches/default/tip', 'bookmarks/b')):
        with nothing_changes(hg, repo, work):
            tag_as(work, '1700000001 +0000')
            assert_refused(push(work, 'origin', 'HEAD:refs/heads/' + ref),
                           ref, 'fetch first')
        git('reset', '-q', '--hard', 'HEAD^', cwd=work)
        commit = tag_as(work, '1700000000 +0000')
        result = push(work, 'origin', 'HEAD:refs/heads/' + ref)
        assert_pushed(result, ref)
        assert 'remote: added 0 changesets' in result.err, result.describe()
        assert f' * [new branch]      HEAD -> {ref}\n' in result.err
        assert (hg.nodes(repo), hg.heads(repo)) == before
        assert hg.bookmarks(repo) == {'b': tagged}
        assert git2hg(work, [commit])[commit] == tagged


def test_branch_experiment(hg, hg_serve, tmp_path):
    """The branch experiment: pushing new commits to
    branches/<name>/tip puts them on that (new) named branch, once forced
    (a new branch, as `hg push --new-branch`); without it, refused (they
    take their first parent's branch)."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    server = hg_serve(repo)
    work = tmp_path / 'work'
    clone(hg_url(server.url), work, '-q')
    first = commit_file(work, 'b', 'b\n', 'first on feat')
    second = commit_file(work, 'c', 'c\n', 'second on feat')
    ref = 'HEAD:refs/heads/branches/feat/tip'
    with nothing_changes(hg, repo, work):
        assert_refused(push(work, 'origin', ref), 'not feat')
    git('config', 'cinnabar.experiments', 'branch', cwd=work)
    with nothing_changes(hg, repo, work):
        assert_refused(push(work, 'origin', ref),
                       'would create the new branch feat', 'git push -f')
    assert_pushed(push(work, 'origin', '-f', ref))
    out = hg('-R', repo, 'log', '-r', '1:', '-T', '{branch} {desc}\n').out
    assert out == 'feat first on feat\nfeat second on feat\n'
    fresh = tmp_path / 'fresh'
    clone(hg_url(server.url), fresh, '-q')
    assert refs(fresh, 'refs/remotes/origin/branches/feat/') == {
        'refs/remotes/origin/branches/feat/tip': second}
    assert git2hg(fresh, [first])[first] != NULL_ID
