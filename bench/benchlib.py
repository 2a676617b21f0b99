"""What the benchmarks share: timing, CPU and peak memory of a command's
process tree, the work directory and the served repository, the
reference git-cinnabar to compare with, and the results as JSON.

Named benchlib, not lib: the scripts also import the test suite's `lib`
package (tests/lib), which a bench/lib.py would hide.

- timed(): wall seconds from time.monotonic(), CPU (user + system) and
  the command tree's peak resident set size from os.wait4()'s rusage,
  the peak taken through /usr/bin/time when it exists (see TIME below);
  MemorySampler: VmHWM/VmRSS of every process of the tree from
  /proc/<pid>/status every few milliseconds.
- children_cpu(): CPU of the reaped children, for scripts that run
  their commands through subprocess.
- find_reference(): the directory of git-cinnabar 0.7.5 (its
  git-cinnabar and a git-remote-hg link to it), from --reference, else
  CINNABAR_BENCH_REFERENCE, else the first such directory on PATH that
  is not this tree.
- record() and BenchParser: every script takes --json FILE; what it
  record()s is written there when it ends (bench/tables.py makes
  bench/README.md's tables of it).
"""

import argparse
import atexit
import contextlib
import datetime
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / 'tests'))

from lib import env as test_env  # noqa: E402
from lib.hg import Hg, HgServer  # noqa: E402
from lib.proc import kill_group  # noqa: E402

REFERENCE_ENV = 'CINNABAR_BENCH_REFERENCE'

TIME_RATIO_TARGET = 1.5
RSS_TARGET_MB = 200
MB = 1024 * 1024


def children(pid):
    """Direct children of `pid`, from /proc/<pid>/task/*/children."""
    found = []
    try:
        tasks = os.listdir(f'/proc/{pid}/task')
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f'/proc/{pid}/task/{tid}/children') as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return found


def process_tree(root):
    """`root` and all its descendants alive now."""
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo += children(pid)
    return pids


def read_status(pid):
    """(VmHWM, VmRSS) of `pid` in bytes, or None when it is gone."""
    values = {}
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                key, _, rest = line.partition(':')
                if key in ('VmHWM', 'VmRSS'):
                    values[key] = int(rest.split()[0]) * 1024
    except OSError:
        return None
    if 'VmHWM' not in values:
        return None  # a zombie: its memory is already gone
    return values['VmHWM'], values['VmRSS']


def command_line(pid):
    """The argv of `pid`, or None when it is gone."""
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            return [a.decode(errors='replace')
                    for a in f.read().split(b'\0') if a]
    except OSError:
        return None


def classify(argv):
    """'helper', 'python' or 'git' (anything else), from an argv."""
    names = [os.path.basename(a) for a in argv[:2]] or ['']
    if 'git-cinnabar-helper' in names:
        return 'helper'
    if names[0].startswith('python') or {'git-remote-hg',
                                         'git-cinnabar'} & set(names):
        return 'python'
    return 'git'


class MemorySampler:
    """Samples the memory of a process tree in a thread until it ends."""

    def __init__(self, root, interval):
        self.root = root
        self.interval = interval
        # (pid, kind) -> VmHWM.  A process is classified at each sample:
        # a pid can exec another program (pyenv's shim execs python3).
        self.peaks = {}
        self.commands = {}  # (pid, kind) -> command line
        self.ours_at_once = 0
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._done = threading.Event()

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._done.set()
        self._thread.join()

    def _loop(self):
        while not self._done.is_set():
            self.sample()
            time.sleep(self.interval)

    def sample(self):
        ours = 0
        for pid in process_tree(self.root):
            argv, status = command_line(pid), read_status(pid)
            if argv is None or status is None:
                continue
            kind = classify(argv)
            self.commands.setdefault((pid, kind), ' '.join(argv)[:100])
            hwm, rss = status
            self.peaks[pid, kind] = max(hwm, self.peaks.get((pid, kind), 0))
            if kind in ('helper', 'python'):
                ours += rss
        self.ours_at_once = max(self.ours_at_once, ours)

    def peak(self, kind):
        return max((v for (_, k), v in self.peaks.items() if k == kind),
                   default=0)


# The kernel's peak of a process spawned from this one counts this one's
# own peak: exec records the peak of the memory it leaves (ours, shared by
# vfork/posix_spawn, or copied by fork) as the child's. /usr/bin/time forks
# the command from its own small image and writes the tree's true peak.
TIME = '/usr/bin/time'


def timed(args, cwd, interval=None, env=None, sampler_class=None):
    """Run `args` (in `env`, default ours) as its own process group;
    return (seconds, returncode, stderr, sampler, rusage).  With an
    `interval`, a `sampler_class` (MemorySampler by default) watches the
    process tree.  rusage's ru_maxrss is the peak of the command's tree
    alone, through /usr/bin/time (0 without it)."""
    with tempfile.NamedTemporaryFile('r') as peak:
        result = _timed([TIME, '-q', '-f', '%M', '-o', peak.name, *args]
                        if os.path.exists(TIME) else args,
                        cwd, interval, env, sampler_class)
        return (*result[:4], _with_peak(result[4], peak.read()))


def _with_peak(rusage, text):
    """`rusage` with ru_maxrss set to the kilobytes in `text` (or 0)."""
    fields = list(rusage)
    fields[2] = int(text) if text.strip().isdigit() else 0
    return resource.struct_rusage(fields)


def _timed(args, cwd, interval, env, sampler_class):
    start = time.monotonic()
    proc = subprocess.Popen(args, cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    sampler = ((sampler_class or MemorySampler)(proc.pid, interval).start()
               if interval else None)
    stderr = []
    reader = threading.Thread(target=lambda: stderr.append(
        proc.stderr.read()), daemon=True)
    reader.start()
    _, status, rusage = os.wait4(proc.pid, 0)
    elapsed = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    kill_group(proc.pid)
    reader.join()
    if sampler:
        sampler.stop()
    return elapsed, proc.returncode, b''.join(stderr), sampler, rusage


class Bench:
    def __init__(self, workdir, interval):
        self.workdir = workdir
        self.interval = interval
        self.times = {}
        self.samplers = []
        self.max_single_rss = 0
        self.failed = False

    def run(self, label, args, sample=False, load=False):
        """Time `args` (given the destination to make), watching its
        memory for memory_report() when `sample`; `load`: watched the
        same, its figures dropped, so that a command timed against a
        sampled one bears the sampler's CPU as well (reading /proc every
        few milliseconds costs a few percent of a core)."""
        dest = self.workdir / label.replace(' ', '-')
        elapsed, code, stderr, sampler, rusage = timed(
            [*args, str(dest)], self.workdir,
            self.interval if sample or load else None)
        if not sample:
            sampler = None
        shutil.rmtree(dest, ignore_errors=True)
        if code != 0:
            print(f'{label}: FAILED (exit code {code})\n'
                  f'{stderr.decode(errors="replace")[-3000:]}')
            self.failed = True
            return
        self.times.setdefault(label, []).append(elapsed)
        if sampler:
            self.samplers.append(sampler)
            self.max_single_rss = max(self.max_single_rss,
                                      rusage.ru_maxrss * 1024)
        record(label, seconds=elapsed,
               cpu=rusage.ru_utime + rusage.ru_stime,
               peak_mb=rusage.ru_maxrss / 1024)
        print(f'{label:<28} {elapsed:8.1f} s', flush=True)

    def median(self, label):
        times = sorted(self.times[label])
        return times[len(times) // 2]

    def summary(self):
        if len(next(iter(self.times.values()), [])) < 2:
            return
        print('medians:')
        for label in self.times:
            runs = ', '.join(f'{t:.1f}' for t in self.times[label])
            print(f'  {label:<26} {self.median(label):8.1f} s  '
                  f'(runs: {runs})')

    def ratio(self, ours, theirs):
        if ours in self.times and theirs in self.times:
            value = self.median(ours) / self.median(theirs)
            verdict = 'ok' if value <= TIME_RATIO_TARGET else 'OVER TARGET'
            print(f'{ours} / {theirs}: {value:.2f} '
                  f'(target <= {TIME_RATIO_TARGET}: {verdict})')

    def memory_report(self, target_mb=RSS_TARGET_MB):
        """Peak memory; `target_mb` None: no target (a bench whose
        memory follows its one big file)."""
        if not self.samplers:
            return
        helper = max(s.peak('helper') for s in self.samplers)
        python = max(s.peak('python') for s in self.samplers)
        git = max(s.peak('git') for s in self.samplers)
        at_once = max(s.ours_at_once for s in self.samplers)
        both = max(s.peak('helper') + s.peak('python')
                   for s in self.samplers)
        print(f'peak RSS (VmHWM sampled every {self.interval * 1000:.0f} ms)')
        print(f'  git-cinnabar-helper           {helper / MB:8.1f} MB')
        print(f'  Python (git-remote-hg)        {python / MB:8.1f} MB')
        print(f'  helper + Python, summed peaks {both / MB:8.1f} MB')
        print(f'  helper + Python, at one time  {at_once / MB:8.1f} MB')
        print(f'  git itself (largest process)  {git / MB:8.1f} MB')
        print(f'  largest single process, kernel rusage '
              f'{self.max_single_rss / MB:.1f} MB')
        if target_mb is not None:
            verdict = 'ok' if both < target_mb * MB else 'OVER TARGET'
            print(f'helper + Python: {both / MB:.1f} MB '
                  f'(target < {target_mb} MB: {verdict})')
        if not helper:
            print('note: no git-cinnabar-helper process was seen')

    def process_report(self):
        for number, sampler in enumerate(self.samplers, 1):
            print(f'processes of sampled clone {number} (peak RSS):')
            for key, peak in sorted(sampler.peaks.items()):
                print(f'  {key[0]:>7} {key[1]:<6} {peak / MB:7.1f} MB  '
                      f'{sampler.commands[key]}')


def prepare(hg, bundle, repo):
    """Make the hg repository `repo` from the bundle file `bundle`,
    saying how long it took."""
    start = time.monotonic()
    hg.repo_from_bundle(bundle, repo)
    count = len(hg.nodes(repo))
    print(f'{bundle.name}: {count} changesets, unbundled in '
          f'{time.monotonic() - start:.1f} s', flush=True)
    return repo


def bench_parser(doc, runs, runs_help, memory=True):
    """The options the nginx benchmarks share: --keep, --runs (default
    `runs`), and with `memory` --processes and --interval."""
    parser = BenchParser(description=doc.split('\n')[0])
    parser.add_argument('--keep', action='store_true',
                        help='keep the work directory')
    parser.add_argument('--runs', type=int, default=runs, help=runs_help)
    if memory:
        parser.add_argument('--processes', action='store_true',
                            help='list every process seen, with its peak '
                            'RSS')
        parser.add_argument('--interval', type=float, default=10,
                            help='memory sampling interval in ms '
                            '(default 10)')
    return parser


def find_reference(given, first=()):
    """The directory of another git-cinnabar to compare with (with its
    git-cinnabar and git-remote-hg), or None: `given` (--reference) when
    set, else CINNABAR_BENCH_REFERENCE when set, else the
    first of the `first` directories, then of PATH, that has both and is
    not this project's top directory. A given directory without
    git-remote-hg is refused: git would run ours, later on PATH, in its
    place (git-cinnabar 0.7.5 is one binary acting on its name: link it
    as git-remote-hg beside it)."""
    given = given or os.environ.get(REFERENCE_ENV)
    if given:
        if not (Path(given) / 'git-remote-hg').exists():
            raise SystemExit(f'error: {given} has no git-remote-hg (link '
                             f'its git-cinnabar as git-remote-hg beside it)')
        return Path(given).resolve()
    candidates = list(first) + [
        Path(p) for p in os.environ.get('PATH', '').split(os.pathsep) if p]
    top = Path(__file__).resolve().parents[1]
    for directory in candidates:
        exe = directory / 'git-cinnabar'
        if (exe.is_file() and os.access(exe, os.X_OK)
                and (directory / 'git-remote-hg').exists()
                and directory.resolve() != top):
            return directory.resolve()
    return None


@contextlib.contextmanager
def bench_workdir(prefix, keep):
    """(hg, a new work directory), with the environment isolated as for
    the tests; the work directory is removed afterwards unless `keep`.
    Raises test_env.SetupError when hg cannot be found."""
    hg = Hg(test_env.hg_executable())
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.update(test_env.isolated_env(workdir / 'home', hg.exe))
    try:
        yield hg, workdir
    finally:
        if keep:
            print(f'work directory kept: {workdir}')
        else:
            shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def nginx_workdir(prefix, keep):
    """(hg, work directory, nginx repository made there from the corpus),
    as bench_workdir.  Raises test_env.SetupError when hg or the corpus
    cannot be found."""
    corpus = test_env.corpus_dir()
    with bench_workdir(prefix, keep) as (hg, workdir):
        yield hg, workdir, prepare(hg, corpus / 'nginx.hg',
                                   workdir / 'nginx')


@contextlib.contextmanager
def served_bundle(prefix, bundle, keep, reference=None, first=()):
    """(hg, work directory, HgServer, reference): the hg repository made
    from the bundle file `bundle` in a bench_workdir (or `bundle` itself
    when it is an hg repository, served as it is: bench/scale_repos.py's),
    served on 127.0.0.1, and the directory of the git-cinnabar to compare
    with (find_reference(reference, first), None when none is found).
    Raises test_env.SetupError when hg cannot be found."""
    with bench_workdir(prefix, keep) as (hg, workdir):
        if (bundle / '.hg').is_dir():
            repo = bundle
            print(f'{bundle}: {len(hg.nodes(repo))} changesets', flush=True)
        else:
            repo = prepare(hg, bundle, workdir / 'repo')
        with HgServer(hg, repo, workdir / 'serve') as server:
            yield hg, workdir, server, find_reference(reference, first)


def children_cpu():
    """CPU seconds (user + system) of this process's reaped children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


RESULTS = {'measurements': []}


def record(label, **values):
    """Keep one measurement (`label`: what was run; `values`: seconds,
    cpu, peak_mb... as numbers) for --json."""
    RESULTS['measurements'].append({'label': label, **values})


def _commit():
    try:
        return subprocess.run(
            ['git', '-C', str(TOP), 'rev-parse', '--short', 'HEAD'],
            capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _shown_argv(argv):
    """The options as a table's caption shows them: without --json and
    with absolute paths cut to their last part (no one machine's
    layout in bench/README.md)."""
    shown, skip = [], False
    for arg in argv:
        if skip or arg == '--json':
            skip = not skip and arg == '--json'
            continue
        if arg.startswith('--json='):
            continue
        shown.append(Path(arg).name if arg.startswith('/') else arg)
    return shown


def write_json(path, script):
    """Write the recorded measurements to `path`, with when, on what
    commit and at what load they were made."""
    RESULTS.update(
        script=script,
        date=datetime.datetime.now(datetime.timezone.utc).strftime(
            '%Y-%m-%d %H:%M UTC'),
        commit=_commit(), load=os.getloadavg()[0],
        argv=_shown_argv(sys.argv[1:]))
    with open(path, 'w') as f:
        json.dump(RESULTS, f, indent=1)
        f.write('\n')


class BenchParser(argparse.ArgumentParser):
    """An ArgumentParser with --json FILE; parse_args() arranges for the
    recorded measurements to be written there at exit."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_argument('--json', metavar='FILE', type=Path,
                          help='write the measurements there as JSON '
                          '(bench/tables.py makes tables of them)')

    def parse_args(self, *args, **kwargs):
        parsed = super().parse_args(*args, **kwargs)
        if parsed.json:
            atexit.register(write_json, parsed.json,
                            Path(sys.argv[0]).name)
        return parsed
