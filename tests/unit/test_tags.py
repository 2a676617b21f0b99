"""Reading `.hgtags` and merging the files of several heads, as
Mercurial does (cinnabar.tags)."""

from cinnabar.tags import Tag, live_tags, merge_tags, parse_hgtags

A, B, C = ('a' * 40, 'b' * 40, 'c' * 40)
NULL = '0' * 40


def test_later_lines_win_and_keep_history():
    tags, warnings = parse_hgtags(
        f'{A} v1\n\n{B} v1\n{C}  spaced name \n{A} v1\n')
    assert warnings == []
    assert tags == {'v1': Tag(A, [A, B]), 'spaced name': Tag(C, [])}


def test_bad_lines_are_warned_about():
    tags, warnings = parse_hgtags(f'nonsense\n{A[:39]} short\n{A}\n{B} ok\n')
    assert tags == {'ok': Tag(B, [])}
    assert len(warnings) == 3
    assert 'line 2' in warnings[1]


def test_removed_tags_are_dropped():
    tags, _ = parse_hgtags(f'{A} gone\n{NULL} gone\n{B} kept\n')
    assert live_tags(tags) == {'kept': B}


def test_later_head_wins_unless_superseded():
    # The later head simply moved the tag: it wins.
    earlier = {'t': Tag(A, [])}
    assert merge_tags(earlier, {'t': Tag(B, [A])})['t'].node == B
    # The earlier head moved it from what the later head still has.
    earlier = {'t': Tag(B, [A])}
    merged = merge_tags(earlier, {'t': Tag(A, [])})
    assert merged['t'] == Tag(B, [A])
    # Both moved it: the longer history wins.
    earlier = {'t': Tag(C, [A, B])}
    assert merge_tags(earlier, {'t': Tag(A, [B])})['t'].node == C
    # Unrelated values: the later head wins.
    assert merge_tags({'t': Tag(A, [])}, {'t': Tag(B, [])})['t'].node == B
    # Tags of one head only are kept.
    assert set(merge_tags({'x': Tag(A, [])}, {'y': Tag(B, [])})) == {
        'x', 'y'}
