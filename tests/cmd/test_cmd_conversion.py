"""`git cinnabar hg2git` and `git2hg` on a clone: full and abbreviated ids,
--abbrev, --batch, and the errors for ids that cannot be resolved."""

import pytest

from cinnabar.errors import Abort
from cinnabar.helper import Helper

from lib.git import NULL_ID, clone, git

BUNDLE = 'renames.hg'


@pytest.fixture(scope='module')
def cloned(tmp_path_factory, hg_repos, corpus):
    dest = tmp_path_factory.mktemp('conversion') / 'clone'
    clone(f'hg::{hg_repos.get(BUNDLE)}', dest, '--no-checkout')
    return dest, corpus.expected(BUNDLE)


def cinnabar(repo, *args, **kwargs):
    return git('cinnabar', *args, cwd=repo, **kwargs)


def test_full_ids_both_ways(cloned):
    repo, expected = cloned
    for node, commit in expected.items():
        assert cinnabar(repo, 'hg2git', node).out.strip() == commit
        assert cinnabar(repo, 'git2hg', commit).out.strip() == node


def test_abbreviated_hg_ids(cloned):
    repo, expected = cloned
    for node, commit in expected.items():
        out = cinnabar(repo, 'hg2git', node[:12].upper()).out.strip()
        assert out == commit
        assert cinnabar(repo, 'hg2git', '--abbrev=7',
                        node[:10]).out.strip() == commit[:7]


def test_abbreviated_git_ids(cloned):
    repo, expected = cloned
    for node, commit in expected.items():
        assert cinnabar(repo, 'git2hg', '--abbrev',
                        commit[:10]).out.strip() == node[:12]


def test_batch_answers_each_line(cloned):
    repo, expected = cloned
    nodes = sorted(expected)
    text = ''.join(f'{n[:8]}\n' for n in nodes).encode()
    out = cinnabar(repo, 'hg2git', '--batch', input=text).out.split()
    assert out == [expected[n] for n in nodes]


def known_hg_ids(repo):
    """Every hg id of the metadata's hg2git map (its third parent)."""
    names = git('ls-tree', '-r', '--name-only',
                'refs/cinnabar/metadata^3', cwd=repo).out.split()
    return sorted(name.replace('/', '') for name in names)


def test_unknown_abbreviation_is_null(cloned):
    repo, _ = cloned
    known = known_hg_ids(repo)
    prefix = next(p for p in ('%05x' % i for i in range(1 << 20))
                  if not any(n.startswith(p) for n in known))
    assert cinnabar(repo, 'hg2git', prefix).out.strip() == NULL_ID


def test_short_abbreviations(cloned):
    """Any number of digits, as git-cinnabar 0.7.5 takes them: three
    that one id starts with give it; one that several ids start with is
    refused as ambiguous (status 128, as git's die())."""
    repo, expected = cloned
    known = known_hg_ids(repo)
    node = next(n for n in sorted(expected)
                if sum(k.startswith(n[:3]) for k in known) == 1)
    assert cinnabar(repo, 'hg2git', node[:3]).out.strip() == expected[node]
    digit = max('0123456789abcdef',
                key=lambda d: sum(n.startswith(d) for n in known))
    result = cinnabar(repo, 'hg2git', digit, check=False)
    assert result.returncode == 128, result.describe()
    assert result.err.startswith(
        f'fatal: the Mercurial id prefix {digit} is ambiguous'), \
        result.describe()


def test_ambiguous_prefix_is_refused(cloned):
    repo, _ = cloned
    known = known_hg_ids(repo)
    # One digit is shared by several of the changeset, manifest and file
    # ids of the bundle; the helper is asked directly, as hg2git would.
    digit = max('0123456789abcdef',
                key=lambda d: sum(n.startswith(d) for n in known))
    assert sum(n.startswith(digit) for n in known) >= 2
    with Helper.start(str(repo / '.git')) as helper:
        with pytest.raises(Abort, match='ambiguous'):
            helper.hg_prefix(digit)
        unique = known[0][:40]
        assert helper.hg_prefix(unique[:39]) == unique
