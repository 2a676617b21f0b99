"""Obsolescence markers, as a push sends them in a bundle2 `OBSMARKERS`
part (Mercurial's `mercurial/obsolete.py`; `hg help internals.bundle2`).

A marker says that a changeset (the precursor) was rewritten into zero
or more successors (none: it was pruned). The part's payload is one byte,
the format version, then the markers one after the other. The server
names the versions it reads in its bundle2 capabilities
(`obsmarkers=V0,V1`); we write version 1, where each marker is, all
integers big-endian:

    uint32   size of the whole marker, this field included
    float64  date, seconds since the epoch
    int16    time zone offset in minutes (west of UTC, as hg dates)
    uint16   flags (0; 1 would say a precursor that was bumped,
             2 nodes of 32 bytes)
    uint8    number of successors
    uint8    number of parents (3: parents not recorded)
    uint8    number of metadata entries
    20 bytes the precursor
    20 bytes each successor
    20 bytes each parent (of the precursor; recorded for prunes, so
             that the marker travels with the history it belongs to)
    uint8, uint8 per metadata entry: the lengths of key and value
    then each key and value (UTF-8), in that order, keys sorted

Keys and values are at most 255 bytes. Mercurial records `user` (who
rewrote), `operation` (`amend`, `rebase`, `prune`, ...) and `ef1`, its
"effect flags": what the rewrite changed (`cinnabar.topics.effect_flags`).
"""

import struct
from binascii import unhexlify

from cinnabar.errors import Abort
from cinnabar.record import record

VERSION = 1
_FIXED = struct.Struct('>IdhHBBB')
NO_PARENTS = 3

Marker = record('Marker',
                'precursor successors parents date metadata')
Marker.__doc__ = """One marker: HgIds (`parents` None when not recorded),
`date` (seconds, offset west of UTC in seconds), `metadata` {key: value}."""


def _meta_bytes(metadata):
    pairs = []
    for key, value in sorted(metadata.items()):
        key, value = key.encode('utf-8'), value.encode('utf-8')
        if len(key) > 255 or len(value) > 255:
            raise Abort('obsolescence marker metadata too long: %r'
                        % key.decode('utf-8', 'replace'))
        pairs.append((key, value))
    return pairs


def encode_marker(marker):
    """The bytes of one marker in format version 1."""
    parents = marker.parents
    nodes = [marker.precursor, *marker.successors, *(parents or ())]
    meta = _meta_bytes(marker.metadata)
    tail = b''.join(unhexlify(n) for n in nodes)
    tail += b''.join(bytes((len(k), len(v))) for k, v in meta)
    tail += b''.join(k + v for k, v in meta)
    seconds, offset = marker.date
    return _FIXED.pack(
        _FIXED.size + len(tail), float(seconds), offset // 60, 0,
        len(marker.successors),
        NO_PARENTS if parents is None else len(parents), len(meta)) + tail


def encode_part(markers):
    """The payload of an `OBSMARKERS` part holding `markers`."""
    return bytes((VERSION,)) + b''.join(encode_marker(m) for m in markers)
