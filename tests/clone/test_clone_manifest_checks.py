"""Manifests are checked at import: their ids (unless cinnabar.check turns
that off) and their order (always).

The bundles are written by the test (lib/crafted.py) with correct ids
except where a test says otherwise: a malformed manifest (a path listed
twice, paths out of order) has a valid id, so only the order check
refuses it, whether it comes whole or as a small delta.  Each refusal
leaves nothing behind; the well-formed control clones, and Mercurial
verifies it.
"""

import struct

import pytest

from lib.checks import assert_failed_for_people
from lib.bundlefmt import full_delta, node_id
from lib.crafted import History, manifest_line
from lib.git import clone, git, hg_url, refs

A = (b'a', b'one\n')
A_TXT = (b'a.txt', b'two\n')
A_B = (b'a/b', b'three\n')
B = (b'b', b'four\n')
C = (b'c', b'five\n')


def text(*entries):
    return b''.join(manifest_line(p, c) for p, c in entries)


def insert(at, data):
    """A delta inserting `data` at offset `at`."""
    return struct.pack('>III', at, at, len(data)) + data


def write(history, tmp_path, name='crafted.hg'):
    path = tmp_path / name
    path.write_bytes(history.bundle())
    return hg_url(str(path))


def clone_ok(url, tmp_path, *options, name='clone'):
    dest = tmp_path / name
    result = clone(url, dest, '--no-checkout', *options)
    return dest, result


def assert_refused(url, tmp_path, message, *options):
    result = clone(url, tmp_path / 'clone', '--no-checkout', *options,
                   check=False)
    assert_failed_for_people(result)
    assert message in result.err, result.describe()
    assert not (tmp_path / 'clone').exists() or refs(tmp_path / 'clone') == {}
    return result


def single(*entries):
    history = History()
    history.add(dict(entries), manifest_text=text(*entries))
    return history


def test_well_formed_manifest_clones(hg, tmp_path):
    """The control, which also shows that Mercurial accepts what
    lib/crafted.py writes."""
    history = second_revision(B)
    url = write(history, tmp_path)
    hg.repo_from_bundle(tmp_path / 'crafted.hg', tmp_path / 'hg')
    hg('-R', tmp_path / 'hg', 'verify', '-q')
    dest, _ = clone_ok(url, tmp_path)
    tip = git('rev-parse', 'HEAD^{tree}', cwd=dest).out.strip()
    names = git('ls-tree', '-r', '--name-only', tip, cwd=dest).out.split()
    assert names == ['a', 'a.txt', 'b', 'c']


@pytest.mark.parametrize('entries', [
    pytest.param((A, A), id='listed-twice'),
    pytest.param((B, A), id='unsorted'),
])
def test_badly_ordered_manifest_is_refused(entries, tmp_path):
    history = History()
    history.add(dict(entries), manifest_text=text(*entries))
    assert_refused(write(history, tmp_path), tmp_path,
                   'paths must be sorted and listed once')


@pytest.mark.parametrize('entries', [
    pytest.param((A, A_B), id='adjacent'),
    pytest.param((A, A_TXT, A_B), id='apart'),
])
def test_file_and_directory_is_imported_with_a_warning(entries, tmp_path):
    """Mercurial stores such manifests (its own test bundle tampered.hg
    has `back` and `back/test`) and git-cinnabar imports them, git
    keeping the directory: refusing them would lose those commit ids."""
    dest, result = clone_ok(write(single(*entries), tmp_path), tmp_path)
    assert "lists 'a/b' under a path that is also a file" in result.err
    tip = git('rev-parse', 'HEAD^{tree}', cwd=dest).out.strip()
    names = git('ls-tree', '-r', '--name-only', tip, cwd=dest).out.split()
    assert 'a/b' in names and 'a' not in names


def second_revision(added, at_end=False):
    """Revision 1 lists a, a.txt and c; revision 2 comes as a delta
    adding `added` after a.txt, or at the end."""
    history = History()
    first = history.add(dict([A, A_TXT, C]))
    at = len(first) if at_end else len(text(A, A_TXT))
    line = manifest_line(*added)
    history.add(dict([added]), manifest_text=first[:at] + line + first[at:],
                delta=insert(at, line))
    return history


def test_small_delta_breaking_order_is_refused(tmp_path):
    assert_refused(write(second_revision(B, at_end=True), tmp_path),
                   tmp_path, "'b' comes after 'c'")


def wrong_id(kind, tmp_path):
    history = History()
    history.add(dict([A, B]), wrong=kind)
    return write(history, tmp_path)


@pytest.mark.parametrize('check', [None, 'all', 'no-nodeid,no-files',
                                   'none,manifests', 'nodeid,bogus'])
def test_wrong_manifest_id_is_refused(check, tmp_path):
    options = ['-c', f'cinnabar.check={check}'] if check else []
    result = assert_refused(wrong_id('manifest', tmp_path), tmp_path,
                            'manifest', *options)
    assert 'does not match its contents' in result.err
    if check and 'bogus' in check:
        assert "unknown value 'bogus' ignored" in result.err


@pytest.mark.parametrize('late', [False, True], ids=['early', 'late'])
def test_wrong_manifest_id_reported_before_wrong_files(late, tmp_path,
                                                       monkeypatch):
    """Manifest ids are checked from the spool, as buffers free up, while
    the files are imported and checked: a manifest checked after the files
    (all of them, late: CINNABAR_TEST_PRECHECK_LATE) still comes first in
    the changegroup, and its failure is the one reported."""
    if late:
        monkeypatch.setenv('CINNABAR_TEST_PRECHECK_LATE', '1')
    history = History()
    history.add(dict([A, B]), wrong='manifest')
    history.add(dict([A, B, C]))
    history.add({b'd': b'six\n'}, wrong='file')
    result = assert_refused(write(history, tmp_path), tmp_path,
                            'does not match its contents')
    assert 'manifest ' in result.err, result.describe()
    assert 'file revision' not in result.err, result.describe()
    assert result.err.count('does not match') == 1, result.describe()


@pytest.mark.parametrize('late', [False, True], ids=['early', 'late'])
def test_manifests_checked_late_clone_the_same(late, hg, tmp_path,
                                               monkeypatch):
    """Whenever the early check gets to the manifests, the clone is the
    same: every id checked, Mercurial's history, the same commits."""
    if late:
        monkeypatch.setenv('CINNABAR_TEST_PRECHECK_LATE', '1')
    history = History()
    entries = [A, B]
    for i in range(12):
        entries = entries + [(b'f%02d' % i, b'%d\n' % i)]
        history.add(dict(entries))
    url = write(history, tmp_path)
    hg.repo_from_bundle(tmp_path / 'crafted.hg', tmp_path / 'hg')
    hg_files = hg('-R', tmp_path / 'hg', 'files', '-r', 'tip',
                  cwd=tmp_path / 'hg').out.split()
    dest, result = clone_ok(url, tmp_path)
    assert 'warning' not in result.err, result.describe()
    count = git('rev-list', '--count', 'HEAD', cwd=dest).out.strip()
    assert count == '12'
    names = git('ls-tree', '-r', '--name-only', 'HEAD', cwd=dest).out.split()
    assert names == hg_files
    git('cinnabar', 'fsck', '--full', cwd=dest)


@pytest.mark.parametrize('check', ['no-manifests', 'none', 'false'])
def test_manifest_id_check_can_be_turned_off(check, tmp_path):
    dest, result = clone_ok(wrong_id('manifest', tmp_path), tmp_path,
                            '-c', f'cinnabar.check={check}')
    assert 'warning' not in result.err, result.describe()


@pytest.mark.parametrize('kind, off', [('changeset', 'no-nodeid'),
                                       ('file', 'no-files')])
def test_other_id_checks_on_by_default_and_turned_off(kind, off, tmp_path):
    url = wrong_id(kind, tmp_path)
    result = assert_refused(url, tmp_path, 'does not match its contents')
    assert kind in result.err
    clone_ok(url, tmp_path, '-c', f'cinnabar.check={off}', name='off')


@pytest.mark.parametrize('manifest', [
    pytest.param(b'\n' + text(A, B), id='empty-first-line'),
    pytest.param(text(A) + b'\n' + text(B), id='empty-line'),
])
def test_manifest_with_an_empty_line_is_refused(manifest, tmp_path):
    """A line break before the NUL would make a path of two lines (the
    fuzzer found one taken, after which fsck could not find the file's
    parents at that path); Mercurial does not read such a manifest."""
    history = History()
    history.add(dict([A, B]), manifest_text=manifest)
    assert_refused(write(history, tmp_path), tmp_path,
                   'malformed manifest revision')


@pytest.mark.parametrize('first_size', [1 << 20, 5 << 20, 0])
def test_first_wrong_file_id_is_the_one_reported(first_size, tmp_path):
    """File ids are checked on worker threads, which finish out of order:
    with many wrong ones, the error names the first in the changegroup
    (files come sorted by path), as a check done in turn would, even when
    it takes longest to hash (1 MB, then small files; 5 MB, too large to
    be copied for the workers, hashed on a thread of its own), and when
    all are small (those queued after the first failure are finished
    too, and fail as well)."""
    files = {b'f%02d' % i: b'content %d\n' % i for i in range(40)}
    if first_size:
        files[b'f00'] = b'x' * first_size
    history = History()
    history.add(files, wrong='file')
    first = node_id(files[b'f00'] + b'!').hex()
    result = assert_refused(write(history, tmp_path), tmp_path,
                            f'file revision {first} does not match its '
                            'contents')
    assert result.err.count('does not match') == 1, result.describe()


@pytest.mark.parametrize('size', [1 << 20, 5 << 20])
def test_wrong_file_id_reported_before_a_later_malformed_file(size,
                                                              tmp_path):
    """The import goes on while a file's id is checked: a malformed file
    revision after it must not hide the wrong id that came first."""
    files = {b'f0': b'x' * size, b'f1': b'one\n'}
    history = History()
    history.add(files, wrong='file')
    # f1's delta (same length) replaces bytes past the end of its base.
    data = history.bundle().replace(full_delta(b'', files[b'f1']),
                                    struct.pack('>III', 5, 10, 4) + b'bad\n')
    path = tmp_path / 'crafted.hg'
    path.write_bytes(data)
    first = node_id(files[b'f0'] + b'!').hex()
    assert_refused(hg_url(str(path)), tmp_path,
                   f'file revision {first} does not match its contents')


@pytest.mark.parametrize('size', [5 << 20, 6 << 20])
def test_large_file_revision_with_a_wrong_id_is_refused(size, tmp_path):
    """A file revision too large to be copied for the workers, alone or
    followed by another of the same file (its delta base), is hashed
    where it is while it is stored: a wrong id is still refused."""
    history = History()
    history.add({b'big': b'y' * size}, wrong='file')
    history.add({b'big': b'y' * size + b'more\n'})
    first = node_id(b'y' * size + b'!').hex()
    assert_refused(write(history, tmp_path), tmp_path,
                   f'file revision {first} does not match its contents')
