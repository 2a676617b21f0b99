"""`git cinnabar unbundle`: every corpus bundle, from a file and over
HTTP (our bundle server on 127.0.0.1), gives the reference's git ids;
damaged, cut or missing bundles change nothing."""

import shutil

import pytest

from lib import env as test_env
from lib.checks import (assert_failed_for_people, assert_no_traceback,
                        error_lines, file_digests)
from lib.corpus import NGINX, Corpus
from lib.git import (METADATA_REF, clone, git, hg2git, init, refs,
                     rev_parse)

pytestmark = pytest.mark.clientpython

BUNDLES = Corpus(test_env.corpus_dir()).hgtests_bundles()


def unbundle(repo, *args, check=True):
    return git('cinnabar', 'unbundle', *args, cwd=repo, check=check)


def assert_ids(repo, expected):
    mapped = hg2git(repo, expected)
    wrong = {h: (mapped[h], g) for h, g in expected.items()
             if mapped[h] != g}
    assert not wrong, f'hg2git (got, expected): {wrong}'


@pytest.mark.parametrize('bundle', BUNDLES)
def test_unbundle_file(bundle, corpus, tmp_path):
    repo = init(tmp_path / 'repo')
    result = unbundle(repo, corpus.bundle(bundle))
    assert_no_traceback(result)
    assert result.out.startswith('imported ')
    assert_ids(repo, corpus.expected(bundle))
    # Only the metadata (and refs/notes/cinnabar, which follows its git2hg
    # notes): no branch, no remote ref.
    assert set(refs(repo)) == {METADATA_REF, 'refs/notes/cinnabar'}


def test_unbundle_reports_heads(corpus, tmp_path):
    repo = init(tmp_path / 'repo')
    out = unbundle(repo, corpus.bundle('remote.hg')).out.splitlines()
    expected = corpus.expected('remote.hg')
    assert out[0] == 'imported 9 changesets, 7 manifests, 7 files'
    heads = [line.split() for line in out[1:]]
    assert heads and all(expected[h] == g and branch == 'default'
                         for h, g, branch in heads)


@pytest.mark.parametrize('bundle', ['remote.hg', 'issue4438-r2.hg',
                                    'test-invalid-branch-name.hg'])
def test_unbundle_http(bundle, corpus, tmp_path, bundle_server):
    root = tmp_path / 'www'
    root.mkdir()
    shutil.copy(corpus.bundle(bundle), root / 'b.hg')
    server = bundle_server(root)
    repo = init(tmp_path / 'repo')
    assert_no_traceback(unbundle(repo, server.url('b.hg')))
    assert_ids(repo, corpus.expected(bundle))
    gets = [r for r in server.requests() if r['method'] == 'GET']
    assert [r['status'] for r in gets] == [200]
    # The downloaded file does not stay.
    assert not list((repo / '.git' / 'cinnabar' / 'downloads').iterdir())


def test_unbundle_http_resumes_a_cut_download(corpus, tmp_path,
                                              bundle_server):
    root = tmp_path / 'www'
    root.mkdir()
    shutil.copy(corpus.bundle('issue4438-r1.hg'), root / 'b.hg')
    size = (root / 'b.hg').stat().st_size
    server = bundle_server(root, cut_after=size // 3)
    repo = init(tmp_path / 'repo')
    result = unbundle(repo, server.url('b.hg'))
    assert 'cut at' in result.err
    assert_ids(repo, corpus.expected('issue4438-r1.hg'))
    gets = [r for r in server.requests() if r['method'] == 'GET']
    assert [r['status'] for r in gets] == [200, 206]
    assert gets[1]['range'] == f'bytes={size // 3}-'
    assert gets[1]['if_range']
    assert server.bytes_sent('b.hg') == size


def metadata(repo):
    return refs(repo, 'refs/cinnabar/')


def damaged_copies(corpus, directory):
    """{kind: path} of broken copies of a zstd bundle2 (nginx's first
    part would be slow: a small hgtests bundle)."""
    data = corpus.bundle('issue4438-r1.hg').read_bytes()
    broken = {
        'truncated': data[:len(data) // 2],
        'corrupt': data[:len(data) // 2] + bytes(
            b ^ 0x5a for b in data[len(data) // 2:]),
        'empty': b'',
        'not a bundle': b'hello, world\n' * 10,
    }
    paths = {}
    for kind, content in broken.items():
        path = directory / (kind.replace(' ', '-') + '.hg')
        path.write_bytes(content)
        paths[kind] = path
    return paths


BAD_BUNDLE_ERRORS = {
    'truncated': 'the bzip2-compressed data ends early',
    'corrupt': 'in the changegroup (corrupt data)',
    'empty': 'not a Mercurial bundle (too short)',
    'not a bundle': "not a Mercurial bundle (unknown header 'hell')",
}


def test_bad_bundles_change_nothing(corpus, tmp_path, bundle_server):
    repo = init(tmp_path / 'repo')
    unbundle(repo, corpus.bundle('remote.hg'))
    before = metadata(repo)
    root = tmp_path / 'www'
    root.mkdir()
    paths = damaged_copies(corpus, root)
    server = bundle_server(root)
    attempts = [(str(p), BAD_BUNDLE_ERRORS[k]) for k, p in paths.items()]
    attempts += [(server.url(p.name), BAD_BUNDLE_ERRORS[k])
                 for k, p in paths.items() if k != 'empty']
    # An empty download says it cannot open the `.part` file it never
    # wrote, not that the bundle is too short (left as it is).
    attempts += [(server.url(paths['empty'].name),
                  ('not a Mercurial bundle', ".part': No such file"))]
    attempts += [(server.url('missing.hg'), 'HTTP error 404 from http://'),
                 (str(tmp_path / 'missing.hg'),
                  f"no bundle file at {tmp_path / 'missing.hg'}")]
    for location, says in attempts:
        result = unbundle(repo, location, check=False)
        assert_failed_for_people(result, says)
        assert metadata(repo) == before, location
        assert_ids(repo, corpus.expected('remote.hg'))
    git('fsck', '--no-progress', cwd=repo)


def test_unbundle_usage_errors(tmp_path):
    repo = init(tmp_path / 'repo')
    for args, says in (([], 'unbundle needs one bundle'),
                       (['a', 'b'], 'unbundle takes one bundle'),
                       (['--nope', 'a'], 'unknown option --nope')):
        result = unbundle(repo, *args, check=False)
        assert_failed_for_people(result, says)
        assert 'usage: git cinnabar unbundle' in result.err
    result = git('cinnabar', 'unbundle', '/nonexistent', cwd=tmp_path,
                 check=False)
    assert_failed_for_people(result, 'not in a git repository')


@pytest.mark.slow
def test_unbundle_nginx(corpus, tmp_path):
    repo = init(tmp_path / 'repo')
    assert_no_traceback(unbundle(repo, corpus.bundle(NGINX)))
    assert_ids(repo, corpus.expected(NGINX))


# Stream bundles: a whole repository's revlogs, as `hg bundle --type
# 'none-v2;stream=v2'` and `hg debugcreatestreamclonebundle` (packed1)
# make them, with the hg under test. Cases: (hg init options, command).
STREAM_BUNDLES = {
    'stream2': ((), ('bundle', '-q', '-a', '--type', 'none-v2;stream=v2')),
    'packed1': ((), ('debugcreatestreamclonebundle',)),
    'packed1-zlib': (('--config', 'format.revlog-compression=zlib',
                      '--config', 'format.generaldelta=false',
                      '--config', 'format.sparse-revlog=false'),
                     ('debugcreatestreamclonebundle',)),
}
NOT_EMPTY = ('a stream bundle can only be imported into a repository '
             'without Mercurial changesets')


@pytest.fixture(scope='module')
def stream_bundles(hg, corpus, tmp_path_factory):
    """(bundles, reference): {case: path} of stream bundles of one hg
    repository holding every small corpus bundle, and (metadata commit,
    sorted report lines) of `git cinnabar unbundle` of a changegroup
    bundle of that repository."""
    root = tmp_path_factory.mktemp('stream-bundles')
    all_of_them = root / 'all.hg'
    hg('init', root / 'all')
    hg('-R', root / 'all', 'unbundle', '-q',
       *(corpus.bundle(name) for name in BUNDLES), timeout=300)
    hg('-R', root / 'all', 'bundle', '-q', '-a', '--type', 'none-v2',
       all_of_them)
    bundles = {}
    for case, (options, command) in STREAM_BUNDLES.items():
        repo = root / case
        hg('init', *options, repo)
        hg('-R', repo, 'unbundle', '-q', all_of_them)
        bundles[case] = root / f'{case}.hg'
        hg('-R', repo, *command, bundles[case])
    normal = init(root / 'normal')
    out = unbundle(normal, all_of_them).out
    return bundles, (rev_parse(normal, METADATA_REF),
                     sorted(out.splitlines()))


@pytest.mark.parametrize('case', STREAM_BUNDLES)
def test_unbundle_stream_bundle(case, stream_bundles, corpus, tmp_path):
    """The same metadata commit, report and git ids as the changegroup's,
    into a git repository with a branch of its own."""
    bundles, (metadata_commit, report_lines) = stream_bundles
    repo = init(tmp_path / 'repo')
    git('commit', '-q', '--allow-empty', '-m', 'mine', cwd=repo)
    mine = rev_parse(repo, 'HEAD')
    branch = git('symbolic-ref', 'HEAD', cwd=repo).out.strip()
    result = unbundle(repo, bundles[case])
    assert_no_traceback(result)
    assert sorted(result.out.splitlines()) == report_lines
    assert rev_parse(repo, METADATA_REF) == metadata_commit
    expected = {}
    for bundle in BUNDLES:
        expected.update(corpus.expected(bundle))
    assert_ids(repo, expected)
    assert set(refs(repo)) == {METADATA_REF, 'refs/notes/cinnabar',
                               branch}
    assert rev_parse(repo, 'HEAD') == mine


def test_unbundle_stream_bundle_needs_empty_metadata(
        stream_bundles, corpus, tmp_path):
    """As `hg unbundle` refuses a stream bundle but in an empty
    repository."""
    bundles, _ = stream_bundles
    repo = init(tmp_path / 'repo')
    unbundle(repo, corpus.bundle('remote.hg'))
    before = file_digests(repo / '.git', ['cinnabar.lock'])
    for case in ('stream2', 'packed1'):
        result = unbundle(repo, bundles[case], check=False)
        assert_failed_for_people(result, NOT_EMPTY)
        assert 'hint: unbundle it in a new git repository' in result.err
        assert file_digests(repo / '.git', ['cinnabar.lock']) == before


@pytest.mark.parametrize('case', ('stream2', 'packed1'))
def test_clone_of_a_stream_bundle_file(case, stream_bundles, tmp_path):
    """`git clone hg::<stream bundle>` (which hg cannot: "No changegroups
    found") gives the refs and metadata commit of a clone of the
    changegroup bundle; a fetch from it later, into metadata with
    changesets, is refused as `git cinnabar unbundle` refuses it."""
    bundles, _ = stream_bundles
    normal = tmp_path / 'normal'
    clone(f'hg::{bundles[case].parent / "all.hg"}', normal, '--no-checkout')
    repo = tmp_path / 'repo'
    result = clone(f'hg::{bundles[case]}', repo, '--no-checkout')
    assert_no_traceback(result)
    assert 'Importing the stream bundle' in result.err, result.describe()
    assert refs(repo) == refs(normal)
    before = file_digests(repo / '.git', ['cinnabar.lock'])
    result = git('fetch', cwd=repo, check=False)
    assert_failed_for_people(result, 'is a stream bundle: it can only be '
                             'cloned, into a repository without Mercurial '
                             'changesets')
    after = file_digests(repo / '.git', ['cinnabar.lock'])
    after.pop('FETCH_HEAD')  # git empties it before it starts us
    assert after == before


def wrong_first_node(data):
    """`data` with a bit of the first changeset's node flipped: the
    changelog's index follows its name and header (`\\0<size>\\n` in a
    packed1), and holds the node at bytes 32-51 of each 64-byte entry."""
    start = data.index(b'00changelog.i') + len(b'00changelog.i')
    if data[start:start + 1] == b'\0':
        start = data.index(b'\n', start) + 1
    flipped = bytearray(data)
    flipped[start + 40] ^= 1
    return bytes(flipped)


# The error line each damage in damaged_stream_bundles gets (after the
# changeset id, for the wrong nodes).
DAMAGE_REASONS = {
    'stream2 truncated': 'fatal: the bundle2 ends early (truncated)',
    'stream2 corrupt': 'fatal: the stream has more data than it says',
    'stream2 wrong node': ' of the changelog names a changeset the '
    'changelog lacks (corrupt stream)',
    'packed1 truncated': 'fatal: the stream ends early',
    'packed1 corrupt': 'fatal: malformed file header in the stream',
    'packed1 wrong node': ' does not match its contents (corrupt data)',
}


def damaged_stream_bundles(bundles, directory):
    """{name: path} of broken copies of the stream bundles."""
    broken = {}
    for case in ('stream2', 'packed1'):
        data = bundles[case].read_bytes()
        half = len(data) // 2
        broken[f'{case} truncated'] = data[:half]
        broken[f'{case} corrupt'] = data[:half] + bytes(
            b ^ 0x5a for b in data[half:])
        broken[f'{case} wrong node'] = wrong_first_node(data)
    paths = {}
    for name, content in broken.items():
        paths[name] = directory / (name.replace(' ', '-') + '.hg')
        paths[name].write_bytes(content)
    return paths


def test_bad_stream_bundles_change_nothing(stream_bundles, tmp_path):
    bundles, _ = stream_bundles
    repo = init(tmp_path / 'repo')
    before = file_digests(repo / '.git', ['cinnabar.lock'])
    for name, path in damaged_stream_bundles(bundles, tmp_path).items():
        result = unbundle(repo, path, check=False)
        assert result.returncode == 128, (name, result.describe())
        assert_failed_for_people(result, DAMAGE_REASONS[name])
        assert len(error_lines(result)) == 1, (name, result.describe())
        assert file_digests(repo / '.git', ['cinnabar.lock']) == before, name
    assert not refs(repo)


def test_unbundle_stream_bundle_of_an_empty_repository(hg, tmp_path):
    """No changesets: imported as nothing, and the metadata left is
    sound (`fsck --full` once read its changeset heads as damaged)."""
    hg('init', tmp_path / 'empty')
    bundle = tmp_path / 'empty.hg'
    hg('-R', tmp_path / 'empty', 'debugcreatestreamclonebundle', bundle)
    repo = init(tmp_path / 'repo')
    result = unbundle(repo, bundle)
    assert result.out == 'imported 0 changesets, 0 manifests, 0 files\n'
    result = git('cinnabar', 'fsck', '--full', cwd=repo)
    assert 'no problem' in result.out + result.err
