"""Drop-in for git-cinnabar 0.7 users: fsck's marks through rollback,
against a real `hg serve`.

As git-cinnabar: refs/cinnabar/broken stays where it is across rollbacks
(it stops writes only while it is the current metadata); rolling back to
metadata newer than the checked one leaves refs/cinnabar/checked;
`--force` moves neither. Unlike git-cinnabar, rolling back from checked
metadata to an older one leaves refs/cinnabar/checked too (fsck checked
that metadata, not what it builds on), and the next fsck
checks everything.
"""

from lib.checks import assert_died_as_git_dies, assert_failed_for_people
from lib.checks import assert_no_traceback
from lib.git import METADATA_REF, clone, git, hg_url, object_types
from lib.git import rev_parse
from lib.plumbing import MetadataParts
from lib.push import hg_commit, make_hg_repo

CHECKED = 'refs/cinnabar/checked'
BROKEN = 'refs/cinnabar/broken'


def cinnabar(work, *args, **kwargs):
    result = git('cinnabar', *args, cwd=work, **kwargs)
    assert_no_traceback(result)
    return result


def fetch_new(hg, repo, work, name):
    hg_commit(hg, repo, {name: name + '\n'}, name)
    assert_no_traceback(git('fetch', '-q', 'origin', cwd=work))
    return rev_parse(work, METADATA_REF)


def candidates(work):
    return cinnabar(work, 'rollback', '--candidates').out.splitlines()


def test_fsck_marks_through_rollback(hg, hg_serve, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    work = tmp_path / 'work'
    clone(hg_url(hg_serve(repo).url), work, '-q')
    first = rev_parse(work, METADATA_REF)
    second = fetch_new(hg, repo, work, 'b')
    third = fetch_new(hg, repo, work, 'c')

    # Checked at the second: going back to the first leaves it there.
    cinnabar(work, 'rollback', second)
    assert cinnabar(work, 'fsck').returncode == 0
    assert rev_parse(work, CHECKED) == second
    cinnabar(work, 'rollback')
    assert rev_parse(work, METADATA_REF) == first
    assert rev_parse(work, CHECKED) == second
    assert candidates(work) == [f'{first} (current)']
    assert 'checked all the metadata' in cinnabar(work, 'fsck').err
    assert rev_parse(work, CHECKED) == first

    # Broken by hand at a newer metadata: writes refused there; a
    # rollback keeps the mark where it is, and writes work again.
    newer = fetch_new(hg, repo, work, 'd')
    assert newer not in (second, third)
    git('update-ref', BROKEN, METADATA_REF, cwd=work)
    hg_commit(hg, repo, {'e': 'e\n'}, 'e')
    refused = git('fetch', 'origin', cwd=work, check=False)
    assert_died_as_git_dies(refused)
    assert assert_failed_for_people(refused) == (
        'fatal: the cinnabar metadata is damaged (`git cinnabar fsck` found '
        f'problems in {newer}); not writing to it'), refused.describe()
    assert rev_parse(work, METADATA_REF) == newer
    cinnabar(work, 'rollback')
    assert rev_parse(work, METADATA_REF) == first
    assert rev_parse(work, BROKEN) == newer
    assert rev_parse(work, CHECKED) == first
    assert candidates(work) == [f'{first} (current, checked)']
    assert_no_traceback(git('fetch', '-q', 'origin', cwd=work))
    latest = rev_parse(work, METADATA_REF)
    assert latest != first and rev_parse(work, BROKEN) == newer

    # Going back to a metadata newer than the checked one, or with
    # --force: the marks stay.
    fetch_new(hg, repo, work, 'f')
    cinnabar(work, 'rollback')
    assert rev_parse(work, METADATA_REF) == latest
    assert rev_parse(work, CHECKED) == first
    cinnabar(work, 'rollback', '--force', first)
    assert rev_parse(work, CHECKED) == first
    assert rev_parse(work, BROKEN) == newer

    # fsck marks the damage it finds (a file revision's hg2git entry
    # removed, with plumbing); rolling back keeps the mark.
    assert cinnabar(work, 'fsck', '--full').returncode == 0
    assert rev_parse(work, CHECKED) == first
    parts = MetadataParts(work)
    entries = parts.notes('hg2git')
    types = object_types(work, [oid for _, oid, _ in entries.values()])
    blobs = [k for k, (_, oid, _) in entries.items() if types[oid] == 'blob']
    parts.edit_note('hg2git', sorted(blobs)[0], None)
    damaged = parts.store()
    assert_failed_for_people(git('cinnabar', 'fsck', '--full', cwd=work,
                                 check=False))
    assert rev_parse(work, BROKEN) == damaged
    cinnabar(work, 'rollback', '--fsck')
    assert rev_parse(work, METADATA_REF) == first
    assert rev_parse(work, BROKEN) == damaged
    assert candidates(work) == [f'{first} (current, checked)']
