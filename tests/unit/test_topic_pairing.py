"""Pairing a topic's old and new changesets (cinnabar.topics)."""

import pytest

from cinnabar import topics
from lib.git import git, rev_parse


def test_changeset_extras():
    text = (b'0' * 40 + b'\nMe <me@example.com>\n1700000000 0 '
            b'branch:stable\0topic:feat\0weird:a\\nb\\0c\\\\\nx\n\nmsg')
    assert topics.changeset_extras(text) == {
        'branch': 'stable', 'topic': 'feat', 'weird': 'a\nb\0c\\'}
    assert topics.changeset_extras(b'0' * 40 + b'\nMe\n0 0\n\nmsg') == {}


@pytest.fixture
def history(tmp_path, monkeypatch):
    """commit(name, files) in a new git repository (the current
    directory)."""
    git('init', '-q', tmp_path)
    monkeypatch.chdir(tmp_path)

    def commit(message, files, parent=None):
        if parent:
            git('checkout', '-q', '--detach', parent, cwd=tmp_path)
        for path, text in files.items():
            (tmp_path / path).write_text(text)
        git('add', '-A', cwd=tmp_path)
        git('commit', '-q', '-m', message, cwd=tmp_path)
        return rev_parse(tmp_path, 'HEAD')
    return commit


def test_pair_by_patch_subject_order_and_prune(history):
    base = history('base', {'a': '1\n'})
    old = [history('one', {'b': '1\n'}), history('two', {'c': '1\n'}),
           history('three', {'d': '1\n'}), history('four', {'e': '1\n'})]
    new = [history('one, reworded', {'b': '1\n'}, parent=base),
           history('three', {'d': 'changed\n'}),
           history('something else', {'f': '1\n'})]
    # one: same patch; three: same subject; two and four: one new left
    # for two old ones, so no pairing by order: both pruned.
    assert topics.pair(old, new) == {
        old[0]: new[0], old[2]: new[1], old[1]: None, old[3]: None}
    # As many left on each side: paired in order.
    assert topics.pair(old[1:2], new[2:]) == {old[1]: new[2]}


def test_drafts(history):
    """public - d1 - d2 (d1 a draft root); d2 - t1 - t2 walked from t2
    down to d2 (excluded): t1 and t2 are drafts through d2, outside the
    walk; with no root, nothing is."""
    public = history('public', {'a': '1\n'})
    d1 = history('d1', {'b': '1\n'})
    d2 = history('d2', {'c': '1\n'})
    t1 = history('t1', {'d': '1\n'})
    t2 = history('t2', {'e': '1\n'})
    walk = [(t1, [d2]), (t2, [t1])]
    assert topics._drafts(walk, {d1}) == {t1, t2}
    assert topics._drafts(walk, {t2}) == {t2}
    assert topics._drafts(walk, set()) == set()
    assert topics._drafts([(d1, [public]), (d2, [d1])], {d1}) == {d1, d2}


def _changeset(user=b'Me', date=b'1700000000 0', extras=b'topic:feat',
               description=b'msg'):
    return (b'0' * 40 + b'\n' + user + b'\n' + date + b' ' + extras
            + b'\nx\n\n' + description)


@pytest.mark.parametrize('changes, operation, flags', [
    ({}, 'amend', 0),
    ({'description': b'other'}, 'amend', topics.DESCRIPTION),
    ({'user': b'You', 'date': b'1700000001 0'}, 'amend',
     topics.USER | topics.DATE),
    ({'extras': b'topic:feat\0rebase_source:' + b'1' * 40}, 'amend', 0),
    ({'extras': b'topic:other\0branch:stable'}, 'amend',
     topics.META | topics.BRANCH),
    ({'parents': ['2' * 40], 'diff': [b'+y']}, 'rebase',
     topics.PARENTS | topics.DIFF),
])
def test_rewrite_metadata(changes, operation, flags):
    """`operation` and `ef1` as hg-evolve writes them (the flags as
    Mercurial's obsutil computes them; tests/compat/test_topics.py checks them
    against it)."""
    old = topics.Rewritten('a' * 40, ['1' * 40], _changeset(), [b'+x'])
    fields = {k: v for k, v in changes.items()
              if k not in ('parents', 'diff')}
    new = topics.Rewritten('b' * 40, changes.get('parents', ['1' * 40]),
                           _changeset(**fields), changes.get('diff', [b'+x']))
    assert topics.rewrite_metadata(old, new, 'Me') == {
        'user': 'Me', 'operation': operation, 'ef1': str(flags)}
    assert topics.rewrite_metadata(old, None, 'Me') == {
        'user': 'Me', 'operation': 'prune', 'ef1': '0'}
