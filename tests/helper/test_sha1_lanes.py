"""Manifest ids are hashed 16 at a time (helper/sha1/sha1-lanes.h) when the
CPU has AVX-512, 2 at a time with the SHA instructions, 8 with AVX2, else
one at a time; CINNABAR_SHA1_MB=0 forces the latter, CINNABAR_SHA1_MB=8
(or 2) those lanes where the CPU has them.

- The helper's `test-sha1` hook hashes pseudo-random messages through
  the lanes (lengths 0..300, around multiples of 64, up to 420 kB; cut
  into pieces at odd offsets; lanes refilled while others go on; the
  multi-lane and one-lane code mixed) and compares every digest with
  OpenSSL's: with the lanes chosen for this CPU, with each of the others
  it has, and one at a time.
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
    """What the helper should choose (16, 2, 8 or 0 lanes), and the
    other lane counts it can be asked for."""
    flags = cpu_flags()
    others = [n for n, flag in ((8, 'avx2'), (2, 'sha_ni')) if flag in flags]
    if {'avx512f', 'avx512bw', 'avx512vl'} <= flags:
        return 16, others
    return (others[-1], others[:-1]) if others else (0, [])


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
    lanes, others = cpu_lanes()
    assert digests_equal_openssl(seed, mb, tmp_path) == lane_path(lanes)
    for other in others:
        path = digests_equal_openssl(seed, str(other), tmp_path)
        assert path == lane_path(other)
    ran = 'ran, digests equal OpenSSL\'s'
    for n, what in ((16, 'AVX-512'), (8, 'AVX2'), (2, 'SHA instructions')):
        session_note(f'SHA-1 {n}-lane ({what}) path',
                     ran if n == lanes or n in others else
                     f'NOT run: this CPU lacks {what}')


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


def test_manifest_ids_verified_by_the_other_lanes(tmp_path, monkeypatch):
    """The lanes this CPU has but does not choose (8 AVX2 ones where the
    SHA instructions give 2) verify ids too: one clone refused."""
    lanes, others = cpu_lanes()
    if not others:
        pytest.skip(f'this CPU has no lanes besides the {lane_path(lanes)} '
                    'code it chooses')
    for other in others:
        monkeypatch.setenv('CINNABAR_SHA1_MB', str(other))
        history = long_history(17)
        dest = tmp_path / f'clone{other}'
        result = clone(write(history, tmp_path), dest, '--no-checkout',
                       check=False)
        assert_failed_for_people(result)
        wrong = history.manifests[17][0].hex()
        assert f'manifest {wrong} does not match its contents' in result.err
