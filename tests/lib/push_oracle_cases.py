"""Small histories made by hand, through the push oracle
(lib.push_oracle.check_history): what it found, kept as reproductions.

    cd tests && PATH=..:$PATH python -m lib.push_oracle_cases [name...]

prints, for each case, the differences between what we push and what `hg
commit` makes of the same change.  `base`, `ours`, `theirs`, `new` are
file contents; each case is a list of (parents, {path: content}).

Each is also a test (tests/push/test_push_oracle.py). Merges as `hg commit`
makes them, where our push once differed (git-cinnabar 0.7 does as hg):
- `merge-new-over-p2-change`: p2 changed f (p1's revision is an ancestor of
  p2's), the merge has new content: a revision whose only parent is p2's;
- `merge-new-over-p1-change`: the same with p1 the side that changed;
- `merge-reverts-p1-change`: p1 changed f, the merge goes back to the base
  content (p2's revision): a new revision (parent p1's), f listed;
- `merge-both-changed-takes-p2`: both changed f, the merge takes p2's
  content: a new revision with both parents, f listed (as hg commit after
  debugsetparents; `hg merge` with the `:other` tool would reuse p2's);
- `merge-keeps-p1-manifest`: a merge whose files are all p1's: p1's
  manifest;
- `merge-takes-p2-rename`: p2 renamed a to b, the merge takes it: no copy
  recorded again, b not listed;
- `merge-takes-p2-removal`: p2 removed g, which p1 left as the merge base
  has it: g not listed (Mercurial's removal filter; git-cinnabar 0.7
  lists it).
Copies as git-cinnabar 0.7.5 records them (git's `diff-tree -C -C100%`,
lib.git.git_copies), the replay telling hg the same:
- `rename-empty`: a renamed empty file is a plain addition;
- `rename-two-targets`: both targets are copies;
- `copy-of-modified`: a copy of a file modified in the same commit.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

from . import env
from .hg import Hg
from .push_oracle import check_history
from .randhist import REG, Commit, History

PERSON = ('Case Maker', 'cases@example.com')
BASE, OURS, THEIRS, NEW = b'base\n', b'ours\n', b'theirs\n', b'new\n'
G1, G2 = {'g': b'g\n'}, {'g': b'g2\n'}


def history(*specs):
    """A History of (parents, {path: content}) commits, pushed at once."""
    commits = []
    for i, (parents, files) in enumerate(specs):
        files = {p: (REG, data) for p, data in files.items()}
        date = '%d +0000' % (1500000000 + i)
        commit = Commit(i, list(parents), files, PERSON, PERSON, date, date,
                        f'case commit {i}\n', [])
        commits.append(commit)
    return History('hand-made', commits, [len(commits)])


def merge_case(base, p1, p2, merged):
    """f is `base`, then `p1` on one side (with g changed on the other),
    `p2` on the other, merged as `merged`."""
    return history(((), {'f': base, **G1}), ((0,), {'f': p1, **G1}),
                   ((0,), {'f': p2, **G2}), ((1, 2), {'f': merged, **G2}))


CASES = {
    'merge-new-over-p2-change': merge_case(BASE, BASE, THEIRS, NEW),
    'merge-new-over-p1-change': merge_case(BASE, OURS, BASE, NEW),
    'merge-reverts-p1-change': merge_case(BASE, OURS, BASE, BASE),
    'merge-both-changed-takes-p2': merge_case(BASE, OURS, THEIRS, THEIRS),
    'merge-keeps-p1-manifest': history(
        ((), {'f': BASE}), ((0,), {'f': OURS}), ((0,), {'f': THEIRS}),
        ((1, 2), {'f': OURS})),
    'merge-takes-p2-rename': history(
        ((), {'a': BASE, **G1}), ((0,), {'a': BASE, **G2}),
        ((0,), {'b': BASE, **G1}), ((1, 2), {'b': BASE, **G2})),
    'merge-takes-p2-removal': history(
        ((), {'f': BASE, **G1}), ((0,), {'f': OURS, **G1}),
        ((0,), {'f': BASE}), ((1, 2), {'f': OURS})),
    'rename-empty': history(((), {'a': b''}), ((0,), {'b': b''})),
    'rename-two-targets': history(((), {'a': BASE}),
                                  ((0,), {'b': BASE, 'c': BASE})),
    'copy-of-modified': history(((), {'a': BASE}),
                                ((0,), {'a': OURS, 'b': BASE})),
    'remove-beside-directory': history(
        ((), {'a.b': BASE, 'a/x': b'x\n', 'a/y': b'y\n'}),
        ((0,), {'a/x': b'x\n', 'a/y': b'y\n'})),
    'modify-to-metadata-like-content': history(
        ((), {'f': BASE}), ((0,), {'f': b'\1\nnot metadata\n\1\nbody\n'})),
}


def main(names):
    tmp = Path(tempfile.mkdtemp(prefix='push-oracle-cases-'))
    hg = Hg(env.hg_executable())
    isolated = env.isolated_env(tmp / 'home', hg.exe)
    os.environ.clear()
    os.environ.update(isolated)
    for name in names or CASES:
        outcome = check_history(hg, CASES[name], tmp / name)
        print(f'== {name}: {len(outcome.problems)} differences')
        for problem in outcome.problems:
            print('  ' + problem)
    shutil.rmtree(tmp)


if __name__ == '__main__':
    main(sys.argv[1:])
