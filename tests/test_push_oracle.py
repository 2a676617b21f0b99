"""The push oracle (lib.push_oracle): random git histories made to hurt
(lib.randhist: names sorting next to directories, file <-> directory
swaps, exec bits, symbolic links, empty and binary files, exact renames,
non-ASCII names, merges, a committer other than the author), pushed to an
empty Mercurial repository in several steps, give the changesets `hg
commit` makes of the same changes (lib.hgreplay): same parents, manifest,
files list, user, date, extras, and the same file revisions with the same
parents and copies.  `make fuzz-push` runs more seeds, longer.
"""

import pytest

from lib.push_oracle import check_history, run
from lib.push_oracle_cases import CASES

SEEDS = (1, 2, 3, 4)
COMMITS = 60
STEPS = 3


@pytest.mark.parametrize('seed', SEEDS)
def test_random_history_pushes_as_hg_commits(seed, hg, tmp_path):
    outcome = run(hg, seed, COMMITS, STEPS, tmp_path / 'oracle')
    assert not outcome.problems, outcome.report(limit=10)


@pytest.mark.parametrize('name', sorted(CASES))
def test_hand_made_history_pushes_as_hg_commits(name, hg, tmp_path):
    """The cases of lib.push_oracle_cases: merges, renames, names beside
    directories, each a difference the oracle once found."""
    outcome = check_history(hg, CASES[name], tmp_path / name)
    assert not outcome.problems, outcome.report(limit=10)
