"""flake8 finds nothing in the Python code, the launchers, the tests and
the benchmarks."""

import importlib.util
import sys

from lib.env import ROOT
from lib.proc import run

CHECKED = ('cinnabar', 'hg', 'git-remote-hg', 'git-cinnabar', 'tests',
           'tests/bin/ssh-wrapper', 'bench', 'tools/sign-release',
           'tools/make-dist', 'tools/manpages.py', 'tools/mutate')


def test_flake8_is_clean():
    assert importlib.util.find_spec('flake8'), (
        f'flake8 is not installed for {sys.executable}; '
        'run the tests with build/venv/bin/python (make venv)')
    missing = [p for p in CHECKED if not (ROOT / p).exists()]
    assert not missing, f'missing: {missing}'
    result = run([sys.executable, '-m', 'flake8', *CHECKED], cwd=ROOT,
                 check=False)
    assert result.returncode == 0, 'flake8 findings:\n' + result.out
