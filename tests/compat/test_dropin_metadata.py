"""Drop-in for git-cinnabar 0.7 users: the same commits and metadata.

- Changesets whose git commits would be the same (same tree, parents,
  author, date and message, differing only by their branch, which git does
  not hold): git-cinnabar 0.7 appends newlines to the later ones' messages
  until the commit is unique (their git2hg notes carry a patch removing
  them), and NUL bytes with `cinnabar.compat=0.6`. The ids expected are
  those git-cinnabar 0.7.5 gives for the repository the test makes with hg
  (same users and dates, so the same changesets with every hg version),
  kept in tests/vectors/colliding.tsv with the script that made them; `git
  fsck` finds no NUL in commits (without compat), `git cinnabar fsck
  --full` is clean and `git cinnabar data -c` gives back hg's bytes.
- The metadata history: after a clone and a fetch, rollback goes back to
  the clone's state; once more, to no metadata at all (as git-cinnabar).
- refs/notes/cinnabar follows the git2hg notes through fetch, push and
  rollback, so `git log --notes=cinnabar` shows hg ids.
"""

import shutil

import pytest

from lib import vectors
from lib.checks import assert_no_traceback
from lib.git import clone, git, hg_url, refs, rev_parse
from lib.push import hg_commit, push

USER = 'U <u@x>'


def git_cinnabar_ids():
    """git-cinnabar 0.7.5's ids for the repository of `colliding_repo`
    (tests/vectors/colliding.tsv, made by tests/vectors/make_vectors.py):
    {compat: {'metadata' or branch name: id}}."""
    ids = {}
    for key, value in vectors.read_tsv('colliding.tsv').items():
        compat, name = key.split(':')
        ids.setdefault(None if compat == 'none' else compat, {})[name] = value
    return ids


# Mercurial's ids of the three children (the test checks them with hg).
HG_NODES = {
    'b1': '4c5560a5d3b63e1e45a333857ca3b96a60696bb5',
    'b2': 'dc50cd3c3544933e1aa825ecf0514ffe1abf5f2d',
    'b3': 'f4196c69cd813ce9edcc129c4b485928eab58537',
}


def make_colliding_repo(hg, repo):
    """A base changeset and three children on branches b1, b2, b3 with
    the same user, date and message and no file change: one git commit
    for the three, but for what is appended to the message."""
    hg('init', repo)
    hg_commit(hg, repo, {'a': 'a\n'}, 'base', user=USER, date='0 0')
    for branch in ('b1', 'b2', 'b3'):
        hg('-R', repo, 'update', '-q', '0')
        hg('-R', repo, 'branch', '-q', branch)
        hg('-R', repo, 'commit', '-q', '-m', 'same', '-u', USER,
           '-d', '0 0')
    return repo


@pytest.fixture(scope='module')
def pristine_repo(hg, tmp_path_factory):
    return make_colliding_repo(hg, tmp_path_factory.mktemp('colliding')
                               / 'hg')


@pytest.fixture
def colliding_repo(pristine_repo, tmp_path):
    """A copy of pristine_repo the test may change."""
    return shutil.copytree(pristine_repo, tmp_path / 'hg')


def raw_commit(repo, rev):
    return git('cat-file', 'commit', rev, cwd=repo).stdout


@pytest.mark.parametrize('compat', [None, '0.6'])
def test_colliding_changesets(compat, colliding_repo, hg, hg_serve,
                              tmp_path):
    server = hg_serve(colliding_repo)
    repo = tmp_path / 'git'
    options = ['-c', f'cinnabar.compat={compat}'] if compat else []
    assert_no_traceback(git(*options, 'clone', '-q', hg_url(server.url),
                            str(repo)))
    assert hg.nodes(colliding_repo, 'branch(b1)+branch(b2)+branch(b3)') == [
        HG_NODES['b1'], HG_NODES['b2'], HG_NODES['b3']]
    expected = git_cinnabar_ids()[compat]
    assert rev_parse(repo, 'refs/cinnabar/metadata') == expected['metadata']
    filler = b'\0' if compat else b'\n'
    added = []
    for branch in ('b1', 'b2', 'b3'):
        commit = rev_parse(repo, f'origin/branches/{branch}/tip')
        assert commit == expected[branch]
        body = raw_commit(repo, commit).partition(b'\n\n')[2]
        assert body.startswith(b'same')
        assert body[4:] == filler * len(body[4:])
        added.append(len(body[4:]))
        assert git('cinnabar', 'git2hg', commit, cwd=repo).out.strip() == \
            HG_NODES[branch]
        assert git('cinnabar', 'data', '-c', HG_NODES[branch],
                   cwd=repo).stdout == hg('debugdata', '-c', HG_NODES[branch],
                                          cwd=colliding_repo).stdout
    assert sorted(added) == [0, 1, 2]
    result = git('cinnabar', 'fsck', '--full', cwd=repo)
    assert 'no problem' in result.out + result.err
    fsck = git('fsck', '--no-dangling', cwd=repo, check=False)
    assert ('nulInCommit' in fsck.err) == bool(compat), fsck.describe()


def test_rollback_walks_back_to_the_clone_then_nothing(
        colliding_repo, hg, hg_serve, tmp_path):
    server = hg_serve(colliding_repo)
    repo = tmp_path / 'git'
    clone(hg_url(server.url), repo, '-q')
    cloned = refs(repo)
    notes = cloned['refs/notes/cinnabar']
    metadata = git('cat-file', 'commit', 'refs/cinnabar/metadata',
                   cwd=repo).out.split('\n')
    assert f'parent {notes}' == metadata[4]  # the fourth part: git2hg
    hg('-R', colliding_repo, 'update', '-q', 'default')
    new = hg_commit(hg, colliding_repo, {'b': 'b\n'}, 'second')
    assert_no_traceback(git('fetch', '-q', 'origin', cwd=repo))
    fetched = refs(repo)
    assert fetched['refs/notes/cinnabar'] != notes
    log = git('log', '-1', '--notes=cinnabar', '--format=%N',
              'origin/branches/default/tip', cwd=repo).out
    assert log.startswith(f'changeset {new}\n')
    assert git('cinnabar', 'rollback', '--candidates', cwd=repo).out \
        .split()[::2][1:] == [cloned['refs/cinnabar/metadata']]

    assert_no_traceback(git('cinnabar', 'rollback', cwd=repo))
    assert refs(repo) == cloned
    # The clone's metadata has no previous one: back to none, as before
    # the clone (git-cinnabar 0.7 does the same); your branches stay.
    result = git('cinnabar', 'rollback', '-v', cwd=repo)
    assert result.out == '' and 'nothing' in result.err
    assert refs(repo) == {'refs/heads/branches/default/tip':
                          cloned['refs/heads/branches/default/tip']}
    assert_no_traceback(git('fetch', '-q', 'origin', cwd=repo))
    assert refs(repo, 'refs/remotes/') == {
        k: v for k, v in fetched.items() if k.startswith('refs/remotes/')}
    assert rev_parse(repo, 'refs/cinnabar/metadata') != ''
    assert rev_parse(repo, 'refs/notes/cinnabar') != ''


def test_notes_follow_a_push(colliding_repo, hg, hg_serve, tmp_path):
    server = hg_serve(colliding_repo)
    repo = tmp_path / 'git'
    clone(hg_url(server.url), repo, '-q')
    git('checkout', '-q', 'origin/branches/b2/tip', cwd=repo)
    (repo / 'c').write_text('c\n')
    git('add', 'c', cwd=repo)
    git('commit', '-q', '-m', 'on b2', cwd=repo)
    result = push(repo, 'origin', 'HEAD:refs/heads/branches/b2/tip')
    assert result.returncode == 0, result.describe()
    node = hg('-R', colliding_repo, 'log', '-r', 'b2', '-T', '{node}').out
    log = git('log', '-1', '--notes=cinnabar', '--format=%N', 'HEAD',
              cwd=repo).out
    assert log.startswith(f'changeset {node}\n')
    # The pushed changeset's parent is b2's changeset, not b1's.
    assert hg('-R', colliding_repo, 'log', '-r', 'p1(b2)', '-T',
              '{node}').out == HG_NODES['b2']
