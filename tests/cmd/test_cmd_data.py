"""`git cinnabar data` prints, byte for byte, what `hg debugdata` prints.

For small corpus bundles (copy metadata, copies with p1=null, symlinks,
named branches, latin-1 messages), every changeset (`-c`), every manifest
(`-m`) and every file revision (the file ids of the manifests, with their
paths for `hg debugdata <path> <id>`) of a git clone of the repository
gives exactly the bytes hg gives for the same id.  For nginx.hg (slow): 15
changesets spread over history, their manifests, a sample of the file
revisions of those manifests and the file revisions that record a copy in
10 changesets spread over those that record copies (their text starts
with the "\\x01\\n" metadata block).

Ids: a unique abbreviation gives the same bytes; an ambiguous one, an
unknown one, one of another kind, or a malformed one fails with one
`fatal:` line and status 128.
"""

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.corpus import NGINX
from lib.git import clone, git, hg_url
from lib.hgcmdserver import HgCommandServer

BUNDLES = ('issue6528.hg-v2', 'renames.hg', 'test-merge-symlinks.hg',
           'legacy-encoding.hg', 'issue4041.hg')


def changesets(hg, repo, revset='all()'):
    """[(changeset id, manifest id)] of `revset`."""
    out = hg('-R', repo, 'log', '-r', revset, '-T',
             '{node} {manifest % "{node}"}\n').out
    return [tuple(line.split()) for line in out.splitlines()]


# One hg command server per repository (lib.hgcmdserver): hundreds of `hg
# debugdata` cost milliseconds each instead of an hg start each.
_SERVERS = {}


@pytest.fixture(scope='module', autouse=True)
def _stop_command_servers():
    yield
    for server in _SERVERS.values():
        server.stop()
    _SERVERS.clear()


def hg_data(hg, repo, *args):
    """What `hg debugdata <args>` prints (run in the repository, where
    file paths are relative to)."""
    server = _SERVERS.get(repo)
    if server is None:
        server = _SERVERS[repo] = HgCommandServer(hg.exe, repo)
    return server('debugdata', *args).stdout


def manifest_files(text):
    """{(path, file id)} of a raw manifest."""
    files = set()
    for line in text.split(b'\n'):
        if line:
            path, _, rest = line.partition(b'\0')
            files.add((path.decode('utf-8', 'surrogateescape'),
                       rest[:40].decode('ascii')))
    return files


def cinnabar_data(repo, *args):
    result = git('cinnabar', 'data', *args, cwd=repo)
    assert_no_traceback(result)
    return result.stdout


def assert_same_data(hg, hg_repo, git_repo, pairs, files):
    """`data` equals `hg debugdata` for the changesets and manifests of
    `pairs` and for the file revisions `files` ({(path, id)})."""
    for node, manifest in pairs:
        assert cinnabar_data(git_repo, '-c', node) == hg_data(
            hg, hg_repo, '-c', node), f'changeset {node}'
        assert cinnabar_data(git_repo, '-m', manifest) == hg_data(
            hg, hg_repo, '-m', manifest), f'manifest {manifest}'
    for path, node in sorted(files):
        assert cinnabar_data(git_repo, node) == hg_data(
            hg, hg_repo, path, node), f'file {path} revision {node}'


@pytest.fixture(scope='module')
def small_clone(hg_repos, tmp_path_factory):
    """small_clone(bundle) -> (hg repository, git clone), made once."""
    clones = {}

    def make(name):
        if name not in clones:
            repo = hg_repos.get(name)
            dest = tmp_path_factory.mktemp('data') / 'clone'
            assert_no_traceback(clone(hg_url(repo), dest, '--no-checkout'))
            clones[name] = repo, dest
        return clones[name]
    return make


@pytest.mark.parametrize('name', BUNDLES)
def test_data_equals_hg_debugdata(name, small_clone, hg):
    repo, dest = small_clone(name)
    pairs = changesets(hg, repo)
    files = set()
    for _, manifest in pairs:
        files |= manifest_files(hg_data(hg, repo, '-m', manifest))
    assert pairs and files
    assert_same_data(hg, repo, dest, pairs, files)


def test_data_shows_copy_metadata(small_clone, hg):
    repo, dest = small_clone('issue6528.hg-v2')
    node, manifest = changesets(hg, repo, 'tip')[0]
    files = dict(manifest_files(hg_data(hg, repo, '-m', manifest)))
    text = cinnabar_data(dest, files['D.txt'])
    assert text.startswith(b'\x01\ncopy: C.txt\ncopyrev: ')
    assert text == hg_data(hg, repo, 'D.txt', files['D.txt'])


def test_data_abbreviated_ids(small_clone, hg):
    repo, dest = small_clone('issue4041.hg')
    for node, manifest in changesets(hg, repo):
        assert cinnabar_data(dest, '-c', node[:6]) == hg_data(
            hg, repo, '-c', node)
        assert cinnabar_data(dest, '-m', manifest[:8].upper()) == hg_data(
            hg, repo, '-m', manifest)


def test_data_null_and_empty_file_ids(small_clone):
    _, dest = small_clone('renames.hg')
    assert cinnabar_data(dest, '-c', '0' * 40) == b''
    assert cinnabar_data(dest, 'b80de5d138758541c5f05265ad144ab9fa86d1db') \
        == b''


@pytest.mark.parametrize('args, words, status', [
    (('-c', 'deadbeefdeadbeef'), ('unknown changeset',), 128),
    (('-c', '12'), ('invalid Mercurial id',), 128),
    (('-m', 'xyz1234'), ('invalid Mercurial id',), 128),
    (('-c',), ('unexpected arguments',), 129),
    ((), ('no revision given',), 129),
    (('-x', 'abcd'), ('unexpected arguments',), 129),
])
def test_data_bad_requests(args, words, status, small_clone):
    _, dest = small_clone('renames.hg')
    result = git('cinnabar', 'data', *args, cwd=dest, check=False)
    assert_failed_for_people(result)
    assert result.returncode == status, result.describe()
    assert result.stdout == b''
    assert all(w in result.err for w in words), result.describe()


def test_data_id_of_another_kind(small_clone, hg):
    repo, dest = small_clone('renames.hg')
    node, manifest = changesets(hg, repo, 'tip')[0]
    for args, kind in ((('-m', node), 'changeset'),
                       ((manifest,), 'manifest'),
                       (('-c', manifest), 'manifest')):
        result = git('cinnabar', 'data', *args, cwd=dest, check=False)
        assert_failed_for_people(result)
        assert f'but a {kind}' in result.err, result.describe()
        assert 'hint: to see it' in result.err


def test_data_outside_a_repository(tmp_path):
    result = git('cinnabar', 'data', '-c', 'abcd', cwd=tmp_path,
                 check=False)
    assert_failed_for_people(result)
    assert 'not in a git repository' in result.err


# nginx.hg

NGINX_CHANGESETS = 15
FILES_PER_MANIFEST = 2
COPY_REVISIONS = 10


@pytest.fixture(scope='module')
def nginx_clone(hg_repos, git_clones):
    return hg_repos.get(NGINX), git_clones.get(NGINX)


def copied_file_revisions(hg, repo, sample):
    """{(path, file id)} of the file revisions recording a copy in
    `sample` changesets spread over those that record copies."""
    # Inner templates take no escapes: `|` ends fields (no nginx path
    # has one).
    out = hg('-R', repo, 'log', '-r', 'all()', '-T',
             '{file_copies % "{rev}|{name}|"}').out
    fields = out.split('|')[:-1]
    wanted = {}
    for rev, name in zip(fields[::2], fields[1::2]):
        wanted.setdefault(rev, set()).add(name)
    revs = sorted(wanted, key=int)
    found = set()
    for rev in revs[::max(1, len(revs) // sample)]:
        names = wanted[rev]
        out = hg('-R', repo, 'manifest', '--debug', '-r', rev).out
        for line in out.splitlines():
            # `<file id> <mode> <flag or space> <path>`
            node, path = line[:40], line[47:]
            if path in names:
                found.add((path, node))
    return found


@pytest.mark.slow
def test_nginx_data_equals_hg_debugdata(nginx_clone, hg):
    repo, dest = nginx_clone
    count = len(hg.nodes(repo))
    step = count // NGINX_CHANGESETS
    revs = '+'.join(str(r) for r in range(0, count, step))
    pairs = changesets(hg, repo, revs)
    assert len(pairs) >= NGINX_CHANGESETS
    files = set()
    for _, manifest in pairs:
        listed = sorted(manifest_files(hg_data(hg, repo, '-m', manifest)))
        files.update(listed[::max(1, len(listed) // FILES_PER_MANIFEST)])
    copied = copied_file_revisions(hg, repo, COPY_REVISIONS)
    assert len(copied) >= COPY_REVISIONS
    for path, node in copied:
        assert hg_data(hg, repo, path, node).startswith(b'\x01\ncopy: ')
    assert_same_data(hg, repo, dest, pairs, files | copied)


@pytest.mark.slow
def test_nginx_ambiguous_abbreviation(nginx_clone, hg):
    repo, dest = nginx_clone
    seen = {}
    for node in hg.nodes(repo):
        seen.setdefault(node[:4], []).append(node)
    prefix, nodes = next((p, n) for p, n in sorted(seen.items())
                         if len(n) > 1)
    result = git('cinnabar', 'data', '-c', prefix, cwd=dest, check=False)
    assert_failed_for_people(result)
    assert f'ambiguous: it starts the ids of {len(nodes)} changesets' \
        in result.err, result.describe()
    assert cinnabar_data(dest, '-c', nodes[0][:12]) == hg_data(
        hg, repo, '-c', nodes[0])
