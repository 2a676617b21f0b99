#!/usr/bin/env python3
"""Benchmark: stream clones over HTTP, against normal clones.

Makes an hg repository from a bundle (default: the corpus's nginx.hg;
`--bundle` the corpus's scale/manifest100k.hg for the large manifest) or
takes one as it is (`--bundle` a repository, such as bench/scale_repos.py's
doubled manifest100k, build/bench-data/scale/f100000-c20000-s42/hg),
serves it with `hg serve` on 127.0.0.1, then, in the same run, times
`hg clone --stream -U`, `hg clone -U`, our `git clone --no-checkout
hg::...` with `cinnabar.stream=always` (every id verified, the
default; then with `cinnabar.check=no-manifests`) and with
`cinnabar.stream=never`, and the reference git-cinnabar's normal clone
when found (as bench/clone_manifest100k.py), each --runs times. Prints
times, medians, ratios, the peak RSS of the largest process of each
clone, and the SHA-1 floor of the repository (bench/sha1_floor.py: every
manifest and file text hashed once on both cores), which a stream clone
checking every id cannot go under.

    build/venv/bin/python bench/stream_clone.py [--runs N]
        [--bundle FILE] [--reference DIR] [--keep]
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from clone_manifest100k import ScaleBench  # noqa: E402
from clone_manifest100k import largest_process, ratio  # noqa: E402
from benchlib import MB, bench_parser, served_bundle  # noqa: E402
from benchlib import record  # noqa: E402
from lib import env as test_env  # noqa: E402
import sha1_floor  # noqa: E402

STREAM = 'git clone (ours, stream)'
STREAM_NO_MANIFESTS = 'git clone (ours, stream, no-manifests)'
FLOOR = 'SHA-1 floor'
NORMAL = 'git clone (ours, normal)'
THEIRS = 'git clone (git-cinnabar)'
HG_STREAM = 'hg clone --stream -U'
HG_NORMAL = 'hg clone -U'


def benchmark(hg, server, reference, args, workdir):
    bench = ScaleBench(workdir, args.interval / 1000)
    url = server.url
    clone = ['git', 'clone', '-q', '--no-checkout', f'hg::{url}']
    print(f'hg serve: {url} ({hg.version()})')
    print(f'reference: {reference or "none found"}', flush=True)
    for _ in range(args.runs):
        bench.run_labelled(HG_STREAM, [hg.exe, 'clone', '--stream', '-U',
                                       '-q', url])
        bench.run_labelled(HG_NORMAL, [hg.exe, 'clone', '-U', '-q', url])
        bench.run_labelled(STREAM, clone,
                           env={'GIT_CINNABAR_STREAM': 'always'})
        bench.run_labelled(STREAM_NO_MANIFESTS,
                           clone[:1] + ['-c', 'cinnabar.check=no-manifests']
                           + clone[1:],
                           env={'GIT_CINNABAR_STREAM': 'always'})
        bench.run_labelled(NORMAL, clone,
                           env={'GIT_CINNABAR_STREAM': 'never'})
        if reference:
            path = f'{reference}{os.pathsep}{os.environ["PATH"]}'
            bench.run_labelled(THEIRS, clone, env={'PATH': path})
    texts, size, floor = sha1_floor.floor(server.repo)
    print(f'{FLOOR}: {floor:.2f} s ({texts} manifest and file texts, '
          f'{size / MB:.0f} MB, hashed once on 2 cores)')
    record(FLOOR, seconds=floor, texts=texts, mb=size / MB)
    bench.summary()
    if floor:
        value = bench.median(STREAM) / floor
        verdict = 'ok' if value <= 1.5 else 'OVER TARGET'
        print(f'{STREAM} / {FLOOR}: {value:.2f} (target <= 1.5: {verdict})')
    ratio(bench, STREAM_NO_MANIFESTS, HG_STREAM, 2.0)
    ratio(bench, STREAM, HG_STREAM, 2.0)
    ratio(bench, STREAM, HG_NORMAL, 0.75)
    ratio(bench, STREAM, NORMAL, 1.0)
    ratio(bench, STREAM, THEIRS, 0.7)
    print(f'peak RSS of the largest process (sampled every '
          f'{args.interval:.0f} ms):')
    for label in bench.sampled:
        print(f'  {label:<28} {largest_process(bench, label) / MB:8.1f} MB')
    return 1 if bench.failed else 0


def parse_args():
    parser = bench_parser(__doc__, 1, 'repeat each clone; ratios use '
                          'medians (default 1)')
    parser.add_argument('--bundle', type=Path, help='the bundle or hg '
                        'repository to serve (default: the corpus\'s '
                        'nginx.hg)')
    parser.add_argument('--reference', help='directory of a git-cinnabar '
                        'to compare with')
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        bundle = args.bundle or test_env.corpus_dir() / 'nginx.hg'
        with served_bundle('cinnabar-bench-stream-', bundle, args.keep,
                           args.reference) as (
                hg, workdir, server, reference):
            return benchmark(hg, server, reference, args, workdir)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
