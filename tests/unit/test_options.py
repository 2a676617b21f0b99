"""cinnabar.cmd.options: how command lines are split."""

import pytest

from cinnabar.cmd.options import split_options
from cinnabar.errors import Abort

USAGE = 'usage: git cinnabar test [--flag] [--level[=N]] <word>...'


def split(*args):
    return split_options(args, ('--flag', '--level='), USAGE)


def test_flags_and_words_in_order():
    assert split('a', '--flag', 'b') == ({'--flag': True}, ['a', 'b'])


def test_valued_option_alone_or_with_value():
    assert split('--level') == ({'--level': True}, [])
    assert split('--level=3', 'x') == ({'--level': '3'}, ['x'])
    assert split('--level=3', '--level') == ({'--level': True}, [])


def test_double_dash_ends_options_and_dash_is_a_word():
    assert split('--', '--flag', '-x') == ({}, ['--flag', '-x'])
    assert split('-') == ({}, ['-'])


@pytest.mark.parametrize('arg', ['--other', '-f', '--flag=1', '--levels'])
def test_unknown_options_are_refused_with_usage(arg):
    with pytest.raises(Abort) as caught:
        split(arg)
    assert caught.value.message == 'unknown option %s' % arg
    assert caught.value.hint == USAGE
