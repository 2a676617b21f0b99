"""The git ref layout of a Mercurial repository's heads and bookmarks."""

import pytest

from cinnabar import refs
from cinnabar.errors import Abort
from cinnabar.hg.wire import RemoteState
from cinnabar.ids import HgId
from cinnabar.refs import STYLES, branch_tip, layout, parse_style

D1, D2, S1, M1, BK = (HgId(c * 40) for c in '12345')
A, B = HgId('a' * 40), HgId('b' * 40)

STATE = RemoteState(
    branchmap=[('default', [D1, D2]), ('stable', [S1]),
               ('my branch', [M1])],
    heads=[D1, D2, S1, M1],
    bookmarks={'feature': BK, 'gone': HgId('0' * 40)})


def names(ref_list):
    return [name for name, _ in ref_list.refs]


def test_parse_style():
    assert parse_style(None) == STYLES
    assert parse_style('') == STYLES
    assert parse_style('all') == STYLES
    assert parse_style('true') == STYLES
    assert parse_style('heads,bookmarks') == {'heads', 'bookmarks'}
    with pytest.raises(Abort):
        parse_style('heads,branches')


def test_branch_tip():
    assert branch_tip([D1, D2], frozenset()) == D2
    assert branch_tip([D1, D2], {D2}) == D1
    assert branch_tip([D1, D2], {D1, D2}) == D1


def test_default_layout():
    refs = layout(STATE, STYLES)
    assert refs.refs == [
        ('refs/heads/bookmarks/feature', BK),
        ('refs/heads/branches/default/' + D1, D1),
        ('refs/heads/branches/default/tip', D2),
        ('refs/heads/branches/my%20branch/tip', M1),
        ('refs/heads/branches/stable/tip', S1),
    ]
    assert refs.head == 'refs/heads/branches/default/tip'
    assert refs.warnings == []


def test_closed_tip_is_skipped():
    refs = layout(STATE, STYLES, closed={D2})
    assert ('refs/heads/branches/default/tip', D1) in refs.refs
    assert ('refs/heads/branches/default/' + D2, D2) in refs.refs


def test_at_bookmark_is_head():
    state = STATE._replace(bookmarks={'@': BK})
    assert layout(state, STYLES).head == 'refs/heads/bookmarks/@'
    # Without bookmarks in the layout, HEAD falls back to default's tip.
    assert layout(state, {'heads', 'tips'}).head == \
        'refs/heads/branches/default/tip'


@pytest.mark.parametrize('styles, expected, head', [
    ({'heads'}, ['refs/heads/default/' + D1, 'refs/heads/default/' + D2,
                 'refs/heads/my%20branch/' + M1,
                 'refs/heads/stable/' + S1],
     'refs/heads/default/' + D2),
    ({'heads', 'bookmarks'},
     ['refs/heads/bookmarks/feature',
      'refs/heads/branches/default/' + D1,
      'refs/heads/branches/default/' + D2,
      'refs/heads/branches/my%20branch/' + M1,
      'refs/heads/branches/stable/' + S1],
     'refs/heads/branches/default/' + D2),
    ({'tips'}, ['refs/heads/default', 'refs/heads/my%20branch',
                'refs/heads/stable'], 'refs/heads/default'),
    ({'tips', 'bookmarks'},
     ['refs/heads/bookmarks/feature', 'refs/heads/branches/default',
      'refs/heads/branches/my%20branch', 'refs/heads/branches/stable'],
     'refs/heads/branches/default'),
    ({'bookmarks'}, ['refs/heads/feature'], None),
])
def test_other_layouts(styles, expected, head):
    refs = layout(STATE, frozenset(styles))
    assert names(refs) == expected
    assert refs.head == head


def test_invalid_names_are_skipped_with_a_warning():
    state = RemoteState([('a~b', [D1]), ('ok', [D2])], [D1, D2],
                        {'bad..name': BK, 'x.lock': S1})
    refs = layout(state, STYLES)
    assert names(refs) == ['refs/heads/branches/ok/tip']
    assert len(refs.warnings) == 3
    assert all(w.startswith('ignoring ref ') for w in refs.warnings)


def test_names_too_long_for_ref_files_are_skipped_with_a_warning():
    """A branch, bookmark or topic making a ref component longer than a
    file name can be (with `.lock`) is left out, the warning naming it
    shortened."""
    state = RemoteState(
        [('ok', [D1]), ('b' * 251, [D2])], [D1, D2, T1, T2],
        {'k' * 300: BK, 'fine': S1},
        topics=[(('ok', 't' * 251), [T1]), (('ok', 'short'), [T2])])
    refs = layout(state, STYLES)
    assert names(refs) == ['refs/heads/bookmarks/fine',
                           'refs/heads/branches/ok/tip',
                           'refs/heads/topics/ok/short/tip']
    assert len(refs.warnings) == 3
    assert all(len(w) < 150 and 'longer than 250 bytes' in w
               for w in refs.warnings), refs.warnings


def test_nested_names_clash():
    state = RemoteState([('a', [D1]), ('a/tip', [D2])], [D1, D2], {})
    refs = layout(state, STYLES)
    assert names(refs) == ['refs/heads/branches/a/tip']
    assert 'clashes' in refs.warnings[0]


def test_percent_is_quoted():
    state = RemoteState([('50%', [D1])], [D1], {'a b': D2})
    assert names(layout(state, STYLES)) == [
        'refs/heads/bookmarks/a%20b', 'refs/heads/branches/50%25/tip']


def test_no_default_branch_means_no_head():
    state = RemoteState([('stable', [S1])], [S1], {})
    assert layout(state, STYLES).head is None


def test_empty_repository():
    refs = layout(RemoteState([], [], {}), STYLES)
    assert refs.refs == [] and refs.head is None


@pytest.mark.parametrize('styles, ref, target', [
    ('all', 'refs/heads/branches/default/tip',
     refs.Target('branch', 'default', None)),
    ('all', 'refs/heads/branches/a b%25/c/' + A,
     refs.Target('branch', 'a b%/c', A)),
    ('all', 'refs/heads/bookmarks/feature/x',
     refs.Target('bookmark', 'feature/x', None)),
    # Any name under a branch: a (new) head of it, as git-cinnabar.
    ('all', 'refs/heads/branches/default/other',
     refs.Target('branch', 'default', None)),
    ('all', 'refs/heads/branches/a/b/new-head',
     refs.Target('branch', 'a/b', None)),
    ('all', 'refs/heads/branches/default', None),
    ('all', 'refs/heads/master', None),
    ('all', 'refs/tags/v1', None),
    ('heads,bookmarks', 'refs/heads/branches/default/' + A,
     refs.Target('branch', 'default', A)),
    ('heads,bookmarks', 'refs/heads/branches/default/tip',
     refs.Target('branch', 'default', None)),
    ('heads', 'refs/heads/stable/' + A, refs.Target('branch', 'stable', A)),
    ('tips,bookmarks', 'refs/heads/branches/stable',
     refs.Target('branch', 'stable', None)),
    ('tips,bookmarks', 'refs/heads/bookmarks/x',
     refs.Target('bookmark', 'x', None)),
    ('tips', 'refs/heads/a/b', refs.Target('branch', 'a/b', None)),
    ('bookmarks', 'refs/heads/x', refs.Target('bookmark', 'x', None)),
])
def test_push_target(styles, ref, target):
    assert refs.push_target(ref, refs.parse_style(styles)) == target


def test_push_target_reads_back_the_layout():
    state = RemoteState([('a b%', [A, B])], [A, B], {'x y': A})
    for styles in ('all', 'heads,bookmarks', 'heads', 'tips,bookmarks',
                   'tips', 'bookmarks'):
        parsed = refs.parse_style(styles)
        for name, hg_id in refs.layout(state, parsed).refs:
            target = refs.push_target(name, parsed)
            assert target.name in ('a b%', 'x y')
            assert target.node in (None, hg_id)


def test_unquote_name():
    for name in ('plain', 'a b', '100%', '%20', 'x%2520 y'):
        assert refs.unquote_name(refs.quote_name(name)) == name


def test_messages_for_pushes():
    styles = refs.parse_style('all')
    assert refs.push_examples(styles) == (
        'refs/heads/branches/<branch>/tip or refs/heads/bookmarks/<name>')
    assert refs.branch_ref('a b', styles) == 'refs/heads/branches/a%20b/tip'
    assert refs.branch_ref('x', refs.parse_style('heads')) == \
        'refs/heads/x/<hg id>'
    assert refs.push_examples(refs.parse_style('bookmarks')) == \
        'refs/heads/<name>'


# Topics (hg-evolve): `default//feature` with two heads, `a//b//x` (branch
# `a//b`, whose name holds `//`).
T1, T2, T3 = (HgId(c * 40) for c in '678')
TOPIC_STATE = RemoteState(
    branchmap=[('default', [D1]), ('a//b', [S1])], heads=[D1, S1, T1, T2],
    bookmarks={}, topics=[(('default', 'feature'), [T1, T2]),
                          (('a//b', 'x'), [T3])])


@pytest.mark.parametrize('styles,expected', [
    ('heads,tips,topics', [
        'refs/heads/branches/a//b/tip', 'refs/heads/branches/default/tip',
        'refs/heads/topics/a//b/x/tip',
        'refs/heads/topics/default/feature/' + T1,
        'refs/heads/topics/default/feature/tip']),
    ('tips,topics', [
        'refs/heads/branches/a//b', 'refs/heads/branches/default',
        'refs/heads/topics/a//b/x', 'refs/heads/topics/default/feature']),
    ('heads,topics', [
        'refs/heads/branches/a//b/' + S1, 'refs/heads/branches/default/' + D1,
        'refs/heads/topics/a//b/x/' + T3,
        'refs/heads/topics/default/feature/' + T1,
        'refs/heads/topics/default/feature/' + T2]),
    ('tips', ['refs/heads/a//b', 'refs/heads/default']),
])
def test_topic_layout(styles, expected):
    ref_list = layout(TOPIC_STATE, parse_style(styles))
    # git refuses `//` in ref names: the warnings say so.
    assert [n for n in names(ref_list) if '//' not in n] == \
        [n for n in expected if '//' not in n]
    assert all('//' in w for w in ref_list.warnings)


def test_topic_layout_default_tip():
    ref_list = layout(TOPIC_STATE, STYLES)
    assert ('refs/heads/topics/default/feature/tip', T2) in ref_list.refs
    assert ref_list.head == 'refs/heads/branches/default/tip'


@pytest.mark.parametrize('styles,ref,target', [
    ('all', 'refs/heads/topics/default/feature/tip',
     refs.Target('topic', 'default', None, 'feature')),
    ('all', 'refs/heads/topics/default/feature',
     refs.Target('topic', 'default', None, 'feature')),
    ('all', 'refs/heads/topics/a/b/feature',
     refs.Target('topic', 'a/b', None, 'feature')),
    ('all', 'refs/heads/topics/default/feature/' + A,
     refs.Target('topic', 'default', A, 'feature')),
    ('tips', 'refs/heads/topics/default/feature',
     refs.Target('topic', 'default', None, 'feature')),
    ('tips,topics', 'refs/heads/topics/my%20b/feature',
     refs.Target('topic', 'my b', None, 'feature')),
    ('all', 'refs/heads/branches/default/tip',
     refs.Target('branch', 'default', None)),
])
def test_push_target_topics(styles, ref, target):
    assert refs.push_target(ref, refs.parse_style(styles)) == target
