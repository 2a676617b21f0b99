"""The 594 tags of nginx.hg, made git tags by `git cinnabar fetch --tags`
after a clone of the bundle: exactly the names of `hg tags --debug`
(without `tip`), each on the git commit the reference gives for its hg
node (corpus expected/nginx.hg.tsv)."""

import time

import pytest

from lib.checks import assert_no_traceback
from lib.corpus import NGINX
from lib.git import clone, git, hg_url, refs
from test_cmd_tags import hg_tags

pytestmark = pytest.mark.slow
NGINX_TAGS = 594


def test_nginx_tags(hg, hg_repos, corpus, tmp_path):
    expected_ids = corpus.expected(NGINX)
    tags = hg_tags(hg, hg_repos.get(NGINX))
    assert len(tags) == NGINX_TAGS
    work = tmp_path / 'nginx'
    assert_no_traceback(clone(hg_url(corpus.bundle(NGINX)), work,
                              '--no-checkout', timeout=1800))
    assert refs(work, 'refs/tags/') == {}
    start = time.monotonic()
    result = git('cinnabar', 'fetch', '--tags', cwd=work)
    elapsed = time.monotonic() - start
    assert_no_traceback(result)
    assert 'warning' not in result.err, result.describe()
    want = {'refs/tags/' + name: expected_ids[node]
            for name, node in tags.items()}
    assert refs(work, 'refs/tags/') == want
    print('git cinnabar fetch --tags on nginx: %.2fs' % elapsed)
