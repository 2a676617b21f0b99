#!/usr/bin/env python3
"""The SHA-1 floor of a clone that checks every id: the time to hash every
manifest and file text of an hg repository once, on both cores.

A manifest's or file revision's id is the SHA-1 of its parents and its
whole text, so a client that checks every id hashes every text once at
least, whatever else it saves; a stream clone, which receives the revlogs
as they are, does little else. The sizes of the texts come from the
revlogs' indexes (each entry's uncompressed length, `hg help
internals.revlogs`), the speed from OpenSSL's SHA-1 (Python's hashlib) in
one process per core over messages of the texts' mean size, started
together: the floor is the bytes over that speed.

    build/venv/bin/python bench/sha1_floor.py REPO [--sample MB]

(bench/stream_clone.py reports it beside its stream clones.)
"""

import argparse
import hashlib
import os
import struct
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

# A revlog index entry (version 1): offset and flags, compressed length,
# uncompressed length, delta base, link revision, p1, p2, node (20 bytes,
# padded to 32). The first entry's first 4 bytes hold the revlog's version
# and flags instead of its offset; flag 1 << 16: inline, each entry followed
# by its compressed data.
ENTRY = struct.Struct('>Qiiiiii20s12x')
INLINE = 1 << 16
VERSION_1 = 1


def revlog_sizes(index):
    """(texts, bytes): how many revisions the revlog index file `index`
    has and the sum of their texts' lengths."""
    data = index.read_bytes()
    if not data:
        return 0, 0
    header = struct.unpack('>I', data[:4])[0]
    if header & 0xffff != VERSION_1:
        raise ValueError(f'{index}: revlog version {header & 0xffff}, '
                         'only version 1 is read')
    inline = header & INLINE
    texts = total = pos = 0
    while pos < len(data):
        _, compressed, raw = ENTRY.unpack_from(data, pos)[:3]
        if raw < 0:
            raise ValueError(f'{index}: an entry without its text length')
        texts += 1
        total += raw
        pos += ENTRY.size + (compressed if inline else 0)
    return texts, total


def repository_texts(repo):
    """(texts, bytes) of the manifests and file revisions of the hg
    repository `repo` (its store's 00manifest.i and data/**.i)."""
    store = Path(repo) / '.hg' / 'store'
    indexes = [store / '00manifest.i'] + sorted((store / 'data').rglob('*.i'))
    texts = total = 0
    for index in indexes:
        if index.is_file():
            n, size = revlog_sizes(index)
            texts += n
            total += size
    return texts, total


def _hash_for(size, count, start):
    """Hash `count` messages of `size` bytes (and a 40-byte prefix, the
    parents) from `start` (a time.time() to wait for, so that the processes
    go together); the seconds it took."""
    text = os.urandom(size)
    parents = os.urandom(40)
    while time.time() < start:
        time.sleep(0.001)
    begin = time.perf_counter()
    for _ in range(count):
        h = hashlib.sha1(parents)
        h.update(text)
        h.digest()
    return time.perf_counter() - begin


def sha1_speed(mean_size, sample_bytes, cores=2):
    """Bytes per second of SHA-1 over `cores` processes, each hashing its
    share of `sample_bytes` in messages of `mean_size` bytes."""
    size = max(1, min(mean_size, 16 << 20))
    count = max(1, sample_bytes // cores // size)
    start = time.time() + 0.5
    with ProcessPoolExecutor(cores) as pool:
        times = list(pool.map(_hash_for, [size] * cores, [count] * cores,
                              [start] * cores))
    return cores * count * size / max(times)


def floor(repo, sample_bytes=1 << 30, cores=2):
    """(texts, bytes, seconds): the SHA-1 floor of the hg repository."""
    texts, total = repository_texts(repo)
    if not texts:
        return 0, 0, 0.0
    speed = sha1_speed(total // texts, sample_bytes, cores)
    return texts, total, total / speed


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument('repo', type=Path, help='an hg repository')
    parser.add_argument('--sample', type=int, default=1024,
                        help='MB hashed to measure the speed (default 1024)')
    args = parser.parse_args()
    try:
        texts, total, seconds = floor(args.repo, args.sample << 20)
    except (OSError, ValueError) as e:
        print(f'error: {e}', file=sys.stderr)
        return 1
    print(f'{texts} texts, {total / (1 << 20):.1f} MB: SHA-1 floor '
          f'{seconds:.2f} s on 2 cores')
    return 0


if __name__ == '__main__':
    sys.exit(main())
