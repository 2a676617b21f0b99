"""Stream clone bundles and the revlogs they carry, read and written
loosely for fuzzing (the stream target, stream_target.py).

Formats (integers big-endian unless said otherwise):

packed1   "HGS1" "UN", u64 file count, u64 byte count (the data only),
          u16 size and the requirements (comma-separated, NUL-ended), then
          for each file "<name>\\0<size in decimal>\\n" and its data.
stream2   a bundle2 (bundlefmt.py) with one `stream2` part whose
          parameters are `requirements` (comma-separated, URL-quoted),
          `filecount` and `bytecount`; its payload, for each file: one
          byte (`s` a store file, `c` a cache file), two unsigned LEB128
          varints (7 bits a byte, low bits first, the high bit saying
          another byte follows): the name's length and the data's, then
          the name and the data.
revlog    (index v1, `<name>.i`) 64-byte entries: u48 offset of the
          chunk in the data and u16 revision flags, s32 compressed length,
          s32 uncompressed length, s32 delta base rev, s32 linked
          changelog rev, s32 p1 rev, s32 p2 rev, a 20-byte node and 12
          NULs. The first entry's first 4 bytes are the header instead of
          its offset: u16 feature flags (bit 0 inline data, bit 1
          generaldelta) and u16 version (1). Inline, each entry is
          followed by its chunk; otherwise chunks are in `<name>.d` at
          their offsets. A chunk's first byte says how it is stored: NUL
          (raw text starting with NUL), `u` (raw, the `u` dropped), `x`
          (zlib), `(` (zstd frame).
"""

import hashlib
import struct
from urllib.parse import quote, unquote

from lib import bundlefmt
from lib.bundlefmt import FormatError

ENTRY = struct.Struct('>Qiiiiii20s12s')
assert ENTRY.size == 64
INLINE = 1 << 16
FIELDS = ('offset', 'flags', 'comp', 'uncomp', 'base', 'link', 'p1', 'p2',
          'node')


class Entry:
    """A file of the stream: kind b's' or b'c', name, data."""

    def __init__(self, kind, name, data):
        self.kind, self.name, self.data = kind, name, data


class Stream:
    """kind 'packed1' or 'stream2'; requirements: bytes; entries; for
    stream2 the bundle (bundlefmt.Bundle) holding the part."""

    def __init__(self, kind, requirements, entries, bundle=None):
        self.kind = kind
        self.requirements = requirements
        self.entries = list(entries)
        self.bundle = bundle

    def counts(self):
        return len(self.entries), sum(len(e.data) for e in self.entries)

    def encode(self, counts=None, sizes=None):
        """The bundle; `counts` (files, bytes) and `sizes` ({entry index:
        (name length, data length)}) stated instead of the true ones."""
        counts = counts or self.counts()
        sizes = sizes or {}
        if self.kind == 'packed1':
            return self._packed1(counts, sizes)
        return self._stream2(counts, sizes)

    def _packed1(self, counts, sizes):
        reqs = self.requirements + b'\0'
        out = [b'HGS1UN', struct.pack('>QQH', *counts, len(reqs)), reqs]
        for i, e in enumerate(self.entries):
            size = sizes.get(i, (None, len(e.data)))[1]
            out.append(e.name + b'\0%d\n' % size + e.data)
        return b''.join(out)

    def _stream2(self, counts, sizes):
        out = []
        for i, e in enumerate(self.entries):
            name_size, size = sizes.get(i, (len(e.name), len(e.data)))
            out.append(e.kind + varint(name_size) + varint(size) + e.name +
                       e.data)
        params = [(b'requirements', quote(self.requirements).encode()),
                  (b'filecount', b'%d' % counts[0]),
                  (b'bytecount', b'%d' % counts[1])]
        bundle = self.bundle or bundlefmt.Bundle('bundle2')
        part = stream_part(bundle)
        if part is None:
            part = bundlefmt.Part(b'STREAM2')
            bundle.parts.insert(0, part)
        part.params = sorted(params)
        part.payload, part.chunks = b''.join(out), None
        return bundle.encode()


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7f
        value >>= 7
        if not value:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def read_varint(reader):
    value = shift = 0
    while True:
        byte = reader.take(1)[0]
        value |= (byte & 0x7f) << shift
        if not byte & 0x80:
            return value
        shift += 7
        if shift > 63:
            raise FormatError('varint too long')


def stream_part(bundle):
    for part in bundle.parts:
        if part.type.lower() == b'stream2':
            return part
    return None


def read_stream(data):
    """Parse a stream bundle; FormatError when it is not one."""
    if data[:6] == b'HGS1UN':
        return _read_packed1(data)
    bundle = bundlefmt.read_bundle(data)
    part = bundle.kind == 'bundle2' and stream_part(bundle)
    if not part:
        raise FormatError('no stream2 part')
    reader = bundlefmt.Reader(part.payload)
    entries = []
    while reader.pos < len(reader.data):
        kind = reader.take(1)
        name_size, size = read_varint(reader), read_varint(reader)
        entries.append(Entry(kind, reader.take(name_size), reader.take(size)))
    requirements = unquote(part.param(b'requirements', b'').decode(
        'latin-1')).encode('latin-1')
    return Stream('stream2', requirements, entries, bundle)


def _read_packed1(data):
    reader = bundlefmt.Reader(data)
    reader.take(6)
    files, _, size = struct.unpack('>QQH', reader.take(18))
    requirements = reader.take(size).rstrip(b'\0')
    entries = []
    for _ in range(files):
        end = data.index(b'\n', reader.pos)
        name, _, length = reader.take(end + 1 - reader.pos)[:-1].partition(
            b'\0')
        entries.append(Entry(b's', name, reader.take(int(length))))
    return Stream('packed1', requirements, entries)


# Revlogs.

class Revlog:
    """The index entries of a `.i` file: [(position in the file, [field
    values as FIELDS says])], and where each inline chunk starts."""

    def __init__(self, data):
        self.data = data
        self.inline = len(data) >= 4 and bool(
            struct.unpack('>I', data[:4])[0] & INLINE)
        self.entries = []
        self.chunks = []  # (position, length) of inline chunks
        pos = 0
        while pos + ENTRY.size <= len(data):
            values = list(ENTRY.unpack_from(data, pos))
            offset_flags = values.pop(0)
            fields = [offset_flags >> 16, offset_flags & 0xffff] + \
                values[:6] + [values[6]]
            self.entries.append((pos, fields))
            pos += ENTRY.size
            if self.inline:
                length = max(fields[2], 0)
                self.chunks.append((pos, length))
                pos += length

    def with_field(self, rev, field, value):
        """The file with one field of entry `rev` set to `value`."""
        pos, fields = self.entries[rev]
        fields = list(fields)
        fields[FIELDS.index(field)] = value
        if field in ('offset', 'flags'):
            packed = struct.pack('>Q', (fields[0] % (1 << 48)) << 16 |
                                 fields[1] % (1 << 16))
            if rev == 0:
                packed = self.data[:4] + packed[4:]
            return self.data[:pos] + packed + self.data[pos + 8:]
        if field == 'node':
            return self.data[:pos + 32] + value[:20].ljust(20, b'\0') + \
                self.data[pos + 52:]
        at = pos + 8 + 4 * (FIELDS.index(field) - 2)
        return self.data[:at] + struct.pack('>I', value % (1 << 32)) + \
            self.data[at + 4:]


# Crafted changelogs: a stream of N changesets (each a child of the one
# before, with no manifest and no file) whose chunks make any chain shape,
# and whose stated lengths or chunks can be set to anything.

NULL = b'\0' * 20
STREAM_REQUIREMENTS = b'generaldelta,revlogv1,store'


def changeset_texts(count):
    """[(node, text)] of `count` changesets, each the child of the one
    before (node: sha1 of the sorted parents and the text)."""
    out, parent = [], NULL
    for rev in range(count):
        text = b'%s\ncrafted <c@example.com>\n%d 0\n\nchangeset %d' % (
            b'0' * 40, rev, rev)
        node = hashlib.sha1(NULL + parent + text).digest()
        out.append((node, text))
        parent = node
    return out


def whole_delta(base, text):
    """A delta making `text` of any base of `base` bytes: one hunk
    replacing all of it."""
    return struct.pack('>III', 0, len(base), len(text)) + text


def changelog_entries(count, base_of, chunks=None, text_lens=None):
    """The stream entries (00changelog.i and .d, generaldelta) of
    `count` changesets, revision r a delta against base_of(r) (r itself:
    a full text); `chunks` and `text_lens` ({rev: value}) replace what
    a revision's chunk or stated text length (unsigned) would be."""
    chunks, text_lens = chunks or {}, text_lens or {}
    texts = changeset_texts(count)
    index, data = [], []
    offset = 0
    for rev, (node, text) in enumerate(texts):
        base = base_of(rev)
        chunk = chunks.get(rev, b'u' + text if base == rev else
                           whole_delta(texts[base][1], text))
        text_len = signed32(text_lens.get(rev, len(text)))
        index.append(ENTRY.pack(offset << 16, len(chunk), text_len, base,
                                rev, rev - 1, -1, node, b'\0' * 12))
        data.append(chunk)
        offset += len(chunk)
    index[0] = struct.pack('>I', 1 | 2 << 16) + index[0][4:]
    return [Entry(b's', b'00changelog.i', b''.join(index)),
            Entry(b's', b'00changelog.d', b''.join(data))]


def signed32(value):
    """`value` as the signed 32-bit number of the same bits."""
    value %= 1 << 32
    return value - (1 << 32) if value >= 1 << 31 else value


def changelog_stream(count, base_of, **kwargs):
    """A stream2 bundle of changelog_entries()."""
    return Stream('stream2', STREAM_REQUIREMENTS,
                  changelog_entries(count, base_of, **kwargs)).encode()


def rle_zstd_frame(size, content_size=None, byte=b'\0'):
    """A zstd frame (RFC 8878) of `size` bytes `byte`, in run-length blocks
    of 128 KiB (4 bytes each); it states `content_size` when given."""
    if content_size is None:
        # No content size, no single segment: a window of 128 KiB.
        out = [struct.pack('<IBB', 0xfd2fb528, 0, 0x38)]
    else:
        # An 8-byte content size, single segment (no window byte).
        out = [struct.pack('<IBQ', 0xfd2fb528, 0xe0, content_size)]
    block = 1 << 17
    while True:
        n = min(size, block)
        size -= n
        out.append(struct.pack('<I', (n << 3) | (1 << 1) | (not size))[:3])
        out.append(byte)
        if not size:
            return b''.join(out)
