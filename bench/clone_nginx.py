#!/usr/bin/env python3
"""Benchmark: clone nginx.hg over HTTP with git-cinnabar, and with hg.

Makes an hg repository from the corpus's nginx.hg, serves it with
`hg serve` on 127.0.0.1, then, in the same run, times:

- `hg clone -U` against `git clone --no-checkout hg::...` (like for like:
  no working copy on either side);
- `hg clone` against `git clone hg::...` (with a working copy).

Memory: while a git clone runs, a sampler thread reads
/proc/<pid>/status of git and every descendant (git-remote-hg's Python,
git-cinnabar-helper, git's own index-pack...) every few milliseconds.  It
keeps each process's VmHWM (its peak resident set size, as the kernel
counts it) and the sum of the VmRSS of the helper and Python processes
alive at the same moment.  A process's growth during its last sampling
interval can be missed; the kernel's rusage of the whole tree (the largest
peak of any single process) is printed as a cross-check.  The hg clones
are watched the same way, their figures dropped, so that both sides pay
for the sampler's CPU.

Targets (reported, not enforced): git clone no slower than 1.5 times hg
clone, and helper + Python under 200 MB.  Exits 0 when both clones worked,
1 when one failed.

Run from the repository root after `make` (git-remote-hg,
git-cinnabar-helper on PATH are those of the repository; CINNABAR_TEST_HG
and CINNABAR_CORPUS as for the tests):

    build/venv/bin/python bench/clone_nginx.py [--keep] [--interval MS]
        [--processes]
"""

import sys

from benchlib import Bench, HgServer, bench_parser, nginx_workdir, test_env


def benchmark(hg, server, workdir, interval, processes, runs):
    bench = Bench(workdir, interval)
    url = server.url
    print(f'hg serve: {url} ({hg.version()})')
    for _ in range(runs):
        bench.run('hg clone -U', [hg.exe, 'clone', '-U', '-q', url],
                  load=True)
        bench.run('git clone --no-checkout',
                  ['git', 'clone', '-q', '--no-checkout', f'hg::{url}'],
                  sample=True)
        bench.run('hg clone', [hg.exe, 'clone', '-q', url], load=True)
        bench.run('git clone', ['git', 'clone', '-q', f'hg::{url}'],
                  sample=True)
    bench.summary()
    bench.ratio('git clone --no-checkout', 'hg clone -U')
    bench.ratio('git clone', 'hg clone')
    bench.memory_report()
    if processes:
        bench.process_report()
    return 1 if bench.failed else 0


def parse_args():
    return bench_parser(__doc__, 3, 'repeat each clone; ratios use medians '
                        '(default 3)').parse_args()


def main():
    args = parse_args()
    try:
        with nginx_workdir('cinnabar-bench-', args.keep) as (
                hg, workdir, repo):
            with HgServer(hg, repo, workdir / 'serve') as server:
                return benchmark(hg, server, workdir, args.interval / 1000,
                                 args.processes, args.runs)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
