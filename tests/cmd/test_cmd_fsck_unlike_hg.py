"""`git cinnabar fsck` compares each changeset with what Mercurial's commit
makes of the same change (helper/fsck-changes.h): its files list, and the
parents and copy metadata of the file revisions it introduces.

The odd changesets are crafted (lib.hgcraft) with valid ids; real
Mercurial is the oracle that they are what we say: `hg unbundle` and
`hg verify` accept them, and `hg log --debug` / `hg debugindex` show the
files list and file parents we built.  The first one is what a push
pairing the entries of two git trees in the wrong order writes
(test_push_names_beside_dirs): `a.b` removed beside `a/`, the files list
`a.b a/x a/y` and new revisions of `a/x`, `a/y` recorded as copies of
themselves.  A
history made by `hg commit` and `hg merge` themselves (removals beside a
directory, flag changes, copies, merges taking either side or removing)
gives no warning, nor does any corpus bundle (test_cmd_fsck).

Such changesets are warnings, not damage: the metadata holds the server's
history faithfully, so the exit status is 0 and nothing is marked broken.
"""

from lib import hgcraft
from lib.git import METADATA_REF, clone, git, hg2git, hg_url, rev_parse

NULL = hgcraft.NULL
WARNING = 'warning: not what Mercurial records: '
BROKEN = 'refs/cinnabar/broken'


def fsck(repo, *args):
    return git('cinnabar', 'fsck', *args, cwd=repo, check=False)


def warnings(result):
    assert result.returncode == 0, result.describe()
    return [line[len(WARNING):] for line in result.err.splitlines()
            if line.startswith(WARNING)]


class History:
    """Changesets built by hand: each file revision with the parents and
    metadata given, each changeset with the files list given."""

    def __init__(self):
        self.repo = hgcraft.Repo()
        self.manifests = {}

    def file(self, path, data, p1=NULL, p2=NULL, meta=None):
        return self.repo.add_file(path, hgcraft.file_text(data, meta),
                                  p1, p2).node

    def changeset(self, tree, files, parent=None, desc=b'crafted',
                  parent2=None):
        """`tree`: {path: file node}; `files`: the files list."""
        pnode = parent.node if parent else NULL
        p2node = parent2.node if parent2 else NULL
        manifest = self.repo.add_manifest(
            hgcraft.manifest_text({p: (n, b'') for p, n in tree.items()}),
            self.manifests.get(pnode, NULL), self.manifests.get(p2node, NULL))
        text = hgcraft.changeset_text(manifest.node, b'C <c@example.com>',
                                      b'0 0', files, desc)
        cs = self.repo.add_changeset(text, pnode, p2node)
        manifest.link = cs.node
        for revs in self.repo.files.values():
            for rev in revs:
                if rev.link == NULL:
                    rev.link = cs.node
        self.manifests[cs.node] = manifest.node
        return cs

    def clone(self, hg, tmp_path):
        bundle = hgcraft.write(tmp_path / 'crafted.hg', self.repo.bundle_v1())
        server = hg.repo_from_bundle(bundle, tmp_path / 'server')
        hg('-R', server, 'verify', '-q')    # Mercurial accepts it all
        repo = tmp_path / 'clone'
        clone(hg_url(bundle), repo, '--no-checkout')
        return server, repo


def first_changeset(history):
    tree = {b'a.b': history.file(b'a.b', b'b\n'),
            b'a/x': history.file(b'a/x', b'x\n'),
            b'a/y': history.file(b'a/y', b'y\n')}
    return tree, history.changeset(tree, tree.keys(), desc=b'one')


def debug_field(hg, server, rev, field):
    out = hg('-R', server, 'log', '--debug', '-r', rev).out
    return [line.split(None, 1)[1] for line in out.splitlines()
            if line.startswith(field + ':')]


def file_parents(hg, server, path, rev):
    out = hg('-R', server, 'log', '--debug', '-r', rev, '-T',
             '{files % "{file}\n"}').out
    assert path in out.split()
    index = hg('-R', server, 'debugindex', path).out.splitlines()
    return index[-1].split()[-2:]


def test_self_copies_of_misordered_entries(hg, tmp_path, monkeypatch):
    """A push pairing tree entries in the wrong order: `a.b` removed,
    `a/x` and `a/y` given new revisions that are copies of themselves.
    The same warnings when a second process checks file revisions
    (CINNABAR_TEST_FSCK_SPLIT)."""
    history = History()
    tree, one = first_changeset(history)
    two_tree = {}
    for path in (b'a/x', b'a/y'):
        two_tree[path] = history.file(
            path, path[-1:] + b'\n',
            meta={b'copy': path, b'copyrev': tree[path].hex().encode()})
    history.changeset(two_tree, [b'a.b', b'a/x', b'a/y'], one, b'two')
    server, repo = history.clone(hg, tmp_path)
    assert debug_field(hg, server, '1', 'files') == ['a/x a/y']
    assert debug_field(hg, server, '1', 'files-') == ['a.b']
    assert file_parents(hg, server, 'a/x', '1') == ['000000000000'] * 2
    found = warnings(fsck(repo, '--full'))
    assert len(found) == 2, found
    for path in (b'a/x', b'a/y'):
        assert any(two_tree[path].hex() in w and f"'{path.decode()}'" in w
                   and 'copy of its own path' in w for w in found), found
    assert rev_parse(repo, BROKEN) == ''
    assert rev_parse(repo, 'refs/cinnabar/checked') == \
        rev_parse(repo, METADATA_REF)
    monkeypatch.setenv('CINNABAR_TEST_FSCK_SPLIT', '1')
    assert sorted(warnings(fsck(repo, '--full'))) == sorted(found)


def test_new_revision_without_parents(hg, tmp_path):
    """A new revision of `a/x` without parents nor copy metadata, where
    its parent changeset has `a/x`: Mercurial gives it that revision as
    parent."""
    history = History()
    tree, one = first_changeset(history)
    lost = history.file(b'a/x', b'x changed\n')
    two = {**tree, b'a/x': lost}
    history.changeset(two, [b'a/x'], one, b'two')
    server, repo = history.clone(hg, tmp_path)
    assert file_parents(hg, server, 'a/x', '1') == ['000000000000'] * 2
    found = warnings(fsck(repo, '--full'))
    assert len(found) == 1, found
    assert lost.hex() in found[0] and "'a/x'" in found[0], found
    assert tree[b'a/x'].hex() in found[0], found   # the expected parent


def test_files_list(hg, tmp_path):
    """A changeset that modifies `a/x` and removes `a.b` but lists `a/x`
    and `a/y`: named, with what it lists and what it lacks; `fsck
    <commit>` sees it too.  (A new revision left out of the files list
    is an integrity error for `hg verify`, which checks the changeset of
    each revision lists it.)"""
    history = History()
    tree, one = first_changeset(history)
    new = history.file(b'a/x', b'x changed\n', tree[b'a/x'])
    two = history.changeset({b'a/x': new, b'a/y': tree[b'a/y']},
                            [b'a/x', b'a/y'], one, b'two')
    server, repo = history.clone(hg, tmp_path)
    assert debug_field(hg, server, '1', 'files') == ['a/x a/y']
    assert hg('-R', server, 'status', '--change', '1').out == \
        'M a/x\nR a.b\n'
    found = warnings(fsck(repo, '--full'))
    commit = hg2git(repo, [two.node.hex()])[two.node.hex()]
    assert len(found) == 1, found
    assert two.node.hex() in found[0] and commit in found[0], found
    assert "has 'a/y'" in found[0] and "lacks 'a.b'" in found[0], found
    assert warnings(fsck(repo, commit)) == found


def test_merge_listing_what_it_takes_from_its_second_parent(hg, tmp_path):
    """A merge listing `renamed`, whose revision it takes unchanged from
    its second parent (where `ren` was renamed): `hg merge` + `hg commit`
    lists nothing there (the history test below has the same shape)."""
    history = History()
    tree, one = first_changeset(history)
    renamed = history.file(b'renamed', b'b\n', meta={
        b'copy': b'a.b', b'copyrev': tree[b'a.b'].hex().encode()})
    left_tree = {**tree, b'renamed': renamed}
    del left_tree[b'a.b']
    left = history.changeset(left_tree, [b'a.b', b'renamed'], one, b'left')
    newf = history.file(b'newf', b'new\n')
    right = history.changeset({**tree, b'newf': newf}, [b'newf'], one,
                              b'right')
    merge_tree = {**left_tree, b'newf': newf}
    merge = history.changeset(merge_tree, [b'renamed'], right, b'merge',
                              left)
    server, repo = history.clone(hg, tmp_path)
    assert debug_field(hg, server, '3', 'files') == ['renamed']
    found = warnings(fsck(repo, '--full'))
    assert len(found) == 1, found
    assert merge.node.hex() in found[0], found
    assert "has 'renamed', which Mercurial would not list" in found[0]


def test_history_made_by_hg_gives_no_warning(hg, tmp_path):
    """What `hg commit` and `hg merge` make passes: removal of `a.b`
    beside `a/`, flag change, copy, merges keeping a side, merging both,
    removing on one side."""
    server = tmp_path / 'server'
    hg('init', server)

    def write(path, text):
        target = server / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def commit(message, *args):
        hg('-R', server, 'commit', '-q', '-A', '-d', '0 0', '-u',
           'U <u@example.com>', '-m', message, *args)

    for path in ('a.b', 'a/x', 'a/y', 'a-c', 'keep', 'gone', 'both'):
        write(path, path + '\n')
    commit('one')
    hg('-R', server, 'rm', '-q', str(server / 'a.b'))
    (server / 'a-c').chmod(0o755)
    commit('two')
    hg('-R', server, 'cp', '-q', str(server / 'a/x'), str(server / 'a/z'))
    write('both', 'both, left\n')
    commit('three')
    hg('-R', server, 'update', '-q', '1')
    write('a/y', 'y, right\n')
    write('both', 'both, right\n')
    hg('-R', server, 'rm', '-q', str(server / 'gone'))
    commit('four')
    hg('-R', server, 'merge', '-q', '--tool', 'internal:local', '2')
    commit('merge')
    hg('-R', server, 'verify', '-q')
    repo = tmp_path / 'clone'
    clone(hg_url(server), repo, '--no-checkout')
    result = fsck(repo, '--full')
    assert warnings(result) == [], result.err
    assert 'checked all the metadata: 5 changesets' in result.err
