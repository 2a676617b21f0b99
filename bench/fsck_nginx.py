#!/usr/bin/env python3
"""Benchmark: `git cinnabar fsck --full` on a clone of nginx.hg, ours and
git-cinnabar's.

Makes an hg repository from the corpus's nginx.hg and clones it (local
path, `git clone --no-checkout hg::<path>`) with this git-cinnabar.  When
another git-cinnabar is found (--reference DIR, holding its
`git-cinnabar` and `git-remote-hg`; by default the first `git-cinnabar`
on PATH that is not this repository's), it clones the same repository
into a clone of its own, and the two checks run in turns in the same run:

- `git cinnabar fsck --full` in our clone;
- `git cinnabar fsck --full --force` in its clone (git-cinnabar 0.7
  skips a check of metadata it has checked before without --force).

Each check is repeated (--runs, default 3); the ratio compares medians.
The CPU time of each check (user + sys of all its processes, from the
kernel's rusage of waited-for children) and the load average when it
ends are printed with its time: the machine may be shared.
Memory of our check is sampled as in bench/clone_nginx.py (VmHWM of the
helper, of Python, and the kernel's rusage of the largest process).
Target (reported, not enforced): ours no slower than git-cinnabar's.
Exits 0 when every check passed, 1 otherwise.

Run from the repository root after `make`, with CINNABAR_TEST_HG and
CINNABAR_CORPUS as for the tests:

    build/venv/bin/python bench/fsck_nginx.py [--keep] [--runs N]
        [--reference DIR] [--interval MS] [--processes]
"""

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from benchlib import MB, bench_parser, children_cpu  # noqa: E402
from benchlib import find_reference  # noqa: E402
from benchlib import nginx_workdir  # noqa: E402
from lib import env as test_env  # noqa: E402
from push_nginx import PushBench  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OURS = 'fsck --full (ours)'
THEIRS = 'fsck --full (reference)'


def path_with(directory):
    return os.pathsep.join([str(directory), os.environ.get('PATH', '')])


CPU = {}


def run_with_path(bench, label, args, cwd, env_path, sample=False):
    """bench.run_in with PATH set to `env_path` for the command; records
    its CPU time."""
    saved = os.environ['PATH']
    os.environ['PATH'] = env_path
    before = children_cpu()
    try:
        ok = bench.run_in(label, args, cwd, sample)
    finally:
        os.environ['PATH'] = saved
    cpu = children_cpu() - before
    load = os.getloadavg()[0]
    if ok:
        CPU.setdefault(label, []).append(cpu)
        print(f'{"":<28} CPU {cpu:.2f} s, load average {load:.1f}',
              flush=True)
    return ok


def cpu_summary():
    for label, times in CPU.items():
        runs = ', '.join(f'{t:.2f}' for t in times)
        print(f'  {label:<26} CPU median {sorted(times)[len(times) // 2]:.2f}'
              f' s  (runs: {runs})')


def clone(bench, label, repo, dest, env_path):
    return run_with_path(bench, label, ['git', 'clone', '-q',
                                        '--no-checkout', f'hg::{repo}',
                                        str(dest)], bench.workdir, env_path)


def benchmark(repo, workdir, interval, runs, reference, processes):
    bench = PushBench(workdir, interval)
    ours_path = path_with(ROOT)
    ours, theirs = workdir / 'clone-ours', workdir / 'clone-reference'
    if not clone(bench, 'clone (ours, not compared)', repo, ours, ours_path):
        return 1
    if reference:
        theirs_path = path_with(reference)
        print(f'reference: {reference / "git-cinnabar"}')
        if not clone(bench, 'clone (reference, not compared)', repo, theirs,
                     theirs_path):
            reference = None
    else:
        print('no other git-cinnabar found: timing ours only')
    for _ in range(runs):
        run_with_path(bench, OURS, ['git', 'cinnabar', 'fsck', '--full'],
                      ours, ours_path, sample=True)
        if reference:
            run_with_path(bench, THEIRS, ['git', 'cinnabar', 'fsck',
                                          '--full', '--force'], theirs,
                          theirs_path)
    bench.summary()
    cpu_summary()
    if OURS in bench.times and THEIRS in bench.times:
        value = bench.median(OURS) / bench.median(THEIRS)
        verdict = 'ok' if value <= 1.0 else 'OVER TARGET'
        print(f'{OURS} / {THEIRS}: {value:.2f} (target <= 1.0: {verdict})')
    if bench.samplers:
        helper = max(s.peak('helper') for s in bench.samplers)
        python = max(s.peak('python') for s in bench.samplers)
        print(f'peak RSS of our check: git-cinnabar-helper '
              f'{helper / MB:.1f} MB, Python {python / MB:.1f} MB, largest '
              f'process (kernel rusage) {bench.max_single_rss / MB:.1f} MB')
    if processes:
        bench.process_report()
    for dest in (ours, theirs):
        shutil.rmtree(dest, ignore_errors=True)
    return 1 if bench.failed else 0


def parse_args():
    parser = bench_parser(__doc__, 3, 'repeat each check; the ratio uses '
                          'medians (default 3)')
    parser.add_argument('--reference', metavar='DIR',
                        help='directory of the git-cinnabar to compare '
                        'with (its git-cinnabar and git-remote-hg)')
    return parser.parse_args()


def main():
    args = parse_args()
    reference = find_reference(args.reference)
    try:
        with nginx_workdir('cinnabar-bench-fsck-', args.keep) as (
                hg, workdir, repo):
            return benchmark(repo, workdir, args.interval / 1000,
                             max(args.runs, 1), reference, args.processes)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
