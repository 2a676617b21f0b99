"""Manifest ids are hashed 16 at a time (helper/sha1/sha1-lanes.h) when the
CPU has AVX-512, else one at a time; CINNABAR_SHA1_MB=0 forces the
latter.

- The helper's `test-sha1` hook hashes pseudo-random messages through
  the lanes (lengths 0..300, around multiples of 64, up to 420 kB; cut
  into pieces at odd offsets; lanes refilled while others go on; the
  16-lane and one-lane code mixed) and compares every digest with
  OpenSSL's.
- A history of 40 manifests, verified by the worker threads whichever
  code hashes them, clones; with one wrong manifest id anywhere in it,
  the clone is refused and names that manifest.
"""

import pytest

from lib.crafted import History, manifest_line
from lib.env import ROOT
from lib.git import clone, hg_url, refs
from lib.checks import assert_failed_for_people
from lib.proc import run

HELPER = ROOT / 'git-cinnabar-helper'


def cpu_has_avx512():
    with open('/proc/cpuinfo') as f:
        flags = f.read()
    wanted = ('avx512f', 'avx512bw', 'avx512vl')
    return all(f in flags.split() for f in wanted)


@pytest.mark.parametrize('mb', ['1', '0'])
@pytest.mark.parametrize('seed', [1, 2])
def test_digests_equal_openssl(mb, seed, tmp_path, session_note):
    command = f'test-sha1 {seed} 1500\n'.encode()
    result = run([HELPER], cwd=tmp_path, input=command,
                 extra_env={'CINNABAR_SHA1_MB': mb}, check=False)
    assert result.returncode == 0, result.describe()
    path = '16-lane' if mb == '1' and cpu_has_avx512() else 'one-lane'
    assert result.out == f'ok 1500 {path}\n', result.describe()
    if mb == '1':
        session_note('SHA-1 16-lane (AVX-512) path',
                     'ran, digests equal OpenSSL\'s' if path == '16-lane'
                     else 'NOT run: this CPU lacks AVX-512 (the one-lane '
                     'code was tested)')


def long_history(wrong_at=None, revisions=40):
    """Each revision adds a file: manifests of growing lengths."""
    history = History()
    entries = []
    for i in range(revisions):
        entry = (b'f%03d' % i, b'content %d\n' % i * (i % 7 + 1))
        entries.append(entry)
        text = b''.join(manifest_line(p, c) for p, c in entries)
        history.add(dict([entry]), manifest_text=text,
                    wrong='manifest' if i == wrong_at else None)
    return history


def write(history, tmp_path):
    path = tmp_path / 'long.hg'
    path.write_bytes(history.bundle())
    return hg_url(str(path))


@pytest.mark.parametrize('mb', ['1', '0'])
@pytest.mark.parametrize('wrong_at', [None, 0, 17, 39])
def test_manifest_ids_verified_by_either_code(mb, wrong_at, tmp_path,
                                              monkeypatch):
    monkeypatch.setenv('CINNABAR_SHA1_MB', mb)
    history = long_history(wrong_at)
    dest = tmp_path / 'clone'
    result = clone(write(history, tmp_path), dest, '--no-checkout',
                   check=False)
    if wrong_at is None:
        assert result.returncode == 0, result.describe()
        assert refs(dest)
        return
    assert_failed_for_people(result)
    wrong = history.manifests[wrong_at][0].hex()
    assert f'manifest {wrong} does not match its contents' in result.err
    assert not dest.exists() or refs(dest) == {}
