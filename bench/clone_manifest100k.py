#!/usr/bin/env python3
"""Benchmark: clone manifest100k.hg (100k files, 10k changesets) over HTTP.

Makes an hg repository from the corpus's scale/manifest100k.hg (or from
--bundle), serves it with `hg serve` on 127.0.0.1, then, in the same
run, times `hg clone -U`, our `git clone --no-checkout hg::...` (every
id verified, the default), and, when found, the reference git-cinnabar's
(--reference DIR, else CINNABAR_BENCH_REFERENCE, else a directory of
`git-cinnabar` on PATH other than this repository), each --runs times.
Prints times, medians, the ratios (ours / hg, target <= 1.0; ours /
git-cinnabar, target <= 0.7) and the peak RSS of the largest process of
each clone, sampled as bench/clone_nginx.py does.

Each manifest revision is about 6 MB: work proportional to the manifest
per changeset shows at once.  For the helper alone, without HTTP or hg
serve, --unbundle also times `git cinnabar unbundle` of the bundle file.

    build/venv/bin/python bench/clone_manifest100k.py [--runs N]
        [--bundle FILE] [--reference DIR] [--unbundle] [--keep]
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from benchlib import MB, Bench, bench_parser  # noqa: E402
from benchlib import served_bundle  # noqa: E402
from lib import env as test_env  # noqa: E402

HG_RATIO_TARGET = 1.0
REFERENCE_RATIO_TARGET = 0.7


def ratio(bench, ours, theirs, target):
    if ours not in bench.times or theirs not in bench.times:
        return
    value = bench.median(ours) / bench.median(theirs)
    verdict = 'ok' if value <= target else 'OVER TARGET'
    print(f'{ours} / {theirs}: {value:.2f} (target <= {target}: {verdict})')


def largest_process(bench, label):
    samplers = bench.sampled.get(label, [])
    peak = max((max(s.peaks.values(), default=0) for s in samplers),
               default=0)
    return peak


class ScaleBench(Bench):
    """Bench, with each sampled run's memory kept by label."""

    def __init__(self, workdir, interval):
        super().__init__(workdir, interval)
        self.sampled = {}

    def run_labelled(self, label, args, env=None):
        saved = dict(os.environ)
        if env:
            os.environ.update(env)
        try:
            before = len(self.samplers)
            self.run(label, args, sample=True)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.sampled.setdefault(label, []).extend(self.samplers[before:])


def benchmark(hg, server, bundle, reference, args, workdir):
    bench = ScaleBench(workdir, args.interval / 1000)
    url = server.url
    ours = 'git clone (ours)'
    theirs = 'git clone (git-cinnabar)'
    print(f'hg serve: {url} ({hg.version()})')
    print(f'reference: {reference or "none found"}', flush=True)
    for _ in range(args.runs):
        bench.run_labelled('hg clone -U', [hg.exe, 'clone', '-U', '-q', url])
        bench.run_labelled(ours, ['git', 'clone', '-q', '--no-checkout',
                                  f'hg::{url}'])
        if reference:
            path = f'{reference}{os.pathsep}{os.environ["PATH"]}'
            bench.run_labelled(theirs, ['git', 'clone', '-q',
                                        '--no-checkout', f'hg::{url}'],
                               env={'PATH': path})
        if args.unbundle:
            bench.run_labelled('unbundle (ours, no HTTP)', [
                'sh', '-c', 'git init -q "$1" && cd "$1" && '
                'git cinnabar unbundle "$0"', str(bundle)])
    bench.summary()
    ratio(bench, ours, 'hg clone -U', HG_RATIO_TARGET)
    ratio(bench, ours, theirs, REFERENCE_RATIO_TARGET)
    print(f'peak RSS of the largest process (sampled every '
          f'{args.interval:.0f} ms):')
    for label in bench.sampled:
        print(f'  {label:<28} {largest_process(bench, label) / MB:8.1f} MB')
    return 1 if bench.failed else 0


def parse_args():
    parser = bench_parser(__doc__, 1, 'repeat each clone; ratios use '
                          'medians (default 1)')
    parser.add_argument('--bundle', type=Path, help='the bundle to serve '
                        '(default: the corpus\'s scale/manifest100k.hg)')
    parser.add_argument('--reference', help='directory of a git-cinnabar '
                        'to compare with')
    parser.add_argument('--unbundle', action='store_true',
                        help='also time `git cinnabar unbundle` of the '
                        'bundle file (the helper alone)')
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        bundle = args.bundle or (test_env.corpus_dir() / 'scale' /
                                 'manifest100k.hg')
        with served_bundle('cinnabar-bench-scale-', bundle, args.keep,
                           args.reference) as (
                hg, workdir, server, reference):
            return benchmark(hg, server, bundle, reference, args, workdir)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
