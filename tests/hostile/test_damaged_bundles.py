"""Bundles damaged after their end or in their checksums are refused, not
imported (nor imported as empty: `ok 0 0 0`).

The bundles are made by the real `hg bundle -t <spec>` from a small
repository, then damaged:

- data after the end (after the changegroup of a bundle1, after the
  end-of-bundle marker of a bundle2, after the end of the compressed
  stream): every source (file, HTTP body, ssh answer) ends where its
  bundle ends, so anything more is damage;
- a wrong zlib adler32 (the last 4 bytes) or bzip2 stream CRC (the
  bytes before the last), checked only when the stream is read to its
  end-of-stream marker, which the helper now always does;
- a damaged zstd frame (Mercurial writes no zstd checksum: the damage
  is caught by the frame structure).

Each is refused with one `fatal:` line, no signal, no ref, no temporary
pack.  (Undamaged bundles of every compression import: test_clone_corpus,
test_cmd_unbundle, test_cmd_bundle.)
"""

import pytest

from lib.checks import assert_failed_for_people
from lib.git import fetch, hg_url, init, refs
from lib.hostile import assert_no_leftovers, assert_no_signal_death
from lib.push import hg_commit

SPECS = ('none-v1', 'gzip-v1', 'bzip2-v1', 'none-v2', 'bzip2-v2',
         'zstd-v2')
REFSPEC = 'refs/heads/*:refs/remotes/hg/*'


def trailing(data):
    return data + b'garbage'


def flip_last(data):
    return data[:-1] + bytes([data[-1] ^ 1])


def flip_second_last(data):
    return data[:-2] + bytes([data[-2] ^ 0x10]) + data[-1:]


def extra_end_marker(data):
    return data + b'\0\0\0\0'


DAMAGES = [(spec, trailing, 'unexpected data after the end')
           for spec in ('none-v1', 'gzip-v1', 'bzip2-v2', 'zstd-v2')] + [
    ('gzip-v1', flip_last, 'incorrect data check'),
    ('bzip2-v1', flip_second_last, 'corrupt bzip2-compressed data'),
    ('bzip2-v2', flip_second_last, 'corrupt bzip2-compressed data'),
    ('zstd-v2', flip_second_last, 'corrupt zstd-compressed data'),
    ('none-v2', extra_end_marker, 'unexpected data after the end'),
]


@pytest.fixture(scope='module')
def bundles(hg, tmp_path_factory):
    """{spec: bundle bytes} of a three-changeset repository."""
    root = tmp_path_factory.mktemp('damaged')
    repo = root / 'repo'
    hg('init', repo)
    for i in range(3):
        hg_commit(hg, repo, {'file': f'line {i}\n' * (i + 1)}, f'c{i}',
                  date=f'{1600000000 + i} 0')
    made = {}
    for spec in SPECS:
        path = root / f'{spec}.hg'
        hg('-R', repo, 'bundle', '-q', '-a', '-t', spec, path)
        made[spec] = path.read_bytes()
    return made


def fetch_bundle(tmp_path, data):
    path = tmp_path / 'bundle.hg'
    path.write_bytes(data)
    repo = init(tmp_path / 'repo')
    return repo, fetch(repo, hg_url(path), REFSPEC, check=False)


@pytest.mark.parametrize('spec,damage,words', DAMAGES,
                         ids=[f'{s}-{d.__name__}' for s, d, _ in DAMAGES])
def test_damaged_bundle_refused(spec, damage, words, bundles, tmp_path):
    repo, result = fetch_bundle(tmp_path, damage(bundles[spec]))
    assert_no_signal_death(result)
    assert_failed_for_people(result)
    assert words in result.err, result.describe()
    assert refs(repo) == {}
    assert_no_leftovers(repo)
