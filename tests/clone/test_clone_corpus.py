"""Cloning every small corpus bundle, over every transport, gives exactly
the git commits the reference implementation gives.

Transports: `hg serve` over HTTP, `hg serve --stdio` through the ssh
wrapper, a local repository path, and the bundle file itself.
"""

import pytest

from lib import env as test_env
from lib.checks import assert_expected_ids, assert_no_traceback, imported
from lib.corpus import Corpus
from lib.git import clone, hg_url
from lib.sources import TRANSPORTS

BUNDLES = Corpus(test_env.corpus_dir()).hgtests_bundles()
# Run again with each git release `make test-user-git` builds: the git that
# runs git-remote-hg and the git commands of the client.
pytestmark = [pytest.mark.hgserver, pytest.mark.usergit]


# The transport first in the test ids ([bundle-remote.hg]): CI deselects
# the clones of the bundle files themselves, which no hg runs, from its
# second run by that prefix.
@pytest.mark.parametrize('bundle', BUNDLES)
@pytest.mark.parametrize('transport', TRANSPORTS)
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


def test_clone_over_ssh_passes_user_and_port(hg_repos, corpus, tmp_path,
                                             monkeypatch):
    log = tmp_path / 'ssh.log'
    monkeypatch.setenv('CINNABAR_TEST_SSH_LOG', str(log))
    repo = hg_repos.get('remote.hg')
    url = hg_url(f'ssh://someone@localhost:2222/{repo}')
    assert_no_traceback(clone(url, tmp_path / 'clone', '--no-checkout'))
    destination, port, command = log.read_text().splitlines()[0].split('\t')
    assert (destination, port) == ('someone@localhost', '2222')
    assert command.endswith(f'-R {repo} serve --stdio')
    assert_expected_ids(tmp_path / 'clone', corpus.expected('remote.hg'))
