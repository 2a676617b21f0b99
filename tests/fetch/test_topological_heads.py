"""The topological heads a fetch works out (for the tags and the hint
that they changed, cinnabar/topological.py) are Mercurial's: after each
of a series of fetches of random histories with named branches, forks
and merges across branches, the heads the cache file
(`.git/cinnabar/topological-heads`) flags are the commits of hg's
`heads(all())` on the server, and the others are the rest of the
metadata's branch heads (from hg's log). The fetches after the clone
run no history walk (`git merge-base`, `git rev-list`) for them. A cache
file that does not hold for the heads (damaged, or of other heads) is
computed again.
"""

import random

import pytest

from lib.checks import assert_no_traceback
from lib.git import clone, git, hg2git, hg_url

CACHE = ('.git', 'cinnabar', 'topological-heads')
BRANCHES = ('default', 'stable', 'feature', 'old')


def random_dag(rng, count):
    """A `hg debugbuilddag` text of `count` changesets: runs on the
    current parent, forks and merges of earlier changesets, now and then
    on another named branch."""
    parts = ['+2']
    made = 2
    while made < count:
        roll = rng.random()
        if roll < 0.2:
            parts.append('@' + rng.choice(BRANCHES))
        back = rng.randint(1, made - 1)
        if roll < 0.35:
            parts.append('*%d' % back)
        elif roll < 0.5:
            parts.append('*%d/%d' % (rng.randint(1, made - 1), back))
        else:
            parts.append('.')
        made += 1
    return ' '.join(parts)


def hg_heads(hg, repo, revset):
    return hg('-R', repo, 'log', '-r', revset, '-T', '{node}\n').out.split()


def cache_flags(work):
    """{git id: whether topological} of the cache file."""
    text = work.joinpath(*CACHE).read_text()
    return {commit: flag == '1' for commit, flag in
            (line.split(' ') for line in text.splitlines())}


def cinnabar_heads(hg, repo):
    """The heads the metadata records, from hg's log: the changesets no
    child of which is on their branch (git-cinnabar's branch heads; hg's
    `head()` also drops those with a descendant on their branch)."""
    log = hg('-R', repo, 'log', '-T',
             '{node} {p1node} {p2node} {branch}\n').out.splitlines()
    branch = {}
    ended = set()
    for line in log:
        node, p1, p2, name = line.split(' ', 3)
        branch[node] = name
    for line in log:
        node, p1, p2, name = line.split(' ', 3)
        ended.update(p for p in (p1, p2) if branch.get(p) == name)
    return [node for node in branch if node not in ended]


def assert_cache_is_hg(hg, served, work):
    topological = hg_heads(hg, served, 'heads(all())')
    heads = cinnabar_heads(hg, served)
    git_ids = hg2git(work, heads)
    want = {git_ids[node]: node in topological for node in heads}
    assert cache_flags(work) == want


def walks(trace):
    return [line for line in trace.read_text().splitlines()
            if 'built-in: git merge-base' in line
            or 'built-in: git rev-list' in line and '--parents' in line]


@pytest.mark.parametrize('seed', [1, 2])
def test_topological_heads_are_hgs(hg, hg_serve, tmp_path, seed):
    rng = random.Random(seed)
    full = tmp_path / 'full'
    hg('init', full)
    hg('-R', full, 'debugbuilddag', '-n', random_dag(rng, 60))
    total = len(hg.nodes(full))
    served = tmp_path / 'served'
    hg('init', served)
    server = hg_serve(served)
    work = tmp_path / 'work'
    stops = sorted(rng.sample(range(5, total - 1), 4)) + [total - 1]
    for step, last in enumerate(stops):
        revs = [a for n in hg_heads(hg, full, 'heads(0:%d)' % last)
                for a in ('-r', n)]
        hg('-R', served, 'pull', '-q', *revs, full)
        trace = tmp_path / ('trace-%d' % step)
        if step == 0:
            result = clone(hg_url(server.url), work, '--no-checkout')
        else:
            result = git('fetch', 'origin', cwd=work,
                         extra_env={'GIT_TRACE': str(trace)})
            assert walks(trace) == []
        assert_no_traceback(result)
        assert_cache_is_hg(hg, served, work)


def test_cache_that_does_not_hold_is_computed_again(hg, hg_serve, tmp_path):
    full = tmp_path / 'full'
    hg('init', full)
    hg('-R', full, 'debugbuilddag', '-n',
       '+3 @stable *2 +1 @default *2 *1/3 @old *5')
    served = tmp_path / 'served'
    hg('init', served)
    hg('-R', served, 'pull', '-q', '-r', '4', '-r', '3', full)
    server = hg_serve(served)
    work = tmp_path / 'work'
    assert_no_traceback(clone(hg_url(server.url), work, '--no-checkout'))
    assert_cache_is_hg(hg, served, work)
    hg('-R', served, 'pull', '-q', full)
    cache = work.joinpath(*CACHE)
    good = cache.read_text()
    commits = sorted(cache_flags(work))
    for bad in ['', 'garbage\n', good.replace(' 1\n', ' 2\n', 1),
                good.upper(), good + good.splitlines()[0] + '\n',
                # Another set of heads (one missing): flags all wrong.
                ''.join('%s 0\n' % c for c in commits[1:])]:
        cache.write_text(bad)
        trace = tmp_path / 'trace'
        result = git('fetch', 'origin', cwd=work,
                     extra_env={'GIT_TRACE': str(trace)})
        assert_no_traceback(result)
        assert walks(trace), 'the heads before were not computed again'
        assert_cache_is_hg(hg, served, work)
        # Back to the metadata before the fetch, for the next bad file.
        git('cinnabar', 'rollback', cwd=work)
