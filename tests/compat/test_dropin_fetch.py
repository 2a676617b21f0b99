"""Drop-in for git-cinnabar 0.7 users: `git cinnabar fetch`, against a
real `hg serve`.

- `git cinnabar fetch <remote> <id>...` writes FETCH_HEAD as
  git-cinnabar does (`<commit>\\t\\t'hg/revs/<hg id>' of <remote url>`),
  so that `git checkout FETCH_HEAD` works.
- `--bundle` imports nothing and writes what the server sends to
  standard output: `hg unbundle` takes it, and `git cinnabar unbundle`
  of it gives the commit a fetch gives.
"""

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import git, hg_url, refs, rev_parse
from lib.push import hg_commit, make_hg_repo


@pytest.fixture(scope='module')
def served(hg, hg_serve_module, tmp_path_factory):
    """A default branch and a closed branch `old` a clone leaves out
    (closed heads are not fetched); (repo, server, id of old's head)."""
    repo = make_hg_repo(hg, tmp_path_factory.mktemp('fetch') / 'hg',
                        {'a': 'a\n'})
    old = hg_commit(hg, repo, {'old': 'old\n'}, 'on old', branch='old')
    hg('-R', repo, 'commit', '-q', '--close-branch', '-m', 'close old',
       '-u', 'U <u@x>', '-d', '1600000000 0')
    closed = hg('-R', repo, 'log', '-r', '.', '-T', '{node}').out
    hg('-R', repo, 'update', '-q', 'default')
    hg_commit(hg, repo, {'b': 'b\n'}, 'second')
    return repo, hg_serve_module(repo), old, closed


def test_fetch_writes_fetch_head(served, tmp_path):
    repo, server, old, closed = served
    work = tmp_path / 'work'
    git('init', '-q', work)
    git('remote', 'add', 'origin', hg_url(server.url), cwd=work)
    # A clone limited to the default branch: it lacks `old`.
    git('fetch', '-q', 'origin', 'refs/heads/branches/default/tip',
        cwd=work)
    assert git('cinnabar', 'hg2git', old, cwd=work).out.strip() == '0' * 40
    before = refs(work)
    result = git('cinnabar', 'fetch', 'origin', old[:12], cwd=work)
    assert_no_traceback(result)
    commit = git('cinnabar', 'hg2git', old, cwd=work).out.strip()
    text = (work / '.git' / 'FETCH_HEAD').read_text()
    assert text == (f"{commit}\t\t'hg/revs/{old}' of "
                    f"{hg_url(server.url)}\n")
    assert f'hg/revs/{old} -> FETCH_HEAD' in result.err
    git('checkout', '-q', 'FETCH_HEAD', cwd=work)
    assert (work / 'old').read_text() == 'old\n'
    after = refs(work)
    assert {k: v for k, v in after.items()
            if not k.startswith(('refs/cinnabar/', 'refs/notes/'))} == {
        k: v for k, v in before.items()
        if not k.startswith(('refs/cinnabar/', 'refs/notes/'))}


def test_fetch_bundle(served, hg, tmp_path):
    repo, server, old, closed = served
    work = tmp_path / 'work'
    git('init', '-q', work)
    bundle = tmp_path / 'out.hg'
    with open(bundle, 'wb') as out:
        result = git('cinnabar', 'fetch', '--bundle', hg_url(server.url),
                     closed, cwd=work)
        out.write(result.stdout)
    assert_no_traceback(result)
    assert refs(work) == {}
    assert bundle.read_bytes()[:4] == b'HG20'
    # hg takes it: the closed head and its ancestors.
    target = tmp_path / 'hg'
    hg('init', target)
    hg('-R', target, 'unbundle', '-q', bundle)
    assert hg.nodes(target) == hg.nodes(repo, f'::{closed}')
    # So does git cinnabar unbundle, which gives the commit a fetch gives.
    assert_no_traceback(git('cinnabar', 'unbundle', str(bundle), cwd=work))
    from_bundle = git('cinnabar', 'hg2git', closed, cwd=work).out.strip()
    other = tmp_path / 'other'
    git('init', '-q', other)
    git('cinnabar', 'fetch', hg_url(server.url), closed, cwd=other)
    assert from_bundle == rev_parse(other, 'FETCH_HEAD')
    # Not with --tags.
    assert_failed_for_people(git('cinnabar', 'fetch', '--bundle', '--tags',
                                 hg_url(server.url), closed, cwd=work,
                                 check=False),
                             '--bundle and --tags do not go together')
