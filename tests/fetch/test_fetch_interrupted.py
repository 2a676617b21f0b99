"""A fetch whose helper dies half-way changes nothing, and the next fetch
gives what an uninterrupted one gives.

CINNABAR_TEST_DIE_AT=<phase> makes git-cinnabar-helper kill itself with
SIGKILL when it reaches the phase (see helper/PROTOCOL.md).
"""

import os
import time

import pytest

from lib import crashsweep, hgcraft
from lib.checks import (assert_expected_ids, assert_failed_for_people,
                        assert_no_traceback, error_lines)
from lib.corpus import NGINX
from lib.git import Metadata, clone, fetch, git, hg_url, init, refs
from lib.proc import run
from lib.push import hg_commit, make_hg_repo

PHASES = ('changesets', 'manifests', 'files', 'git-trees', 'finish')
REFSPEC = 'refs/heads/*:refs/remotes/hg/*'
MEDIUM = 'hgweb+obs.hg'
TIMEOUT = 600


def fetch_into_new_repo(url, dest, **kwargs):
    repo = init(dest)
    return repo, fetch(repo, url, REFSPEC, timeout=TIMEOUT, **kwargs)


def assert_interrupted_then_resumed(name, phase, url, corpus, tmp_path):
    repo, result = fetch_into_new_repo(
        url, tmp_path / 'interrupted', check=False,
        extra_env={'CINNABAR_TEST_DIE_AT': phase})
    assert result.returncode != 0, result.describe()
    assert_no_traceback(result)
    assert refs(repo) == {}, 'the interrupted fetch left refs'

    assert_no_traceback(fetch(repo, url, REFSPEC, timeout=TIMEOUT))
    reference, _ = fetch_into_new_repo(url, tmp_path / 'uninterrupted')
    assert refs(repo, 'refs/remotes/') == refs(reference, 'refs/remotes/')
    assert refs(repo, 'refs/remotes/')
    assert Metadata(repo).summary() == Metadata(reference).summary()
    assert_expected_ids(repo, corpus.expected(name))


@pytest.mark.parametrize('phase', PHASES)
def test_interrupted_fetch_changes_nothing(phase, hg_repos, hg_serve,
                                           corpus, tmp_path):
    url = hg_url(hg_serve(hg_repos.get(MEDIUM)).url)
    assert_interrupted_then_resumed(MEDIUM, phase, url, corpus, tmp_path)


@pytest.mark.slow
def test_interrupted_nginx_fetch_changes_nothing(hg_repos, hg_serve, corpus,
                                                 tmp_path):
    url = hg_url(hg_serve(hg_repos.get(NGINX)).url)
    assert_interrupted_then_resumed(NGINX, 'files', url, corpus, tmp_path)


def assert_one_line_nothing_changed(result, repo, before, expected):
    """A failed fetch: our one error line and none of git's after it, a
    non-zero exit, every ref as it was (the fetch refs git reads an import
    from, refs/cinnabar/refs/..., included)."""
    assert_failed_for_people(result, expected)
    assert len(error_lines(result)) == 1, result.describe()
    assert refs(repo) == before


def test_interrupted_fetch_into_clone_keeps_refs(hg, hg_serve, tmp_path):
    """A fetch into a clone, its helper killed, leaves the clone's refs
    as they were and says so in one line; the next fetch gets it all."""
    hg_repo = make_hg_repo(hg, tmp_path / 'hg', {'f': 'one\n'})
    url = hg_url(hg_serve(hg_repo).url)
    repo = tmp_path / 'work'
    clone(url, repo, '--no-checkout')
    hg_commit(hg, hg_repo, {'f': 'two\n'}, 'second')
    before = refs(repo)
    assert [n for n in before if n.startswith('refs/cinnabar/refs/')]
    result = git('fetch', 'origin', cwd=repo, check=False,
                 extra_env={'CINNABAR_TEST_DIE_AT': 'files'})
    assert_one_line_nothing_changed(result, repo, before, 'killed')
    git('fetch', 'origin', cwd=repo)
    log = git('log', '--format=%s', 'origin/branches/default/tip', cwd=repo)
    assert log.out.split() == ['second', 'initial', 'import']


@pytest.mark.parametrize('flip', ['0', '5000'])
def test_pack_changed_on_disk_before_read_back(flip, hg, hg_serve, tmp_path):
    """A byte of the pack changed on disk after it was written
    (CINNABAR_TEST_FLIP_PACK_BYTE, helper/store.c), found when the pack is
    read back for its checksum: the fetch fails in one line naming the
    pack, changes nothing, and the next one gets it all."""
    hg_repo = make_hg_repo(hg, tmp_path / 'hg', {'f': 'one\n'})
    url = hg_url(hg_serve(hg_repo).url)
    repo = tmp_path / 'work'
    clone(url, repo, '--no-checkout')
    hg_commit(hg, hg_repo, {'f': 'two\n' * 1000, 'g': 'three\n'}, 'second')
    before = refs(repo)
    result = git('fetch', 'origin', cwd=repo, check=False,
                 extra_env={'CINNABAR_TEST_FLIP_PACK_BYTE': flip})
    assert_one_line_nothing_changed(
        result, repo, before, 'differs from what was written')
    assert '/objects/pack/tmp_pack_' in result.err, result.describe()
    assert not list(pack_dir(repo).glob('*.pack')), result.describe()
    git('fetch', 'origin', cwd=repo)
    log = git('log', '--format=%s', 'origin/branches/default/tip', cwd=repo)
    assert log.out.split() == ['second', 'initial', 'import']
    git('cinnabar', 'fsck', '--full', cwd=repo)


@pytest.mark.parametrize('command', ['clone', 'fetch'])
def test_server_dying_mid_transfer_says_one_line(command, hg, hg_serve,
                                                 hostile, tmp_path):
    """The server's connection cut in the middle of the bundle, in a
    clone or a fetch: one fatal line (git adds none about the fetch refs
    it reads the import from), nothing changed, no clone left."""
    hg_repo = make_hg_repo(hg, tmp_path / 'hg', {'f': 'one\n'})
    server = hostile(upstream_port=hg_serve(hg_repo).port)
    url = hg_url(server.url('a') + '/')
    repo = tmp_path / 'work'
    expected = 'failed during the transfer'
    if command == 'clone':
        server.cut['getbundle'] = 'with-length'
        result = clone(url, repo, check=False)
        assert_failed_for_people(result, expected)
        assert len(error_lines(result)) == 1, result.describe()
        assert not repo.exists()
        return
    clone(url, repo, '--no-checkout')
    hg_commit(hg, hg_repo, {'f': 'two\n'}, 'second')
    before = refs(repo)
    server.cut['getbundle'] = 'with-length'
    result = git('fetch', 'origin', cwd=repo, check=False)
    assert_one_line_nothing_changed(result, repo, before, expected)


# Checkpoints (helper/store.c): with CINNABAR_TEST_CHECKPOINT=<n> the helper
# finishes its pack every n objects; killed at `finish` (every object stored,
# the metadata not yet), it has finished some (the SIGKILL test sees them).
CHECKPOINT = {'CINNABAR_TEST_CHECKPOINT': '8'}


def pack_dir(repo):
    return repo / '.git' / 'objects' / 'pack'


def checkpoint_keeps(repo):
    return sorted(p.name for p in pack_dir(repo).glob('*.keep')
                  if p.read_text().startswith('cinnabar checkpoint '))


def assert_same_as_unbroken_fetch(repo, url, corpus, tmp_path):
    assert_no_traceback(fetch(repo, url, REFSPEC, timeout=TIMEOUT,
                              extra_env=CHECKPOINT))
    assert checkpoint_keeps(repo) == []
    reference, _ = fetch_into_new_repo(url, tmp_path / 'uninterrupted')
    assert refs(repo, 'refs/remotes/') == refs(reference, 'refs/remotes/')
    # The same metadata commit as without checkpoints: same notes, ids.
    assert (refs(repo, 'refs/cinnabar/metadata') ==
            refs(reference, 'refs/cinnabar/metadata'))
    assert_expected_ids(repo, corpus.expected(MEDIUM))


@pytest.mark.parametrize('signo', [15, 6])
def test_fetch_failed_after_checkpoint_leaves_no_pack(signo, hg_repos,
                                                      hg_serve, corpus,
                                                      tmp_path):
    """SIGTERM (git's sigchain handlers) or SIGABRT (fatal-signal.c) after
    packs were finished: they are removed with the one being written."""
    url = hg_url(hg_serve(hg_repos.get(MEDIUM)).url)
    repo, result = fetch_into_new_repo(
        url, tmp_path / 'interrupted', check=False,
        extra_env=dict(CHECKPOINT, CINNABAR_TEST_DIE_AT='finish',
                       CINNABAR_TEST_DIE_SIGNAL=str(signo)))
    assert result.returncode != 0, result.describe()
    assert refs(repo) == {}
    assert sorted(p.name for p in pack_dir(repo).iterdir()) == []
    assert_same_as_unbroken_fetch(repo, url, corpus, tmp_path)


def test_killed_fetch_packs_removed_by_next_fetch(hg_repos, hg_serve, corpus,
                                                  tmp_path):
    """SIGKILL cannot be caught: the finished packs stay, named in their
    .keep file as the dead helper's; the next fetch removes them."""
    url = hg_url(hg_serve(hg_repos.get(MEDIUM)).url)
    repo, result = fetch_into_new_repo(
        url, tmp_path / 'interrupted', check=False,
        extra_env=dict(CHECKPOINT, CINNABAR_TEST_DIE_AT='finish'))
    assert result.returncode != 0, result.describe()
    assert refs(repo) == {}
    left = checkpoint_keeps(repo)
    assert len(left) >= 2, 'no checkpoint before the files: test is moot'
    # The older packs' filters went to a file (helper/filter-rows.c),
    # unlinked as soon as it was made: nothing of it stays.
    assert not list(pack_dir(repo).glob('tmp_filters_*'))
    stems = [name[:-len('.keep')] for name in left]
    assert_same_as_unbroken_fetch(repo, url, corpus, tmp_path)
    names = {p.name for p in pack_dir(repo).iterdir()}
    assert not [n for n in names if n.rsplit('.', 1)[0] in stems]


@pytest.mark.skipif(not crashsweep.strace_works(),
                    reason='strace is missing or cannot trace here')
def test_killed_before_metadata_update_packs_unkept_by_next_fetch(
        hg_repos, hg_serve, corpus, tmp_path):
    """Killed (strace's fault injection) as it moves refs/cinnabar/metadata
    (the rename of its lock file), the packs made final: their .keep files
    name the dead helper, and the next fetch removes them (kept, they
    would stay for ever, and git's gc would never remove what no ref
    reaches)."""
    url = hg_url(hg_serve(hg_repos.get(MEDIUM)).url)
    repo = init(tmp_path / 'killed')
    lock = repo / '.git' / 'refs' / 'cinnabar' / 'metadata.lock'
    renames = 'rename,renameat,renameat2'
    result = run(['strace', '-f', '-qq', '-o', os.devnull, '-P', lock,
                  '-e', f'trace={renames}', '-e',
                  f'inject={renames}:signal=KILL',
                  'git', 'fetch', url, REFSPEC], cwd=repo, check=False,
                 timeout=TIMEOUT)
    assert result.returncode != 0, result.describe()
    assert refs(repo) == {}
    assert list(pack_dir(repo).glob('*.keep')), 'no pack kept: test is moot'
    assert_no_traceback(fetch(repo, url, REFSPEC, timeout=TIMEOUT))
    assert not list(pack_dir(repo).glob('*.keep'))
    assert_expected_ids(repo, corpus.expected(MEDIUM))


def crafted_bundle(path, damaged):
    """Six changesets of three files; with `damaged`, the last file
    revision's text no longer matches its id (found at import, near the
    end of the files)."""
    repo = hgcraft.Repo()
    cs = None
    for i in range(6):
        cs = repo.commit({f'f{n}'.encode(): b'%d %d\n' % (n, i)
                          for n in range(3)},
                         parents=[cs] if cs else [])
    if damaged:
        last = list(repo.files.values())[-1][-1]
        last.text += b'damaged'
    hgcraft.write(path, repo.bundle_v2())
    return path


@pytest.mark.parametrize('damaged', [True, False])
def test_import_failing_after_checkpoints_leaves_no_pack(damaged, tmp_path):
    """A helper error (a file id that does not match) after packs were
    finished removes them too: with a checkpoint after every object, the
    blobs of the other files are in finished packs by then. Killed at
    `finish` instead, the same import leaves such packs (not moot)."""
    bundle = crafted_bundle(tmp_path / 'bundle.hg', damaged)
    repo = init(tmp_path / 'repo')
    env = {'CINNABAR_TEST_CHECKPOINT': '1'}
    if not damaged:
        env['CINNABAR_TEST_DIE_AT'] = 'finish'
    result = git('cinnabar', 'unbundle', str(bundle), cwd=repo, check=False,
                 extra_env=env)
    assert result.returncode != 0, result.describe()
    assert refs(repo) == {}
    if damaged:
        assert 'does not match its contents' in result.err
        assert sorted(p.name for p in pack_dir(repo).iterdir()) == []
    else:
        assert len(checkpoint_keeps(repo)) > 10


@pytest.mark.parametrize('signo', [2, 15])
def test_group_signal_during_fetch_leaves_no_tmp_pack(signo, hg_repos,
                                                      hg_serve, corpus,
                                                      tmp_path):
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it
    (or SIGTERM, as `kill -TERM -<group>`), while the files are imported:
    git's own fast-import (which `git fetch` started for our `import` and
    which holds an empty pack from its start) dies with the others; its
    tmp_pack is removed too (cinnabar.tmpfiles)."""
    url = hg_url(hg_serve(hg_repos.get(MEDIUM)).url)
    repo, result = fetch_into_new_repo(
        url, tmp_path / 'interrupted', check=False,
        extra_env={'CINNABAR_TEST_DIE_AT': 'files',
                   'CINNABAR_TEST_DIE_SIGNAL': str(signo),
                   'CINNABAR_TEST_DIE_GROUP': '1'})
    assert result.returncode != 0, result.describe()
    assert_no_traceback(result)
    assert refs(repo) == {}
    assert sorted(p.name for p in pack_dir(repo).iterdir()) == [], \
        result.describe()
    assert_same_as_unbroken_fetch(repo, url, corpus, tmp_path)


def test_stale_empty_tmp_pack_removed_by_next_fetch(hg_repos, tmp_path):
    """An empty tmp_pack an hour old (what a fetch killed with its whole
    group, SIGKILL, leaves) is removed by the next fetch; a recent one,
    which a concurrent git may be about to write, and one with data are
    kept."""
    repo = init(tmp_path / 'repo')
    pack = pack_dir(repo)
    pack.mkdir(parents=True, exist_ok=True)
    for name in ('tmp_pack_old', 'tmp_pack_new', 'tmp_pack_data'):
        (pack / name).write_bytes(b'PACK' if name.endswith('data') else b'')
    hour_ago = time.time() - 3700
    for name in ('tmp_pack_old', 'tmp_pack_data'):
        os.utime(pack / name, (hour_ago, hour_ago))
    fetch(repo, hg_url(str(hg_repos.get('remote.hg'))), REFSPEC)
    names = sorted(p.name for p in pack.iterdir())
    assert [n for n in names if n.startswith('tmp_pack_')] == [
        'tmp_pack_data', 'tmp_pack_new']
