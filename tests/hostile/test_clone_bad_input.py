"""Broken input makes a clone or fetch fail for people: a non-zero exit, an
`error:`/`fatal:` line, no traceback, and no refs or metadata left behind.

Bundle files are damaged copies of corpus bundles, made under the test's
tmp dir: truncated, with a flipped byte in compressed data, and with a
changed byte in uncompressed changeset, manifest or file text (which only
the check of hg ids against contents can catch).  Bundles written by the
test (lib/hgcraft.py) carry file revisions as deltas against an earlier
revision whose result is not the text of their id.  Transfers are cut by an
HTTP proxy in front of `hg serve`.
"""

import pytest

from lib import hgcraft
from lib.checks import assert_expected_ids, assert_failed_for_people
from lib.corpus import NGINX
from lib.git import clone, fetch, git, hg_url, init, lasting_refs, refs
from lib.hg import closed_port

REFSPEC = 'refs/heads/*:refs/remotes/hg/*'
MEDIUM = 'hgweb+obs.hg'


def truncate(data):
    return data[:len(data) // 2]


def flip_middle(data):
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xff]) + data[middle + 1:]


def replace_once(marker, offset, new):
    """A damage: the byte at `offset` in `marker`, found once, is `new`."""
    def damage(data):
        assert data.count(marker) == 1, f'{marker!r} is not unique'
        at = data.index(marker) + offset
        return data[:at] + new + data[at + 1:]
    return damage


# name: (corpus bundle, damage, what the error line says)
DAMAGES = {
    'truncated-bzip2-v1': (MEDIUM, truncate,
                           'the bzip2-compressed data ends early'),
    'truncated-bzip2-v2': ('issue6528.hg-v2', truncate,
                           'the bzip2-compressed data ends early'),
    'truncated-none-v2': ('nullrev-diff.from-tar.hg', truncate,
                          'unexpected end of data in a bundle2 part'),
    'truncated-zstd-v2': (NGINX, truncate,
                          'the zstd-compressed data ends early'),
    'flipped-bzip2-v1': (MEDIUM, flip_middle,
                         'corrupt bzip2-compressed data'),
    'flipped-zstd-v2': (NGINX, flip_middle, 'corrupt zstd-compressed data'),
    'changed-changeset-text': (
        'nullrev-diff.from-tar.hg', replace_once(b'root-B', 5, b'C'),
        'changeset ebf347563c69005436e212eb3253f0e7a6534bee does not match '
        'its contents'),
    # The damage changes a file id in the manifest: the import misses that
    # file revision before the manifest's id check reports.
    'changed-manifest-text': (
        'nullrev-diff.from-tar.hg', replace_once(b'a\x00215d5d', 2, b'3'),
        ('missing file revision 315d5d', 'does not match its contents')),
    'changed-file-text': (
        'inlined-changelog.from-tar.hg',
        replace_once(b'\x00\x00\x00\x02a\n', 4, b'b'),
        'file revision b789fdd96dc2f3bd229c1dd8eedf0fc60e2b68e3 does not '
        'match its contents'),
}
# What a cut transfer says, by the proxy's kind of cut (see lib.proxy).
CUTS = {
    'with-length': 'the connection to the server failed during the transfer',
    'without-length': 'ends early',
}


def assert_fails_and_leaves_nothing(url, tmp_path, expected=None):
    result = clone(url, tmp_path / 'clone', '--no-checkout', check=False)
    assert_failed_for_people(result, expected)
    repo = init(tmp_path / 'fetched')
    result = fetch(repo, url, REFSPEC, check=False)
    assert_failed_for_people(result, expected)
    assert refs(repo) == {}, 'the failed fetch left refs'


@pytest.mark.parametrize('damage', sorted(DAMAGES))
def test_damaged_bundle_fails_cleanly(damage, corpus, tmp_path):
    name, spoil, expected = DAMAGES[damage]
    data = corpus.bundle(name).read_bytes()
    bad = tmp_path / f'{damage}.hg'
    bad.write_bytes(spoil(data))
    assert bad.read_bytes() != data
    assert_fails_and_leaves_nothing(hg_url(str(bad)), tmp_path, expected)


@pytest.mark.parametrize('damage', ['truncated-bzip2-v1',
                                    'changed-changeset-text'])
def test_damaged_bundle_over_http_leaves_no_temporary_file(
        damage, corpus, bundle_server, tmp_path):
    """`git clone hg::http://host/bad.hg`: the bundle is saved to a
    temporary file to be read; refused (when its heads are read, or while
    it is imported), it leaves nothing in TMPDIR."""
    name, spoil, expected = DAMAGES[damage]
    www = tmp_path / 'www'
    www.mkdir()
    (www / 'bad.hg').write_bytes(spoil(corpus.bundle(name).read_bytes()))
    server = bundle_server(www)
    temporary = tmp_path / 'tmp'
    temporary.mkdir()
    result = clone(hg_url(server.url('bad.hg')), tmp_path / 'clone',
                   '--no-checkout', check=False,
                   extra_env={'TMPDIR': str(temporary)})
    assert_failed_for_people(result, expected)
    assert list(temporary.iterdir()) == []


def test_killed_bundle_clone_file_removed_by_next_run(corpus, bundle_server,
                                                      tmp_path):
    """The whole process group SIGKILLed while the helper imports a bundle
    served over HTTP: its temporary file stays in TMPDIR, named after the
    dead process; the next clone from a bundle URL removes it, and its
    own file too."""
    www = tmp_path / 'www'
    www.mkdir()
    (www / 'good.hg').write_bytes(corpus.bundle(MEDIUM).read_bytes())
    url = hg_url(bundle_server(www).url('good.hg'))
    temporary = tmp_path / 'tmp'
    temporary.mkdir()
    env = {'TMPDIR': str(temporary)}
    result = clone(url, tmp_path / 'killed', '--no-checkout', check=False,
                   extra_env=dict(env, CINNABAR_TEST_DIE_AT='files',
                                  CINNABAR_TEST_DIE_GROUP='1'))
    assert result.returncode != 0, result.describe()
    [left] = temporary.iterdir()
    assert left.name.startswith('hg-bundle-')
    clone(url, tmp_path / 'clone', '--no-checkout', extra_env=env)
    assert list(temporary.iterdir()) == []


def test_file_that_is_not_a_bundle_fails_cleanly(tmp_path):
    bad = tmp_path / 'not-a-bundle.hg'
    bad.write_bytes(b'this is not a Mercurial bundle\n')
    assert_fails_and_leaves_nothing(hg_url(str(bad)), tmp_path,
                                    "not a Mercurial bundle (unknown header")


def test_unreachable_server_fails_cleanly(tmp_path):
    with closed_port() as port:
        url = hg_url(f'http://127.0.0.1:{port}/')
        assert_fails_and_leaves_nothing(
            url, tmp_path, f'cannot connect to 127.0.0.1 port {port} '
            '(connection refused)')


@pytest.mark.parametrize('cut', ['with-length', 'without-length'])
def test_transfer_cut_half_way_fails_cleanly(cut, hg_repos, hg_serve,
                                             hg_proxy, tmp_path):
    proxy = hg_proxy(hg_serve(hg_repos.get(MEDIUM)), cut=cut)
    assert_fails_and_leaves_nothing(hg_url(proxy.url), tmp_path, CUTS[cut])
    assert proxy.calls_by_command['getbundle'] >= 1, \
        'the transfer was not cut: getbundle was never asked for'


def test_same_proxy_without_cut_clones(hg_repos, hg_serve, hg_proxy, corpus,
                                       tmp_path):
    """The control of the test above: the proxy itself works."""
    proxy = hg_proxy(hg_serve(hg_repos.get(MEDIUM)))
    clone(hg_url(proxy.url), tmp_path / 'clone', '--no-checkout')
    assert_expected_ids(tmp_path / 'clone', corpus.expected(MEDIUM))


@pytest.mark.slow
def test_nginx_transfer_cut_half_way_fails_cleanly(hg_repos, hg_serve,
                                                   hg_proxy, tmp_path):
    proxy = hg_proxy(hg_serve(hg_repos.get(NGINX)), cut='with-length')
    assert_fails_and_leaves_nothing(hg_url(proxy.url), tmp_path,
                                    CUTS['with-length'])
    assert proxy.calls_by_command['getbundle'] >= 1


def file_deltas(spoil=None):
    """Three changesets editing one file, in a bundle naming each delta's
    base (version 02): file revisions 2 and 3 come as deltas against
    revision 1 (for revision 3, not the previous one).  With `spoil` (1
    or 2, the index of a file revision), that revision's delta gives a
    text other than the one its id is the hash of."""
    repo = hgcraft.Repo()
    texts = [b''.join(b'line %d of %d\n' % (i, n) if i == n else
                      b'line %d\n' % i for i in range(12))
             for n in (3, 6, 9)]
    parent = ()
    for text in texts:
        parent = (repo.commit({b'f': text}, parents=parent),)
    revs = repo.files[b'f']
    for index in (1, 2):
        wanted = revs[index].text + (b'!\n' if index == spoil else b'')
        revs[index].delta_base = revs[0].node
        revs[index].delta = hgcraft.small_delta(revs[0].text, wanted)
    return repo


def part(repo, start, stop=None):
    """A Repo holding the revisions of changesets `start` to `stop` of
    `repo` (one file revision each), for a bundle of part of a history."""
    cut = hgcraft.Repo()
    cut.changesets = repo.changesets[start:stop]
    cut.manifests = repo.manifests[start:stop]
    cut.files = {path: revs[start:stop] for path, revs in repo.files.items()}
    return cut


def file_at(dest, ref):
    return git('cat-file', 'blob', f'{ref}:f', cwd=dest).stdout


def hg_accepts(hg, repo, bundle):
    """Whether `hg unbundle` takes `bundle` into `repo` and `hg verify`
    then finds nothing wrong: the oracle (hg checks file ids when it reads
    the texts, not when it stores the deltas)."""
    return all(hg('-R', repo, *command, check=False).returncode == 0
               for command in (('unbundle', '-q', bundle), ('verify', '-q')))


@pytest.mark.parametrize('spoil', [None, 1, 2])
def test_clone_file_delta_with_wrong_text_refused(spoil, hg, tmp_path):
    """A file revision coming as a delta (against the previous revision of
    its group, or an older one) that gives a text other than the one of
    its id is refused, as `hg unbundle` refuses it; with the right
    deltas, the same bundle clones."""
    repo = file_deltas(spoil)
    bundle = hgcraft.write(tmp_path / 'deltas.hg', repo.bundle_v2())
    hg('init', tmp_path / 'hg')
    assert hg_accepts(hg, tmp_path / 'hg', bundle) == (spoil is None)
    dest = tmp_path / 'clone'
    result = clone(hg_url(str(bundle)), dest, '--no-checkout', check=False)
    if spoil is None:
        assert result.returncode == 0, result.describe()
        assert file_at(dest, 'HEAD') == repo.files[b'f'][2].text
        return
    node = repo.files[b'f'][spoil].node.hex()
    assert_failed_for_people(
        result, f'file revision {node} does not match its contents '
        '(corrupt data)')
    assert not dest.exists() or refs(dest) == {}


@pytest.mark.parametrize('spoiled', [False, True])
def test_fetch_file_delta_against_stored_revision_refused(spoiled, hg,
                                                          tmp_path):
    """The same against a file revision the repository already has (the
    base comes from the git store, not from the bundle): a wrong text is
    refused and the refs and metadata are left as they were (but the
    scratch refs of imports, emptied by every fetch)."""
    repo = file_deltas(1 if spoiled else None)
    first = hgcraft.write(tmp_path / 'first.hg', part(repo, 0, 1).bundle_v2())
    rest = hgcraft.write(tmp_path / 'rest.hg', part(repo, 1).bundle_v2())
    hg_repo = hg.repo_from_bundle(first, tmp_path / 'hg')
    assert hg_accepts(hg, hg_repo, rest) == (not spoiled)
    dest = tmp_path / 'clone'
    clone(hg_url(str(first)), dest, '--no-checkout')
    before = lasting_refs(dest)
    result = fetch(dest, hg_url(str(rest)), REFSPEC, check=False)
    if not spoiled:
        assert result.returncode == 0, result.describe()
        assert file_at(dest, 'FETCH_HEAD') == repo.files[b'f'][2].text
        return
    node = repo.files[b'f'][1].node.hex()
    assert_failed_for_people(
        result, f'file revision {node} does not match its contents '
        '(corrupt data)')
    assert lasting_refs(dest) == before
