"""Cloning nginx.hg (9,828 changesets, 22 heads) over HTTP, from a local
path and from a bundle file gives exactly the reference's git commits, with
the right file trees.  Not over ssh: that is the local path's transport
(`hg serve --stdio` on a pipe) behind another command, which the corpus
clones test on every repository."""

import pytest

from lib.checks import assert_expected_ids, assert_no_traceback, imported
from lib.corpus import NGINX
from lib.git import clone, hg2git
from lib.tree import differences, git_tree, hg_tree

pytestmark = pytest.mark.slow
CLONE_TIMEOUT = 600


@pytest.fixture(scope='module')
def nginx_clone(module_source, tmp_path_factory):
    """nginx_clone(transport) -> a --no-checkout clone, made once."""
    clones = {}

    def make(transport):
        if transport not in clones:
            src = module_source(transport, NGINX)
            dest = tmp_path_factory.mktemp(f'nginx-{transport}') / 'clone'
            result = clone(src.url, dest, '--no-checkout',
                           timeout=CLONE_TIMEOUT)
            assert_no_traceback(result)
            src.assert_used()
            clones[transport] = dest
        return clones[transport]
    return make


@pytest.mark.parametrize('transport', ('http', 'local', 'bundle'))
def test_nginx_clone_gives_expected_ids(transport, nginx_clone, corpus, hg,
                                        hg_repos):
    repo = nginx_clone(transport)
    server_nodes = hg.nodes(hg_repos.get(NGINX))
    expected = corpus.expected(NGINX)
    assert_expected_ids(repo, expected, server_nodes)
    missing = set(server_nodes) & set(expected) - imported(repo,
                                                           server_nodes)
    assert not missing, f'{len(missing)} changesets not imported'


def test_nginx_head_trees_match_hg_archive(nginx_clone, hg, hg_repos,
                                           tmp_path):
    repo = hg_repos.get(NGINX)
    heads = [node for node, _ in hg.heads(repo)]
    assert len(heads) == 22
    commits = hg2git(nginx_clone('http'), heads)
    for node in heads:
        diff = differences(git_tree(nginx_clone('http'), commits[node]),
                           hg_tree(hg, repo, node, tmp_path))
        assert not diff, f'changeset {node}:\n{diff}'
