"""Mutators: byte-level, length fields, and structure-level.

Every mutator takes a random.Random and the input (bytes), and returns new
bytes.  The byte-level ones work on the file as it is; the structural ones
parse it (bundlefmt), change one thing, and write it back, often with a
different container or compression, so that mutated payloads also reach
the changegroup reader through each decompressor.
"""

import struct

from lib import bundlefmt
from lib.bundlefmt import FormatError

INTERESTING_32 = (0, 1, 3, 4, 5, 12, 79, 80, 81, 99, 100, 101, 102, 103,
                  0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0x7fffffff,
                  0x80000000, 0x80000001, 0xfffffffc, 0xfffffffe,
                  0xffffffff, 1 << 20, (1 << 20) + 1, 65536, 65537,
                  (1 << 31) + 4)
INTERESTING_8 = (0, 1, 0x7f, 0x80, 0xfe, 0xff, ord('\n'), ord('\0'),
                 ord('/'), ord(':'), ord('.'))


# Byte level.

def flip_bit(rng, data):
    if not data:
        return b'\0'
    b = bytearray(data)
    i = rng.randrange(len(b))
    b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def set_byte(rng, data):
    if not data:
        return bytes([rng.choice(INTERESTING_8)])
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4))):
        b[rng.randrange(len(b))] = rng.choice(
            (rng.randrange(256), rng.choice(INTERESTING_8)))
    return bytes(b)


def set_u32(rng, data):
    if len(data) < 4:
        return data + b'\0' * 4
    i = rng.randrange(len(data) - 3)
    return data[:i] + struct.pack('>I', rng.choice(INTERESTING_32)) + \
        data[i + 4:]


def truncate(rng, data):
    if not data:
        return data
    return data[:rng.randrange(len(data))]


def insert_bytes(rng, data):
    i = rng.randrange(len(data) + 1)
    n = rng.choice((1, 2, 4, 16, 100, 1000))
    fill = rng.choice((bytes([rng.randrange(256)]) * n,
                       bytes(rng.randrange(256) for _ in range(min(n, 64))),
                       data[i:i + n]))
    return data[:i] + fill + data[i:]


def delete_bytes(rng, data):
    if not data:
        return data
    i = rng.randrange(len(data))
    n = rng.choice((1, 2, 4, 20, 100, len(data)))
    return data[:i] + data[i + n:]


def duplicate_range(rng, data):
    if not data:
        return data
    i = rng.randrange(len(data))
    j = min(len(data), i + rng.choice((4, 20, 100, 1000)))
    return data[:j] + data[i:j] + data[j:]


def splice(rng, data, other):
    """The beginning of one input with the end of another."""
    if not data or not other:
        return data + other
    return data[:rng.randrange(len(data))] + other[rng.randrange(len(other)):]


BYTE_MUTATORS = (flip_bit, set_byte, set_u32, truncate, insert_bytes,
                 delete_bytes, duplicate_range)


# Length fields: find where chunk lengths are, and change one.

def chunk_offsets(data, start):
    """Offsets of the u32 chunk lengths of a changegroup at data[start:]."""
    offsets, pos = [], start
    while pos + 4 <= len(data) and len(offsets) < 10000:
        n = struct.unpack('>I', data[pos:pos + 4])[0]
        offsets.append(pos)
        pos += 4 if n == 0 else n
        if n and n < 4:
            break
    return offsets


def edit_length(rng, data):
    """Change one changegroup chunk length of an uncompressed bundle."""
    if data[:6] == b'HG10UN':
        start = 6
    elif data[:1] == b'\0':
        start = 0
    else:
        return set_u32(rng, data)
    offsets = chunk_offsets(data, start)
    if not offsets:
        return data
    pos = rng.choice(offsets)
    old = struct.unpack('>I', data[pos:pos + 4])[0]
    new = rng.choice(INTERESTING_32 + (old + 1, old - 1 if old else 0,
                                       old + 4, old * 2))
    return data[:pos] + struct.pack('>I', new & 0xffffffff) + data[pos + 4:]


# Structure level.

def _parse(data):
    bundle = bundlefmt.read_bundle(data)
    return bundle


def _cgs_of(bundle):
    """[(holder, version, Changegroup)] where holder gets the bytes back."""
    out = []
    if bundle.kind != 'bundle2':
        out.append((bundle, 1, bundlefmt.read_changegroup(bundle.payload, 1)))
    else:
        for part in bundle.parts:
            if part.type.lower() == b'changegroup':
                v = part.param(b'version', b'01')
                if v in (b'01', b'02', b'03'):
                    out.append((part, int(v),
                                bundlefmt.read_changegroup(part.payload,
                                                           int(v))))
    return out


def _groups(cg):
    groups = [cg.changesets, cg.manifests]
    groups += [revs for _, revs in cg.trees + cg.files]
    return [g for g in groups if g]


def mutate_revision(rng, cg):
    groups = _groups(cg)
    if not groups:
        return
    revs = rng.choice(groups)
    rev = rng.choice(revs)
    what = rng.randrange(9)
    nodes = [r.node for g in groups for r in g] + [b'\0' * 20,
                                                   b'\xff' * 20]
    if what == 0:
        rev.base = rng.choice(nodes)
    elif what == 1:
        rev.p1 = rng.choice(nodes)
    elif what == 2:
        rev.p2 = rng.choice(nodes)
    elif what == 3:
        rev.cs = rng.choice(nodes)
    elif what == 4:
        rev.delta = mutate_delta(rng, rev.delta)
    elif what == 5:
        revs.insert(rng.randrange(len(revs) + 1), rev)
    elif what == 6:
        revs.remove(rev)
    elif what == 7:
        i, j = rng.randrange(len(revs)), rng.randrange(len(revs))
        revs[i], revs[j] = revs[j], revs[i]
    else:
        rev.flags = rng.choice((1, 0x8000, 0x2000, 0xffff))


def mutate_delta(rng, delta):
    try:
        hunks = bundlefmt.parse_delta(delta)
    except FormatError:
        return flip_bit(rng, delta)
    if not hunks:
        return struct.pack('>III', 0, rng.choice((0, 1, 1 << 31)), 0)
    i = rng.randrange(len(hunks))
    start, end, text = hunks[i]
    what = rng.randrange(6)
    if what == 0:
        start = rng.choice(INTERESTING_32)
    elif what == 1:
        end = rng.choice(INTERESTING_32)
    elif what == 2:
        start, end = end, start
    elif what == 3:
        hunks.insert(i, hunks[i])
    elif what == 4:
        hunks.reverse()
    else:
        encoded = bundlefmt.encode_delta(hunks)
        return set_u32(rng, encoded)
    hunks[i] = (start, end, text)
    return bundlefmt.encode_delta(hunks)


def mutate_files(rng, cg):
    if not cg.files:
        cg.files.append((b'new', []))
        return
    i = rng.randrange(len(cg.files))
    name, revs = cg.files[i]
    what = rng.randrange(5)
    if what == 0:
        cg.files[i] = (rng.choice(HOSTILE_NAMES), revs)
    elif what == 1:
        cg.files.insert(i, (name, revs))
    elif what == 2:
        cg.files[i] = (name, [])
    elif what == 3:
        del cg.files[i]
    else:
        cg.files.reverse()


HOSTILE_NAMES = (b'', b'.hg/x', b'../x', b'/abs', b'a//b', b'dir/',
                 b'a\nb', b'.git/config', b'x' * 5000, b'\xff\xfe',
                 b'a/' * 2000 + b'z')


def mutate_part(rng, bundle):
    """Change a bundle2 part header or the stream parameters."""
    if bundle.kind != 'bundle2':
        return
    what = rng.randrange(8)
    if what == 0 or not bundle.parts:
        bundle.parts.insert(rng.randrange(len(bundle.parts) + 1),
                            rng.choice(EXTRA_PARTS)())
        return
    part = rng.choice(bundle.parts)
    if what == 1:
        part.type = rng.choice((b'CHANGEGROUP', b'changegroup', b'Unknown',
                                b'error:abort', b'output', b'x' * 255, b'',
                                b'check:heads', b'b2x:changegroup'))
    elif what == 2:
        part.params = [(b'version', rng.choice((b'01', b'02', b'03', b'04',
                                                b'', b'1', b'\0')))]
    elif what == 3:
        part.advisory.append((bytes(rng.randrange(256) for _ in range(3)),
                              b'v' * rng.choice((0, 1, 255))))
    elif what == 4:
        part.params.append((b'Mandatory', b'1'))
    elif what == 5:
        part.chunks = _rechunk(rng, part.payload)
    elif what == 6:
        bundle.params.append(rng.choice(((b'Unknown', b'1'), (b'x', None),
                                         (b'%00', b'%zz'), (b'=', b'='))))
    else:
        bundle.parts.remove(part)


def _rechunk(rng, payload):
    sizes = rng.choice((1, 7, 4096, 1 << 16))
    chunks = [payload[i:i + sizes] for i in range(0, len(payload), sizes)]
    if rng.random() < 0.3:
        chunks.insert(rng.randrange(len(chunks) + 1), b'')
    return chunks


EXTRA_PARTS = (
    lambda: bundlefmt.Part(b'output', payload=b'remote says hi\n'),
    lambda: bundlefmt.Part(b'error:abort', params=[(b'message', b'nope')]),
    lambda: bundlefmt.Part(b'ERROR:PUSHRACED'),
    lambda: bundlefmt.Part(b'phase-heads', payload=b'\0' * 25),
    lambda: bundlefmt.Part(b'obsmarkers', payload=b'\x01junk'),
    lambda: bundlefmt.Part(b'UNKNOWN-MANDATORY'),
    lambda: bundlefmt.Part(b'unknown-advisory', payload=b'x' * 10000),
    lambda: bundlefmt.Part(b'CHANGEGROUP', params=[(b'version', b'02')],
                           payload=b'\0' * 12),
)


def structural(rng, data, compress_zstd=None):
    """One structure-level change; FormatError when `data` does not parse."""
    bundle = _parse(data)
    cgs = _cgs_of(bundle)
    what = rng.randrange(4)
    if what == 0 and cgs:
        holder, version, cg = rng.choice(cgs)
        mutate_revision(rng, cg)
        _store(holder, cg)
    elif what == 1 and cgs:
        holder, version, cg = rng.choice(cgs)
        mutate_files(rng, cg)
        _store(holder, cg)
    elif what == 2:
        mutate_part(rng, bundle)
    rewrap(rng, bundle)
    return bundle.encode(compress_zstd)


def _store(holder, cg):
    holder.payload = cg.encode()
    if isinstance(holder, bundlefmt.Part):
        holder.chunks = None


def rewrap(rng, bundle):
    """Sometimes move the payload to another container or compression."""
    if rng.random() < 0.5:
        return
    if bundle.kind != 'bundle2':
        bundle.compression = rng.choice((b'UN', b'GZ', b'BZ'))
        if rng.random() < 0.3:
            cg = bundle.payload
            bundle.kind = 'bundle2'
            bundle.parts = [bundlefmt.Part(
                b'CHANGEGROUP', params=[(b'version', b'01')], payload=cg)]
        return
    bundle.compression = rng.choice((b'UN', b'GZ', b'BZ', b'ZS'))


def relength(rng, data):
    """An uncompressed copy of the input with one length field changed."""
    bundle = _parse(data)
    if bundle.kind == 'bundle2':
        bundle.compression = b'UN'
        raw = bundle.encode()
        return set_u32(rng, raw) if rng.random() < 0.5 else \
            _edit_part_length(rng, raw)
    bundle.compression = b'UN'
    return edit_length(rng, bundle.encode())


def _edit_part_length(rng, raw):
    """Change the header length or a payload chunk length of a part."""
    reader = bundlefmt.Reader(raw)
    reader.take(4)
    reader.take(reader.u32())
    offsets = []
    try:
        while True:
            pos = reader.pos
            size = reader.u32()
            offsets.append(pos)
            if size == 0:
                break
            reader.take(size)
            while True:
                pos = reader.pos
                n = reader.s32()
                offsets.append(pos)
                if n <= 0:
                    break
                reader.take(n)
    except FormatError:
        pass
    if not offsets:
        return raw
    pos = rng.choice(offsets)
    return raw[:pos] + struct.pack('>I', rng.choice(INTERESTING_32)) + \
        raw[pos + 4:]
