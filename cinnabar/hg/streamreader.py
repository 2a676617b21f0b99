"""Stream clones: a server's revlogs, as they are on its disk.

A server that allows them (`server.uncompressed`, on by default)
advertises `stream=v2` among its bundle2 capabilities and the store
requirements its revlogs need as `streamreqs=<req>,<req>...`;
`stream-preferred` says it would rather send them than a changegroup
(`server.preferuncompressed`). A `getbundle` with `stream=1`, `cg=0` and
our bundle2 capabilities naming `stream=v2` answers a bundle2 whose
`stream2` part holds them. The part's parameters: `requirements`
(comma-separated, URL-quoted in the header), `filecount`, `bytecount`.
Its payload, all integers unsigned LEB128 varints (7 bits a byte, low
bits first, the high bit saying another byte follows):

    for each of filecount files:
        <1 byte: 's' (a store file) or 'c' (a cache file)>
        <varint: length of the name> <varint: length of the data>
        <name: the path in the store, not encoded: data/a/b.txt.i>
        <data>

the lengths of the data adding up to bytecount. A server with
`experimental.stream-v3` also offers `stream=v3-exp`, which we ask for
too (the server takes the highest version both name): its `stream3-exp`
part has only the `requirements` parameter, and groups the same file
records by store entry (a revlog's files), with counts instead of totals:

    <varint: number of entries>
    for each entry:
        <varint: number of files> then that many file records as above

We keep the revlogs
(`00changelog.i`/`.d`, `00manifest.i`/`.d`, `data/<path>.i`/`.d`) and
drop the rest (caches, phaseroots, nodemaps). They are spooled to one
file of a temporary directory, with a table of where each lies
(helper/stream-clone.h), then
the helper reads them as the changegroup they hold (`import revlogs`):
nothing is kept as a Mercurial repository, every id is checked as for a
changegroup.

Anything we do not read is refused before any data is taken: a
requirement not in SUPPORTED_REQUIREMENTS (revlogv2,
changelogv2...) raises Unsupported, for the caller to fall back to a
changegroup clone. A stream that does not add up (sizes, names outside
the store, a revlog without its index) is an Abort.
"""

import hashlib
import os
import shutil

from cinnabar import tmpfiles
from cinnabar.errors import Abort
from cinnabar.hg import bundle2, bundle2parts, wireformat
from cinnabar.hg.percent import unquote

# The store requirements the helper's revlog reader reads (persistent
# nodemaps are caches we drop).
SUPPORTED_REQUIREMENTS = frozenset((
    'revlogv1', 'generaldelta', 'sparserevlog', 'revlog-compression-zstd',
    'store', 'fncache', 'dotencode', 'persistent-nodemap'))
# The bundle2 capabilities of a stream clone request.
STREAM_BUNDLE2_CAPS = wireformat.OUR_BUNDLE2_CAPS + (
    ('stream', ('v2', 'v3-exp')),)
STREAM_PARTS = ('stream2', 'stream3-exp')
COPY_SIZE = 1 << 20
# A name longer than this is not one of a revlog Mercurial could write.
MAX_NAME = 1 << 16
TOP_REVLOGS = {b'00changelog': 'changelog', b'00manifest': 'manifest'}
SPOOL_PREFIX = 'hg-stream-'


class Unsupported(Exception):
    """The server's stream is not one we read; the message says why."""


class StreamError(Abort):
    """A stream that does not add up."""


def offers_v2(peer):
    """Whether the server offers stream v2 clones."""
    caps = peer.capable('bundle2')
    if caps is None or peer.capable('getbundle') is None:
        return False
    return 'v2' in wireformat.decode_bundle2_caps(caps).get('stream', [])


def requirements_problem(requirements):
    """Why we cannot read a store with `requirements` (str), or None."""
    unknown = sorted(set(requirements) - SUPPORTED_REQUIREMENTS)
    if unknown:
        return ('the repository has requirements we do not read in a '
                'stream (%s)' % ', '.join(unknown))
    return None


def parse_requirements(text):
    return [r for r in unquote(text).split(',') if r]


def offers_v1(peer):
    """Whether the server offers legacy (`stream_out`) stream clones."""
    return (peer.capable('stream') is not None
            or peer.capable('streamreqs') is not None)


def server_requirements(peer):
    """The requirements the server advertises (`streamreqs`; `stream`
    alone means revlogv1), or None."""
    value = peer.capable('streamreqs')
    if value is None:
        return ['revlogv1'] if peer.capable('stream') is not None else None
    return parse_requirements(wireformat.to_text(value))


# The spool.

def _check_name(name):
    """Refuse a store name that is not a relative path in the store. The
    rest of a `data/` name is a file's path, whatever it holds (the store
    encodes it on disk): the import checks it as any changegroup's."""
    top = name.split(b'/', 1)[0]
    if (not name or b'\0' in name or name.startswith(b'/')
            or top in (b'', b'.', b'..')):
        raise StreamError('the stream has an entry outside the store: %r'
                          % name)


def classify(name):
    """(key, extension) of a revlog we keep: key 'changelog', 'manifest'
    or ('file', path); None for what we drop. Raises StreamError for a
    name outside the store, Unsupported for tree manifests."""
    _check_name(name)
    stem, ext = name[:-2], name[-2:]
    if ext not in (b'.i', b'.d'):
        return None
    if stem in TOP_REVLOGS:
        return TOP_REVLOGS[stem], ext
    if name.startswith(b'meta/'):
        raise Unsupported('the repository has tree manifests')
    if name.startswith(b'data/') and len(stem) > 5:
        path = stem[5:]
        if b'\n' in path or b'\r' in path:
            raise StreamError('the stream has a file with a newline in its '
                              'path: %r' % path)
        return ('file', path), ext
    return None


class Spool:
    """The revlogs of a stream, written one after the other to one file
    of a temporary directory, with the table of where each lies, as the
    helper reads them (helper/stream-clone.h).

    Memory stays flat with the number of files: a filelog's line is
    written to the table as soon as it is complete (its index, and its
    data unless the index says it has none), and only the filelogs still
    waiting for a file are kept (every Mercurial sends a revlog's files
    together, or nearly: 6.3 sorts the store's file names, so `a.d` and
    `a.i` may have `a.e.i` between them). The changelog's and the
    manifest's lines, whose files come last, go to the two lines the
    table starts with, kept for them. Names already taken are remembered
    by digest only (NameDigests), to refuse a file sent twice."""

    def __init__(self, parent=None):
        if parent is not None and ' ' in os.fsdecode(parent):
            parent = None  # the helper's command line splits at spaces
        if parent is not None:
            # Ours alone (the repository is locked): what a killed run
            # left there goes.
            tmpfiles.remove_stale(parent, SPOOL_PREFIX)
        self.path = tmpfiles.private_dir(parent, SPOOL_PREFIX)
        self._out = None  # the `revlogs` file, opened on the first one
        self._table = None  # the `table` file, likewise
        self._size = 0
        self._top = {}  # 'changelog' or 'manifest' -> {ext: extent}
        self._pending = {}  # path -> {ext: extent}, filelogs not complete
        self._taken = NameDigests()  # names of complete filelogs' files
        # A cinnabar.progress.Meter counting the files received, or None.
        self.meter = None
        self._files = self._received = 0

    def expect(self, files):
        """The stream says it holds `files` files."""
        if self.meter is not None:
            self.meter.total = files

    def add(self, name, size, payload):
        """Keep (or drop) the store file `name` of `size` bytes read from
        `payload`."""
        self._add(name, size, payload)
        self._count(size)

    def skip(self, size, payload):
        """Drop a file of `size` bytes the helper does not read (a
        cache file), counted as received."""
        _copy(payload, size, None)
        self._count(size)

    def _count(self, size):
        self._files += 1
        self._received += size
        if self.meter is not None:
            self.meter.update(self._files, self._received)

    def _add(self, name, size, payload):
        kept = classify(name)
        if kept is None:
            _copy(payload, size, None)
            return
        key, ext = kept
        if name in self._taken:
            raise StreamError('the stream sends %r twice' % name)
        if isinstance(key, str):
            extents = self._top.setdefault(key, {})
        else:
            extents = self._pending.pop(key[1], {})
            if ext == b'.d' and name[:-2] + b'.i' in self._taken:
                # The data of an index that has none (inline or empty),
                # which the helper would not read.
                self._taken.add(name)
                _copy(payload, size, None)
                return
        if ext in extents:
            raise StreamError('the stream sends %r twice' % name)
        if self._out is None:
            self._open()
        extents[ext] = (self._size, size)
        head = _copy(payload, size, self._out)
        self._size += size
        if isinstance(key, tuple):
            self._filelog(name[:-2], key[1], extents,
                          ext == b'.i' and not _has_data(head, size))

    def _open(self):
        self._out = open(os.path.join(self.path, 'revlogs'), 'wb')
        self._table = open(os.path.join(self.path, 'table'), 'wb')
        self._table.write(2 * _top_line({}))

    def _filelog(self, stem, path, extents, index_without_data):
        """Write the filelog's line if it is complete, else keep it."""
        if b'.i' not in extents or (b'.d' not in extents
                                    and not index_without_data):
            self._pending[path] = extents
            return
        self._table.write(_table_line(extents, b' ' + path + b'\n'))
        for ext in extents:
            self._taken.add(stem + ext)

    def finish(self):
        """Write the table; check every revlog has its index. Returns
        whether there is anything to import."""
        waiting = list(self._top.items()) + [
            (('file', path), extents)
            for path, extents in self._pending.items()]
        for key, extents in waiting:
            if b'.i' not in extents:
                raise StreamError('the stream has the data of %s without '
                                  'its index' % _describe(key))
        if self._out is None:
            return False
        self._out.close()
        # An index whose data never came is written as it is (the helper
        # refuses it if it needed any).
        for path, extents in self._pending.items():
            self._table.write(_table_line(extents, b' ' + path + b'\n'))
        self._pending.clear()
        # A missing revlog is an empty one, as for Mercurial (which sends
        # no empty file in a stream v1).
        self._table.seek(0)
        for key in ('changelog', 'manifest'):
            self._table.write(_top_line(self._top.get(key, {})))
        self._table.close()
        return True

    def remove(self):
        for f in (self._out, self._table):
            if f is not None:
                f.close()
        shutil.rmtree(self.path, ignore_errors=True)

    discard = remove


def _table_line(extents, end, width=0):
    index = extents.get(b'.i', (0, 0))
    data = extents.get(b'.d', (0, 0))
    return b' '.join(b'%0*d' % (width, n) for n in index + data) + end


# The changelog's and manifest's lines are written last over the table's
# first two: of one width, in decimal with leading zeros.
TOP_WIDTH = 20


def _top_line(extents):
    return _table_line(extents, b'\n', TOP_WIDTH)


def _has_data(head, size):
    """Whether a revlog index whose first bytes are `head` has a data
    file: not when it is empty or inline (revlog.h)."""
    return size >= 4 and not int.from_bytes(head[:4], 'big') & (1 << 16)


class NameDigests:
    """A set of names kept as 16-byte BLAKE2b digests (names differ when
    their digests do, but for a chance of ~2**-128 a pair), in one open
    addressing table of 16-byte slots (an empty slot is zeros), at most
    7 tenths full: 23 to 46 bytes a name, where a set of bytes holds
    ~100."""

    SLOT = 16
    EMPTY = bytes(SLOT)

    def __init__(self):
        self._slots = bytearray(self.SLOT * 1024)
        self._count = 0

    def _find(self, digest):
        """The offset of `digest`'s slot, or of the empty one it goes to."""
        slots, size = self._slots, self.SLOT
        count = len(slots) // size
        i = int.from_bytes(digest[:8], 'little') % count
        while True:
            slot = slots[i * size:(i + 1) * size]
            if slot == digest or slot == self.EMPTY:
                return i * size
            i = (i + 1) % count

    @classmethod
    def _digest(cls, name):
        digest = hashlib.blake2b(name, digest_size=cls.SLOT).digest()
        return digest if digest != cls.EMPTY else b'\1' + digest[1:]

    def __contains__(self, name):
        digest = self._digest(name)
        at = self._find(digest)
        return self._slots[at:at + self.SLOT] == digest

    def add(self, name):
        self._insert(self._digest(name))

    def _insert(self, digest):
        at = self._find(digest)
        if self._slots[at:at + self.SLOT] == digest:
            return
        self._slots[at:at + self.SLOT] = digest
        self._count += 1
        if self._count * 10 > len(self._slots) // self.SLOT * 7:
            self._grow()

    def _grow(self):
        old, size = self._slots, self.SLOT
        self._slots = bytearray(2 * len(old))
        self._count = 0
        for at in range(0, len(old), size):
            digest = bytes(old[at:at + size])
            if digest != self.EMPTY:
                self._insert(digest)

    def __len__(self):
        return self._count


def _describe(key):
    if isinstance(key, tuple):
        return 'the file %r' % key[1]
    return 'the %s' % key


def _copy(payload, size, out):
    """Copy `size` bytes of `payload` to `out` (None: drop them); returns
    the first (up to 4) bytes."""
    head = b''
    while size:
        data = payload.exactly(min(size, COPY_SIZE))
        if out is not None:
            out.write(data)
        if len(head) < 4:
            head += data[:4 - len(head)]
        size -= len(data)
    return head


# The stream2 part.

def _varint(payload):
    value = shift = 0
    for _ in range(10):
        byte = payload.exactly(1)[0]
        value |= (byte & 0x7f) << shift
        if not byte & 0x80:
            return value
        shift += 7
    raise StreamError('malformed length in the stream')


def _count(params, name):
    value = params.get(name, '')
    count = wireformat.parse_decimal(value)
    if count is None:
        raise StreamError('the stream has no valid %s (%r)'
                          % (name, value[:40]))
    return count


def _check_requirements(params):
    problem = requirements_problem(
        parse_requirements(params.get('requirements', '')))
    if problem:
        raise Unsupported(problem)


def _receive_file(payload, spool, room=None):
    """Spool one file record of a stream2 or stream3-exp part; returns
    the size of its data, refused when over `room`."""
    source = payload.exactly(1)
    name_size, size = _varint(payload), _varint(payload)
    if name_size > MAX_NAME:
        raise StreamError('the stream has a name of %d bytes' % name_size)
    if room is not None and size > room:
        raise StreamError('the stream has more data than it says')
    name = payload.exactly(name_size)
    if source == b's':
        spool.add(name, size, payload)
    elif source == b'c':
        spool.skip(size, payload)
    else:
        raise StreamError('the stream has an entry of unknown kind %r'
                          % source)
    return size


class _StreamReader(bundle2parts.PartReader):
    """A getbundle answer holding a stream: the spool its files go to,
    and the types of the stream parts read."""

    parts = frozenset(STREAM_PARTS + ('error:abort',))

    def __init__(self, spool):
        self.spool = spool
        self.streams = []


@bundle2parts.parthandler('stream2', ('requirements', 'filecount',
                                      'bytecount'))
def _stream2_part(op, params, payload):
    receive_v2(params, payload, op.spool)
    op.streams.append('stream2')


@bundle2parts.parthandler('stream3-exp', ('requirements',))
def _stream3_part(op, params, payload):
    receive_v3(params, payload, op.spool)
    op.streams.append('stream3-exp')


def receive_v2(params, payload, spool):
    """Spool the files of a `stream2` part."""
    _check_requirements(params)
    files, total = _count(params, 'filecount'), _count(params, 'bytecount')
    spool.expect(files)
    received = 0
    for _ in range(files):
        received += _receive_file(payload, spool, total - received)
    if received != total or payload.read(1):
        raise StreamError('the sizes in the stream do not add up (%d files, '
                          '%d bytes said)' % (files, total))


def receive_v3(params, payload, spool):
    """Spool the files of a `stream3-exp` part."""
    _check_requirements(params)
    entries = _varint(payload)
    for _ in range(entries):
        for _ in range(_varint(payload)):
            _receive_file(payload, spool)
    if payload.read(1):
        raise StreamError('the stream has more than its %d entries'
                          % entries)


def receive_bundle(read, spool):
    """Read a getbundle answer holding a stream2 (or stream3-exp) part
    from `read(size)` into `spool`; returns the part's type."""
    op = _StreamReader(spool)
    for part in bundle2.stream_parts(read):
        bundle2parts.process(op, *part)
    if len(op.streams) != 1:
        raise StreamError('the server answered with %d streams instead of one'
                          % len(op.streams))
    return op.streams[0]


# Stream v1: the `stream_out` wire command and `packed1` bundles.
#
# `stream_out` answers a status line (`0`: here it comes, `1`: not
# allowed, `2`: the server could not lock its repository), then
# `<filecount> <bytecount>\n`, then for each file `<name>\0<size>\n` and
# its data. Names are the store's with directories ending in `.i`, `.d`
# or `.hg` escaped by a `.hg` suffix (Mercurial's encodedir), which we
# undo. The requirements are the server's `streamreqs` capability (only
# `revlogv1` when it advertises `stream` alone).
#
# A `packed1` bundle: "HGS1", "UN", <u64 filecount> <u64 bytecount>
# <u16 size> <requirements: comma-separated, NUL-terminated>, then the
# same files.

V1_STATUS = {b'1': 'the server does not allow stream clones',
             b'2': 'the server could not lock its repository'}
MAX_LINE = 1024


def _line(read, what):
    data = []
    while True:
        byte = read(1)
        if not byte:
            raise StreamError('the stream ends in its %s' % what)
        if byte == b'\n':
            return b''.join(data)
        data.append(byte)
        if len(data) > MAX_LINE:
            raise StreamError('the stream has a %s too long' % what)


def _decodedir(name):
    if b'.hg/' not in name:
        return name
    return name.replace(b'.d.hg/', b'.d/').replace(b'.i.hg/', b'.i/').replace(
        b'.hg.hg/', b'.hg/')


class _Exact:
    """`exactly(size)` over `read(size)`."""

    def __init__(self, read):
        self.read = read

    def exactly(self, size):
        data = self.read(size)
        if len(data) != size:
            raise StreamError('the stream ends early')
        return data


def receive_v1_files(read, files, total, spool):
    """Spool `files` stream v1 entries adding up to `total` bytes."""
    reader = _Exact(read)
    spool.expect(files)
    received = 0
    for _ in range(files):
        name, nul, size = _line(read, 'file header').partition(b'\0')
        size = wireformat.parse_decimal(size) if nul else None
        if size is None:
            raise StreamError('malformed file header in the stream')
        received += size
        if received > total:
            raise StreamError('the stream has more data than it says '
                              '(%d bytes)' % total)
        spool.add(_decodedir(name), size, reader)
    if received != total or read(1):
        raise StreamError('the sizes in the stream do not add up (%d files, '
                          '%d bytes said)' % (files, total))


def _v1_counts(line):
    files, _, total = line.partition(b' ')
    files, total = (wireformat.parse_decimal(files),
                    wireformat.parse_decimal(total))
    if files is None or total is None:
        raise StreamError('malformed stream header %r' % line[:80])
    return files, total


def receive_stream_out(read, spool):
    """Read a `stream_out` answer into `spool`."""
    status = _line(read, 'status')
    if status != b'0':
        raise Unsupported(V1_STATUS.get(status, 'the server refused the '
                                        'stream (%r)' % status))
    files, total = _v1_counts(_line(read, 'header'))
    receive_v1_files(read, files, total, spool)


def receive_packed1(read, spool):
    """Read a `packed1` bundle (after its "HGS1") into `spool`."""
    reader = _Exact(read)
    if reader.exactly(2) != b'UN':
        raise StreamError('a packed1 bundle compressed in a way we do not '
                          'know')
    head = reader.exactly(18)
    files, total = (int.from_bytes(head[:8], 'big'),
                    int.from_bytes(head[8:16], 'big'))
    requirements = reader.exactly(int.from_bytes(head[16:], 'big'))
    problem = requirements_problem(parse_requirements(
        requirements.rstrip(b'\0').decode('utf-8', 'replace')))
    if problem:
        raise Unsupported(problem)
    receive_v1_files(read, files, total, spool)


def receive_bundle_file(path, spool):
    """Read a stream clone bundle file (`packed1` or a bundle2 with a
    `stream2` or `stream3-exp` part) into `spool`."""
    with open(path, 'rb') as bundle:
        if bundle.read(4) == b'HGS1':
            return receive_packed1(bundle.read, spool)
        bundle.seek(0)
        return receive_bundle(bundle.read, spool)


def is_stream_bundle(path):
    """Whether the bundle file at `path` is a stream clone bundle."""
    with open(path, 'rb') as bundle:
        magic = bundle.read(4)
        if magic == b'HGS1':
            return True
        if magic != bundle2.MAGIC:
            return False
        bundle.seek(0)
        try:
            for part_type, _, _, _ in bundle2.stream_parts(bundle.read):
                return part_type in STREAM_PARTS
        except Abort:
            return False
    return False


def stream_clone_args():
    """getbundle's arguments for a stream v2 clone."""
    return {
        'bundlecaps': wireformat.getbundle_bundlecaps(STREAM_BUNDLE2_CAPS),
        'stream': '1',
        'cg': '0',
    }
