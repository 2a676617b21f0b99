#!/usr/bin/env python3
"""Benchmark: does the cost of a clone grow linearly with history?

Clones generated histories of several sizes over HTTP from `hg serve` on
127.0.0.1 with `hg clone -U`, our `git clone --no-checkout hg::...` (every
id verified, the default) and, when found, the reference git-cinnabar's
(--reference DIR, else CINNABAR_BENCH_REFERENCE, else another
git-cinnabar on PATH; --no-reference to skip it).
The histories come from the corpus's scale/gen-fastimport.py (see
bench/scale_repos.py: made like manifest100k.hg with hg convert, or for
speed with our `git cinnabar bundle`, kept in build/bench-data/scale/):

    2500, 5000, 10000, 20000   100k files, that many commits after the
                               first (10000 is manifest100k.hg itself;
                               20000 takes ~20 min of CPU to convert)
    8k, 16k, 33k, 66k,         3000 files, 8250 / 16500 / 33000 / 66000 /
    125k, 250k                 125000 / 250000 commits (made with `git
                               cinnabar bundle`, the shorter ones as
                               prefixes of the longest made): a stand-in
                               for a project of that many changesets
                               (250k: mozilla-unified's half)
    FILES:COMMITS[:bundle]     any other
    FILES:COMMITS:fixed        the same stream without the files it adds
                               after the first commit: a history that
                               keeps its width (3000:250000:fixed against
                               3000:33000:fixed is history alone)

For each clone: wall time, CPU (user+sys of the whole process tree, and
of `hg serve` while it ran), peak RSS of the largest process (VmHWM
sampled every --interval ms, and the kernel's rusage), and a check of the
result: the tip is the served tip, and a sample of changesets maps to
commits with the same date and message (`git cinnabar hg2git`), and the
tip's tree has as many files as hg's tip manifest.  Then, per stream,
the cost per changeset between consecutive sizes (linear growth: about
the same figure at every step) and ours / hg clone -U.

    build/venv/bin/python bench/scale_history.py [--sizes 2500,5000,33k]
        [--runs N] [--reference DIR | --no-reference] [--generate-only]
        [--keep] [--interval MS]
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from benchlib import MB, MemorySampler, bench_parser  # noqa: E402
from benchlib import classify, command_line  # noqa: E402
from benchlib import bench_workdir, find_reference, record  # noqa: E402
from benchlib import process_tree, timed as clone_timed  # noqa: E402
from lib import env as test_env  # noqa: E402
from lib.hg import HgServer  # noqa: E402
from scale_repos import GenerationError, RepoMaker, Shape  # noqa: E402
from scale_repos import describe_generation, load_average  # noqa: E402

NAMED_SIZES = {
    '2500': Shape(100000, 2500), '5000': Shape(100000, 5000),
    '10000': Shape(100000, 10000), '20000': Shape(100000, 20000),
    '8k': Shape(3000, 8250, method='bundle'),
    '16k': Shape(3000, 16500, method='bundle'),
    '33k': Shape(3000, 33000, method='bundle'),
    '66k': Shape(3000, 66000, method='bundle'),
    '125k': Shape(3000, 125000, method='bundle'),
    '250k': Shape(3000, 250000, method='bundle'),
}
DEFAULT_SIZES = '2500,5000,10000,20000,8k,16k,33k'
HG, OURS, THEIRS = 'hg clone -U', 'ours', 'git-cinnabar 0.7.5'
RSS_TARGET_MB = 150
SAMPLE = 25  # changesets checked through hg2git per clone


def parse_size(text):
    if text in NAMED_SIZES:
        return NAMED_SIZES[text]
    files, _, commits = text.partition(':')
    commits, _, method = commits.partition(':')
    if not (files.isdigit() and commits.isdigit()
            and method in ('', 'bundle', 'fixed')):
        raise ValueError(f"unknown size '{text}' (one of "
                         f"{', '.join(NAMED_SIZES)}, or "
                         f"FILES:COMMITS[:bundle|:fixed])")
    return Shape(int(files), int(commits), method=method or 'convert')


def cpu_seconds(pid, children=True):
    """utime + stime of `pid` from /proc/<pid>/stat (fields 14-15), with
    its reaped children's (16-17) when `children`; 0 when it is gone."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            fields = f.read().rsplit(')', 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(v) for v in fields[11:15 if children else 13])
    return ticks / os.sysconf('SC_CLK_TCK')


class Sampler(MemorySampler):
    """MemorySampler that also keeps the CPU time of each process, as
    last seen (the last interval of each process is missed), counted for
    the kind of program it ran last (a pid can exec another)."""

    def __init__(self, root, interval):
        super().__init__(root, interval)
        self.cpu = {}  # pid -> (seconds, kind)

    def sample(self):
        super().sample()
        for pid in process_tree(self.root):
            argv = command_line(pid)  # empty for a zombie
            seconds = cpu_seconds(pid, children=False)
            if argv and seconds:
                self.cpu[pid] = (seconds, classify(argv))

    def cpu_by_kind(self):
        kinds = {}
        for seconds, kind in self.cpu.values():
            kinds[kind] = kinds.get(kind, 0) + seconds
        return kinds


class Measure:
    """One clone: wall and CPU seconds, peak RSS, server CPU."""

    def __init__(self, elapsed, cpu, rss, serve_cpu, kinds, largest):
        self.elapsed, self.cpu, self.rss = elapsed, cpu, rss
        self.serve_cpu = serve_cpu
        self.kinds = kinds  # 'helper', 'python', 'git' -> CPU seconds
        self.largest = largest  # the largest process: kind, peak


def timed(args, cwd, env, interval, server_pid):
    """Run `args` as its own process group; return (Measure, stderr,
    exit code)."""
    serve_before = cpu_seconds(server_pid)
    elapsed, code, stderr, sampler, usage = clone_timed(
        args, cwd, interval, env=env, sampler_class=Sampler)
    rss = max([usage.ru_maxrss * 1024, *sampler.peaks.values()])
    largest = max(sampler.peaks.items(), key=lambda item: item[1],
                  default=((0, '?'), 0))
    measure = Measure(elapsed, usage.ru_utime + usage.ru_stime, rss,
                      cpu_seconds(server_pid) - serve_before,
                      sampler.cpu_by_kind(),
                      f'{largest[0][1]} {largest[1] / MB:.1f} MB')
    return measure, stderr, code


class Checker:
    """Checks a clone against the served repository."""

    def __init__(self, hg, repo, changesets):
        self.hg = hg
        step = max(1, changesets // SAMPLE)
        revs = sorted({*range(0, changesets, step), changesets - 1})
        out = hg('-R', repo, 'log', '-r', ' + '.join(map(str, revs)),
                 '-T', '{node} {date|hgdate} {desc|firstline}\n').out
        self.sample = [line.split(' ', 3) for line in out.splitlines()]
        self.tip = self.sample[-1][0]
        self.tip_files = len(hg('-R', repo, 'files', '-r', 'tip').out
                             .splitlines())

    def hg_clone(self, dest):
        tip = self.hg('-R', dest, 'log', '-r', 'tip', '-T', '{node}').out
        return None if tip == self.tip else f'tip {tip}, not {self.tip}'

    def git_clone(self, dest, env):
        def git(*args, stdin=None):
            return subprocess.run(['git', '-C', str(dest), *args],
                                  input=stdin, env=env, check=True,
                                  capture_output=True).stdout.decode()
        nodes = ''.join(f'{s[0]}\n' for s in self.sample).encode()
        commits = git('cinnabar', 'hg2git', '--batch', stdin=nodes).split()
        for (node, date, _, subject), commit in zip(self.sample, commits):
            got = git('log', '-1', '--format=%at %s', commit).rstrip('\n')
            if got != f'{date} {subject}':
                return f'{node} -> {commit}: "{got}"'
        if len(commits) != len(self.sample):
            return f'hg2git gave {len(commits)} commits'
        files = len(git('ls-tree', '-r', '--name-only',
                        commits[-1]).splitlines())
        if files != self.tip_files:
            return f'tip tree: {files} files, not {self.tip_files}'
        return None


class SizeBench:
    """The clones of one repository, each --runs times; keeps the
    fastest run of each (least disturbed by the other jobs)."""

    def __init__(self, hg, repo, shape, args, workdir, reference):
        self.hg, self.repo, self.shape = hg, repo, shape
        self.args, self.workdir = args, workdir
        self.reference = reference
        self.results = {}  # tool -> Measure
        self.failed = []

    def clones(self, url):
        env = dict(os.environ)
        yield HG, [self.hg.exe, 'clone', '-U', '-q', url], env
        yield OURS, ['git', 'clone', '-q', '--no-checkout', f'hg::{url}'], env
        if self.reference:
            ref_env = dict(env, PATH=f'{self.reference}{os.pathsep}'
                           f'{env["PATH"]}')
            yield THEIRS, ['git', 'clone', '-q', '--no-checkout',
                           f'hg::{url}'], ref_env

    def run(self):
        checker = Checker(self.hg, self.repo, self.shape.changesets)
        with HgServer(self.hg, self.repo, self.workdir / 'serve') as server:
            for _ in range(self.args.runs):
                for tool, args, env in self.clones(server.url):
                    self.one(tool, args, env, server.proc.pid, checker)

    def one(self, tool, args, env, server_pid, checker):
        dest = self.workdir / tool.replace(' ', '-')
        measure, stderr, code = timed([*args, str(dest)], self.workdir, env,
                                      self.args.interval / 1000, server_pid)
        try:
            if code:
                problem = (f'exit code {code}\n'
                           f'{stderr.decode(errors="replace")[-3000:]}')
            elif tool == HG:
                problem = checker.hg_clone(dest)
            else:
                problem = checker.git_clone(dest, env)
        except subprocess.CalledProcessError as e:
            problem = f'{e}\n{e.stderr.decode(errors="replace")[-2000:]}'
        finally:
            shutil.rmtree(dest, ignore_errors=True)
        line = (f'  {tool:<20} {measure.elapsed:7.1f} s wall, '
                f'{measure.cpu:6.1f} s CPU (+{measure.serve_cpu:.1f} s '
                f'hg serve), largest process {measure.rss / MB:6.1f} MB, '
                f'load {load_average()}')
        if problem:
            print(f'{line}\n  {tool}: FAILED: {problem}', flush=True)
            self.failed.append(tool)
            return
        kinds = ', '.join(f'{k} {v:.1f}' for k, v in
                          sorted(measure.kinds.items()))
        print(f'{line}, checked\n  {"":<20} CPU seen per process kind: '
              f'{kinds}; largest seen: {measure.largest}', flush=True)
        record(f'{tool}, {self.shape}', seconds=measure.elapsed,
               cpu=measure.cpu, serve_cpu=measure.serve_cpu,
               peak_mb=measure.rss / MB)
        best = self.results.get(tool)
        if best is None or measure.elapsed < best.elapsed:
            self.results[tool] = measure


def per_changeset(a, b, value):
    """Growth of `value` between two SizeBench results, per changeset."""
    return (value(b) - value(a)) / (b.shape.changesets - a.shape.changesets)


def growth_report(benches):
    """Per stream, what each step in size costs per changeset."""
    streams = {}
    for bench in benches:
        key = (bench.shape.files, bench.shape.seed, bench.shape.method)
        streams.setdefault(key, []).append(bench)
    for (files, seed, method), group in streams.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda b: b.shape.commits)
        print(f'\n{files} files (seed {seed}, {method}): cost per '
              f'changeset between consecutive sizes (wall ms / CPU ms '
              f'incl. hg serve / RSS bytes of the largest process)')
        for a, b in zip(group, group[1:]):
            cells = []
            for tool in (HG, OURS, THEIRS):
                if tool not in a.results or tool not in b.results:
                    continue
                ra, rb = a.results[tool], b.results[tool]
                span = b.shape.changesets - a.shape.changesets
                wall = (rb.elapsed - ra.elapsed) / span * 1000
                cpu = ((rb.cpu + rb.serve_cpu) - (ra.cpu + ra.serve_cpu)) \
                    / span * 1000
                rss = (rb.rss - ra.rss) / span
                cells.append(f'{tool}: {wall:.2f} / {cpu:.2f} / {rss:.0f}')
            print(f'  {a.shape.changesets:>6} -> {b.shape.changesets:<6} '
                  + ';  '.join(cells))


def summary_table(benches):
    print(f'\n| files | changesets | {HG} | {OURS} | {THEIRS} |')
    print('|---|---|---|---|---|')
    for bench in benches:
        hg = bench.results.get(HG)
        cells = []
        for tool in (HG, OURS, THEIRS):
            r = bench.results.get(tool)
            if r is None:
                cells.append('failed' if tool in bench.failed else '-')
                continue
            ratio = ''
            if hg and tool != HG:
                ratio = (f' ({r.elapsed / hg.elapsed:.2f}x wall, '
                         f'{r.cpu / hg.cpu:.2f}x CPU)')
            over = ' OVER' if r.rss > RSS_TARGET_MB * MB else ''
            cells.append(f'{r.elapsed:.1f} s, CPU {r.cpu:.1f}+'
                         f'{r.serve_cpu:.1f} s{ratio}, '
                         f'{r.rss / MB:.0f} MB{over}')
        print(f'| {bench.shape.files} | {bench.shape.changesets} | '
              + ' | '.join(cells) + ' |')
    print(f'(CPU: the clone\'s process tree + hg serve; MB: largest single '
          f'process, target < {RSS_TARGET_MB} MB)')


def commit_measured():
    top = Path(__file__).resolve().parents[1]
    head = subprocess.run(['git', '-C', str(top), 'rev-parse', '--short',
                           'HEAD'], capture_output=True).stdout.decode()
    dirty = subprocess.run(['git', '-C', str(top), 'status', '--porcelain',
                            '--untracked-files=no'],
                           capture_output=True).stdout.strip()
    return head.strip() + (' (with uncommitted changes)' if dirty else '')


def parse_args():
    parser = bench_parser(__doc__, 1, 'repeat each clone; the fastest run '
                          'is kept (default 1)', memory=False)
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument('--sizes', default=DEFAULT_SIZES,
                        help=f'comma-separated sizes (default '
                        f'{DEFAULT_SIZES})')
    parser.add_argument('--reference', help='directory of a git-cinnabar '
                        'to compare with')
    parser.add_argument('--no-reference', action='store_true',
                        help='do not clone with another git-cinnabar')
    parser.add_argument('--generate-only', action='store_true',
                        help='make the repositories, measure nothing')
    parser.add_argument('--interval', type=float, default=20,
                        help='memory sampling interval in ms (default 20)')
    args = parser.parse_args()
    try:
        args.shapes = [parse_size(s) for s in args.sizes.split(',') if s]
    except ValueError as e:
        parser.error(str(e))
    args.shapes.sort(key=lambda s: (-s.files, s.seed, s.commits))
    return args


def make_all(maker, shapes):
    """Make the repositories before measuring anything, the longest of
    each stream first (the shorter ones are its prefixes)."""
    for shape in sorted(shapes, key=lambda s: -s.commits):
        print(f'{shape}: {maker.repo(shape)}', flush=True)


def measure_all(hg, maker, args, workdir):
    reference = None
    if not args.no_reference:
        reference = find_reference(args.reference)
        if reference and not (reference / 'git-remote-hg').exists():
            # Else git would run our git-remote-hg, found later on PATH.
            print(f'error: {reference} has no git-remote-hg (git-cinnabar '
                  f'0.7.5 is one binary: link it as git-remote-hg beside '
                  f'it)', file=sys.stderr)
            return 1
    print(f'hg: {hg.version()}; reference: {reference or "none"}; '
          f'commit measured: {commit_measured()}; load {load_average()}',
          flush=True)
    make_all(maker, args.shapes)
    benches = []
    for shape in args.shapes:
        repo = maker.repo(shape)
        print(f'{shape}:', flush=True)
        bench = SizeBench(hg, repo, shape, args, workdir, reference)
        bench.run()
        benches.append(bench)
    summary_table(benches)
    growth_report(benches)
    return 1 if any(b.failed for b in benches) else 0


def main():
    args = parse_args()
    try:
        maker = RepoMaker(test_env.hg_executable(), test_env.corpus_dir())
        with bench_workdir('cinnabar-bench-history-', args.keep) as (
                hg, workdir):
            print(f'repositories: {describe_generation()}', flush=True)
            if args.generate_only:
                make_all(maker, args.shapes)
                return 0
            return measure_all(hg, maker, args, workdir)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1
    except GenerationError as e:
        print(f'error: making a repository: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
