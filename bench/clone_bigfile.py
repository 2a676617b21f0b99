#!/usr/bin/env python3
"""Benchmark: clone a repository holding one big file of random data.

Makes an hg repository of two changesets: a file of --size MB of random
bytes, then the same file with 1000 bytes changed in the middle and four
appended. Serves it with `hg serve` on 127.0.0.1 and times, in the same
run, `hg clone -U` against `git clone --no-checkout hg::...` (no working
copy on either side), with the peak memory of each side (the sampler of
clone_nginx.py for ours, the kernel's rusage for hg's).

What it measures: objects that do not compress are stored at level 0
(helper/store.c), and a pack of few but big objects stays a pack instead of
being inflated and deflated again as loose objects. Target (reported, not
enforced): at most 2 times `hg clone -U`.

    build/venv/bin/python bench/clone_bigfile.py [--size MB] [--runs N]
        [--keep]
"""

import os
import shutil
import sys

from benchlib import Bench, bench_parser, bench_workdir, record, timed
from lib.hg import HgServer

TARGET = 2.0
MB = 1024 * 1024


def make_repo(hg, repo, size):
    hg('init', repo)
    path = repo / 'big.bin'
    with open(path, 'wb') as f:
        left = size * MB
        while left:
            chunk = min(left, 16 * MB)
            f.write(os.urandom(chunk))
            left -= chunk
    hg('-R', repo, 'add', path)
    hg('-R', repo, 'commit', '-q', '-m', 'one', '-u', 'bench')
    with open(path, 'r+b') as f:
        f.seek(size * MB // 2)
        f.write(b'x' * 1000)
        f.seek(0, 2)
        f.write(b'tail')
    hg('-R', repo, 'commit', '-q', '-m', 'two', '-u', 'bench')


def main():
    parser = bench_parser(__doc__, 3, 'repeat each clone; the ratio uses '
                          'medians (default 3)')
    parser.add_argument('--size', type=int, default=300,
                        help='size of the file in MB (default 300)')
    args = parser.parse_args()
    with bench_workdir('cinnabar-bench-bigfile-', args.keep) as (hg, work):
        make_repo(hg, work / 'repo', args.size)
        with HgServer(hg, work / 'repo', work / 'serve') as server:
            url = server.url
            print(f'hg serve: {url} ({hg.version()}), one {args.size} MB '
                  'file of random data, two revisions')
            bench = Bench(work, args.interval / 1000)
            hg_peak = 0
            for _ in range(args.runs):
                dest = work / 'hg-clone'
                # Watched as ours is, for the same cost (Bench.run).
                elapsed, code, _, _, rusage = timed(
                    [hg.exe, 'clone', '-U', '-q', url, str(dest)], work,
                    bench.interval)
                if code:
                    print('hg clone -U: FAILED')
                    return 1
                bench.times.setdefault('hg clone -U', []).append(elapsed)
                hg_peak = max(hg_peak, rusage.ru_maxrss * 1024)
                record('hg clone -U', seconds=elapsed,
                       cpu=rusage.ru_utime + rusage.ru_stime,
                       peak_mb=rusage.ru_maxrss / 1024)
                print(f'{"hg clone -U":<28} {elapsed:8.1f} s', flush=True)
                shutil.rmtree(dest, ignore_errors=True)
                bench.run('git clone --no-checkout',
                          ['git', 'clone', '-q', '--no-checkout',
                           f'hg::{url}'], sample=True)
            bench.summary()
            if bench.failed:
                return 1
            ratio = (bench.median('git clone --no-checkout')
                     / bench.median('hg clone -U'))
            print(f'git clone --no-checkout / hg clone -U: {ratio:.2f} '
                  f'(target <= {TARGET}: '
                  f'{"ok" if ratio <= TARGET else "OVER TARGET"})')
            bench.memory_report(target_mb=None)
            print(f'hg clone -U peak RSS (kernel rusage): '
                  f'{hg_peak / MB:.1f} MB')
    return 0


if __name__ == '__main__':
    sys.exit(main())
