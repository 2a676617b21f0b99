"""`git cinnabar rollback`: after a fetch, going back gives the refs and
metadata of before the fetch, byte for byte.

The served repository (a local hg path) starts as part of a corpus
bundle; after the clone, the rest is pulled into it and fetched.
"""

import shutil

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.corpus import NGINX
from lib.git import METADATA_REF, NULL_ID, clone, git, git2hg, hg_url
from lib.git import refs, rev_parse
from lib.push import hg_commit, make_hg_repo

CHECKED = 'refs/cinnabar/checked'


def for_each_ref(repo):
    return git('for-each-ref', cwd=repo).stdout


def rollback(repo, *args, check=False):
    return git('cinnabar', 'rollback', *args, cwd=repo, check=check)


def half_clone(hg, hg_repos, tmp_path, bundle):
    full = hg_repos.get(bundle)
    total = len(hg.nodes(full))
    served = hg_repos.copy(bundle, tmp_path / 'served', rev=total // 2)
    repo = tmp_path / 'clone'
    clone(hg_url(served), repo, '--no-checkout', timeout=600)
    return full, served, repo


def fetch_the_rest(hg, full, served, repo):
    hg('-R', served, 'pull', '-q', full, timeout=600)
    assert_no_traceback(git('fetch', 'origin', cwd=repo, timeout=600))


@pytest.mark.parametrize('bundle', ['hgweb+obs.hg', 'rebase.hg',
                                    pytest.param(NGINX,
                                                 marks=pytest.mark.slow)])
def test_rollback_after_fetch_gives_refs_back(bundle, hg, hg_repos, tmp_path):
    full, served, repo = half_clone(hg, hg_repos, tmp_path, bundle)
    before = for_each_ref(repo)
    metadata_before = rev_parse(repo, METADATA_REF)
    fetch_the_rest(hg, full, served, repo)
    assert for_each_ref(repo) != before
    result = rollback(repo)
    assert result.returncode == 0, result.describe()
    assert for_each_ref(repo) == before
    assert rev_parse(repo, METADATA_REF) == metadata_before
    # The metadata is usable: fetching again gives the same state.
    assert_no_traceback(git('fetch', 'origin', cwd=repo, timeout=600))
    fsck = git('cinnabar', 'fsck', '--full', cwd=repo, check=False)
    assert fsck.returncode == 0, fsck.describe()


def test_rollback_of_a_fetch_made_in_another_worktree(hg, hg_repos,
                                                      tmp_path):
    """Refs are shared by a repository's worktrees: a fetch made in a
    linked worktree is rolled back from the main one, fetch refs and all
    (they were saved in the worktree's own git directory, so the rollback
    lost refs/cinnabar/refs/*)."""
    full, served, repo = half_clone(hg, hg_repos, tmp_path, 'rebase.hg')
    other = tmp_path / 'other'
    git('worktree', 'add', '-q', '--detach', str(other), cwd=repo)
    before = for_each_ref(repo)
    hg('-R', served, 'pull', '-q', full)
    assert_no_traceback(git('fetch', 'origin', cwd=other))
    assert for_each_ref(repo) != before
    result = rollback(repo)
    assert result.returncode == 0, result.describe()
    assert for_each_ref(repo) == before


def test_rollback_fsck_and_candidates(hg, hg_repos, tmp_path):
    full, served, repo = half_clone(hg, hg_repos, tmp_path, 'hgweb+obs.hg')
    assert git('cinnabar', 'fsck', cwd=repo, check=False).returncode == 0
    checked = rev_parse(repo, CHECKED)
    before = for_each_ref(repo)
    fetch_the_rest(hg, full, served, repo)
    current = rev_parse(repo, METADATA_REF)
    listed = rollback(repo, '--candidates', check=True).out.splitlines()
    assert listed == [f'{current} (current)', f'{checked} (checked)']
    assert rollback(repo, '--fsck').returncode == 0
    assert for_each_ref(repo) == before
    assert rev_parse(repo, METADATA_REF) == checked


def test_rollback_refusals(hg, hg_repos, tmp_path):
    _, _, repo = half_clone(hg, hg_repos, tmp_path, 'rebase.hg')
    before = for_each_ref(repo)
    # (Only one metadata commit: rollback goes back to no metadata, see
    # compat/test_dropin_metadata.py.) No checked metadata yet.
    assert_failed_for_people(rollback(repo, '--fsck'),
                             'there is no checked metadata to go back to')
    # A commit outside the chain, without --force.
    head = rev_parse(repo, 'refs/remotes/origin/HEAD')
    result = rollback(repo, head)
    assert_failed_for_people(result, f'{head} is not in the chain of the '
                             'current metadata')
    # With --force, still not metadata.
    assert_failed_for_people(rollback(repo, '--force', head),
                             f'{head} is not a cinnabar metadata commit')
    assert_failed_for_people(rollback(repo, 'no-such-ref'),
                             "invalid revision 'no-such-ref'")
    assert_failed_for_people(rollback(repo, '--bogus'),
                             'unknown option --bogus')
    assert for_each_ref(repo) == before


def test_rollback_without_saved_refs_uses_reflogs(hg, hg_repos, tmp_path):
    """Without the refs saved at the fetch, the remote-tracking refs go
    back to the newest value of their reflog the metadata knows."""
    full, served, repo = half_clone(hg, hg_repos, tmp_path, 'hgweb+obs.hg')
    before = refs(repo, 'refs/remotes/origin/')
    fetch_the_rest(hg, full, served, repo)
    after_fetch = refs(repo, 'refs/remotes/origin/')
    moved = {n for n in before if after_fetch.get(n) != before[n]}
    assert moved, 'the fetch moved no remote-tracking ref'
    shutil.rmtree(repo / '.git' / 'cinnabar' / 'fetch-refs')
    # From a subdirectory: the metadata's trees are still read whole.
    (repo / 'sub').mkdir()
    assert rollback(repo / 'sub').returncode == 0
    now = refs(repo, 'refs/remotes/origin/')
    for name in moved:
        assert now.get(name) == before[name], name
    known = git2hg(repo, now.values())
    assert NULL_ID not in known.values()
    fetch_refs = refs(repo, 'refs/cinnabar/refs/')
    assert NULL_ID not in git2hg(repo, fetch_refs.values()).values()


def test_rollback_without_metadata(tmp_path):
    """Before any fetch (as git-cinnabar 0.7.5): --candidates lists
    nothing, rollback alone has nothing to roll back, a name that is no
    commit is an invalid revision, the null id changes nothing; no ref
    is made or moved."""
    repo = tmp_path / 'repo'
    git('init', '-q', repo)
    git('-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q',
        '--allow-empty', '-m', 'x', cwd=repo)
    before = for_each_ref(repo)
    result = rollback(repo, '--candidates')
    assert (result.returncode, result.out, result.err) == (0, '', '')
    assert_failed_for_people(rollback(repo), 'nothing to roll back')
    assert_failed_for_people(rollback(repo, 'foo'), "invalid revision 'foo'")
    assert_failed_for_people(rollback(repo, 'HEAD'),
                             'is not in the chain of the current metadata '
                             '(there is none)')
    result = rollback(repo, NULL_ID)
    assert (result.returncode, result.out, result.err) == (0, '', '')
    assert for_each_ref(repo) == before


@pytest.mark.parametrize('saved', [True, False])
def test_rollback_to_a_middle_metadata_restores_its_remote_refs(
        saved, hg, tmp_path):
    """A clone, then two fetches, each moving the branch's
    remote-tracking ref (three values in its reflog, all known to the
    newest metadata; the first two to the metadata of the first fetch):
    rolling back to the metadata of the first fetch sets the ref to the
    value it had with that metadata, the second, neither the first one
    (also known) nor the third, whether the refs were saved at the fetch
    or only the reflog is there to say; then, going back to the clone's
    metadata, the clone's value."""
    served = make_hg_repo(hg, tmp_path / 'served', {'f': 'one\n'})
    repo = tmp_path / 'clone'
    clone(hg_url(served), repo, '--no-checkout')
    ref = 'refs/remotes/origin/branches/default/tip'
    values, metadatas = [rev_parse(repo, ref)], [rev_parse(repo, METADATA_REF)]
    for text in ('two\n', 'three\n'):
        hg_commit(hg, served, {'f': text}, text.strip())
        assert_no_traceback(git('fetch', 'origin', cwd=repo))
        values.append(rev_parse(repo, ref))
        metadatas.append(rev_parse(repo, METADATA_REF))
    assert len(set(values)) == len(set(metadatas)) == 3
    reflog = git('reflog', 'show', '--format=%H', ref, '--', cwd=repo).out
    assert reflog.split()[:2] == [values[2], values[1]]
    if not saved:
        shutil.rmtree(repo / '.git' / 'cinnabar' / 'fetch-refs')
    result = rollback(repo, metadatas[1])
    assert result.returncode == 0, result.describe()
    assert rev_parse(repo, METADATA_REF) == metadatas[1]
    assert rev_parse(repo, ref) == values[1]
    assert rev_parse(repo, 'refs/remotes/origin/HEAD') == values[1]
    # Then to the clone's: the first value, which only the oldest entry's
    # old value holds.
    result = rollback(repo, metadatas[0])
    assert result.returncode == 0, result.describe()
    assert rev_parse(repo, ref) == values[0]
