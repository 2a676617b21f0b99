"""What `make install` puts in place works on its own, and `make uninstall`
takes all of it away.

- `make install prefix=P`: with P/bin first on PATH and this checkout
  nowhere on it, git finds the installed `git-remote-hg`, which runs the
  installed package and helper: a clone of a corpus repository over HTTP
  gives the reference git ids, a commit pushed back lands in the server,
  `git cinnabar fsck` runs from P too.  `make uninstall prefix=P` leaves
  no file under P.
- `make install DESTDIR=D prefix=P`, as packagers run it: everything
  lands under D/P, the launchers link to P (not D/P), and no installed
  file names D.

The helper installed is the one already built (`make -o helper`): the
test must not rebuild the helper that the rest of the run uses.
"""

import os
from pathlib import Path

from lib import env as test_env
from lib.checks import assert_expected_ids, assert_no_traceback
from lib.git import clone, git
from lib.push import Author, assert_pushed, git_commit, pushed_nodes
from lib.proc import run

ROOT = test_env.ROOT
BUNDLE = 'rebase.hg'
LAUNCHERS = ('git-remote-hg', 'git-cinnabar')
AUTHOR = Author('Install Tester', 'install@example.com')


def make(*args):
    return run(['make', '--no-print-directory', '-o', 'helper', *args],
               cwd=ROOT)


def files_under(top):
    return sorted(str(p.relative_to(top)) for p in Path(top).rglob('*')
                  if p.is_file() or p.is_symlink())


def installed_env(prefix):
    """The test environment with prefix/bin first and this checkout (and
    its launchers) off PATH."""
    parts = [p for p in os.environ['PATH'].split(os.pathsep)
             if p and Path(p).resolve() != ROOT
             and not (Path(p) / 'git-remote-hg').exists()]
    return {'PATH': os.pathsep.join([str(prefix / 'bin')] + parts)}


def test_installed_commands_clone_and_push(hg, hg_repos, hg_serve, corpus,
                                           tmp_path):
    prefix = tmp_path / 'prefix'
    make('install', f'prefix={prefix}')
    env = installed_env(prefix)
    found = run(['sh', '-c', 'command -v git-remote-hg'],
                extra_env=env).out.strip()
    assert found == str(prefix / 'bin' / 'git-remote-hg')

    repo = hg_repos.copy(BUNDLE, tmp_path / 'server')
    server = hg_serve(repo)
    work = tmp_path / 'work'
    assert_no_traceback(clone(f'hg::{server.url}', work, extra_env=env))
    assert_expected_ids(work, corpus.expected(BUNDLE))

    (work / 'installed').write_text('pushed by the installed commands\n')
    git('add', 'installed', cwd=work)
    commit = git_commit(work, 'pushed from an install', AUTHOR,
                        '1700000000 +0000')
    assert_pushed(git('push', 'origin', 'HEAD:refs/heads/branches/default/tip',
                      cwd=work, check=False, extra_env=env))
    node = pushed_nodes(work, [commit])[commit]
    assert node in hg.nodes(repo)
    fsck = git('cinnabar', 'fsck', cwd=work, extra_env=env)
    assert_no_traceback(fsck)

    make('uninstall', f'prefix={prefix}')
    assert files_under(prefix) == []


def test_destdir_install_and_uninstall(tmp_path):
    destdir, prefix = tmp_path / 'stage', Path('/opt/cinnabar-test')
    make('install', f'DESTDIR={destdir}', f'prefix={prefix}')
    staged = destdir / prefix.relative_to('/')
    installed = files_under(staged)
    for name in LAUNCHERS:
        assert f'bin/{name}' in installed
        target = os.readlink(staged / 'bin' / name)
        assert target == str(prefix / 'lib' / 'git-cinnabar' / name)
    assert 'lib/git-cinnabar/git-cinnabar-helper' in installed
    assert 'lib/git-cinnabar/cinnabar/__init__.py' in installed
    assert not [p for p in files_under(destdir)
                if not p.startswith(str(prefix.relative_to('/')))]
    for name in installed:
        path = staged / name
        if path.is_file() and not path.is_symlink():
            assert str(destdir).encode() not in path.read_bytes(), name
    make('uninstall', f'DESTDIR={destdir}', f'prefix={prefix}')
    assert files_under(destdir) == []
