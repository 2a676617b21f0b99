"""The 594 tags of nginx.hg, made git tags by `git cinnabar fetch --tags`
after a clone of its repository: exactly the names of `hg tags --debug`
(without `tip`), each on the git commit the reference gives for its hg
node (corpus expected/nginx.hg.tsv)."""

import time

import pytest

from lib.checks import assert_no_traceback
from lib.corpus import NGINX
from lib.git import git, refs
from test_cmd_tags import hg_tags

pytestmark = pytest.mark.slow
NGINX_TAGS = 594


def test_nginx_tags(hg, hg_repos, git_clones, corpus, tmp_path):
    expected_ids = corpus.expected(NGINX)
    tags = hg_tags(hg, hg_repos.get(NGINX))
    assert len(tags) == NGINX_TAGS
    work = git_clones.copy(NGINX, tmp_path / 'nginx')
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
