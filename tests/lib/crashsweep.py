"""Crash sweeps: a command killed, or its writes failed, at each of its
write-like system calls in turn, and what that leaves.

strace's fault injection (`-e inject=SET:signal=KILL:when=N`, or
`:error=EIO` / `:error=ENOSPC`) acts on the N-th call of each system call
of SET in each traced process (strace counts per syscall and per
process). So a first run, unfaulted, counts those calls (`points`: the
highest count of any syscall in any process); then each N of 1..points
(or a sample) is one faulted run, from the same starting state, followed
by the checks (`check_point`):

- the refs right after the faulted run: each one as it was before or as
  the unfaulted run leaves it (none missing that both have);
- `git fsck` finds no error (dangling objects are what git itself leaves
  when a process dies between writing objects and the ref naming them);
- `git cinnabar fsck` is clean;
- the follow-up (the same command, unfaulted) succeeds, and what it gives
  (`Case.outcome`) is what it gives after an unfaulted run;
- no lock blocks it;
- no file is left in the git directory, or in TMPDIR, that the unfaulted
  run and its follow-up do not leave (after the follow-up: what the next
  command does not remove stays for good); those git itself leaves when
  killed (`git_leftover`) are told apart;
- after EIO or ENOSPC: a non-zero exit says so in exactly one `fatal:` or
  `error:` line, without a traceback, and every ref is as it was before
  (or, the fault absorbed, the run succeeded and left what an unfaulted
  run leaves); a fault past the commit point (the metadata moved where
  the unfaulted run puts it, nothing else) is reported as `committed`,
  apart, as git's own leftovers are (`BENIGN`).

A scenario (`Scenario`) makes the starting state once (`setup`), a fresh
copy of it for each run (`prepare`, a `Case`), and tells what a case's
outcome is. `FetchScenario` and `PushScenario` are the two here.
"""

import collections
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from . import hgcraft
from .git import git, hg_url, refs
from .hg import HgServer
from .proc import Result, run

# The write-like system calls: what changes files (and writes to pipes:
# strace cannot tell them apart). open(O_CREAT) is left out: strace
# counts every open, reads included, and cannot inject by flags.
WRITE_SYSCALLS = ('write', 'pwrite64', 'writev', 'rename', 'renameat',
                  'renameat2', 'unlink', 'unlinkat', 'fsync', 'fdatasync',
                  'ftruncate', 'creat')
FAULTS = ('KILL', 'EIO', 'ENOSPC')
RUN_TIMEOUT = 120
# A faulted run still going after this long hangs (an unfaulted one takes
# a few seconds).
HANG_SECONDS = 60
# A lock the follow-up waits for means a lock left blocking: it gives up
# after this many seconds (cinnabar.repolock) and says so.
LOCK_TIMEOUT = '5'
_STRACE_LINE = re.compile(r'^(\d+)\s+([a-z0-9_]+)\(')
_SAID_LINE = re.compile(r'^(?:fatal|error): .*$', re.M)
_REJECTED = re.compile(r'^ ! \[remote rejected\] .*$', re.M)
# What git itself leaves when one of its processes dies: its temporary
# packs and indexes, the ref and index locks it holds while writing, the
# objects of an unfinished quarantine, fast-import's crash reports.
_GIT_LEFTOVERS = re.compile(
    r'(^|/)(tmp_pack_|tmp_idx_|tmp_rev_|tmp_mtimes_|tmp_obj_|incoming-'
    r'|fast_import_crash_)|\.lock$')


def git_leftover(path):
    """Whether `path` (relative to the git directory) is a name git's own
    commands leave when killed."""
    return bool(_GIT_LEFTOVERS.search(path))


def strace_argv(argv, syscalls, output, fault=None, point=None):
    """`argv` under strace: tracing `syscalls` into `output`, and with a
    fault (KILL, or an errno name) injected at their `point`-th call."""
    spec = ','.join(syscalls)
    args = ['strace', '-f', '-qq', '-o', str(output), '-e', 'trace=' + spec]
    if fault is not None:
        what = 'signal=KILL' if fault == 'KILL' else 'error=' + fault
        args += ['-e', 'inject=%s:%s:when=%d' % (spec, what, point)]
    return args + [str(a) for a in argv]


def count_calls(trace_file):
    """{(pid, syscall): count} of a `strace -f -o` file."""
    counts = collections.Counter()
    with open(trace_file, errors='replace') as f:
        for line in f:
            found = _STRACE_LINE.match(line)
            if found:
                counts[found.group(1), found.group(2)] += 1
    return counts


def sample(points, count, first=1):
    """`count` points of first..points, evenly spread, both ends in:
    deterministic."""
    if count >= points - first + 1:
        return list(range(first, points + 1))
    if count <= 1:
        return [first]
    step = (points - first) / (count - 1)
    return sorted({first + round(i * step) for i in range(count)})


def git_dir_files(git_dir):
    """The relative paths of the files of `git_dir` worth comparing
    between runs: not the objects and packs (their names depend on what
    was written, their content is checked by fsck), nor the reflogs, nor
    the fetch-ref snapshots (named after metadata commits)."""
    found = set()
    for root, dirs, files in os.walk(git_dir):
        rel_root = os.path.relpath(root, git_dir)
        for name in files:
            rel = os.path.normpath(os.path.join(rel_root, name))
            if _compared(rel):
                found.add(rel)
    return found


def _compared(rel):
    parts = rel.split(os.sep)
    if git_leftover(rel):
        return True
    if parts[0] in ('logs', 'hooks', 'info'):
        return False
    if parts[0] == 'objects':
        return False
    if parts[:2] == ['cinnabar', 'fetch-refs']:
        return False
    if parts[0] == 'refs' or rel in ('packed-refs', 'FETCH_HEAD',
                                     'ORIG_HEAD'):
        return False
    return True


def _leftovers_in_objects(git_dir):
    """Temporary files under objects/ (the rest of objects/ is not
    compared)."""
    found = set()
    objects = Path(git_dir) / 'objects'
    for path in objects.rglob('*'):
        rel = str(path.relative_to(git_dir))
        if path.is_file() and (git_leftover(rel) or rel.endswith('.keep')):
            found.add(rel)
    return found


class Case:
    """One run of a scenario's command, from a fresh starting state.

    `repo`: the git repository; `argv`, `env`: the command; `tmpdir`: its
    TMPDIR (checked for leftovers)."""

    def __init__(self, scenario, directory, repo, argv, env):
        self.scenario = scenario
        self.directory = Path(directory)
        self.repo = Path(repo)
        self.argv = argv
        self.tmpdir = self.directory / 'tmp'
        self.tmpdir.mkdir(parents=True, exist_ok=True)
        self.env = dict(env, TMPDIR=str(self.tmpdir),
                        GIT_CINNABAR_LOCK_TIMEOUT=LOCK_TIMEOUT)
        self.resources = []

    @property
    def git_dir(self):
        return self.repo / '.git'

    def run(self, argv=None, timeout=RUN_TIMEOUT):
        return run(argv or self.argv, cwd=self.repo, env=self.env,
                   timeout=timeout, check=False)

    def follow_up(self):
        """The command again, unfaulted."""
        return self.run()

    def outcome(self):
        return self.scenario.outcome(self)

    def state(self):
        """Every ref (refs/cinnabar/* included)."""
        return refs(self.repo)

    def leftovers(self):
        """Files of the git directory and TMPDIR worth comparing."""
        found = git_dir_files(self.git_dir) | _leftovers_in_objects(
            self.git_dir)
        found |= {'$TMPDIR/' + str(p.relative_to(self.tmpdir))
                  for p in self.tmpdir.rglob('*')}
        return found

    def cleanup(self):
        for stop in reversed(self.resources):
            stop()
        shutil.rmtree(self.directory, ignore_errors=True)


class Scenario:
    """What a sweep runs: `setup` once, `prepare` a Case per run;
    `outcome(case)`: what must be the same after the follow-up of any run
    as after that of an unfaulted one."""

    name = None

    def setup(self, directory, env):
        raise NotImplementedError

    def error_lines(self, err):
        """The lines of stderr that say why the command failed (a failure
        must say it in exactly one)."""
        return _SAID_LINE.findall(err)

    def prepare(self, directory):
        raise NotImplementedError

    def outcome(self, case):
        raise NotImplementedError

    def teardown(self):
        pass


def crafted_history(count, files=4):
    """A linear history of `count` changesets, each changing one of
    `files` files (and adding a file every tenth), as an hgcraft Repo and
    the list of its changeset Revs."""
    repo = hgcraft.Repo()
    tree, revs = {}, []
    for i in range(count):
        tree = dict(tree)
        path = b'dir%d/file%d' % (i % 3, i % files)
        tree[path] = b'line %d of %s\n' % (i, path) * (1 + i % 5)
        if i % 10 == 0:
            tree[b'added/%d' % i] = b'added at %d\n' % i
        revs.append(repo.commit(tree, desc=b'change %d' % i,
                                date=b'%d 0' % (1700000000 + i),
                                parents=revs[-1:]))
    return repo, revs


class FetchScenario(Scenario):
    """A clone of the first `early` changesets of a history, then `git
    fetch` of the `later` more from `hg serve`."""

    name = 'fetch'

    def __init__(self, hg, early=40, later=300):
        self.hg = hg
        self.early = early
        self.later = later
        self.server = None

    def setup(self, directory, env):
        self.directory = Path(directory)
        self.env = env
        history, revs = crafted_history(self.early + self.later)
        bundle = self.directory / 'history.hg'
        hgcraft.write(bundle, history.bundle_v2())
        full = self.directory / 'hg-full'
        self.hg.repo_from_bundle(bundle, full)
        early = self.directory / 'hg-early'
        self.hg('clone', '-U', '-q', '-r', revs[self.early - 1].node.hex(),
                full, early)
        self.heads = [revs[-1].node.hex()]
        self.template = self.directory / 'template'
        result = run(['git', 'clone', '-q', '--no-checkout', hg_url(early),
                      self.template], env=env, timeout=RUN_TIMEOUT,
                     check=False)
        assert result.returncode == 0, result.describe()
        self.server = HgServer(self.hg, full, self.directory / 'serve')
        self.server.start()
        run(['git', 'remote', 'set-url', 'origin', hg_url(self.server.url)],
            cwd=self.template, env=env)

    def prepare(self, directory):
        directory = Path(directory)
        directory.mkdir(parents=True)
        repo = directory / 'repo'
        shutil.copytree(self.template, repo, symlinks=True)
        return Case(self, directory, repo, ['git', 'fetch', '-q', 'origin'],
                    self.env)

    def outcome(self, case):
        remotes = refs(case.repo, 'refs/remotes/')
        out = git('cinnabar', 'hg2git', *self.heads, cwd=case.repo,
                  env=case.env, check=False).out.split()
        return {'refs/remotes': remotes, 'hg2git heads': out}

    def teardown(self):
        if self.server is not None:
            self.server.stop()


class PushScenario(Scenario):
    """A clone of a history, `commits` git commits on top, `git push` of
    them to the `hg serve` of a fresh copy of the hg repository."""

    name = 'push'

    def __init__(self, hg, history=40, commits=30):
        self.hg = hg
        self.history = history
        self.commits = commits

    def setup(self, directory, env):
        self.directory = Path(directory)
        self.env = env
        history, _ = crafted_history(self.history)
        bundle = self.directory / 'history.hg'
        hgcraft.write(bundle, history.bundle_v2())
        self.hg_template = self.directory / 'hg-template'
        self.hg.repo_from_bundle(bundle, self.hg_template)
        self.template = self.directory / 'template'
        result = run(['git', 'clone', '-q', hg_url(self.hg_template),
                      self.template], env=env, timeout=RUN_TIMEOUT,
                     check=False)
        assert result.returncode == 0, result.describe()
        for i in range(self.commits):
            path = self.template / ('pushed%d.txt' % (i % 5))
            path.write_text('pushed %d\n' % i)
            run(['git', 'add', path.name], cwd=self.template, env=env)
            run(['git', 'commit', '-q', '-m', 'pushed %d' % i],
                cwd=self.template, env=dict(
                    env, GIT_AUTHOR_DATE='%d +0000' % (1700001000 + i),
                    GIT_COMMITTER_DATE='%d +0000' % (1700001000 + i)))

    def prepare(self, directory):
        directory = Path(directory)
        directory.mkdir(parents=True)
        server_repo = directory / 'hg'
        self.hg('clone', '-U', '-q', self.hg_template, server_repo)
        server = HgServer(self.hg, server_repo, directory / 'serve').start()
        repo = directory / 'repo'
        shutil.copytree(self.template, repo, symlinks=True)
        run(['git', 'remote', 'set-url', 'origin', hg_url(server.url)],
            cwd=repo, env=self.env)
        case = Case(self, directory, repo,
                    ['git', 'push', '-q', 'origin',
                     'HEAD:refs/heads/branches/default/tip'], self.env)
        case.server_repo = server_repo
        case.resources.append(server.stop)
        return case

    def error_lines(self, err):
        """git says a helper's refusal of a ref in its own summary (`!
        [remote rejected] <ref> (<why>)`), and ends every failed push
        with `error: failed to push some refs`, which says no why."""
        return [line for line in _SAID_LINE.findall(err) + _REJECTED.findall(
            err) if not line.startswith('error: failed to push some refs ')]

    def outcome(self, case):
        log = self.hg('-R', case.server_repo, 'log', '-T', '{node}\n').out
        heads = self.hg('-R', case.server_repo, 'heads', '-T',
                        '{node}\n').out
        return {'hg changesets': sorted(log.split()),
                'hg heads': sorted(heads.split()),
                'hg2git of the heads': git(
                    'cinnabar', 'hg2git', *heads.split(), cwd=case.repo,
                    env=case.env, check=False).out.split()}


Point = collections.namedtuple('Point', 'fault point exit problems')


class Sweep:
    """The sweep of one scenario, in `directory`."""

    def __init__(self, scenario, directory, env, syscalls=WRITE_SYSCALLS):
        self.scenario = scenario
        self.directory = Path(directory)
        self.env = env
        self.syscalls = syscalls
        self._serial = 0

    def __enter__(self):
        self.directory.mkdir(parents=True, exist_ok=True)
        setup = self.directory / 'setup'
        setup.mkdir()
        self.scenario.setup(setup, self.env)
        self._reference()
        return self

    def __exit__(self, *exc):
        self.scenario.teardown()

    def _case(self):
        self._serial += 1
        return self.scenario.prepare(self.directory / ('run%d'
                                                       % self._serial))

    def _reference(self):
        """The unfaulted run: the states, outcome and files it leaves, and
        the count of write-like calls (under strace, as faulted runs are,
        so that the same calls are counted)."""
        case = self._case()
        try:
            self.before = case.state()
            trace = case.directory / 'trace'
            start = time.monotonic()
            result = case.run(strace_argv(case.argv, self.syscalls, trace))
            self.seconds = time.monotonic() - start
            assert result.returncode == 0, result.describe()
            self.after = case.state()
            counts = count_calls(trace)
            self.calls = sum(counts.values())
            self.points = max(counts.values())
            trace.unlink()
            follow = case.follow_up()
            assert follow.returncode == 0, follow.describe()
            self.outcome = case.outcome()
            self.files = case.leftovers()
        finally:
            case.cleanup()

    def run_point(self, fault, point):
        """One faulted run and its checks: a Point."""
        case = self._case()
        try:
            return Point(fault, point, *self._check(case, fault, point))
        finally:
            case.cleanup()

    def _check(self, case, fault, point):
        problems = []
        before = case.state()
        try:
            result = case.run(strace_argv(case.argv, self.syscalls,
                                          os.devnull, fault, point),
                              timeout=HANG_SECONDS)
        except AssertionError as timed_out:
            # lib.proc killed the whole group: the rest is checked all
            # the same.
            problems.append(('hang', str(timed_out)[-800:]))
            result = Result(case.argv, None, b'', b'')
        err = result.err
        if 'Traceback' in err:
            problems.append(('traceback', err[-800:]))
        now = case.state()
        changed = _ref_changes(before, self.after, now)
        if changed:
            problems.append(('refs', changed))
        if fault != 'KILL' and result.returncode is not None:
            if result.returncode != 0:
                said = self.scenario.error_lines(err)
                if len(said) != 1:
                    problems.append(('message', err.strip()[-800:]))
                if now != before:
                    problems.append((_not_as_before(before, self.after,
                                                    now),
                                     _diff(before, now)))
            elif now != self.after:
                problems.append(('succeeded, not as unfaulted',
                                 _diff(self.after, now)))
        fsck = case.run(['git', 'fsck', '--no-progress', '--no-dangling'])
        if fsck.returncode != 0 or fsck.out.strip():
            problems.append(('git fsck', (fsck.out + fsck.err)[-800:]))
        cfsck = case.run(['git', 'cinnabar', 'fsck'])
        if cfsck.returncode != 0:
            problems.append(('git cinnabar fsck', cfsck.err[-800:]))
        follow = case.follow_up()
        if follow.returncode != 0:
            kind = 'lock' if 'lock' in follow.err else 'follow-up'
            problems.append((kind, follow.err.strip()[-800:]))
        else:
            outcome = case.outcome()
            if outcome != self.outcome:
                problems.append(('outcome', _diff(self.outcome, outcome)))
        left = case.leftovers() - self.files
        ours = sorted(p for p in left if not git_leftover(p))
        theirs = sorted(p for p in left if git_leftover(p))
        if ours:
            problems.append(('leftover', ours))
        if theirs:
            problems.append(('git leftover', theirs))
        return result.returncode, problems

    def sweep(self, faults=FAULTS, count=None, report=None):
        """Run `count` points (None: all) of each fault; [Point]."""
        found = []
        for fault in faults:
            points = sample(self.points, count or self.points)
            for point in points:
                outcome = self.run_point(fault, point)
                found.append(outcome)
                if report:
                    report(outcome)
        return found


def _ref_changes(before, after, now):
    """The refs of `now` that are neither as `before` nor as `after`
    (missing counting as a value): {name: (before, after, now)}."""
    changed = {}
    for name in set(before) | set(after) | set(now):
        values = (before.get(name), after.get(name), now.get(name))
        if values[2] not in values[:2]:
            changed[name] = values
    return changed


# What the helper's `finish` commits, before the refs git then updates.
METADATA_REFS = ('refs/cinnabar/metadata', 'refs/notes/cinnabar')


def _not_as_before(before, after, now):
    """The kind of a failed run's change: `committed` when only the
    metadata moved, to where the unfaulted run puts it (the fault hit
    past the commit point: the next run only updates the refs)."""
    changed = {k for k in set(before) | set(now)
               if before.get(k) != now.get(k)}
    if changed <= set(METADATA_REFS) and all(
            now.get(k) == after.get(k) for k in changed):
        return 'committed'
    return 'not as before'


def _diff(expected, got):
    if isinstance(expected, dict) and isinstance(got, dict):
        return {k: (expected.get(k), got.get(k))
                for k in set(expected) | set(got)
                if expected.get(k) != got.get(k)}
    return (expected, got)


# Not inconsistencies, reported apart: git's own leftovers, and a failure
# past the commit point (the metadata updated, the refs not yet).
BENIGN = ('git leftover', 'committed')


def inconsistent(point):
    """Whether a Point shows a problem (git's own leftovers aside)."""
    return any(kind not in BENIGN for kind, _ in point.problems)


def summary(points):
    """{fault: (inconsistent, total, Counter of problem kinds)}."""
    table = {}
    for p in points:
        bad, total, kinds = table.get(p.fault, (0, 0, collections.Counter()))
        kinds.update(kind for kind, _ in p.problems)
        table[p.fault] = (bad + inconsistent(p), total + 1, kinds)
    return table


def strace_works():
    """Whether strace can trace here (ptrace may be refused)."""
    if shutil.which('strace') is None:
        return False
    proc = subprocess.run(['strace', '-f', '-qq', '-o', os.devnull, 'true'],
                          capture_output=True, timeout=30)
    return proc.returncode == 0


SCENARIOS = {'fetch': FetchScenario, 'push': PushScenario}


def _describe(point):
    head = '%s at %d: exit %s' % (point.fault, point.point, point.exit)
    if not point.problems:
        return head + ', consistent'
    lines = [head]
    for kind, detail in point.problems:
        lines.append('  %s: %s' % (kind, str(detail).replace('\n', '\n    ')))
    return '\n'.join(lines)


def main(argv=None):
    """`python -m lib.crashsweep` (from tests/; `make crash-sweep`)."""
    import argparse
    import sys
    import tempfile
    from . import env as test_env
    from .hg import Hg
    parser = argparse.ArgumentParser(prog='crashsweep',
                                     description=__doc__.split('\n')[0])
    parser.add_argument('--scenario', choices=sorted(SCENARIOS),
                        action='append')
    parser.add_argument('--faults', default=','.join(FAULTS))
    parser.add_argument('--count', type=int, default=None,
                        help='points per fault, spread evenly (default: '
                             'all)')
    parser.add_argument('--verbose', action='store_true',
                        help='every point, not only the inconsistent ones')
    parser.add_argument('--keep', help='work in this directory, kept')
    args = parser.parse_args(argv)
    test_env.interruptible()
    if not strace_works():
        sys.exit('crashsweep: strace is missing or cannot trace here')
    work = Path(args.keep or tempfile.mkdtemp(prefix='crashsweep-'))
    home = work / 'home'
    env = test_env.isolated_env(home, test_env.hg_executable())
    os.environ.clear()
    os.environ.update(env)
    hg = Hg(test_env.hg_executable())
    failed = False
    try:
        for name in args.scenario or ['fetch', 'push']:
            scenario = SCENARIOS[name](hg)
            with Sweep(scenario, work / name, env) as sweep:
                print('%s: %d write-like calls, %d points, %.1f s a run'
                      % (name, sweep.calls, sweep.points, sweep.seconds),
                      flush=True)

                def report(point):
                    if args.verbose or inconsistent(point):
                        print(_describe(point), flush=True)
                points = sweep.sweep(args.faults.split(','), args.count,
                                     report)
            for fault, (bad, total, kinds) in summary(points).items():
                failed |= bad > 0
                kinds = ', '.join('%s %d' % kv for kv in sorted(kinds.items()))
                print('%s %s: %d inconsistent / %d (%s)'
                      % (name, fault, bad, total, kinds), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == '__main__':
    raise SystemExit(main())
