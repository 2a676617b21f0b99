"""Repositories whose refs are in reftable (git 2.45 or later; git 3.0's
default), made with `init.defaultRefFormat=reftable` or converted from
files by `git refs migrate --ref-format=reftable` (git 2.46 or later):
every command gives what it gives in a repository of files, the same
git ids and the same refs (as `git for-each-ref` lists them), and
`git cinnabar fsck --full` finds nothing.

The git of these tests is the one `make reftable-git` builds from the
pinned git tree (lib.env.reftable_git), first on PATH for the module: the
machine's git may be too old to read such a repository.  Each test runs
its commands in a repository of files and in one of `layout`, from the
same hg repository, and compares.
"""

import os
import shutil

import pytest

from lib import env as test_env
from lib.checks import assert_no_traceback
from lib.git import METADATA_REF, git, git2hg, hg_url, lasting_refs
from lib.git import identity_env, refs, rev_parse
from lib.plumbing import commit_tree, parents, tree_of
from lib.push import assert_pushed, push

# Run again with each release of the user's git that makes such
# repositories (`make test-user-git`).
pytestmark = pytest.mark.usergit

LAYOUTS = ['reftable', 'migrated']
BUNDLE = 'rebase.hg'
TIP = 'refs/remotes/origin/branches/default/tip'
GIT_ENV = identity_env('Dev', 'dev@example.org')


@pytest.fixture(scope='module', autouse=True)
def reftable_git(module_monkeypatch):
    try:
        path = test_env.reftable_git()
    except test_env.SetupError as e:
        pytest.skip(str(e))
    module_monkeypatch.setenv(
        'PATH', str(path.parent) + os.pathsep + os.environ['PATH'])
    version = git('--version').out.split()[2]
    assert tuple(map(int, version.split('.')[:2])) >= (2, 46), version
    return path


def ref_format(repo):
    return git('rev-parse', '--show-ref-format', cwd=repo).out.strip()


def make_clone(url, dest, layout, *options):
    """A clone of `url` at `dest` whose refs are kept as `layout` says:
    files, reftable (made so), or migrated (made with files, then
    converted: without reflogs, see below)."""
    config = ('-c', 'init.defaultRefFormat=reftable') \
        if layout == 'reftable' else ()
    if layout == 'migrated':
        # git 2.47's `refs migrate` cannot move reflogs (2.48 can).
        options += ('-c', 'core.logAllRefUpdates=false')
    result = git(*config, 'clone', '-q', *options, url, dest.name,
                 cwd=dest.parent, check=False, timeout=600)
    assert result.returncode == 0, result.describe()
    if layout == 'migrated':
        git('refs', 'migrate', '--ref-format=reftable', cwd=dest)
    assert ref_format(dest) == ('files' if layout == 'files'
                                else 'reftable')
    return dest


def make_init(dest, layout):
    kind = 'files' if layout == 'files' else 'reftable'
    git('init', '-q', f'--ref-format={kind}', dest)
    return dest


def all_refs(repo):
    return git('for-each-ref', cwd=repo).out


def assert_fsck_clean(repo):
    result = git('cinnabar', 'fsck', '--full', cwd=repo, check=False)
    assert result.returncode == 0, result.describe()
    assert 'no problem' in result.out + result.err, result.describe()


def cinnabar(repo, *args, **kwargs):
    result = git('cinnabar', *args, cwd=repo, check=False, **kwargs)
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    return result


@pytest.fixture
def half(hg, hg_repos, tmp_path):
    """(the whole hg repository, a copy of its first half, served from
    its path)."""
    full = hg_repos.get(BUNDLE)
    total = len(hg.nodes(full))
    served = hg_repos.copy(BUNDLE, tmp_path / 'served', rev=total // 2)
    return full, served


@pytest.mark.parametrize('layout', LAYOUTS)
def test_clone_fetch_rollback_fsck(layout, hg, half, tmp_path):
    """A clone of the first half, the rest fetched, then rolled back and
    fetched again: the same refs at every step as in a repository of
    files, the metadata fsck-clean."""
    full, served = half
    url = hg_url(served)
    repos = [make_clone(url, tmp_path / name, name, '--no-checkout')
             for name in ('files', layout)]
    cloned = [all_refs(r) for r in repos]
    assert cloned[0] == cloned[1]
    hg('-R', served, 'pull', '-q', full)
    for repo in repos:
        assert_no_traceback(git('fetch', 'origin', cwd=repo, timeout=600))
    fetched = [all_refs(r) for r in repos]
    assert fetched[0] == fetched[1] != cloned[0]
    for repo in repos:
        assert_fsck_clean(repo)
    for repo in repos:
        cinnabar(repo, 'rollback')
    # The fsck above left refs/cinnabar/checked, which rollback keeps.
    rolled = [lasting_refs(r) for r in repos]
    assert rolled[0] == rolled[1]
    assert rev_parse(repos[1], METADATA_REF) == rev_parse(repos[0],
                                                          METADATA_REF)
    for repo in repos:
        assert_no_traceback(git('fetch', 'origin', cwd=repo, timeout=600))
        assert_fsck_clean(repo)
    assert lasting_refs(repos[0]) == lasting_refs(repos[1])
    # The repository lock is a file beside the refs, not among them.
    assert 'cinnabar.lock' not in all_refs(repos[1])


def test_rollback_from_reflogs(hg, half, tmp_path):
    """Without the refs saved at the fetch, rollback takes the
    remote-tracking refs back to their reflog's older values: reftable's
    reflogs, which are no files under .git/logs."""
    full, served = half
    repo = make_clone(hg_url(served), tmp_path / 'repo', 'reftable',
                      '--no-checkout')
    before = refs(repo, 'refs/remotes/origin/')
    hg('-R', served, 'pull', '-q', full)
    assert_no_traceback(git('fetch', 'origin', cwd=repo, timeout=600))
    assert refs(repo, 'refs/remotes/origin/') != before
    shutil.rmtree(repo / '.git' / 'cinnabar' / 'fetch-refs')
    cinnabar(repo, 'rollback')
    assert refs(repo, 'refs/remotes/origin/') == before


@pytest.mark.parametrize('layout', LAYOUTS)
def test_push_pull_tag(layout, hg, hg_repos, tmp_path):
    """A commit pushed, `git pull` after a change on the hg side, and a
    tag made with `git cinnabar tag` and pushed: the same hg ids on both
    sides, the same git ids as from a repository of files."""
    results = []
    for name in ('files', layout):
        served = hg_repos.copy(BUNDLE, tmp_path / f'served-{name}')
        repo = make_clone(hg_url(served), tmp_path / name, name)
        (repo / 'pushed').write_text('pushed\n')
        git('add', 'pushed', cwd=repo)
        git('commit', '-q', '-m', 'pushed', cwd=repo, extra_env=GIT_ENV)
        assert_pushed(push(repo, 'origin', 'HEAD:branches/default/tip'))
        pushed = rev_parse(repo, 'HEAD')
        node = hg('-R', served, 'log', '-r', 'tip', '-T', '{node}').out
        assert git2hg(repo, [pushed]) == {pushed: node}

        hg('-R', served, 'update', '-q', 'tip')
        (served / 'from-hg').write_text('from hg\n')
        hg('-R', served, 'add', '-q', served / 'from-hg')
        hg('-R', served, 'commit', '-q', '-m', 'from hg', '-u', 'Dev',
           '-d', '1700000100 0')
        assert_no_traceback(git('pull', '-q', '--ff-only', cwd=repo,
                                timeout=600))
        assert (repo / 'from-hg').read_text() == 'from hg\n'

        git('config', 'cinnabar.experiments', 'tag', cwd=repo)
        cinnabar(repo, 'tag', '-m', 'tagged', 'v1', pushed,
                 extra_env=GIT_ENV)
        assert_pushed(push(repo, 'origin', 'HEAD:branches/default/tip'))
        assert 'v1' in hg('-R', served, 'tags').out
        assert 'v1' in cinnabar(repo, 'tag', '-l').out
        assert_fsck_clean(repo)
        results.append((lasting_refs(repo), rev_parse(repo, 'HEAD'),
                        hg('-R', served, 'log', '-T', '{node}\n').out))
    assert results[0] == results[1]


@pytest.mark.parametrize('layout', LAYOUTS)
def test_bundle_unbundle_reclone(layout, hg, hg_repos, tmp_path):
    """`git cinnabar bundle` writes the same bundle, `unbundle` into an
    empty repository and `reclone` give the same metadata as in a
    repository of files."""
    url = hg_url(hg_repos.get(BUNDLE))
    results = []
    for name in ('files', layout):
        repo = make_clone(url, tmp_path / name, name, '--no-checkout')
        metadata = rev_parse(repo, METADATA_REF)
        bundle = tmp_path / f'{name}.hg'
        cinnabar(repo, 'bundle', bundle, '--', '--remotes')
        empty = make_init(tmp_path / f'{name}-unbundled', name)
        cinnabar(empty, 'unbundle', bundle)
        assert_fsck_clean(empty)
        before = lasting_refs(repo)
        cinnabar(repo, 'reclone', timeout=600)
        assert lasting_refs(repo) == before
        assert_fsck_clean(repo)
        results.append((bundle.read_bytes(), metadata,
                        rev_parse(repo, METADATA_REF), lasting_refs(empty)))
    assert results[0] == results[1]


@pytest.mark.parametrize('layout', LAYOUTS)
def test_upgrade(layout, hg_repos, tmp_path):
    """Metadata flags written in an older way are rewritten by
    `git cinnabar upgrade`, through the reftable refs."""
    url = hg_url(hg_repos.get(BUNDLE))
    repo = make_clone(url, tmp_path / layout, layout, '--no-checkout')
    good = rev_parse(repo, METADATA_REF)
    old = commit_tree(repo, tree_of(repo, good), parents(repo, good),
                      b'unified-manifests-v2  files-meta')
    git('update-ref', METADATA_REF, old, cwd=repo)
    fsck = git('cinnabar', 'fsck', cwd=repo, check=False)
    assert fsck.returncode != 0 and 'git cinnabar upgrade' in fsck.err
    assert 'rewrote the metadata flags' in cinnabar(repo, 'upgrade').out
    assert rev_parse(repo, METADATA_REF) == good
    assert_fsck_clean(repo)


@pytest.mark.parametrize('layout', LAYOUTS)
def test_graft_and_cinnabarclone(layout, hg_repos, hg_serve, bundle_server,
                                 tmp_path):
    """A repository grafting onto its own commits (`cinnabar.graft`),
    then one cloning through a cinnabarclone bundle of that metadata,
    both reftable: the same ids as a plain clone."""
    served = hg_repos.copy(BUNDLE, tmp_path / 'served')
    url = hg_url(served)
    reference = make_clone(url, tmp_path / 'reference', 'files',
                           '--no-checkout')
    expected = lasting_refs(reference)
    tip = expected[TIP]

    # The reference's commits in a repository of `layout`, grafted.
    grafted = make_init(tmp_path / 'grafted', layout)
    git('fetch', '-q', reference, f'{TIP}:refs/heads/mirror', cwd=grafted)
    result = git('-c', 'cinnabar.graft=true', 'fetch', url,
                 'refs/heads/branches/default/tip', cwd=grafted,
                 check=False, timeout=600)
    assert result.returncode == 0, result.describe()
    assert 'recorded onto existing commits' in result.err, result.describe()
    assert rev_parse(grafted, 'FETCH_HEAD') == tip
    assert git2hg(grafted, [tip]) == git2hg(reference, [tip])
    assert_fsck_clean(grafted)

    # A cinnabarclone bundle of the reference's metadata, for a clone.
    www = tmp_path / 'www'
    www.mkdir()
    git('bundle', 'create', www / 'metadata.bundle', METADATA_REF,
        cwd=reference)
    server = bundle_server(www)
    extension = test_env.ROOT / 'hg' / 'cinnabarclone.py'
    with open(served / '.hg' / 'hgrc', 'a') as f:
        f.write(f'[extensions]\ncinnabarclone = {extension}\n')
    (served / '.hg' / 'cinnabar.manifest').write_text(
        f'{server.url()}metadata.bundle\n')
    repo = make_clone(hg_url(hg_serve(served).url), tmp_path / 'cloned',
                      layout, '--no-checkout')
    assert rev_parse(repo, METADATA_REF) == rev_parse(reference,
                                                      METADATA_REF)
    assert refs(repo)[TIP] == tip
    assert_fsck_clean(repo)
