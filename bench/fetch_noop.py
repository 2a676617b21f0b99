#!/usr/bin/env python3
"""Benchmark: a fetch with nothing new, nginx over HTTP.

Makes an hg repository from the corpus's nginx.hg, serves it with `hg
serve` on 127.0.0.1 and clones it once with this git-cinnabar (and, when
one is found, with another git-cinnabar: --reference DIR, or the first
`git-cinnabar` on PATH that is not this repository's, as the other nginx
benchmarks do) and once with hg. Then, in turns, in the same run, it
times `git fetch` in our clone, `git fetch` in the reference's clone and
`hg pull` in hg's, none of which has anything to fetch: what people run
all day. Each is repeated (--runs, default 10); medians of wall time and
of CPU time (user + sys of all its processes) are printed with the
number of requests the server logged for one such fetch, and the ratios
of ours to the reference's (targets, reported and not enforced: wall at
most 1, CPU at most 1.5: bench/README.md, "Open targets"). The
reference's clone is told it checked for a new version just now
(`cinnabar.version-check`): 0.7.5 otherwise does at every fetch when it
cannot reach GitHub.

Which `python3` git-remote-hg starts with is printed first: a version
manager's shim on PATH (pyenv's is a script starting several processes)
counts in ours.

    build/venv/bin/python bench/fetch_noop.py [--runs N] [--reference DIR]
        [--byte-compile] [--keep]

Whether our tree was byte-compiled is printed too: this environment sets
PYTHONDONTWRITEBYTECODE, so a source checkout's never is unless asked.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from benchlib import bench_parser, children_cpu  # noqa: E402
from benchlib import find_reference, record  # noqa: E402
from benchlib import nginx_workdir  # noqa: E402
from lib import env as test_env  # noqa: E402
from lib.hg import HgServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def timed(args, cwd, path):
    """(wall seconds, CPU seconds) of `args`, with PATH `path`."""
    env = dict(os.environ, PATH=path)
    cpu, start = children_cpu(), time.monotonic()
    subprocess.run(args, cwd=cwd, env=env, check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - start, children_cpu() - cpu


def _lines(path):
    """How many lines the server's access log has (one per request)."""
    try:
        return len(path.read_bytes().splitlines())
    except FileNotFoundError:
        return 0


def _compiled_state(python, compile_now):
    """Whether our Python tree is byte-compiled for `python` (after
    compiling it when `compile_now`), in words."""
    if python and compile_now:
        subprocess.run([python, '-m', 'compileall', '-q',
                        str(ROOT / 'cinnabar')], check=True)
    tag = python and subprocess.run(
        [python, '-S', '-c', 'import sys; print(sys.implementation.'
         'cache_tag)'], capture_output=True, text=True).stdout.strip()
    compiled = bool(tag) and (
        ROOT / 'cinnabar' / '__pycache__' / f'remote.{tag}.pyc').exists()
    return 'byte-compiled' if compiled else (
        'not byte-compiled (--byte-compile does it)')


def median(values):
    return sorted(values)[len(values) // 2]


def benchmark(hg, workdir, repo, args):
    with HgServer(hg, repo, workdir / 'serve') as server:
        url = server.url
        ours_path = os.pathsep.join([str(ROOT), os.environ['PATH']])
        python = shutil.which('python3', path=ours_path)
        print(f'python3 for git-remote-hg: {python or "none"}; our tree '
              f'{_compiled_state(python, args.byte_compile)}')
        kinds = {'git fetch (ours)': (workdir / 'ours', ours_path)}
        reference = find_reference(args.reference)
        if reference:
            kinds['git fetch (reference)'] = (
                workdir / 'reference',
                os.pathsep.join([str(reference), os.environ['PATH']]))
        print(f'reference: {reference or "none found"}')
        for dest, path in kinds.values():
            timed(['git', 'clone', '-q', '--no-checkout', f'hg::{url}',
                   str(dest)], workdir, path)
        if reference:
            # git-cinnabar 0.7.5 looks for a new version (`git ls-remote`
            # of its GitHub repository: two more processes) at most once a
            # day when that works, at every run when it does not (offline,
            # as here): say it just did, as a connected machine's would.
            subprocess.run(['git', 'config', 'cinnabar.version-check',
                            str(int(time.time()))],
                           cwd=kinds['git fetch (reference)'][0], check=True)
        timed([hg.exe, 'clone', '-q', '-U', url, str(workdir / 'hg')],
              workdir, os.environ['PATH'])
        commands = {label: (['git', 'fetch', '-q'], dest, path)
                    for label, (dest, path) in kinds.items()}
        commands['hg pull'] = ([hg.exe, 'pull', '-q'], workdir / 'hg',
                               os.environ['PATH'])
        results = {label: [] for label in commands}
        requests = {}
        access_log = workdir / 'serve' / 'access.log'
        for _ in range(args.runs):
            for label, (command, cwd, path) in commands.items():
                logged = _lines(access_log)
                wall, cpu = timed(command, cwd, path)
                results[label].append((wall, cpu))
                record(label, seconds=wall, cpu=cpu)
                requests[label] = _lines(access_log) - logged
    for label, runs in results.items():
        print(f'{label:<24} median {median([w for w, _ in runs]):6.3f} s '
              f'wall, {median([c for _, c in runs]):6.3f} s CPU, '
              f'{requests[label]} requests ({len(runs)} runs)')
    if reference:
        ours, theirs = results['git fetch (ours)'], results[
            'git fetch (reference)']
        for what, index, target in (('wall', 0, 1), ('CPU', 1, 1.5)):
            ratio = (median([run[index] for run in ours])
                     / median([run[index] for run in theirs]))
            print(f'ours / reference, {what}: {ratio:.2f} (target <= '
                  f'{target}: {"ok" if ratio <= target else "OVER TARGET"})')
    return 0


def main():
    parser = bench_parser(__doc__, 10, 'fetches of each kind (default 10)',
                          memory=False)
    parser.add_argument('--reference', help='directory of another '
                        'git-cinnabar (git-cinnabar, git-remote-hg)')
    parser.add_argument('--byte-compile', action='store_true',
                        help='byte-compile our Python tree first (as '
                        '`make install` leaves an installed one)')
    args = parser.parse_args()
    try:
        with nginx_workdir('cinnabar-bench-noop-', args.keep) as (
                hg, workdir, repo):
            return benchmark(hg, workdir, repo, args)
    except test_env.SetupError as e:
        print(f'error: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
