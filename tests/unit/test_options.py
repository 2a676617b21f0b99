"""cinnabar.cmd.options: how command lines are split."""

import pytest

from cinnabar.cmd.options import distance, most_similar, split_options
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


@pytest.mark.parametrize('arg', ['--other', '-x', '--zzzzzzzz'])
def test_unknown_options_are_refused_with_usage(arg):
    with pytest.raises(Abort) as caught:
        split(arg)
    assert caught.value.message == 'unknown option %s' % arg
    assert caught.value.hint == USAGE


@pytest.mark.parametrize('arg, hint', [
    ('--levels', 'did you mean --level?'),      # a deletion
    ('--lvel=3', 'did you mean --level?'),      # an insertion
    ('--falg', 'did you mean --flag?'),         # a swap
    ('--fl', 'did you mean --flag?'),           # a prefix
    ('-f', 'did you mean --flag?'),
])
def test_mistyped_options_get_did_you_mean(arg, hint):
    with pytest.raises(Abort) as caught:
        split(arg)
    assert caught.value.message == 'unknown option %s' % arg
    assert caught.value.hint == hint


def test_a_value_given_to_a_flag_is_refused():
    with pytest.raises(Abort) as caught:
        split('--flag=1')
    assert caught.value.message == 'option --flag takes no value'
    assert caught.value.hint == USAGE


def test_most_similar_is_what_git_suggests():
    """git's own choices for `git <typo>` among these names."""
    names = ['fetch', 'fsck', 'bundle', 'unbundle', 'strip', 'status']
    assert most_similar('fsk', names) == ['fsck']
    assert most_similar('f', names) == ['fetch', 'fsck']
    assert most_similar('stat', names) == ['status']
    assert most_similar('unbudnle', names) == ['unbundle']
    assert most_similar('xyzzy', names) == []
    assert distance('fetch', 'fetch') == 0
    assert distance('fecth', 'fetch') == 0      # a swap is free
    assert distance('fetc', 'fetch') == 1       # an insertion
    assert distance('fetchh', 'fetch') == 3     # a deletion
    assert distance('fatch', 'fetch') == 2      # a substitution
