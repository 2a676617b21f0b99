"""The protocol against each Mercurial release people still serve.

Run by `make hg-matrix-test` (every release of the Makefile's HG_MATRIX)
and by CI (HG_MATRIX_CI), which give the hg executables to serve with in
CINNABAR_HG_MATRIX; under `make test` its tests are skipped (conftest.py).
The git side is always the same git-cinnabar; each server is that
release's own `hg serve` over HTTP (pushes allowed with the old spelling
`web.allow_push`, which every release reads) and its `hg serve --stdio`
through the ssh wrapper.

For each release and transport, one hg repository (issue4041.hg of the
corpus: named branches and merges), made by that release, and one clone,
go through these steps in order:
1. clone: the corpus's expected git ids, `git ls-remote` naming the
   server's branch heads;
2. an incremental fetch of a tag and a changeset made on the server, the
   tag as a git tag after `git cinnabar fetch --tags`;
3. a push of new changesets, then of a merge: hg ids as the server has
   them, `hg verify` clean, public on this publishing server;
4. a bookmark created, moved and deleted by push;
5. a new head refused, nothing changed on either side;
6. `hg verify` clean, and a fresh clone maps every changeset to the
   same git commit as with every other release tested in the run.

Over HTTP, a server as many are set up (test_clone_bundle_phases_and_
post_arguments): the release's own bundle advertised as its clone
bundle, not publishing, `httppostargs` on.

And, over HTTP, each release's own `badserverext.py` (from its source
distribution) closing the connection at points of a clone
(test_server_closing_the_connection).
"""

import os
import shlex
import urllib.request
from pathlib import Path

import pytest

from lib.checks import assert_expected_ids, assert_failed_for_people
from lib.checks import assert_no_traceback
from lib.git import NULL_ID, clone, git, git2hg, hg2git, rev_parse
from lib import env as test_env
from lib.chg import ChgServers
from lib.hg import Hg, HgServer
from lib.push import Author, assert_hg_verify, assert_pushed, assert_refused
from lib.push import git_commit, nothing_changes, pushed_nodes

MATRIX = os.environ.get('CINNABAR_HG_MATRIX', '').split()
TRANSPORTS = ('http', 'ssh')
BUNDLE = 'issue4041.hg'
AUTHOR = Author('Matrix Tester', 'matrix@example.com')
HG_USER = 'Hg Matrix <hg@example.com>'
DEFAULT_TIP = 'refs/remotes/origin/branches/default/tip'
PUSH_TIP = 'HEAD:refs/heads/branches/default/tip'
BOOKMARK = 'refs/heads/bookmarks/matrix'
# {transport: {hg version: {hg id: git id}}}: what fresh clones gave.
FRESH_IDS = {}


def release_id(hg_path):
    """A test id: the release number, from the matrix directory's name
    (build/hg-matrix/<version>/hg), else `hg version -q`'s."""
    name = Path(hg_path).parent.name
    if name[:1].isdigit():
        return name
    line = Hg(hg_path).version()
    return line.rsplit('version ', 1)[-1].rstrip(')')


def wrapper_env(hg_path):
    """What the hg at `hg_path` sets of chg's sensitive variables: a
    release tools/hg-matrix made (build/hg-matrix/<version>/hg) runs in
    pure Python; any other hg, nothing."""
    if Path(hg_path).parent.parent.name == 'hg-matrix':
        return {'HGMODULEPOLICY': 'py'}
    return {}


@pytest.fixture(scope='session')
def release_hg():
    """Hg(path) of a release, whose own commands (setting repositories up,
    oracles) go through chg when CINNABAR_TEST_CHG names it, as the `hg`
    fixture's do: one command server per release, stopped at the end.
    Its servers under test (`hg serve`, the ssh wrapper's) run the
    release's hg itself."""
    chg = test_env.chg_executable()
    made = {}

    def get(hg_path):
        if hg_path not in made:
            servers = None
            if chg is not None:
                servers = ChgServers(chg, hg_path,
                                     wrapper_env(hg_path)).start()
            made[hg_path] = Hg(hg_path, servers)
        return made[hg_path]

    yield get
    for hg in made.values():
        if hg.chg_servers is not None:
            hg.chg_servers.stop()


class Site:
    """One release's server for one transport, its repository, and the
    clone the steps share."""

    def __init__(self, hg, transport, corpus, workdir):
        hg_path = hg.exe
        self.hg = hg
        self.version = release_id(hg_path)
        self.transport = transport
        self.workdir = Path(workdir)
        self.repo = self.workdir / 'server'
        self.hg('init', self.repo)
        self.hg('-R', self.repo, 'unbundle', '-q', corpus.bundle(BUNDLE))
        self.server = None
        # The ssh wrapper runs the hg of CINNABAR_TEST_HG, and logs it.
        self.ssh_log = self.workdir / 'ssh.log'
        self.env = {'CINNABAR_TEST_HG': hg_path, 'HG': hg_path,
                    'CINNABAR_TEST_SSH_LOG': str(self.ssh_log)}
        if transport == 'http':
            self.server = HgServer(self.hg, self.repo, self.workdir / 'log')
            self.server.start()
            self.url = f'hg::{self.server.url}'
        else:
            self.url = f'hg::ssh://localhost/{self.repo}'
        self.work = self.workdir / 'work'

    def git(self, *args, extra_env=None, **kwargs):
        kwargs.setdefault('cwd', self.work)
        return git(*args, extra_env={**self.env, **(extra_env or {})},
                   **kwargs)

    def push(self, *args):
        return self.git('push', *args, check=False, timeout=600)

    def commit(self, path, text, message, date):
        (self.work / path).write_text(text)
        self.git('add', path)
        return git_commit(self.work, message, AUTHOR, date)

    def node(self, rev, template='{node}'):
        return self.hg('-R', self.repo, 'log', '-r', rev, '-T',
                       template).out

    def stop(self):
        if self.server:
            self.server.stop()


@pytest.fixture(scope='module', params=[
    (hg, transport) for hg in MATRIX for transport in TRANSPORTS],
    ids=lambda p: f'hg{release_id(p[0])}-{p[1]}')
def site(request, corpus, tmp_path_factory, release_hg):
    hg_path, transport = request.param
    made = Site(release_hg(hg_path), transport, corpus,
                tmp_path_factory.mktemp(f'matrix-{transport}'))
    request.addfinalizer(made.stop)
    return made


def test_clone(site, corpus):
    result = clone(site.url, site.work, extra_env=site.env)
    assert_no_traceback(result)
    if site.transport == 'ssh':
        ran = site.ssh_log.read_text().splitlines()[0].split('\t')[2]
        assert ran.startswith(shlex.quote(str(site.hg.exe))), ran
    server_nodes = site.hg.nodes(site.repo)
    assert_expected_ids(site.work, corpus.expected(BUNDLE), server_nodes)
    heads = dict(site.hg.heads(site.repo))
    listed = site.git('ls-remote', 'origin').out.splitlines()
    tips = {name: oid for oid, name in (line.split('\t') for line in listed)
            if name.startswith('refs/heads/branches/')}
    expected = {f'refs/heads/branches/{branch}/tip': git_id
                for node, git_id in hg2git(site.work, heads).items()
                for branch in [heads[node]]}
    assert tips == expected


def test_fetch_incremental(site):
    wc = site.workdir / 'hg-wc'
    site.hg('clone', '-q', '-u', 'default', site.repo, wc)
    site.hg('-R', wc, 'tag', '-u', HG_USER, '-d', '1600000000 0', 'v1.0')
    (wc / 'from-hg').write_text('made on the server\n')
    site.hg('-R', wc, 'commit', '-q', '-A', '-u', HG_USER,
            '-d', '1600000100 0', '-m', 'made on the server', cwd=wc)
    site.hg('-R', wc, 'push', '-q', site.repo)
    assert_no_traceback(site.git('fetch', 'origin'))
    tip = site.node('tip')
    assert rev_parse(site.work, DEFAULT_TIP) == hg2git(site.work, [tip])[tip]
    tagged = site.node('tag("v1.0")')
    assert_no_traceback(site.git('cinnabar', 'fetch', '--tags'))
    assert rev_parse(site.work, 'refs/tags/v1.0') == hg2git(
        site.work, [tagged])[tagged]
    site.git('checkout', '-q', '-B', 'main', DEFAULT_TIP)


def assert_on_server(site, commits):
    """`commits` were pushed: the server has the hg ids our metadata
    gives them, public (`hg verify` runs once, at the end)."""
    nodes = pushed_nodes(site.work, commits)
    revset = ' or '.join(nodes.values())
    phases = dict(line.split() for line in site.node(
        revset, '{node} {phase}\n').splitlines())
    assert phases == {node: 'public' for node in nodes.values()}
    return nodes


def test_push_changesets_and_merge(site):
    first = site.commit('pushed', 'one\n', 'first push', '1700000000 +0100')
    second = site.commit('pushed', 'two\n', 'second push',
                         '1700000100 +0100')
    assert_pushed(site.push('origin', PUSH_TIP))
    nodes = assert_on_server(site, [first, second])
    assert site.node('tip') == nodes[second]

    site.git('checkout', '-q', '-b', 'side', first)
    side = site.commit('side', 'side\n', 'side work', '1700000200 +0100')
    site.git('checkout', '-q', 'main')
    site.git('merge', '-q', '--no-ff', '-m', 'merge side', 'side',
             extra_env={'GIT_AUTHOR_DATE': '1700000300 +0100',
                        'GIT_COMMITTER_DATE': '1700000300 +0100'})
    merge = rev_parse(site.work, 'HEAD')
    assert_pushed(site.push('origin', PUSH_TIP))
    nodes = assert_on_server(site, [side, merge])
    parents = site.node(nodes[merge], '{p1node} {p2node}').split()
    assert parents == [pushed_nodes(site.work, [second])[second],
                       nodes[side]]


def test_bookmark_create_move_delete(site):
    assert_pushed(site.push('origin', f'HEAD:{BOOKMARK}'))
    head = site.node('tip')
    assert site.hg.bookmarks(site.repo) == {'matrix': head}
    moved = site.commit('pushed', 'three\n', 'bookmark moves',
                        '1700000400 +0100')
    assert_pushed(site.push('origin', f'HEAD:{BOOKMARK}'))
    node = assert_on_server(site, [moved])[moved]
    assert site.hg.bookmarks(site.repo) == {'matrix': node}
    assert_pushed(site.push('origin', f':{BOOKMARK}'))
    assert site.hg.bookmarks(site.repo) == {}


def test_new_head_refused(site):
    site.git('checkout', '-q', '-b', 'other', 'HEAD~1')
    site.commit('other', 'other\n', 'a second head', '1700000500 +0100')
    with nothing_changes(site.hg, site.repo, site.work):
        result = site.push('origin', PUSH_TIP)
        assert_refused(result, ('non-fast-forward', 'fetch first'))
    site.git('checkout', '-q', 'main')


def test_same_ids_as_other_releases(site):
    fresh = site.workdir / 'fresh'
    assert_no_traceback(clone(site.url, fresh, '--no-checkout',
                              extra_env=site.env))
    assert_hg_verify(site.hg, site.repo)
    nodes = site.hg.nodes(site.repo)
    ids = hg2git(fresh, nodes)
    assert NULL_ID not in ids.values()
    assert ids == hg2git(site.work, nodes)
    seen = FRESH_IDS.setdefault(site.transport, {})
    seen[site.version] = ids
    differ = [version for version, other in seen.items() if other != ids]
    assert not differ, (f'Mercurial {site.version} gives other changesets '
                        f'or git commits than {differ}')


def badserver_extension(hg_path):
    """The release's own tests/testlib/badserverext.py (tests/ before
    6.1), from its source distribution (tools/hg-matrix); None when the
    hg is not one of those."""
    src = Path(hg_path).parent / 'src' / 'tests'
    for path in (src / 'testlib' / 'badserverext.py',
                 src / 'badserverext.py'):
        if path.is_file():
            return path
    return None


# (setting, value): the connection closed on accepting it, after reading
# part of a request, after sending some bytes of an answer (the headers,
# the capabilities, a batch, a bundle); the older spelling alongside.
BAD_SERVER = [('close-after-accept', 'true')] + [
    ('close-after-recv-bytes', n) for n in (10, 200)] + [
    ('close-after-send-bytes', n) for n in (10, 300, 1500, 4000)]
# Those that close it within the first answer (capabilities): the clone
# cannot succeed.
BAD_BEFORE_CAPABILITIES = {('close-after-accept', 'true'),
                           ('close-after-recv-bytes', 10),
                           ('close-after-send-bytes', 10),
                           ('close-after-send-bytes', 300)}
OLD_SPELLING = {'close-after-accept': 'closeafteraccept',
                'close-after-recv-bytes': 'closeafterrecvbytes',
                'close-after-send-bytes': 'closeaftersendbytes'}


@pytest.fixture(scope='module', params=MATRIX,
                ids=lambda p: f'hg{release_id(p)}')
def bad_release(request, corpus, tmp_path_factory, release_hg):
    """A repository of the release with its badserverext enabled (a
    release whose source has none is skipped, saying so)."""
    if badserver_extension(request.param) is None:
        pytest.skip(f'{request.param}: no badserverext.py in its source '
                    '(only releases built by tools/hg-matrix have it)')
    hg = release_hg(request.param)
    repo = tmp_path_factory.mktemp('bad-server') / 'repo'
    hg('init', repo)
    hg('-R', repo, 'unbundle', '-q', corpus.bundle(BUNDLE))
    return hg, repo, badserver_extension(request.param)


@pytest.mark.parametrize('setting,value', BAD_SERVER)
def test_server_closing_the_connection(bad_release, setting, value, corpus,
                                       tmp_path):
    """Mercurial's test-http-bad-server.t cases, from the client's side:
    a clone from a server that closes the connection at some point either
    fails with a `fatal:` line and no traceback, leaving no clone, or,
    the point being past what it sends, gives the expected ids. Closed
    within the capabilities exchange, it must fail, saying so."""
    hg, repo, extension = bad_release
    (repo / '.hg' / 'hgrc').write_text(
        f'[extensions]\nbadserver = {extension}\n[badserver]\n'
        f'{setting} = {value}\n{OLD_SPELLING[setting]} = {value}\n')
    with HgServer(hg, repo, tmp_path / 'log') as server:
        result = clone(f'hg::{server.url}', tmp_path / 'work',
                       '--no-checkout', check=False)
    assert_no_traceback(result)
    if (setting, value) in BAD_BEFORE_CAPABILITIES:
        # The first request got no answer (said as for any server that
        # cannot be reached), or part of one: the URL, never its query
        # string.
        line = assert_failed_for_people(
            result, ('cannot reach http://', 'to capabilities was cut short'))
        assert 'cmd=' not in line
    if result.returncode != 0:
        assert_failed_for_people(result)
        assert not (tmp_path / 'work').exists()
    else:
        assert_expected_ids(tmp_path / 'work', corpus.expected(BUNDLE))


# A repository set up as many servers are: clone bundles advertised (the
# clonebundles extension, in every release tested), a non-publishing
# server, and command arguments in the POST body where the release knows
# how (`httppostargs`, Mercurial 3.8 and newer).
VARIANT_HGRC = ('[extensions]\nclonebundles =\n[phases]\npublish = False\n'
                '[experimental]\nhttppostargs = True\n')


def advertised_capabilities(server):
    with urllib.request.urlopen(server.url + '?cmd=capabilities',
                                timeout=60) as answer:
        return answer.read().decode().split()


def access_log(server):
    """[(method, wire command)] of hg serve's access log."""
    found = []
    for line in (server.logdir / 'access.log').read_text().splitlines():
        words = line.split('"')[1].split() if '"' in line else []
        if len(words) > 1 and 'cmd=' in words[1]:
            command = words[1].split('cmd=')[1].split('&')[0]
            found.append((words[0], command))
    return found


@pytest.fixture(params=MATRIX, ids=lambda p: f'hg{release_id(p)}')
def variant(request, corpus, bundle_server, tmp_path, release_hg):
    """(hg, repository, its server, the bundle server): the release's own
    gzip-v2 bundle of the whole repository is its only clone bundle."""
    hg = release_hg(request.param)
    repo = tmp_path / 'server'
    hg('init', repo)
    hg('-R', repo, 'unbundle', '-q', corpus.bundle(BUNDLE))
    www = tmp_path / 'www'
    www.mkdir()
    hg('-R', repo, 'bundle', '-q', '--all', '--type', 'gzip-v2',
       www / 'full.hg')
    bundles = bundle_server(www)
    (repo / '.hg' / 'clonebundles.manifest').write_text(
        f'{bundles.url()}full.hg BUNDLESPEC=gzip-v2\n')
    (repo / '.hg' / 'hgrc').write_text(VARIANT_HGRC)
    server = HgServer(hg, repo, tmp_path / 'log')
    server.start()
    request.addfinalizer(server.stop)
    return hg, repo, server, bundles


def test_clone_bundle_phases_and_post_arguments(variant, corpus, tmp_path):
    """A clone through the release's clone bundle gets the same ids as a
    plain one, nothing more coming from the server (no getbundle); with
    `httppostargs` advertised, the commands with arguments are POSTs; a
    push to the non-publishing server leaves the changeset draft there,
    and, not kept by the push (cinnabar.data), the next fetch gives it
    back as the commit that was pushed."""
    hg, repo, server, bundles = variant
    work = tmp_path / 'work'
    result = clone(f'hg::{server.url}', work, extra_env={'HG': str(hg.exe)})
    assert_no_traceback(result)
    assert 'Getting clone bundle from' in result.err, result.describe()
    assert_expected_ids(work, corpus.expected(BUNDLE), hg.nodes(repo))
    assert [r['path'] for r in bundles.requests()
            if r['method'] == 'GET'] == ['/full.hg']
    commands = access_log(server)
    assert 'getbundle' not in [c for _, c in commands], commands
    # Every release tested advertises it (3.8 and newer do).
    assert 'httppostargs' in advertised_capabilities(server)
    with_arguments = [(m, c) for m, c in commands
                      if c not in ('capabilities', 'clonebundles',
                                   'clonebundles_manifest')]
    assert with_arguments and all(m == 'POST' for m, _ in
                                  with_arguments), commands

    git('checkout', '-q', '-B', 'main', DEFAULT_TIP, cwd=work)
    (work / 'draft').write_text('draft\n')
    git('add', 'draft', cwd=work)
    commit = git_commit(work, 'stays draft', AUTHOR, '1700000600 +0100')
    assert_pushed(git('push', 'origin', PUSH_TIP, cwd=work, check=False,
                      timeout=600))
    node, phase = hg('-R', repo, 'log', '-r', 'tip', '-T',
                     '{node} {phase}').out.split()
    assert phase == 'draft'
    # cinnabar.data's default (`phase`): drafts are not kept by the push,
    # the fetch brings them back, as the very commit that was pushed.
    assert git2hg(work, [commit])[commit] == NULL_ID
    result = git('fetch', 'origin', cwd=work)
    assert_no_traceback(result)
    assert git2hg(work, [commit])[commit] == node
    assert rev_parse(work, DEFAULT_TIP) == commit
