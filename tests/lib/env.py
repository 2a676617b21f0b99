"""Where things are, and the isolated environment for child processes.

The contract with the Makefile: tests run as `python -m pytest tests` from
the repository root, with the repository's top directory (where
`git-remote-hg`, `git-cinnabar` and `git-cinnabar-helper` live) on PATH.

- `CINNABAR_TEST_HG`: the hg executable (default `build/venv/bin/hg` when
  it exists, else `hg` from PATH);
- `CINNABAR_CORPUS`: the corpus of bundles (default `../shared/corpus`
  relative to the repository root);
- `CINNABAR_TEST_CHG`: Mercurial's chg, through which the tests run their
  own hg commands (lib.chg; the Makefile gives Debian's /usr/bin/chg when
  there is one), else they run hg itself;
- `CINNABAR_TEST_HELPER`: the git-cinnabar-helper the commands under test
  run (passed on as GIT_CINNABAR_HELPER; CI gives the `make dist` one to a
  run), else the checkout's own, found beside the launchers;
- `CINNABAR_TEST_GIT_VERSION`: the version the git on PATH must be (`make
  test-user-git` gives it with each release it puts first on PATH); a
  session whose git is another one, or whose git would run another
  git-remote-hg than the checkout's, stops before its first test;
- `CINNABAR_TEST_REFTABLE_GIT`: a git able to make repositories whose refs
  are in reftable (2.45 or later; default `build/reftable-git/git`, which
  `make reftable-git` builds), for tests/compat/test_reftable.py and the next;
- `CINNABAR_TEST_REF_FORMAT=reftable`: every repository the tests make
  has its refs in reftable (`init.defaultRefFormat`), made and used by
  that git, which runs as `git`.

Child processes must not see the machine's configuration: git gets an
empty system config and a HOME of its own, hg gets an empty HGRCPATH and
HGPLAIN.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / 'tests'
SSH_WRAPPER = TESTS / 'bin' / 'ssh-wrapper'
HG_WRAPPER = TESTS / 'bin' / 'hg-wrapper'
HELPER_FAULT = TESTS / 'bin' / 'helper-fault'

GIT_USER = ('Cinnabar Tests', 'tests@cinnabar.invalid')
HG_USER = 'Cinnabar Tests <tests@cinnabar.invalid>'

# Variables dropped from the inherited environment, by prefix: they would
# let the caller's git or hg configuration, or a proxy, leak into tests.
DROPPED_PREFIXES = ('GIT_', 'HG', 'CHG', 'CINNABAR_TEST_DIE_AT', 'LC_')
DROPPED_NAMES = ('http_proxy', 'https_proxy', 'all_proxy', 'no_proxy',
                 'ftp_proxy', 'EMAIL')


class SetupError(Exception):
    """Something the tests need is missing; the message says what."""


def corpus_dir():
    """The corpus directory, which must exist."""
    path = Path(os.environ.get('CINNABAR_CORPUS')
                or ROOT.parent / 'shared' / 'corpus')
    if not path.is_dir():
        raise SetupError(f"corpus not found at '{path}' "
                         '(set CINNABAR_CORPUS)')
    return path.resolve()


def hg_executable():
    """Absolute path of the hg the tests use."""
    name = os.environ.get('CINNABAR_TEST_HG')
    if not name:
        venv_hg = ROOT / 'build' / 'venv' / 'bin' / 'hg'
        name = str(venv_hg) if venv_hg.exists() else 'hg'
    found = shutil.which(name)
    if not found:
        raise SetupError(f"hg not found: '{name}' "
                         '(set CINNABAR_TEST_HG or run make)')
    return os.path.abspath(found)


def chg_executable():
    """Absolute path of CINNABAR_TEST_CHG, None when not given."""
    given = os.environ.get('CINNABAR_TEST_CHG')
    if not given:
        return None
    found = shutil.which(given)
    if not found:
        raise SetupError(f'CINNABAR_TEST_CHG={given}: no such executable')
    return os.path.abspath(found)


def _search_path(bindir):
    """PATH with `bindir` first and the repository top directory in it."""
    parts = [p for p in os.environ.get('PATH', '').split(os.pathsep) if p]
    top = [p for p in parts if Path(p).resolve() == ROOT]
    if not top:
        parts.insert(0, str(ROOT))
    return os.pathsep.join([str(bindir)] + parts)


def reftable_git():
    """The git executable able to make reftable repositories."""
    given = os.environ.get('CINNABAR_TEST_REFTABLE_GIT')
    path = Path(given) if given else ROOT / 'build' / 'reftable-git' / 'git'
    if not os.access(path, os.X_OK):
        raise SetupError(f'no git for reftable repositories at {path} '
                         '(run `make reftable-git`, or set '
                         'CINNABAR_TEST_REFTABLE_GIT)')
    return path.resolve()


def ref_format():
    """The ref storage of the repositories the tests make: None (git's
    default) or `reftable` (CINNABAR_TEST_REF_FORMAT)."""
    given = os.environ.get('CINNABAR_TEST_REF_FORMAT') or None
    if given not in (None, 'files', 'reftable'):
        raise SetupError(f'CINNABAR_TEST_REF_FORMAT={given}: files or '
                         'reftable')
    return given


def _write_git_config(home):
    name, email = GIT_USER
    default_format = ref_format()
    (home / '.gitconfig').write_text(
        '[user]\n'
        f'\tname = {name}\n'
        f'\temail = {email}\n'
        '[init]\n'
        '\tdefaultBranch = main\n'
        + (f'\tdefaultRefFormat = {default_format}\n' if default_format
           else '') +
        '[advice]\n'
        '\tdetachedHead = false\n')


def client_python():
    """The Python that runs git-remote-hg and git-cinnabar in the tests:
    CINNABAR_TEST_PYTHON (the Makefile's TEST_PYTHON; CI runs its two
    suites with the oldest Python the README promises and the newest),
    else the one running the tests."""
    given = os.environ.get('CINNABAR_TEST_PYTHON')
    if not given:
        return os.path.realpath(sys.executable)
    path = shutil.which(given)
    if path is None:
        raise SetupError(f'CINNABAR_TEST_PYTHON={given}: no such Python')
    return os.path.realpath(path)


def helper_under_test():
    """The helper the commands under test run: CINNABAR_TEST_HELPER (an
    executable, made absolute), else the checkout's."""
    given = os.environ.get('CINNABAR_TEST_HELPER')
    if not given:
        return ROOT / 'git-cinnabar-helper'
    path = Path(given).resolve()
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise SetupError(f'CINNABAR_TEST_HELPER={given}: no such executable')
    return path


def helper_fault_env(fault):
    """The environment making the commands under test run the helper
    behind bin/helper-fault with `fault` (see there)."""
    return {'GIT_CINNABAR_HELPER': str(HELPER_FAULT),
            'CINNABAR_TEST_REAL_HELPER': str(helper_under_test()),
            'CINNABAR_TEST_HELPER_FAULT': fault}


def git_under_test():
    """(path, `git --version`) of the git the tests' PATH finds; with
    CINNABAR_TEST_GIT_VERSION, SetupError unless it is that version and
    runs the checkout's git-remote-hg."""
    path = _search_path(ROOT)
    exe = shutil.which('git', path=path)
    if exe is None:
        raise SetupError('no git on PATH')
    version = _output([exe, '--version'])
    wanted = os.environ.get('CINNABAR_TEST_GIT_VERSION')
    if not wanted:
        return exe, version
    if version != f'git version {wanted}':
        raise SetupError(f'CINNABAR_TEST_GIT_VERSION={wanted}: the git on '
                         f'PATH, {exe}, is {version!r}')
    # git runs the remote helper of its exec path first, else PATH's.
    exec_path = _output([exe, '--exec-path'])
    helper = shutil.which('git-remote-hg',
                          path=os.pathsep.join([exec_path, path]))
    if helper is None or Path(helper).resolve() != ROOT / 'git-remote-hg':
        raise SetupError(f'CINNABAR_TEST_GIT_VERSION={wanted}: {exe} would '
                         f'run {helper} as git-remote-hg, not the '
                         f"checkout's")
    return exe, version


def _output(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=60,
                          check=False).stdout.strip()


def isolated_env(home, hg=None):
    """An environment for child processes, rooted at the directory `home`.

    `hg`, when given, is linked as `hg` in a directory put first on PATH,
    so that whatever runs `hg` (the ssh wrapper, the local transport) runs
    the hg under test; `python3` is linked there too (see below).
    """
    home = Path(home)
    bindir = home / 'bin'
    bindir.mkdir(parents=True, exist_ok=True)
    (home / '.config').mkdir(exist_ok=True)
    (home / 'hgrc').write_text('')
    _write_git_config(home)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(DROPPED_PREFIXES)
           and k not in DROPPED_NAMES and k.lower() not in DROPPED_NAMES}
    env.update({
        'HOME': str(home),
        'XDG_CONFIG_HOME': str(home / '.config'),
        'LANG': 'C.UTF-8',
        'LC_ALL': 'C.UTF-8',
        'GIT_CONFIG_NOSYSTEM': '1',
        'GIT_TERMINAL_PROMPT': '0',
        'GIT_SSH_COMMAND': shlex.quote(str(SSH_WRAPPER)),
        'HGRCPATH': str(home / 'hgrc'),
        'HGPLAIN': '1',
        'HGUSER': HG_USER,
        'HGENCODING': 'utf-8',
        'PATH': _search_path(bindir),
    })
    if os.environ.get('CINNABAR_TEST_HELPER'):
        env['GIT_CINNABAR_HELPER'] = str(helper_under_test())
    # `python3` for the launchers' `#!/usr/bin/env python3`: the client
    # Python (see client_python), itself, not through a version manager's
    # shim on PATH (pyenv's is a bash script starting several processes:
    # 0.3 s for each git-remote-hg and git cinnabar run, minutes over the
    # suite).
    python = bindir / 'python3'
    if not python.exists():
        python.symlink_to(client_python())
    if ref_format() == 'reftable':
        link = bindir / 'git'
        if not link.exists():
            link.symlink_to(reftable_git())
    if hg:
        link = bindir / 'hg'
        if not link.exists():
            link.symlink_to(hg)
        env['CINNABAR_TEST_HG'] = hg
        env['HG'] = hg  # what git-cinnabar runs for local repositories
    return env


def interruptible():
    """Give SIGINT back its default action when this process inherited it
    ignored (a job a shell script started in the background, as CI's
    parts run): the programs under test inherit it, and run as from a
    terminal, where git ends by SIGINT when git-remote-hg stops it after
    a failed import (cinnabar.remote, stop_git)."""
    import signal
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
