"""Cloning every small corpus bundle, over every transport, gives exactly
the git commits the reference implementation gives.

Transports: `hg serve` over HTTP, `hg serve --stdio` through the ssh
wrapper, a local repository path, and the bundle file itself.
"""

import pytest

from conftest import TRANSPORTS
from lib import env as test_env
from lib.checks import assert_expected_ids, assert_no_traceback, imported
from lib.corpus import Corpus
from lib.git import clone

BUNDLES = Corpus(test_env.corpus_dir()).hgtests_bundles()


@pytest.mark.parametrize('transport', TRANSPORTS)
@pytest.mark.parametrize('bundle', BUNDLES)
def test_clone_gives_expected_ids(bundle, transport, source, corpus, hg,
                                  hg_repos, tmp_path):
    src = source(transport, bundle)
    result = clone(src.url, tmp_path / 'clone', '--no-checkout')
    assert_no_traceback(result)
    src.assert_used()
    server_nodes = hg.nodes(hg_repos.get(bundle))
    expected = corpus.expected(bundle)
    assert_expected_ids(tmp_path / 'clone', expected, server_nodes)
    missing = set(server_nodes) & set(expected) - imported(
        tmp_path / 'clone', server_nodes)
    assert not missing, f'changesets not imported: {sorted(missing)}'
