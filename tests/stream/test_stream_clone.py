"""Stream clones (`cinnabar.stream`, cinnabar/streamclone.py): a clone
made from the server's revlogs gives exactly what a changegroup clone of
the same repository gives (refs, the metadata commit, the git commit ids
of the reference implementation), over HTTP, ssh and a local path, against
the real `hg serve` under test; what the stream lacks is fetched after it,
and a server needing what we do not read gets a normal clone.
"""

import pytest

from lib import env as test_env
from lib.checks import (assert_died_as_git_dies, assert_expected_ids,
                        assert_failed_for_people,
                        assert_no_traceback)
from lib.corpus import NGINX, Corpus
from lib import git as gitlib
from lib.git import METADATA_REF, clone, git, hg_url, refs, rev_parse
from lib.sources import make_source

pytestmark = [pytest.mark.clientpython, pytest.mark.hgserver]

# A branch head no git ref can name (`colon:test`) is left out of a
# normal clone, as git-cinnabar does, but is in the server's revlogs: a
# stream clone imports it too (test_stream_clone_imports_every_head).
UNNAMABLE_HEAD = 'test-invalid-branch-name.hg'
BUNDLES = [b for b in Corpus(test_env.corpus_dir()).hgtests_bundles()
           if b != UNNAMABLE_HEAD]
STREAMED = 'Receiving a stream clone'
ALWAYS = {'GIT_CINNABAR_STREAM': 'always'}
REFSPEC = 'refs/heads/*:refs/remotes/hg/*'
NEVER = {'GIT_CINNABAR_STREAM': 'never'}


def cinnabar_refs(repo):
    return refs(repo, 'refs/cinnabar/', 'refs/remotes/')


def assert_same_clone(stream, normal):
    assert rev_parse(stream, METADATA_REF) == rev_parse(normal, METADATA_REF)
    assert cinnabar_refs(stream) == cinnabar_refs(normal)


def clone_both(url, tmp_path, stream_env=ALWAYS):
    stream = clone(url, tmp_path / 'stream', '--no-checkout',
                   extra_env=stream_env)
    assert_no_traceback(stream)
    normal = clone(url, tmp_path / 'normal', '--no-checkout',
                   extra_env=NEVER)
    assert STREAMED not in normal.err
    return stream, tmp_path / 'stream', tmp_path / 'normal'


# Each case: the transport, the format the server stores its revlogs in
# (Mercurial's default: generaldelta, sparse revlogs, zstd when hg has
# it; or older ones: zlib, deltas against the previous revision), and
# the server's configuration (without bundle2 streams, the legacy
# `stream_out`).
CASES = {
    'http': ('http', (), ''),
    'ssh': ('ssh', ('format.revlog-compression=zlib',
                    'format.generaldelta=false',
                    'format.sparse-revlog=false'), ''),
    'local': ('local', ('format.revlog-compression=zlib',), ''),
    'http-stream_out': ('http', (), '[server]\nbundle2.stream = false\n'),
    # The experimental stream v3, when the hg under test has it (7.2 does,
    # 6.3 does not: then it is a stream2).
    'http-stream3': ('http', (), '[experimental]\nstream-v3 = true\n'),
}


@pytest.fixture(scope='module')
def corpus_repos(hg, corpus, tmp_path_factory):
    """{case: one hg repository holding every small corpus bundle} as
    CASES says: the bundles' histories are unrelated, and one clone of
    them all is as telling as one clone each, and much cheaper."""
    root = tmp_path_factory.mktemp('stream-corpus')
    bundles = [corpus.bundle(name) for name in BUNDLES]
    repos = {}
    for case, (_, formats, hgrc) in CASES.items():
        config = [arg for f in formats for arg in ('--config', f)]
        repo = root / case
        hg('init', *config, repo)
        hg('-R', repo, 'unbundle', '-q', *config, *bundles, timeout=900)
        set_server_config(repo, hgrc)
        repos[case] = repo
    return repos


@pytest.fixture(scope='module')
def corpus_normal_clone(corpus_repos, tmp_path_factory):
    dest = tmp_path_factory.mktemp('stream-normal') / 'normal'
    result = clone(hg_url(str(corpus_repos['http'])), dest, '--no-checkout',
                   extra_env=NEVER)
    assert STREAMED not in result.err
    return dest


@pytest.mark.parametrize('case', CASES)
def test_stream_clone_equals_normal_clone(case, corpus_repos,
                                          corpus_normal_clone, corpus, hg,
                                          hg_serve, monkeypatch, tmp_path):
    repo = corpus_repos[case]
    src = make_source(CASES[case][0], repo, None, hg_serve, tmp_path,
                      monkeypatch.setenv)
    result = clone(src.url, tmp_path / 'stream', '--no-checkout',
                   extra_env=ALWAYS)
    assert ('(stream_out)' in result.err) == case.endswith('stream_out')
    offers_v3 = 'v3-exp' in hg('debugcapabilities', repo).out
    assert ('(stream3-exp)' in result.err) == offers_v3, result.describe()
    assert_no_traceback(result)
    assert STREAMED in result.err, result.describe()
    src.assert_used()
    assert_same_clone(tmp_path / 'stream', corpus_normal_clone)
    expected = {}
    for bundle in BUNDLES:
        expected.update(corpus.expected(bundle))
    assert_expected_ids(tmp_path / 'stream', expected, hg.nodes(repo))


def test_stream_clone_nginx_over_http(source, corpus, tmp_path):
    src = source('http', NGINX)
    result, stream, normal = clone_both(src.url, tmp_path)
    assert 'stream clone: 9828 changesets' in result.err, result.describe()
    assert_same_clone(stream, normal)
    assert_expected_ids(stream, corpus.expected(NGINX))


def test_stream_clone_imports_every_head(hg, hg_repos, corpus, tmp_path):
    repo = hg_repos.get(UNNAMABLE_HEAD)
    result, stream, normal = clone_both(hg_url(str(repo)), tmp_path)
    assert STREAMED in result.err
    assert refs(stream, 'refs/remotes/') == refs(normal, 'refs/remotes/')
    assert_expected_ids(stream, corpus.expected(UNNAMABLE_HEAD))
    colon_head = hg.nodes(repo, 'head() and branch("colon:test")')
    assert (gitlib.hg2git(stream, colon_head)
            != gitlib.hg2git(normal, colon_head))


def set_server_config(repo, text):
    with open(repo / '.hg' / 'hgrc', 'a') as hgrc:
        hgrc.write(text)


def test_auto_follows_stream_preferred(hg_repos, tmp_path):
    repo = hg_repos.copy('remote.hg', tmp_path / 'repo')
    url = hg_url(str(repo))
    plain = clone(url, tmp_path / 'plain', '--no-checkout')
    assert STREAMED not in plain.err
    set_server_config(repo, '[server]\npreferuncompressed = true\n')
    result, stream, normal = clone_both(url, tmp_path, stream_env={})
    assert STREAMED in result.err, result.describe()
    assert_same_clone(stream, normal)


def test_never_and_not_offered(hg_repos, tmp_path):
    repo = hg_repos.copy('remote.hg', tmp_path / 'repo')
    set_server_config(repo, '[server]\npreferuncompressed = true\n')
    url = hg_url(str(repo))
    result = clone(url, tmp_path / 'never', '--no-checkout', extra_env=NEVER)
    assert STREAMED not in result.err
    set_server_config(repo, 'uncompressed = false\n')
    result = clone(url, tmp_path / 'off', '--no-checkout', extra_env=ALWAYS)
    assert STREAMED not in result.err
    assert 'the server does not offer stream clones; cloning normally' in (
        result.err)
    assert_same_clone(tmp_path / 'off', tmp_path / 'never')


def test_bad_setting(hg_repos, tmp_path):
    url = hg_url(str(hg_repos.get('remote.hg')))
    result = clone(url, tmp_path / 'clone', '--no-checkout', check=False,
                   extra_env={'GIT_CINNABAR_STREAM': 'sometimes'})
    assert_failed_for_people(result, "invalid value 'sometimes' for "
                                     "cinnabar.stream")


@pytest.fixture(scope='module')
def tree_manifests(hg, tmp_path_factory):
    """A repository with tree manifests (the `treemanifest` requirement)."""
    repo = tmp_path_factory.mktemp('tree') / 'tree'
    hg('init', '--config', 'experimental.treemanifest=true', repo)
    (repo / 'd').mkdir()
    (repo / 'd' / 'f').write_text('f\n')
    hg('-R', repo, 'commit', '-A', '-q', '-m', 'tree', '-u', 'test',
       '-d', '0 0', '--config', 'experimental.treemanifest=true')
    return repo


TREE_HINT = ('hint: git-cinnabar reads flat manifests only (as '
             'git-cinnabar 0.7.5); use hg for this one')


@pytest.mark.parametrize('setting,uncompressed,said', [
    (ALWAYS, 'true', 'has tree manifests'),
    (NEVER, 'true', 'has tree manifests'),
], ids=['stream', 'normal'])
def test_tree_manifests_are_refused(setting, uncompressed, said,
                                    tree_manifests, tmp_path):
    """Tree manifests are not supported (nor by git-cinnabar 0.7.5): a
    clone, stream or not, fails up front with one line and a hint, not
    with "cloning normally" then the server's "no common changegroup
    version"."""
    (tree_manifests / '.hg' / 'hgrc').write_text(
        f'[server]\nuncompressed = {uncompressed}\n')
    dest = tmp_path / 'clone'
    result = clone(hg_url(str(tree_manifests)), dest, '--no-checkout',
                   check=False, extra_env=setting)
    assert_died_as_git_dies(result)
    line = assert_failed_for_people(result, said)
    assert line.startswith(f'fatal: the Mercurial repository at '
                           f'{tree_manifests} {said}'), line
    assert line.endswith(', which git-cinnabar does not support'), line
    assert TREE_HINT in result.err.splitlines(), result.describe()
    assert 'cloning normally' not in result.err
    assert STREAMED not in result.err
    assert not dest.exists()


def test_tree_manifests_without_streamreqs(tree_manifests, tmp_path):
    """A server not allowing stream clones does not name its requirements
    (and offers changegroup versions 01 and 02 even for tree manifests):
    its abort when asked for them is said for people."""
    (tree_manifests / '.hg' / 'hgrc').write_text(
        '[server]\nuncompressed = false\n')
    dest = tmp_path / 'clone'
    result = clone(hg_url(str(tree_manifests)), dest, '--no-checkout',
                   check=False, extra_env=ALWAYS)
    assert_died_as_git_dies(result)
    assert assert_failed_for_people(result) == (
        'fatal: the server sends no changegroup version git-cinnabar reads '
        '(01, 02): its repository has tree manifests, or is narrow or uses '
        'LFS, which git-cinnabar does not support'), result.describe()
    assert 'the server does not offer stream clones; cloning normally' in (
        result.err)
    assert not dest.exists()


def test_changes_after_the_stream_are_fetched(hg, hg_repos, tmp_path):
    """The stream is the snapshot the server had; a fetch afterwards gets
    the rest as usual, and the result is that of a normal clone."""
    repo = hg_repos.copy('remote.hg', tmp_path / 'repo')
    url = hg_url(str(repo))
    result, stream, normal = clone_both(url, tmp_path)
    assert STREAMED in result.err
    hg('-R', repo, 'bookmark', '-q', 'stream-test', '-r', 'tip')
    (tmp_path / 'wc').mkdir()
    hg('clone', '-q', repo, tmp_path / 'wc' / 'r')
    (tmp_path / 'wc' / 'r' / 'new-file').write_text('new\n')
    hg('-R', tmp_path / 'wc' / 'r', 'commit', '-A', '-q', '-m', 'new',
       '-u', 'test', '-d', '0 0')
    hg('-R', tmp_path / 'wc' / 'r', 'push', '-q', repo)
    for clone_dir in (stream, normal):
        fetched = git('fetch', '-q', 'origin', cwd=clone_dir)
        assert_no_traceback(fetched)
    assert_same_clone(stream, normal)


def test_killed_stream_import_spool_removed_by_next_run(
        hg_repos, hg_serve, tmp_path):
    """git-remote-hg SIGKILLed with its helper (the whole process group)
    while the helper imports the spooled revlogs: the spool stays in the
    git dir (nothing can remove it then), and the next run, once it
    holds the repository, removes it; its own spool goes too."""
    url = hg_url(hg_serve(hg_repos.get('hgweb+obs.hg')).url)
    repo = gitlib.init(tmp_path / 'repo')
    killed = dict(ALWAYS, CINNABAR_TEST_DIE_AT='files',
                  CINNABAR_TEST_DIE_GROUP='1')
    result = gitlib.fetch(repo, url, REFSPEC, check=False,
                          extra_env=killed)
    assert result.returncode != 0, result.describe()
    [left] = (repo / '.git').glob('hg-stream-*')
    assert (left / 'revlogs').exists()
    result = gitlib.fetch(repo, url, REFSPEC, extra_env=ALWAYS)
    assert STREAMED in result.err, result.describe()
    assert list((repo / '.git').glob('hg-stream-*')) == []
    assert refs(repo, 'refs/remotes/')
