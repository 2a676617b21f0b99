"""The helper's C parsers, each on its own, below the protocol: the
helper's `test-tool <parser>` hook (helper/PROTOCOL.md, Test hooks) runs
one of them on the bytes of a block stream and answers its result or the
error it dies with.

Each parser has a table of (input bytes, expected result or expected
error), made by hand from the formats (`hg help internals.changegroups`,
`hg help internals.revlogs`, Mercurial's manifest and mpatch, and
PROTOCOL.md's Framing for command words), not from running the helper:

- hg deltas (hg-delta.c) and block texts (block-text.c): the expected
  text is also what the delta gives applied by the format in a few lines
  here, and what Mercurial's own mdiff.patch gives; bases of several
  blocks for block texts, hunks across their edges.  Truncated hunks,
  lengths past the end, hunks out of order, overlapping or past the base,
  huge lengths are errors.
- changegroup chunks (changegroup.c's read_cg_chunk) and the cg01, cg02
  and cg03 revision headers, delta bases included (cg01's: the chunk
  before, or p1 for the first); bundle1 and bundle2 containers
  (bundle.c: compressions, stream parameters, parts and their
  parameters, payload chunks, server errors).
- revlog entries and texts (revlog.c): inline and not, generaldelta and
  not, stored, `u` and zlib chunks, and every kind of bad entry.
- manifest lines (manifest.c) and command words (words.c).

Malformed input gives `error ...` and exit status 128, never a crash.
"""

import bz2
import hashlib
import struct
import zlib

import pytest

from lib.bundlefmt import END, Part, chunk
from lib.env import ROOT
from lib.proc import run

HELPER = ROOT / 'git-cinnabar-helper'


def blocks(data):
    out = b''
    for i in range(0, len(data), 65536):
        piece = data[i:i + 65536]
        out += b'%d\n' % len(piece) + piece
    return out + b'0\n'


def run_tool(tmp_path, parser, data, *args):
    """The parse result (bytes), or the error message (str)."""
    line = ' '.join(('test-tool', parser) + args).encode()
    result = run([HELPER], cwd=tmp_path, input=line + b'\n' + blocks(data),
                 check=False)
    out = result.stdout
    if out.startswith(b'error '):
        assert result.returncode == 128, result.describe()
        assert out.count(b'\n') == 1, result.describe()
        assert b'BUG' not in out, result.describe()
        return out[len(b'error '):].decode().rstrip('\n')
    assert result.returncode == 0, result.describe()
    assert out.startswith(b'ok\n'), result.describe()
    pos, text = 3, b''
    while True:
        eol = out.index(b'\n', pos)
        n = int(out[pos:eol])
        if not n:
            break
        text += out[eol + 1:eol + 1 + n]
        pos = eol + 1 + n
    assert out[eol + 1:] == b'', result.describe()
    return text


class Error(str):
    """An expected error: a part of the message."""


def check(got, expected):
    if isinstance(expected, Error):
        assert isinstance(got, str), got
        assert expected in got
    else:
        assert got == expected


# --- Mercurial deltas -------------------------------------------------------

def hunk(start, end, data, length=None):
    """A delta hunk: start and end in the base, the bytes replacing them
    (`length` states another length than theirs)."""
    return struct.pack('>lll', start, end,
                       len(data) if length is None else length) + data


def hunk_u(start, end, length):
    return struct.pack('>LLL', start, end, length)


def patch_by_format(base, delta):
    """`delta` applied to `base` as the format says, or None: hunks of 12
    bytes of big-endian start, end and length then the data, in order of
    start, each after the one before and inside the base."""
    out, last, pos = [], 0, 0
    while pos < len(delta):
        if len(delta) - pos < 12:
            return None
        start, end, length = struct.unpack('>LLL', delta[pos:pos + 12])
        pos += 12
        data = delta[pos:pos + length]
        pos += length
        if len(data) < length or start < last or end < start or \
                end > len(base):
            return None
        out += [base[last:start], data]
        last = end
    return b''.join(out + [base[last:]])


def mercurial_patch(base, delta):
    from mercurial import mdiff
    try:
        return bytes(mdiff.patch(base, delta))
    except Exception:
        return None


BAD_DELTA = Error('malformed delta')

DELTAS = [
    ('empty delta', b'hello', b'', b'hello'),
    ('insert at start', b'hello', hunk(0, 0, b'>> '), b'>> hello'),
    ('append', b'hello', hunk(5, 5, b'!'), b'hello!'),
    ('replace middle', b'hello', hunk(1, 4, b'ipp'), b'hippo'),
    ('delete', b'hello world', hunk(5, 11, b''), b'hello'),
    ('two hunks', b'abcdefgh', hunk(1, 2, b'B') + hunk(5, 7, b'FG!'),
     b'aBcdeFG!h'),
    ('adjacent hunks', b'abcdef', hunk(1, 3, b'X') + hunk(3, 4, b'Y'),
     b'aXYef'),
    ('empty hunk', b'abc', hunk(1, 1, b''), b'abc'),
    ('whole replaced', b'abc', hunk(0, 3, b'xyz\n'), b'xyz\n'),
    ('empty base', b'', hunk(0, 0, b'new\n'), b'new\n'),
    ('to empty', b'gone\n', hunk(0, 5, b''), b''),
    ('truncated header', b'abc', hunk(0, 1, b'x')[:11], BAD_DELTA),
    ('trailing bytes', b'abc', hunk(0, 1, b'x') + b'\0\0', BAD_DELTA),
    ('data past the end', b'abc', hunk(0, 1, b'xy', 3), BAD_DELTA),
    ('end before start', b'abcdef', hunk(3, 2, b''), BAD_DELTA),
    ('overlapping hunks', b'abcdef', hunk(0, 3, b'x') + hunk(2, 4, b'y'),
     BAD_DELTA),
    ('hunks out of order', b'abcdef', hunk(4, 5, b'x') + hunk(1, 2, b'y'),
     BAD_DELTA),
    ('end past the base', b'abc', hunk(1, 4, b'x'), BAD_DELTA),
    ('start past the base', b'abc', hunk(4, 4, b'x'), BAD_DELTA),
    ('huge length', b'abc', hunk_u(0, 1, 0xffffffff) + b'x', BAD_DELTA),
    ('huge end', b'abc', hunk_u(0, 0xffffffff, 0), BAD_DELTA),
    ('huge start', b'abc', hunk_u(0xffffffff, 0xffffffff, 0), BAD_DELTA),
    ('huge start past a good hunk', b'abc',
     hunk(0, 1, b'x') + hunk_u(0xfffffff0, 0xfffffff0, 0), BAD_DELTA),
]


def base_of_blocks(n):
    """n bytes, no two 16-byte pieces alike."""
    return b''.join(b'%015d\n' % i for i in range(n // 16 + 1))[:n]


# Bases of several 16 kB blocks (helper/block-text.h), hunks across the
# blocks' edges: the expected texts are the format's (patch_by_format).
BIG = base_of_blocks(5 * 16384 + 100)
BIG_DELTAS = [
    ('big, unchanged', BIG, b''),
    ('big, across an edge', BIG, hunk(16380, 16390, b'EDGE')),
    ('big, many hunks', BIG,
     hunk(0, 1, b'S') + hunk(16384, 16384, b'I' * 40000) +
     hunk(20000, 50000, b'') + hunk(65536, len(BIG), b'E')),
    ('big, all deleted', BIG, hunk(0, len(BIG), b'')),
    ('big, from nothing', b'', hunk(0, 0, BIG)),
    ('big, past the base', BIG, hunk(16384, len(BIG) + 1, b'x')),
    ('big, overlapping', BIG,
     hunk(16000, 17000, b'x') + hunk(16999, 17001, b'y')),
]


@pytest.mark.parametrize('name,base,delta,expected', DELTAS,
                         ids=[d[0] for d in DELTAS])
def test_table_agrees_with_the_format(name, base, delta, expected):
    """The hand-made table says what the format and Mercurial say."""
    want = None if isinstance(expected, Error) else expected
    assert patch_by_format(base, delta) == want
    assert mercurial_patch(base, delta) == want


@pytest.mark.parametrize('parser', ['hg-delta', 'block-text'])
@pytest.mark.parametrize('name,base,delta,expected', DELTAS,
                         ids=[d[0] for d in DELTAS])
def test_delta(parser, name, base, delta, expected, tmp_path):
    got = run_tool(tmp_path, parser, base + delta, str(len(base)))
    check(got, expected)


@pytest.mark.parametrize('parser', ['hg-delta', 'block-text'])
@pytest.mark.parametrize('name,base,delta', BIG_DELTAS,
                         ids=[d[0] for d in BIG_DELTAS])
def test_delta_on_blocks(parser, name, base, delta, tmp_path):
    want = patch_by_format(base, delta)
    assert mercurial_patch(base, delta) == want
    got = run_tool(tmp_path, parser, base + delta, str(len(base)))
    check(got, BAD_DELTA if want is None else want)


def test_delta_base_longer_than_the_input(tmp_path):
    check(run_tool(tmp_path, 'hg-delta', b'abc', '4'), Error('bad length'))


# --- changegroup chunks -----------------------------------------------------

BAD_LENGTH = Error('invalid changegroup chunk length')
EARLY_END = Error('unexpected end of data')

CHUNKS = [
    ('only the end', END, b'rest 0\n'),
    ('one chunk', chunk(b'abc') + END, b'616263\nrest 0\n'),
    ('two chunks, bytes after', chunk(b'a') + chunk(b'\0\n') + END + b'xy',
     b'61\n000a\nrest 2\n'),
    ('no end chunk', chunk(b'abc'), EARLY_END),
    ('truncated length', b'\0\0', EARLY_END),
    ('truncated payload', struct.pack('>l', 10) + b'abc', EARLY_END),
    ('length 1', struct.pack('>l', 1) + END, BAD_LENGTH),
    ('length 3', struct.pack('>l', 3) + END, BAD_LENGTH),
    # Only the end chunk is empty: a length of 4 (no payload) is refused.
    ('length 4', struct.pack('>l', 4) + END, BAD_LENGTH),
    # Mercurial's lengths are signed 32-bit integers: from 2**31 they
    # are negative, and refused.
    ('length 2**31', struct.pack('>L', 1 << 31) + END, BAD_LENGTH),
    ('length 2**32 - 1', struct.pack('>L', 0xffffffff) + END, BAD_LENGTH),
    # The largest length there is, with 3 bytes of payload: refused for
    # the missing bytes, not for memory.
    ('length 2**31 - 1, cut', struct.pack('>l', 2**31 - 1) + b'abc',
     EARLY_END),
]


@pytest.mark.parametrize('name,data,expected', CHUNKS,
                         ids=[c[0] for c in CHUNKS])
def test_cg_chunks(name, data, expected, tmp_path):
    check(run_tool(tmp_path, 'cg-chunks', data), expected)


def node(c):
    return bytes([c]) * 20


def hexnode(c):
    return node(c).hex()


NULL = '0' * 40
DELTA1 = hunk(0, 0, b'text\n')
DELTA2 = hunk(0, 5, b'next\n')


def rev_line(n, p1, p2, base, cs, delta):
    return ' '.join([hexnode(n), p1, p2, base, hexnode(cs),
                     delta.hex() or '-']).encode() + b'\n'


CG_REVS = [
    # cg01: node, p1, p2, linknode; the delta base is the chunk before,
    # the first one's p1.
    ('01', 'cg01 deltas against the previous chunk',
     chunk(node(1) + node(0) * 2 + node(9) + DELTA1) +
     chunk(node(2) + node(1) + node(0) + node(8) + DELTA2) + END,
     rev_line(1, NULL, NULL, NULL, 9, DELTA1) +
     rev_line(2, hexnode(1), NULL, hexnode(1), 8, DELTA2) + b'rest 0\n'),
    ('01', 'cg01 first chunk against its p1',
     chunk(node(3) + node(7) + node(6) + node(9) + DELTA1) + END,
     rev_line(3, hexnode(7), hexnode(6), hexnode(7), 9, DELTA1) +
     b'rest 0\n'),
    ('01', 'cg01 empty delta',
     chunk(node(3) + node(7) + node(0) + node(9)) + END,
     rev_line(3, hexnode(7), NULL, hexnode(7), 9, b'') + b'rest 0\n'),
    # cg02: node, p1, p2, delta base, linknode.
    ('02', 'cg02 explicit delta bases',
     chunk(node(1) + node(0) * 3 + node(9) + DELTA1) +
     chunk(node(2) + node(1) + node(0) + node(5) + node(8) + DELTA2) + END,
     rev_line(1, NULL, NULL, NULL, 9, DELTA1) +
     rev_line(2, hexnode(1), NULL, hexnode(5), 8, DELTA2) + b'rest 0\n'),
    # cg03: node, p1, p2, delta base, linknode, 16-bit flags.
    ('03', 'cg03 without flags',
     chunk(node(1) + node(2) + node(3) + node(4) + node(5) + b'\0\0' +
           DELTA1) + END,
     rev_line(1, hexnode(2), hexnode(3), hexnode(4), 5, DELTA1) +
     b'rest 0\n'),
    ('03', 'cg03 with flags',
     chunk(node(1) + node(2) + node(3) + node(4) + node(5) + b'\x80\0') + END,
     Error('has flags 0x8000')),
    ('01', 'cg01 header short by a byte', chunk((node(1) * 4)[:79]) + END,
     Error('too short')),
    ('02', 'cg02 header short by a byte', chunk((node(1) * 5)[:99]) + END,
     Error('too short')),
    ('03', 'cg03 header short by a byte', chunk((node(1) * 5)[:100] + b'\0') +
     END, Error('too short')),
    ('02', 'cg02 truncated chunk', chunk(node(1) * 5 + DELTA1)[:-3],
     EARLY_END),
    ('02', 'cg02 no end chunk', chunk(node(1) * 5 + DELTA1), EARLY_END),
    ('02', 'cg02 negative length', struct.pack('>l', -100) + node(1) * 5,
     BAD_LENGTH),
]


@pytest.mark.parametrize('version,name,data,expected', CG_REVS,
                         ids=[c[1] for c in CG_REVS])
def test_cg_revs(version, name, data, expected, tmp_path):
    check(run_tool(tmp_path, 'cg-revs', data, version), expected)


def test_cg_revs_unknown_version(tmp_path):
    check(run_tool(tmp_path, 'cg-revs', END, '04'),
          Error('needs a changegroup version'))


# --- bundles (`hg help internals.bundle2`) ----------------------------------

CG = chunk(node(1) * 4 + DELTA1) + END + END + END


def part(kind, mandatory=(), advisory=(), chunks=(CG,), part_id=0):
    """A bundle2 part, as bytes (tests cut and splice them)."""
    return Part(kind, mandatory, advisory, part_id=part_id,
                chunks=list(chunks)).encode()


def bundle2(*parts, params=b'', compress=None):
    body = b''.join(parts) + END
    return (b'HG20' + struct.pack('>L', len(params)) + params +
            (compress(body) if compress else body))


def cg_line(version, data):
    return b'%d %s\n' % (version, data.hex().encode() or b'-')


CG_PART = part(b'changegroup', [(b'version', b'02')], chunks=(CG[:7], CG[7:]))
BUNDLES = [
    ('bundle1 uncompressed', b'HG10UN' + CG, cg_line(1, CG)),
    ('bundle1 zlib', b'HG10GZ' + zlib.compress(CG), cg_line(1, CG)),
    # HG10BZ: the bzip2 stream without its "BZ" magic.
    ('bundle1 bzip2', b'HG10BZ' + bz2.compress(CG)[2:], cg_line(1, CG)),
    ('bare changegroup', CG, cg_line(1, CG)),
    ('bundle2, version 02 in two chunks', bundle2(CG_PART), cg_line(2, CG)),
    ('bundle2, no version: 01', bundle2(part(b'changegroup')),
     cg_line(1, CG)),
    ('bundle2, version 03, an advisory parameter',
     bundle2(part(b'CHANGEGROUP', [(b'version', b'03')],
                  [(b'nbchanges', b'1')])), cg_line(3, CG)),
    ('bundle2, advisory parts skipped',
     bundle2(part(b'output', chunks=(b'remote: hi\n',)), CG_PART,
             part(b'phase-heads', chunks=(b'\0' * 24,), part_id=2)),
     cg_line(2, CG)),
    ('bundle2, two changegroups', bundle2(CG_PART, part(b'changegroup')),
     cg_line(2, CG) + cg_line(1, CG)),
    ('bundle2, no part', bundle2(), b''),
    ('bundle2, zlib', bundle2(CG_PART, params=b'Compression=GZ',
                              compress=zlib.compress), cg_line(2, CG)),
    ('bundle2, advisory stream parameter',
     bundle2(CG_PART, params=b'somehint=1'), cg_line(2, CG)),
    ('too short', b'HG2', Error('not a Mercurial bundle (too short)')),
    ('unknown magic', b'HG30' + CG, Error('unknown header')),
    ('bundle1 unknown compression', b'HG10XZ' + CG,
     Error('unsupported bundle compression')),
    ('bundle2 unknown compression',
     bundle2(CG_PART, params=b'Compression=XZ'),
     Error('unsupported bundle compression')),
    ('mandatory stream parameter',
     bundle2(CG_PART, params=b'Unknown=1'),
     Error('unsupported mandatory bundle parameter')),
    ('stream parameters past the end', b'HG20' + struct.pack('>L', 100),
     EARLY_END),
    ('huge stream parameters', b'HG20' + struct.pack('>L', 0xffffffff),
     Error('invalid bundle2 stream parameters')),
    ('mandatory unknown part', bundle2(part(b'Frobnicate'), CG_PART),
     Error("unsupported mandatory bundle2 part 'Frobnicate'")),
    ('changegroup version 04',
     bundle2(part(b'changegroup', [(b'version', b'04')])),
     Error("unsupported changegroup version '04'")),
    ('server abort', bundle2(part(b'error:abort', [(b'message', b'no way')],
                                  chunks=())),
     Error('the server aborted: no way')),
    ('out-of-band payload',
     bundle2(part(b'changegroup')[:-len(CG) - 8] + struct.pack('>l', -1)),
     Error('out-of-band')),
    ('part header past its length',
     bundle2(struct.pack('>l', 5) + part(b'changegroup')[4:9]),
     Error('invalid bundle2 part header')),
    ('part cut in its payload', bundle2(CG_PART)[:-12],
     Error('truncated')),
    ('no end of parts', bundle2(CG_PART)[:-4], EARLY_END),
    ('data after the end', bundle2(CG_PART) + b'x',
     Error('unexpected data after the end of the bundle')),
]


@pytest.mark.parametrize('name,data,expected', BUNDLES,
                         ids=[b[0] for b in BUNDLES])
def test_bundle(name, data, expected, tmp_path):
    check(run_tool(tmp_path, 'bundle', data), expected)


# --- revlogs ----------------------------------------------------------------

INLINE, GENERALDELTA = 1 << 16, 1 << 17


def hgnode(text, p1=b'\0' * 20, p2=b'\0' * 20):
    return hashlib.sha1(min(p1, p2) + max(p1, p2) + text).digest()


def entry(offset, chunk_len, text_len, base, link, p1, p2, nodeid):
    """An index entry of 64 bytes, as `hg help internals.revlogs` says
    (no flags)."""
    return struct.pack('>6sHLLllll20s12x', offset.to_bytes(6, 'big'), 0,
                       chunk_len, text_len, base, link, p1, p2, nodeid)


def with_header(index, header):
    """The first entry's first 4 bytes are the revlog header."""
    return struct.pack('>L', header) + index[4:]


def revlog(revs, header=1 | INLINE):
    """(index, data) of revisions given as (chunk, text length, base,
    link, p1, p2, node); inline, each entry is followed by its chunk."""
    inline = header & INLINE
    index, data, offset = b'', b'', 0
    for stored, text_len, base, link, p1, p2, nodeid in revs:
        e = entry(offset, len(stored), text_len, base, link, p1, p2, nodeid)
        index += e + stored if inline else e
        data += b'' if inline else stored
        offset += len(stored)
    if index:
        index = with_header(index, header)
    return index, data


T0 = b'first line\nsecond line\n'
T1 = b'first line\nchanged line\n'
T2 = b'third text\n'
N0 = hgnode(T0)
N1 = hgnode(T1, N0)
N2 = hgnode(T2, N1)
D01 = hunk(11, 23, b'changed line\n')


def rl_line(rev, base, link, p1, p2, nodeid, text):
    return b'%d %d %d %d %d %s %d %s\n' % (
        rev, base, link, p1, p2, nodeid.hex().encode(), len(text),
        text.hex().encode() or b'-')


GOOD_REVS = [(b'u' + T0, len(T0), 0, 0, -1, -1, N0),
             (zlib.compress(D01), len(T1), 0, 1, 0, -1, N1)]
GOOD_RESULT = (rl_line(0, 0, 0, -1, -1, N0, T0) +
               rl_line(1, 0, 1, 0, -1, N1, T1))


def bad_rev(**changes):
    """GOOD_REVS with its second revision's fields changed."""
    fields = ['chunk', 'text_len', 'base', 'link', 'p1', 'p2', 'node']
    second = dict(zip(fields, GOOD_REVS[1]))
    second.update(changes)
    return revlog([GOOD_REVS[0], tuple(second[f] for f in fields)])


ONE = revlog([GOOD_REVS[0]])[0]
REVLOGS = [
    ('empty', (b'', b''), b''),
    ('inline, u and zlib chunks', revlog(GOOD_REVS), GOOD_RESULT),
    ('separate data file', revlog(GOOD_REVS, header=1), GOOD_RESULT),
    ('stored with a NUL', revlog([(b'\0bin\n', 5, 0, 0, -1, -1, N0)]),
     rl_line(0, 0, 0, -1, -1, N0, b'\0bin\n')),
    ('empty text', revlog([(b'', 0, 0, 0, -1, -1, hgnode(b''))]),
     rl_line(0, 0, 0, -1, -1, hgnode(b''), b'')),
    # Without generaldelta a chunk is a delta against the revision before
    # it (the base being where its chain starts); with generaldelta
    # against its base.
    ('chain without generaldelta',
     revlog(GOOD_REVS + [(b'u' + hunk(0, len(T1), T2), len(T2), 0, 2, 1,
                          -1, N2)]),
     GOOD_RESULT + rl_line(2, 0, 2, 1, -1, N2, T2)),
    ('generaldelta against rev 0',
     revlog(GOOD_REVS + [(b'u' + hunk(0, len(T0), T2), len(T2), 0, 2, 1,
                          -1, N2)], header=1 | INLINE | GENERALDELTA),
     GOOD_RESULT + rl_line(2, 0, 2, 1, -1, N2, T2)),
    ('version 0', revlog(GOOD_REVS, header=0 | INLINE), Error('version 0')),
    ('version 2', revlog(GOOD_REVS, header=2 | INLINE), Error('version 2')),
    ('unknown feature', revlog(GOOD_REVS, header=1 | INLINE | 1 << 18),
     Error('features')),
    ('index not whole entries',
     (revlog(GOOD_REVS, header=1)[0][:-1], revlog(GOOD_REVS, header=1)[1]),
     Error('not a whole number of entries')),
    ('inline, truncated entry', (revlog(GOOD_REVS)[0][:-len(
        GOOD_REVS[1][0]) - 10], b''), Error('middle of an entry')),
    ('inline, truncated chunk', (revlog(GOOD_REVS)[0][:-3], b''),
     Error('past the end')),
    ('data file short', (revlog(GOOD_REVS, header=1)[0],
                         revlog(GOOD_REVS, header=1)[1][:-1]),
     Error('past the end')),
    ('data file too long', (revlog(GOOD_REVS, header=1)[0],
                            revlog(GOOD_REVS, header=1)[1] + b'x'),
     Error('does not end where its index')),
    ('entry flags', (ONE[:6] + b'\x80\0' + ONE[8:], b''),
     Error('has flags 0x8000')),
    ('base past the revision', bad_rev(base=2), Error('delta base past it')),
    ('parent past the revision', bad_rev(p2=1), Error('parent past it')),
    ('no changeset', bad_rev(link=-1), Error('no changeset')),
    ('text length not the delta\'s', bad_rev(text_len=len(T1) + 1),
     Error('stated length')),
    ('zlib past the text length',
     revlog([(zlib.compress(T0 + b'x' * 1000), len(T0), 0, 0, -1, -1, N0)]),
     Error('stated length')),
    ('bad zlib', bad_rev(chunk=b'x\x9c\xff\xff'), Error('not valid')),
    ('unknown compression', bad_rev(chunk=b'q' + D01),
     Error('compression')),
    ('delta hunk past its base',
     bad_rev(chunk=b'u' + hunk(0, len(T0) + 1, T1)),
     Error('not valid delta')),
    ('huge text length', bad_rev(text_len=0xffffffff),
     Error('more than a changegroup can carry')),
]


@pytest.mark.parametrize('name,files,expected', REVLOGS,
                         ids=[r[0] for r in REVLOGS])
def test_revlog(name, files, expected, tmp_path):
    index, data = files
    check(run_tool(tmp_path, 'revlog', index + data, str(len(index))),
          expected)


# --- manifest lines ---------------------------------------------------------

H1, H2 = 'a1' * 20, '0f' * 20
BAD_LINE = Error('malformed manifest line')

MANIFESTS = [
    ('empty', b'', b''),
    ('one line', b'README\0' + H1.encode() + b'\n',
     f'{H1} - README\n'.encode()),
    ('flags', b'bin/run\0' + H1.encode() + b'x\nlink\0' + H2.encode() +
     b'l\n', f'{H1} x bin/run\n{H2} l link\n'.encode()),
    ('path with spaces and bytes', b'a b/\xe9t\xe9\0' + H2.encode() + b'\n',
     f'{H2} - a b/'.encode() + b'\xe9t\xe9\n'),
    ('no NUL', b'README ' + H1.encode() + b'\n', BAD_LINE),
    ('empty path', b'\0' + H1.encode() + b'\n', BAD_LINE),
    ('short id', b'a\0' + H1[:39].encode() + b'\n', BAD_LINE),
    ('long id', b'a\0' + H1.encode() + b'0\n', BAD_LINE),
    ('not hex', b'a\0' + b'g' * 40 + b'\n', BAD_LINE),
    ('unknown flag', b'a\0' + H1.encode() + b't\n', BAD_LINE),
    ('no final line break', b'a\0' + H1.encode(), BAD_LINE),
    ('flag without line break', b'a\0' + H1.encode() + b'x', BAD_LINE),
    ('line break in a path', b'a\nb\0' + H1.encode() + b'\n', BAD_LINE),
    ('second line bad', b'a\0' + H1.encode() + b'\nb\0' + b'0' * 20 + b'\n',
     BAD_LINE),
]


@pytest.mark.parametrize('name,text,expected', MANIFESTS,
                         ids=[m[0] for m in MANIFESTS])
def test_manifest(name, text, expected, tmp_path):
    check(run_tool(tmp_path, 'manifest', text), expected)


# --- command words (PROTOCOL.md, Framing) -----------------------------------

BAD_QUOTE = Error('badly quoted word')
WORDS = [
    ('one word', b'version', [b'version']),
    ('plain words', b'import bundle x.hg', [b'import', b'bundle', b'x.hg']),
    ('quoted space', b'a "b c" d', [b'a', b'b c', b'd']),
    ('escapes', b'"\\\\ \\" \\a\\b\\f\\n\\r\\t\\v"',
     [b'\\ " \a\b\f\n\r\t\v']),
    ('octal', b'"\\101\\351\\012"', [b'A\xe9\n']),
    ('empty quoted word', b'a ""', [b'a', b'']),
    ('quote inside a plain word', b'a"b', [b'a"b']),
    ('seven words', b'1 2 3 4 5 6 7', [b'%d' % i for i in range(1, 8)]),
    ('no closing quote', b'a "b', BAD_QUOTE),
    ('unknown escape', b'"\\q"', BAD_QUOTE),
    ('two octal digits', b'"\\12"', BAD_QUOTE),
    ('text after the quote', b'"a"b', Error('followed by more than a space')),
    ('two spaces', b'a  b', Error('empty word')),
    ('trailing space', b'a ', Error('empty word')),
    ('leading space', b' a', Error('empty word')),
    ('empty line', b'', Error('empty word')),
    ('NUL byte', b'a\0b', Error('NUL byte')),
    ('quoted NUL', b'"a\\000b"', Error('NUL byte')),
    ('eight words', b'1 2 3 4 5 6 7 8', Error('more than 7 words')),
]


@pytest.mark.parametrize('name,line,expected', WORDS,
                         ids=[w[0] for w in WORDS])
def test_words(name, line, expected, tmp_path):
    if not isinstance(expected, Error):
        expected = b''.join(w + b'\0' for w in expected)
    check(run_tool(tmp_path, 'words', line), expected)


def test_unknown_parser(tmp_path):
    check(run_tool(tmp_path, 'no-such-parser', b''), Error('no parser'))
