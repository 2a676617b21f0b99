"""Topics of hg-evolve's topic extension, fetched and pushed through a real
`hg serve` with the topic and evolve extensions (tests/lib/evolve.py) on a
non-publishing repository, as on Heptapod.

- Fetch: draft topics appear as refs/heads/topics/<branch>/<topic>/tip
  (default layout), the branch refs leave topic changesets out,
  changesets the server hides as obsolete are not imported, a topic that
  is published goes away on the next fetch (and its changesets show on
  the branch).
"""

import pytest

from lib import evolve
from lib.git import NULL_ID, clone, git, hg2git, refs
from lib.push import hg_commit, make_hg_repo

BASE_DATE = '1600000000 0'
TOPIC_TIP = 'refs/remotes/origin/topics/{}/{}/tip'
DEFAULT_TIP = 'refs/remotes/origin/branches/default/tip'


def hg_ids(hg, repo, revset, *options):
    return hg('-R', repo, 'log', *options, '-r', revset,
              '-T', '{node}\n').out.split()


def topic_commit(hg, repo, files, message, date):
    return hg_commit(hg, repo, files, message, date=date)


@pytest.fixture(scope='module')
def fetched(hg, hg_serve_module, tmp_path_factory):
    """A server with two draft topics on default, one of them amended
    (its first version obsolete and hidden), cloned with git."""
    tmp = tmp_path_factory.mktemp('topics-fetch')
    server = make_hg_repo(hg, tmp / 'server', {'a': 'a\n'})
    hg('-R', server, 'phase', '-p', '.')
    evolve.enable(hg, server)
    work = tmp / 'hgwork'
    hg('clone', '-q', server, work)
    evolve.enable(hg, work)
    hg('-R', work, 'topic', '-q', 'feature', cwd=work)
    first = topic_commit(hg, work, {'b': 'b\n'}, 'feature 1', '1600000100 0')
    old = topic_commit(hg, work, {'c': 'c\n'}, 'feature 2', '1600000200 0')
    hg('-R', work, 'push', '-q', server)
    (work / 'c').write_text('c amended\n')
    hg('-R', work, 'amend', '-q', '-m', 'feature 2, amended', cwd=work)
    amended = hg_ids(hg, work, '.')[0]
    hg('-R', work, 'update', '-q', '0')
    hg('-R', work, 'topic', '-q', 'other', cwd=work)
    other = topic_commit(hg, work, {'d': 'd\n'}, 'other', '1600000300 0')
    hg('-R', work, 'push', '-q', server)
    served = hg_serve_module(server)
    repo = tmp / 'git'
    clone(f'hg::{served.url}', repo, '--no-checkout')
    return server, repo, dict(first=first, old=old, amended=amended,
                              other=other)


def test_topics_fetched_as_refs(hg, fetched):
    server, repo, ids = fetched
    assert hg_ids(hg, server, 'obsolete()', '--hidden') == [ids['old']]
    remote = refs(repo, 'refs/remotes/origin')
    mapped = hg2git(repo, [ids['amended'], ids['other'], ids['first']])
    assert remote[TOPIC_TIP.format('default', 'feature')] == \
        mapped[ids['amended']]
    assert remote[TOPIC_TIP.format('default', 'other')] == \
        mapped[ids['other']]
    base = hg2git(repo, hg_ids(hg, server, '0'))
    assert remote[DEFAULT_TIP] == list(base.values())[0]
    # Only the default branch and the two topics: no `default//feature`.
    assert sorted(remote) == sorted([
        'refs/remotes/origin/HEAD', DEFAULT_TIP,
        TOPIC_TIP.format('default', 'feature'),
        TOPIC_TIP.format('default', 'other')])


def test_obsolete_changesets_stay_out(fetched):
    _, repo, ids = fetched
    assert hg2git(repo, [ids['old']]) == {ids['old']: NULL_ID}


def test_published_topic_goes_away(hg, fetched):
    server, repo, ids = fetched
    hg('-R', server, 'phase', '-q', '-p', ids['other'])
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    remote = refs(repo, 'refs/remotes/origin')
    assert TOPIC_TIP.format('default', 'other') not in remote
    assert TOPIC_TIP.format('default', 'feature') in remote
    assert remote[DEFAULT_TIP] == hg2git(repo, [ids['other']])[ids['other']]
