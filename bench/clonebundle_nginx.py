#!/usr/bin/env python3
"""Benchmark: cloning nginx from an `hg serve` that advertises a clone
bundle, against the same clone without it.

Makes an hg repository from the corpus's nginx.hg with the clonebundles
extension, a zstd-v2 bundle of its first 9000 changesets served by the
test suite's bundle server (tests/lib/bundleserver.py), and times, in the
same run and on the same machine:

- `git clone --no-checkout hg::...` with clone bundles off
  (`-c cinnabar.clonebundles=false`): everything from `getbundle`;
- the same clone with the clone bundle: the bundle from the bundle
  server, the rest (about 800 changesets) from `getbundle`;
- the same again with the bundle download cut at half its size, resumed.

For each, the bytes hg serve sent for `getbundle` (counted by the test
suite's proxy) and the bytes the bundle server sent. Run from the
repository root after `make`:

    build/venv/bin/python bench/clonebundle_nginx.py
"""

import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'tests'))

from benchlib import BenchParser, record  # noqa: E402
from lib import env as test_env  # noqa: E402
from lib.bundleserver import BundleServer  # noqa: E402
from lib.corpus import NGINX, Corpus  # noqa: E402
from lib.hg import Hg, HgServer  # noqa: E402
from lib.proc import run  # noqa: E402
from lib.proxy import HgProxy  # noqa: E402

BUNDLE_REVS = '0:8999'


def timed_clone(url, dest, *options):
    start = time.monotonic()
    run(['git', 'clone', '-q', '--no-checkout', *options, url, dest],
        timeout=1800)
    return time.monotonic() - start


def one(name, work, hg, repo, www, cut_after, *options):
    """(seconds, getbundle bytes, bundle bytes, bundle requests)."""
    with contextlib.ExitStack() as stack:
        bundles = stack.enter_context(BundleServer(
            www, work / f'{name}-bundles', cut_after=cut_after))
        manifest = repo / '.hg' / 'clonebundles.manifest'
        manifest.write_text(f'{bundles.url("nginx.hg")} BUNDLESPEC=zstd-v2\n')
        server = stack.enter_context(HgServer(hg, repo, work / f'{name}-hg'))
        proxy = stack.enter_context(HgProxy(server.port))
        seconds = timed_clone(f'hg::{proxy.url}', work / name, *options)
        gets = [r for r in bundles.requests() if r['method'] == 'GET']
        return (seconds, proxy.bytes_by_command['getbundle'],
                bundles.bytes_sent(), [r['status'] for r in gets])


def main():
    BenchParser(description=__doc__.split('\n')[0]).parse_args()
    hg = Hg(test_env.hg_executable())
    corpus = Corpus(test_env.corpus_dir())
    work = Path(tempfile.mkdtemp(prefix='bench-clonebundle-'))
    saved = dict(os.environ)
    isolated = test_env.isolated_env(work / 'home', hg.exe)
    os.environ.clear()
    os.environ.update(isolated)
    try:
        repo = hg.repo_from_bundle(corpus.bundle(NGINX), work / 'nginx')
        with open(repo / '.hg' / 'hgrc', 'a') as f:
            f.write('[extensions]\nclonebundles =\n')
        www = work / 'www'
        www.mkdir()
        hg('-R', repo, 'bundle', '-q', '--type', 'zstd-v2', '--base',
           'null', '-r', BUNDLE_REVS, www / 'nginx.hg', timeout=900)
        size = (www / 'nginx.hg').stat().st_size
        print(f'{hg.version()}; clone bundle: {size} bytes '
              f'(revisions {BUNDLE_REVS})')
        cases = [('plain', None, '-c', 'cinnabar.clonebundles=false'),
                 ('bundle', None), ('bundle-cut', size // 2)]
        for name, cut, *options in cases:
            seconds, getbundle, sent, statuses = one(
                name, work, hg, repo, www, cut, *options)
            print(f'{name:11} {seconds:6.1f} s  getbundle {getbundle:>9} B'
                  f'  bundle server {sent:>9} B  GETs {statuses}')
            record(name, seconds=seconds, getbundle_bytes=getbundle,
                   bundle_bytes=sent)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
