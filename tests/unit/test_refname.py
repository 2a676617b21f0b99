"""Ref name validity, against git check-ref-format's rules."""

import shutil
import subprocess

import pytest

from cinnabar.refname import is_valid_refname, refname_problem, shown

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
    'refs/heads/-a': True,
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


def test_components_git_can_store_as_files():
    """git's files backend writes `<component>.lock`: 250 bytes are the
    most a component may have under NAME_MAX (255); bytes, not
    characters, count."""
    assert is_valid_refname('refs/heads/' + 'a' * 250)
    assert 'longer than 250 bytes' in refname_problem(
        'refs/heads/' + 'a' * 251 + '/b')
    assert not is_valid_refname('refs/heads/' + '\xe9' * 126)
    assert is_valid_refname('refs/heads/' + '/'.join(['a' * 200] * 10))
    assert 'longer than 2048 bytes' in refname_problem(
        'refs/heads/' + '/'.join(['a' * 200] * 11))


def test_long_names_are_shortened_in_messages():
    assert shown('refs/heads/a') == 'refs/heads/a'
    long = shown('refs/heads/' + 'a' * 300)
    assert long.startswith('refs/heads/aaa') and long.endswith(
        '... (311 bytes)')
    assert len(long) < 100


def test_a_name_git_would_take_for_an_option():
    """git commands would read a ref name starting with "-" as an option
    (git check-ref-format too, so it is not in CASES)."""
    assert refname_problem('-refs/heads/a') == 'starts with "-"'
    assert not is_valid_refname('--upload-pack=x/y')
