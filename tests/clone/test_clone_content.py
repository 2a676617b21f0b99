"""The files of converted commits are the files of the changesets.

Independent of the expected ids: `git archive` of the commit a changeset
maps to must hold the same paths, contents, exec bits and symlinks as
`hg archive` of the changeset; and a clone's checkout is that tree.
"""

import pytest

from lib import env as test_env
from lib.corpus import Corpus
from lib.git import clone, git, git2hg, hg2git, rev_parse
from lib.tree import differences, git_tree, hg_tree, worktree

# tampered.hg has hostile paths: see hostile/test_clone_hostile_paths.py.
BUNDLES = [b for b in Corpus(test_env.corpus_dir()).hgtests_bundles()
           if b != 'tampered.hg']
MAX_COMPARED = 12
DEFAULT_TIP = 'max(head() and branch("re:^default$") and not closed())'


def changesets_to_compare(hg, repo, expected):
    """Every expected changeset of a small bundle; else heads and tip."""
    if len(expected) <= MAX_COMPARED:
        return sorted(expected)
    heads = [node for node, _ in hg.heads(repo)][:MAX_COMPARED]
    tip = hg.nodes(repo, 'tip')
    return [n for n in dict.fromkeys(tip + heads) if n in expected]


def assert_same_trees(hg, repo, clone_dir, nodes, scratch):
    commits = hg2git(clone_dir, nodes)
    for node in nodes:
        diff = differences(git_tree(clone_dir, commits[node]),
                           hg_tree(hg, repo, node, scratch))
        assert not diff, f'changeset {node}:\n{diff}'


@pytest.mark.parametrize('bundle', BUNDLES)
def test_commit_trees_match_hg_archive(bundle, source, corpus, hg,
                                       hg_repos, tmp_path):
    src = source('http', bundle)
    clone(src.url, tmp_path / 'clone', '--no-checkout')
    repo = hg_repos.get(bundle)
    nodes = changesets_to_compare(hg, repo, corpus.expected(bundle))
    assert nodes
    assert_same_trees(hg, repo, tmp_path / 'clone', nodes, tmp_path)


@pytest.mark.parametrize('bundle', BUNDLES)
def test_checkout_is_default_branch_tip(bundle, source, hg, hg_repos,
                                        tmp_path):
    """The clone checks out the tip of the default branch, as `hg clone`
    would.  Without a default branch (issue4438-*), HEAD may be unborn,
    but if it is not, its checkout must still match its changeset."""
    src = source('http', bundle)
    repo, work = hg_repos.get(bundle), tmp_path / 'clone'
    clone(src.url, work)
    default_tip = hg.nodes(repo, DEFAULT_TIP)
    head = rev_parse(work, 'HEAD')
    assert head or not default_tip, 'no HEAD although hg has a default tip'
    if not head:
        return
    node = git2hg(work, [head])[head]
    assert [node] == default_tip or not default_tip
    assert git('status', '--porcelain', cwd=work).out == ''
    diff = differences(worktree(work), hg_tree(hg, repo, node, tmp_path))
    assert not diff, f'checkout of {node}:\n{diff}'
