#!/usr/bin/env python3
"""Benchmark: `git cinnabar bundle` of nginx, and `hg bundle --all`.

Makes an hg repository from the corpus's nginx.hg and a git clone of it
(`git clone --no-checkout hg::<path>`), then, for each bundlespec
(none-v1, gzip-v1, bzip2-v1, none-v2, gzip-v2, bzip2-v2, zstd-v2), times

- `git cinnabar bundle -t <spec> <file> --all` in the clone;
- `hg bundle --all -t <spec> <file>` in the hg repository;

and prints the times (median of --runs, default 1) and the bundle sizes.
With --check, each git-cinnabar bundle is also unbundled into an empty
repository, which must then hold exactly nginx's changesets.  Exits 0
when every command worked, 1 otherwise.

Run from the repository root after `make`, with CINNABAR_TEST_HG and
CINNABAR_CORPUS as for the tests:

    build/venv/bin/python bench/bundle_nginx.py [--keep] [--runs N]
        [--check]
"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from benchlib import bench_parser, nginx_workdir  # noqa: E402
from benchlib import record, timed  # noqa: E402
from lib import env as test_env  # noqa: E402

SPECS = ('none-v1', 'gzip-v1', 'bzip2-v1', 'none-v2', 'gzip-v2',
         'bzip2-v2', 'zstd-v2')
MB = 1024 * 1024


def run_median(args, cwd, runs):
    times = []
    for _ in range(runs):
        elapsed, code, stderr, _, _ = timed(args, cwd)
        if code:
            print(f'FAILED: {" ".join(map(str, args))}\n'
                  + stderr.decode(errors='replace')[-2000:])
            return None
        times.append(elapsed)
        record(' '.join(map(str, args[:3])), seconds=elapsed)
    return statistics.median(times)


def sorted_nodes(hg, repo):
    return sorted(hg('-R', repo, 'log', '-T', '{node}\n',
                     timeout=1800).out.split())


def check(hg, bundle, workdir, expected):
    target = workdir / (bundle.name + '.repo')
    hg('init', target)
    hg('-R', target, 'unbundle', '-q', bundle, timeout=1800)
    return sorted_nodes(hg, target) == expected


def benchmark(hg, workdir, repo, runs, verify):
    clone = workdir / 'clone'
    elapsed, code, stderr, _, _ = timed(
        ['git', 'clone', '-q', '--no-checkout', f'hg::{repo}', clone],
        workdir)
    if code:
        print('git clone failed:\n' + stderr.decode(errors='replace'))
        return 1
    print(f'git clone --no-checkout: {elapsed:.1f} s ({hg.version()})')
    expected = sorted_nodes(hg, repo) if verify else None
    failed = False
    print(f'{"spec":<9} {"cinnabar":>10} {"size":>9}   {"hg":>8} '
          f'{"size":>9}   time ratio')
    for spec in SPECS:
        ours = workdir / f'cinnabar-{spec}.hg'
        theirs = workdir / f'hg-{spec}.hg'
        ours_time = run_median(['git', 'cinnabar', 'bundle', '-t', spec,
                                ours, '--all'], clone, runs)
        hg_time = run_median([hg.exe, '-R', repo, 'bundle', '-q', '--all',
                              '-t', spec, theirs], workdir, runs)
        if ours_time is None or hg_time is None:
            failed = True
            continue
        print(f'{spec:<9} {ours_time:8.1f} s {ours.stat().st_size / MB:6.1f} '
              f'MB   {hg_time:6.1f} s {theirs.stat().st_size / MB:6.1f} MB'
              f'   {ours_time / hg_time:5.1f}', flush=True)
        if verify and not check(hg, ours, workdir, expected):
            print(f'{spec}: FAILED: the unbundled changesets differ')
            failed = True
    return 1 if failed else 0


def parse_args():
    parser = bench_parser(__doc__, 1, 'repeat each command; times are '
                          'medians', memory=False)
    parser.add_argument('--check', action='store_true',
                        help='unbundle each bundle and compare changesets')
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        with nginx_workdir('cinnabar-bench-bundle-', args.keep) as (
                hg, workdir, repo):
            return benchmark(hg, workdir, repo, args.runs, args.check)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
