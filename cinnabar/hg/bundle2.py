"""The bundle2 format: writing the bundles we push, reading the replies.

A bundle2 stream, all integers big-endian:

    "HG20"
    <u32 size> <stream parameters: size bytes, space-separated
               `name` or `name=value`, URL-quoted; a name starting
               with an upper-case letter is mandatory; `Compression`
               says that what follows is compressed>
    parts...
    <u32 0>    end of the bundle

A part:

    <u32 size of the part header>
    part header:
        <u8 length> <part type>   upper case anywhere in the type makes
                                  the part mandatory (a reader that does
                                  not know it must stop)
        <u32 part id>             unique within the bundle
        <u8 count of mandatory parameters> <u8 count of advisory ones>
        <u8 key size, u8 value size> for each parameter, mandatory first
        the keys and values, one after the other, no separators
    payload: chunks, each <i32 size> <size bytes>; size 0 ends the part;
             size -1 interrupts it: a whole part (header and payload)
             follows, then the interrupted payload goes on.

This module only frames parts; `cinnabar.hg.pushwire` says which parts a
push sends, `cinnabar.hg.bundle2parts` what the parts of an answer mean.
"""

import struct

from cinnabar.errors import Abort
from cinnabar.hg.percent import unquote_to_bytes
from cinnabar.record import record

MAGIC = b'HG20'
# The size of the payload chunks we write.
CHUNK_SIZE = 32768
_U32 = struct.Struct('>I')
_I32 = struct.Struct('>i')
INTERRUPT = -1
# Part types and parameters are short; a reply larger than this is not
# one a server would send.
MAX_HEADER_SIZE = 1 << 20
MAX_PAYLOAD_SIZE = 1 << 26
# The stream parameters (the <u32 size> after "HG20") are a few words,
# `Compression=ZS` at most in what Mercurial writes: past this size, as
# for the helper (helper/bundle.c), the bundle is damaged or hostile, and
# its stated size is never allocated.
MAX_STREAM_PARAMS_SIZE = 1 << 16  # BUNDLE2_MAX_STREAM_PARAMS in bundle.h

Part = record('Part', 'type params mandatory data')
Part.__doc__ = """A part read from a bundle: `type` in lower case,
`params` {str: str} (mandatory and advisory together), whether the part
is `mandatory`, and its payload (bytes)."""


class BundleError(Abort):
    """A bundle2 stream that does not follow the format."""


class PartParams(dict):
    """A part's parameters {str: str}, mandatory and advisory together;
    `mandatory` names the mandatory ones (a frozenset)."""

    def __init__(self, items=(), mandatory=()):
        super().__init__(items)
        self.mandatory = frozenset(mandatory)


# Writing.

def _text(value):
    return value.encode('utf-8') if isinstance(value, str) else bytes(value)


def part_header(part_type, part_id, mandatory_params=(), advisory_params=()):
    """The framed header of a part (its u32 size included).

    `part_type` is written as given: pass it upper case to make the part
    mandatory. Parameters are sequences of (key, value) pairs."""
    params = [(_text(k), _text(v)) for k, v in mandatory_params]
    params += [(_text(k), _text(v)) for k, v in advisory_params]
    name = _text(part_type)
    if not 0 < len(name) < 256:
        raise ValueError('bad bundle2 part type %r' % part_type)
    if len(params) > 255 or any(len(k) > 255 or len(v) > 255
                                for k, v in params):
        raise ValueError('bundle2 part parameters too large')
    header = [struct.pack('>B', len(name)), name, _U32.pack(part_id),
              struct.pack('>BB', len(mandatory_params),
                          len(advisory_params))]
    header += [struct.pack('>BB', len(k), len(v)) for k, v in params]
    header += [k + v for k, v in params]
    data = b''.join(header)
    return _U32.pack(len(data)) + data


def write_start(out):
    """The magic and an empty list of stream parameters."""
    out.write(MAGIC + _U32.pack(0))


def write_payload(out, source):
    """Write a part payload from bytes or a binary file, then its end."""
    if isinstance(source, (bytes, bytearray)):
        chunks = [bytes(source[i:i + CHUNK_SIZE])
                  for i in range(0, len(source), CHUNK_SIZE)]
    else:
        chunks = iter(lambda: source.read(CHUNK_SIZE), b'')
    for chunk in chunks:
        out.write(_I32.pack(len(chunk)) + chunk)
    out.write(_I32.pack(0))


def write_part(out, part_type, part_id, payload=b'', mandatory_params=(),
               advisory_params=()):
    out.write(part_header(part_type, part_id, mandatory_params,
                          advisory_params))
    write_payload(out, payload)


def write_end(out):
    out.write(_U32.pack(0))


# Reading.

class _Reader:
    """Exact reads from `read(size)` (a file's read or a transport's)."""

    def __init__(self, read):
        self._read = read

    def exactly(self, size):
        data = self._read(size) if size else b''
        if len(data) != size:
            raise BundleError('the bundle2 ends early (truncated)')
        return data

    def u32(self):
        return _U32.unpack(self.exactly(4))[0]

    def i32(self):
        return _I32.unpack(self.exactly(4))[0]


def parse_stream_params(data):
    """{name: value} (str) from the stream parameters block."""
    params = {}
    for item in data.split(b' '):
        if not item:
            continue
        name, _, value = item.partition(b'=')
        params[unquote_to_bytes(name).decode('utf-8', 'replace')] = (
            unquote_to_bytes(value).decode('utf-8', 'replace'))
    return params


def parse_part_header(data):
    """(type, params, mandatory) from a part header (without its size);
    `params` is a PartParams."""
    try:
        size = data[0]
        name = data[1:1 + size].decode('ascii')
        offset = 1 + size + 4
        mandatory_count, advisory_count = data[offset], data[offset + 1]
        offset += 2
        count = mandatory_count + advisory_count
        sizes = [(data[offset + 2 * i], data[offset + 2 * i + 1])
                 for i in range(count)]
        offset += 2 * count
        items = []
        for key_size, value_size in sizes:
            key = data[offset:offset + key_size]
            value = data[offset + key_size:offset + key_size + value_size]
            if len(value) != value_size:
                raise IndexError
            offset += key_size + value_size
            items.append((key.decode('utf-8', 'replace'),
                          value.decode('utf-8', 'replace')))
    except (IndexError, UnicodeDecodeError):
        raise BundleError('malformed bundle2 part header in the reply')
    params = PartParams(items, (key for key, _ in items[:mandatory_count]))
    return name.lower(), params, name != name.lower()


def _read_part(reader, size, parts):
    """Read one part whose header is `size` bytes; append it (and any
    part interrupting it, first) to `parts`."""
    if size > MAX_HEADER_SIZE:
        raise BundleError('bundle2 part header too large (%d bytes)' % size)
    part_type, params, mandatory = parse_part_header(reader.exactly(size))
    payload = []
    total = 0
    while True:
        chunk_size = reader.i32()
        if chunk_size == 0:
            break
        if chunk_size == INTERRUPT:
            _read_part(reader, reader.u32(), parts)
            continue
        if chunk_size < 0:
            raise BundleError('bad bundle2 chunk size %d' % chunk_size)
        total += chunk_size
        if total > MAX_PAYLOAD_SIZE:
            raise BundleError('bundle2 reply part too large')
        payload.append(reader.exactly(chunk_size))
    parts.append(Part(part_type, params, mandatory, b''.join(payload)))


def _read_header(read):
    """A _Reader of the bundle2 read by `read(size)`, past its magic and
    stream parameters (none of which may be mandatory: we know none)."""
    reader = _Reader(read)
    magic = reader.exactly(4)
    if magic != MAGIC:
        raise BundleError('the server did not answer with a bundle2 '
                          '(it starts with %r)' % magic)
    size = reader.u32()
    if size > MAX_STREAM_PARAMS_SIZE:
        raise BundleError('the bundle2 states stream parameters of %d bytes '
                          '(more than %d): it is damaged'
                          % (size, MAX_STREAM_PARAMS_SIZE))
    params = parse_stream_params(reader.exactly(size))
    unknown = [name for name in params if name[:1].isupper()]
    if unknown:
        raise BundleError('the server answered with a bundle2 needing %s, '
                          'which we do not support' % ', '.join(unknown))
    return reader


def read_bundle(read):
    """Read a whole (uncompressed) bundle2 from `read(size)`; returns its
    parts in order. Reads nothing past the end of the bundle."""
    reader = _read_header(read)
    parts = []
    while True:
        size = reader.u32()
        if size == 0:
            return parts
        _read_part(reader, size, parts)


# Reading part by part, payloads as streams (stream clones, whose
# payloads are the size of the repository).

class PartPayload:
    """The payload of the part being read by `stream_parts`: exact reads
    across its chunks. An interruption (out-of-band part) is refused."""

    def __init__(self, reader):
        self._reader = reader
        self._left = 0
        self.done = False

    def _next_chunk(self):
        size = self._reader.i32()
        if size == INTERRUPT:
            raise BundleError('interrupted bundle2 part in a stream')
        if size < 0:
            raise BundleError('bad bundle2 chunk size %d' % size)
        self._left = size
        self.done = size == 0

    def read(self, size):
        """Up to `size` bytes (fewer only at the end of the payload)."""
        data = []
        while size and not self.done:
            if not self._left:
                self._next_chunk()
                continue
            count = min(size, self._left)
            data.append(self._reader.exactly(count))
            self._left -= count
            size -= count
        return b''.join(data)

    def exactly(self, size):
        data = self.read(size)
        if len(data) != size:
            raise BundleError('bundle2 part payload ends early')
        return data

    def drain(self):
        while not self.done:
            self.read(CHUNK_SIZE)


def stream_parts(read):
    """Read an uncompressed bundle2 from `read(size)` part by part: yields
    (type, params, mandatory, PartPayload) for each part, whose payload
    is drained when the consumer leaves it before its end. Reads nothing
    past the end of the bundle."""
    reader = _read_header(read)
    while True:
        size = reader.u32()
        if size == 0:
            return
        if size > MAX_HEADER_SIZE:
            raise BundleError('bundle2 part header too large (%d bytes)'
                              % size)
        part_type, params, mandatory = parse_part_header(
            reader.exactly(size))
        payload = PartPayload(reader)
        yield part_type, params, mandatory, payload
        payload.drain()
