#!/usr/bin/env python3
"""Benchmark: peak memory of clones against the number of files per manifest.

Clones over HTTP (`hg serve` on 127.0.0.1) with `git clone --no-checkout
hg::...`, once normally (`cinnabar.stream=never`) and once as a stream
clone (`always`), each of:

- nginx (the corpus's nginx.hg: 389 files at tip, 9,828 changesets);
- manifest100k (the corpus's scale/manifest100k.hg: 100,000 files, 10,000
  changesets);
- a generated history of --files files (default 300,000) and --commits
  changesets after the first (default 300), made as manifest100k was
  (bench/scale_repos.py: the corpus's scale/gen-fastimport.py, git
  fast-import, real hg's `convert`; slow, about 2 s per changeset at
  300,000 files: kept under build/bench-data/scale/ and used again).

For each clone, memory is sampled as bench/clone_nginx.py does (VmHWM of
every process of the clone): the largest single process, the helper's
and Python's peaks, and helper + Python at one time. Prints a table.

    build/venv/bin/python bench/memory_scaling.py [--only NAME...]
        [--kinds normal|stream...] [--files N] [--commits N]
        [--interval MS] [--keep]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from clone_manifest100k import ScaleBench  # noqa: E402
from benchlib import MB, bench_parser, bench_workdir  # noqa: E402
from lib import env as test_env  # noqa: E402
from lib.hg import HgServer  # noqa: E402
from scale_repos import CORPUS_SHAPE, RepoMaker, Shape  # noqa: E402

KINDS = {'normal': 'never', 'stream': 'always'}


def repos(hg, workdir, args):
    """{name: hg repository} of what --only asks."""
    corpus = test_env.corpus_dir()
    maker = RepoMaker(hg.exe, corpus)
    shapes = {'manifest100k': Shape(*CORPUS_SHAPE),
              'generated': Shape(args.files, args.commits)}
    found = {}
    for name in args.only:
        if name == 'nginx':
            found[name] = hg.repo_from_bundle(corpus / 'nginx.hg',
                                              workdir / name)
        else:
            found[name] = maker.repo(shapes[name])
    return found


def tip_files(hg, repo):
    return len(hg('-R', repo, 'files', '-r', 'tip').out.splitlines())


def measure(bench, name, url, kinds):
    rows = []
    for kind in kinds:
        setting = KINDS[kind]
        label = f'{name} {kind}'
        before = len(bench.times.get(label, []))
        bench.run_labelled(label, ['git', 'clone', '-q', '--no-checkout',
                                   f'hg::{url}'],
                           env={'GIT_CINNABAR_STREAM': setting})
        if len(bench.times.get(label, [])) == before:
            continue  # failed, said so
        samplers = bench.sampled[label]
        rows.append((label, bench.times[label][-1],
                     max(max(s.peaks.values(), default=0)
                         for s in samplers),
                     max(s.peak('helper') for s in samplers),
                     max(s.peak('python') for s in samplers),
                     max(s.ours_at_once for s in samplers)))
    return rows


def main():
    parser = bench_parser(__doc__, 1, 'unused', memory=True)
    parser.add_argument('--only', nargs='+', default=[
        'nginx', 'manifest100k', 'generated'],
        choices=['nginx', 'manifest100k', 'generated'])
    parser.add_argument('--kinds', nargs='+', default=list(KINDS),
                        choices=list(KINDS))
    parser.add_argument('--files', type=int, default=300000)
    parser.add_argument('--commits', type=int, default=300)
    args = parser.parse_args()
    table = []
    try:
        with bench_workdir('cinnabar-bench-memory-', args.keep) as (
                hg, workdir):
            bench = ScaleBench(workdir, args.interval / 1000)
            for name, repo in repos(hg, workdir, args).items():
                files = tip_files(hg, repo)
                changesets = len(hg.nodes(repo))
                print(f'{name}: {files} files at tip, {changesets} '
                      f'changesets', flush=True)
                with HgServer(hg, repo, workdir / f'serve-{name}') as server:
                    for row in measure(bench, name, server.url,
                                       args.kinds):
                        table.append((files, changesets) + row)
                        # As it comes: a long run may be stopped.
                        print(format_row(table[-1]), flush=True)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1
    print(f'\npeak RSS in MB (VmHWM sampled every {args.interval:.0f} ms)')
    print(HEADER)
    for row in table:
        print(format_row(row))
    return 1 if bench.failed else 0


HEADER = (f'{"clone":<22} {"files":>7} {"csets":>6} {"wall s":>7} '
          f'{"largest":>8} {"helper":>7} {"python":>7} {"h+p once":>8}')


def format_row(row):
    files, csets, label, wall, largest, helper, python, once = row
    return (f'{label:<22} {files:>7} {csets:>6} {wall:7.1f} '
            f'{largest / MB:8.1f} {helper / MB:7.1f} {python / MB:7.1f} '
            f'{once / MB:8.1f}')


if __name__ == '__main__':
    sys.exit(main())
