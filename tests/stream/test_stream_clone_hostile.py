"""Hostile stream clones: a server whose stream does not add up gets one
clear error, and the clone leaves nothing behind (no ref, no metadata, no
temporary pack, no spooled revlog).

The stream is the real one `hg serve --stdio` sends for a small
repository, damaged on its way by tests/bin/hg-stream-damage: sizes,
names, and the fields of a revlog index entry (`hg help
internals.revlogs`), which the test finds in the repository's own store.
"""

import json
import re

import pytest

from lib.checks import assert_died_as_git_dies, assert_failed_for_people
from lib.env import TESTS
from lib.git import fetch, hg_url, init, refs
from lib.hostile import assert_no_leftovers, assert_no_signal_death
from lib.push import hg_commit

DAMAGE_WRAPPER = TESTS / 'bin' / 'hg-stream-damage'
MARKER = b'hostile-marker-0123456789'


@pytest.fixture(scope='module')
def server(hg, tmp_path_factory):
    """(repository, its stream's byte count, the index entry of the first
    revision of the file `m`)."""
    root = tmp_path_factory.mktemp('stream-hostile')
    repo = root / 'repo'
    hg('init', repo)
    hg_commit(hg, repo, {'m': MARKER.decode() + '\n'}, 'c0')
    hg_commit(hg, repo, {'m': MARKER.decode() + '\nmore\n'}, 'c1',
              date='1600000001 0')
    bundle = root / 'stream.hg'
    hg('-R', repo, 'bundle', '-q', '-a', '-t', 'none-v2;stream=v2', bundle)
    count = int(re.search(rb'bytecount(\d+)', bundle.read_bytes()).group(1))
    entry = (repo / '.hg' / 'store' / 'data' / 'm.i').read_bytes()[:64]
    return repo, count, entry


def with_field(entry, offset, value):
    return entry[:offset] + value.to_bytes(4, 'big') + entry[offset + 4:]


def field(entry, offset):
    return int.from_bytes(entry[offset:offset + 4], 'big')


def other_count(count):
    return count + 1 if count % 10 != 9 else count - 1


# (what is damaged, [(found, replacement)] from (repo, count, entry), the
# error expected).
DAMAGES = [
    ('file text', lambda c, e: [(MARKER, MARKER[::-1])],
     'does not match its contents'),
    ('byte count', lambda c, e: [(b'bytecount%d' % c,
                                  b'bytecount%d' % other_count(c))],
     ('the sizes in the stream do not add up',
      'the stream has more data than it says')),
    ('name outside the store', lambda c, e: [(b'data/m.i', b'../ab/.i')],
     'entry outside the store'),
    ('delta base past the revision', lambda c, e: [(e, with_field(e, 16, 5))],
     'has a delta base past it'),
    ('stated length', lambda c, e: [(e, with_field(e, 12, field(e, 12) + 1))],
     'is not of its stated length'),
    ('chunk past the data', lambda c, e: [(e, with_field(e, 8, 4000))],
     'goes past the end of its data'),
    ('linked changeset', lambda c, e: [(e, with_field(e, 20, 50))],
     'names a changeset the changelog lacks'),
]


@pytest.mark.parametrize('what,damage,message', DAMAGES,
                         ids=[d[0] for d in DAMAGES])
def test_damaged_stream_is_refused(what, damage, message, server, tmp_path,
                                   monkeypatch):
    fetch_damaged(server, damage, message, tmp_path, monkeypatch)


# (what is damaged, [(found, replacement)], the whole error line): the
# bundle2 framing around the stream, read on the Python side.
FRAMING = [
    ('byte count in digits not ASCII',
     lambda c, e: [(b'bytecount%d' % c,
                    (b'bytecount\xc2\xb2%d' % c)[:len(b'bytecount%d' % c)])],
     "fatal: the stream has no valid bytecount ('\xb2{rest}')"),
    ('stream parameters of 4 GB',
     lambda c, e: [(b'HG20\0\0\0\0', b'HG20\xff\xff\xff\xf0')],
     'fatal: the bundle2 states stream parameters of 4294967280 bytes '
     '(more than 65536): it is damaged'),
]


@pytest.mark.parametrize('what,damage,line', FRAMING,
                         ids=[d[0] for d in FRAMING])
def test_damaged_framing_is_one_line(what, damage, line, server, tmp_path,
                                     monkeypatch):
    """A count only `str.isdigit` takes and a stated length of stream
    parameters no bundle has: the one line saying so, not an unexpected
    ValueError or a read of gigabytes."""
    count = server[1]
    said = fetch_damaged(server, damage, None, tmp_path, monkeypatch)
    assert said == line.format(rest=str(count)[:-2]), said


def fetch_damaged(server, damage, message, tmp_path, monkeypatch):
    """Fetch from `server` through the damaging wrapper: the clone fails
    for people, leaving nothing; returns its error line."""
    repo, count, entry = server
    spec = tmp_path / 'damage.json'
    spec.write_text(json.dumps([[f.hex(), r.hex()]
                                for f, r in damage(count, entry)]))
    monkeypatch.setenv('HG', str(DAMAGE_WRAPPER))
    monkeypatch.setenv('CINNABAR_TEST_STREAM_DAMAGE', str(spec))
    monkeypatch.setenv('GIT_CINNABAR_STREAM', 'always')
    dest = init(tmp_path / 'repo')
    result = fetch(dest, hg_url(str(repo)), 'refs/heads/*:refs/remotes/hg/*',
                   check=False)
    assert_no_signal_death(result)
    assert 'Receiving a stream clone' in result.err, result.describe()
    assert_died_as_git_dies(result)
    line = assert_failed_for_people(result, message)
    assert refs(dest) == {}
    assert_no_leftovers(dest)
    assert not list((dest / '.git').glob('hg-stream-*'))
    return line


def test_undamaged_stream_through_the_wrapper(server, tmp_path, monkeypatch):
    """The wrapper itself damages nothing: the failures above are the
    damages'."""
    spec = tmp_path / 'damage.json'
    spec.write_text('[]')
    monkeypatch.setenv('HG', str(DAMAGE_WRAPPER))
    monkeypatch.setenv('CINNABAR_TEST_STREAM_DAMAGE', str(spec))
    monkeypatch.setenv('GIT_CINNABAR_STREAM', 'always')
    dest = init(tmp_path / 'repo')
    result = fetch(dest, hg_url(str(server[0])),
                   'refs/heads/*:refs/remotes/hg/*')
    assert 'stream clone: 2 changesets, 2 manifests, 2 files' in result.err
    assert 'refs/remotes/hg/branches/default/tip' in refs(dest)
