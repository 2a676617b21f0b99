"""File revisions too large to hold are imported as streams (helper/file.c,
"Large file revisions"): their text is made from the delta base's blob
read back from the pack and the delta's hunks, hashed and stored as it is
read, the data of a whole text read from the changegroup as it comes.

CINNABAR_TEST_BIG_TEXT lowers the size from which that happens, so that a
small history goes through it: random data, small changes in the middle
(stored as git deltas against the previous blob, each a delta of a
delta kept whole in a temporary file for the next), an hg copy of it
edited (metadata), a text starting with "\\1\\n" (an empty metadata
block), the file shrunk to a few bytes and grown again, a revision whose
content is that of an earlier one (a blob stored already, cut off the
pack again), and two heads editing it, merged.  CINNABAR_TEST_CHECKPOINT
makes the bases come from finished packs too.

Checked against Mercurial: every changeset's tree is `hg archive`'s, and
the history pushed back to an empty repository has every changeset id
the original has; `git cinnabar fsck --full` and `git fsck` find nothing
wrong.  A wrong id or a changegroup cut inside a large text is refused
with nothing left behind.  With the default size, a clone of a 64 MB
file keeps the largest process well under the file's size.
"""

import os
import random
import re

import pytest

from lib.bundlefmt import node_id
from lib.checks import assert_failed_for_people, file_digests
from lib.crafted import History
from lib.git import clone, git, hg2git, hg_url, refs
from lib.proc import run_measured
from lib.proxy import HgProxy
from lib.push import assert_hg_verify, assert_pushed, push, writable_remote
from lib.tree import differences, git_tree, hg_tree

SMALL = {'CINNABAR_TEST_BIG_TEXT': str(64 << 10)}
SETTINGS = {
    'in memory': {},
    'streamed': SMALL,
    'streamed, checkpoints': {**SMALL, 'CINNABAR_TEST_CHECKPOINT': '3'},
}
LOG = '{node} {p1.node} {p2.node} {manifest.node}\n'


def commit(hg, repo, files, message, number):
    for path, data in files.items():
        (repo / path).write_bytes(data)
    hg('-R', repo, 'commit', '-q', '-A', '-m', message, '-u',
       'Hg Author <hg@example.com>', '-d', f'{1600000000 + number} 0',
       cwd=repo)


def make_history(hg, repo):
    rand = random.Random(7)

    def data(n):
        return bytes(rand.getrandbits(8) for _ in range(n))

    first = data(300 << 10)
    edited = first[:150000] + b'x' * 1000 + first[151000:] + b'tail'
    again = edited[:50000] + b'y' * 500 + edited[50000:]
    thrice = again[:250000] + b'z' * 10 + again[250010:]
    hg('init', repo)
    steps = [
        {'big.bin': first, 'small.txt': b'one\n'},
        {'big.bin': edited},
        {'big.bin': again},
        {'big.bin': thrice},
        {'framed.bin': b'\1\nnot metadata\n\1\n' + data(200 << 10)},
        {'big.bin': b'tiny\n'},
        {'big.bin': data(100 << 10) + edited},
        {'big.bin': first},
    ]
    for number, files in enumerate(steps):
        commit(hg, repo, files, f'step {number}', number)
    hg('-R', repo, 'copy', 'big.bin', 'copied.bin', cwd=repo)
    commit(hg, repo, {'copied.bin': edited + b'copy\n'}, 'copy', 10)
    fork = hg('-R', repo, 'log', '-r', '.', '-T', '{node}').out
    commit(hg, repo, {'big.bin': first + b'one side\n'}, 'one side', 11)
    hg('-R', repo, 'update', '-q', fork, cwd=repo)
    commit(hg, repo, {'big.bin': b'other side\n' + first}, 'other side', 12)
    hg('-R', repo, 'merge', '-q', '--tool', ':local', cwd=repo)
    commit(hg, repo, {}, 'merge', 13)
    return repo


@pytest.fixture(scope='module')
def original(hg, tmp_path_factory):
    return make_history(hg, tmp_path_factory.mktemp('large') / 'hg')


def hg_log(hg, repo):
    return sorted(hg('-R', repo, 'log', '-T', LOG).out.splitlines())


def assert_trees_and_fsck(hg, original, repo, tmp_path):
    """Every changeset's tree in `repo` is `hg archive`'s; `git cinnabar
    fsck --full` and `git fsck` find nothing wrong."""
    nodes = hg('-R', original, 'log', '-T', '{node}\n').out.split()
    commits = hg2git(repo, nodes)
    for node in nodes:
        diff = differences(git_tree(repo, commits[node]),
                           hg_tree(hg, original, node, tmp_path))
        assert not diff, f'changeset {node}:\n{diff}'
    git('cinnabar', 'fsck', '--full', cwd=repo)
    git('fsck', '--strict', cwd=repo)


@pytest.mark.parametrize('setting', SETTINGS)
def test_large_files_clone_as_hg_has_them(setting, original, hg, hg_serve,
                                          tmp_path, monkeypatch):
    for name, value in SETTINGS[setting].items():
        monkeypatch.setenv(name, value)
    server = hg_serve(original)
    repo = tmp_path / 'clone'
    clone(hg_url(server.url), repo, '--no-checkout')
    assert_trees_and_fsck(hg, original, repo, tmp_path)

    target = tmp_path / 'empty'
    hg('init', target)
    dest = writable_remote('http', target, hg_serve, tmp_path,
                           monkeypatch.setenv)
    origin = 'refs/remotes/origin/'
    specs = [f'{n}:refs/heads/{n[len(origin):]}'
             for n in refs(repo, origin + 'branches')]
    assert_pushed(push(repo, dest.url, *specs))
    assert hg_log(hg, target) == hg_log(hg, original)
    assert_hg_verify(hg, target)


def test_manifest_trees_stored_between_large_files(original, hg, hg_serve,
                                                   tmp_path):
    """Over a connection slow to bring the bytes (a proxy sending the
    changegroup 2 kB at a time), the manifests' trees are stored while
    the helper waits, but never while a large file revision is being
    read and stored: its blob's bytes would be mixed with theirs in the
    pack (the helper finds an object of its pack that does not inflate).
    CINNABAR_TEST_TREES_LATE leaves them all to the files' part. `git
    fsck` finds the pack sound, and the trees are Mercurial's."""
    server = hg_serve(original)
    repo = tmp_path / 'clone'
    with HgProxy(server.port, trickle=(2048, 0.001)) as proxy:
        result = clone(hg_url(proxy.url), repo, '--no-checkout',
                       extra_env={**SMALL, 'CINNABAR_TEST_TREES_LATE': '1',
                                  'GIT_CINNABAR_TRACE': '1'})
    idle = re.findall(r'^cinnabar-helper: manifests: \d+ of 12 trees '
                      r'stored while the server was slow', result.err, re.M)
    assert len(idle) == 1, result.describe()
    assert_trees_and_fsck(hg, original, repo, tmp_path)


def test_large_files_streamed_or_not_give_the_same_commits(original, hg,
                                                           tmp_path):
    def commits(name, env):
        repo = tmp_path / name
        clone(hg_url(original), repo, '--no-checkout', extra_env=env)
        return git('for-each-ref', '--format=%(objectname) %(refname)',
                   'refs/remotes', cwd=repo).out
    assert commits('streamed', SMALL) == commits('in-memory', {})


def large_history(wrong=None):
    history = History()
    history.add({b'big': b'y' * (200 << 10), b'small': b'one\n'},
                wrong=wrong)
    return history


@pytest.mark.parametrize('where', ['clone', 'fetch'])
def test_large_file_with_a_wrong_id_is_refused(where, tmp_path,
                                               monkeypatch):
    monkeypatch.setenv('CINNABAR_TEST_BIG_TEXT', str(64 << 10))
    bad = tmp_path / 'bad.hg'
    bad.write_bytes(large_history('file').bundle())
    first = node_id(b'y' * (200 << 10) + b'!').hex()
    message = f'file revision {first} does not match its contents'
    repo = tmp_path / 'clone'
    if where == 'clone':
        result = clone(hg_url(bad), repo, '--no-checkout', check=False)
        assert_failed_for_people(result, message)
        assert not repo.exists() or refs(repo) == {}
        return
    good = tmp_path / 'good.hg'
    history = History()
    history.add({b'other': b'z' * (100 << 10)})
    good.write_bytes(history.bundle())
    clone(hg_url(good), repo, '--no-checkout')
    before = refs(repo), file_digests(repo / '.git' / 'objects')
    result = git('fetch', '-q', hg_url(bad), cwd=repo, check=False)
    assert_failed_for_people(result, message)
    assert (refs(repo), file_digests(repo / '.git' / 'objects')) == before


def test_changegroup_cut_inside_a_large_text_is_refused(tmp_path,
                                                        monkeypatch):
    monkeypatch.setenv('CINNABAR_TEST_BIG_TEXT', str(64 << 10))
    data = large_history().bundle()
    at = data.index(b'y' * 1000) + (100 << 10)
    cut = tmp_path / 'cut.hg'
    cut.write_bytes(data[:at])
    result = clone(hg_url(cut), tmp_path / 'clone', '--no-checkout',
                   check=False)
    assert_failed_for_people(result, 'unexpected end of data')
    assert not (tmp_path / 'clone').exists() or refs(tmp_path / 'clone') == {}


def test_clone_of_a_64_mb_file_holds_a_fraction_of_it(hg, hg_serve,
                                                      tmp_path):
    """Over HTTP: a local clone's `hg serve --stdio` is one of the
    processes measured, and holds the file."""
    repo = tmp_path / 'hg'
    hg('init', repo)
    size = 64 << 20
    with open(repo / 'big.bin', 'wb') as f:
        for _ in range(size >> 20):
            f.write(os.urandom(1 << 20))
    commit(hg, repo, {}, 'big', 0)
    with open(repo / 'big.bin', 'r+b') as f:
        f.seek(size // 2)
        f.write(b'changed')
    commit(hg, repo, {}, 'changed', 1)
    server = hg_serve(repo)
    result, kb = run_measured(['git', 'clone', '-q', '--no-checkout',
                               hg_url(server.url), tmp_path / 'clone'])
    assert result.returncode == 0, result.describe()
    assert kb < (size >> 10) // 2, f'largest process: {kb} kB'
    nodes = hg('-R', repo, 'log', '-T', '{node}\n').out.split()
    commits = hg2git(tmp_path / 'clone', nodes)
    for node in nodes:
        blob = git('rev-parse', f'{commits[node]}:big.bin',
                   cwd=tmp_path / 'clone').out.strip()
        want = hg('-R', repo, 'cat', '-r', node, 'big.bin',
                  cwd=repo).stdout
        assert git('cat-file', 'blob', blob, cwd=tmp_path / 'clone',
                   ).stdout == want
