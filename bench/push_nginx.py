#!/usr/bin/env python3
"""Benchmark: push all of nginx.hg over HTTP with git-cinnabar, and with hg.

Makes an hg repository from the corpus's nginx.hg, serves it with
`hg serve` on 127.0.0.1 and clones it with `git clone --no-checkout
hg::...` (timed, for information).  Then, in the same run, each time to a
new empty hg repository served with `hg serve` (pushes allowed):

- `git push hg::<url> refs/remotes/origin/branches/...:refs/heads/...`,
  every branch head ref of the clone (22 of them) in one push;
- `hg push <url>` from the nginx repository (like for like: all of the
  history, over HTTP, into an empty repository).

After each push the target must hold exactly the changesets of nginx
(`hg log -T '{node}\\n'` sorted); a push that does not is reported as
failed.

Memory is sampled as in bench/clone_nginx.py (which this reuses): the
VmHWM of git and every descendant (git-remote-hg's Python,
git-cinnabar-helper) every few milliseconds, and the sum of the helper's
and Python's VmRSS at any one time; the kernel's rusage of the whole tree
is a cross-check.  CPU time (user + system) is reported for each push:
the client's process tree (rusage) and, over HTTP, the `hg serve` of the
target (/proc/<pid>/stat; over SSH the server is in the client's tree).

Each push is repeated (--runs, default 3); the ratio compares medians.
Targets (reported, not enforced): git push no slower than 1.5 times hg
push, and helper + Python under 200 MB.  Exits 0 when every push worked,
1 otherwise.

With `--transport ssh`, both pushes go to `ssh://localhost/<path>`
instead, run by tests/bin/ssh-wrapper (`hg serve --stdio` on this
machine); the server is then part of git's process tree, and is counted
apart.

Run from the repository root after `make`, with CINNABAR_TEST_HG and
CINNABAR_CORPUS as for the tests:

    build/venv/bin/python bench/push_nginx.py [--keep] [--interval MS]
        [--runs N] [--transport http|ssh] [--processes]
"""

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

import benchlib  # noqa: E402
from benchlib import (MB, Bench, bench_parser, nginx_workdir,  # noqa: E402
                      timed)
from lib import env as test_env  # noqa: E402
from lib.git import refs  # noqa: E402
from lib.hg import HgServer  # noqa: E402

CLONE = 'git clone --no-checkout'
GIT_PUSH = 'git push (all heads)'
HG_PUSH = 'hg push'
ORIGIN = 'refs/remotes/origin/'


def classify(argv):
    """benchlib.classify, but the hg server that the ssh wrapper runs
    (a Python program too) and the wrapper itself are 'server': they are
    not git-cinnabar's."""
    words = [os.path.basename(a) for a in argv[:3]]
    if 'ssh-wrapper' in words or ('serve' in argv and '--stdio' in argv):
        return 'server'
    return _classify(argv)


# The samplers of clone_nginx call its module-level classify.
_classify = benchlib.classify
benchlib.classify = classify


class PushBench(Bench):
    """Bench.run's bookkeeping, for commands run in a given directory and
    checked by a function of their own."""

    def __init__(self, workdir, interval):
        super().__init__(workdir, interval)
        self.cpu = {}  # label -> [(client, server) CPU seconds]

    def run_in(self, label, args, cwd, sample=False, check=None,
               server_pid=None):
        """Run `args` in `cwd`; `check()` returns an error message or
        None.  Records the time of the label's successful runs, and the
        CPU time (user + system) of the command's process tree and of
        the server (`server_pid`, when given) while it ran."""
        server_before = process_cpu(server_pid)
        elapsed, code, stderr, sampler, rusage = timed(
            args, cwd, self.interval if sample else None)
        client = rusage.ru_utime + rusage.ru_stime
        server = process_cpu(server_pid) - server_before
        problem = None
        if code != 0:
            last = stderr.decode(errors='replace').splitlines()[-6:]
            problem = f'exit code {code}, stderr ends with:\n' + '\n'.join(
                line[:200] for line in last)
        elif check:
            problem = check()
        if problem:
            print(f'{label}: FAILED ({problem})', flush=True)
            self.failed = True
            return False
        self.times.setdefault(label, []).append(elapsed)
        self.cpu.setdefault(label, []).append((client, server))
        benchlib.record(label, seconds=elapsed, cpu=client, serve_cpu=server,
                        peak_mb=rusage.ru_maxrss / 1024)
        if sampler:
            self.samplers.append(sampler)
            self.max_single_rss = max(self.max_single_rss,
                                      rusage.ru_maxrss * 1024)
        load = os.getloadavg()[0]
        print(f'{label:<28} {elapsed:8.1f} s   CPU: client {client:5.1f} s'
              f', server {server:5.1f} s   load {load:.1f}', flush=True)
        return True

    def cpu_summary(self):
        """Median CPU times of each label's runs."""
        print('median CPU (user + system):')
        for label, runs in self.cpu.items():
            client = sorted(c for c, _ in runs)[len(runs) // 2]
            server = sorted(s for _, s in runs)[len(runs) // 2]
            print(f'  {label:<26} client {client:5.1f} s, server '
                  f'{server:5.1f} s')


def process_cpu(pid):
    """User + system CPU seconds of process `pid` and its waited-for
    children so far (/proc/<pid>/stat), 0 without a pid."""
    if pid is None:
        return 0.0
    try:
        with open(f'/proc/{pid}/stat') as f:
            fields = f.read().rsplit(')', 1)[1].split()
    except OSError:
        return 0.0
    # Fields 14-17 (utime, stime, cutime, cstime), counted from 1 with
    # the pid and the command first.
    ticks = sum(int(v) for v in fields[11:15])
    return ticks / os.sysconf('SC_CLK_TCK')


def sorted_nodes(hg, repo):
    out = hg('-R', repo, 'log', '-T', '{node}\n', timeout=1800).out
    return sorted(out.split())


def head_refspecs(clone):
    """`refs/remotes/origin/X:refs/heads/X` for each branch head and
    bookmark ref of the clone."""
    names = refs(clone, ORIGIN + 'branches', ORIGIN + 'bookmarks')
    return [f'{name}:refs/heads/{name[len(ORIGIN):]}' for name in names]


def same_history(hg, target, expected):
    def check():
        got = sorted_nodes(hg, target)
        if got != expected:
            return (f'the target has {len(got)} changesets, '
                    f'{len(set(expected) - set(got))} of nginx missing')
        return None
    return check


def push_to_empty(bench, hg, transport, label, args, cwd, expected,
                  number, sample):
    """Run the push `args(url)` to a new empty repository served over
    `transport`: `hg serve` for http, `hg serve --stdio` run by
    tests/bin/ssh-wrapper for ssh."""
    target = bench.workdir / f'target-{label.split()[0]}-{number}'
    hg('init', target)
    check = same_history(hg, target, expected)
    try:
        if transport == 'ssh':
            bench.run_in(label, args(f'ssh://localhost/{target}'), cwd,
                         sample, check)
            return
        with HgServer(hg, target, bench.workdir / 'serve-target') as server:
            bench.run_in(label, args(server.url), cwd, sample, check,
                         server.proc.pid)
    finally:
        shutil.rmtree(target, ignore_errors=True)


def benchmark(hg, repo, workdir, interval, runs, processes, transport):
    bench = PushBench(workdir, interval)
    expected = sorted_nodes(hg, repo)
    clone = workdir / 'clone'
    with HgServer(hg, repo, workdir / 'serve') as server:
        print(f'hg serve: {server.url} ({hg.version()})')
        elapsed, code, stderr, _, _ = timed(
            ['git', 'clone', '-q', '--no-checkout', f'hg::{server.url}',
             str(clone)], workdir)
    if code != 0:
        print(f'{CLONE}: FAILED (exit code {code})\n'
              f'{stderr.decode(errors="replace")[-3000:]}')
        return 1
    print(f'{CLONE:<28} {elapsed:8.1f} s (not compared)')
    specs = head_refspecs(clone)
    print(f'pushing {len(specs)} head refs, {len(expected)} changesets, '
          f'over {transport}')
    for number in range(runs):
        push_to_empty(bench, hg, transport, GIT_PUSH,
                      lambda url: ['git', 'push', '-q', f'hg::{url}',
                                   *specs],
                      clone, expected, number, sample=True)
        push_to_empty(bench, hg, transport, HG_PUSH,
                      lambda url: [hg.exe, '-R', str(repo), 'push', '-q',
                                   '-e', str(test_env.SSH_WRAPPER), url],
                      workdir, expected, number, sample=False)
    bench.summary()
    bench.cpu_summary()
    bench.ratio(GIT_PUSH, HG_PUSH)
    bench.memory_report()
    if transport == 'ssh' and bench.samplers:
        server = max(s.peak('server') for s in bench.samplers)
        print(f'  (not counted: hg serve --stdio and the ssh wrapper, '
              f'{server / MB:.1f} MB)')
    if processes:
        bench.process_report()
    return 1 if bench.failed else 0


def parse_args():
    parser = bench_parser(__doc__, 3, 'repeat each push; ratios use medians '
                          '(default 3)')
    parser.add_argument('--transport', choices=('http', 'ssh'),
                        default='http',
                        help='how both pushes reach the empty repository: '
                        'hg serve (default), or hg serve --stdio through '
                        'tests/bin/ssh-wrapper')
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        with nginx_workdir('cinnabar-bench-push-', args.keep) as (
                hg, workdir, repo):
            return benchmark(hg, repo, workdir, args.interval / 1000,
                             max(args.runs, 1), args.processes,
                             args.transport)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
