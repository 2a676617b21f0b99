"""`git cinnabar bundle` writes bundles that `hg unbundle` takes, with the
same changesets, and changes nothing on the git side.

For a git clone of a small corpus repository with named branches and
merges (issue4041.hg), and of nginx.hg (slow), a bundle of `--all` with
each bundlespec (none, gzip, bzip2 in v1; none, gzip, bzip2, zstd in v2)
starts as that bundlespec's files start, and unbundled into an empty
repository gives exactly the original's changesets (`hg log -T
'{node}\\n'`, sorted) and heads, `hg verify` being clean.  Every ref,
`refs/cinnabar/metadata` included, is the same after each `bundle`.

Also: the default bundlespec is hg's (bzip2-v2) and `--version` picks
the version; a partial range unbundles onto a repository holding the
rest (and not onto an empty one); new git commits are bundled as `git
push` would convert them, yet nothing of them is recorded; bad
bundlespecs, versions, ranges and parents outside the range fail with
one `fatal:` line and write no file.
"""

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.corpus import NGINX
from lib.git import clone, git, hg2git, hg_url, refs
from lib.push import Author, assert_hg_verify, git_commit

SMALL = 'issue4041.hg'
TIMEOUT = 600
COMPRESSED_START = {
    'none': b'', 'gzip': b'x', 'bzip2': b'BZh', 'zstd': b'\x28\xb5\x2f\xfd'}
SPECS = ('none-v1', 'gzip-v1', 'bzip2-v1', 'none-v2', 'gzip-v2',
         'bzip2-v2', 'zstd-v2')
ALICE = Author('Alice Liddell', 'alice@example.com')


def expected_start(spec):
    """The first bytes of a bundle of `spec` (compression-version)."""
    compression, version = spec.split('-')
    data = COMPRESSED_START[compression]
    if version == 'v1':
        kind = {'none': b'UN', 'gzip': b'GZ', 'bzip2': b''}[compression]
        return b'HG10' + kind + data
    if compression == 'none':
        return b'HG20\0\0\0\0'
    param = b'Compression=' + {'gzip': b'GZ', 'bzip2': b'BZ',
                               'zstd': b'ZS'}[compression]
    return b'HG20\0\0\0' + bytes([len(param)]) + param + data


def bundle(repo, *args, **kwargs):
    return git('cinnabar', 'bundle', *args, cwd=repo, **kwargs)


def sorted_nodes(hg, repo):
    out = hg('-R', repo, 'log', '-T', '{node}\n', timeout=TIMEOUT).out
    return sorted(out.split())


def assert_unbundles_to(hg, path, target, original):
    """Unbundling `path` into `target` gives `original`'s changesets."""
    hg('-R', target, 'unbundle', '-q', path, timeout=TIMEOUT)
    assert sorted_nodes(hg, target) == sorted_nodes(hg, original)
    assert sorted(hg.heads(target)) == sorted(hg.heads(original))
    assert_hg_verify(hg, target)


def assert_spec_round_trip(hg, repo, original, spec, tmp_path):
    before = refs(repo)
    path = tmp_path / f'{spec}.hg'
    result = bundle(repo, '-t', spec, path, '--', '--all', timeout=TIMEOUT)
    assert_no_traceback(result)
    assert refs(repo) == before, 'bundle changed refs'
    assert path.read_bytes().startswith(expected_start(spec))
    target = tmp_path / f'{spec}-repo'
    hg('init', target)
    assert_unbundles_to(hg, path, target, original)


@pytest.fixture(scope='module')
def small(hg_repos, tmp_path_factory):
    """(hg repository, git clone) of SMALL."""
    repo = hg_repos.get(SMALL)
    dest = tmp_path_factory.mktemp('bundle') / 'clone'
    assert_no_traceback(clone(hg_url(repo), dest))
    return repo, dest


@pytest.mark.parametrize('spec', SPECS)
def test_bundle_spec_round_trip(spec, small, hg, tmp_path):
    repo, dest = small
    assert_spec_round_trip(hg, dest, repo, spec, tmp_path)


@pytest.mark.parametrize('args, spec', [
    ((), 'bzip2-v2'),
    (('--version', '1'), 'bzip2-v1'),
    (('--version=2',), 'bzip2-v2'),
    (('-t', 'gzip', '--version', '1'), 'gzip-v1'),
    (('--type=none',), 'none-v2'),
    (('-tv1',), 'bzip2-v1'),
    (('-t', 'ZSTD'), 'zstd-v2'),
])
def test_bundle_default_and_version(args, spec, small, tmp_path):
    _, dest = small
    path = tmp_path / 'out.hg'
    result = bundle(dest, *args, path, 'HEAD')
    assert f'({spec})' in result.err, result.describe()
    assert path.read_bytes().startswith(expected_start(spec))


@pytest.mark.parametrize('spec', ('gzip-v1', 'zstd-v2'))
def test_bundle_partial_range(spec, small, hg, hg_repos, tmp_path):
    repo, dest = small
    base_rev = 4
    target = hg_repos.copy(SMALL, tmp_path / 'partial', rev=base_rev)
    base = hg.nodes(repo, str(base_rev))[0]
    held = len(hg.nodes(target))
    commit = hg2git(dest, [base])[base]
    path = tmp_path / 'partial.hg'
    result = bundle(dest, '-t', spec, path, '--', '--all',
                    f'^{commit}')
    total = len(hg.nodes(repo))
    assert f'{total - held} changesets written' in result.err
    empty = tmp_path / 'empty'
    hg('init', empty)
    refused = hg('-R', empty, 'unbundle', path, check=False)
    assert refused.returncode != 0, 'a partial bundle went into nothing'
    assert_unbundles_to(hg, path, target, repo)


@pytest.fixture
def work_clone(small, tmp_path):
    """A clone of SMALL with two new git commits on the checked out
    branch; returns (hg repository, clone, [first, second])."""
    repo, _ = small
    dest = tmp_path / 'work'
    assert_no_traceback(clone(hg_url(repo), dest))
    commits = []
    for name in ('new-one.txt', 'new-two.txt'):
        (dest / name).write_text(f'{name}\n')
        git('add', name, cwd=dest)
        commits.append(git_commit(dest, f'add {name}', ALICE,
                                  '1700000000 +0100'))
    return repo, dest, commits


def test_bundle_new_commits_records_nothing(work_clone, hg, hg_repos,
                                            tmp_path):
    repo, dest, (first, second) = work_clone
    before = refs(dest)
    path = tmp_path / 'new.hg'
    result = bundle(dest, path, '--', 'HEAD', '^HEAD~2')
    assert '2 changesets written' in result.err, result.describe()
    assert refs(dest) == before
    unknown = git('cinnabar', 'git2hg', first, second, cwd=dest).out.split()
    assert unknown == ['0' * 40] * 2, 'bundle recorded new changesets'
    target = hg_repos.copy(SMALL, tmp_path / 'target')
    hg('-R', target, 'unbundle', '-q', path)
    assert_hg_verify(hg, target)
    out = hg('-R', target, 'log', '-r', 'tip', '-T',
             '{desc}|{author}|{files}|{p1node}').out
    first_node = hg('-R', target, 'log', '-r', 'tip^', '-T', '{node}').out
    assert out == (f'add new-two.txt|{ALICE.name} <{ALICE.email}>|'
                   f'new-two.txt|{first_node}')
    assert len(sorted_nodes(hg, target)) == len(sorted_nodes(hg, repo)) + 2


# Successive contents of one file: the deltas between them cover lines
# without a final newline, edits at both ends, growing and shrinking.
EDITS = ('a\nb\nc', 'a\nxb\nc', 'x\na\nxb\nc\n', 'a\nxb\nc\nd\n',
         'c\nd\n', '', 'only\n', 'only\nonly\nonly')


def test_bundle_deltas_of_edits(small, hg, hg_repos, tmp_path):
    repo, _ = small
    dest = tmp_path / 'edits'
    assert_no_traceback(clone(hg_url(repo), dest))
    for number, content in enumerate(EDITS):
        (dest / 'edited.txt').write_text(content)
        git('add', 'edited.txt', cwd=dest)
        git_commit(dest, f'edit {number}', ALICE, f'{1700000000 + number} '
                   '+0000')
    for spec in ('none-v1', 'none-v2'):
        path = tmp_path / f'{spec}.hg'
        bundle(dest, '-t', spec, path, '--', 'HEAD', f'^HEAD~{len(EDITS)}')
        target = hg_repos.copy(SMALL, tmp_path / spec)
        hg('-R', target, 'unbundle', '-q', path)
        assert_hg_verify(hg, target)
        for back, content in enumerate(reversed(EDITS)):
            shown = hg('-R', target, 'cat', '-r', f'tip~{back}',
                       'edited.txt', cwd=target).out
            assert shown == content, (spec, back)


def debugbundle_chunks(hg, path):
    """{group name: [(node, p1, delta base)]} of a version 2 bundle, as
    `hg debugbundle --all` lists them ('changelog', 'manifest', paths)."""
    groups, name = {}, None
    for line in hg('debugbundle', '--all', path).out.splitlines():
        words = line.split()
        if not line.startswith('    ') or words[0] == 'format:':
            continue
        if len(words) == 6 and all(len(w) == 40 for w in words[:5]):
            groups[name].append((words[0], words[1], words[4]))
        else:
            name = line.strip()
            groups[name] = []
    return groups


def test_bundle_deltas_against_first_parent(small, hg, tmp_path):
    """In version 2, manifests and files are deltas against their first
    parent (as hg sends them from a generaldelta repository, so that the
    server keeps them), also where that is not the previous revision of
    the group (named branches, merges)."""
    _, dest = small
    path = tmp_path / 'all.hg'
    assert_no_traceback(bundle(dest, '-t', 'none-v2', path, '--', '--all'))
    groups = debugbundle_chunks(hg, path)
    assert 'changelog' in groups and 'manifest' in groups
    null = '0' * 40
    against_p1 = not_previous = 0
    for name, chunks in groups.items():
        if name == 'changelog':
            continue
        previous = None
        for node, p1, base in chunks:
            if p1 != null:
                assert base == p1, (name, node)
                against_p1 += 1
                not_previous += p1 != previous
            previous = node
    # The history has revisions whose first parent is not the previous
    # one of their group: the test tells both ways apart.
    assert against_p1 and not_previous


def test_bundle_parent_outside_range(work_clone, tmp_path):
    _, dest, (first, second) = work_clone
    before = refs(dest)
    path = tmp_path / 'no.hg'
    result = bundle(dest, path, '--', second, f'^{first}', check=False)
    assert_failed_for_people(result)
    assert f'commit {second} has a parent, {first}, that is neither in ' \
        'the bundle nor known' in result.err, result.describe()
    assert not path.exists()
    assert refs(dest) == before


def test_bundle_commit_with_an_extra_header(work_clone, tmp_path):
    """A copy of a commit with one more header line converts to the same
    changeset but for that header: the helper refuses it, and the user
    reads which commit and why (not only that the helper exited)."""
    _, dest, (first, _) = work_clone
    text = git('cat-file', 'commit', first, cwd=dest).out
    copy = git('hash-object', '-t', 'commit', '-w', '--stdin', cwd=dest,
               input=text.replace('\ncommitter ', '\nextra x\ncommitter ',
                                  1).encode()).out.strip()
    before = refs(dest)
    path = tmp_path / 'twins.hg'
    result = bundle(dest, path, '--', first, copy, f'^{first}^',
                    check=False)
    assert result.returncode == 128, result.describe()
    assert assert_failed_for_people(result) == (
        f"fatal: commit {copy} has a header ('extra') that Mercurial "
        'cannot keep; it cannot be pushed'), result.describe()
    assert 'exited with status' not in result.err
    assert not path.exists()
    assert refs(dest) == before


@pytest.mark.parametrize('args, words, status', [
    (('-t', 'lzma-v2', 'OUT', 'HEAD'),
     ('unknown bundlespec', 'none-v1, gzip-v1, bzip2-v1, none-v2, '
      'gzip-v2, bzip2-v2, zstd-v2'), 128),
    (('-t', 'zstd-v1', 'OUT', 'HEAD'),
     ('zstd compression needs a v2 bundle',), 128),
    (('-t', 'gzip-v3', 'OUT', 'HEAD'), ('unknown bundlespec',), 128),
    (('-t', 'gzip-v2;obsolescence=true', 'OUT', 'HEAD'),
     ('bundlespec parameters are not supported',), 128),
    (('--version', '3', 'OUT', 'HEAD'), ('invalid --version',), 129),
    (('-t', 'gzip-v1', '--version', '2', 'OUT', 'HEAD'),
     ('asks for a v1 bundle, but --version asks for v2',), 128),
    (('OUT', 'HEAD', '^HEAD'), ('no commits to bundle',), 128),
    (('OUT', 'no-such-revision'), ('git rev-list failed',), 128),
    (('OUT',), ('no commits given',), 129),
    (('--frobnicate', 'OUT', 'HEAD'), ('unknown option --frobnicate',), 129),
    (('-t',), ('option -t needs a value',), 129),
])
def test_bundle_refusals(args, words, status, small, tmp_path):
    """Refused, nothing written: a usage error with status 129, any
    other with 128, as git."""
    _, dest = small
    before = refs(dest)
    out = tmp_path / 'out.hg'
    result = bundle(dest, *(out if a == 'OUT' else a for a in args),
                    check=False)
    assert_failed_for_people(result)
    assert result.returncode == status, result.describe()
    assert all(w in result.err for w in words), result.describe()
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
    assert refs(dest) == before


def test_bundle_outside_a_repository(tmp_path):
    result = git('cinnabar', 'bundle', tmp_path / 'x.hg', 'HEAD',
                 cwd=tmp_path, check=False)
    assert_failed_for_people(result)
    assert 'not in a git repository' in result.err


# nginx.hg

@pytest.fixture(scope='module')
def nginx_clone(hg_repos, git_clones):
    return hg_repos.get(NGINX), git_clones.get(NGINX)


# Every spec is round-tripped on SMALL above; on nginx's whole history,
# each compression and each framing once (the others are the same code on
# less data): v1 with bzip2, v2 with zlib and with zstd.
NGINX_SPECS = ('bzip2-v1', 'gzip-v2', 'zstd-v2')


@pytest.mark.slow
@pytest.mark.parametrize('spec', NGINX_SPECS)
def test_nginx_bundle_round_trip(spec, nginx_clone, hg, tmp_path):
    repo, dest = nginx_clone
    assert_spec_round_trip(hg, dest, repo, spec, tmp_path)
