"""Writing and reading bundle2 streams (cinnabar.hg.bundle2)."""

import io
import struct

import pytest

from cinnabar.hg import bundle2 as b2


def u32(n):
    return struct.pack('>I', n)


def i32(n):
    return struct.pack('>i', n)


def test_part_header_layout():
    header = b2.part_header('CHANGEGROUP', 7, [('version', '02')],
                            [('nbchanges', '3')])
    body = (b'\x0bCHANGEGROUP' + u32(7) + b'\x01\x01'
            + b'\x07\x02' + b'\x09\x01' + b'version02' + b'nbchanges3')
    assert header == u32(len(body)) + body


def test_part_header_limits():
    with pytest.raises(ValueError):
        b2.part_header('', 0)
    with pytest.raises(ValueError):
        b2.part_header('x', 0, [('k', 'v' * 256)])


def test_payload_chunks(monkeypatch):
    monkeypatch.setattr(b2, 'CHUNK_SIZE', 4)
    out = io.BytesIO()
    b2.write_payload(out, b'abcdefghij')
    assert out.getvalue() == (i32(4) + b'abcd' + i32(4) + b'efgh' + i32(2)
                              + b'ij' + i32(0))
    out = io.BytesIO()
    b2.write_payload(out, io.BytesIO(b'abcdef'))
    assert out.getvalue() == i32(4) + b'abcd' + i32(2) + b'ef' + i32(0)
    out = io.BytesIO()
    b2.write_payload(out, b'')
    assert out.getvalue() == i32(0)


def write(parts):
    out = io.BytesIO()
    b2.write_start(out)
    for number, (name, mandatory, advisory, payload) in enumerate(parts):
        b2.write_part(out, name, number, payload, mandatory, advisory)
    b2.write_end(out)
    return out.getvalue()


def test_round_trip():
    data = write([('REPLY:CHANGEGROUP', [('return', '1')],
                   [('in-reply-to', '2')], b''),
                  ('output', [], [], b'remote says hi\n' * 1000)])
    assert data.startswith(b'HG20' + u32(0))
    parts = b2.read_bundle(io.BytesIO(data + b'trailing').read)
    assert parts == [
        b2.Part('reply:changegroup', {'return': '1', 'in-reply-to': '2'},
                True, b''),
        b2.Part('output', {}, False, b'remote says hi\n' * 1000)]


def test_stops_at_end_marker():
    stream = io.BytesIO(write([]) + b'next answer')
    assert b2.read_bundle(stream.read) == []
    assert stream.read() == b'next answer'


def test_interrupting_part():
    inner = b2.part_header('output', 9) + i32(2) + b'hi' + i32(0)
    outer = (b2.part_header('reply:pushkey', 1) + i32(3) + b'abc'
             + i32(-1) + inner + i32(3) + b'def' + i32(0))
    data = b'HG20' + u32(0) + outer + u32(0)
    parts = b2.read_bundle(io.BytesIO(data).read)
    assert [(p.type, p.data) for p in parts] == [
        ('output', b'hi'), ('reply:pushkey', b'abcdef')]


def test_stream_parameters():
    assert b2.parse_stream_params(b'a=b%20c d') == {'a': 'b c', 'd': ''}
    ok = b'HG20' + u32(5) + b'adv=1' + u32(0)
    assert b2.read_bundle(io.BytesIO(ok).read) == []
    compressed = b'HG20' + u32(14) + b'Compression=GZ' + u32(0)
    with pytest.raises(b2.BundleError) as error:
        b2.read_bundle(io.BytesIO(compressed).read)
    assert 'Compression' in error.value.message


@pytest.mark.parametrize('data', [
    b'', b'HG10UN', b'HG20', b'HG20' + u32(0),
    b'HG20' + u32(0) + u32(100) + b'short',
    b'HG20' + u32(0) + b2.part_header('output', 0) + i32(5) + b'abc',
    b'HG20' + u32(0) + b2.part_header('output', 0) + i32(-7),
    b'HG20' + u32(0) + u32(3) + b'\x09ab',
])
def test_bad_streams(data):
    with pytest.raises(b2.BundleError):
        b2.read_bundle(io.BytesIO(data).read)
