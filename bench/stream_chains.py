#!/usr/bin/env python3
"""Benchmark: stream bundles of crafted changelogs whose changesets are
deltas against the one --against before (default 2), imported by `git
cinnabar unbundle` into an empty repository, at several sizes.

The bundles are made by tests/fuzz/streamfmt.py (every hg id valid). For
each size, and each helper given with --helper (default: this
repository's; another build, such as main's, to compare), prints the
wall and CPU time (user + sys of all the processes, from the kernel's
rusage of waited-for children), the peak RSS of the largest process (so
far: the kernel keeps the largest of all the runs), and
the chunks the helper read to build the changelog's texts
(GIT_CINNABAR_TRACE). Linear work reads one chunk per changeset.

    build/venv/bin/python bench/stream_chains.py [--counts 1000,8000]
        [--against K] [--helper PATH]...
"""

import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / 'tests' / 'fuzz'))

import streamfmt  # noqa: E402
from benchlib import BenchParser, record  # noqa: E402

CHUNKS = re.compile(r'revlog: (\d+) texts of the changelog built from '
                    r'(\d+) chunks')


def unbundle(helper, bundle, workdir):
    """(wall s, CPU s, peak RSS kB, chunks read or None)."""
    repo = Path(tempfile.mkdtemp(dir=workdir))
    subprocess.run(['git', 'init', '-q', repo], check=True)
    env = dict(os.environ, GIT_CINNABAR_HELPER=str(helper),
               GIT_CINNABAR_TRACE='1',
               PATH=f'{TOP}{os.pathsep}{os.environ["PATH"]}')
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(['git', 'cinnabar', 'unbundle', bundle],
                            cwd=repo, env=env, capture_output=True,
                            text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode:
        sys.exit(result.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime +
           after.ru_stime - before.ru_stime)
    found = CHUNKS.search(result.stderr)
    return wall, cpu, after.ru_maxrss, found and int(found.group(2))


def main():
    parser = BenchParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--counts', default='1000,2000,4000,8000,32000')
    parser.add_argument('--against', type=int, default=2)
    parser.add_argument('--helper', action='append', type=Path)
    args = parser.parse_args()
    helpers = args.helper or [TOP / 'git-cinnabar-helper']
    k = args.against
    with tempfile.TemporaryDirectory(prefix='stream-chains-') as workdir:
        for count in map(int, args.counts.split(',')):
            bundle = Path(workdir) / f'r{k}-{count}.hg'
            bundle.write_bytes(streamfmt.changelog_stream(
                count, lambda rev: rev if rev < k else rev - k))
            for helper in helpers:
                wall, cpu, rss, chunks = unbundle(helper, bundle, workdir)
                record(f'r-{k} {count} {helper.name}', seconds=wall,
                       cpu=cpu, peak_mb=rss / 1024, changesets=count)
                print(f'r-{k} {count:6d} {helper}: {wall:7.2f} s, CPU '
                      f'{cpu:7.2f} s, {rss // 1024} MB, chunks '
                      f'{chunks if chunks is not None else "?"}',
                      flush=True)


if __name__ == '__main__':
    main()
