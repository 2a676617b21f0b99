"""`git cinnabar reclone` rebuilds the metadata from the remotes and keeps
the user's refs.

- A clean clone: no ref moves, and every changeset keeps its commit.
- Metadata removed (refs/cinnabar/metadata deleted) or damaged (a note of
  hg2git pointing at the wrong commit, written with git plumbing): the
  mapping is right again and a fetch works.
- Ids that change: the "old" state is made by hand, as an older or buggy
  conversion would have left it: the tip changeset's commit is written
  again with another committer date, and the metadata (hg2git, git2hg,
  changeset heads) rewritten with git plumbing to map the changeset to
  it; the branches are on it, and a local commit is made on top of it.
  After reclone, the branches are on the true commit, the local commit
  is written again on it (same tree, author, committer, message), and a
  local commit on an unchanged commit did not move.
- A reclone that fails (the remote is gone) changes nothing.
"""

import shutil

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import METADATA_REF, clone, git, hg2git, hg_url, refs
from lib.git import rev_parse
from lib.push import Author, git_commit, hg_commit, make_hg_repo

AUTHOR = Author('Local Person', 'local@example.com')
ORIGIN_TIP = 'refs/remotes/origin/branches/default/tip'


def make_clone(hg, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': '1\n'})
    hg_commit(hg, repo, {'f': '2\n'}, 'second')
    hg_commit(hg, repo, {'g': '3\n'}, 'third')
    work = tmp_path / 'work'
    assert_no_traceback(clone(hg_url(repo), work))
    return repo, work


def user_refs(work):
    return {name: oid for name, oid in refs(work).items()
            if not name.startswith('refs/cinnabar/')}


def reclone(work, *args):
    result = git('cinnabar', 'reclone', *args, cwd=work)
    assert_no_traceback(result)
    return result


def raw(work, commit):
    return git('cat-file', 'commit', commit, cwd=work).stdout


def write_raw(work, kind, data):
    return git('hash-object', '-t', kind, '-w', '--stdin', cwd=work,
               input=data).out.strip()


def replace_in_tree(work, tree, old_name, new_name, old_id, new_id):
    """A tree like `tree` (a flat notes tree), its entry `old_name`
    renamed and re-pointed. Written by hand: `git mktree` refuses the
    gitlinks of hg2git that point at blobs."""
    entries = []
    for line in git('ls-tree', tree, cwd=work).out.splitlines():
        info, name = line.split('\t', 1)
        mode, _, oid = info.split()
        if name == old_name:
            name, oid = new_name, oid.replace(old_id, new_id)
        entries.append((name, mode, oid))
    data = b''.join(
        b'%s %s\0%s' % (mode.encode(), name.encode(), bytes.fromhex(oid))
        for name, mode, oid in sorted(entries))
    return git('hash-object', '-t', 'tree', '-w', '--stdin', '--literally',
               cwd=work, input=data).out.strip()


def rewrite_commit(work, commit, old, new, tree=None):
    """`commit` written again with `old` replaced by `new` in its text
    (and its tree replaced, when given)."""
    text = raw(work, commit).replace(old.encode(), new.encode())
    if tree:
        first, rest = text.split(b'\n', 1)
        text = b'tree ' + tree.encode() + b'\n' + rest
    return write_raw(work, 'commit', text)


def forge_old_state(work, node):
    """Map changeset `node` to a commit like its own with another
    committer date, in the metadata and in every ref; returns it."""
    true = hg2git(work, [node])[node]
    text = raw(work, true)
    header, message = text.split(b'\n\n', 1)
    lines = header.split(b'\n')
    for i, line in enumerate(lines):
        if line.startswith(b'committer '):
            *who, stamp, zone = line.split(b' ')
            lines[i] = b' '.join(who + [b'%d' % (int(stamp) + 1), zone])
    forged = write_raw(work, 'commit', b'\n'.join(lines) + b'\n\n'
                       + message)
    metadata = rev_parse(work, METADATA_REF)
    changesets, _, hg2git_c, git2hg_c = (
        rev_parse(work, f'{metadata}^{i}') for i in (1, 2, 3, 4))
    new_changesets = rewrite_commit(work, changesets, true, forged)
    new_hg2git = rewrite_commit(
        work, hg2git_c, '-', '-', replace_in_tree(
            work, f'{hg2git_c}^{{tree}}', node, node, true, forged))
    new_git2hg = rewrite_commit(
        work, git2hg_c, '-', '-', replace_in_tree(
            work, f'{git2hg_c}^{{tree}}', true, forged, '-', '-'))
    text = raw(work, metadata)
    for old, new in ((changesets, new_changesets), (hg2git_c, new_hg2git),
                     (git2hg_c, new_git2hg)):
        text = text.replace(old.encode(), new.encode())
    new_metadata = write_raw(work, 'commit', text)
    git('update-ref', METADATA_REF, new_metadata, metadata, cwd=work)
    symbolic = git('for-each-ref', '--format=%(symref)', cwd=work).out
    for name, oid in user_refs(work).items():
        if oid == true and name not in symbolic.split():
            git('update-ref', name, forged, true, cwd=work)
    git('reset', '-q', '--hard', cwd=work)
    assert hg2git(work, [node])[node] == forged
    assert git('cinnabar', 'git2hg', forged, cwd=work).out.strip() == node
    return true, forged


def test_reclone_of_clean_clone_changes_nothing(hg, tmp_path):
    repo, work = make_clone(hg, tmp_path)
    nodes = hg.nodes(repo)
    before, mapping = user_refs(work), hg2git(work, nodes)
    result = reclone(work, '-v')
    # As git-cinnabar: `Fetching <remote>` on stdout, nothing else here.
    assert result.out == 'Fetching origin\n'
    assert '0 refs moved' in result.err
    assert user_refs(work) == before
    assert hg2git(work, nodes) == mapping


def test_reclone_after_a_fetch_gives_no_advice(hg, tmp_path):
    """After a fetch, the metadata commit keeps the one before it as a
    parent, which a reclone does not: another metadata commit, the same
    commits for every changeset, so no advice to move local branches."""
    repo, work = make_clone(hg, tmp_path)
    hg_commit(hg, repo, {'f': '4\n'}, 'fourth')
    git('fetch', '-q', 'origin', cwd=work)
    nodes = hg.nodes(repo)
    before, mapping = user_refs(work), hg2git(work, nodes)
    old = rev_parse(work, METADATA_REF)
    result = reclone(work)
    assert rev_parse(work, METADATA_REF) != old
    assert result.out == 'Fetching origin\n'
    assert result.err == ''
    assert user_refs(work) == before
    assert hg2git(work, nodes) == mapping


def test_reclone_repairs_damaged_metadata(hg, tmp_path):
    repo, work = make_clone(hg, tmp_path)
    nodes = hg.nodes(repo)
    before, mapping = user_refs(work), hg2git(work, nodes)

    git('update-ref', '-d', METADATA_REF, cwd=work)
    reclone(work)
    assert user_refs(work) == before
    assert hg2git(work, nodes) == mapping

    # A note of hg2git pointing at the wrong commit.
    metadata = rev_parse(work, METADATA_REF)
    hg2git_c = rev_parse(work, f'{metadata}^3')
    wrong = mapping[nodes[0]]
    tree = replace_in_tree(work, f'{hg2git_c}^{{tree}}', nodes[-1],
                           nodes[-1], mapping[nodes[-1]], wrong)
    new_hg2git = rewrite_commit(work, hg2git_c, '-', '-', tree)
    damaged = write_raw(work, 'commit', raw(work, metadata).replace(
        hg2git_c.encode(), new_hg2git.encode()))
    git('update-ref', METADATA_REF, damaged, cwd=work)
    assert hg2git(work, [nodes[-1]])[nodes[-1]] == wrong
    reclone(work)
    assert user_refs(work) == before
    assert hg2git(work, nodes) == mapping
    hg_commit(hg, repo, {'f': '4\n'}, 'fourth')
    git('fetch', '-q', 'origin', cwd=work)
    tip = hg.nodes(repo, 'tip')[0]
    assert rev_parse(work, ORIGIN_TIP) == hg2git(work, [tip])[tip]


def test_reclone_moves_branches_and_rewrites_local_commits(hg, tmp_path):
    repo, work = make_clone(hg, tmp_path)
    nodes = hg.nodes(repo)
    true, forged = forge_old_state(work, nodes[-1])
    parent = hg2git(work, [nodes[-2]])[nodes[-2]]
    assert rev_parse(work, ORIGIN_TIP) == forged
    # A local commit on the forged commit, one on an unchanged commit.
    checked_out = git('symbolic-ref', 'HEAD', cwd=work).out.strip()
    (work / 'local').write_text('mine\n')
    git('add', 'local', cwd=work)
    local = git_commit(work, 'my work', AUTHOR, '1000000000 +0100')
    git('branch', 'feature', cwd=work)
    git('checkout', '-q', '-b', 'stay', parent, cwd=work)
    (work / 'other').write_text('mine too\n')
    git('add', 'other', cwd=work)
    stay = git_commit(work, 'unchanged base', AUTHOR, '1000000100 +0100')
    git('checkout', '-q', 'feature', cwd=work)

    # Without --rebase (as git-cinnabar), local branches stay.
    plain = tmp_path / 'plain'
    shutil.copytree(work, plain, symlinks=True)
    result = reclone(plain)
    assert 'reclone --rebase' in result.out
    assert rev_parse(plain, ORIGIN_TIP) == true
    assert rev_parse(plain, 'refs/heads/feature') == local
    assert rev_parse(plain, 'refs/heads/stay') == stay

    result = reclone(work, '--rebase', '-v')
    assert '1 local commits written again' in result.err
    assert hg2git(work, nodes)[nodes[-1]] == true
    assert rev_parse(work, ORIGIN_TIP) == true
    assert rev_parse(work, 'refs/remotes/origin/HEAD') == true
    assert rev_parse(work, 'refs/heads/stay') == stay
    new_local = rev_parse(work, 'refs/heads/feature')
    assert new_local != local
    assert rev_parse(work, checked_out) == new_local
    assert raw(work, new_local) == raw(work, local).replace(
        f'parent {forged}'.encode(), f'parent {true}'.encode())
    assert git('status', '--porcelain', cwd=work).out == ''


def test_failed_reclone_changes_nothing(hg, tmp_path):
    repo, work = make_clone(hg, tmp_path)
    before = refs(work)
    git('remote', 'add', 'gone', hg_url(tmp_path / 'nothing-here'),
        cwd=work)
    result = git('cinnabar', 'reclone', cwd=work, check=False)
    assert_failed_for_people(
        result, f"no Mercurial repository at {tmp_path / 'nothing-here'}")
    assert refs(work) == before
    git('remote', 'remove', 'gone', cwd=work)
    git('update-ref', '-d', METADATA_REF, cwd=work)
    git('remote', 'set-url', 'origin', hg_url(tmp_path / 'gone'), cwd=work)
    before = refs(work)
    result = git('cinnabar', 'reclone', cwd=work, check=False)
    assert_failed_for_people(
        result, f"no Mercurial repository at {tmp_path / 'gone'}")
    assert refs(work) == before
