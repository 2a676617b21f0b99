"""What a server sends is read as it comes, never whole, and checked
before it is kept:

- a bundle1 server's getbundle answer over HTTP (a zlib stream of a bare
  changegroup, `hg serve` with bundle2 not advertised) goes straight
  into the helper's importer, like a bundle2 answer: a zlib bomb (256 MB
  of zeros in 261 kB) or a gzip Content-Encoding bomb (512 MB of zeros
  in 500 kB) is refused with one line, in little memory, writing no
  large file, the repository as it was;
- a clone bundle URL answering an endless body that is no bundle is
  abandoned at its first bytes, and the clone falls back to a normal one;
- a stream clone answer longer than it states, or no stream at all, is
  refused without writing past what it states;
- an ssh server's endless standard error line is relayed in pieces.
"""

import shlex
import zlib

import pytest

from lib.checks import assert_expected_ids, assert_failed_for_people
from lib.checks import error_lines
from lib.env import SSH_WRAPPER
from lib.git import git, hg_url, lasting_refs
from lib.hostile import assert_no_leftovers, assert_no_signal_death, fake_ssh
from lib.proc import run_measured
from lib.push import hg_commit, make_hg_repo

BUNDLE1 = {'experimental.bundle2-advertise': 'false'}
RSS_LIMIT_KB = 150 * 1024
FILE_LIMIT = 16 * 1024 * 1024
SMALL_FILE_LIMIT = 1024 * 1024
MB = 1024 * 1024
BUNDLES = ('remote.hg', 'renames.hg', 'test-merge-symlinks.hg',
           'legacy-encoding.hg')


def bomb(size, wbits=zlib.MAX_WBITS, prefix=b''):
    """`prefix` and `size` zero bytes compressed (zlib; gzip with wbits
    31)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    zeros = bytes(MB)
    parts = [compressor.compress(prefix)]
    parts += [compressor.compress(zeros) for _ in range(size // MB)]
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


def test_fetch_bundle_from_a_bundle1_server(hg, hg_serve, hostile,
                                            tmp_path):
    """`git cinnabar fetch --bundle` of a bundle1 server: its changegroup
    after an `HG10UN` header, read as it comes, which hg unbundles; the
    gzip bomb instead is refused in one line, in little memory."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    tip = hg_commit(hg, repo, {'f': 'two\n'}, 'second')
    server = hostile(upstream_port=hg_serve(repo, config=BUNDLE1).port)
    git('init', '-q', tmp_path / 'work')
    command = ['git', 'cinnabar', 'fetch', '--bundle',
               hg_url(server.url('a') + '/'), tip]
    result = git(*command[1:], cwd=tmp_path / 'work')
    assert result.stdout[:6] == b'HG10UN', result.describe()
    bundle = tmp_path / 'out.hg'
    bundle.write_bytes(result.stdout)
    hg('init', tmp_path / 'hg')
    hg('-R', tmp_path / 'hg', 'unbundle', '-q', bundle)
    assert hg.nodes(tmp_path / 'hg') == hg.nodes(repo)
    # As hg serve answers (application/mercurial-0.2), gzip-encoded.
    server.answer['getbundle'] = (
        [('Content-Type', 'application/mercurial-0.2'),
         ('Content-Encoding', 'gzip')], bomb(512 * MB, 31, b'\x04zlib'))
    result, rss = run_measured(command, FILE_LIMIT, cwd=tmp_path / 'work')
    assert_no_signal_death(result)
    assert rss < RSS_LIMIT_KB, f'{rss} kB\n' + result.describe()
    said = assert_failed_for_people(result, 'sent a damaged answer')
    assert len(error_lines(result)) == 1, result.describe()
    assert said.startswith('fatal: '), said


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


def test_clone_bundle_that_is_no_bundle_is_abandoned(hg, hg_serve, hostile,
                                                     tmp_path):
    """A clone bundle URL answering an endless body that is no bundle:
    refused at its first bytes (nothing saved), then a normal clone."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    with open(repo / '.hg' / 'hgrc', 'a') as f:
        f.write('[extensions]\nclonebundles =\n')
    bundles = hostile(files=tmp_path)
    bundles.endless[None] = 'application/octet-stream'
    url = bundles.url('a') + '/full.hg'
    (repo / '.hg' / 'clonebundles.manifest').write_text(
        url + ' BUNDLESPEC=none-v2\n')
    server = hg_serve(repo)
    result, _ = run_measured(['git', 'clone', '--no-checkout',
                              hg_url(server.url), 'work'], SMALL_FILE_LIMIT,
                             cwd=tmp_path)
    assert_no_signal_death(result)
    assert result.returncode == 0, result.describe()
    assert (f'warning: the clone bundle failed: {url} is not a Mercurial '
            "bundle (unknown header '0000')") in result.err.splitlines(), \
        result.describe()
    assert git('log', '--format=%s', 'origin/branches/default/tip',
               cwd=tmp_path / 'work').out.splitlines() == ['initial import']


def stream_out_server(hg, hg_serve, hostile, tmp_path):
    """A hostile server in front of a bundle1 `hg serve` (which offers
    stream clones through `stream_out`)."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    return hostile(upstream_port=hg_serve(repo, config=BUNDLE1).port)


def stream_clone(server, tmp_path):
    return run_measured(['git', '-c', 'cinnabar.stream=always', 'clone',
                         '--no-checkout', hg_url(server.url('a') + '/'),
                         'work'], SMALL_FILE_LIMIT, cwd=tmp_path)


# A stream_out answer stating one file of 4 bytes, then 20 MB more.
LONGER = b'0\n1 4\ndata/f.i\x004\nabcd' + bytes(20 * MB)


@pytest.mark.parametrize('answer,message', [
    (LONGER, 'the sizes in the stream do not add up (1 files, 4 bytes '
     'said)'),
    (None, 'the stream has a status too long')],
    ids=['longer than stated', 'endless, no header'])
def test_stream_answer_refused_before_spooling(answer, message, hg, hg_serve,
                                               hostile, tmp_path):
    """A stream clone answer longer than it states, or endless and no
    stream: refused in one line, nothing written past what it states."""
    server = stream_out_server(hg, hg_serve, hostile, tmp_path)
    if answer is None:
        server.endless['stream_out'] = 'application/mercurial-0.1'
    else:
        server.answer['stream_out'] = (
            [('Content-Type', 'application/mercurial-0.1')], answer)
    result, _ = stream_clone(server, tmp_path)
    assert_no_signal_death(result)
    said = assert_failed_for_people(result, message)
    assert said == f'fatal: {message}', result.describe()
    assert not (tmp_path / 'work').exists()


def test_stream_out_clone_still_works(hg, hg_serve, hostile, tmp_path):
    server = stream_out_server(hg, hg_serve, hostile, tmp_path)
    result, _ = stream_clone(server, tmp_path)
    assert result.returncode == 0, result.describe()
    assert 'stream clone: 1 changesets' in result.err, result.describe()
    assert 'stream_out' in [r['command'] for r in server.requests]


STDERR_SIZE = 100 * MB


def test_endless_ssh_stderr_line_relayed_in_pieces(hg, tmp_path):
    """100 MB of the server's standard error without a newline: relayed
    as `remote: ` output in bounded pieces, and the clone works."""
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'one\n'})
    env = fake_ssh(tmp_path, "head -c %d /dev/zero | tr '\\0' x >&2\n"
                   'exec %s "$@"\n' % (STDERR_SIZE,
                                       shlex.quote(str(SSH_WRAPPER))))
    result, rss = run_measured(['git', 'clone', '--no-checkout',
                                hg_url(f'ssh://localhost/{repo}'), 'work'],
                               cwd=tmp_path, extra_env=env)
    # (result.err would decode the 100 MB: the bytes are looked at.)
    assert result.returncode == 0, result.stderr[-2000:]
    assert rss < RSS_LIMIT_KB, f'{rss} kB'
    assert result.stderr.count(b'x') == STDERR_SIZE
    assert result.stderr.count(b'remote: ') == 1
    assert git('log', '--format=%s', 'origin/branches/default/tip',
               cwd=tmp_path / 'work').out.splitlines() == ['initial import']
