"""A repository of SHA-256 objects (`git init --object-format=sha256`)
cannot hold git-cinnabar's metadata: every way in (git-remote-hg for each
command git sends it, every `git cinnabar` command that works in a
repository, `git clone` with a SHA-256 default) refuses in one `fatal:`
line naming the object format, a `hint:` saying how to make a SHA-1
repository, status 128, and the repository exactly as it was.
"""

import pytest

from lib.checks import assert_failed_for_people, file_digests
from lib.git import git, hg_url
from lib.push import make_hg_repo

SAYS = 'names its objects with sha256 (extensions.objectFormat)'
HINT = 'hint: make a SHA-1 repository for Mercurial remotes: `git init ' \
    '--object-format=sha1`'
# Every `git cinnabar` command but those that install git-cinnabar.
COMMANDS = (
    ['bundle', 'out.hg', '--all'], ['clear'], ['data', '-c', '0' * 40],
    ['fetch', 'origin', '0' * 40], ['fsck'], ['git2hg', 'HEAD'],
    ['hg2git', '0' * 40], ['reclone'], ['rollback'], ['strip', '0' * 40],
    ['tag', 'v1'], ['unbundle', 'in.hg'], ['upgrade'],
)


@pytest.fixture(scope='module')
def server(hg, tmp_path_factory):
    return make_hg_repo(hg, tmp_path_factory.mktemp('sha256') / 'srv',
                        {'a': 'a\n'})


@pytest.fixture
def sha256_repo(server, tmp_path):
    repo = tmp_path / 'repo'
    git('init', '-q', '--object-format=sha256', repo)
    git('remote', 'add', 'origin', hg_url(server), cwd=repo)
    git('commit', '-q', '--allow-empty', '-m', 'mine', cwd=repo)
    return repo


def assert_refused(result, repo, before):
    line = assert_failed_for_people(result, SAYS)
    assert result.returncode == 128, result.describe()
    assert HINT in result.err, result.describe()
    assert [line] == [e for e in result.err.splitlines()
                      if e.startswith('fatal:')], result.describe()
    assert 'Traceback' not in result.err
    # git's own fetch truncates FETCH_HEAD before it runs the helper.
    after = file_digests(repo / '.git', ignore={'FETCH_HEAD'})
    assert after == before, result.describe()


@pytest.mark.parametrize('args', (
    ['fetch'], ['fetch', 'origin', 'refs/heads/x:refs/heads/x'],
    ['push', 'origin', 'HEAD:refs/heads/branches/default/tip'],
    ['push', '--dry-run', 'origin', 'HEAD'], ['ls-remote', 'origin'],
    ['fetch', 'hg::tags:', 'tag', '*'],
), ids=lambda args: '-'.join(args[:2]))
def test_remote_helper_refuses(sha256_repo, args):
    before = file_digests(sha256_repo / '.git')
    result = git(*args, cwd=sha256_repo, check=False)
    assert_refused(result, sha256_repo, before)


@pytest.mark.parametrize('args', COMMANDS, ids=lambda args: args[0])
def test_commands_refuse(sha256_repo, args):
    before = file_digests(sha256_repo / '.git')
    result = git('cinnabar', *args, cwd=sha256_repo, check=False)
    assert_refused(result, sha256_repo, before)


def test_clone_refuses(server, tmp_path):
    result = git('clone', hg_url(server), 'dest', cwd=tmp_path, check=False,
                 extra_env={'GIT_DEFAULT_HASH': 'sha256'})
    assert_failed_for_people(result, SAYS)
    assert HINT in result.err, result.describe()
    assert not (tmp_path / 'dest').exists()


def test_sha1_repository_still_works(server, tmp_path):
    """The check reads the repository's own config: a SHA-1 repository
    that says so (`--object-format=sha1`) clones as any other."""
    repo = tmp_path / 'repo'
    git('init', '-q', '--object-format=sha1', repo)
    git('fetch', '-q', hg_url(server),
        'refs/heads/*:refs/remotes/hg/*', cwd=repo)
    assert git('cinnabar', 'fsck', cwd=repo, check=False).returncode == 0
