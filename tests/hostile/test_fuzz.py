"""The fuzzer's own ground truth (tests/fuzz/), checked quickly.

- The generator's clean profile makes what Mercurial makes: real `hg
  unbundle` takes its bundles and `hg verify` finds nothing, and every id
  verifies by the fuzzer's own oracle (hgcheck).
- Those bundles go through the normal helper as the fuzzer drives it
  (bundle-heads, import, finish, fsck full, and `git cinnabar unbundle`
  for some): every one is imported, fsck finds no problem, nothing is
  left over.  The full fuzzer (ASan/UBSan, mutations) runs in CI as
  `make fuzz-short`.
- The line target's scripts (quoted words, broken lines) go through the
  normal helper without a finding: every answer the one expected.
- The stream target's parser reads the stream seeds hg made, and its
  mutations mostly keep the framing readable; its crafted changelogs of
  every chain shape are imported, within the target's CPU budget.
"""

import random
import re
import sys

import pytest

from lib.env import ROOT
from lib.proc import run

FUZZ = ROOT / 'tests' / 'fuzz'
sys.path.insert(0, str(FUZZ))

import hgcheck  # noqa: E402
import hggen  # noqa: E402
import line_target  # noqa: E402
import mutate_stream  # noqa: E402
import streamfmt  # noqa: E402
from stream_target import StreamTarget  # noqa: E402


def test_clean_generated_bundles_are_valid_for_hg(hg, tmp_path):
    generator = hggen.Generator(random.Random(20261124))
    checked = 0
    while checked < 4:
        gen = generator.generate(clean=True)
        assert gen.clean and hgcheck.bundle_ids_verify(gen.data) is True
        if gen.data[:1] == b'\0':
            continue  # a bare changegroup: hg unbundle wants a header
        bundle = tmp_path / ('b%d.hg' % checked)
        bundle.write_bytes(gen.data)
        repo = tmp_path / ('r%d' % checked)
        hg.repo_from_bundle(bundle, repo)
        result = hg('-R', repo, 'verify', check=False)
        assert result.returncode == 0, result.describe()
        checked += 1


# The run is bounded by its number of inputs: --seconds and the timeouts
# only stop a run that hangs, far beyond what 25 small inputs take even on
# a loaded machine (a few seconds when idle), within the test's own 300 s.
INPUTS = 25
HANG_SECONDS = 240


def test_clean_generated_bundles_import_through_the_helper(tmp_path):
    helper = ROOT / 'git-cinnabar-helper'
    result = run([sys.executable, FUZZ / 'fuzz.py', '--helper', helper,
                  '--only-clean', '--seconds', str(HANG_SECONDS),
                  '--max-inputs', str(INPUTS), '--timeout', '60',
                  '--seed', '1', '--cli-every', '5', '--minimize', '0',
                  '--out', tmp_path / 'findings'], check=False,
                 timeout=HANG_SECONDS + 30)
    assert result.returncode == 0, result.describe()
    assert 'no findings' in result.out
    # The summary line (progress lines, printed on slower runs, start with
    # their job's number).
    assert re.search(rf'^{INPUTS} inputs in ', result.out, re.M), result.out


def test_line_target_scripts():
    rng = random.Random(20261202)
    target = line_target.LineTarget(ROOT / 'git-cinnabar-helper',
                                    timeout=60, leaks=False)
    try:
        for _ in range(25):
            script = line_target.random_script(rng)
            outcome = target.run(script)
            assert outcome.kind is None, (outcome, script.encode()[:2000],
                                          outcome.answers[-2000:])
    finally:
        target.close()


def test_stream_seeds_and_mutations():
    seeds = [p.read_bytes() for p in sorted((FUZZ / 'seeds').iterdir())
             if p.suffix in ('.packed1', '.stream2')]
    assert len(seeds) == 10
    for data in seeds:
        stream = streamfmt.read_stream(data)
        assert stream.entries and b'revlogv1' in stream.requirements
        again = streamfmt.read_stream(stream.encode())
        assert [(e.kind, e.name, e.data) for e in again.entries] == [
            (e.kind, e.name, e.data) for e in stream.entries]
        for entry in stream.entries:
            if entry.name == b'00changelog.i':
                revlog = streamfmt.Revlog(entry.data)
                assert [f[4] for _, f in revlog.entries] == list(
                    range(len(revlog.entries)))  # the seeds: full texts
    rng = random.Random(1)
    readable = 0
    for _ in range(300):
        data = mutate_stream.mutated(rng, rng.choice(seeds), seeds)
        try:
            streamfmt.read_stream(data)
            readable += 1
        except (streamfmt.FormatError, ValueError, IndexError):
            pass
    assert readable > 150


@pytest.mark.parametrize('shape', sorted(mutate_stream.CHAIN_SHAPES))
def test_stream_target_chain_shapes(shape, tmp_path):
    data, what = mutate_stream.chain_stream(random.Random(1), shape, 100)
    target = StreamTarget(ROOT / 'git-cinnabar-helper', workdir=tmp_path,
                          leaks=False)
    try:
        outcome = target.run(data)
    finally:
        target.close()
    assert outcome.kind is None and outcome.accepted, (what, outcome,
                                                       outcome.stderr)


def test_bundle1_seeds_import_as_http_answers():
    """The http mode of the fuzz target (a bundle1 server's getbundle
    answer, `http import <url> cg01`): the bundle1 seeds hg made are
    imported, fsck clean (but `partial`, whose parents are missing)."""
    seeds = sorted(p for p in (FUZZ / 'seeds').iterdir()
                   if p.suffix in ('.un1', '.gz1', '.bz1', '.cg01')
                   and p.stem != 'partial')
    assert len(seeds) >= 10
    result = run([sys.executable, FUZZ / 'fuzz.py', '--helper',
                  ROOT / 'git-cinnabar-helper', '--http', '--replay',
                  *seeds], check=False)
    assert result.returncode == 0, result.describe()
    lines = result.out.splitlines()
    assert lines == [f'{p}: no finding (accepted)' for p in seeds], \
        result.describe()
