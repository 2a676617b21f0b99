"""tampered.hg holds hostile paths: `.hg/test`, `foo/.hg/test`, `../test`,
`/tmp/test`, and a symlink `back -> ..` with `back/test`.  Cloning it,
and checking out each of its heads, writes nothing outside the clone, and
the commits are the reference's.

The clone runs in `<tmp>/sandbox`, into `<tmp>/sandbox/clone`.  A write
through a hostile path would land in `<tmp>/sandbox` or `<tmp>` (`../`,
`back/`, relative to the clone or to the working directory), or in
`/tmp/test` and `/test`.  Everything under `<tmp>` but the clone is
snapshot before and after, and so are those absolute paths; they may
exist before the test (another program's /tmp/test), so the test compares
their state rather than asking that they do not exist.
"""

import os
import stat

import pytest

from lib.checks import assert_expected_ids, assert_no_traceback
from lib.git import clone, git, refs

BUNDLE = 'tampered.hg'
ABSOLUTE_TARGETS = ('/tmp/test', '/test', '/tmp/back')


def path_state(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        # Entries made in a directory show as entries of their own.
        return (st.st_mode, st.st_ino)
    return (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns)


def snapshot(root, skip):
    """{path: state} of everything under `root` but the tree `skip`."""
    states = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames
                       if os.path.join(dirpath, d) != str(skip)]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            states[path] = path_state(path)
    for path in ABSOLUTE_TARGETS:
        states[path] = path_state(path)
    return states


def assert_nothing_written_outside(before, after):
    changed = sorted(p for p in set(before) | set(after)
                     if before.get(p) != after.get(p))
    assert not changed, f'written outside the clone: {changed}'


@pytest.mark.parametrize('transport', ['http', 'bundle'])
def test_hostile_paths_stay_inside_clone(transport, source, corpus,
                                         tmp_path):
    sandbox = tmp_path / 'sandbox'
    sandbox.mkdir()
    work = sandbox / 'clone'
    src = source(transport, BUNDLE)
    before = snapshot(tmp_path, skip=work)

    result = clone(src.url, work)
    assert_no_traceback(result)
    assert_nothing_written_outside(before, snapshot(tmp_path, skip=work))

    heads = refs(work, 'refs/remotes/origin/branches/')
    assert len(heads) == 5
    for commit in heads.values():
        # git refuses some of these trees; what matters is where it writes.
        git('checkout', '-q', '--detach', '-f', commit, cwd=work,
            check=False)
        assert_nothing_written_outside(before,
                                       snapshot(tmp_path, skip=work))
    assert_expected_ids(work, corpus.expected(BUNDLE))
