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
from lib.git import NULL_ID, clone, git, hg2git, refs, rev_parse
from lib.push import Author, assert_hg_verify, assert_pushed
from lib.push import assert_refused, hg_commit, hg_date
from lib.push import make_hg_repo, nothing_changes, push, pushed_nodes
from lib.push import writable_remote

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


# Pushing to topics.

AUTHOR = Author('Topic Author', 'topic@example.com')
TOPIC_REF = 'refs/heads/topics/default/feat'


def topic_log(hg, server, revset, *options):
    """[(node, phase, branch, topic)] of `revset` on the server."""
    out = hg('-R', server, 'log', *options, '-r', revset,
             '-T', '{node} {phase} {branch} {topic}\n').out
    return [tuple(line.split(' ')) for line in out.splitlines()]


def commit_files(repo, files, message, date, amend=False):
    """A git commit of `files` whose message has no trailing newline, as
    `hg commit` would store it (git-cinnabar keeps the git message as it
    is: lib/push_oracle.py)."""
    for path, text in files.items():
        (repo / path).write_text(text)
    git('add', '-A', cwd=repo)
    options = ['--cleanup=verbatim', '-F', '-'] + (['--amend'] if amend
                                                   else [])
    git('commit', '-q', *options, cwd=repo, input=message.encode(),
        extra_env={'GIT_AUTHOR_NAME': AUTHOR.name,
                   'GIT_AUTHOR_EMAIL': AUTHOR.email,
                   'GIT_AUTHOR_DATE': date,
                   'GIT_COMMITTER_NAME': AUTHOR.name,
                   'GIT_COMMITTER_EMAIL': AUTHOR.email,
                   'GIT_COMMITTER_DATE': date})
    return rev_parse(repo, 'HEAD')


@pytest.fixture(scope='module')
def topic_push(hg, hg_serve_module, tmp_path_factory):
    """A draft server (topic and evolve enabled) with one public
    changeset, served over HTTP, and a git clone on a branch `wip` at
    its tip."""
    tmp = tmp_path_factory.mktemp('topics-push')
    server = make_hg_repo(hg, tmp / 'server', {'a': 'a\n'})
    hg('-R', server, 'phase', '-p', '.')
    evolve.enable(hg, server)
    served = hg_serve_module(server)
    repo = tmp / 'git'
    clone(f'hg::{served.url}', repo)
    git('checkout', '-q', '-b', 'wip', DEFAULT_TIP, cwd=repo)
    return server, repo, tmp


CHANGES = [({'x': 'x\n'}, 'Add x', '1700000000 +0100'),
           ({'y': 'y\n', 'a': 'a\nmore\n'}, 'Add y', '1700000100 +0100')]


def test_push_new_topic(hg, topic_push):
    server, repo, tmp = topic_push
    commits = [commit_files(repo, *change) for change in CHANGES]
    assert_pushed(push(repo, 'origin', 'HEAD:' + TOPIC_REF))
    nodes = pushed_nodes(repo, commits)
    assert topic_log(hg, server, 'topic(feat)') == [
        (nodes[c], 'draft', 'default', 'feat') for c in commits]
    # The oracle: the same changes committed by hg under `hg topic feat`.
    oracle = tmp / 'oracle'
    hg('clone', '-q', '-r', '0', server, oracle)
    evolve.enable(hg, oracle)
    hg('-R', oracle, 'topic', '-q', 'feat', cwd=oracle)
    made = [hg_commit(hg, oracle, files, message, user=AUTHOR.hg_user,
                      date=hg_date(date))
            for files, message, date in CHANGES]
    assert made == [nodes[c] for c in commits]
    assert_hg_verify(hg, server)


def test_push_without_force_is_refused(hg, topic_push):
    server, repo, _ = topic_push
    commit_files(repo, {'y': 'y amended\n'}, 'Add y, amended',
                 '1700000200 +0100', amend=True)
    with nothing_changes(hg, server, repo):
        assert_refused(push(repo, 'origin', 'HEAD:' + TOPIC_REF),
                       'non-fast-forward', 'git push -f')


def test_force_push_after_amend_obsoletes(hg, topic_push):
    server, repo, _ = topic_push
    before = topic_log(hg, server, 'topic(feat)')
    assert_pushed(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF))
    first, amended = git('rev-list', '--reverse', '-2', 'HEAD',
                         cwd=repo).out.split()
    nodes = pushed_nodes(repo, [first, amended])
    assert nodes[first] == before[0][0]
    assert hg_ids(hg, server, 'obsolete()', '--hidden') == [before[1][0]]
    assert [n for n, *_ in topic_log(hg, server, 'topic(feat)')] == [
        nodes[first], nodes[amended]]
    assert hg_ids(hg, server, 'heads(topic(feat))') == [nodes[amended]]
    assert hg('-R', server, 'evolve', '--list').out.strip() == ''
    assert_hg_verify(hg, server)


def test_rebase_onto_moved_branch(hg, topic_push):
    server, repo, _ = topic_push
    old = hg_ids(hg, server, 'topic(feat)')
    # The branch moves on the server (public).
    hg('-R', server, 'update', '-q', '0')
    moved = hg_commit(hg, server, {'z': 'z\n'}, 'Move default',
                      date='1700000300 0')
    hg('-R', server, 'phase', '-p', moved)
    hg('-R', server, 'update', '-q', 'null')
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    git('rebase', '-q', DEFAULT_TIP, cwd=repo,
        extra_env={'GIT_COMMITTER_NAME': AUTHOR.name,
                   'GIT_COMMITTER_EMAIL': AUTHOR.email})
    assert_pushed(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF))
    new = hg_ids(hg, server, 'topic(feat)')
    assert len(new) == 2 and not set(new) & set(old)
    assert hg_ids(hg, server, 'parents(roots(topic(feat)))') == [moved]
    assert set(old) <= set(hg_ids(hg, server, 'obsolete()', '--hidden'))
    assert hg_ids(hg, server, 'heads(topic(feat))') == [new[-1]]
    assert hg('-R', server, 'evolve', '--list').out.strip() == ''
    # What git says the topic is, after a fetch.
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    assert rev_parse(repo, TOPIC_TIP.format('default', 'feat')) == \
        rev_parse(repo, 'HEAD')


def test_publish_removes_topic_ref(hg, topic_push):
    server, repo, _ = topic_push
    head = hg_ids(hg, server, 'heads(topic(feat))')[0]
    hg('-R', server, 'phase', '-q', '-p', head)
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    remote = refs(repo, 'refs/remotes/origin')
    assert not [name for name in remote if '/topics/' in name]
    assert remote[DEFAULT_TIP] == rev_parse(repo, 'HEAD')


def test_server_enforcing_topics(hg, hg_serve, tmp_path, monkeypatch):
    """`experimental.topic-mode.server=enforce` refuses draft changesets
    without a topic: our message says to push to a topic ref, and that
    push goes through."""
    server = make_hg_repo(hg, tmp_path / 'server', {'a': 'a\n'})
    hg('-R', server, 'phase', '-p', '.')
    evolve.enable(hg, server,
                  '[experimental]\ntopic-mode.server = enforce\n')
    src = writable_remote('local', server, hg_serve, tmp_path,
                          monkeypatch.setenv)
    repo = tmp_path / 'git'
    clone(src.url, repo)
    commit = commit_files(repo, {'b': 'b\n'}, 'Add b', '1700000000 +0000')
    with nothing_changes(hg, server, repo):
        result = push(repo, 'origin', 'HEAD:refs/heads/branches/default/tip')
        assert_refused(result, 'rejecting draft changesets',
                       'push to a topic',
                       'HEAD:refs/heads/topics/default/<topic>')
    assert_pushed(push(repo, 'origin', 'HEAD:refs/heads/topics/default/b'))
    node = pushed_nodes(repo, [commit])[commit]
    assert topic_log(hg, server, 'topic(b)') == [
        (node, 'draft', 'default', 'b')]
