"""`cinnabar.graft`: a repository cloned from a git mirror of a Mercurial
repository (the mirror's commits have other ids than git-cinnabar's)
fetches from `hg serve` with the changesets recorded onto the mirror's
commits, and pushes from there.

The mirror is made here with git plumbing: every commit of a git-cinnabar
clone written again with `git commit-tree` (same tree, parents, author
and date) with another committer and a message ending with a newline, as
git tools write them. Those differences go into the git2hg notes, and the
hg ids stay checked.
"""

import os
import shutil

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.env import ROOT
from lib.git import (METADATA_REF, clone, git, git2hg, hg_url,
                     identity_env, refs)
from lib.vectors import read_tsv

TIP = 'refs/remotes/origin/branches/default/tip'
EXTENSION = ROOT / 'hg' / 'cinnabarclone.py'


def commit_hg(hg, repo, name, message, user, date, merge=None):
    if merge is not None:
        hg('merge', '-q', merge, cwd=repo)
    (repo / name).write_text(name + '\n')
    hg('add', '-q', name, cwd=repo)
    hg('commit', '-q', '-m', message, '-u', user, '-d', date, cwd=repo)


def make_hg_repo(hg, path):
    """first - second - merge, third on a second head of first."""
    hg('init', path)
    alice, bob = 'Alice <alice@example.org>', 'Bob <bob@example.org>'
    commit_hg(hg, path, 'a', 'first', alice, '1000 0')
    commit_hg(hg, path, 'b', 'second\n\nwith a body', bob, '2000 -3600')
    hg('update', '-q', '0', cwd=path)
    commit_hg(hg, path, 'c', 'third', alice, '3000 0')
    commit_hg(hg, path, 'd', 'merge', alice, '4000 0', merge='1')
    return path


def rewrite(src, dest, rev=TIP, committer='Mirror Bot',
            ref='refs/heads/main', base=None, trees=None,
            same_message=False):
    """Write the history of `rev` in `src` again into the repository
    `dest` as `ref`; returns {old commit: new commit}. With `base`, the
    root commit gets it as parent (a history hg lacks the start of);
    `trees` is {old commit: tree} of the commits to write with another
    tree. With `same_message`, the messages are kept byte for byte (the
    commits then differ from the conversion's by their committer only,
    which needs no `patch`)."""
    commits = git('rev-list', '--topo-order', '--reverse', '--parents',
                  rev, cwd=src).out.split('\n')
    mapping = {}
    for line in filter(None, commits):
        commit, *parents = line.split()
        fields = git('show', '-s', '--format=%T%n%an%n%ae%n%ad',
                     '--date=raw', commit, cwd=src).out.split('\n')
        message = git('show', '-s', '--format=%B', commit, cwd=src).out
        if same_message:
            message = git('cat-file', 'commit', commit,
                          cwd=src).stdout.partition(b'\n\n')[2].decode()
        env = dict(os.environ, GIT_AUTHOR_NAME=fields[1],
                   GIT_AUTHOR_EMAIL=fields[2],
                   GIT_AUTHOR_DATE='@' + fields[3],
                   GIT_COMMITTER_NAME=committer,
                   GIT_COMMITTER_EMAIL='bot@mirror.example.org',
                   GIT_COMMITTER_DATE='1700000000 +0000')
        args = ['commit-tree', (trees or {}).get(commit, fields[0])]
        for parent in parents:
            args += ['-p', mapping[parent]]
        if not parents and base:
            args += ['-p', base]
        mapping[commit] = git(*args, cwd=dest, env=env,
                              input=message.encode()).out.strip()
    git('update-ref', ref, mapping[commit], cwd=dest)
    return mapping


# The git mirrors of tests/vectors/graft.tsv, written from a clone of
# make_hg_repo's repository (make_mirror).
MIRRORS = ('rewritten', 'extra-root', 'root-tree', 'third-tree')


def make_mirror(reference, dest, kind):
    """A bare git mirror at `dest` of the history of TIP in the clone
    `reference`, written by `rewrite` (committer, message ending with a
    newline), its `main` branch the tip: `rewritten` as is, `extra-root`
    with a root commit hg lacks under the first commit, `root-tree` with
    the first commit's tree another (no changeset has it), `third-tree`
    with the tree of `second` for `third`. Returns {old commit: new}."""
    git('init', '-q', '--bare', dest)
    git('fetch', '-q', reference, f'{TIP}:{TIP}', cwd=dest)
    by_subject = dict(
        line.split(' ', 1)[::-1] for line in git(
            'log', '--format=%H %s', TIP, cwd=dest).out.splitlines())
    tree = {name: git('rev-parse', f'{c}^{{tree}}', cwd=dest).out.strip()
            for name, c in by_subject.items()}
    base, trees = None, None
    if kind == 'extra-root':
        empty = git('hash-object', '-t', 'tree', '-w', '--stdin',
                    cwd=dest, input=b'').out.strip()
        base = git('commit-tree', empty, '-m', 'initial import', cwd=dest,
                   env=dict(os.environ, **identity_env(
                       'Importer', 'importer@mirror.example.org',
                       '@500 +0000'))).out.strip()
    elif kind == 'root-tree':
        trees = {by_subject['first']: tree['third']}
    elif kind == 'third-tree':
        trees = {by_subject['third']: tree['second']}
    mapping = rewrite(dest, dest, base=base, trees=trees)
    git('update-ref', '-d', TIP, cwd=dest)
    git('symbolic-ref', 'HEAD', 'refs/heads/main', cwd=dest)
    return mapping


def signed_copy(repo, rev):
    """The history of `rev` written again with a `gpgsig` header in each
    commit (nothing a changeset keeps: no `patch` needed), else the same;
    {old commit: new commit}."""
    mapping = {}
    for line in git('rev-list', '--topo-order', '--reverse', '--parents',
                    rev, cwd=repo).out.splitlines():
        commit, *parents = line.split()
        raw = git('cat-file', 'commit', commit, cwd=repo).stdout
        header, _, body = raw.partition(b'\n\n')
        lines = [line for line in header.split(b'\n')
                 if not line.startswith(b'parent ')]
        lines[1:1] = [b'parent ' + mapping[p].encode() for p in parents]
        lines.append(b'gpgsig -----BEGIN PGP SIGNATURE-----\n '
                     b'\n -----END PGP SIGNATURE-----')
        mapping[commit] = git(
            'hash-object', '-t', 'commit', '-w', '--stdin', cwd=repo,
            input=b'\n'.join(lines) + b'\n\n' + body).out.strip()
    return mapping


class Template:
    """Made once for the module: an hg repository (with the cinnabarclone
    extension in its hgrc), a git-cinnabar clone of it, and a bare git
    mirror of that clone with other commit ids."""

    def __init__(self, hg, path):
        self.hg_repo = make_hg_repo(hg, path / 'hg')
        with open(self.hg_repo / '.hg' / 'hgrc', 'a') as f:
            f.write(f'[extensions]\ncinnabarclone = {EXTENSION}\n')
        self.reference = path / 'reference'
        result = clone(hg_url(self.hg_repo), self.reference,
                       '--no-checkout', '-q')
        assert result.returncode == 0, result.describe()
        self.mirror = path / 'mirror.git'
        self.mapping = make_mirror(self.reference, self.mirror, 'rewritten')
        # {mirror commit: hg id}: the ids Mercurial gives (`hg log`), not
        # ours; each changeset has its own time, which its commits keep.
        hg_ids = dict(line.split()[::2] for line in hg(
            '-R', self.hg_repo, 'log', '-T', '{date|hgdate} {node}\n'
        ).out.splitlines())
        assert len(hg_ids) == len(self.mapping)
        self.expected = {new: hg_ids[git('show', '-s', '--format=%at', new,
                                         cwd=self.mirror).out.strip()]
                         for new in self.mapping.values()}


class Project:
    """For one test: copies of the template's repositories (tests change
    them), the hg one served by `hg serve`."""

    def __init__(self, template, hg_serve, tmp_path):
        self.tmp = tmp_path
        for name in ('hg_repo', 'reference', 'mirror'):
            source = getattr(template, name)
            setattr(self, name, tmp_path / source.name)
            shutil.copytree(source, tmp_path / source.name, symlinks=True)
        self.mapping = template.mapping
        self.expected = template.expected
        self.server = hg_serve(self.hg_repo)
        self.url = hg_url(self.server.url)

    def sign_mirror(self):
        """The mirror's main made a copy of the conversion's history with
        a `gpgsig` header in each commit (signed_copy): grafted onto
        without a replace commit."""
        git('fetch', '-q', self.reference, f'{TIP}:{TIP}', cwd=self.mirror)
        self.mapping = signed_copy(self.mirror, TIP)
        git('update-ref', 'refs/heads/main',
            self.mapping[refs(self.mirror)[TIP]], cwd=self.mirror)
        git('update-ref', '-d', TIP, cwd=self.mirror)
        self.expected = dict(zip(self.mapping.values(), git2hg(
            self.reference, self.mapping).values()))

    def mirror_clone(self, name):
        """A clone of the mirror with an `hg` remote for the server."""
        dest = self.tmp / name
        git('clone', '-q', self.mirror, dest)
        git('remote', 'add', 'hg', self.url, cwd=dest)
        return dest


@pytest.fixture(scope='module')
def template(hg, tmp_path_factory):
    return Template(hg, tmp_path_factory.mktemp('graft'))


@pytest.fixture
def project(template, hg_serve, tmp_path):
    return Project(template, hg_serve, tmp_path)


def assert_fsck_clean(repo):
    result = git('cinnabar', 'fsck', '--full', cwd=repo)
    assert 'no problem' in result.out + result.err, result.describe()


def test_graft_onto_a_mirror_then_push(project, hg):
    repo = project.mirror_clone('work')
    assert set(project.mapping) != set(project.expected)   # other ids
    result = git('-c', 'cinnabar.graft=true', 'fetch', 'hg', cwd=repo)
    assert_no_traceback(result)
    # The first commit needs a patch (its message): replaced, as
    # git-cinnabar does, by a commit of its own; the others are recorded
    # onto through it.
    assert 'graft: 3 changesets recorded onto existing commits, 1 ' \
        'replacing one, 0 new' in result.err
    assert git2hg(repo, project.expected) == project.expected
    main = refs(repo)['refs/heads/main']
    assert refs(repo)['refs/remotes/hg/branches/default/tip'] == main
    assert_fsck_clean(repo)

    # A commit of the mirror's history pushed to hg.
    (repo / 'e').write_text('e\n')
    git('add', 'e', cwd=repo)
    git('-c', 'user.name=Dev', '-c', 'user.email=dev@example.org',
        'commit', '-q', '-m', 'fifth', cwd=repo)
    result = git('push', 'hg', 'main:refs/heads/branches/default/tip',
                 cwd=repo)
    assert_no_traceback(result)
    hg('-R', project.hg_repo, 'verify', '-q')
    new = refs(repo)['refs/heads/main']
    tip = hg('-R', project.hg_repo, 'log', '-r', 'tip', '-T',
             '{node} {desc}').out.split(' ', 1)
    assert tip[1] == 'fifth'
    assert git2hg(repo, [new]) == {new: tip[0]}

    # The mirror gets the commit; a new repository grafting onto the
    # mirror (its URL in cinnabar.graft) maps it back to the same id.
    git('push', '-q', project.mirror, 'main', cwd=repo)
    fresh = project.tmp / 'fresh'
    git('init', '-q', fresh)
    result = git('-c', f'cinnabar.graft={project.mirror}', 'fetch', '-q',
                 project.url, 'refs/heads/branches/default/tip', cwd=fresh)
    assert_no_traceback(result)
    assert git2hg(fresh, [new]) == {new: tip[0]}
    assert refs(fresh)[
        'refs/cinnabar/graft/heads/main'] == new
    assert git('rev-parse', 'FETCH_HEAD', cwd=fresh).out.strip() == new
    assert_fsck_clean(fresh)


def test_unbundle_grafts(project, hg):
    """`git cinnabar unbundle` honours cinnabar.graft too."""
    bundle = project.tmp / 'all.hg'
    hg('-R', project.hg_repo, 'bundle', '-q', '--all', bundle)
    repo = project.mirror_clone('unbundle')
    result = git('-c', 'cinnabar.graft=true', 'cinnabar', 'unbundle',
                 bundle, cwd=repo)
    assert 'graft: 3 changesets recorded onto existing commits, 1 ' \
        'replacing one' in result.err
    assert git2hg(repo, project.expected) == project.expected


def test_partial_mirror_and_per_remote_setting(project):
    """A mirror lacking the last changeset: the others are grafted, the
    last one gets a commit of its own (git-cinnabar would leave it out);
    `remote.<remote>.cinnabar-graft` turns grafting on."""
    merge = project.mapping[refs(project.reference)[TIP]]
    git('update-ref', 'refs/heads/main', merge + '^1', cwd=project.mirror)
    git('update-ref', 'refs/heads/side', merge + '^2', cwd=project.mirror)
    repo = project.mirror_clone('partial')
    git('config', 'remote.hg.cinnabar-graft', 'true', cwd=repo)
    result = git('fetch', 'hg', cwd=repo)
    assert 'graft: 2 changesets recorded onto existing commits, 1 ' \
        'replacing one, 1 new' in result.err
    tip = refs(repo)['refs/remotes/hg/branches/default/tip']
    assert tip not in project.expected
    parents = git('rev-list', '--parents', '-n1', tip,
                  cwd=repo).out.split()[1:]
    assert set(parents) <= set(project.expected)
    assert_fsck_clean(repo)


def test_nothing_to_graft_is_refused(project, tmp_path):
    """Candidates, but none matches: refused as git-cinnabar does,
    nothing kept. Without any candidate, a normal fetch."""
    repo = tmp_path / 'unrelated'
    git('init', '-q', repo)
    (repo / 'x').write_text('x\n')
    git('add', 'x', cwd=repo)
    git('-c', 'user.name=X', '-c', 'user.email=x@example.org', 'commit',
        '-q', '-m', 'unrelated', cwd=repo)
    before = refs(repo)
    result = git('-c', 'cinnabar.graft=true', 'fetch', project.url,
                 cwd=repo, check=False)
    assert_failed_for_people(result)
    assert 'nothing to graft' in result.err
    assert refs(repo) == before
    assert METADATA_REF not in before

    empty = tmp_path / 'empty'
    git('init', '-q', empty)
    result = git('-c', 'cinnabar.graft=true', 'fetch', '-q', project.url,
                 'refs/heads/branches/default/tip', cwd=empty)
    reference = refs(project.reference)[TIP]
    assert git('rev-parse', 'FETCH_HEAD', cwd=empty).out.strip() == \
        reference

    result = git('-c', 'cinnabar.graft=', 'fetch', project.url, cwd=repo,
                 check=False)
    assert_failed_for_people(result)
    assert 'cinnabar.graft' in result.err


def test_ambiguous_candidates_are_refused(project):
    """Two mirror histories as good as each other (but for their
    committer): the first changeset has two candidates."""
    git('fetch', '-q', project.reference, f'{TIP}:{TIP}',
        cwd=project.mirror)
    rewrite(project.mirror, project.mirror, committer='Another Bot',
            ref='refs/heads/other')
    repo = project.mirror_clone('ambiguous')
    before = refs(repo)
    result = git('-c', 'cinnabar.graft=true', 'fetch', 'hg', cwd=repo,
                 check=False)
    assert_failed_for_people(result)
    assert 'several commits match' in result.err, result.describe()
    assert refs(repo) == before


def test_cinnabarclone_graft_line(project, bundle_server):
    """The server's cinnabar.manifest has a `graft=` line whose bundle
    holds the metadata of a grafted repository but not the mirror's
    commits: a clone of the mirror fetching from hg takes it (preferred
    over a plain line) and asks hg for no changeset. The mirror's commits
    differ from the conversion's by their committer only: recorded onto
    without a replace commit (metadata with one is refused)."""
    project.sign_mirror()
    grafted = project.mirror_clone('grafted')
    git('-c', 'cinnabar.graft=true', 'fetch', '-q', 'hg', cwd=grafted)
    main = refs(grafted)['refs/heads/main']
    www = project.tmp / 'www'
    www.mkdir()
    git('bundle', 'create', www / 'graft.bundle', METADATA_REF,
        '^' + main, cwd=grafted)
    server = bundle_server(www)
    (project.hg_repo / '.hg' / 'cinnabar.manifest').write_text(
        f'{server.url()}plain.bundle\n'
        f'{server.url()}graft.bundle graft={main}\n')
    log = project.server.logdir / 'access.log'
    before = len(log.read_text().splitlines())
    repo = project.mirror_clone('user')
    result = git('fetch', 'hg', cwd=repo)
    assert_no_traceback(result)
    assert 'Fetching cinnabar metadata from %sgraft.bundle' % server.url() \
        in result.err
    commands = log.read_text().splitlines()[before:]
    assert not [line for line in commands if "cmd=getbundle" in line], \
        result.err + git("ls-tree", METADATA_REF, cwd=grafted).out
    assert git2hg(repo, project.expected) == project.expected
    assert refs(repo)['refs/remotes/hg/branches/default/tip'] == main
    assert_fsck_clean(repo)

    # With cinnabar.graft=false, the graft line is not used: the plain
    # line (missing here) fails, and the clone falls back.
    other = project.mirror_clone('nograft')
    result = git('-c', 'cinnabar.graft=false', 'fetch', 'hg', cwd=other)
    assert 'falling back to a normal clone' in result.err
    assert 'graft.bundle' not in result.err


def test_parent_after_committer_is_no_parent(project):
    """A mirror whose commit for `second` has its `parent` line after
    `committer` (`git fsck` accepts it; git reads a root commit): as git,
    the graft sees no parent there, so `second` is not recorded onto it
    but gets a commit of its own, whose parent git sees (the mirror's
    `first`, which the commit of `first` replaces)."""
    merge = project.mapping[refs(project.reference)[TIP]]
    second = git('rev-parse', merge + '^2', cwd=project.mirror).out.strip()
    first = git('rev-parse', second + '^', cwd=project.mirror).out.strip()
    raw = git('cat-file', 'commit', second, cwd=project.mirror).stdout
    header, _, body = raw.partition(b'\n\n')
    lines = header.split(b'\n')
    parent = b'parent %s' % first.encode()
    assert lines[1] == parent
    moved = b'\n'.join(lines[:1] + lines[2:] + [parent]) + b'\n\n' + body
    crafted = git('hash-object', '-t', 'commit', '-w', '--stdin',
                  cwd=project.mirror, input=moved).out.strip()
    assert git('rev-list', '--parents', crafted,
               cwd=project.mirror).out.split() == [crafted]
    git('update-ref', 'refs/heads/main', crafted, cwd=project.mirror)
    git('update-ref', 'refs/heads/first', first, cwd=project.mirror)
    repo = project.mirror_clone('misplaced')
    assert git('fsck', '--strict', '--no-dangling', cwd=repo).returncode == 0
    result = git('-c', 'cinnabar.graft=true', 'fetch', 'hg', cwd=repo)
    assert_no_traceback(result)
    assert 'graft: 0 changesets recorded onto existing commits, 1 ' \
        'replacing one, 3 new' in result.err, result.describe()
    second_id = project.expected[second]
    assert git2hg(repo, [first, crafted]) == {
        first: project.expected[first], crafted: '0' * 40}
    made = git('cinnabar', 'hg2git', second_id, cwd=repo).out.strip()
    assert made != crafted
    assert git('rev-list', '--parents', '-n1', made,
               cwd=repo).out.split() == [made, first]
    assert_fsck_clean(repo)


GRAFT_VECTORS = read_tsv('graft.tsv')


def vectors(case):
    """({hg changeset: commit}, {replaced: replacement}) git-cinnabar
    0.7.5 made for `case` (tests/vectors/graft.tsv)."""
    commits, replaces = {}, {}
    for key, value in GRAFT_VECTORS.items():
        name, _, rest = key.partition(':')
        if name != case or rest == 'metadata':
            continue
        if rest.startswith('replace:'):
            replaces[rest[len('replace:'):]] = value
        else:
            commits[rest] = value
    return commits, replaces


def graft_state(repo, nodes):
    """What vectors() gives, from our metadata."""
    commits = dict(zip(nodes, git('cinnabar', 'hg2git', *nodes,
                                  cwd=repo).out.split()))
    tree = git('ls-tree', METADATA_REF, cwd=repo).out
    replaces = {}
    for entry in tree.splitlines():
        info, name = entry.split('\t')
        replaces[name] = info.split()[2]
    return commits, replaces


def hg_nodes(hg, repo):
    return hg('-R', repo, 'log', '-T', '{node}\n').out.split()


@pytest.mark.parametrize('kind', MIRRORS)
def test_graft_as_git_cinnabar(project, hg, kind):
    """Each mirror of MIRRORS (one rewritten as is, one with a root hg
    lacks, one whose root has another tree, one whose `third` has another
    tree, where only some changesets have a candidate): the commits, the
    replace map and the metadata commit git-cinnabar 0.7.5 makes, a clean
    fsck, the mirror's commits known through the replace map, a second
    fetch that changes nothing, a push onto the replaced commit, and a
    rollback that takes the replace refs away."""
    mirror = project.tmp / f'{kind}.git'
    mapping = make_mirror(project.reference, mirror, kind)
    repo = project.tmp / kind
    git('clone', '-q', mirror, repo)
    git('remote', 'add', 'hg', project.url, cwd=repo)
    result = git('-c', 'cinnabar.graft=true', 'fetch', 'hg', cwd=repo)
    assert_no_traceback(result)
    nodes = hg_nodes(hg, project.hg_repo)
    commits, replaces = vectors(kind)
    assert graft_state(repo, nodes) == (commits, replaces)
    assert len(replaces) == 1
    for replaced, replacement in replaces.items():
        assert refs(repo)[f'refs/cinnabar/replace/{replaced}'] == \
            replacement
        # The mirror's commit maps to the changeset of its replacement.
        assert git2hg(repo, [replaced])[replaced] == \
            git2hg(repo, [replacement])[replacement] != '0' * 40
    tip = refs(repo)['refs/remotes/hg/branches/default/tip']
    assert tip == commits[nodes[0]]
    # The same metadata commit: the same notes (their `patch` fields too).
    assert refs(repo)[METADATA_REF] == GRAFT_VECTORS[f'{kind}:metadata']
    assert_fsck_clean(repo)
    before = refs(repo)
    result = git('-c', 'cinnabar.graft=true', 'fetch', 'hg', cwd=repo)
    assert_no_traceback(result)
    assert refs(repo) == before

    # A commit on top of the replaced commit is pushed with the
    # replacement's changeset as parent.
    (replaced, replacement), = replaces.items()
    tree = git('rev-parse', f'{replaced}^{{tree}}', cwd=repo).out.strip()
    child = git('commit-tree', tree, '-p', replaced, '-m', 'on top',
                cwd=repo, env=dict(os.environ, **identity_env(
                    'Dev', 'dev@example.org'))).out.strip()
    result = git('push', '-f', 'hg',
                 f'{child}:refs/heads/branches/default/tip', cwd=repo)
    assert_no_traceback(result)
    hg('-R', project.hg_repo, 'verify', '-q')
    pushed = hg('-R', project.hg_repo, 'log', '-r', 'tip', '-T',
                '{node} {p1node} {desc}').out.split(' ', 2)
    assert pushed[1:] == [git2hg(repo, [replacement])[replacement],
                          'on top']
    assert git2hg(repo, [child]) == {child: pushed[0]}
    assert_fsck_clean(repo)

    # Rolled back to nothing: the replace refs go with the metadata.
    git('cinnabar', 'rollback', '0' * 40, cwd=repo)
    assert not refs(repo, 'refs/cinnabar/replace/')
    assert METADATA_REF not in refs(repo)
    assert refs(repo)['refs/heads/main'] == mapping[
        refs(project.reference)[TIP]]


def test_reclone_prefers_the_mirror(project, hg):
    """A clone of hg (the conversion's commits under refs/remotes/origin)
    with a git mirror fetched into refs/remotes/new: `git cinnabar
    reclone` with cinnabar.graft=true takes the mirror's commits, those
    the conversion would not make, as git-cinnabar 0.7.5 does."""
    repo = project.tmp / 'reclone'
    result = clone(project.url, repo, '--no-checkout', '-q')
    assert result.returncode == 0, result.describe()
    git('fetch', '-q', project.mirror, '+refs/heads/*:refs/remotes/new/*',
        cwd=repo)
    result = git('-c', 'cinnabar.graft=true', 'cinnabar', 'reclone',
                 cwd=repo)
    assert_no_traceback(result)
    nodes = hg_nodes(hg, project.hg_repo)
    commits, replaces = vectors('reclone')
    assert graft_state(repo, nodes) == (commits, replaces)
    assert refs(repo)['refs/remotes/origin/branches/default/tip'] == \
        refs(repo)['refs/remotes/new/main'] == commits[nodes[0]]
    assert_fsck_clean(repo)


def test_damaged_replace_map(project):
    """A metadata tree entry that is not a gitlink: one fatal line, as
    git-cinnabar refuses it, refs unchanged; an entry replacing a commit
    with itself is ignored with a warning (as git-cinnabar does)."""
    repo = project.mirror_clone('damaged')
    git('-c', 'cinnabar.graft=true', 'fetch', '-q', 'hg', cwd=repo)
    metadata = refs(repo)[METADATA_REF]
    raw = git('cat-file', 'commit', metadata, cwd=repo).stdout
    entries = git('ls-tree', METADATA_REF, cwd=repo).out
    blob = git('hash-object', '-w', '--stdin', cwd=repo,
               input=b'x').out.strip()
    replaced = entries.split('\t')[1].strip()

    def with_tree(listing):
        tree = git('mktree', cwd=repo, input=listing.encode()).out.strip()
        commit = git('hash-object', '-t', 'commit', '-w', '--stdin',
                     cwd=repo, input=b'tree %s\n' % tree.encode()
                     + raw.split(b'\n', 1)[1]).out.strip()
        git('update-ref', METADATA_REF, commit, cwd=repo)
        return commit

    with_tree(entries + f'100644 blob {blob}\t{"1" * 40}\n')
    before = refs(repo)
    result = git('fetch', 'hg', cwd=repo, check=False)
    assert_failed_for_people(result, 'not a replaced commit')
    assert refs(repo) == before

    # The mirror's own commit for itself: ignored.
    main = refs(repo)['refs/heads/main']
    with_tree(entries + f'160000 commit {main}\t{main}\n')
    result = git('cinnabar', 'git2hg', replaced, cwd=repo)
    assert 'replacing %s with itself' % main in result.err
    assert result.out.strip() == project.expected[replaced]
