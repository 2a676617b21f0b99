"""Manifest revisions whose delta is against an older revision than the
previous one, as Mercurial sends its "snapshots" (every thousand revisions
or so on a long history, a revision stored against an older one or in
full).  The helper rewrites such a delta against the last revision it
imported instead of reloading its trees: the trees must come out the
same, whether or not manifest ids are checked (with the check off,
nothing else would catch a wrong rewrite), and a snapshot breaking the
path order is still refused.  Ids are checked as the manifests arrive
(helper/manifest-precheck.c), which keeps the last few snapshots to
follow such deltas (those of the last snapshot's chain first): one
against a snapshot no longer kept is checked by the import instead, and a
wrong id there is still refused.

The bundles are written by the test (lib/hgcraft.py, HG20 with a version
02 changegroup naming each delta's base); Mercurial reads them too.
"""

import re

import pytest

from lib import hgcraft
from lib.checks import assert_failed_for_people
from lib.git import clone, git, hg_url, refs


def history():
    """Five changesets editing, adding and removing files in a/, b/ and
    at the top; manifests 3 and 5 come against manifest 1 and manifest 2
    against the null id (a full text), the others against the previous."""
    repo = hgcraft.Repo()
    trees = [
        {b'a/one': b'1\n', b'a/two': b'2\n', b'b/three': b'3\n',
         b'top': b't\n'},
        {b'a/one': b'1\n', b'a/two': b'2 changed\n', b'b/three': b'3\n',
         b'top': b't\n', b'b/four': b'4\n'},
        {b'a/one': b'1 again\n', b'b/three': b'3\n', b'top': b't\n',
         b'b/four': b'4\n', b'c/five': b'5\n'},
        {b'a/one': b'1 again\n', b'b/three': b'3\n', b'top': b't 2\n',
         b'c/five': b'5\n', b'c/six': (b'6\n', b'x'), b'afile': b'f\n'},
        # 'adifferentfile' against 'afile': memcmp() may well say 2.
        {b'a/one': b'1\n', b'a/two': b'2\n', b'b/three': b'3\n',
         b'top': b't\n', b'd': (b'link', b'l'), b'adifferentfile': b'g\n'},
    ]
    parent = ()
    for files in trees:
        parent = (repo.commit(files, parents=parent),)
    m = repo.manifests
    for index, base in ((1, None), (2, 0), (4, 0)):
        m[index].delta_base = m[base].node if base is not None else None
        if base is not None:
            m[index].delta = hgcraft.small_delta(m[base].text, m[index].text)
    return repo, trees


def git_files(dest, commit):
    listing = git('ls-tree', '-r', '--format=%(objectmode) %(path)',
                  commit, cwd=dest).out.splitlines()
    contents = {}
    for line in listing:
        mode, path = line.split(' ', 1)
        data = git('cat-file', 'blob', f'{commit}:{path}',
                   cwd=dest).stdout
        flag = {'100755': b'x', '120000': b'l'}.get(mode, b'')
        contents[path.encode()] = (data, flag)
    return contents


def expected_files(tree):
    return {path: value if isinstance(value, tuple) else (value, b'')
            for path, value in tree.items()}


@pytest.mark.parametrize('check', ['all', 'no-manifests'])
def test_snapshot_deltas_give_the_same_trees(hg, tmp_path, check):
    repo, trees = history()
    bundle = hgcraft.write(tmp_path / 'snapshots.hg', repo.bundle_v2())
    hg.repo_from_bundle(bundle, tmp_path / 'hg')
    hg('-R', tmp_path / 'hg', 'verify', '-q')
    dest = tmp_path / 'clone'
    clone(hg_url(str(bundle)), dest, '--no-checkout', '-c',
          f'cinnabar.check={check}')
    commits = git('rev-list', '--reverse', 'HEAD', cwd=dest).out.split()
    assert len(commits) == len(trees)
    for commit, tree in zip(commits, trees):
        assert git_files(dest, commit) == expected_files(tree)
    git('cinnabar', 'fsck', '--full', cwd=dest)


def test_snapshot_breaking_the_order_is_refused(tmp_path):
    repo, _ = history()
    m = repo.manifests
    # Manifest 5 against manifest 1, its text with two lines swapped
    # (its id made for that text: only the order check can refuse it).
    lines = m[4].text.splitlines(keepends=True)
    lines[0], lines[1] = lines[1], lines[0]
    bad = hgcraft.Rev(b''.join(lines), m[4].p1, m[4].p2, m[4].link)
    bad.delta_base = m[0].node
    bad.delta = hgcraft.small_delta(m[0].text, bad.text)
    m[4] = bad
    bundle = hgcraft.write(tmp_path / 'unsorted.hg', repo.bundle_v2())
    result = clone(hg_url(str(bundle)), tmp_path / 'clone', '--no-checkout',
                   check=False)
    assert_failed_for_people(result)
    assert 'paths must be sorted and listed once' in result.err, \
        result.describe()
    assert not (tmp_path / 'clone').exists() or \
        refs(tmp_path / 'clone') == {}


def one_file_changed_each(count):
    """`count` changesets in a line, of files f0 to f<count - 1>, changeset
    i changing file i; its manifests as hgcraft sends them (full texts),
    and the trees."""
    repo = hgcraft.Repo()
    parent = ()
    trees = []
    for i in range(count):
        tree = {b'f%d' % j: b'%d.%d\n' % (j, i if j == i else 0)
                for j in range(count)}
        trees.append(tree)
        parent = (repo.commit(tree, parents=parent),)
    return repo, trees


def many_snapshots(spoil):
    """Seven changesets whose manifests all come as full texts (each one
    a snapshot the early id check keeps, six at most), then an eighth
    against the first, no longer kept by then: its id is checked by the
    import instead.  `spoil`: its delta gives another text than the one
    its id was made for."""
    repo, trees = one_file_changed_each(8)
    m = repo.manifests
    text = m[7].text
    if spoil:
        # f0 listed with f1's file revision: known, but not this text.
        lines = text.splitlines(True)
        lines[0] = lines[0][:3] + lines[1][3:]
        text = b''.join(lines)
    m[7].delta_base = m[0].node
    m[7].delta = hgcraft.small_delta(m[0].text, text)
    return repo, trees


@pytest.mark.parametrize('spoil', [False, True], ids=['right', 'wrong'])
def test_delta_against_a_snapshot_no_longer_kept(tmp_path, spoil):
    repo, trees = many_snapshots(spoil)
    bundle = hgcraft.write(tmp_path / 'many.hg', repo.bundle_v2())
    dest = tmp_path / 'clone'
    result = clone(hg_url(str(bundle)), dest, '--no-checkout', check=False)
    if spoil:
        assert_failed_for_people(result)
        assert 'does not match its contents' in result.err, \
            result.describe()
        assert repo.manifests[7].node.hex() in result.err
        assert not dest.exists() or refs(dest) == {}
        return
    assert result.returncode == 0, result.describe()
    commits = git('rev-list', '--reverse', 'HEAD', cwd=dest).out.split()
    for commit, tree in zip(commits, trees):
        assert git_files(dest, commit) == expected_files(tree)


CHECKED = re.compile(r'^cinnabar-helper: manifests: (\d+) imported, '
                     r'(\d+) of them checked as they came$', re.M)


def against_bases(count, bases):
    """one_file_changed_each(count), manifest i sent against manifest
    bases(i)."""
    repo, trees = one_file_changed_each(count)
    m = repo.manifests
    for index in range(1, count):
        base = bases(index)
        m[index].delta_base = m[base].node
        m[index].delta = hgcraft.small_delta(m[base].text, m[index].text)
    return repo, trees


def clone_checked_bundle(hg, repo, tmp_path, env):
    """Clone the bundle of `repo` (Mercurial reading it too, `hg verify`
    clean) with `env`: the clone's result and its directory."""
    bundle = hgcraft.write(tmp_path / 'bases.hg', repo.bundle_v2())
    hg.repo_from_bundle(bundle, tmp_path / 'hg')
    hg('-R', tmp_path / 'hg', 'verify', '-q')
    dest = tmp_path / 'clone'
    result = clone(hg_url(str(bundle)), dest, '--no-checkout',
                   extra_env=env)
    return result, dest


def assert_trees(dest, trees):
    commits = git('rev-list', '--reverse', 'HEAD', cwd=dest).out.split()
    assert len(commits) == len(trees)
    for commit, tree in zip(commits, trees):
        assert git_files(dest, commit) == expected_files(tree)


def snapshot_tree():
    """Fifteen changesets whose manifests come as a sparse revlog sends
    them: a full text, a chain of snapshots six deep (revisions 2, 4, ...
    12, each against the one before, each followed by a revision against
    it), then one against the full text again (revision 14)."""
    bases = {2 * k: 2 * k - 2 for k in range(1, 7)}
    bases[14] = 0
    return against_bases(15, lambda i: bases.get(i, i - 1))


def test_snapshots_of_the_last_chain_are_kept(hg, tmp_path):
    """The full text stays kept under a chain of snapshots deeper than
    the slots (keeping the last few, or the most recently used, instead
    let it go before revision 14): every id is checked as the manifests
    arrive, none left to the import; the trees are those of each
    revision."""
    repo, trees = snapshot_tree()
    result, dest = clone_checked_bundle(hg, repo, tmp_path,
                                        {'GIT_CINNABAR_TRACE': '1'})
    assert CHECKED.findall(result.err) == [('15', '15')], result.describe()
    assert_trees(dest, trees)


def test_delta_against_a_snapshot_no_longer_kept_counted(tmp_path):
    """The same trace counts a manifest left to the import."""
    repo, _ = many_snapshots(False)
    bundle = hgcraft.write(tmp_path / 'many.hg', repo.bundle_v2())
    result = clone(hg_url(str(bundle)), tmp_path / 'clone', '--no-checkout',
                   extra_env={'GIT_CINNABAR_TRACE': '1'})
    assert CHECKED.findall(result.err) == [('8', '7')], result.describe()


TEXTS = re.compile(r'^cinnabar-helper: manifests: (\d+) stored texts '
                   r'made from their trees, (\d+) read back$', re.M)


def snapshots_against_older_ones():
    """Sixteen changesets whose manifests come with a chain of snapshots
    (revisions 2, 4, ... 12, each against the one before, each followed
    by a revision against it), then one against revision 4, five
    snapshots back (revision 14), and one against revision 8 (15)."""
    bases = {2 * k: 2 * k - 2 for k in range(1, 7)}
    bases.update({14: 4, 15: 8})
    return against_bases(16, lambda i: bases.get(i, i - 1))


# Kept texts of any size (the tests' texts are small).
KEEP_TRACED = {'GIT_CINNABAR_TRACE': '1',
               'CINNABAR_TEST_MANIFEST_CACHE_MIN': '0'}


def test_snapshot_bases_read_back_not_made(hg, tmp_path):
    """The import rewrites each snapshot's delta against the revision
    before it, from the text of the snapshot's base: the snapshots it
    imported are kept on disk while it runs (helper/manifest-cache.h,
    the last eight used, the test's bound on their size lowered), so
    that none is made again from its trees, five snapshots back as well.
    What stays once the import is done is what stays between imports:
    three texts at most, the last manifest's among them."""
    repo, trees = snapshots_against_older_ones()
    result, dest = clone_checked_bundle(hg, repo, tmp_path, KEEP_TRACED)
    # Revisions 2 to 14 against older snapshots: 6 rewritten against the
    # previous revision, each from its base's text; 15 against 8 too.
    assert TEXTS.findall(result.err) == [('0', '8')], result.describe()
    assert_trees(dest, trees)
    kept = [p.name for p in (dest / '.git' / 'cinnabar' /
                             'manifests').iterdir()]
    assert len(kept) <= 3
    assert repo.manifests[15].node.hex() in kept
    git('cinnabar', 'fsck', '--full', cwd=dest)


def test_a_snapshot_base_used_again_stays_kept(hg, tmp_path):
    """Eleven snapshots against the full text (revisions 2, 4, ... 22
    against revision 0, as a sparse revlog stores its first level), more
    than the texts kept while importing: reading a kept text back counts
    as using it, and the oldest used goes first, never that one."""
    repo, trees = against_bases(24, lambda i: 0 if i % 2 == 0 else i - 1)
    result, dest = clone_checked_bundle(hg, repo, tmp_path, KEEP_TRACED)
    assert TEXTS.findall(result.err) == [('0', '11')], result.describe()
    assert_trees(dest, trees)


def split_bundles(repo, count, tmp_path):
    """Two bundles of `repo`: its first `count` changesets, and the rest
    (whose first manifest's delta base is then in the receiver's
    repository)."""
    first = hgcraft.Repo()
    rest = hgcraft.Repo()
    links = {cs.node for cs in repo.changesets[:count]}
    for part, keep in ((first, True), (rest, False)):
        part.changesets = [r for r in repo.changesets
                           if (r.node in links) == keep]
        part.manifests = [r for r in repo.manifests
                          if (r.link in links) == keep]
        for path, revs in repo.files.items():
            revs = [r for r in revs if (r.link in links) == keep]
            if revs:
                part.files[path] = revs
    return (hgcraft.write(tmp_path / 'first.hg', first.bundle_v2()),
            hgcraft.write(tmp_path / 'rest.hg', rest.bundle_v2()))


@pytest.mark.parametrize('spoil', [False, True], ids=['right', 'wrong'])
@pytest.mark.parametrize('check', ['all', 'no-manifests'])
def test_snapshot_against_a_stored_revision(tmp_path, check, spoil):
    """A pull whose first manifest comes against its stored parent and
    whose next one against an older stored revision (a snapshot): the
    early id check makes both stored texts from their trees and hands
    them, and the snapshot's text, to the import (helper/manifest.c,
    offers), which must give the trees a clone gives, and still refuse
    a snapshot whose text is not the one of its id."""
    repo, trees = history()
    m = repo.manifests
    m[3].delta_base = m[2].node
    m[3].delta = hgcraft.small_delta(m[2].text, m[3].text)
    if spoil:
        # top listed with b/three's file revision: not this text.
        lines = m[4].text.splitlines(True)
        top = next(i for i, line in enumerate(lines)
                   if line.startswith(b'top\0'))
        three = next(line for line in lines if line.startswith(b'b/three'))
        lines[top] = b'top' + three[len(b'b/three'):]
        m[4].delta = hgcraft.small_delta(m[0].text, b''.join(lines))
    first, rest = split_bundles(repo, 3, tmp_path)
    dest = tmp_path / 'clone'
    clone(hg_url(str(first)), dest, '--no-checkout', '-c',
          f'cinnabar.check={check}')
    before = refs(dest)
    result = git('-c', f'cinnabar.check={check}', 'cinnabar', 'unbundle',
                 str(rest), cwd=dest, check=False)
    if spoil and check == 'all':
        assert_failed_for_people(result)
        assert 'does not match its contents' in result.err, \
            result.describe()
        assert m[4].node.hex() in result.err
        assert refs(dest) == before
        return
    assert result.returncode == 0, result.describe()
    if spoil:
        return      # nothing checks the manifest ids then
    head = git('rev-parse', 'refs/cinnabar/metadata^1', cwd=dest).out
    commits = git('rev-list', '--reverse', head.strip() + '^@',
                  cwd=dest).out.split()
    assert len(commits) == len(trees)
    for commit, tree in zip(commits, trees):
        assert git_files(dest, commit) == expected_files(tree)
    git('cinnabar', 'fsck', '--full', cwd=dest)
