"""The texts of large stored manifests kept on disk
(`.git/cinnabar/manifests/<node>`, helper/manifest-cache.h): an import
keeps the text of its last manifest, which the next fetch builds on and
the next push checks, and a fetch or push reads it back instead of making
it from the manifest's trees.  A kept text is used only when it hashes to
its node and the stored manifest still has the tree it was kept with;
otherwise it is removed and the text made from the trees.

Texts under 1 MiB are not kept: the tests lower that bound with
CINNABAR_TEST_MANIFEST_CACHE_MIN.  A clone's first manifest, a full
text that later snapshots may come against, is kept as they are.  The
oracle for a kept text is Mercurial's own (`hg debugdata -m`); for a
fetch, a fresh clone.
"""

from lib.checks import assert_no_traceback
from lib.git import clone, git, hg_url, rev_parse
from lib.push import hg_commit

KEEP_ALL = {'CINNABAR_TEST_MANIFEST_CACHE_MIN': '0'}
TIP = 'refs/remotes/origin/branches/default/tip'


def kept_dir(repo):
    return repo / '.git' / 'cinnabar' / 'manifests'


def manifest_node(hg, served, rev):
    return hg('-R', served, 'log', '-r', rev, '-T',
              '{manifest.node}').out.strip()


def served_repo(hg, tmp_path):
    """Three changesets over a few directories."""
    served = tmp_path / 'served'
    hg('init', served)
    hg_commit(hg, served, {f'd{i}/f{j}': f'{i}.{j}\n'
                           for i in range(4) for j in range(3)}, 'first')
    hg_commit(hg, served, {'d1/f0': 'changed\n'}, 'second')
    hg_commit(hg, served, {'d2/new': 'new\n'}, 'third')
    return served


def cloned(hg, hg_serve, tmp_path):
    served = served_repo(hg, tmp_path)
    url = hg_url(hg_serve(served).url)
    repo = tmp_path / 'clone'
    result = clone(url, repo, '--no-checkout', extra_env=KEEP_ALL)
    assert result.returncode == 0, result.describe()
    return served, url, repo


def kept_text(repo, node):
    header, text = (kept_dir(repo) / node).read_bytes().split(b'\n', 1)
    return header.split(b' '), text


def fetch_more(hg, served, repo, env=KEEP_ALL):
    hg_commit(hg, served, {'d1/f0': 'again\n', 'd3/f1': 'other\n'},
              'fourth')
    result = git('fetch', '-q', 'origin', cwd=repo, extra_env=env)
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    return result


def assert_same_as_fresh(url, repo, tmp_path):
    fresh = tmp_path / 'fresh'
    clone(url, fresh, '--no-checkout', check=True)
    for ref in (TIP, f'{TIP}^{{tree}}'):
        assert rev_parse(repo, ref) == rev_parse(fresh, ref)
    assert git('cinnabar', 'fsck', '--full', cwd=repo).returncode == 0


def test_clone_keeps_its_last_manifest_text(hg, hg_serve, tmp_path):
    served, _, repo = cloned(hg, hg_serve, tmp_path)
    node = manifest_node(hg, served, 'tip')
    assert sorted(p.name for p in kept_dir(repo).iterdir()) == \
        sorted([manifest_node(hg, served, '0'), node])
    (p1, p2, tree), text = kept_text(repo, node)
    assert text == hg('-R', served, 'debugdata', '-m', node).stdout
    assert p1.decode() == manifest_node(hg, served, 'tip~1')
    assert p2.decode() == '0' * 40
    manifest_commit = git('cinnabar', 'hg2git', node, cwd=repo).out.strip()
    assert tree.decode() == rev_parse(repo, f'{manifest_commit}^{{tree}}')


def test_fetch_builds_on_the_kept_text(hg, hg_serve, tmp_path):
    served, url, repo = cloned(hg, hg_serve, tmp_path)
    before = manifest_node(hg, served, 'tip')
    fetch_more(hg, served, repo)
    node = manifest_node(hg, served, 'tip')
    # The new last manifest is kept too (three at most are).
    assert sorted(p.name for p in kept_dir(repo).iterdir()) == \
        sorted([manifest_node(hg, served, '0'), before, node])
    assert kept_text(repo, node)[1] == \
        hg('-R', served, 'debugdata', '-m', node).stdout
    assert_same_as_fresh(url, repo, tmp_path)


def test_a_wrong_kept_text_is_not_used(hg, hg_serve, tmp_path):
    """A kept text that is not its node's (one file's revision changed,
    the header left as it was): the fetch makes the text from the trees
    instead, as the new manifest's id check would refuse one built on
    the wrong text, and removes the file."""
    served, url, repo = cloned(hg, hg_serve, tmp_path)
    node = manifest_node(hg, served, 'tip')
    path = kept_dir(repo) / node
    header, text = path.read_bytes().split(b'\n', 1)
    lines = text.splitlines(True)
    lines[0] = lines[0][:-42] + lines[1][-42:]
    path.write_bytes(header + b'\n' + b''.join(lines))
    fetch_more(hg, served, repo)
    assert not path.exists()
    assert_same_as_fresh(url, repo, tmp_path)


def test_a_kept_text_of_another_tree_is_not_used(hg, hg_serve, tmp_path):
    """A kept text whose node and parents are right but whose tree is not
    the stored manifest's (the metadata was made again, or by another
    tool): not used either."""
    served, url, repo = cloned(hg, hg_serve, tmp_path)
    node = manifest_node(hg, served, 'tip')
    path = kept_dir(repo) / node
    (p1, p2, _), text = kept_text(repo, node)
    other = rev_parse(repo, f'{TIP}~1^{{tree}}').encode()
    path.write_bytes(b' '.join([p1, p2, other]) + b'\n' + text)
    fetch_more(hg, served, repo)
    assert not path.exists()
    assert_same_as_fresh(url, repo, tmp_path)


def test_at_most_three_texts_are_kept(hg, hg_serve, tmp_path):
    served, _, repo = cloned(hg, hg_serve, tmp_path)
    kept = []
    for i in range(4):
        hg_commit(hg, served, {'d0/f0': f'round {i}\n'}, f'round {i}')
        kept.append(manifest_node(hg, served, 'tip'))
        git('fetch', '-q', 'origin', cwd=repo, extra_env=KEEP_ALL)
    assert sorted(p.name for p in kept_dir(repo).iterdir()) == \
        sorted(kept[-3:])


def test_small_texts_are_not_kept(hg, hg_serve, tmp_path):
    served = served_repo(hg, tmp_path)
    repo = tmp_path / 'clone'
    clone(hg_url(hg_serve(served).url), repo, '--no-checkout', check=True)
    assert not kept_dir(repo).exists()


def test_clear_removes_the_kept_texts(hg, hg_serve, tmp_path):
    _, _, repo = cloned(hg, hg_serve, tmp_path)
    assert kept_dir(repo).is_dir()
    git('cinnabar', 'clear', cwd=repo, check=True)
    assert not (repo / '.git' / 'cinnabar').exists()
