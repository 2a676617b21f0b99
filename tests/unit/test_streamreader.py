"""Reading stream clones (cinnabar.hg.streamreader): the stream2 part and
stream v1, into a spool; the revlogs themselves are read by the helper
(tests/test_stream_clone*.py)."""

import io
import os

import pytest

from cinnabar.errors import Abort
from cinnabar.hg import bundle2 as b2
from cinnabar.hg import streamreader as sc

REQS = 'generaldelta%2Crevlogv1'


def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7f, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def entry(name, data, kind=b's'):
    return kind + varint(len(name)) + varint(len(data)) + name + data


def stream2_bundle(entries, files=None, total=None, requirements=REQS):
    payload = b''.join(entry(*e) for e in entries)
    if files is None:
        files = len(entries)
    if total is None:
        total = sum(len(e[1]) for e in entries)
    out = io.BytesIO()
    b2.write_start(out)
    b2.write_part(out, 'STREAM2', 1, payload, mandatory_params=[
        ('requirements', requirements), ('filecount', str(files)),
        ('bytecount', str(total))])
    b2.write_end(out)
    return io.BytesIO(out.getvalue()).read


def stream3_bundle(groups, entries=None, tail=b''):
    """A bundle2 with a stream3-exp part: `groups` of (name, data) files,
    one store entry each; `entries` the count it says."""
    payload = varint(len(groups) if entries is None else entries)
    for group in groups:
        payload += varint(len(group)) + b''.join(entry(*e) for e in group)
    out = io.BytesIO()
    b2.write_start(out)
    b2.write_part(out, 'STREAM3-EXP', 1, payload + tail,
                  mandatory_params=[('requirements', REQS)])
    b2.write_end(out)
    return io.BytesIO(out.getvalue()).read


@pytest.fixture
def spool(tmp_path):
    spool = sc.Spool(tmp_path)
    yield spool
    spool.remove()


def spooled(spool):
    """The spool's `revlogs` file and its table's lines (numbers without
    the leading zeros of the first two)."""
    with open(os.path.join(spool.path, 'revlogs'), 'rb') as f:
        data = f.read()
    with open(os.path.join(spool.path, 'table'), 'rb') as f:
        lines = f.read().splitlines()
    return data, [b' '.join([b'%d' % int(n) for n in line.split(b' ')[:4]]
                            + line.split(b' ', 4)[4:]) for line in lines]


# The header of a revlog index with a data file (version 1, not inline),
# and of an inline one.
SPLIT = b'\0\0\0\1'
INLINE = b'\0\1\0\1'


def test_revlogs_are_spooled_in_one_file(spool):
    read = stream2_bundle([
        (b'data/a b/C.txt.i', SPLIT), (b'00manifest.i', b'm'),
        (b'00changelog.d', b'cd'), (b'00changelog.i', b'ci'),
        (b'phaseroots', b'dropped'), (b'branch2-served', b'cache', b'c'),
        (b'data/a b/C.txt.d', b'filedata')])
    sc.receive_bundle(read, spool)
    assert spool.finish()
    assert sorted(os.listdir(spool.path)) == ['revlogs', 'table']
    data, table = spooled(spool)
    assert data == SPLIT + b'mcdcifiledata'
    assert table == [b'7 2 5 2', b'4 1 0 0', b'0 4 9 8 a b/C.txt']


def test_filelog_lines_as_they_complete(spool):
    """A filelog's line is written once its index and (unless inline)
    its data came, in either order: the table is in that order."""
    read = stream2_bundle([
        (b'data/a.d', b'DA'), (b'data/a.e.i', INLINE),
        (b'data/a.i', SPLIT), (b'data/b.i', SPLIT), (b'data/c.i', INLINE),
        (b'data/b.d', b'DB'), (b'00changelog.i', b'c')])
    sc.receive_bundle(read, spool)
    assert spool.finish()
    data, table = spooled(spool)
    assert data == b'DA' + INLINE + SPLIT + SPLIT + INLINE + b'DBc'
    assert table == [b'20 1 0 0', b'0 0 0 0', b'2 4 0 0 a.e',
                     b'6 4 0 2 a', b'14 4 0 0 c', b'10 4 18 2 b']


def test_data_of_an_inline_index_is_dropped(spool):
    """As the helper would not read it (an index without data)."""
    read = stream2_bundle([(b'data/f.i', INLINE), (b'data/f.d', b'x'),
                           (b'data/g.i', b''), (b'data/g.d', b'y')])
    sc.receive_bundle(read, spool)
    assert spool.finish()
    assert spooled(spool) == (INLINE, [b'0 0 0 0', b'0 0 0 0',
                                       b'0 4 0 0 f', b'4 0 0 0 g'])


def test_index_whose_data_never_came(spool):
    sc.receive_bundle(stream2_bundle([(b'data/f.i', SPLIT)]), spool)
    assert spool.finish()
    assert spooled(spool)[1] == [b'0 0 0 0', b'0 0 0 0', b'0 4 0 0 f']


@pytest.mark.parametrize('entries', [
    [(b'data/f.i', INLINE), (b'data/f.i', INLINE)],
    [(b'data/f.d', b'x'), (b'data/f.i', SPLIT), (b'data/f.d', b'x')],
    [(b'data/f.i', SPLIT), (b'data/f.i', SPLIT)],
    [(b'data/f.d', b'x'), (b'data/f.d', b'x')],
    [(b'data/f.i', INLINE), (b'data/f.d', b'x'), (b'data/f.d', b'x')],
    [(b'00manifest.d', b'x'), (b'00manifest.d', b'x')],
])
def test_file_sent_twice(entries, spool):
    with pytest.raises(sc.StreamError) as error:
        sc.receive_bundle(stream2_bundle(entries), spool)
    assert 'twice' in error.value.message


def test_name_digests():
    names = sc.NameDigests()
    for n in range(5000):
        names.add(b'data/%d.i' % n)
    names.add(b'data/0.i')
    assert len(names) == 5000
    assert all(b'data/%d.i' % n in names for n in range(5000))
    assert not any(b'data/%d.d' % n in names for n in range(5000))


def test_missing_top_revlogs_are_empty(spool):
    sc.receive_bundle(stream2_bundle([(b'data/f.i', b'x')]), spool)
    assert spool.finish()
    assert spooled(spool)[1] == [b'0 0 0 0', b'0 0 0 0', b'0 1 0 0 f']


def test_varint_lengths(spool):
    sc.receive_bundle(stream2_bundle([(b'00changelog.i', b'x' * 300)]),
                      spool)
    spool.finish()
    assert spooled(spool) == (b'x' * 300, [b'0 300 0 0', b'0 0 0 0'])


def test_stream3_exp(spool):
    """The same files as a stream2's, grouped by store entry."""
    read = stream3_bundle([[(b'data/f.d', b'dd'), (b'data/f.i', SPLIT)],
                           [(b'00manifest.i', b'm')], [],
                           [(b'00changelog.i', b'c')]])
    assert sc.receive_bundle(read, spool) == 'stream3-exp'
    spool.finish()
    data, lines = spooled(spool)
    assert data == b'dd' + SPLIT + b'm' + b'c'
    assert lines == [b'7 1 0 0', b'6 1 0 0', b'2 4 0 2 f']


@pytest.mark.parametrize('groups, entries, tail, message', [
    ([[(b'00changelog.i', b'c')]], 2, b'', 'ends early'),
    ([[(b'00changelog.i', b'c')]], 1, b'\0', 'more than its 1 entries'),
    ([[(b'../x.i', b'c')]], None, b'', 'outside the store'),
])
def test_bad_stream3_exp(groups, entries, tail, message, spool):
    with pytest.raises(Abort) as error:
        sc.receive_bundle(stream3_bundle(groups, entries, tail), spool)
    assert message in error.value.message


@pytest.mark.parametrize('entries, files, total, message', [
    ([(b'00changelog.i', b'abc')], None, 2, 'more data than it says'),
    ([(b'00changelog.i', b'abc')], None, 4, 'do not add up'),
    ([(b'/etc/passwd.i', b'abc')], None, None, 'outside the store'),
    ([(b'../x.i', b'abc')], None, None, 'outside the store'),
    ([(b'00changelog.i', b'a'), (b'00changelog.i', b'b')], None, None,
     'twice'),
    ([(b'data/a\nb.i', b'a')], None, None, 'newline'),
    ([(b'00changelog.i', b'a', b'x')], None, None, 'unknown kind'),
])
def test_bad_streams(entries, files, total, message, spool):
    with pytest.raises(sc.StreamError) as error:
        sc.receive_bundle(stream2_bundle(entries, files, total), spool)
    assert message in error.value.message


def test_data_without_its_index(spool):
    sc.receive_bundle(stream2_bundle([(b'data/f.d', b'x')]), spool)
    with pytest.raises(sc.StreamError) as error:
        spool.finish()
    assert 'without its index' in error.value.message


def test_unknown_requirement_before_any_data(spool):
    read = stream2_bundle([(b'00changelog.i', b'abc')],
                          requirements='revlogv1%2Ctreemanifest')
    with pytest.raises(sc.Unsupported) as error:
        sc.receive_bundle(read, spool)
    assert 'treemanifest' in str(error.value)
    assert os.listdir(spool.path) == []


def test_stream_out(spool):
    data = (b'0\n2 5\n' + b'data/d.i.hg/f.i\x003\nabc'
            + b'00changelog.i\x002\nxy')
    sc.receive_stream_out(io.BytesIO(data).read, spool)
    spool.finish()
    assert spooled(spool) == (b'abcxy', [b'3 2 0 0', b'0 0 0 0',
                                         b'0 3 0 0 d.i/f'])


@pytest.mark.parametrize('data, exception, message', [
    (b'1\n', sc.Unsupported, 'does not allow'),
    (b'0\n1 5\n00changelog.i\x003\nabc', sc.StreamError, 'do not add up'),
    (b'0\n1 2\n00changelog.i\x003\nabc', sc.StreamError, 'more data'),
    (b'0\nx\n', sc.StreamError, 'malformed stream header'),
])
def test_bad_stream_out(data, exception, message, spool):
    with pytest.raises(exception) as error:
        sc.receive_stream_out(io.BytesIO(data).read, spool)
    assert message in str(error.value)
