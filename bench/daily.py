#!/usr/bin/env python3
"""Benchmark: daily work on big repositories, fetches and pushes.

For manifest100k.hg (100k files, 10k changesets) and nginx.hg from the
corpus (--repo picks one), in one run, each timed --runs times in turns
(medians, the machine being shared), with the peak RSS of the largest
process of each (sampled as bench/clone_nginx.py does) and its CPU
(user + system of its process tree):

- fetch: a client that lacks the last N changesets of the served
  repository (N = 1, 10, 100, 1000; --n picks some) fetches them: `git
  fetch` by ours, by git-cinnabar 0.7.5 when found (--reference DIR, or
  CINNABAR_BENCH_REFERENCE, or another git-cinnabar on PATH), and `hg
  pull` by an hg clone lacking the same changesets (and by a copy of ours
  at another commit, --before DIR: its launchers and helper, timed as
  `before` from ours's prepared clones);
- push: one commit on top of the default branch's tip, touching K files
  (K = 1, 10, 1000; --files picks some: each gets a line appended), is
  pushed by ours, by 0.7.5 (the same git commit, so the same hg
  changeset, checked), then by `hg push` from an hg clone that got that
  changeset from the server ours pushed it to.

The served repository is always the whole history: a client lacking the
last N is the same as a server lacking them that gets them.  Each round
starts from a prepared state: git clients are copied (objects hard
linked) from the cache, hg clones and the server are put back with `hg
strip` after each pull or push.  The prepared repositories (hg clones of
the bundle, git clones at each N made by a clone then fetches) are kept
under --cache (default build/bench-daily) for the next run: delete it
after changing how ours stores its metadata.

    build/venv/bin/python bench/daily.py [--repo manifest100k|nginx]
        [--n 100 ...] [--files 10 ...] [--runs N] [--reference DIR]
        [--before DIR] [--cache DIR] [--no-fetch] [--no-push]
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from benchlib import MB, bench_parser, bench_workdir  # noqa: E402
from benchlib import find_reference, record, timed  # noqa: E402
from lib import env as test_env  # noqa: E402
from lib.hg import HgServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BUNDLES = {'manifest100k': ('scale', 'manifest100k.hg'),
           'nginx': ('nginx.hg',)}
COUNTS = (1000, 100, 10, 1)
FILES = (1, 10, 1000)
TIP = 'refs/remotes/origin/branches/default/tip'
PUSHED = 'refs/heads/branches/default/tip'
# Where the commit to push is made: a clone's own branch may have the
# name of the pushed ref.
MADE = 'refs/bench/daily'
STRIP = ('--config', 'extensions.strip=', 'strip', '-q', '--no-backup')
# The pushed commit: the same bytes in every client, so the same hg
# changeset whoever converts it.
SIGNATURE = 'Daily Bench <bench@example.com> 1700000000 +0000'


def run(args, cwd=None, env=None, stdin=None):
    """stdout of `args`, which must succeed."""
    return subprocess.run(args, cwd=cwd, env=env, input=stdin, check=True,
                          stdout=subprocess.PIPE).stdout


class Tools:
    """How each side is run: PATH for ours and for the reference."""

    def __init__(self, hg, reference, before=None):
        self.hg = hg
        base = os.environ['PATH']
        self.paths = {'ours': os.pathsep.join([str(ROOT), base])}
        if before:
            self.paths['before'] = os.pathsep.join([str(before), base])
        if reference:
            self.paths['0.7.5'] = os.pathsep.join([str(reference), base])

    def clones_of(self, kind):
        """Whose prepared clones `kind` starts from: `before` is ours
        at another commit, with the same metadata."""
        return 'ours' if kind == 'before' else kind

    def env(self, kind):
        return dict(os.environ, PATH=self.paths[kind])

    def git(self, kind, *args, cwd=None, stdin=None):
        return run(['git', *args], cwd, self.env(kind), stdin)


def tip_rev(hg, repo):
    return int(hg('-R', repo, 'log', '-r', 'tip', '-T', '{rev}').out)


def strip_to(hg, repo, count):
    """Remove the changesets of `repo` from revision `count` on."""
    if tip_rev(hg, repo) >= count:
        hg('-R', repo, *STRIP, '-r', f'{count}:', timeout=900)


def copy_git(src, dest):
    """A copy of the git clone `src`, its objects hard linked (git never
    writes into an object file or pack)."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for entry in src.iterdir():
        if entry.name == '.git':
            (dest / '.git').mkdir()
            for item in entry.iterdir():
                flags = '-al' if item.name == 'objects' else '-a'
                run(['cp', flags, str(item), str(dest / '.git')])
        else:
            run(['cp', '-a', str(entry), str(dest)])
    return dest


class Prepared:
    """The cache of one repository: hg clones of the whole history and at
    each N, git clones by each kind at each N (0: everything)."""

    def __init__(self, hg, tools, cache, name, counts):
        self.hg, self.tools = hg, tools
        self.dir = cache / name
        self.bundle = test_env.corpus_dir().joinpath(*BUNDLES[name])
        self.full = self.dir / 'full'
        self.counts = sorted(set(counts) | {0}, reverse=True)

    def done(self, path):
        return (path / '.bench-ready').exists()

    def mark(self, path):
        (path / '.bench-ready').touch()

    def make(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        if not self.done(self.full):
            shutil.rmtree(self.full, ignore_errors=True)
            self.hg.repo_from_bundle(self.bundle, self.full)
            self.mark(self.full)
        self.total = tip_rev(self.hg, self.full) + 1
        print(f'{self.bundle.name}: {self.total} changesets', flush=True)
        for count in self.counts:
            self.hg_clone(count)
        for kind in set(map(self.tools.clones_of, self.tools.paths)):
            self.git_clones(kind)

    def hg_path(self, count):
        return self.dir / f'hg-{count}'

    def git_path(self, kind, count):
        return self.dir / f'git-{self.tools.clones_of(kind)}-{count}'

    def hg_clone(self, count):
        """An hg clone lacking the last `count` changesets (hard linked:
        hg copies a linked revlog before writing to it)."""
        dest = self.hg_path(count)
        if not self.done(dest):
            shutil.rmtree(dest, ignore_errors=True)
            self.hg('clone', '-U', '-q', self.full, dest, timeout=900)
            strip_to(self.hg, dest, self.total - count)
            self.mark(dest)
        return dest

    def git_clones(self, kind):
        """Git clones by `kind` at each N: a clone of a server lacking
        the most, then fetches from it as it gets more."""
        stage = self.dir / 'stage'
        previous = None
        for count in self.counts:
            dest = self.git_path(kind, count)
            if self.done(dest):
                previous = dest
                continue
            shutil.rmtree(stage, ignore_errors=True)
            self.hg('clone', '-U', '-q', self.full, stage, timeout=900)
            strip_to(self.hg, stage, self.total - count)
            with HgServer(self.hg, stage, self.dir / 'serve') as server:
                if previous is None:
                    shutil.rmtree(dest, ignore_errors=True)
                    self.tools.git(kind, 'clone', '-q', '--no-checkout',
                                   f'hg::{server.url}', str(dest))
                    self.tools.git(kind, 'config', 'gc.auto', '0',
                                   cwd=dest)
                else:
                    copy_git(previous, dest)
                    self.tools.git(kind, 'remote', 'set-url', 'origin',
                                   f'hg::{server.url}', cwd=dest)
                    self.tools.git(kind, 'fetch', '-q', 'origin', cwd=dest)
            print(f'prepared {dest.name}', flush=True)
            self.mark(dest)
            previous = dest
        shutil.rmtree(stage, ignore_errors=True)


class Results:
    def __init__(self, name):
        self.name = name  # the repository, which --json's labels start with
        self.runs = {}  # label -> [(seconds, cpu, largest process)]
        self.failed = False

    def timed(self, label, args, cwd, env=None, interval=0.01):
        elapsed, code, stderr, sampler, rusage = timed(
            args, cwd, interval, env)
        if code != 0:
            last = stderr.decode(errors='replace').splitlines()[-5:]
            print(f'{label}: FAILED (exit code {code})\n  '
                  + '\n  '.join(last), flush=True)
            self.failed = True
            return False
        cpu = rusage.ru_utime + rusage.ru_stime
        peak = max(sampler.peaks.values(), default=0)
        self.runs.setdefault(label, []).append((elapsed, cpu, peak))
        record(f'{self.name}: {label}', seconds=elapsed, cpu=cpu,
               peak_mb=peak / MB)
        print(f'{label:<34} {elapsed:7.3f} s  CPU {cpu:6.3f} s  '
              f'{peak / MB:6.1f} MB  load {os.getloadavg()[0]:.1f}',
              flush=True)
        return True

    def median(self, label, index=0):
        values = sorted(r[index] for r in self.runs[label])
        return values[len(values) // 2]

    def summary(self):
        print(f'{self.name}: medians of each kind\'s rounds')
        for label, runs in self.runs.items():
            print(f'  {label:<34} {self.median(label):7.3f} s  CPU '
                  f'{self.median(label, 1):6.3f} s  largest process '
                  f'{self.median(label, 2) / MB:6.1f} MB  ({len(runs)} '
                  f'runs)')
        for label in self.runs:
            if not label.startswith('ours'):
                continue
            for other in ('before', '0.7.5', 'hg'):
                theirs = other + label[len('ours'):]
                if theirs in self.runs:
                    print(f'  {label} / {theirs}: '
                          f'{self.median(label) / self.median(theirs):.2f}')


def fetch_round(prepared, results, server, count):
    tools, hg = prepared.tools, prepared.hg
    for kind in tools.paths:
        work = copy_git(prepared.git_path(kind, count),
                        prepared.dir / 'work')
        tools.git(kind, 'remote', 'set-url', 'origin', f'hg::{server.url}',
                  cwd=work)
        if results.timed(f'{kind} fetch {count}',
                         ['git', 'fetch', '-q', 'origin'], work,
                         tools.env(kind)):
            got = tools.git(kind, 'rev-parse', TIP, cwd=work)
            want = tools.git(kind, 'rev-parse', TIP,
                             cwd=prepared.git_path(kind, 0))
            if got != want:
                print(f'{kind} fetch {count}: WRONG TIP {got} vs {want}')
                results.failed = True
    client = prepared.hg_path(count)
    results.timed(f'hg pull {count}', [hg.exe, '-R', str(client), 'pull',
                                       '-q', server.url], prepared.dir)
    strip_to(hg, client, prepared.total - count)


def make_commit(tools, kind, work, files):
    """A commit on the default tip appending a line to `files` files
    spread over the tree; its id."""
    parent = tools.git(kind, 'rev-parse', TIP, cwd=work).decode().strip()
    names = tools.git(kind, 'ls-tree', '-r', '--name-only', '-z', parent,
                      cwd=work).split(b'\0')[:-1]
    chosen = [names[i * len(names) // files] for i in range(files)]
    blobs = tools.git(kind, 'cat-file', '--batch', cwd=work,
                      stdin=b''.join(parent.encode() + b':' + n + b'\n'
                                     for n in chosen))
    stream = [f'commit {MADE}\nauthor {SIGNATURE}\ncommitter '
              f'{SIGNATURE}\ndata 12\ndaily bench\nfrom {parent}\n'.encode()]
    for name in chosen:
        header, _, blobs = blobs.partition(b'\n')
        size = int(header.split()[2])
        content, blobs = blobs[:size] + b'daily bench\n', blobs[size + 1:]
        stream.append(b'M 100644 inline ' + name + b'\n'
                      + f'data {len(content)}\n'.encode() + content + b'\n')
    tools.git(kind, 'fast-import', '--quiet', cwd=work,
              stdin=b''.join(stream))
    return tools.git(kind, 'rev-parse', MADE, cwd=work).decode().strip()


def push_round(prepared, results, server, files):
    tools, hg = prepared.tools, prepared.hg
    pushed = {}
    for kind in tools.paths:
        work = copy_git(prepared.git_path(kind, 0), prepared.dir / 'work')
        tools.git(kind, 'remote', 'set-url', 'origin', f'hg::{server.url}',
                  cwd=work)
        commit = make_commit(tools, kind, work, files)
        if results.timed(f'{kind} push {files} files',
                         ['git', 'push', '-q', 'origin',
                          f'{commit}:{PUSHED}'], work, tools.env(kind)):
            pushed[kind] = hg('-R', server.repo, 'log', '-r', 'tip', '-T',
                              '{node}').out
        if len(pushed) == 1:
            hg('-R', prepared.hg_path(0), 'pull', '-q', '-r', 'tip',
               server.repo)
        strip_to(hg, server.repo, prepared.total)
    if len(set(pushed.values())) > 1:
        print(f'push {files} files: DIFFERENT CHANGESETS {pushed}')
        results.failed = True
    client = prepared.hg_path(0)
    results.timed(f'hg push {files} files',
                  [hg.exe, '-R', str(client), 'push', '-q', '-r', 'tip',
                   server.url], prepared.dir)
    strip_to(hg, server.repo, prepared.total)
    strip_to(hg, client, prepared.total)


def benchmark(hg, tools, name, args):
    prepared = Prepared(hg, tools, args.cache, name, args.n)
    prepared.make()
    served = prepared.dir / 'served'
    shutil.rmtree(served, ignore_errors=True)
    hg('clone', '-U', '-q', prepared.full, served, timeout=900)
    results = Results(name)
    with HgServer(hg, served, prepared.dir / 'serve') as server:
        print(f'hg serve: {server.url} ({hg.version()})', flush=True)
        for _ in range(args.runs):
            for count in (args.n if args.fetch else ()):
                fetch_round(prepared, results, server, count)
            for files in (args.files if args.push else ()):
                push_round(prepared, results, server, files)
    shutil.rmtree(served, ignore_errors=True)
    shutil.rmtree(prepared.dir / 'work', ignore_errors=True)
    results.summary()
    return results.failed


def parse_args():
    parser = bench_parser(__doc__, 3, 'rounds; medians are printed '
                          '(default 3)', memory=False)
    parser.add_argument('--repo', choices=sorted(BUNDLES), action='append',
                        help='the repository (default: both)')
    parser.add_argument('--n', type=int, action='append',
                        help=f'changesets to fetch (default: {COUNTS})')
    parser.add_argument('--files', type=int, action='append',
                        help=f'files the pushed commit touches (default: '
                        f'{FILES})')
    parser.add_argument('--reference', help='directory of git-cinnabar '
                        '0.7.5 (git-cinnabar, git-remote-hg)')
    parser.add_argument('--before', type=Path,
                        help='a copy of ours at another commit (its '
                        'launchers and helper), timed as `before`')
    parser.add_argument('--cache', type=Path,
                        default=ROOT / 'build' / 'bench-daily',
                        help='where the prepared repositories are kept '
                        '(default build/bench-daily)')
    parser.add_argument('--no-fetch', dest='fetch', action='store_false')
    parser.add_argument('--no-push', dest='push', action='store_false')
    args = parser.parse_args()
    args.n = sorted(args.n or COUNTS, reverse=True)
    args.files = args.files or list(FILES)
    args.cache = args.cache.resolve()
    return args


def main():
    args = parse_args()
    try:
        with bench_workdir('cinnabar-bench-daily-', args.keep) as (
                hg, workdir):
            reference = find_reference(args.reference)
            print(f'reference: {reference or "none found"}')
            tools = Tools(hg, reference, args.before)
            failed = False
            for name in args.repo or sorted(BUNDLES):
                failed |= benchmark(hg, tools, name, args)
            return 1 if failed else 0
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
