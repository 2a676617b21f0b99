"""Reading stream clones (cinnabar.hg.streamclone): the stream2 part and
stream v1, into a spool; the revlogs themselves are read by the helper
(tests/test_stream_clone*.py)."""

import io
import os

import pytest

from cinnabar.hg import bundle2 as b2
from cinnabar.hg import streamclone as sc

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


@pytest.fixture
def spool(tmp_path):
    spool = sc.Spool(tmp_path)
    yield spool
    spool.remove()


def spooled(spool):
    """The spool's `revlogs` file and its table's lines."""
    with open(os.path.join(spool.path, 'revlogs'), 'rb') as f:
        data = f.read()
    with open(os.path.join(spool.path, 'table'), 'rb') as f:
        return data, f.read().splitlines()


def test_revlogs_are_spooled_in_one_file(spool):
    read = stream2_bundle([
        (b'data/a b/C.txt.i', b'file'), (b'00manifest.i', b'm'),
        (b'00changelog.d', b'cd'), (b'00changelog.i', b'ci'),
        (b'phaseroots', b'dropped'), (b'branch2-served', b'cache', b'c'),
        (b'data/a b/C.txt.d', b'filedata')])
    sc.receive_bundle(read, spool)
    assert spool.finish()
    assert sorted(os.listdir(spool.path)) == ['revlogs', 'table']
    data, table = spooled(spool)
    assert data == b'filemcdcifiledata'
    assert table == [b'7 2 5 2', b'4 1 0 0', b'0 4 9 8 a b/C.txt']


def test_missing_top_revlogs_are_empty(spool):
    sc.receive_bundle(stream2_bundle([(b'data/f.i', b'x')]), spool)
    assert spool.finish()
    assert spooled(spool)[1] == [b'0 0 0 0', b'0 0 0 0', b'0 1 0 0 f']


def test_varint_lengths(spool):
    sc.receive_bundle(stream2_bundle([(b'00changelog.i', b'x' * 300)]),
                      spool)
    spool.finish()
    assert spooled(spool) == (b'x' * 300, [b'0 300 0 0', b'0 0 0 0'])


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
