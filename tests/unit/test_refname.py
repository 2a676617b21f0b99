"""Ref name validity, against git check-ref-format's rules."""

import shutil
import subprocess

import pytest

from cinnabar.refname import is_valid_refname, refname_problem

CASES = {
    'refs/heads/a': True,
    'refs/heads/branches/default/tip': True,
    'refs/heads/caf\xe9': True,
    'refs/heads/a@b': True,
    'refs/heads/@': True,
    'refs/heads/%20': True,
    'refs/heads/a b': False,
    'refs/heads/.a': False,
    'refs/heads/x/.y': False,
    'refs/heads/a.lock': False,
    'refs/heads/a.lock/b': False,
    'refs/heads/a..b': False,
    'refs/heads/a@{b': False,
    'refs/heads/a.': False,
    'refs/heads//a': False,
    'refs/heads/a/': False,
    '/refs/a': False,
    '@': False,
    'refs': False,
    'refs/heads/a~1': False,
    'refs/heads/a^': False,
    'refs/heads/a:b': False,
    'refs/heads/a?': False,
    'refs/heads/a*': False,
    'refs/heads/a[b': False,
    'refs/heads/a\\b': False,
    'refs/heads/a\x01': False,
    'refs/heads/a\x7f': False,
}


@pytest.mark.parametrize('name', sorted(CASES))
def test_refname(name):
    assert is_valid_refname(name) == CASES[name]
    assert (refname_problem(name) is None) == CASES[name]


@pytest.mark.skipif(shutil.which('git') is None, reason='needs git')
@pytest.mark.parametrize('name', sorted(CASES))
def test_agrees_with_git(name):
    result = subprocess.run(['git', 'check-ref-format', name])
    assert (result.returncode == 0) == is_valid_refname(name)
