"""Manifest ids are hashed 16 at a time (helper/sha1/sha1-lanes.h) when the
CPU has AVX-512, 8 at a time when it has AVX2 only, else one at a time;
CINNABAR_SHA1_MB=0 forces the latter, CINNABAR_SHA1_MB=8 the 8 lanes.

- The helper's `test-sha1` hook hashes pseudo-random messages through
  the lanes (lengths 0..300, around multiples of 64, up to 420 kB; cut
  into pieces at odd offsets; lanes refilled while others go on; the
  multi-lane and one-lane code mixed) and compares every digest with
  OpenSSL's: with the most lanes this CPU has, with 8 where that is 16,
  and one at a time.
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


def cpu_flags():
    with open('/proc/cpuinfo') as f:
        return set(f.read().split())


def cpu_lanes():
    """What the helper should choose: 16, 8 or 0 lanes."""
    flags = cpu_flags()
    if {'avx512f', 'avx512bw', 'avx512vl'} <= flags:
        return 16
    return 8 if 'avx2' in flags else 0


def lane_path(lanes):
    return f'{lanes}-lane' if lanes else 'one-lane'


def digests_equal_openssl(seed, mb, tmp_path):
    """The path the helper took (its answer names it)."""
    command = f'test-sha1 {seed} 1500\n'.encode()
    result = run([HELPER], cwd=tmp_path, input=command,
                 extra_env={'CINNABAR_SHA1_MB': mb}, check=False)
    assert result.returncode == 0, result.describe()
    assert result.out.startswith('ok 1500 '), result.describe()
    return result.out.split()[2]


@pytest.mark.parametrize('mb', ['1', '0'])
@pytest.mark.parametrize('seed', [1, 2])
def test_digests_equal_openssl(mb, seed, tmp_path, session_note):
    if mb == '0':
        assert digests_equal_openssl(seed, mb, tmp_path) == 'one-lane'
        return
    lanes = cpu_lanes()
    assert digests_equal_openssl(seed, mb, tmp_path) == lane_path(lanes)
    # Where AVX-512 gives 16 lanes, the 8 AVX2 ones too.
    if lanes == 16:
        assert digests_equal_openssl(seed, '8', tmp_path) == '8-lane'
    ran = 'ran, digests equal OpenSSL\'s'
    session_note('SHA-1 16-lane (AVX-512) path',
                 ran if lanes == 16 else 'NOT run: this CPU lacks AVX-512 '
                 f'(the {lane_path(lanes)} code was tested)')
    session_note('SHA-1 8-lane (AVX2) path',
                 ran if lanes else 'NOT run: this CPU lacks AVX2 (the '
                 'one-lane code was tested)')


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
