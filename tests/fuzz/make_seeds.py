#!/usr/bin/env python3
"""Regenerate the seed corpus of the bundle fuzzer (tests/fuzz/seeds/).

usage: make_seeds.py [--hg HG] [--corpus DIR] [--out DIR]

Every seed is a real bundle made by real Mercurial (`hg bundle`), small
enough (a few KB) for the mutators to reach every part of it quickly:

- tiny repositories built here with hg: edits, an exec bit, a symlink, an
  empty file, a file starting with the copy-metadata escape, binary data,
  copies and renames, a named branch, a merge, a tag, odd users and dates;
- a few small bundles of the shared corpus (read in place), unbundled into
  a scratch repository and bundled again;

each in several bundle types (bundle1 none/gzip/bzip2, bundle2
none/gzip/bzip2/zstd with changegroup 02, and 03 which the helper
refuses), plus a bare changegroup (a bundle1 without its header)
and a bundle of changesets whose parents are missing.  For the stream
target (stream_target.py): stream bundles (`.packed1` from `hg
debugcreatestreamclonebundle`, `.stream2` from `hg bundle --type
'none-v2;stream=v2'`) of those repositories, with hg's default revlog
format, with zlib and without generaldelta, and with revlogs split in
`.i` and `.d` files (an extension lowers hg's inline limit).  The repositories
are built with fixed users and dates, so the seeds only change with hg's
own output.  Run it again after changing the list; the seeds are checked
in so that the fuzzer needs no hg.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# Corpus bundles worth re-bundling: copies with p1=null, symlinks, exec
# bits, latin-1 text, hostile paths, a branch name with a colon.
CORPUS_BUNDLES = ('renames.hg', 'issue6528.hg-v1', 'test-manifest.hg',
                  'test-merge-symlinks.hg', 'legacy-encoding.hg',
                  'tampered.hg', 'test-invalid-branch-name.hg')

# (suffix, hg bundle type) for the repositories built here.
ALL_TYPES = (('un1', 'none-v1'), ('gz1', 'gzip-v1'), ('bz1', 'bzip2-v1'),
             ('un2', 'none-v2'), ('gz2', 'gzip-v2'), ('bz2', 'bzip2-v2'),
             ('zs2', 'zstd-v2'), ('un2-cg03', 'none-v2;cg.version=03'))
# For the corpus bundles: the plain forms only (mutations of compressed
# data rarely get past the decompressor; the fuzzer also recompresses).
CORPUS_TYPES = (('un1', 'none-v1'), ('un2', 'none-v2'))


class Hg:
    def __init__(self, exe, home):
        self.exe = exe
        self.env = dict(os.environ, HGRCPATH=os.devnull, HGPLAIN='1',
                        HGENCODING='utf-8', HOME=home, TZ='UTC',
                        HGUSER='seed <seed@example.com>')

    def __call__(self, repo, *args):
        subprocess.run([self.exe, '-R', repo, *args], check=True,
                       env=self.env, stdout=subprocess.DEVNULL)

    def commit(self, repo, message, user=None, date='0 0', *args):
        self(repo, 'commit', '-q', '-A', '-m', message, '-d', date,
             *(('-u', user) if user else ()), *args)


def write(repo, path, data, mode=None):
    full = os.path.join(repo, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    if os.path.lexists(full):
        os.unlink(full)
    with open(full, 'wb') as f:
        f.write(data)
    if mode is not None:
        os.chmod(full, mode)


def build_basic(hg, repo):
    """Edits, modes, copies, a branch, a merge and a tag: 8 changesets."""
    subprocess.run([hg.exe, 'init', repo], check=True, env=hg.env)
    write(repo, 'a', b'one\ntwo\nthree\n')
    write(repo, 'dir/b', b'b\n' * 20)
    write(repo, 'empty', b'')
    hg.commit(repo, 'first', date='1000000000 -3600')
    write(repo, 'a', b'one\n2\nthree\nfour\n')
    write(repo, 'tool', b'#!/bin/sh\necho hi\n', 0o755)
    os.symlink('dir/b', os.path.join(repo, 'link'))
    hg.commit(repo, 'modes\n\nwith a body', user='J\u00e9r\u00f4me <j@h>',
              date='1000000100 19800')
    write(repo, 'escape', b'\x01\nnot metadata\x01\nbody\n')
    write(repo, 'bin', bytes(range(256)) * 2)
    subprocess.run([hg.exe, '-R', repo, 'cp', os.path.join(repo, 'a'),
                    os.path.join(repo, 'copied')], check=True, env=hg.env)
    hg.commit(repo, 'escape, binary, copy', user='noemail',
              date='1000000200 0')
    subprocess.run([hg.exe, '-R', repo, 'mv', os.path.join(repo, 'dir/b'),
                    os.path.join(repo, 'c')], check=True, env=hg.env)
    hg.commit(repo, 'rename', date='1000000300 -50400')
    hg(repo, 'update', '-q', '1')
    hg(repo, 'branch', '-q', 'feature/x')
    write(repo, 'a', b'one\ntwo\nthree\nbranch\n')
    hg.commit(repo, 'on a branch', date='1000000400 43200')
    hg(repo, 'update', '-q', 'default')
    hg(repo, 'merge', '-q', '--tool', 'internal:other', 'feature/x')
    hg.commit(repo, 'merge', date='1000000500 0')
    hg(repo, 'tag', '-d', '1000000600 0', '-m', 'tag', 'v1.0')
    write(repo, 'tool', b'', 0o644)
    os.unlink(os.path.join(repo, 'link'))
    write(repo, 'link', b'now a file\n')
    hg.commit(repo, 'modes back', date='1000000700 0')


def build_tiny(hg, repo):
    """One changeset of one file: the smallest complete bundle."""
    subprocess.run([hg.exe, 'init', repo], check=True, env=hg.env)
    write(repo, 'f', b'x\n')
    hg.commit(repo, 'm')


def build_empty_changesets(hg, repo):
    """Changesets with no files (null manifest) and a closed branch."""
    subprocess.run([hg.exe, 'init', repo], check=True, env=hg.env)
    empty_ok = ('--config', 'ui.allowemptycommit=1')
    hg.commit(repo, 'nothing', None, '0 0', *empty_ok)
    hg(repo, 'branch', '-q', 'other')
    hg.commit(repo, 'open', None, '1 0', *empty_ok)
    hg.commit(repo, 'close', None, '2 0', '--close-branch')


# An hg extension storing revlogs of more than 256 bytes as `.i` and `.d`
# (hg's limit is 128 KiB: seeds would not be small).
SPLIT_EXTENSION = (
    'from mercurial import revlog\n'
    'revlog._maxinline = 256\n')
# (suffix, hg init options, command) of the stream seeds.
STREAM_FORMATS = {
    '': (),
    '-zlib': ('--config', 'format.revlog-compression=zlib',
              '--config', 'format.generaldelta=false',
              '--config', 'format.sparse-revlog=false'),
    '-split': ('--config', 'extensions.split={split}'),
}


def stream_seeds(hg, tmp, repo, name, out, formats):
    """Stream bundles of `repo` in each of `formats` (STREAM_FORMATS)."""
    extension = os.path.join(tmp, 'split.py')
    with open(extension, 'w') as f:
        f.write(SPLIT_EXTENSION)
    for suffix in formats:
        options = tuple(o.format(split=extension)
                        for o in STREAM_FORMATS[suffix])
        copy = os.path.join(tmp, 'stream-%s%s' % (name, suffix))
        subprocess.run([hg.exe, 'init', *options, copy], check=True,
                       env=hg.env)
        hg(copy, 'pull', '-q', *options, repo)
        stem = os.path.join(out, name + suffix)
        for path in (stem + '.packed1', stem + '.stream2'):
            if os.path.exists(path):
                os.unlink(path)
        hg(copy, *options, 'debugcreatestreamclonebundle', stem + '.packed1')
        hg(copy, *options, 'bundle', '-q', '-a', '--type',
           'none-v2;stream=v2', stem + '.stream2')


def bundle(hg, repo, spec, dest, *extra):
    if os.path.exists(dest):
        os.unlink(dest)
    if 'cg.version=03' in spec:
        extra += ('--config', 'experimental.changegroup3=true')
    hg(repo, 'bundle', '-q', '-t', spec, *extra, dest)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--hg', default=shutil.which('hg') or 'hg')
    parser.add_argument('--corpus', default=os.environ.get(
        'CINNABAR_CORPUS', os.path.join(TOP, '..', 'shared', 'corpus')))
    parser.add_argument('--out', default=os.path.join(HERE, 'seeds'))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        hg = Hg(args.hg, tmp)
        built = {'basic': build_basic, 'tiny': build_tiny,
                 'empty': build_empty_changesets}
        for name, build in built.items():
            repo = os.path.join(tmp, name)
            build(hg, repo)
            for suffix, spec in ALL_TYPES:
                bundle(hg, repo, spec,
                       os.path.join(args.out, '%s.%s' % (name, suffix)),
                       '--all')
            stream_seeds(hg, tmp, repo, name, args.out,
                         STREAM_FORMATS if name == 'basic' else ('',))
        basic = os.path.join(tmp, 'basic')
        # Changesets whose parents the importing repository lacks.
        bundle(hg, basic, 'none-v1', os.path.join(args.out, 'partial.un1'),
               '--base', '2', '-r', 'tip')
        # A bare changegroup: a bundle1 without its 6-byte header.
        with open(os.path.join(args.out, 'basic.un1'), 'rb') as f:
            data = f.read()[6:]
        with open(os.path.join(args.out, 'basic.cg01'), 'wb') as f:
            f.write(data)
        for name in CORPUS_BUNDLES:
            repo = os.path.join(tmp, 'corpus-' + name)
            subprocess.run([hg.exe, 'init', repo], check=True, env=hg.env)
            hg(repo, 'unbundle', '-q',
               os.path.join(args.corpus, 'hgtests', name))
            stem = name.replace('.hg', '')
            for suffix, spec in CORPUS_TYPES:
                bundle(hg, repo, spec,
                       os.path.join(args.out, '%s.%s' % (stem, suffix)),
                       '--all')
    total = sum(os.path.getsize(os.path.join(args.out, f))
                for f in os.listdir(args.out))
    print('%d seeds, %d bytes in %s' % (len(os.listdir(args.out)), total,
                                        args.out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
