"""A clone from a relative local path (`git clone hg::../repo`, `hg::./x`,
`hg::x`, a bundle file) stores the remote's URL as an absolute path, as
`git clone ../repo` does: later fetches, which run in the work tree, still
find the repository. An absolute URL is stored as typed.
"""

import os

import pytest

from lib.checks import assert_no_traceback
from lib.git import git
from lib.push import hg_commit, make_hg_repo


@pytest.fixture
def layout(hg, tmp_path):
    """srv/small (an hg repository), srv/small.hg (a bundle of it) and
    the directory deep/down, where the clones are made."""
    server = make_hg_repo(hg, tmp_path / 'srv' / 'small', {'a': 'a\n'})
    hg('-R', server, 'bundle', '-q', '--all', tmp_path / 'srv' / 'small.hg')
    down = tmp_path / 'deep' / 'down'
    down.mkdir(parents=True)
    return server, down


@pytest.mark.parametrize('typed', [
    '../../srv/small', './../../srv/small', '../../srv/small.hg',
])
def test_relative_clone_then_fetch(layout, hg, typed):
    server, down = layout
    assert_no_traceback(git('clone', '-q', f'hg::{typed}', 'work', cwd=down))
    work = down / 'work'
    stored = git('config', 'remote.origin.url', cwd=work).out.strip()
    absolute = os.path.normpath(down / typed)
    assert stored == f'hg::{absolute}'
    if not typed.endswith('.hg'):
        hg_commit(hg, server, {'b': 'b\n'}, 'second')
    fetched = git('fetch', 'origin', cwd=work, check=False)
    assert fetched.returncode == 0, fetched.describe()


@pytest.mark.parametrize('typed', ['small', './small'])
def test_bare_relative_name(layout, typed):
    server, down = layout
    srv = server.parent
    assert_no_traceback(git('clone', '-q', f'hg::{typed}', 'work', cwd=srv))
    work = srv / 'work'
    stored = git('config', 'remote.origin.url', cwd=work).out.strip()
    assert stored == f'hg::{server}'
    assert git('fetch', 'origin', cwd=work, check=False).returncode == 0


def test_absolute_url_kept_as_typed(layout):
    server, down = layout
    git('clone', '-q', f'hg::{server}/', 'work', cwd=down)
    stored = git('config', 'remote.origin.url', cwd=down / 'work').out
    assert stored.strip() == f'hg::{server}/'
