"""`git cinnabar clear` removes every cinnabar ref and nothing else; the
next fetch imports the same commits again."""

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import clone, git, hg_url, refs


def test_clear_removes_metadata_only(corpus, tmp_path):
    repo = tmp_path / 'clone'
    clone(hg_url(corpus.bundle('hgweb+obs.hg')), repo, '--no-checkout')
    git('cinnabar', 'fsck', cwd=repo)
    git('update-ref', 'refs/notes/cinnabar', 'refs/cinnabar/metadata',
        cwd=repo)
    git('update-ref', 'refs/notes/other', 'refs/cinnabar/metadata',
        cwd=repo)
    git('tag', 'mine', 'refs/remotes/origin/HEAD', cwd=repo)
    git('branch', 'work', 'refs/remotes/origin/HEAD', cwd=repo)
    before = refs(repo)
    assert any(n.startswith('refs/cinnabar/') for n in before)
    # What a fetch killed while keeping the topological heads leaves.
    cinnabar_dir = repo / '.git' / 'cinnabar'
    assert (cinnabar_dir / 'topological-heads').exists()
    (cinnabar_dir / 'topological-heads.tmp').write_text('')
    result = git('cinnabar', 'clear', cwd=repo)
    assert_no_traceback(result)
    after = refs(repo)
    kept = {n: o for n, o in before.items()
            if not n.startswith('refs/cinnabar/')
            and n != 'refs/notes/cinnabar'}
    assert after == kept
    assert 'refs/notes/other' in after and 'refs/tags/mine' in after
    assert not cinnabar_dir.exists()
    # Fetching again gives the same commits.
    assert_no_traceback(git('fetch', 'origin', cwd=repo))
    again = refs(repo)
    assert {n: o for n, o in again.items()
            if n.startswith('refs/remotes/')} == {
        n: o for n, o in before.items() if n.startswith('refs/remotes/')}
    assert again['refs/cinnabar/metadata']


def test_clear_refuses_arguments(corpus, tmp_path):
    repo = tmp_path / 'clone'
    clone(hg_url(corpus.bundle('renames.hg')), repo, '--no-checkout')
    before = refs(repo)
    assert_failed_for_people(git('cinnabar', 'clear', 'x', cwd=repo,
                                 check=False), 'clear takes no argument')
    assert refs(repo) == before
