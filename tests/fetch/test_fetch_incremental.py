"""Fetching new changesets into an existing clone gives the same refs and
the same metadata as cloning everything at once, and downloads only what
is new.

The served repository starts as the first half of nginx (`hg clone -r`);
after the first clone, the rest is pulled into it with `hg pull`.  An HTTP
proxy in front of `hg serve` counts the bytes of `getbundle` answers.
"""

import os

import pytest

from cinnabar.helper import Helper

from lib.checks import assert_expected_ids, assert_no_traceback
from lib.corpus import NGINX
from lib.git import METADATA_REF, Metadata, clone, git, hg_url
from lib.git import is_ancestor, refs, rev_parse
from lib.env import helper_under_test

pytestmark = pytest.mark.slow
TIMEOUT = 600


def comparable_refs(repo):
    """All refs but those a fetch does not or cannot make equal: local
    branches (a fetch leaves them), the metadata commit itself (it chains
    to the previous one) and notes (they keep their history)."""
    return {name: oid for name, oid in refs(repo).items()
            if not name.startswith(('refs/heads/', 'refs/notes/'))
            and name != METADATA_REF}


def test_incremental_fetch_equals_fresh_clone(hg, hg_repos, hg_serve,
                                              hg_proxy, corpus, tmp_path):
    full = hg_repos.get(NGINX)
    total = len(hg.nodes(full))
    served = hg_repos.copy(NGINX, tmp_path / 'served', rev=total // 2)
    assert total // 4 < len(hg.nodes(served)) <= total // 2 + 1
    proxy = hg_proxy(hg_serve(served))
    url = hg_url(proxy.url)

    incremental = tmp_path / 'incremental'
    clone(url, incremental, '--no-checkout', timeout=TIMEOUT)
    first_bytes = proxy.bytes_by_command['getbundle']
    previous = rev_parse(incremental, METADATA_REF)
    assert previous

    hg('-R', served, 'pull', '-q', full, timeout=TIMEOUT)
    assert len(hg.nodes(served)) == total
    proxy.bytes_by_command.clear()
    result = git('fetch', 'origin', cwd=incremental, timeout=TIMEOUT)
    assert_no_traceback(result)
    fetch_bytes = proxy.bytes_by_command['getbundle']

    proxy.bytes_by_command.clear()
    fresh = tmp_path / 'fresh'
    clone(url, fresh, '--no-checkout', timeout=TIMEOUT)
    fresh_bytes = proxy.bytes_by_command['getbundle']

    assert comparable_refs(incremental) == comparable_refs(fresh)
    got = Metadata(incremental, previous=previous)
    assert got.summary() == Metadata(fresh).summary()
    assert is_ancestor(incremental, previous, got.commit), \
        'the new metadata does not keep the previous one in its chain'
    assert 0 < fetch_bytes < fresh_bytes - first_bytes / 2, (
        f'the fetch downloaded {fetch_bytes} bytes; a full clone takes '
        f'{fresh_bytes}, the first half took {first_bytes}')
    assert_expected_ids(incremental, corpus.expected(NGINX),
                        hg.nodes(served))


def test_fetch_with_nothing_new_changes_nothing(source, tmp_path):
    src = source('http', 'hgweb+obs.hg')
    repo = tmp_path / 'clone'
    clone(src.url, repo, '--no-checkout')
    before = refs(repo)
    result = git('fetch', 'origin', cwd=repo)
    assert_no_traceback(result)
    assert refs(repo) == before


def test_fetch_with_nothing_new_is_two_requests_and_no_git(
        hg, hg_repos, hg_serve, tmp_path):
    """What people run all day (bench/fetch_noop.py) asks the server for
    its capabilities and one batch (branchmap, heads, bookmarks), as
    git-cinnabar 0.7.5 does, and runs no git process of its own besides
    the helper (the git dir is the GIT_DIR git gives us, the configuration
    the helper's `config`). Its Python loads neither `site`
    (git-remote-hg runs `python3 -S`), `collections`, `contextlib`,
    `functools` (cinnabar.record, cinnabar.resources), nor the modules a
    fetch with something to fetch or a push needs (Python's import trace,
    PYTHONPROFILEIMPORTTIME, says which load)."""
    server = hg_serve(hg_repos.get('hgweb+obs.hg'))
    repo = tmp_path / 'clone'
    clone(hg_url(server.url), repo, '--no-checkout')
    access_log = server.logdir / 'access.log'
    logged = len(access_log.read_text().splitlines())
    trace = tmp_path / 'git-trace'
    result = git('fetch', 'origin', cwd=repo,
                 extra_env={'GIT_TRACE': str(trace),
                            'PYTHONPROFILEIMPORTTIME': '1'})
    assert_no_traceback(result)
    imported = {line.split('|')[-1].strip()
                for line in result.err.splitlines()
                if line.startswith('import time:')}
    assert 'cinnabar.remote' in imported
    unwanted = {'site', 'subprocess', 're', 'urllib.parse', 'threading',
                'cinnabar.discovery', 'cinnabar.push', 'tempfile',
                'collections', 'contextlib', 'functools',
                'cinnabar.hg.bundle2'}
    assert not unwanted & imported, unwanted & imported
    requests = [line.split('"')[1]
                for line in access_log.read_text().splitlines()[logged:]]
    assert requests == ['GET /?cmd=capabilities HTTP/1.1',
                        'GET /?cmd=batch HTTP/1.1']
    ours = [line for line in trace.read_text().splitlines()
            if 'built-in: git ' in line and 'fetch' not in line
            and 'rev-list' not in line and 'maintenance' not in line]
    assert ours == [], ours


def test_the_helper_gives_git_config(tmp_path):
    """The configuration a remote-helper session reads from the helper
    (`config`, helper/PROTOCOL.md) is what `git config --list -z` says:
    includes followed, keys without a value, several values of a key,
    values with newlines, `-c` from git's command line last."""
    repo = tmp_path / 'repo'
    git('init', '-q', str(repo), cwd=tmp_path)
    included = tmp_path / 'included'
    included.write_text('[included]\n\tkey = from the include\n')
    with open(repo / '.git' / 'config', 'a') as config:
        config.write('[include]\n\tpath = %s\n' % included
                     + '[novalue]\n\tkey\n[multi]\n\tv = 1\n\tv = 2\n'
                     + '[Sec "Sub"]\n\tCamel = "two\\nlines"\n')
    env = {'GIT_CONFIG_PARAMETERS': "'cmd.line'='x y'"}
    expected = git('config', '--list', '-z', cwd=repo,
                   extra_env=env).stdout
    assert b'from the include' in expected and b'x y' in expected
    # The session's own client reads the answer (cinnabar.helper).
    helper_env = dict(os.environ, **env,
                      GIT_CINNABAR_HELPER=str(helper_under_test()))
    with Helper.start(str(repo / '.git'), env=helper_env) as helper:
        assert helper.config_list() == expected
