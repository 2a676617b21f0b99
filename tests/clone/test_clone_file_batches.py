"""Small file revisions are stored in batches (helper/file.c, "Small
revisions in batches"): their blob ids are hashed together on the SHA-1
lanes, then each blob is stored in turn, so a revision waits in a queue
while the next ones are read.

The history here makes the queue meet each case it has: more revisions
than a batch in one file and across files (a batch spanning many
filelogs), two files of the same content and parents (the same file
node in two filelogs, the second skipped while the first waits), copies
(metadata), a text starting with "\\1\\n", a revision going back to an
earlier content (a blob stored already), two heads of a file merged (a
delta against a revision other than the last one), and texts of a few
MB (a batch full by its bytes). CINNABAR_TEST_BIG_TEXT puts large,
streamed revisions between queued ones; CINNABAR_SHA1_MB hashes the ids
one at a time (0) or on the 8 or 2 lanes where the CPU has them.

Checked against Mercurial: every changeset's tree is `hg archive`'s, and
`git cinnabar fsck --full` and `git fsck --strict` find nothing wrong;
the other settings give the same commits.
"""

import random

import pytest

from lib.git import clone, git, hg2git, hg_url
from lib.hgcmdserver import HgCommandServer
from lib.tree import differences, git_tree, hg_tree

FILES = 70
LOG_REVISIONS = 80
SETTINGS = {
    'streamed between': {'CINNABAR_TEST_BIG_TEXT': str(1 << 20)},
    'one at a time': {'CINNABAR_SHA1_MB': '0'},
    '8 lanes': {'CINNABAR_SHA1_MB': '8'},
    '2 lanes': {'CINNABAR_SHA1_MB': '2'},
}


class Repo:
    """An hg repository made through one hg command server."""

    def __init__(self, hg, path):
        hg('init', path)
        self.path = path
        self.server = HgCommandServer(hg.exe, path)
        self.number = 0

    def __call__(self, *args, check=True):
        return self.server(*args, check=check)

    def commit(self, files, message):
        for path, data in files.items():
            (self.path / path).write_bytes(data)
        self('commit', '-q', '-A', '-m', message, '-u',
             'Hg Author <hg@example.com>', '-d',
             f'{1600000000 + self.number} 0')
        self.number += 1


def make_history(repo):
    rand = random.Random(11)
    first = {f'f{i:02}.txt': b'file %d\n' % i * (i + 1) for i in range(FILES)}
    first.update({
        'same1.txt': b'same content\n',
        'same2.txt': b'same content\n',
        'framed.txt': b'\1\nnot metadata\n\1\nafter\n',
        'log.txt': b'line 0\n',
    })
    repo.commit(first, 'start')
    log = [b'line 0\n']
    for n in range(1, LOG_REVISIONS):
        log.append(b'line %d\n' % n)
        files = {'log.txt': b''.join(log)}
        if n % 9 == 0:
            files[f'f{n % FILES:02}.txt'] = b'edited at %d\n' % n
        if n == 40:
            files['log.txt'] = b''.join(log[:5])
        repo.commit(files, f'log {n}')
    repo('copy', 'f01.txt', 'copied.txt')
    repo.commit({'copied.txt': b'copied, then edited\n'}, 'copy')
    wide = rand.randbytes(3 << 20)
    for n in range(4):
        at = rand.randrange(len(wide))
        wide = wide[:at] + b'edit %d\n' % n + wide[at:]
        repo.commit({'wide.bin': wide, 'log.txt': b'wide %d\n' % n},
                    f'wide {n}')
    fork = repo('log', '-r', '.', '-T', '{node}').out
    for side in range(3):
        repo.commit({'log.txt': b'one side %d\n' % side}, 'one side')
    repo('update', '-q', fork)
    for side in range(3):
        repo.commit({'log.txt': b'other side %d\n' % side,
                     'f02.txt': b'other %d\n' % side}, 'other side')
    repo('merge', '-q', '--tool', ':local')
    repo.commit({}, 'merge')
    return repo


@pytest.fixture(scope='module')
def original(hg, tmp_path_factory):
    repo = Repo(hg, tmp_path_factory.mktemp('batches') / 'hg')
    try:
        yield make_history(repo)
    finally:
        repo.server.stop()


def file_nodes(repo, rev):
    nodes = {}
    for line in repo('manifest', '--debug', '-r', rev).out.split('\n'):
        if line:
            fields = line.split()
            nodes[fields[-1]] = fields[0]
    return nodes


def remote_refs(repo):
    return git('for-each-ref', '--format=%(objectname) %(refname)',
               'refs/remotes', cwd=repo).out


@pytest.fixture(scope='module')
def served(original, hg_serve_module):
    return hg_url(hg_serve_module(original.path).url)


def test_history_has_what_the_queue_must_meet(original):
    nodes = file_nodes(original, '0')
    assert nodes['same1.txt'] == nodes['same2.txt']
    revisions = original('log', '-T', '.', 'log.txt').out
    assert len(revisions) > 64
    assert len(original('heads', '-T', '.').out) == 1
    assert len(original('log', '-r', 'merge()', '-T', '.').out) == 1


def test_every_changeset_is_hg_archive(original, served, tmp_path):
    repo = tmp_path / 'clone'
    clone(served, repo, '--no-checkout')
    nodes = original('log', '-T', '{node}\n').out.split()
    commits = hg2git(repo, nodes)
    for node in nodes:
        diff = differences(git_tree(repo, commits[node]),
                           hg_tree(original, original.path, node, tmp_path))
        assert not diff, f'changeset {node}:\n{diff}'
    git('cinnabar', 'fsck', '--full', cwd=repo)
    git('fsck', '--strict', cwd=repo)


@pytest.mark.parametrize('setting', SETTINGS)
def test_other_settings_give_the_same_commits(setting, served, tmp_path):
    clone(served, tmp_path / 'default', '--no-checkout')
    clone(served, tmp_path / 'other', '--no-checkout',
          extra_env=SETTINGS[setting])
    assert remote_refs(tmp_path / 'other') == remote_refs(tmp_path / 'default')
