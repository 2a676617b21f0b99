#!/usr/bin/env python3
"""Memory along an import: is the helper's resident size flat with history?

Runs `git cinnabar unbundle BUNDLE` (default: the corpus's
scale/manifest100k.hg) into a fresh repository and samples the helper's
/proc/<pid>/status every --interval seconds: VmRSS, RssAnon (heap) and
RssFile (mapped files: the executable, pack windows). Prints the curve by
tenths of the helper's CPU time (a proxy for the history imported so
far), the peak (VmHWM), and the growth from the first tenth to the end.
Prints the metadata commit, to compare two builds on the same input.

    build/venv/bin/python bench/memory_curve.py [BUNDLE] [-c KEY=VALUE]...
        [--interval S] [--keep]
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'bench'))

from benchlib import BenchParser, record  # noqa: E402

# The corpus as the tests find it (CINNABAR_CORPUS, else beside the tree).
CORPUS = Path(os.environ.get('CINNABAR_CORPUS')
              or ROOT.parent / 'shared' / 'corpus')
DEFAULT_BUNDLE = CORPUS / 'scale' / 'manifest100k.hg'
HELPER_COMM = 'git-cinnabar-he'  # /proc/<pid>/comm keeps 15 characters
TICK = os.sysconf('SC_CLK_TCK')


def descendants(root):
    """Pids of the processes below `root` (one pass over /proc)."""
    parent = {}
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                with open(f'/proc/{pid}/stat') as f:
                    parent[pid] = f.read().rsplit(')', 1)[1].split()[1]
            except (OSError, IndexError):
                pass
    found, todo = set(), [str(root)]
    while todo:
        current = todo.pop()
        for pid, ppid in parent.items():
            if ppid == current and pid not in found:
                found.add(pid)
                todo.append(pid)
    return found


def sample(pid):
    """(cpu seconds, {field: MB}) of a helper process, or None."""
    try:
        with open(f'/proc/{pid}/comm') as f:
            if f.read().strip() != HELPER_COMM:
                return None
        fields = {}
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                key, _, value = line.partition(':')
                if key in ('VmRSS', 'VmHWM', 'RssAnon', 'RssFile'):
                    fields[key] = int(value.split()[0]) / 1024
        if 'VmHWM' not in fields:
            return None  # exiting: its memory is already gone
        with open(f'/proc/{pid}/stat') as f:
            stat = f.read().rsplit(')', 1)[1].split()
        return (int(stat[11]) + int(stat[12])) / TICK, fields
    except (OSError, ValueError, IndexError):
        return None


def main():
    parser = BenchParser(description=__doc__.split('\n')[0])
    parser.add_argument('bundle', nargs='?', default=str(DEFAULT_BUNDLE))
    parser.add_argument('-c', dest='config', action='append', default=[],
                        help='git -c KEY=VALUE for the unbundle')
    parser.add_argument('--interval', type=float, default=0.25)
    parser.add_argument('--keep', action='store_true',
                        help='keep the repository (its path is printed)')
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix='memory-curve-'))
    repo = work / 'repo'
    subprocess.run(['git', 'init', '-q', str(repo)], check=True)
    env = dict(os.environ, PATH=f'{ROOT}{os.pathsep}{os.environ["PATH"]}')
    command = ['git']
    for item in args.config:
        command += ['-c', item]
    command += ['cinnabar', 'unbundle', args.bundle]
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=repo, env=env)
    samples = {}  # pid -> [(cpu, fields)]
    while process.poll() is None:
        for pid in descendants(process.pid):
            got = sample(pid)
            if got:
                samples.setdefault(pid, []).append(got)
        time.sleep(args.interval)
    wall = time.monotonic() - start
    if process.returncode:
        sys.exit(f'error: the unbundle failed (exit {process.returncode})')
    metadata = subprocess.run(['git', 'rev-parse', 'refs/cinnabar/metadata'],
                              cwd=repo, capture_output=True, text=True)
    print(f'{args.bundle}: {wall:.1f} s wall; load average '
          f'{os.getloadavg()[0]:.1f}; metadata {metadata.stdout.strip()}')
    for pid, points in sorted(samples.items(), key=lambda i: -len(i[1])):
        cpu_end = points[-1][0] or 1
        record(f'helper {pid}', seconds=wall, cpu=cpu_end,
               peak_mb=max(p[1]["VmHWM"] for p in points))
        print(f'helper {pid}: {len(points)} samples, {cpu_end:.1f} s CPU '
              f'(user+sys), peak {max(p[1]["VmHWM"] for p in points):.0f} '
              f'MB')
        print('  cpu%   VmRSS  RssAnon  RssFile (MB, largest in each tenth)')
        rows = []
        for tenth in range(10):
            part = [p[1] for p in points
                    if tenth <= 10 * p[0] / cpu_end < tenth + 1 or
                    (tenth == 9 and p[0] >= cpu_end)]
            if not part:
                continue
            row = [max(f[k] for f in part)
                   for k in ('VmRSS', 'RssAnon', 'RssFile')]
            rows.append(row)
            print(f'  {10 * tenth:3d}+  {row[0]:6.0f}  {row[1]:7.0f}  '
                  f'{row[2]:7.0f}')
        if len(rows) > 2:
            print(f'  growth from the 2nd tenth to the last: '
                  f'{rows[-1][0] - rows[1][0]:+.0f} MB resident, '
                  f'{rows[-1][1] - rows[1][1]:+.0f} MB heap')
    if args.keep:
        print(f'kept: {repo}')
    else:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
