"""The caches of the id maps (.git/cinnabar/<map>.idx, helper/id-table.h):
each is of the notes commit it was made from, and is made again from the
notes tree whenever the metadata names another one (a fetch, a rollback,
another tool's fetch), is missing or damaged, and by fsck; the metadata
itself is git-cinnabar's, unchanged.

The served repository (a local hg path) starts as the first half of a
small corpus bundle; the rest is pulled into it and fetched.
"""

import pytest

from lib.git import METADATA_REF, NULL_ID, clone, git, hg2git, hg_url
from lib.git import rev_parse

BUNDLE = 'rebase.hg'
# The notes commits of the maps: parents 3, 4 and 5 of the metadata commit.
MAPS = {'hg2git': 3, 'git2hg': 4, 'files-meta': 5}


def cache(repo, name):
    return repo / '.git' / 'cinnabar' / f'{name}.idx'


def cache_commit(repo, name):
    """The notes commit a cache says it is of (header bytes 8 to 28)."""
    return cache(repo, name).read_bytes()[8:28].hex()


def assert_caches_current(repo, names=MAPS):
    for name in names:
        assert cache_commit(repo, name) == \
            rev_parse(repo, f'{METADATA_REF}^{MAPS[name]}'), name


@pytest.fixture
def history(hg, hg_repos, tmp_path):
    """(full, served, clone of the served half, changesets of the second
    half)."""
    full = hg_repos.get(BUNDLE)
    nodes = hg.nodes(full)
    served = hg_repos.copy(BUNDLE, tmp_path / 'served',
                           rev=len(nodes) // 2)
    repo = tmp_path / 'clone'
    clone(hg_url(served), repo, '--no-checkout', check=True)
    return full, served, repo, nodes[len(nodes) // 2 + 1:]


def fetch_the_rest(hg, full, served, repo):
    hg('-R', served, 'pull', '-q', full)
    git('fetch', '-q', 'origin', cwd=repo, check=True)


def test_caches_of_clone_and_fetch(hg, history):
    full, served, repo, later = history
    assert_caches_current(repo)
    fetch_the_rest(hg, full, served, repo)
    assert_caches_current(repo)
    assert NULL_ID not in hg2git(repo, later).values()


def test_rollback_leaves_a_cache_of_the_later_metadata(hg, history):
    full, served, repo, later = history
    fetch_the_rest(hg, full, served, repo)
    fetched = hg2git(repo, later)
    git('cinnabar', 'rollback', cwd=repo, check=True)
    # The caches are of the metadata rolled back from: not used.
    assert set(hg2git(repo, later).values()) == {NULL_ID}
    # Made again when used (the others, git2hg and files-meta, too).
    assert_caches_current(repo, ['hg2git'])
    git('fetch', '-q', 'origin', cwd=repo, check=True)
    assert hg2git(repo, later) == fetched


def test_metadata_moved_by_another_tool(hg, history):
    """A cache of an older notes commit, as left by a fetch another tool
    made (git-cinnabar 0.7.5 knows nothing of them): not used."""
    full, served, repo, later = history
    old = {name: cache(repo, name).read_bytes() for name in MAPS}
    fetch_the_rest(hg, full, served, repo)
    fetched = hg2git(repo, later)
    for name, data in old.items():
        cache(repo, name).write_bytes(data)
    assert hg2git(repo, later) == fetched
    assert_caches_current(repo, ['hg2git'])


@pytest.mark.parametrize('damage', ['missing', 'truncated', 'commit'])
def test_unusable_cache_is_made_again(hg, history, damage):
    full, served, repo, later = history
    fetch_the_rest(hg, full, served, repo)
    fetched = hg2git(repo, later)
    path = cache(repo, 'hg2git')
    data = path.read_bytes()
    if damage == 'missing':
        path.unlink()
    elif damage == 'truncated':
        path.write_bytes(data[:-41])
    else:
        path.write_bytes(data[:8] + bytes(20) + data[28:])
    assert hg2git(repo, later) == fetched
    assert path.read_bytes() == data


@pytest.mark.parametrize('damage', ['swapped', 'flipped', 'elsewhere',
                                    'index'])
def test_a_damaged_cache_is_not_used_in_a_fetch(hg, hg_repos, hg_serve,
                                                tmp_path, damage):
    """A cache of the right notes commit whose records say otherwise (two
    values swapped, a byte of one flipped) is found out by its CRCs and
    made again, saying so once: the fetch gives the new changeset its
    right parent and writes the notes of a fresh clone. So is one whose
    changed record no lookup reads (the walk writing the notes checks
    them all), or whose index (here the last block's CRC) changed."""
    full = hg_repos.get(BUNDLE)
    nodes = hg.nodes(full)
    half = len(nodes) // 2
    served = hg_repos.copy(BUNDLE, tmp_path / 'served', rev=half)
    url = hg_url(hg_serve(served).url)
    repo = tmp_path / 'clone'
    clone(url, repo, '--no-checkout', check=True)
    new = next(node for node in nodes if node not in hg.nodes(served))
    parent = hg('-R', full, 'log', '-r', new, '-T', '{p1.node}').out
    other = next(node for node in hg.nodes(served) if node != parent)
    path = cache(repo, 'hg2git')
    data = bytearray(path.read_bytes())
    # A record is its key, then its value.
    a, b = (data.index(bytes.fromhex(node)) + 20 for node in (parent, other))
    if damage == 'swapped':
        data[a:a + 20], data[b:b + 20] = data[b:b + 20], data[a:a + 20]
    elif damage == 'flipped':
        data[a + 7] ^= 0x10
    elif damage == 'elsewhere':
        data[b + 7] ^= 0x10
    else:
        data[-1] ^= 0x10
    path.write_bytes(bytes(data))
    hg('-R', served, 'pull', '-q', full)
    result = git('fetch', '-q', 'origin', cwd=repo)
    assert result.returncode == 0, result.describe()
    assert [line for line in result.err.splitlines()
            if 'damaged' in line] == [
        "warning: '%s' is damaged; making it again from the metadata"
        % path], result.describe()
    ids = hg2git(repo, [parent, new])
    assert rev_parse(repo, ids[new] + '^') == ids[parent]
    fresh = tmp_path / 'fresh'
    clone(url, fresh, '--no-checkout', check=True)
    for number in MAPS.values():
        notes = f'{METADATA_REF}^{number}^{{tree}}'
        assert rev_parse(repo, notes) == rev_parse(fresh, notes)
    assert_caches_current(repo)
    result = git('cinnabar', 'fsck', cwd=repo, check=False)
    assert result.returncode == 0, result.describe()


def test_fsck_makes_the_caches_again(hg, history):
    """fsck checks the notes trees, not the caches: a cache of the right
    commit whose records say otherwise is replaced."""
    full, served, repo, later = history
    fetch_the_rest(hg, full, served, repo)
    fetched = hg2git(repo, later)
    path = cache(repo, 'hg2git')
    data = path.read_bytes()
    # Each record's value (bytes 20 to 40 of the 40) zeroed.
    header = 36 + 256 * 4 + 4
    nr = int.from_bytes(data[28:36], 'big')
    records = bytearray(data[header:header + 40 * nr])
    for i in range(nr):
        records[40 * i + 20:40 * i + 40] = bytes(20)
    path.write_bytes(data[:header] + bytes(records) +
                     data[header + 40 * nr:])
    result = git('cinnabar', 'fsck', '--full', cwd=repo, check=False)
    assert result.returncode == 0, result.describe()
    assert path.read_bytes() == data
    assert hg2git(repo, later) == fetched


def test_spilled_import_gives_the_same_maps(hg, hg_repos, tmp_path):
    """An import merging its new entries into its tables every 7 of
    them (CINNABAR_TEST_NOTES_SPILL) ends with the same maps and
    caches."""
    full = hg_repos.get(BUNDLE)
    clones = {}
    for spill in ('7', '100000'):
        repo = clones[spill] = tmp_path / f'spill-{spill}'
        clone(hg_url(full), repo, '--no-checkout', check=True,
              extra_env={'CINNABAR_TEST_NOTES_SPILL': spill})
    assert rev_parse(clones['7'], METADATA_REF) == \
        rev_parse(clones['100000'], METADATA_REF)
    for name in MAPS:
        assert cache(clones['7'], name).read_bytes() == \
            cache(clones['100000'], name).read_bytes(), name
    nodes = hg.nodes(full)
    assert hg2git(clones['7'], nodes) == hg2git(clones['100000'], nodes)


def notes_dirs(repo, commit):
    """{path: tree id} of the directories of a notes commit's tree."""
    out = git('ls-tree', '-r', '-t', '-z', commit, cwd=repo,
              check=True).stdout.split(b'\0')[:-1]
    dirs = {}
    for entry in out:
        info, path = entry.split(b'\t', 1)
        mode, kind, oid = info.split()
        if kind == b'tree':
            dirs[path] = oid
    return dirs


def test_fetch_writes_only_the_notes_directories_it_changes(
        hg, hg_repos, tmp_path):
    """Storing the maps after a fetch of one changeset hashes again none
    of their directories whose entries are the same (helper/notes-map.c:
    they are reused by id), and gives the trees a fresh clone has."""
    bundle = 'issue4438-r1.hg'
    full = hg_repos.get(bundle)
    served = hg_repos.copy(bundle, tmp_path / 'served')
    hg('-R', served, '--config', 'extensions.strip=', 'strip', '-q',
       '--no-backup', '-r', 'tip')
    repo = tmp_path / 'clone'
    clone(hg_url(served), repo, '--no-checkout', check=True)
    old = {name: rev_parse(repo, f'{METADATA_REF}^{MAPS[name]}')
           for name in MAPS}
    hg('-R', served, 'pull', '-q', full)
    result = git('fetch', '-q', 'origin', cwd=repo, check=True,
                 extra_env={'GIT_CINNABAR_TRACE': '1'})
    unchanged = 0
    for name in MAPS:
        before = notes_dirs(repo, old[name])
        after = notes_dirs(repo, f'{METADATA_REF}^{MAPS[name]}')
        unchanged += sum(before.get(path) == oid
                         for path, oid in after.items())
    # hg2git and git2hg have a directory per first byte (181 here).
    assert unchanged > 50
    stats = [line for line in result.err.splitlines()
             if 'cinnabar-helper: store:' in line]
    assert len(stats) == 1, result.describe()
    duplicates = int(stats[0].split(', ')[1].split()[0])
    assert duplicates < unchanged, stats[0]
    fresh = tmp_path / 'fresh'
    clone(hg_url(full), fresh, '--no-checkout', check=True)
    for name in MAPS:
        assert rev_parse(repo, f'{METADATA_REF}^{MAPS[name]}^{{tree}}') \
            == rev_parse(fresh, f'{METADATA_REF}^{MAPS[name]}^{{tree}}'), \
            name


def test_a_fetch_removes_what_killed_helpers_left(hg, history):
    """The helper writes a cache to `<map>-<pid>-<random>` (a manifest
    text to `manifests/text-<pid>-<random>`) and renames it into place;
    what a SIGKILLed helper left is removed by the next fetch: files of a
    process that is gone, and those named without a process (an older
    version's) once an hour old. Those of a live process stay."""
    import os
    import subprocess
    import time
    full, served, repo, _ = history
    gone = subprocess.Popen(['true'])
    gone.wait()
    live = os.getpid()
    cinnabar = repo / '.git' / 'cinnabar'
    (cinnabar / 'manifests').mkdir(exist_ok=True)
    left = [f'hg2git-{gone.pid}-AbC123', f'git2hg-{gone.pid}-AbC123',
            f'files-meta-{gone.pid}-AbC123', 'hg2git-Old123',
            f'manifests/text-{gone.pid}-AbC123', 'manifests/text-Old123']
    kept = [f'hg2git-{live}-AbC123', f'manifests/text-{live}-AbC123',
            'git2hg-New123', 'manifests/text-New123']
    an_hour_ago = time.time() - 3700
    for name in left + kept:
        (cinnabar / name).write_bytes(b'x' * 1000)
        if 'Old' in name:
            os.utime(cinnabar / name, (an_hour_ago, an_hour_ago))
    fetch_the_rest(hg, full, served, repo)
    assert [name for name in left if (cinnabar / name).exists()] == []
    assert [name for name in kept if (cinnabar / name).exists()] == kept
    assert_caches_current(repo)
