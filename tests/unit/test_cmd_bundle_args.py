"""`git cinnabar bundle` and `data` arguments, bundlespecs, and the order
of the commits of a bundle (no helper, no hg)."""

import pytest

from cinnabar.cmd import bundle, data
from cinnabar.errors import Abort
from cinnabar.hg.bundlewriter import BundleSpec, parse_bundlespec


@pytest.mark.parametrize('text, version, expected', [
    (None, None, ('bzip2', 'v2')),
    (None, 'v1', ('bzip2', 'v1')),
    ('gzip', None, ('gzip', 'v2')),
    ('gzip', 'v1', ('gzip', 'v1')),
    ('v1', None, ('bzip2', 'v1')),
    ('NONE-V1', None, ('none', 'v1')),
    ('zstd-v2', 'v2', ('zstd', 'v2')),
    ('zstd', None, ('zstd', 'v2')),
])
def test_parse_bundlespec(text, version, expected):
    assert parse_bundlespec(text, version) == BundleSpec(*expected)


@pytest.mark.parametrize('text, version, words', [
    ('lzma', None, 'unknown bundlespec'),
    ('gzip-v3', None, 'unknown bundlespec'),
    ('packed1', None, 'unknown bundlespec'),
    ('zstd-v1', None, 'needs a v2 bundle'),
    ('zstd', 'v1', 'needs a v2 bundle'),
    ('gzip-v2', 'v1', '--version asks for v1'),
    ('none-v2;obsolescence=true', None, 'parameters are not supported'),
])
def test_parse_bundlespec_refusals(text, version, words):
    with pytest.raises(Abort) as info:
        parse_bundlespec(text, version)
    assert words in info.value.message


def test_unknown_bundlespec_lists_supported():
    with pytest.raises(Abort) as info:
        parse_bundlespec('lz4-v2')
    assert 'none-v1, gzip-v1, bzip2-v1, none-v2, gzip-v2, bzip2-v2, ' \
        'zstd-v2' in info.value.hint


@pytest.mark.parametrize('args, expected', [
    (['out.hg', 'master'], (('bzip2', 'v2'), 'out.hg', ['master'])),
    (['-t', 'none-v1', 'out.hg', '--', '--all'],
     (('none', 'v1'), 'out.hg', ['--all'])),
    (['--version', '1', '--type=gzip', 'out.hg', 'a', '^b'],
     (('gzip', 'v1'), 'out.hg', ['a', '^b'])),
    (['--', '-odd-name.hg', 'HEAD'],
     (('bzip2', 'v2'), '-odd-name.hg', ['HEAD'])),
    (['out.hg', '--all', '-t', 'x'],
     (('bzip2', 'v2'), 'out.hg', ['--all', '-t', 'x'])),
])
def test_bundle_parse_args(args, expected):
    spec, path, revs = bundle.parse_args(args)
    assert (tuple(spec), path, revs) == expected


@pytest.mark.parametrize('args', [
    [], ['out.hg'], ['-t'], ['--version', '0', 'out.hg', 'HEAD'],
    ['--nope', 'out.hg', 'HEAD'], ['out.hg', '--'],
])
def test_bundle_parse_args_refusals(args):
    with pytest.raises(Abort):
        bundle.parse_args(args)


def test_parents_first_keeps_a_good_order():
    commits = [('a', []), ('b', ['a']), ('c', ['a']), ('d', ['b', 'c'])]
    assert bundle.parents_first(commits) == ['a', 'b', 'c', 'd']


def test_parents_first_fixes_a_reversed_order():
    commits = [('d', ['b', 'c']), ('c', ['a']), ('b', ['a']), ('a', ['z'])]
    ordered = bundle.parents_first(commits)
    assert sorted(ordered) == ['a', 'b', 'c', 'd']
    position = {c: i for i, c in enumerate(ordered)}
    for commit, parents in commits:
        for parent in parents:
            if parent in position:
                assert position[parent] < position[commit]


@pytest.mark.parametrize('args, expected', [
    (['-c', 'ABCD1234'], ('changeset', 'abcd1234')),
    (['-m', 'a' * 40], ('manifest', 'a' * 40)),
    (['0123'], ('file', '0123')),
    (['--', 'abcdef'], ('file', 'abcdef')),
])
def test_data_parse_args(args, expected):
    assert data.parse_args(args) == expected


@pytest.mark.parametrize('args', [
    [], ['-c'], ['-c', 'abc'], ['-m', 'a' * 41], ['xyzw'], ['-c', 'a', 'b'],
    ['-x', 'abcd'], ['abcd', 'ef01'],
])
def test_data_parse_args_refusals(args):
    with pytest.raises(Abort):
        data.parse_args(args)
