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
  file names D.  The staged tree copied to P (what a package manager's
  unpacking does) clones and pushes as above, and `make uninstall
  prefix=P` then leaves no file under P.
- Each install holds exactly the files README's "Install" lists: the
  launchers, the package (compiled), the helper, the hg extension, the
  two manual pages, the bash and zsh completions.

The helper installed is the one already built (`make -o helper`): the
test must not rebuild the helper that the rest of the run uses.
"""

import os
import shutil
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


# What an install holds besides the package's modules and their .pyc.
INSTALLED = sorted([
    'bin/git-cinnabar', 'bin/git-remote-hg',
    'lib/git-cinnabar/git-cinnabar', 'lib/git-cinnabar/git-remote-hg',
    'lib/git-cinnabar/git-cinnabar-helper',
    'lib/git-cinnabar/hg/cinnabarclone.py',
    'share/bash-completion/completions/git-cinnabar',
    'share/man/man1/git-cinnabar.1', 'share/man/man1/git-remote-hg.1',
    'share/zsh/site-functions/_git-cinnabar'])


def assert_install_layout(top):
    """`top` (a prefix) holds INSTALLED, every module of the package with
    its .pyc, and nothing else."""
    modules = sorted(str(p.relative_to(ROOT))
                     for p in (ROOT / 'cinnabar').rglob('*.py'))
    package = 'lib/git-cinnabar/cinnabar/'
    files = files_under(top)
    assert [f for f in files if not f.startswith(package)] == INSTALLED
    ours = [f[len('lib/git-cinnabar/'):] for f in files
            if f.startswith(package)]
    assert [f for f in ours if '/__pycache__/' not in f] == modules
    compiled = [f for f in ours if '/__pycache__/' in f]
    assert len(compiled) == len(modules)
    assert all(f.endswith('.pyc') for f in compiled)


def assert_clone_and_push(prefix, hg, hg_repos, hg_serve, corpus, tmp_path):
    """With prefix/bin first on PATH: a clone over HTTP by the installed
    commands and helper with the reference ids, a commit pushed back that
    the server then has, and fsck."""
    env = installed_env(prefix)
    found = run(['sh', '-c', 'command -v git-remote-hg'],
                extra_env=env).out.strip()
    assert found == str(prefix / 'bin' / 'git-remote-hg')
    version = git('cinnabar', '--version', cwd=tmp_path, extra_env=env).out
    helper = prefix / 'lib' / 'git-cinnabar' / 'git-cinnabar-helper'
    assert f'({helper})' in version and 'stale' not in version

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


def test_installed_commands_clone_and_push(hg, hg_repos, hg_serve, corpus,
                                           tmp_path):
    prefix = tmp_path / 'prefix'
    make('install', f'prefix={prefix}')
    assert_install_layout(prefix)
    assert_clone_and_push(prefix, hg, hg_repos, hg_serve, corpus, tmp_path)
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


def test_destdir_staged_then_unpacked(hg, hg_repos, hg_serve, corpus,
                                      tmp_path):
    """A package built from `make install DESTDIR=D prefix=P`, unpacked
    at P (copied, links as links), works there; uninstall empties P."""
    destdir, prefix = tmp_path / 'stage', tmp_path / 'usr'
    make('install', f'DESTDIR={destdir}', f'prefix={prefix}')
    staged = destdir / prefix.relative_to('/')
    assert_install_layout(staged)
    shutil.copytree(staged, prefix, symlinks=True)
    shutil.rmtree(destdir)
    assert_clone_and_push(prefix, hg, hg_repos, hg_serve, corpus, tmp_path)
    make('uninstall', f'prefix={prefix}')
    assert files_under(prefix) == []
