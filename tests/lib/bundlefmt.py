"""Mercurial bundles and changegroups, read and written loosely: the one
format library of the tests, the fuzzer and the benchmarks (lib.crafted
and lib.hgcraft build revisions on it; tests/fuzz mutates what it reads).

Formats (all integers big-endian):

bundle1   "HG10" + compression ("UN", "GZ": a zlib stream, "BZ": a bzip2
          stream whose "BZ" magic is the compression name itself) + a
          version 01 changegroup.  A bare changegroup starts with a NUL
          (the first byte of its first chunk length).
bundle2   "HG20", a u32 length and the stream parameters (space-separated
          url-quoted `key=value`, e.g. `Compression=BZ` with its magic kept,
          or `ZS` for zstd), then the (compressed) parts.  A part is a u32
          header length (0 ends the bundle) and a header: u8 type length,
          type, u32 part id, u8 mandatory and u8 advisory parameter counts,
          a pair of u8 sizes per parameter, then the keys and values; then
          its payload as chunks of a s32 length and data, 0 ending it.
changegroup  groups of chunks: a chunk is a u32 length counting itself
          (0 ends a group).  The changesets group, the manifests group,
          (version 03: a list of tree manifest groups ended by an empty
          chunk,) then for each file a chunk holding its name followed by
          its group; an empty chunk ends the list of files.  A revision
          chunk is a header (node, p1, p2, then version 02/03 the delta
          base, then the linked changeset; version 03 adds u16 flags)
          followed by a delta against its base (version 01: the previous
          revision of the group, or p1 for the first): hunks of u32 start,
          u32 end, u32 length and data, replacing base[start:end].

A revision id is sha1(min(p1, p2) + max(p1, p2) + text), parents as 20
raw bytes, the null id (NULL) for a missing parent.

Parsing keeps whatever it cannot understand as raw bytes, so that any
input can be turned back into bytes, and writing recomputes lengths
unless told otherwise.
"""

import bz2
import hashlib
import struct
import zlib

HEADER_SIZES = {1: 80, 2: 100, 3: 102}
NULL = b'\0' * 20
END = b'\0\0\0\0'   # an empty chunk: the end of a group or a list


def node_id(text, p1=NULL, p2=NULL):
    """The revision id of `text` with parents `p1`, `p2` (raw ids)."""
    a, b = sorted((p1, p2))
    return hashlib.sha1(a + b + text).digest()


class FormatError(Exception):
    pass


# Changegroups.

class Rev:
    """One revision chunk."""

    def __init__(self, node, p1, p2, base, cs, delta, flags=0):
        self.node, self.p1, self.p2 = node, p1, p2
        self.base, self.cs, self.delta, self.flags = base, cs, delta, flags

    def encode(self, version):
        head = self.node + self.p1 + self.p2
        if version >= 2:
            head += self.base
        head += self.cs
        if version == 3:
            head += struct.pack('>H', self.flags)
        return head + self.delta


class Changegroup:
    """changesets, manifests, [(name, revs)] of files, and trees for 03."""

    def __init__(self, version, changesets=(), manifests=(), files=(),
                 trees=()):
        self.version = version
        self.changesets = list(changesets)
        self.manifests = list(manifests)
        self.files = list(files)
        self.trees = list(trees)

    def encode(self):
        out = []
        out += group(self.changesets, self.version)
        out += group(self.manifests, self.version)
        if self.version == 3:
            for name, revs in self.trees:
                out.append(chunk(name))
                out += group(revs, self.version)
            out.append(END)
        for name, revs in self.files:
            out.append(chunk(name))
            out += group(revs, self.version)
        out.append(END)
        return b''.join(out)


def chunk(data):
    return struct.pack('>I', len(data) + 4) + data


def group(revs, version):
    return [chunk(r.encode(version)) for r in revs] + [END]


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise FormatError('truncated')
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u32(self):
        return struct.unpack('>I', self.take(4))[0]

    def s32(self):
        return struct.unpack('>i', self.take(4))[0]

    def chunk(self):
        """The next chunk's data, or None for an empty one."""
        n = self.u32()
        if n == 0:
            return None
        if n < 4:
            raise FormatError('chunk length %d' % n)
        return self.take(n - 4)


def read_group(reader, version):
    revs = []
    size = HEADER_SIZES[version]
    prev = None
    while True:
        data = reader.chunk()
        if data is None:
            return revs
        if len(data) < size:
            raise FormatError('short revision chunk')
        node, p1, p2 = data[:20], data[20:40], data[40:60]
        if version == 1:
            base = prev if prev is not None else p1
            cs, rest = data[60:80], data[80:]
            flags = 0
        else:
            base, cs = data[60:80], data[80:100]
            flags = struct.unpack('>H', data[100:102])[0] if version == 3 \
                else 0
            rest = data[size:]
        revs.append(Rev(node, p1, p2, base, cs, rest, flags))
        prev = node


def read_changegroup(data, version):
    """Parse a whole changegroup; FormatError when it is not one."""
    reader = Reader(data)
    cg = Changegroup(version)
    cg.changesets = read_group(reader, version)
    cg.manifests = read_group(reader, version)
    if version == 3:
        while True:
            name = reader.chunk()
            if name is None:
                break
            cg.trees.append((name, read_group(reader, version)))
    while True:
        name = reader.chunk()
        if name is None:
            break
        cg.files.append((name, read_group(reader, version)))
    cg.trailing = data[reader.pos:]
    return cg


# Deltas.

def parse_delta(delta):
    """[(start, end, data)]; FormatError when the hunks do not parse."""
    hunks, pos = [], 0
    while pos < len(delta):
        if pos + 12 > len(delta):
            raise FormatError('truncated delta hunk')
        start, end, n = struct.unpack('>III', delta[pos:pos + 12])
        pos += 12
        if pos + n > len(delta):
            raise FormatError('truncated delta data')
        hunks.append((start, end, delta[pos:pos + n]))
        pos += n
    return hunks


def encode_delta(hunks):
    return b''.join(struct.pack('>III', s, e, len(d)) + d
                    for s, e, d in hunks)


def full_delta(base, text):
    """A delta replacing all of `base` by `text`."""
    return encode_delta([(0, len(base), text)])


def apply_delta(base, delta):
    """Mercurial's rule: hunks in order, within the base, not overlapping."""
    out, last = [], 0
    for start, end, data in parse_delta(delta):
        if start < last or start > end or end > len(base):
            raise FormatError('invalid delta hunk')
        out.append(base[last:start])
        out.append(data)
        last = end
    out.append(base[last:])
    return b''.join(out)


def make_delta(base, text, by_line=True):
    """One hunk replacing what differs between `base` and `text`.

    By line, as Mercurial's own deltas are (it reads manifest deltas back
    as lines), or byte by byte.
    """
    if base == text:
        return b''
    a = base.splitlines(True) if by_line else [bytes([c]) for c in base]
    b = text.splitlines(True) if by_line else [bytes([c]) for c in text]
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    m = 0
    while m < limit - n and a[len(a) - 1 - m] == b[len(b) - 1 - m]:
        m += 1
    start = sum(map(len, a[:n]))
    end = len(base) - sum(map(len, a[len(a) - m:]))
    return encode_delta([(start, end, b''.join(b[n:len(b) - m]))])


# Bundles.

class Part:
    def __init__(self, type, params=(), advisory=(), payload=b'',
                 part_id=0, chunks=None):
        self.type = type
        self.params = list(params)
        self.advisory = list(advisory)
        self.payload = payload
        self.part_id = part_id
        self.chunks = chunks  # payload split as read, or None

    def param(self, key, default=None):
        for k, v in self.params + self.advisory:
            if k == key:
                return v
        return default

    def encode(self, chunk_size=4096):
        pairs = self.params + self.advisory
        head = bytes([len(self.type)]) + self.type
        head += struct.pack('>IBB', self.part_id, len(self.params),
                            len(self.advisory))
        head += b''.join(bytes([len(k), len(v)]) for k, v in pairs)
        head += b''.join(k + v for k, v in pairs)
        out = [struct.pack('>I', len(head)), head]
        chunks = self.chunks
        if chunks is None:
            chunks = [self.payload[i:i + chunk_size]
                      for i in range(0, len(self.payload), chunk_size)]
        for c in chunks:
            out.append(struct.pack('>i', len(c)) + c)
        out.append(END)
        return b''.join(out)


class Bundle:
    """kind: 'bundle1', 'bundle2' or 'cg' (bare); compression: UN GZ BZ ZS.

    bundle1 and bare: `payload` is the changegroup bytes; bundle2: `parts`
    (a list of Part) and `params` (stream parameters other than
    Compression, as (key, value) byte pairs, or the whole parameter text
    as bytes, written as it is).
    """

    def __init__(self, kind, compression=b'UN', payload=b'', parts=(),
                 params=()):
        self.kind = kind
        self.compression = compression
        self.payload = payload
        self.parts = list(parts)
        self.params = params if isinstance(params, bytes) else list(params)
        self.trailing = b''

    def changegroups(self):
        """[(version, bytes)] of the changegroups it carries."""
        if self.kind != 'bundle2':
            return [(1, self.payload)]
        out = []
        for part in self.parts:
            if part.type.lower() == b'changegroup':
                v = part.param(b'version', b'01')
                out.append((int(v) if v in (b'01', b'02', b'03') else 0,
                            part.payload))
        return out

    def encode(self, compress_zstd=None):
        if self.kind == 'cg':
            return self.payload
        if self.kind == 'bundle1':
            body = compress(self.compression, self.payload, compress_zstd)
            if self.compression == b'BZ':
                body = body[2:]
            return b'HG10' + self.compression + body + self.trailing
        if isinstance(self.params, bytes):
            text = self.params
        else:
            params = list(self.params)
            if self.compression != b'UN':
                params.insert(0, (b'Compression', self.compression))
            text = b' '.join(k + b'=' + v if v is not None else k
                             for k, v in params)
        parts = b''.join(p.encode() for p in self.parts) + END
        return (b'HG20' + struct.pack('>I', len(text)) + text +
                compress(self.compression, parts, compress_zstd) +
                self.trailing)


def compress(name, data, compress_zstd=None):
    if name == b'UN':
        return data
    if name == b'GZ':
        return zlib.compress(data)
    if name == b'BZ':
        return bz2.compress(data)
    if name == b'ZS' and compress_zstd:
        return compress_zstd(data)
    raise FormatError('cannot compress with %r' % name)


def decompress(name, data):
    try:
        if name == b'UN':
            return data
        if name == b'GZ':
            return zlib.decompress(data)
        if name == b'BZ':
            return bz2.decompress(data)
    except (zlib.error, OSError, ValueError, EOFError) as e:
        raise FormatError('cannot decompress: %s' % e)
    raise FormatError('cannot decompress %r' % name)


def read_parts(data):
    reader = Reader(data)
    parts = []
    while True:
        size = reader.u32()
        if size == 0:
            break
        head = Reader(reader.take(size))
        type_ = head.take(head.take(1)[0])
        part_id = head.u32()
        nmand, nadv = head.take(1)[0], head.take(1)[0]
        sizes = [(head.take(1)[0], head.take(1)[0])
                 for _ in range(nmand + nadv)]
        pairs = [(head.take(k), head.take(v)) for k, v in sizes]
        chunks = []
        while True:
            n = reader.s32()
            if n == 0:
                break
            if n < 0:
                raise FormatError('out-of-band part chunk')
            chunks.append(reader.take(n))
        parts.append(Part(type_, pairs[:nmand], pairs[nmand:],
                          b''.join(chunks), part_id, chunks))
    return parts, data[reader.pos:]


def read_bundle(data):
    """Parse a whole bundle (not zstd); FormatError when it is not one."""
    if data[:1] == b'\0':
        return Bundle('cg', payload=data)
    magic = data[:4]
    if magic == b'HG10':
        comp = data[4:6]
        body = data[6:]
        if comp == b'BZ':
            body = b'BZ' + body
        return Bundle('bundle1', comp, decompress(comp, body))
    if magic != b'HG20':
        raise FormatError('unknown magic')
    reader = Reader(data)
    reader.take(4)
    text = reader.take(reader.u32())
    params, comp = [], b'UN'
    for item in text.split(b' '):
        if not item:
            continue
        k, eq, v = item.partition(b'=')
        if k == b'Compression':
            comp = v
        else:
            params.append((k, v if eq else None))
    parts, trailing = read_parts(decompress(comp, data[reader.pos:]))
    bundle = Bundle('bundle2', comp, parts=parts, params=params)
    bundle.trailing = trailing
    return bundle


def changegroup_bundle(cg, kind='bundle2', compression=b'UN',
                       extra_parts=()):
    """A bundle carrying the changegroup `cg` (a Changegroup)."""
    data = cg.encode()
    if kind != 'bundle2':
        return Bundle(kind, compression, data)
    part = Part(b'CHANGEGROUP', params=[(b'version', b'%02d' % cg.version)],
                payload=data)
    return Bundle('bundle2', compression, parts=[part, *extra_parts])
