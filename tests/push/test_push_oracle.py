"""The push oracle (lib.push_oracle): random git histories made to hurt
(lib.randhist: names sorting next to directories, file <-> directory
swaps, exec bits, symbolic links, empty and binary files, exact renames,
non-ASCII names, merges, a committer other than the author), pushed to an
empty Mercurial repository in several steps, give the changesets `hg
commit` makes of the same changes (lib.hgreplay): same parents, manifest,
files list, user, date, extras, and the same file revisions with the same
parents and copies (the copies git finds, as git-cinnabar 0.7.5 asks it:
lib.git.git_copies), phases and bookmarks; one series over HTTP, one over
SSH, the others to a local path.  `make fuzz-push` runs more seeds, longer.
"""

import pytest

from lib.push import writable_remote
from lib.push_oracle import check_history
from lib.push_oracle_cases import CASES
from lib.randhist import generate

pytestmark = pytest.mark.hgserver

SEEDS = ((1, 'http'), (2, 'ssh'), (3, 'local'), (4, 'local'))
COMMITS = 60
STEPS = 3


@pytest.mark.parametrize('seed,transport', SEEDS)
def test_random_history_pushes_as_hg_commits(seed, transport, hg, hg_serve,
                                             tmp_path, monkeypatch):
    def url_of(repo):
        return writable_remote(transport, repo, hg_serve, tmp_path,
                               monkeypatch.setenv).url
    outcome = check_history(hg, generate(seed, COMMITS, STEPS),
                            tmp_path / 'oracle', url_of)
    assert not outcome.problems, outcome.report(limit=10)


@pytest.mark.parametrize('name', sorted(CASES))
def test_hand_made_history_pushes_as_hg_commits(name, hg, tmp_path):
    """The cases of lib.push_oracle_cases: merges, renames, names beside
    directories, each a difference the oracle once found."""
    outcome = check_history(hg, CASES[name], tmp_path / name)
    assert not outcome.problems, outcome.report(limit=10)
