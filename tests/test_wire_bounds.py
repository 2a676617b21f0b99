"""What a server sends over HTTP is read as it comes, never whole: a
bundle1 server's getbundle answer (a zlib stream of a bare changegroup,
`hg serve` with bundle2 not advertised) goes straight into the helper's
importer, like a bundle2 answer.

A zlib bomb (256 MB of zeros in 261 kB) or a gzip Content-Encoding bomb
(512 MB of zeros in 500 kB) is refused with one line, the helper staying
small in memory and writing no large file, the repository as it was.
"""

import zlib

import pytest

from lib.checks import assert_expected_ids, assert_failed_for_people
from lib.checks import error_lines
from lib.git import git, hg_url, lasting_refs
from lib.hostile import assert_no_leftovers, assert_no_signal_death
from lib.proc import run_measured
from lib.push import hg_commit, make_hg_repo

BUNDLE1 = {'experimental.bundle2-advertise': 'false'}
RSS_LIMIT_KB = 150 * 1024
FILE_LIMIT = 16 * 1024 * 1024
MB = 1024 * 1024
BUNDLES = ('remote.hg', 'renames.hg', 'test-merge-symlinks.hg',
           'legacy-encoding.hg')


def bomb(size, wbits=zlib.MAX_WBITS):
    """`size` zero bytes compressed (zlib; gzip with wbits 31)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    zeros = bytes(MB)
    parts = [compressor.compress(zeros) for _ in range(size // MB)]
    return b''.join(parts) + compressor.flush()


@pytest.mark.parametrize('bundle', BUNDLES)
def test_bundle1_clone_gives_expected_ids(bundle, hg, hg_repos, hg_serve,
                                          corpus, tmp_path):
    repo = hg_repos.get(bundle)
    server = hg_serve(repo, config=BUNDLE1)
    result = git('clone', '--no-checkout', hg_url(server.url), 'clone',
                 cwd=tmp_path, extra_env={'GIT_CINNABAR_TRACE': '1'})
    assert f'http import {server.url}?cmd=getbundle cg01' in result.err, \
        result.describe()
    assert_expected_ids(tmp_path / 'clone', corpus.expected(bundle),
                        hg.nodes(repo))


@pytest.fixture
def behind(hg, hg_serve, hostile, tmp_path):
    """A clone (tmp_path/work), through a hostile server, of a bundle1 hg
    server whose repository then got one more changeset."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    server = hostile(upstream_port=hg_serve(repo, config=BUNDLE1).port)
    git('clone', '--no-checkout', hg_url(server.url('a') + '/'), 'work',
        cwd=tmp_path)
    hg_commit(hg, repo, {'f': 'two\n'}, 'second')
    return server


BOMBS = {
    'zlib': ([('Content-Type', 'application/mercurial-0.1')],
             lambda: bomb(256 * MB),
             'unexpected data after the end of the bundle'),
    'gzip': ([('Content-Type', 'application/mercurial-0.1'),
              ('Content-Encoding', 'gzip')],
             lambda: bomb(512 * MB, 31),
             'corrupt zlib-compressed data (unknown compression method)'),
}


@pytest.mark.parametrize('kind', BOMBS)
def test_bundle1_bomb_is_refused_in_bounded_memory(kind, behind, tmp_path):
    headers, make, message = BOMBS[kind]
    behind.answer['getbundle'] = (headers, make())
    work = tmp_path / 'work'
    before = lasting_refs(work)
    result, rss = run_measured(['git', 'fetch', 'origin'], FILE_LIMIT,
                               cwd=work)
    assert_no_signal_death(result)
    assert rss < RSS_LIMIT_KB, f'{rss} kB\n' + result.describe()
    assert_failed_for_people(result, message)
    assert message in error_lines(result)[0], result.describe()
    assert lasting_refs(work) == before
    assert_no_leftovers(work)
