"""A push only sends deltas against texts it has checked against their
ids.

A changegroup revision is a delta against a base the server has; the
server applies it to its own text of that base.  If our stored text of
the base is not what its id says (metadata crafted by a cinnabarclone
source, or damaged), the server ends up with a revision whose text does
not match its id: `hg verify` fails there and every later clone of the
server aborts.  Here the metadata of a clone is edited with git plumbing
(lib/plumbing.py) so that ids still resolve and the git trees still
match, but a stored manifest, or a stored file revision, has another
text than its id says: the push must stop before sending anything,
saying to run `git cinnabar fsck --full`, and the server must stay as it
was, `hg verify` clean.

A delta that saves few bytes over the whole text (a small file, a file
rewritten) is not worth that check: such a revision goes whole, and the
server ends up with the right text whatever ours of the base was.
"""

import pytest

from lib.git import clone, git, refs
from lib.plumbing import MetadataParts, commit_tree, edit_tree, ls_tree
from lib.plumbing import message, parents, tree_of
from lib.push import BRANCH_TIP, Author, assert_hg_verify, assert_pushed
from lib.push import git_commit, hg_commit, make_hg_repo, nothing_changes
from lib.push import push

PUSHER = Author('Pat Pusher', 'pat@example.com')
TIP = BRANCH_TIP.format('default')


def lines(tag, n=60):
    """A text of `n` numbered lines, 1.5 kB: a delta that adds a line to
    it saves more than the 512 bytes for which a push checks the stored
    base (helper/push-files.c)."""
    return ''.join(f'{tag} line {i:04d} of a text\n' for i in range(n))


A = lines('a')
# A with a line changed: a delta from it to A's next revision is small.
A_DAMAGED = A.replace('a line 0001', 'a LINE 0001')


@pytest.fixture
def server_and_clone(hg, tmp_path):
    server = make_hg_repo(hg, tmp_path / 'server',
                          {'a': A, 'b': 'bee\n'})
    hg_commit(hg, server, {'a': A + 'two\n'}, 'second line of a')
    hg_commit(hg, server, {'c': 'sea\n'}, 'add c')
    work = tmp_path / 'work'
    clone(f'hg::{server}', work)
    return server, work


def hg_ids(hg, repo, template):
    return hg('-R', repo, 'log', '-r', 'tip', '--debug', '-T',
              template).out.strip()


def manifest_entry(hg, repo, path):
    """The file revision of `path` in the tip's manifest."""
    for line in hg('-R', repo, 'manifest', '--debug', '-r', 'tip').out \
            .splitlines():
        fields = line.split()  # node, mode, [*,] path (no spaces here)
        if fields[-1] == path:
            return fields[0]
    raise KeyError(path)


def commit_change(work, path, text):
    (work / path).write_text(text)
    git('add', path, cwd=work)
    git_commit(work, f'change {path}', PUSHER, '1700000000 +0000')


def assert_refused_unchanged(hg, server, work):
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'HEAD:{TIP}')
    assert result.returncode != 0, result.describe()
    assert 'fsck --full' in result.err, result.describe()
    assert 'does not match its id' in result.err, result.describe()
    assert_hg_verify(hg, server)


def replace_stored_text(hg, server, work, path, text):
    """hg2git maps the tip's revision of `path` to a blob of `text`
    instead; (that revision's id, the blob it was mapped to)."""
    node = manifest_entry(hg, server, path)
    parts = MetadataParts(work)
    blob = parts.notes('hg2git')[node][1]
    other = git('hash-object', '-w', '--stdin', cwd=work,
                input=text).out.strip()
    parts.edit_note('hg2git', node, other)
    parts.store()
    return node, blob


def test_stored_manifest_with_another_text(hg, server_and_clone):
    """The tip's manifest lists `b` under another id, which hg2git maps
    to b's blob: trees and ids resolve, the text is not the manifest's."""
    server, work = server_and_clone
    manifest = hg_ids(hg, server, '{manifest.node}')
    parts = MetadataParts(work)
    commit = parts.notes('hg2git')[manifest][1]
    assert message(work, commit) == manifest.encode()
    entry = [e for e in ls_tree(work, commit) if e[3] == '_b'][0]
    forged = 'e' * 40
    tree = edit_tree(work, tree_of(work, commit), '_b',
                     (entry[0], entry[1], forged))
    edited = commit_tree(work, tree, parents(work, commit),
                         manifest.encode())
    blob_of_b = parts.notes('hg2git')[entry[2]][1]
    parts.edit_note('hg2git', manifest, edited)
    parts.add_note('hg2git', forged, blob_of_b)
    parts.store()
    commit_change(work, 'a', A + 'two\nthree\n')
    assert_refused_unchanged(hg, server, work)


def test_stored_file_with_another_text(hg, server_and_clone):
    """hg2git maps a's tip revision to another blob: the base of the new
    revision of `a` is not what the server has under that id."""
    server, work = server_and_clone
    replace_stored_text(hg, server, work, 'a',
                        (A_DAMAGED + 'two\n').encode())
    commit_change(work, 'a', A + 'two\nthree\n')
    assert_refused_unchanged(hg, server, work)


def assert_pushed_whole(hg, server, work, path, text):
    """The push of `text` as the new revision of `path` goes through,
    sent whole: the server has it right, and the whole history checks."""
    commit_change(work, path, text)
    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    assert_hg_verify(hg, server)
    assert hg('-R', server, 'cat', '-r', 'tip', f'{server}/{path}').out \
        == text


def test_small_file_with_another_text(hg, server_and_clone):
    """hg2git maps b's revision (4 bytes) to another blob: a delta against
    it would save too little to check it, so the new revision goes whole
    and the server has the right text."""
    server, work = server_and_clone
    replace_stored_text(hg, server, work, 'b', b'BEE\n')
    assert_pushed_whole(hg, server, work, 'b', 'bee\nbuzz\n')


def test_rewritten_file_with_another_text(hg, server_and_clone):
    """The same for a 1.5 kB file rewritten: its delta is no smaller than
    its text."""
    server, work = server_and_clone
    replace_stored_text(hg, server, work, 'a',
                        (A_DAMAGED + 'two\n').encode())
    assert_pushed_whole(hg, server, work, 'a', lines('rewritten'))


def test_checked_bases_push(hg, server_and_clone):
    """Without damage, the same pushes go through, as deltas."""
    server, work = server_and_clone
    commit_change(work, 'a', A + 'two\nthree\n')
    commit_change(work, 'b', 'bee\nbuzz\n')
    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    assert_hg_verify(hg, server)
    assert hg('-R', server, 'cat', '-r', 'tip', f'{server}/a').out == \
        A + 'two\nthree\n'


FAR_BACK = 2100


@pytest.fixture
def far_base(hg, tmp_path):
    """A server whose `a`, added by the first changeset, is untouched by
    the FAR_BACK changesets after it (each edits `b`), and a clone of it
    that made them (git fast-import, then a push): the base of a new
    revision of `a` was introduced FAR_BACK manifests back (farther than
    a walk back of a bounded number of manifests would reach)."""
    server, work = tmp_path / 'server', tmp_path / 'work'
    hg('init', server)
    git('init', '-q', work)
    stream = ['commit refs/heads/main\ncommitter T <t@example.com> '
              f'1700000000 +0000\ndata 2\nc\nM 100644 inline a\n'
              f'data {len(A)}\n{A}M 100644 inline b\ndata 2\n0\n']
    stream += [f'commit refs/heads/main\ncommitter T <t@example.com> '
               f'{1700000000 + i} +0000\ndata 2\nc\nM 100644 inline b\n'
               f'data {len(str(i)) + 1}\n{i}\n' for i in range(1, FAR_BACK)]
    git('fast-import', '--quiet', cwd=work, input=''.join(stream).encode())
    git('symbolic-ref', 'HEAD', 'refs/heads/main', cwd=work)
    git('reset', '-q', '--hard', cwd=work)
    git('remote', 'add', 'origin', f'hg::{server}', cwd=work)
    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    return server, work


def test_stored_file_far_back_with_another_text(hg, far_base):
    """hg2git maps the revision of `a` added FAR_BACK changesets ago to
    another blob: the push is refused (the new revision is not sent
    whole, unchecked base and all); mapped back, it goes through."""
    server, work = far_base
    node, blob = replace_stored_text(hg, server, work, 'a',
                                     A_DAMAGED.encode())
    commit_change(work, 'a', A + 'two\n')
    assert_refused_unchanged(hg, server, work)
    parts = MetadataParts(work)
    parts.edit_note('hg2git', node, blob)
    parts.store()
    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    assert_hg_verify(hg, server)
    assert hg('-R', server, 'cat', '-r', 'tip', f'{server}/a').out == \
        A + 'two\n'


def test_stored_history_with_another_file_text(hg, server_and_clone,
                                               tmp_path):
    """Stored changesets pushed to another server are sent from the
    stored texts: a file revision whose stored text is not what its id
    says (hg2git maps a's first revision to another blob) is refused
    before anything is sent, and the other server stays empty."""
    server, work = server_and_clone
    first = hg('-R', server, 'log', '-r', '0', '--debug', '-T',
               '{manifest.node}').out.strip()
    node = [line.split()[0] for line in hg(
        '-R', server, 'debugdata', '-m', first).out.splitlines()
        if line.startswith('a\0')]
    parts = MetadataParts(work)
    other = git('hash-object', '-w', '--stdin', cwd=work,
                input=b'ONE\n').out.strip()
    assert len(node) == 1
    parts.edit_note('hg2git', node[0].split('\0')[1][:40], other)
    parts.store()
    target = tmp_path / 'other'
    hg('init', target)
    before = refs(work)
    result = push(work, f'hg::{target}', f'HEAD:{TIP}')
    assert refs(work) == before
    assert result.returncode != 0, result.describe()
    assert "file revision" in result.err, result.describe()
    assert 'does not match its id' in result.err, result.describe()
    assert 'fsck --full' in result.err, result.describe()
    assert hg('-R', target, 'log', '-T', '{node}\n').out == ''
