"""Mutators of stream clone bundles (streamfmt.py), aware of their framing.

`mutated(rng, data, pool)` returns new bytes: most often the stream is
parsed, one thing changed, and written back with the framing kept right
(so that the change reaches the revlog reader), sometimes in the other
container (packed1 <-> stream2); otherwise a length of the framing or a
byte of the file is changed (mutate.py's byte-level mutators).

What is changed:
- the framing: a file's stated name or data length, the file and byte
  counts, the requirements, an entry's kind byte;
- the files: names (outside the store, odd revlogs, tree manifests),
  dropped, duplicated, swapped, cut short, data of one given to another;
- a revlog index entry: its offset, flags, lengths, delta base, linked
  changeset, parents or node, set to values around the revision's own
  number, the revlog's size, or the edges of 32 bits;
- the index header (version, inline and generaldelta flags);
- a chunk: its compression header byte, or a bit of its data.
"""

import zlib

import mutate
import streamfmt
from lib.bundlefmt import FormatError
from mutate import INTERESTING_32

HOSTILE_NAMES = (b'', b'../x.i', b'/abs.i', b'data/../../x.i', b'data/.i',
                 b'data/a\nb.i', b'data/a\0b.i', b'meta/x/00manifest.i',
                 b'00changelog.i', b'00manifest.i', b'00changelog.d',
                 b'data/x.d', b'phaseroots', b'data/' + b'a/' * 300 + b'f.i',
                 b'data/x.n', b'00changelog-1234.nd')
REQUIREMENTS = (b'revlogv1', b'generaldelta', b'sparserevlog',
                b'revlog-compression-zstd', b'treemanifest', b'revlogv2',
                b'changelogv2', b'exp-sparse', b'', b'revlogv1,revlogv1')
KINDS = (b's', b'c', b'x', b'\0', b'S')
COMPRESSION = (b'\0', b'u', b'x', b'(', b'\x78', b'\xff', b'z')


def mutated(rng, data, pool):
    try:
        stream = streamfmt.read_stream(data)
    except (FormatError, ValueError, IndexError):
        return rng.choice(mutate.BYTE_MUTATORS)(rng, data)
    choice = rng.random()
    if choice < 0.1:
        return rng.choice(mutate.BYTE_MUTATORS)(rng, data)
    if choice < 0.25:
        return _framing(rng, stream)
    if choice < 0.45:
        _files(rng, stream, pool)
    else:
        _revlog(rng, stream)
    if rng.random() < 0.2:
        stream.kind = 'stream2' if stream.kind == 'packed1' else 'packed1'
        stream.bundle = None
    return stream.encode()


def _near(rng, rev, count):
    """A value worth putting in a revision number or length field."""
    return rng.choice((-1, -2, 0, rev, rev - 1, rev + 1, count, count + 1,
                       rng.choice(INTERESTING_32), rng.randrange(64)))


def _framing(rng, stream):
    files, size = stream.counts()
    what = rng.randrange(4)
    if what == 0 and stream.entries:
        i = rng.randrange(len(stream.entries))
        e = stream.entries[i]
        sizes = [len(e.name), len(e.data)]
        which = rng.randrange(2)
        sizes[which] = max(0, rng.choice((
            sizes[which] + 1, sizes[which] - 1, 0, 1 << 16, 1 << 40,
            sizes[which] * 2)))
        return stream.encode(sizes={i: tuple(sizes)})
    if what == 1:
        counts = [files, size]
        which = rng.randrange(2)
        counts[which] = max(0, rng.choice((
            counts[which] + 1, counts[which] - 1, 0, 1 << 40)))
        return stream.encode(counts=tuple(counts))
    if what == 2:
        reqs = stream.requirements.split(b',')
        if reqs and rng.random() < 0.5:
            reqs.pop(rng.randrange(len(reqs)))
        reqs.append(rng.choice(REQUIREMENTS))
        stream.requirements = b','.join(reqs)
    elif stream.entries:
        rng.choice(stream.entries).kind = rng.choice(KINDS)
    return stream.encode()


def _files(rng, stream, pool):
    entries = stream.entries
    if not entries:
        entries.append(streamfmt.Entry(b's', rng.choice(HOSTILE_NAMES), b''))
        return
    i = rng.randrange(len(entries))
    what = rng.randrange(6)
    if what == 0:
        entries[i].name = rng.choice(HOSTILE_NAMES)
    elif what == 1:
        del entries[i]
    elif what == 2:
        entries.insert(rng.randrange(len(entries) + 1),
                       streamfmt.Entry(b's', entries[i].name,
                                       entries[i].data))
    elif what == 3:
        j = rng.randrange(len(entries))
        entries[i], entries[j] = entries[j], entries[i]
    elif what == 4:
        data = entries[i].data
        entries[i].data = data[:rng.randrange(len(data) + 1)]
    else:
        other = rng.choice(entries)
        entries[i].data = other.data


def _revlog(rng, stream):
    indexes = [e for e in stream.entries if e.name.endswith(b'.i')]
    if not indexes:
        return
    entry = rng.choice(indexes)
    revlog = streamfmt.Revlog(entry.data)
    if not revlog.entries:
        return
    count = len(revlog.entries)
    rev = rng.randrange(count)
    what = rng.random()
    if what < 0.6:
        field = rng.choice(streamfmt.FIELDS)
        if field == 'node':
            value = bytes(rng.randrange(256) for _ in range(20))
        elif field == 'flags':
            value = rng.choice((1 << rng.randrange(16), 0xffff))
        elif field == 'offset':
            value = rng.choice((0, rev, len(entry.data), 1 << 40,
                                rng.randrange(max(len(entry.data), 1))))
        else:
            value = _near(rng, rev, count)
        entry.data = revlog.with_field(rev, field, value)
    elif what < 0.7:
        header = rng.choice((0, 1, 2, 0x10001, 0x20001, 0x30001, 0x70001,
                             0xffff0001, 0x10002))
        entry.data = header.to_bytes(4, 'big') + entry.data[4:]
    else:
        _chunk(rng, stream, entry, revlog, rev)


def _chunk(rng, stream, entry, revlog, rev):
    """Change a chunk's first byte or a bit of it."""
    if revlog.inline:
        data, (start, length) = entry.data, revlog.chunks[rev]
    else:
        data_name = entry.name[:-2] + b'.d'
        holders = [e for e in stream.entries if e.name == data_name]
        if not holders:
            return
        entry = holders[0]
        data, start = entry.data, revlog.entries[rev][1][0]
        length = max(revlog.entries[rev][1][2], 0)
    length = min(length, len(data) - start)
    if length <= 0:
        return
    at = start if rng.random() < 0.5 else start + rng.randrange(length)
    byte = bytearray(data)
    if at == start:
        byte[at] = rng.choice(COMPRESSION)[0]
    else:
        byte[at] ^= 1 << rng.randrange(8)
    entry.data = bytes(byte)


# Crafted changelogs (streamfmt.changelog_stream): chain shapes, each
# revision's delta base a function of its number (itself: a full text).
def _against(k):
    return lambda rng, rev: rev if rev < k else rev - k


CHAIN_SHAPES = {
    'against r-1': _against(1),
    'against r-2': _against(2),
    'against r-k': lambda rng, rev: rev - rng.randrange(1, rev + 1)
    if rev else 0,
    '300 chains interleaved': _against(300),
    'all against the first': lambda rng, rev: 0,
    'against half its number': lambda rng, rev: rev // 2,
    'a full text every 1000': lambda rng, rev: rev if rev % 1000 == 0
    else rev - 1,
    'r-1 with far bases': lambda rng, rev: rev if not rev else
    rng.randrange(rev) if rng.random() < 0.05 else rev - 1,
}
CHAIN_COUNTS = (100, 2000, 8000)
# Stated lengths and chunks of one revision, made hostile: each a
# function of (rng, the revision's true length) giving (stated length or
# None, chunk or None).
_OVER = (1 << 31) + 256


def _off_by_one(rng, length):
    return length + rng.choice((-1, 1)), None


def _past_a_chunk(rng, length):
    return rng.choice((_OVER, 0xffffffff, (1 << 31) - 120)), None


def _zstd_past_its_length(rng, length):
    size = rng.choice((length + 1, 1 << 24))
    return None, streamfmt.rle_zstd_frame(size, rng.choice((None, length)))


def _zstd_stating_2gb(rng, length):
    return _OVER, streamfmt.rle_zstd_frame(_OVER, _OVER)


def _zlib_of_16mb(rng, length):
    return None, zlib.compress(b'\0' * (1 << 24), 9)


CHAIN_DAMAGES = (_off_by_one, _past_a_chunk, _zstd_past_its_length,
                 _zstd_stating_2gb, _zlib_of_16mb)


def chain_stream(rng, name=None, count=None):
    """(a stream bundle of a crafted changelog, what it is): a chain
    shape of CHAIN_SHAPES (`name`, else one at random) of `count`
    changesets (else one of CHAIN_COUNTS), when either is random half
    the time with one of CHAIN_DAMAGES."""
    damaged = name is None or count is None
    name = name or rng.choice(sorted(CHAIN_SHAPES))
    count = count or rng.choice(CHAIN_COUNTS)
    shape = CHAIN_SHAPES[name]
    bases = [shape(rng, rev) for rev in range(count)]
    what = '%s, %d changesets' % (name, count)
    chunks, text_lens = {}, {}
    if damaged and rng.random() < 0.5:
        damage = rng.choice(CHAIN_DAMAGES)
        rev = rng.randrange(count)
        length = len(streamfmt.changeset_texts(rev + 1)[rev][1])
        stated, chunk = damage(rng, length)
        if stated is not None:
            text_lens[rev] = stated
        if chunk is not None:
            chunks[rev] = chunk
        what += ', %s at %d' % (damage.__name__.strip('_'), rev)
    return streamfmt.changelog_stream(count, bases.__getitem__,
                                      chunks=chunks,
                                      text_lens=text_lens), what
