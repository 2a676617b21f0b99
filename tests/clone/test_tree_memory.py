"""The trees the helper edits while importing manifests are not held whole
in memory (helper/store.c, "The edited trees in memory"): a manifest given
whole is written a directory at a time, and past a budget of entries, the
directories a manifest did not edit are let go of, to be read back from
the pack when an edit goes there again.  Read back wrong, a tree would
come out different; read back with another delta depth than it had, the
pack would.  CINNABAR_TEST_TREE_BUDGET=0 lets go at every manifest: the
packs and metadata must be those of the default budget, which this small
history never reaches; checkpoints every few objects make the trees read
back come from finished packs too.  The history has nested directories,
two identical ones (the same tree objects), a directory removed and added
again, one going back to an earlier state (a tree stored already, at
another depth), and one going back with the directory above it.
Mercurial checks the bundle; the trees are checked against the files each
changeset has."""

import re

import pytest

from lib import env as test_env
from lib import hgcraft
from lib.corpus import NGINX, Corpus
from lib.git import METADATA_REF, git, hg2git, init, rev_parse
from test_clone_manifest_bases import expected_files, git_files

BUDGET_0 = {'CINNABAR_TEST_TREE_BUDGET': '0'}
CHECKPOINT = {'CINNABAR_TEST_CHECKPOINT': '8'}


def trees():
    base = {b'a/b/c/one': b'1\n', b'a/b/c/two': b'2\n', b'a/b/d/three': b'3\n',
            b'a/e/four': b'4\n', b'x/e/four': b'4\n', b'x/y/five': b'5\n',
            b'top': b't\n', b'z/deep/er/still/six': (b'6\n', b'x')}
    steps = [
        {b'a/b/c/one': b'1 changed\n'},
        {b'x/y/five': b'5 changed\n', b'z/deep/er/seven': b'7\n'},
        {b'a/b/d/three': None, b'a/e/four': b'4 changed\n'},
        {b'a/e/four': b'4\n'},   # back to a tree stored already
        {b'a/b/d/three': b'3\n', b'a/b/d/eight': (b'8', b'l')},
        {b'top': b't 2\n', b'a/b/c/two': b'2 changed\n'},
        {b'x/e/four': None, b'x/y/five': None},
        {b'z/deep/er/still/six': b'6 changed\n'},
        {b'a/b/c/one': b'1\n', b'x/e/four': b'4\n'},
        {b'b/new/nine': b'9\n', b'a/b/d/three': b'3 again\n'},
        # A directory and the one above it back to trees stored before
        # the last checkpoints: found there, not written again.
        {b'x/y/five': b'5\n'},
    ]
    result = [dict(base)]
    for step in steps:
        tree = dict(result[-1])
        for path, value in step.items():
            if value is None:
                del tree[path]
            else:
                tree[path] = value
        result.append(tree)
    return result


@pytest.fixture(scope='module')
def history(tmp_path_factory, hg):
    """The bundle (each manifest a delta against the previous, the first
    whole), Mercurial's changeset ids for it, oldest first, and the trees
    of those changesets."""
    tmp = tmp_path_factory.mktemp('edited-trees')
    repo, parent, files = hgcraft.Repo(), (), trees()
    for tree in files:
        parent = (repo.commit(tree, parents=parent),)
    m = repo.manifests
    for prev, rev in zip(m, m[1:]):
        rev.delta_base = prev.node
        rev.delta = hgcraft.small_delta(prev.text, rev.text)
    bundle = hgcraft.write(tmp / 'nested.hg', repo.bundle_v2())
    hg.repo_from_bundle(bundle, tmp / 'hg')
    hg('-R', tmp / 'hg', 'verify', '-q')
    return bundle, hg.nodes(tmp / 'hg'), files


def unbundled(bundle, repo, env):
    """The packs and metadata of `bundle` imported into `repo`."""
    init(repo)
    git('-c', 'fastimport.unpackLimit=0', 'cinnabar', 'unbundle', bundle,
        cwd=repo, extra_env=env)
    packs = sorted(p.name for p in (repo / '.git' / 'objects' / 'pack')
                   .glob('*.pack'))
    return packs, rev_parse(repo, METADATA_REF)


@pytest.mark.parametrize('checkpoint', [False, True])
def test_trees_let_go_of_come_back_the_same(history, tmp_path, checkpoint):
    bundle, nodes, files = history
    env = CHECKPOINT if checkpoint else {}
    kept = unbundled(bundle, tmp_path / 'kept', env)
    swept = unbundled(bundle, tmp_path / 'swept', {**env, **BUDGET_0})
    assert swept == kept
    assert len(kept[0]) > (2 if checkpoint else 0)
    commits = hg2git(tmp_path / 'swept', nodes)
    assert len(nodes) == len(files)
    for node, tree in zip(nodes, files):
        assert git_files(tmp_path / 'swept', commits[node]) == \
            expected_files(tree)


STORE = re.compile(r'cinnabar-helper: store: (\d+) objects written .*, '
                   r'(\d+) duplicates not written, '
                   r'(\d+) told new by an object of the pack they name, '
                   r'(\d+) checkpoints, '
                   r'(\d+) lookups in their packs past the filters '
                   r'\((\d+) found\), (\d+) filters in a file')
IN_FILE = {**CHECKPOINT, 'CINNABAR_TEST_FILTERS_IN_MEMORY': '0'}


def pack_ids(repo):
    """The object ids of each pack of `repo`, from `git show-index`."""
    ids = []
    for idx in sorted((repo / '.git' / 'objects' / 'pack').glob('*.idx')):
        out = git('show-index', input=idx.read_bytes(), cwd=repo).out
        ids.append([line.split()[1] for line in out.splitlines()])
    return ids


def test_objects_stored_before_a_checkpoint_not_written_again(history,
                                                              tmp_path):
    """A new object is looked for in the finished packs of the import
    (their .idx read with pread, helper/idx-lookup.c): found, it is not
    written again; trees are read back from them. Every object is in
    exactly one pack, and the packs hold what one pack holds without
    checkpoints; the same when the packs' filters are in a file
    (helper/filter-rows.c) rather than in memory."""
    bundle, nodes, files = history
    stats = {}
    for name, env in (('one', {}), ('many', CHECKPOINT), ('file', IN_FILE)):
        repo = tmp_path / name
        init(repo)
        result = git('-c', 'fastimport.unpackLimit=0', 'cinnabar',
                     'unbundle', bundle, cwd=repo,
                     extra_env={**env, **BUDGET_0, 'GIT_CINNABAR_TRACE': '1'})
        found = STORE.findall(result.err)
        assert len(found) == 1, result.describe()
        stats[name] = [int(n) for n in found[0]]
        stats[name + ' ids'] = pack_ids(repo)
        stats[name + ' metadata'] = rev_parse(repo, METADATA_REF)
    written, dups, told_new, checkpoints, lookups, hits, in_file = \
        stats['many']
    assert checkpoints > 2 and hits > 0, stats['many']
    # Trees and commits naming an object this pack holds first are not
    # looked for in the finished packs (helper/store.c,
    # names_new_object), and the packs are the same for it.
    assert 0 < told_new < written, stats['many']
    assert dups > 0 and dups == stats['one'][1], (stats['one'], dups)
    assert written == stats['one'][0]
    every = [i for ids in stats['many ids'] for i in ids]
    assert len(every) == len(set(every)) == written
    assert sorted(every) == sorted(stats['one ids'][0])
    # Every finished pack's filter read from the file (more than 8: its
    # rows were copied to a file twice as wide).
    assert stats['file'][6] == checkpoints > 8, stats['file']
    assert stats['file'][:6] == stats['many'][:6]
    assert stats['file ids'] == stats['many ids']
    assert stats['file metadata'] == stats['many metadata'] == \
        stats['one metadata']


def test_nginx_objects_told_new_are_in_one_pack(tmp_path):
    """nginx.hg with a checkpoint every 4096 objects (about 40 packs, most
    of their filters in a file; 2 at the default 131,072): the trees and
    commits told new because they name an object of the pack being
    written (helper/store.c, names_new_object) are in no other pack.
    Every object is in exactly one pack, the packs hold what the default
    two hold, and the metadata is the same."""
    bundle = Corpus(test_env.corpus_dir()).bundle(NGINX)
    found = {}
    for name, env in (('one', {}),
                      ('many', {'CINNABAR_TEST_CHECKPOINT': '4096'})):
        repo = tmp_path / name
        init(repo)
        result = git('-c', 'fastimport.unpackLimit=0', 'cinnabar',
                     'unbundle', bundle, cwd=repo,
                     extra_env={**env, 'GIT_CINNABAR_TRACE': '1'})
        stats = STORE.findall(result.err)
        assert len(stats) == 1, result.describe()
        found[name] = ([int(n) for n in stats[0]], pack_ids(repo),
                       rev_parse(repo, METADATA_REF))
    (written, _, told_new, checkpoints, *_), ids, metadata = found['many']
    assert checkpoints > 20 and told_new > written // 4, found['many'][0]
    every = [i for pack in ids for i in pack]
    assert len(every) == len(set(every)) == written
    assert sorted(every) == sorted(i for pack in found['one'][1]
                                   for i in pack)
    assert metadata == found['one'][2]
