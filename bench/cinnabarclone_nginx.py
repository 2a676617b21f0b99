#!/usr/bin/env python3
"""Benchmark: what checking cinnabarclone's metadata costs, against the
time cinnabarclone saves.

Makes an hg repository from a corpus bundle (nginx.hg by default, or the
one named on the command line, e.g. scale/manifest100k.hg) served by
`hg serve` with our hg/cinnabarclone.py extension, and times, in the
same run:

- `git clone --no-checkout hg::...` without cinnabarclone
  (`-c cinnabar.clone=`): everything from `getbundle`;
- the same clone from a git bundle of the whole metadata (made from the
  first clone, served by the test suite's bundle server), checked as
  `cinnabar.check` says by default (every changeset, manifest and file
  id, and each commit's tree);
- the check alone: the helper's `metadata <commit>` and `fsck received`
  on the cloned repository, as cinnabarclone runs them;
- the cinnabarclone clone with `-c cinnabar.check=none` (changeset and
  file ids not computed; manifests and trees still are).

Run from the repository root after `make`:

    build/venv/bin/python bench/cinnabarclone_nginx.py [<bundle>]
"""

import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from benchlib import BenchParser, children_cpu, record  # noqa: E402
from lib import env as test_env  # noqa: E402
from lib.bundleserver import BundleServer  # noqa: E402
from lib.corpus import NGINX, Corpus  # noqa: E402
from lib.hg import Hg, HgServer  # noqa: E402
from lib.proc import run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def timed(args, **kwargs):
    """(wall seconds, CPU seconds of the children) of running `args`."""
    cpu, start = children_cpu(), time.monotonic()
    result = run(args, timeout=3600, **kwargs)
    return time.monotonic() - start, children_cpu() - cpu, result


def clone(url, dest, *options):
    seconds, cpu, result = timed(['git', 'clone', '-q', '--no-checkout',
                                  *options, url, dest])
    return seconds, cpu, result.err


def check_alone(repo):
    """Time the check cinnabarclone makes, on `repo`'s metadata."""
    commit = run(['git', 'rev-parse', 'refs/cinnabar/metadata'],
                 cwd=repo).out.strip()
    commands = f'metadata {commit}\nfsck received\n'.encode()
    seconds, cpu, result = timed([ROOT / 'git-cinnabar-helper'], cwd=repo,
                                 input=commands)
    assert result.out.split('\n')[1].endswith(' 0'), result.out
    return seconds, cpu, result.out.split('\n')[1]


def main():
    parser = BenchParser(description=__doc__.split('\n')[0])
    parser.add_argument('bundle', nargs='?', type=Path,
                        help='the hg bundle to serve (default: the '
                        "corpus's nginx.hg)")
    args = parser.parse_args()
    hg = Hg(test_env.hg_executable())
    corpus = Corpus(test_env.corpus_dir())
    bundle = args.bundle or corpus.bundle(NGINX)
    work = Path(tempfile.mkdtemp(prefix='bench-cinnabarclone-'))
    saved = dict(os.environ)
    isolated = test_env.isolated_env(work / 'home', hg.exe)
    os.environ.clear()
    os.environ.update(isolated)
    try:
        repo = hg.repo_from_bundle(bundle, work / 'hg')
        with open(repo / '.hg' / 'hgrc', 'a') as f:
            f.write('[extensions]\ncinnabarclone = %s\n'
                    % (ROOT / 'hg' / 'cinnabarclone.py'))
        www = work / 'www'
        www.mkdir()
        with contextlib.ExitStack() as stack:
            server = stack.enter_context(HgServer(hg, repo, work / 'serve'))
            bundles = stack.enter_context(BundleServer(www, work / 'www-log'))
            url = f'hg::{server.url}'
            print(f'{hg.version()}; {bundle.name}; load '
                  f'{os.getloadavg()[0]:.1f}')
            plain = clone(url, work / 'plain', '-c', 'cinnabar.clone=')
            print(f'plain clone          {plain[0]:7.1f} s  '
                  f'CPU {plain[1]:7.1f}')
            record('plain clone', seconds=plain[0], cpu=plain[1])
            run(['git', 'bundle', 'create', www / 'meta.bundle',
                 'refs/cinnabar/metadata'], cwd=work / 'plain', timeout=3600)
            (repo / '.hg' / 'cinnabar.manifest').write_text(
                bundles.url('meta.bundle') + '\n')
            for name, options in (('cinnabarclone', ()),
                                  ('check=none', ('-c',
                                                  'cinnabar.check=none'))):
                seconds, cpu, err = clone(url, work / name, *options)
                assert 'falling back' not in err, err
                print(f'{name:20} {seconds:7.1f} s  CPU {cpu:7.1f}')
                record(name, seconds=seconds, cpu=cpu)
            seconds, cpu, counts = check_alone(work / 'cinnabarclone')
            print(f'check alone          {seconds:7.1f} s  CPU {cpu:7.1f}  '
                  f'({counts})')
            record('check alone', seconds=seconds, cpu=cpu)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
