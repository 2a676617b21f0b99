"""Topics of hg-evolve's topic extension, fetched and pushed through a real
`hg serve` with the topic and evolve extensions (tests/lib/evolve.py) on a
non-publishing repository, as on Heptapod.

- Fetch: draft topics appear as refs/heads/topics/<branch>/<topic>/tip
  (default layout), the branch refs leave topic changesets out,
  changesets the server hides as obsolete are not imported, a topic that
  is published goes away on the next fetch (and its changesets show on
  the branch).
- Push: to refs/heads/topics/default/feat, draft changesets with the
  topic, the same ids as `hg commit` under `hg topic feat` gives; after
  an amend, refused without -f, and even with -f when the topic has
  changes we lack; with -f obsolescence markers: the
  server's `obsolete()` holds the old changeset, the topic one head and
  `hg evolve --list` nothing; the same after a rebase onto a branch that
  moved; a dropped commit pruned; once published, the topic ref goes
  away.
- A server enforcing topics (`experimental.topic-mode.server=enforce`)
  refuses a push to a branch: our message names the topic ref to use.

hg runs through command servers (lib.hgcmdserver), one per repository:
hg with hg-evolve takes half a second of CPU to start.
"""

import pytest

from lib import evolve
from lib.git import NULL_ID, clone, git, hg2git, refs, rev_parse
from lib.hg import Hg, HgServer, http_get
from lib.hgcmdserver import HgCommandServer
from lib.push import Author, assert_hg_verify, assert_pushed
from lib.push import assert_refused, hg_date, nothing_changes, push
from lib.push import pushed_nodes, writable_remote

pytestmark = pytest.mark.hgserver

TOPIC_TIP = 'refs/remotes/origin/topics/{}/{}/tip'
DEFAULT_TIP = 'refs/remotes/origin/branches/default/tip'
HG_USER = 'Hg Author <hg@example.com>'


@pytest.fixture(scope='module')
def hg_repo(hg, request):
    """hg_repo(path, config='', hg=hg, namespaces=True) -> a command
    server in a new hg repository at `path` with topic and evolve
    (lib.evolve.enable) and one public changeset, stopped when the module
    ends."""
    default_hg = hg

    def make(path, config='', hg=default_hg, namespaces=True):
        hg('init', path)
        evolve.enable(hg, path, config, namespaces)
        server = HgCommandServer(hg.exe, path)
        request.addfinalizer(server.stop)
        commit(server, {'a': 'a\n'}, 'initial import', '1600000000 0')
        server('phase', '-p', '.')
        return server
    return make


def commit(hg_server, files, message, date, user=HG_USER):
    """Commit `files` ({path: text}) with the command server `hg_server`
    (in its repository's working copy); returns the changeset id."""
    repo = hg_server.repo
    for path, text in files.items():
        (repo / path).write_text(text)
    hg_server('commit', '-q', '-A', '-m', message, '-u', user, '-d', date)
    return ids(hg_server, '.')[0]


class ViaServer(Hg):
    """The `hg` of lib.push's checks (ServerState, hg verify), through a
    command server."""

    def __init__(self, server):
        super().__init__(server.args[0])
        self.server = server

    def __call__(self, *args, check=True, **kwargs):
        return self.server(*args, check=check)


def ids(hg_server, revset, *options):
    return hg_server('log', *options, '-r', revset,
                     '-T', '{node}\n').out.split()


def split_topic(w, topic, date):
    """Two heads of `topic` on the public root, committed with the command
    server `w`; returns their ids, the first committed first."""
    w('update', '-q', '0')
    w('topic', '-q', topic)
    first = commit(w, {'s': 's1\n'}, f'{topic} 1', date)
    w('update', '-q', '0')
    w('topic', '-q', topic)
    return [first, commit(w, {'s': 's2\n'}, f'{topic} 2', date)]


@pytest.fixture(scope='module')
def fetched(hg, hg_repo, hg_serve_module, tmp_path_factory):
    """A server with three draft topics on default, `feature` amended
    (its first version obsolete and hidden), `split` with two heads,
    cloned with git."""
    tmp = tmp_path_factory.mktemp('topics-fetch')
    server = hg_repo(tmp / 'server')
    work = tmp / 'hgwork'
    hg('clone', '-q', server.repo, work)
    evolve.enable(hg, work)
    with HgCommandServer(hg.exe, work) as w:
        w('topic', '-q', 'feature')
        first = commit(w, {'b': 'b\n'}, 'feature 1', '1600000100 0')
        old = commit(w, {'c': 'c\n'}, 'feature 2', '1600000200 0')
        w('push', '-q', server.repo)
        (work / 'c').write_text('c amended\n')
        w('amend', '-q', '-m', 'feature 2, amended')
        amended = ids(w, '.')[0]
        w('update', '-q', '0')
        w('topic', '-q', 'other')
        other = commit(w, {'d': 'd\n'}, 'other', '1600000300 0')
        split = split_topic(w, 'split', '1600000400 0')
        w('push', '-q', '-f', server.repo)
    served = hg_serve_module(server.repo)
    repo = tmp / 'git'
    clone(f'hg::{served.url}', repo, '--no-checkout')
    return server, repo, dict(first=first, old=old, amended=amended,
                              other=other, split=split)


def test_topics_fetched_as_refs(fetched):
    server, repo, nodes = fetched
    assert ids(server, 'obsolete()', '--hidden') == [nodes['old']]
    remote = refs(repo, 'refs/remotes/origin')
    mapped = hg2git(repo, [nodes['amended'], nodes['other'], nodes['first']])
    assert remote[TOPIC_TIP.format('default', 'feature')] == \
        mapped[nodes['amended']]
    assert remote[TOPIC_TIP.format('default', 'other')] == \
        mapped[nodes['other']]
    base = hg2git(repo, ids(server, '0'))
    assert remote[DEFAULT_TIP] == list(base.values())[0]
    # Only the default branch and the topics: no `default//feature`.
    assert sorted(remote) == sorted([
        'refs/remotes/origin/HEAD', DEFAULT_TIP,
        TOPIC_TIP.format('default', 'feature'),
        TOPIC_TIP.format('default', 'other'),
        *split_refs(server, repo, nodes['split'])])


def split_refs(server, repo, split):
    """The refs of the topic `split` with two heads (`split`, hg ids),
    checked against what hg says: `tip` for the tip (the head of highest
    revision), `<hg id>` for the other head."""
    assert ids(server, 'heads(topic(split))') == split
    remote = refs(repo, 'refs/remotes/origin/topics/default/split')
    mapped = hg2git(repo, split)
    expected = {TOPIC_TIP.format('default', 'split'): mapped[split[1]],
                f'refs/remotes/origin/topics/default/split/{split[0]}':
                mapped[split[0]]}
    assert remote == expected
    return list(expected)


def test_topics_in_tips_layout(fetched):
    _, repo, nodes = fetched
    listed = ls_remote_names(repo, 'tips,topics')
    assert listed == ['refs/heads/branches/default',
                      'refs/heads/topics/default/feature',
                      'refs/heads/topics/default/other',
                      'refs/heads/topics/default/split']
    # Without `topics`, no topic.
    assert ls_remote_names(repo, 'tips') == ['refs/heads/default']


def ls_remote_names(repo, styles):
    out = git('-c', f'cinnabar.refs={styles}', 'ls-remote', 'origin',
              cwd=repo).out
    return sorted(line.split('\t')[1] for line in out.splitlines()
                  if not line.endswith('\tHEAD'))


def test_topics_without_namespaces(hg_repo, tmp_path_factory, request):
    """A server whose topic extension predates topic namespaces
    (hg-evolve 10.5, lib.evolve) has no `branchmaptns`: the topics come
    from `branchmap`'s `<branch>:<topic>` names, as the same refs."""
    tmp = tmp_path_factory.mktemp('topics-notns')
    old_hg = evolve.without_namespaces()
    server = hg_repo(tmp / 'server', hg=old_hg, namespaces=False)
    server('topic', '-q', 'feature')
    feature = commit(server, {'b': 'b\n'}, 'feature 1', '1600000100 0')
    split = split_topic(server, 'split', '1600000400 0')
    server('update', '-q', 'null')
    served = HgServer(old_hg, server.repo, tmp / 'logs')
    request.addfinalizer(served.stop)
    served.start()
    repo = tmp / 'git'
    clone(f'hg::{served.url}', repo, '--no-checkout')
    status, body = http_get(served.url + '?cmd=capabilities')
    capabilities = body.decode().split()
    assert 'topics' in capabilities
    assert 'topics-namespaces' not in capabilities
    remote = refs(repo, 'refs/remotes/origin')
    assert remote[TOPIC_TIP.format('default', 'feature')] == \
        hg2git(repo, [feature])[feature]
    assert sorted(remote) == sorted([
        'refs/remotes/origin/HEAD', DEFAULT_TIP,
        TOPIC_TIP.format('default', 'feature'),
        *split_refs(server, repo, split)])


def test_obsolete_changesets_stay_out(fetched):
    _, repo, nodes = fetched
    assert hg2git(repo, [nodes['old']]) == {nodes['old']: NULL_ID}


def test_published_topic_goes_away(fetched):
    server, repo, nodes = fetched
    server('phase', '-q', '-p', nodes['other'])
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    remote = refs(repo, 'refs/remotes/origin')
    assert TOPIC_TIP.format('default', 'other') not in remote
    assert TOPIC_TIP.format('default', 'feature') in remote
    assert remote[DEFAULT_TIP] == \
        hg2git(repo, [nodes['other']])[nodes['other']]


# Pushing to topics.

AUTHOR = Author('Topic Author', 'topic@example.com')
TOPIC_REF = 'refs/heads/topics/default/feat'


def markers(server):
    """{precursor: [successors]} of the server's obsolescence markers."""
    out = server('debugobsolete', '-T',
                 '{prednode} {join(succnodes, " ")}\n').out
    return {line.split()[0]: line.split()[1:] for line in out.splitlines()}


# Run by `hg debugshell` on the server: for each marker with a successor,
# the effect flags it records (`ef1`) and those Mercurial computes for the
# same changesets (obsutil.geteffectflag), with its operation.
EFFECT_FLAGS = """
from mercurial import obsutil
from mercurial.node import hex
u = repo.unfiltered()
for m in u.obsstore:
    meta = dict(m[3])
    print('EF', hex(m[0]).decode(), meta.get(b'operation', b'').decode(),
          meta.get(b'ef1', b'').decode(),
          obsutil.geteffectflag(u[m[0]], [u[s] for s in m[1]])
          if m[1] else 0)

"""


def marker_metadata(hg, server):
    """{precursor: (operation, ef1)} of the server's markers, checking
    that each `ef1` is what Mercurial computes for its changesets."""
    out = hg('-R', server.repo, 'debugshell', input=EFFECT_FLAGS.encode(),
             extra_env={'HGRCPATH': str(server.repo / '.hg' / 'hgrc')}).out
    found = {}
    for line in out.splitlines():
        if 'EF ' in line:
            node, operation, written, computed = line.split('EF ')[1].split()
            assert written == computed, line
            found[node] = (operation, written)
    return found


def topic_log(server, revset):
    """[(node, phase, branch, topic)] of `revset` on the server."""
    out = server('log', '-r', revset,
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
def topic_push(hg_repo, hg_serve_module, tmp_path_factory):
    """A draft server (topic and evolve enabled) with one public
    changeset, served over HTTP, and a git clone on a branch `wip` at
    its tip."""
    tmp = tmp_path_factory.mktemp('topics-push')
    server = hg_repo(tmp / 'server')
    served = hg_serve_module(server.repo)
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
    assert topic_log(server, 'topic(feat)') == [
        (nodes[c], 'draft', 'default', 'feat') for c in commits]
    # The oracle: the same changes committed by hg under `hg topic feat`.
    oracle = tmp / 'oracle'
    hg('clone', '-q', '-r', '0', server.repo, oracle)
    evolve.enable(hg, oracle)
    with HgCommandServer(hg.exe, oracle) as o:
        o('topic', '-q', 'feat')
        made = [commit(o, files, message, hg_date(date), AUTHOR.hg_user)
                for files, message, date in CHANGES]
    assert made == [nodes[c] for c in commits]
    assert_hg_verify(ViaServer(server), server.repo)


def test_push_without_force_is_refused(hg, topic_push):
    server, repo, _ = topic_push
    commit_files(repo, {'y': 'y amended\n'}, 'Add y, amended',
                 '1700000200 +0100', amend=True)
    with nothing_changes(ViaServer(server), server.repo, repo):
        result = push(repo, 'origin', 'HEAD:' + TOPIC_REF)
    assert_refused(result, 'non-fast-forward', 'git push -f',
                   'does not descend from topic feat of branch default on '
                   'the server')


def test_force_push_over_unknown_changes_is_refused(topic_push):
    """Someone else added to the topic since we fetched: even forced,
    the push is refused (we cannot tell what our commits replace)."""
    server, repo, _ = topic_push
    server('update', '-q', 'feat')
    theirs = commit(server, {'w': 'w\n'}, 'Theirs', '1700000250 0')
    try:
        with nothing_changes(ViaServer(server), server.repo, repo):
            assert_refused(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF),
                           'that you do not have', 'fetch first')
    finally:
        server('debugstrip', '-q', '--hidden', theirs)
        server('update', '-q', 'null')
        server('topic', '-q', '--clear')


def test_force_push_after_amend_obsoletes(hg, topic_push):
    server, repo, _ = topic_push
    before = topic_log(server, 'topic(feat)')
    assert_pushed(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF))
    first, amended = git('rev-list', '--reverse', '-2', 'HEAD',
                         cwd=repo).out.split()
    nodes = pushed_nodes(repo, [first, amended])
    assert nodes[first] == before[0][0]
    assert ids(server, 'obsolete()', '--hidden') == [before[1][0]]
    assert markers(server) == {before[1][0]: [nodes[amended]]}
    # As `hg amend` records it: the same parents; the message, the
    # file and the meta changed (DESCRIPTION | META | DIFF; META: the
    # committer extra, git's committer date differing from the author's
    # after an amend), as Mercurial computes it (marker_metadata).
    assert marker_metadata(hg, server) == {before[1][0]: ('amend', '11')}
    assert [n for n, *_ in topic_log(server, 'topic(feat)')] == [
        nodes[first], nodes[amended]]
    assert ids(server, 'heads(topic(feat))') == [nodes[amended]]
    assert server('evolve', '--list').out.strip() == ''
    assert_hg_verify(ViaServer(server), server.repo)


def test_rebase_onto_moved_branch(hg, topic_push):
    server, repo, _ = topic_push
    old = ids(server, 'topic(feat)')
    # The branch moves on the server (public).
    server('update', '-q', '0')
    moved = commit(server, {'z': 'z\n'}, 'Move default', '1700000300 0')
    server('phase', '-p', moved)
    server('update', '-q', 'null')
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    git('rebase', '-q', DEFAULT_TIP, cwd=repo,
        extra_env={'GIT_COMMITTER_NAME': AUTHOR.name,
                   'GIT_COMMITTER_EMAIL': AUTHOR.email})
    assert_pushed(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF))
    new = ids(server, 'topic(feat)')
    assert len(new) == 2 and not set(new) & set(old)
    assert ids(server, 'parents(roots(topic(feat)))') == [moved]
    assert set(old) <= set(ids(server, 'obsolete()', '--hidden'))
    # As `hg rebase` records it: PARENTS among the effect flags.
    found = marker_metadata(hg, server)
    assert all(found[n][0] == 'rebase' and int(found[n][1]) & 4
               for n in old)
    assert ids(server, 'heads(topic(feat))') == [new[-1]]
    assert server('evolve', '--list').out.strip() == ''
    # What git says the topic is, after a fetch.
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    assert rev_parse(repo, TOPIC_TIP.format('default', 'feat')) == \
        rev_parse(repo, 'HEAD')


def test_dropped_commit_is_pruned(hg, topic_push):
    """The last commit dropped, the first reworded: the first is
    replaced (same patch), the last pruned (a marker without
    successor)."""
    server, repo, _ = topic_push
    old = ids(server, 'topic(feat)')
    git('reset', '-q', '--hard', 'HEAD~1', cwd=repo)
    commit_files(repo, {}, 'Add x, reworded', '1700000400 +0100',
                 amend=True)
    assert_pushed(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF))
    new = ids(server, 'topic(feat)')
    assert new == [pushed_nodes(repo, [rev_parse(repo, 'HEAD')])[
        rev_parse(repo, 'HEAD')]]
    found = markers(server)
    assert found[old[0]] == new and found[old[1]] == []
    # As `hg prune` records it.
    assert marker_metadata(hg, server)[old[1]] == ('prune', '0')
    assert server('evolve', '--list').out.strip() == ''


def test_publish_removes_topic_ref(topic_push):
    server, repo, _ = topic_push
    head = ids(server, 'heads(topic(feat))')[0]
    server('phase', '-q', '-p', head)
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    remote = refs(repo, 'refs/remotes/origin')
    assert not [name for name in remote if '/topics/' in name]
    assert remote[DEFAULT_TIP] == rev_parse(repo, 'HEAD')


def test_server_enforcing_topics(hg, hg_repo, hg_serve, tmp_path,
                                 monkeypatch):
    """`experimental.topic-mode.server=enforce` refuses draft changesets
    without a topic: our message says to push to a topic ref, and that
    push goes through."""
    server = hg_repo(tmp_path / 'server',
                     '[experimental]\ntopic-mode.server = enforce\n')
    src = writable_remote('http', server.repo, hg_serve, tmp_path,
                          monkeypatch.setenv)
    repo = tmp_path / 'git'
    clone(src.url, repo)
    commit = commit_files(repo, {'b': 'b\n'}, 'Add b', '1700000000 +0000')
    with nothing_changes(ViaServer(server), server.repo, repo):
        result = push(repo, 'origin', 'HEAD:refs/heads/branches/default/tip')
        assert_refused(result, 'rejecting draft changesets',
                       'push to a topic',
                       'HEAD:refs/heads/topics/default/<topic>')
        assert_refused(push(repo, 'origin',
                            'HEAD:refs/heads/topics/default/a@b'),
                       'not a topic name')
        # hg-evolve takes no number for a topic: hg would read it as a
        # revision.
        assert_refused(push(repo, 'origin',
                            'HEAD:refs/heads/topics/default/12'),
                       'reserved by Mercurial as a topic name')
    assert_pushed(push(repo, 'origin', 'HEAD:refs/heads/topics/default/b'))
    node = pushed_nodes(repo, [commit])[commit]
    assert topic_log(server, 'topic(b)') == [
        (node, 'draft', 'default', 'b')]


@pytest.fixture(scope='module')
def bare_publishing(hg_repo, hg_serve_module, tmp_path_factory):
    """A server publishing what is pushed without a topic
    (`experimental.topic.publish-bare-branch`, as on Heptapod) and taking
    no obsolescence markers (evolve with `experimental.evolution.exchange`
    off: no `obsmarkers` in its bundle2 capabilities), and a git clone."""
    tmp = tmp_path_factory.mktemp('topics-bare')
    server = hg_repo(tmp / 'server',
                     '[experimental]\ntopic.publish-bare-branch = yes\n'
                     'evolution.exchange = no\n')
    served = hg_serve_module(server.repo)
    repo = tmp / 'git'
    clone(f'hg::{served.url}', repo)
    return server, repo


def test_server_publishing_bare_branch(bare_publishing):
    """What is pushed to a topic stays draft; what is pushed to a branch,
    without a topic, is made public by the server, and we keep its
    metadata as for a publishing server (while the server has drafts)."""
    server, repo = bare_publishing
    in_topic = commit_files(repo, {'c': 'c\n'}, 'Add c', '1700000100 +0000')
    assert_pushed(push(repo, 'origin', 'HEAD:refs/heads/topics/default/c'))
    node = pushed_nodes(repo, [in_topic])[in_topic]
    assert topic_log(server, node) == [(node, 'draft', 'default', 'c')]
    git('checkout', '-q', DEFAULT_TIP, cwd=repo)
    bare = commit_files(repo, {'b': 'b\n'}, 'Add b', '1700000000 +0000')
    assert_pushed(push(repo, 'origin',
                       'HEAD:refs/heads/branches/default/tip'))
    node = pushed_nodes(repo, [bare])[bare]
    assert topic_log(server, node) == [(node, 'public', 'default', '')]


def test_server_without_marker_exchange(bare_publishing):
    """A forced push after an amend to a server that takes no markers
    sends the changesets without them, as `hg push` does, with a warning;
    the topic then has two heads there."""
    server, repo = bare_publishing
    commit_files(repo, {'d': 'd\n'}, 'Add d', '1700000200 +0000')
    assert_pushed(push(repo, 'origin', 'HEAD:' + TOPIC_REF))
    old = ids(server, 'topic(feat)')
    amended = commit_files(repo, {'d': 'd2\n'}, 'Add d, amended',
                           '1700000300 +0000', amend=True)
    result = push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF)
    assert_pushed(result)
    assert 'does not take obsolescence markers' in result.err
    assert 'the changesets replaced in topic feat of branch default ' \
        'stay there' in result.err
    new = pushed_nodes(repo, [amended])[amended]
    assert server('debugobsolete').out == ''
    assert ids(server, 'heads(topic(feat))') == old + [new]


def test_published_since_fetch_is_not_replaced(hg_repo, hg_serve, tmp_path,
                                               monkeypatch):
    """A changeset of the topic made public on the server after our fetch
    never gets a marker: a forced push rewriting it is refused (hg-evolve
    would mark a public changeset obsolete: phase-divergence); after a
    fetch and a rebase onto it, the push replaces only the drafts. The
    phases are the server's at the push (`listkeys phases`), as git's
    refs still show the topic as it was."""
    server = hg_repo(tmp_path / 'server')
    src = writable_remote('http', server.repo, hg_serve, tmp_path,
                          monkeypatch.setenv)
    repo = tmp_path / 'git'
    clone(src.url, repo)
    first = commit_files(repo, {'b': 'b\n'}, 'Add b', '1700000000 +0000')
    commit_files(repo, {'c': 'c\n'}, 'Add c', '1700000100 +0000')
    assert_pushed(push(repo, 'origin', 'HEAD:' + TOPIC_REF))
    published = pushed_nodes(repo, [first])[first]
    server('phase', '-q', '-p', published)
    # Both rewritten (the first reworded, the second rebased on it).
    git('rebase', '-q', '--exec', 'git commit -q --amend -m "$(git log -1 '
        '--format=%s) (reworded)"', DEFAULT_TIP, cwd=repo)
    before = markers(server)
    with nothing_changes(ViaServer(server), server.repo, repo):
        assert_refused(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF),
                       published[:12], 'made public', 'fetch, then rebase')
    # Fetched, then rebased: the reworded first commit is dropped (its
    # patch is on the branch now), only the draft is replaced.
    draft = ids(server, 'topic(feat)')
    git('fetch', '-q', '--prune', 'origin', cwd=repo)
    git('rebase', '-q', DEFAULT_TIP, cwd=repo)
    assert_pushed(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF))
    head = rev_parse(repo, 'HEAD')
    new = pushed_nodes(repo, [head])[head]
    assert markers(server) == {**before, draft[0]: [new]}
    assert ids(server, 'topic(feat)') == [new]
    assert ids(server, 'public() and not obsolete()', '--hidden')[-1] == \
        published
    # The whole topic published: a forced push of an amend is refused.
    server('phase', '-q', '-p', new)
    commit_files(repo, {'c': 'c2\n'}, 'Add c, amended', '1700000200 +0000',
                 amend=True)
    with nothing_changes(ViaServer(server), server.repo, repo):
        assert_refused(push(repo, '-f', 'origin', 'HEAD:' + TOPIC_REF),
                       new[:12], 'made public')
