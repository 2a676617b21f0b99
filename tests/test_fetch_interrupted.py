"""A fetch whose helper dies half-way changes nothing, and the next fetch
gives what an uninterrupted one gives.

CINNABAR_TEST_DIE_AT=<phase> makes git-cinnabar-helper kill itself with
SIGKILL when it reaches the phase (see helper/PROTOCOL.md).
"""

import pytest

from lib.checks import assert_expected_ids, assert_no_traceback
from lib.corpus import NGINX
from lib.git import Metadata, fetch, hg_url, init, refs

PHASES = ('changesets', 'manifests', 'files', 'finish')
REFSPEC = 'refs/heads/*:refs/remotes/hg/*'
MEDIUM = 'hgweb+obs.hg'
TIMEOUT = 1800


def fetch_into_new_repo(url, dest, **kwargs):
    repo = init(dest)
    return repo, fetch(repo, url, REFSPEC, timeout=TIMEOUT, **kwargs)


def assert_interrupted_then_resumed(name, phase, url, corpus, tmp_path):
    repo, result = fetch_into_new_repo(
        url, tmp_path / 'interrupted', check=False,
        extra_env={'CINNABAR_TEST_DIE_AT': phase})
    assert result.returncode != 0, result.describe()
    assert_no_traceback(result)
    assert refs(repo) == {}, 'the interrupted fetch left refs'

    assert_no_traceback(fetch(repo, url, REFSPEC, timeout=TIMEOUT))
    reference, _ = fetch_into_new_repo(url, tmp_path / 'uninterrupted')
    assert refs(repo, 'refs/remotes/') == refs(reference, 'refs/remotes/')
    assert refs(repo, 'refs/remotes/')
    assert Metadata(repo).summary() == Metadata(reference).summary()
    assert_expected_ids(repo, corpus.expected(name))


@pytest.mark.parametrize('phase', PHASES)
def test_interrupted_fetch_changes_nothing(phase, hg_repos, hg_serve,
                                           corpus, tmp_path):
    url = hg_url(hg_serve(hg_repos.get(MEDIUM)).url)
    assert_interrupted_then_resumed(MEDIUM, phase, url, corpus, tmp_path)


@pytest.mark.slow
def test_interrupted_nginx_fetch_changes_nothing(hg_repos, hg_serve, corpus,
                                                 tmp_path):
    url = hg_url(hg_serve(hg_repos.get(NGINX)).url)
    assert_interrupted_then_resumed(NGINX, 'files', url, corpus, tmp_path)
