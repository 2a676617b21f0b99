"""Stream bundles whose stated lengths or delta chains would cost
gigabytes or hours: refused with one line before the cost, or imported in
time linear in their size.

The bundles are crafted (tests/fuzz/streamfmt.py): a changelog of
changesets each the child of the one before, every hg id valid, whose
chunks and stated text lengths are set at will, imported by `git cinnabar
unbundle` (the helper reads the revlogs as it does for a stream clone).
"""

import sys
import zlib

import pytest

from lib.checks import assert_failed_for_people, file_digests
from lib.env import ROOT
from lib.git import METADATA_REF, init, refs
from lib.hostile import assert_no_leftovers, assert_no_signal_death
from lib.proc import run, run_measured

sys.path.insert(0, str(ROOT / 'tests' / 'fuzz'))
import streamfmt  # noqa: E402

RSS_LIMIT_KB = 150 * 1024
OVER = (1 << 31) + 256


def second_full(rev):
    """Revision 1 a full text, the others deltas against the one before."""
    return rev if rev < 2 else rev - 1


def deltas(rev):
    return rev if rev == 0 else rev - 1


def unbundle_measured(repo, bundle, **kwargs):
    """`git cinnabar unbundle bundle` in `repo`: (result, the largest
    resident size of its processes in kB)."""
    return run_measured(['git', 'cinnabar', 'unbundle', bundle], cwd=repo,
                        **kwargs)


def node_hex(count, rev):
    return streamfmt.changeset_texts(count)[rev][0].hex()


# (what, the shape of the chains, the chunks and stated lengths set, the
# error said of revision 1 of 3).
STATED = [
    ('zstd frame of 2 GB', second_full,
     {1: streamfmt.rle_zstd_frame(OVER, OVER)}, {1: OVER},
     'states a text of 2147483904 bytes, more than a changegroup can carry '
     '(corrupt stream)'),
    ('zlib stream', second_full, {1: zlib.compress(b'\0' * (1 << 20), 9)},
     {1: OVER}, 'states a text of 2147483904 bytes, more than a '
     'changegroup can carry (corrupt stream)'),
    ('0xffffffff', second_full, {1: streamfmt.rle_zstd_frame(1 << 20)},
     {1: 0xffffffff}, 'states a text of 4294967295 bytes, more than a '
     'changegroup can carry (corrupt stream)'),
    # Revision 1 states 2 GB (less than a chunk's most), its delta making
    # 60 bytes; revision 2's delta against it inflates to 1 GB, within
    # the 24 GB that 12 times the base's stated length allowed.
    ('delta of another length', deltas,
     {2: streamfmt.rle_zstd_frame(1 << 30)}, {1: (1 << 31) - 1000},
     'is not of its stated length (corrupt stream)'),
]


@pytest.mark.parametrize('what,shape,chunks,text_lens,message', STATED,
                         ids=[s[0] for s in STATED])
def test_stated_length_refused_before_inflating(what, shape, chunks,
                                                text_lens, message,
                                                tmp_path):
    bundle = tmp_path / 'stream.hg'
    bundle.write_bytes(streamfmt.changelog_stream(
        3, shape, chunks=chunks, text_lens=text_lens))
    repo = init(tmp_path / 'repo')
    before = file_digests(repo / '.git', ['cinnabar.lock'])
    result, rss = unbundle_measured(repo, bundle)
    said = assert_failed_for_people(result, message)
    assert said == (f'fatal: revision {node_hex(3, 1)} of the changelog '
                    f'{message}'), said
    assert_no_signal_death(result)
    assert rss < RSS_LIMIT_KB, f'{rss} kB\n' + result.describe()
    assert file_digests(repo / '.git', ['cinnabar.lock']) == before
    assert_no_leftovers(repo)


def test_deltas_against_r_minus_2_cost_one_chunk_each(tmp_path):
    """Each changeset a delta against the one two before: each text is
    built from the one kept, not from its chain's start (which would read
    a number of chunks growing with the square of the count)."""
    count = 3000
    bundle = tmp_path / 'stream.hg'
    bundle.write_bytes(streamfmt.changelog_stream(
        count, lambda rev: rev if rev < 2 else rev - 2))
    repo = init(tmp_path / 'repo')
    result = run(['git', 'cinnabar', 'unbundle', bundle], cwd=repo,
                 extra_env={'GIT_CINNABAR_TRACE': '1'})
    assert result.out.startswith(f'imported {count} changesets'), \
        result.describe()
    assert (f'cinnabar-helper: revlog: {count} texts of the changelog '
            f'built from {count} chunks') in result.err.splitlines()
    assert set(refs(repo)) == {METADATA_REF, 'refs/notes/cinnabar'}
