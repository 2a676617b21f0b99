"""The refs an hg repository shows to git.

Layout: `refs/heads/branches/<branch>/tip` for the tip-most head of each
named branch, `refs/heads/branches/<branch>/<hg id>` for its other heads,
`refs/heads/bookmarks/<name>` for each bookmark, and HEAD at the tip of the
default branch.  A clone shows them under `refs/remotes/origin/`.
"""

import pytest

from lib.checks import assert_expected_ids, assert_no_traceback
from lib.git import NULL_ID, clone, git, git2hg, hg2git, hg_url
from lib.git import ls_remote, refs, rev_parse

ORIGIN = 'refs/remotes/origin/'


def commit(hg, repo, path, message):
    (repo / path).write_text(message + '\n')
    hg('-R', repo, 'commit', '-q', '-A', '-m', message,
       '-d', '0 0', cwd=repo)


@pytest.fixture(scope='module')
def small_repo(hg, tmp_path_factory):
    """Two heads on default, two more named branches, two bookmarks.

    rev 0 - 1 (default, bookmark `feature-x`)
        \\- 2 (default, tip of default) - 3 (branch stable)
    rev 1 - 4 (branch dev/next, bookmark `topic`)
    """
    repo = tmp_path_factory.mktemp('layout') / 'repo'
    hg('init', repo)
    commit(hg, repo, 'a', 'root')
    commit(hg, repo, 'b', 'first head of default')
    hg('-R', repo, 'update', '-q', '0')
    commit(hg, repo, 'c', 'second head of default')
    hg('-R', repo, 'branch', '-q', 'stable')
    commit(hg, repo, 'd', 'on stable')
    hg('-R', repo, 'update', '-q', '1')
    hg('-R', repo, 'branch', '-q', 'dev/next')
    commit(hg, repo, 'e', 'on dev/next')
    hg('-R', repo, 'bookmark', '-r', '1', 'feature-x')
    hg('-R', repo, 'bookmark', '-r', '4', 'topic')
    return repo


def expected_layout(hg, repo):
    """{ref under refs/heads/: hg changeset id} from hg's own answers."""
    layout = {}
    for node, branch in hg.heads(repo):  # highest revision first
        tip = f'branches/{branch}/tip'
        layout[f'branches/{branch}/{node}' if tip in layout else tip] = node
    for name, node in hg.bookmarks(repo).items():
        layout[f'bookmarks/{name}'] = node
    return layout


def test_small_repo_is_what_the_test_expects(hg, small_repo):
    layout = expected_layout(hg, small_repo)
    assert len(layout) == 6
    assert sum(name.startswith('branches/default/') for name in layout) == 2


@pytest.fixture(scope='module')
def served(small_repo, hg_serve_module):
    return hg_url(hg_serve_module(small_repo).url)


@pytest.fixture(scope='module')
def cloned(served, tmp_path_factory):
    dest = tmp_path_factory.mktemp('layout-clone') / 'clone'
    assert_no_traceback(clone(served, dest))
    return dest


def test_clone_has_refs_for_heads_and_bookmarks(hg, small_repo, cloned):
    layout = expected_layout(hg, small_repo)
    got = refs(cloned, ORIGIN)
    got.pop(ORIGIN + 'HEAD', None)
    assert sorted(got) == sorted(ORIGIN + name for name in layout)
    commits = hg2git(cloned, layout.values())
    for name, node in layout.items():
        assert got[ORIGIN + name] == commits[node] != NULL_ID, name


def test_clone_head_is_default_tip(hg, small_repo, cloned):
    default_tip = expected_layout(hg, small_repo)['branches/default/tip']
    head = rev_parse(cloned, 'HEAD')
    assert git2hg(cloned, [head]) == {head: default_tip}
    assert rev_parse(cloned, ORIGIN + 'HEAD') == head
    assert git('status', '--porcelain', cwd=cloned).out == ''


def test_ls_remote_in_clone(hg, small_repo, served, cloned):
    layout = expected_layout(hg, small_repo)
    got = ls_remote(served, cloned)
    commits = hg2git(cloned, layout.values())
    expected = {f'refs/heads/{name}': commits[node]
                for name, node in layout.items()}
    expected['HEAD'] = commits[layout['branches/default/tip']]
    assert got == expected


def test_ls_remote_outside_any_repository(hg, small_repo, served, tmp_path,
                                          monkeypatch):
    """Without a repository nothing is imported: the names are the same,
    the ids may be unknown (null)."""
    layout = expected_layout(hg, small_repo)
    monkeypatch.setenv('GIT_CEILING_DIRECTORIES', str(tmp_path.parent))
    got = ls_remote(served, tmp_path)
    assert sorted(got) == sorted(['HEAD'] + [f'refs/heads/{name}'
                                             for name in layout])


def test_branch_name_with_colon_is_skipped_with_warning(source, corpus,
                                                        tmp_path):
    """`colon:test` is not a valid git ref name: the clone succeeds, says
    so in a warning, and converts everything else."""
    src = source('http', 'test-invalid-branch-name.hg')
    result = clone(src.url, tmp_path / 'clone')
    assert_no_traceback(result)
    assert any(line.startswith('warning:') and 'colon:test' in line
               for line in result.err.splitlines()), result.describe()
    names = refs(tmp_path / 'clone', ORIGIN)
    assert ORIGIN + 'branches/default/tip' in names
    assert_expected_ids(tmp_path / 'clone',
                        corpus.expected('test-invalid-branch-name.hg'))


def test_names_starting_with_dash_are_refs_not_options(hg, tmp_path):
    """An hg branch `-x` and a bookmark `--foo` are refs as git-cinnabar
    makes them (`branches/-x/tip`, `bookmarks/--foo`: valid for `git
    check-ref-format`, and never the first word of an argument); a fetch
    and a push to the bookmark work, and no option of git's is taken
    from them (no FETCH_HEAD)."""
    from lib.push import hg_commit, make_hg_repo
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    hg('-R', repo, 'branch', '-q', '--', '-x')
    hg_commit(hg, repo, {'f': 'two\n'}, 'on -x')
    hg('-R', repo, 'bookmark', '--', '--foo')
    dest = tmp_path / 'clone'
    assert_no_traceback(clone(hg_url(str(repo)), dest, '-q'))
    tip = rev_parse(dest, 'refs/remotes/origin/branches/-x/tip')
    assert rev_parse(dest, 'refs/remotes/origin/bookmarks/--foo') == tip
    assert not (dest / '.git' / 'FETCH_HEAD').exists()
    git('checkout', '-q', '-b', 'work', tip, cwd=dest)
    (dest / 'f').write_text('three\n')
    git('commit', '-q', '-a', '-m', 'three', cwd=dest)
    assert_no_traceback(git('push', '-q', 'origin', 'work:bookmarks/--foo',
                            cwd=dest))
    assert hg('-R', repo, 'log', '-r', 'bookmark("--foo")', '-T',
              '{desc}').out == 'three'


def test_names_too_long_for_a_ref_file_are_skipped_with_warning(
        hg, hg_serve, tmp_path):
    """A bookmark of 300 bytes and a branch of 260 make ref names git
    cannot store as files (a component past NAME_MAX with `.lock`): a
    clone and a later fetch leave those refs out with a warning naming
    them (shortened), and import everything else, with hg's ids."""
    from lib.push import hg_commit, make_hg_repo
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    long_bookmark = 'b' * 300
    hg('-R', repo, 'bookmark', long_bookmark)
    hg('-R', repo, 'bookmark', 'short')
    hg_commit(hg, repo, {'f': 'two\n'}, 'on a long branch', branch='l' * 260)
    url = hg_url(hg_serve(repo).url)
    dest = tmp_path / 'clone'
    result = clone(url, dest)
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()

    def assert_warned(result):
        warnings = [line for line in result.err.splitlines()
                    if line.startswith('warning: ignoring ref')]
        assert len(warnings) == 2, result.describe()
        assert any('bookmarks/bbbbbbbb' in line and '(321 bytes)' in line
                   for line in warnings), result.describe()
        assert all(len(line) < 200 for line in warnings)

    assert_warned(result)
    got = refs(dest, ORIGIN)
    got.pop(ORIGIN + 'HEAD', None)
    layout = {name: node for name, node in expected_layout(hg, repo).items()
              if name in ('branches/default/tip', 'bookmarks/short')}
    assert sorted(got) == sorted(ORIGIN + name for name in layout)
    assert {name: git2hg(dest, [got[ORIGIN + name]])[got[ORIGIN + name]]
            for name in layout} == layout
    hg('-R', repo, 'update', '-q', 'short')
    new = hg_commit(hg, repo, {'g': 'three\n'}, 'after the clone')
    result = git('fetch', 'origin', cwd=dest)
    assert_warned(result)
    short = rev_parse(dest, ORIGIN + 'bookmarks/short')
    assert git2hg(dest, [short]) == {short: new}
