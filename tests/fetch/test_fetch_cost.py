"""A fetch's work grows with what it fetches, not with the width of the
manifests it builds on: the git tree of the stored parent of the first
new changeset is that parent's commit's tree, not built again from its
manifest tree (a lookup of every file of the manifest)."""

from lib.checks import assert_no_traceback
from lib.git import clone, git, hg_url, rev_parse
from lib.push import hg_commit

DIRS = 40
TIP = 'refs/remotes/origin/branches/default/tip'


def store_stats(result):
    """(objects written, duplicates not written) from the helper's
    GIT_CINNABAR_TRACE line of a fetch."""
    lines = [line for line in result.err.splitlines()
             if 'cinnabar-helper: store:' in line]
    assert len(lines) == 1, result.describe()
    parts = lines[0].split(': store: ')[1].split(', ')
    return int(parts[0].split()[0]), int(parts[1].split()[0])


def test_fetch_does_not_build_the_parents_git_tree_again(hg, hg_serve,
                                                         tmp_path):
    served = tmp_path / 'served'
    hg('init', served)
    hg_commit(hg, served, {f'd{i:02}/f': f'{i}\n' for i in range(DIRS)},
              'wide')
    url = hg_url(hg_serve(served).url)
    repo = tmp_path / 'clone'
    clone(url, repo, '--no-checkout', check=True)
    hg_commit(hg, served, {'d00/f': 'changed\n'}, 'one file')
    result = git('fetch', '-q', 'origin', cwd=repo,
                 extra_env={'GIT_CINNABAR_TRACE': '1'})
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    written, duplicates = store_stats(result)
    # The parent's git trees are stored: building them again would meet
    # each of its DIRS + 1 trees as a duplicate.
    assert duplicates < DIRS // 2, (written, duplicates)
    fresh = tmp_path / 'fresh'
    clone(url, fresh, '--no-checkout', check=True)
    assert rev_parse(repo, f'{TIP}^{{tree}}') == \
        rev_parse(fresh, f'{TIP}^{{tree}}')
