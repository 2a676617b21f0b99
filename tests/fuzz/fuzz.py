#!/usr/bin/env python3
"""Fuzz the helper's bundle and changegroup reader (see README.md here).

usage: fuzz.py --helper PATH [--seconds N] [--seed N] [--out DIR]
       fuzz.py --helper PATH --replay FILE...

Each input goes through the helper as `git cinnabar unbundle` drives it
(target.py).  Inputs are the seed corpus (seeds/), byte-level, length-field
and structure-level mutations of it and of inputs that reached new places
(mutate.py), and generated bundles with valid hg ids (hggen.py).  A
finding (a crash, a sanitizer report, a hang, leftover files, an accepted
bundle whose ids do not verify, a clean bundle refused, a Python
traceback from `git cinnabar unbundle`) is minimized and saved under
--out, one directory per kind of finding; the exit status is 1 when there
was one.  --replay runs given inputs once and prints what happened.

The last --stream-share of each job's time goes to the stream target
(stream_target.py): stream clone bundles (the `.packed1` and `.stream2`
seeds, mutated by mutate_stream.py, and --chain-share of crafted
changelogs of many chain shapes and hostile stated lengths) through `git
cinnabar unbundle`, within a CPU budget growing with the input's size.
Before it, --line-share goes to the line target (line_target.py): random
command lines, quoted words and broken ones, through the helper's reading
of its protocol.
"""

import argparse
import faulthandler
import hashlib
import multiprocessing
import os
import random
import resource
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# tests/ for lib (lib.bundlefmt), then the fuzzer's own modules.
sys.path[:0] = [HERE, os.path.dirname(HERE)]

from lib import bundlefmt  # noqa: E402
import hggen  # noqa: E402
import mutate  # noqa: E402
import mutate_stream  # noqa: E402
from line_target import LineTarget, random_script  # noqa: E402
from stream_target import StreamTarget  # noqa: E402
from target import Outcome, Target, is_bundle1  # noqa: E402

TOP = os.path.dirname(os.path.dirname(HERE))
POOL_LIMIT = 500
STREAM_SUFFIXES = ('.packed1', '.stream2')
# How a finding of an input sent as a bundle1 HTTP answer is named.
HTTP_MARK = ' (http bundle1)'


def load_seeds(directory):
    if not os.path.isdir(directory):
        sys.exit('fuzz.py: no seed directory %s' % directory)
    seeds = []
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), 'rb') as f:
            seeds.append((name, f.read()))
    return seeds


class Zstd:
    """zstd compression through the helper's `compress` command."""

    def __init__(self, helper, tmp):
        self.helper, self.tmp = helper, tmp
        self.env = dict(os.environ, ASAN_OPTIONS='detect_leaks=0')

    def __call__(self, data):
        src = os.path.join(self.tmp, 'zstd-in')
        dest = os.path.join(self.tmp, 'zstd-out')
        with open(src, 'wb') as f:
            f.write(data)
        if os.path.exists(dest):
            os.unlink(dest)
        subprocess.run([self.helper], input=b'compress zstd %s %s\n' % (
            src.encode(), dest.encode()), cwd=self.tmp, env=self.env,
            stdout=subprocess.DEVNULL, check=True, timeout=60)
        with open(dest, 'rb') as f:
            return f.read()


class CliCheck:
    """`git cinnabar unbundle` of an input: no Python traceback."""

    def __init__(self, helper, tmp):
        self.repo = os.path.join(tmp, 'cli-repo')
        self.env = dict(os.environ, GIT_CINNABAR_HELPER=helper,
                        GIT_CINNABAR_TRACEBACK='1', GIT_CONFIG_NOSYSTEM='1',
                        HOME=tmp, GIT_CONFIG_GLOBAL=os.devnull,
                        GIT_CINNABAR_PROGRESS='0',
                        ASAN_OPTIONS='detect_leaks=0',
                        PATH=TOP + os.pathsep + os.environ['PATH'])
        subprocess.run(['git', 'init', '-q', self.repo], check=True,
                       env=self.env)

    def run(self, path):
        subprocess.run(['git', '-C', self.repo, 'update-ref', '-d',
                        'refs/cinnabar/metadata'], env=self.env, check=False)
        proc = subprocess.run(
            [os.path.join(TOP, 'git-cinnabar'), 'unbundle', path],
            cwd=self.repo, env=self.env, capture_output=True, timeout=120)
        err = proc.stderr.decode('utf-8', 'replace')
        if 'Traceback (most recent call last)' in err:
            last = err.strip().splitlines()[-1]
            return Outcome('traceback', last.split(':')[0], '', err)
        if proc.returncode not in (0, 128) or (
                proc.returncode == 128 and 'fatal: ' not in err):
            return Outcome('cli-exit', 'status %d' % proc.returncode, '',
                           err)
        return None


class Fuzzer:
    def __init__(self, args, job=0):
        self.args = args
        self.job = job
        self.rng = random.Random(args.seed * 1000 + job)
        self.target = Target(args.helper, timeout=args.timeout,
                             leaks=args.leaks)
        self.zstd = Zstd(self.target.helper, self.target.tmp)
        self.generator = hggen.Generator(self.rng, self.zstd)
        seeds = load_seeds(args.seeds)
        self.seeds = [s for s in seeds if not s[0].endswith(STREAM_SUFFIXES)]
        self.stream_seeds = [s for s in seeds
                             if s[0].endswith(STREAM_SUFFIXES)]
        self.pool = [data for _, data in self.seeds]
        self.stream_pool = [data for _, data in self.stream_seeds]
        self.stream_target = None
        self.line_target = None
        self.marks = set()      # normalized answers seen: a coverage proxy
        self.findings = {}      # signature -> count
        self.stats = dict(inputs=0, accepted=0, generated=0, clean=0,
                          streams=0, streams_accepted=0, lines=0)
        self.cli = CliCheck(self.target.helper, self.target.tmp) \
            if args.cli_every else None

    def close(self):
        self.target.close()
        if self.stream_target is not None:
            self.stream_target.close()
        if self.line_target is not None:
            self.line_target.close()

    # Making inputs.

    def next_input(self):
        """(data, how, clean)."""
        rng = self.rng
        if self.args.only_clean:
            gen = self.generator.generate(clean=True)
            self.stats['generated'] += 1
            return gen.data, 'generated clean', True
        choice = rng.random()
        if choice < 0.3:
            gen = self.generator.generate()
            self.stats['generated'] += 1
            if rng.random() < 0.15:
                return self.mutated(gen.data), 'generated+mutated', False
            return gen.data, 'generated ' + ','.join(gen.traits), gen.clean
        data = rng.choice(self.pool)
        for _ in range(rng.choice((1, 1, 1, 2, 4))):
            data = self.mutated(data)
        return data, 'mutated', False

    def mutated(self, data):
        rng = self.rng
        choice = rng.random()
        try:
            if choice < 0.35:
                return mutate.structural(rng, data, self.zstd)
            if choice < 0.5:
                return mutate.relength(rng, data)
        except (bundlefmt.FormatError, ValueError, OSError, EOFError,
                OverflowError, IndexError, struct.error):
            pass
        if choice < 0.55:
            return mutate.splice(rng, data, rng.choice(self.pool))
        return rng.choice(mutate.BYTE_MUTATORS)(rng, data)

    # Running them.

    def run_one(self, data, how, clean):
        ignorecase = self.rng.random() < 0.2
        stdin = self.rng.random() < 0.15
        http = not stdin and is_bundle1(data) and \
            self.rng.random() < 0.25
        outcome = self.target.run(data, ignorecase, stdin, http)
        if ignorecase:
            how += ' (core.ignorecase=true)'
        if stdin:
            how += ' (import stdin)'
            outcome.detail += ' (import stdin)'
        if http:
            how += HTTP_MARK
            outcome.detail += HTTP_MARK
        self.stats['inputs'] += 1
        if outcome.accepted:
            self.stats['accepted'] += 1
        if clean:
            self.stats['clean'] += 1
            if outcome.kind is None and outcome.error is not None:
                outcome = Outcome('refused-valid', outcome.detail,
                                  outcome.answers, outcome.stderr)
        if outcome.kind is None and self.cli and \
                self.stats['inputs'] % self.args.cli_every == 0:
            outcome = self.cli.run(self.target.input_path) or outcome
        if outcome.leak is not None:
            self.record(data, outcome.leak, how)
        if outcome.kind is not None:
            self.record(data, outcome, how)
        elif outcome.detail not in self.marks:
            self.marks.add(outcome.detail)
            if len(self.pool) < POOL_LIMIT:
                self.pool.append(data)
        return outcome

    def run_stream(self, data, how, seed=False, keep=True):
        outcome = self.stream_target.run(data)
        self.stats['streams'] += 1
        if outcome.accepted:
            self.stats['streams_accepted'] += 1
        elif seed and outcome.kind is None:
            # Made by hg, so Mercurial reads it: so must we.
            outcome = Outcome('refused-valid', outcome.detail,
                              outcome.answers, outcome.stderr)
        if outcome.leak is not None:
            self.record(data, outcome.leak, how, self.stream_target.run)
        if outcome.kind is not None:
            self.record(data, outcome, how, self.stream_target.run)
        elif outcome.detail not in self.marks:
            self.marks.add(outcome.detail)
            if keep and len(self.stream_pool) < POOL_LIMIT:
                self.stream_pool.append(data)

    def mutated_stream(self):
        data = self.rng.choice(self.stream_pool)
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            data = mutate_stream.mutated(self.rng, data, self.stream_pool)
        return data

    def run_line(self):
        script = random_script(self.rng)
        outcome = self.line_target.run(script)
        self.stats['lines'] += 1
        for found in (outcome.leak, outcome):
            if found is not None and found.kind is not None:
                found.detail += ' (line)'
                self.record(script.encode(), found, 'line ' + script.last)
        if outcome.kind is None:
            self.marks.add(outcome.detail)

    def record(self, data, outcome, how, run=None):
        sig = outcome.signature
        self.findings[sig] = self.findings.get(sig, 0) + 1
        if self.findings[sig] > 1:
            return
        print('FINDING %s (input %d, %s)' % (
            sig, self.stats['inputs'] + self.stats['streams'], how[:60]),
            flush=True)
        budget = min(self.args.minimize, self.deadline - time.time())
        if outcome.kind in ('traceback', 'cli-exit', 'refused-valid',
                            'slow') or how.startswith('line') or \
                budget <= 0:
            small = data
        else:
            small = minimize(self.target, data, sig, budget, run)
        save_finding(self.args.out, data, small, outcome, how)

    def loop(self):
        start = time.time()
        streams = self.args.stream_share > 0 and not self.args.only_clean
        lines = self.args.line_share > 0 and not self.args.only_clean
        end = start + self.args.seconds
        stream_start = end - (self.args.seconds * self.args.stream_share
                              if streams else 0)
        self.deadline = stream_start - (
            self.args.seconds * self.args.line_share if lines else 0)
        self.bundle_loop(start)
        if lines:
            self.deadline = stream_start
            self.line_loop(start)
        if streams:
            self.deadline = end
            self.stream_loop(start)

    def keep_going(self, count, minimum):
        """Until the deadline, and past it (up to twice the run's time
        again) while fewer than `minimum` inputs ran: on a loaded machine
        a run of a set time could otherwise pass having tried a handful."""
        now = time.time()
        return now < self.deadline or (
            count < minimum and now < self.deadline + 2 * self.args.seconds)

    def bundle_loop(self, start):
        last = start
        if self.job == 0 and not self.args.only_clean:
            for name, data in self.seeds:
                self.run_one(data, 'seed ' + name, False)
        while self.keep_going(self.stats['inputs'], self.args.min_inputs):
            if self.args.max_inputs and \
                    self.stats['inputs'] >= self.args.max_inputs:
                break
            # Should the driver itself get stuck, say where.
            faulthandler.dump_traceback_later(300)
            data, how, clean = self.next_input()
            self.run_one(data, how, clean)
            faulthandler.cancel_dump_traceback_later()
            if time.time() - last >= 30:
                last = time.time()
                self.progress(start)
        if time.time() - last > 1:
            self.progress(start)

    def line_loop(self, start):
        self.line_target = LineTarget(self.args.helper,
                                      timeout=self.args.timeout,
                                      leaks=self.args.leaks)
        while self.keep_going(self.stats['lines'], self.args.min_lines):
            faulthandler.dump_traceback_later(300)
            self.run_line()
            faulthandler.cancel_dump_traceback_later()
        self.progress(start)

    def stream_loop(self, start):
        self.stream_target = StreamTarget(
            self.args.helper, timeout=self.args.timeout * 3,
            leaks=self.args.leaks)
        last = time.time()
        if self.job == 0:
            for name, data in self.stream_seeds:
                self.run_stream(data, 'stream seed ' + name, seed=True)
        while self.stream_pool and self.keep_going(
                self.stats['streams'], self.args.min_streams):
            faulthandler.dump_traceback_later(300)
            if self.rng.random() < self.args.chain_share:
                # Large: not kept to be mutated again.
                data, what = mutate_stream.chain_stream(self.rng)
                self.run_stream(data, 'stream chain: ' + what, keep=False)
            else:
                self.run_stream(self.mutated_stream(), 'stream mutated')
            faulthandler.cancel_dump_traceback_later()
            if time.time() - last >= 30:
                last = time.time()
                self.progress(start)
        self.progress(start)

    def progress(self, start):
        elapsed = max(time.time() - start, 1e-9)
        s = self.stats
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (used.ru_utime + used.ru_stime) / max(
            s['inputs'] + s['streams'], 1)
        print('[%d] %ds: %d inputs (%.1f/s, %.0f ms CPU each), %d accepted, '
              '%d generated (%d clean), %d lines, %d streams (%d accepted), '
              '%d answers seen, %d findings (%d kinds)' % (
                  self.job, elapsed, s['inputs'], s['inputs'] / elapsed,
                  cpu * 1000,
                  s['accepted'], s['generated'], s['clean'], s['lines'],
                  s['streams'], s['streams_accepted'], len(self.marks),
                  sum(self.findings.values()), len(self.findings)),
              flush=True)


def minimize(target, data, signature, budget, run=None):
    """A smaller input giving the same finding, within `budget` seconds;
    `run(input)` gives an input's outcome (default: through `target`)."""
    deadline = time.time() + budget
    ignorecase = '(core.ignorecase=true)' in signature
    stdin = '(import stdin)' in signature
    http = HTTP_MARK in signature

    def same(candidate):
        if run is not None:
            outcome = run(candidate)
        else:
            outcome = target.run(candidate, ignorecase, stdin, http)
        if stdin:
            outcome.detail += ' (import stdin)'
        if http:
            outcome.detail += HTTP_MARK
        return signature in (outcome.signature, outcome.leak and
                             outcome.leak.signature)

    try:
        bundle = bundlefmt.read_bundle(data)
        if bundle.kind != 'cg' and bundle.compression != b'UN':
            bundle.compression = b'UN'
            plain = bundle.encode()
            # Uncompressed is easier to read, unless it is big.
            if len(plain) <= 65536 and same(plain):
                data = plain
    except (bundlefmt.FormatError, ValueError, OSError, EOFError):
        pass
    size = len(data) // 2
    while size >= 1 and time.time() < deadline:
        pos = 0
        while pos < len(data) and time.time() < deadline:
            candidate = data[:pos] + data[pos + size:]
            if candidate and same(candidate):
                data = candidate
            else:
                pos += size
        size //= 2
    return data


def save_finding(out, original, small, outcome, how):
    line = how.startswith('line')
    name = '%s%s-%s' % ('line-' if line else '', outcome.kind, hashlib.sha1(
        outcome.signature.encode()).hexdigest()[:10])
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    suffix = '.txt' if line else '.hg'
    with open(os.path.join(directory, 'input' + suffix), 'wb') as f:
        f.write(small)
    with open(os.path.join(directory, 'original' + suffix), 'wb') as f:
        f.write(original)
    with open(os.path.join(directory, 'report.txt'), 'w') as f:
        f.write('finding: %s\nfrom: %s\ninput: %d bytes (original %d)\n'
                'replay: python3 tests/fuzz/fuzz.py --helper '
                'build/asan/git-cinnabar-helper%s%s%s%s%s --replay %s\n\n'
                '--- answers\n%s\n--- stderr\n%s\n' % (
                    outcome.signature, how, len(small), len(original),
                    ' --ignorecase' if 'core.ignorecase' in how else '',
                    ' --stdin' if 'import stdin' in how else '',
                    ' --http' if HTTP_MARK in how else '',
                    ' --stream' if how.startswith('stream') else '',
                    ' --line' if line else '',
                    os.path.join(directory, 'input' + suffix),
                    outcome.answers,
                    outcome.stderr[-20000:]))
    print('  saved in %s (%d bytes)' % (directory, len(small)))
    # For logs that outlive the machine (CI): what the helper said.
    lines = (outcome.answers.strip().splitlines()[-3:] +
             outcome.stderr.strip().splitlines()[:25])
    for line in lines:
        print('  | ' + line[:200])
    sys.stdout.flush()


def replay(args):
    if args.stream:
        target = StreamTarget(args.helper, timeout=args.timeout * 3,
                              leaks=args.leaks)
    elif args.line:
        target = LineTarget(args.helper, timeout=args.timeout,
                            leaks=args.leaks)
    else:
        target = Target(args.helper, timeout=args.timeout, leaks=args.leaks)
    status = 0
    try:
        for path in args.replay:
            with open(path, 'rb') as f:
                data = f.read()
            if args.stream or args.line:
                outcome = target.run(data)
            else:
                outcome = target.run(data, args.ignorecase, args.stdin,
                                     args.http)
            print('%s: %s' % (path, outcome.signature if outcome.kind
                              else 'no finding (%s)' % outcome.detail))
            if outcome.leak:
                print('%s: %s' % (path, outcome.leak.signature))
            if outcome.kind or outcome.leak:
                status = 1
                if args.verbose:
                    print('--- answers\n%s--- stderr\n%s' % (
                        outcome.answers, outcome.stderr))
    finally:
        target.close()
    return status


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--helper', required=True,
                        help='the helper to fuzz (build/asan/...)')
    parser.add_argument('--seconds', type=float, default=60)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--out', default=os.path.join(TOP, 'build', 'fuzz'),
                        help='where findings are saved')
    parser.add_argument('--seeds', default=os.path.join(HERE, 'seeds'))
    parser.add_argument('--timeout', type=float, default=20,
                        help='seconds one input may take')
    parser.add_argument('--minimize', type=float, default=30,
                        help='seconds spent minimizing each finding (within '
                        'the run\'s --seconds)')
    parser.add_argument('--max-inputs', type=int, default=0)
    parser.add_argument('--min-inputs', type=int, default=0,
                        help='bundles each job must try: it goes on past '
                        '--seconds until then (at most twice as long '
                        'again), and the run fails if it is still short')
    parser.add_argument('--min-streams', type=int, default=0,
                        help='the same for the stream target\'s inputs')
    parser.add_argument('--min-lines', type=int, default=0,
                        help='the same for the line target\'s scripts')
    parser.add_argument('--cli-every', type=int, default=50,
                        help='run every Nth harmless input through '
                        '`git cinnabar unbundle` too (0: never)')
    parser.add_argument('--only-clean', action='store_true',
                        help='only generated bundles of the clean profile '
                        '(each must be imported, fsck clean)')
    parser.add_argument('--jobs', type=int, default=1,
                        help='fuzzing processes run side by side')
    parser.add_argument('--no-leaks', dest='leaks', action='store_false',
                        help='do not look for leaks (LeakSanitizer off)')
    parser.add_argument('--replay', nargs='+', metavar='FILE')
    parser.add_argument('--ignorecase', action='store_true',
                        help='replay with core.ignorecase=true')
    parser.add_argument('--stdin', action='store_true',
                        help='replay through `import stdin bundle`')
    parser.add_argument('--http', action='store_true',
                        help='replay as a bundle1 HTTP answer (`http '
                             'import <url> cg01`)')
    parser.add_argument('--stream', action='store_true',
                        help='replay through the stream target (`git '
                        'cinnabar unbundle`)')
    parser.add_argument('--line', action='store_true',
                        help='replay through the line target (scripts of '
                        'command lines)')
    parser.add_argument('--line-share', type=float, default=0.05,
                        help='the share of each job\'s time given to the '
                        'line target, before the stream target (0: none)')
    parser.add_argument('--stream-share', type=float, default=0.25,
                        help='the share of each job\'s time given to the '
                        'stream target, at its end (0: none)')
    parser.add_argument('--chain-share', type=float, default=0.1,
                        help='the share of the stream target\'s inputs '
                        'that are crafted changelogs of chain shapes and '
                        'stated lengths (mutate_stream.chain_stream) '
                        'rather than mutated seeds')
    parser.add_argument('-v', '--verbose', action='store_true')
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args)
    start = time.time()
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.starmap(run_job, [(args, j)
                                             for j in range(args.jobs)])
    else:
        results = [run_job(args, 0)]
    findings, inputs = {}, 0
    for job_findings, stats in results:
        inputs += stats['inputs']
        for sig, count in job_findings.items():
            findings[sig] = findings.get(sig, 0) + count
    elapsed = time.time() - start
    print('%d inputs in %ds (%.1f/s) with %d job(s)' % (
        inputs, elapsed, inputs / elapsed, args.jobs))
    short = short_jobs(args, [stats for _, stats in results])
    for line in short:
        print(line)
    if findings:
        print('%d kinds of findings, saved under %s:' % (
            len(findings), args.out))
        for sig, count in sorted(findings.items()):
            print('  %5d  %s' % (count, sig))
        return 1
    print('no findings')
    return 1 if short else 0


def short_jobs(args, job_stats):
    """A line for each job that tried fewer inputs than it had to."""
    lines = []
    for job, stats in enumerate(job_stats):
        for key, minimum in (('inputs', args.min_inputs),
                             ('lines', args.min_lines),
                             ('streams', args.min_streams)):
            if stats[key] < minimum:
                lines.append(
                    f'error: job {job} tried {stats[key]} {key}, fewer than '
                    f'the {minimum} it must: the machine was too busy for '
                    'this run to mean anything; run it again')
    return lines


def run_job(args, job):
    """One fuzzing process: (findings, stats)."""
    fuzzer = Fuzzer(args, job)
    try:
        fuzzer.loop()
    finally:
        fuzzer.close()
    return fuzzer.findings, fuzzer.stats


if __name__ == '__main__':
    sys.exit(main())
