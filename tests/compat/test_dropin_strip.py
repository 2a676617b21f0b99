"""Drop-in for git-cinnabar 0.7 users: `git cinnabar strip` (the `strip`
experiment), against a real `hg serve`.

Stripping a changeset forgets it and its descendants (hg2git, git2hg),
keeps the rest (other branch, ancestors), leaves clean metadata (`fsck
--full`) chained to the previous one (`rollback` undoes it); the next
fetch imports them again as the same commits. Refusals (no experiment,
unknown name, a commit of no changeset, broken metadata) change nothing.
"""

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import METADATA_REF, NULL_ID, clone, git, hg2git, hg_url, refs
from lib.git import rev_parse
from lib.push import Author, git_commit, hg_commit, make_hg_repo

STRIP = ('-c', 'cinnabar.experiments=strip', 'cinnabar', 'strip')


def strip(work, *names, check=True):
    result = git(*STRIP, *names, cwd=work, check=check)
    assert_no_traceback(result)
    return result


def assert_refused(work, *names, reason, config=STRIP):
    """`strip names` fails with exit code 128 (git's die()) and the error
    line `reason`, changing no ref."""
    before = refs(work)
    result = git(*config, *names, cwd=work, check=False)
    assert result.returncode == 128, result.describe()
    assert assert_failed_for_people(result) == reason, result.describe()
    assert refs(work) == before


def damaged(work):
    """The line refusing writes to a metadata marked broken."""
    return ('fatal: the cinnabar metadata is damaged (`git cinnabar fsck` '
            f'found problems in {rev_parse(work, METADATA_REF)}); not '
            'writing to it')


def test_strip(hg, hg_serve, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    a = hg('-R', repo, 'log', '-r', '.', '-T', '{node}').out
    b = hg_commit(hg, repo, {'b': 'b\n'}, 'b')
    c = hg_commit(hg, repo, {'c': 'c\n'}, 'c')
    hg('-R', repo, 'update', '-q', '0')
    d = hg_commit(hg, repo, {'d': 'd\n'}, 'd', branch='foo')
    work = tmp_path / 'work'
    clone(hg_url(hg_serve(repo).url), work, '-q')
    mapping = hg2git(work, [a, b, c, d])
    first = rev_parse(work, METADATA_REF)

    assert_refused(work, b, config=('cinnabar', 'strip'),
                   reason='fatal: git cinnabar strip is an experiment')
    assert_refused(work, 'nosuchthing',
                   reason="fatal: bad revision 'nosuchthing'")
    (work / 'local').write_text('local\n')
    git('add', 'local', cwd=work)
    local = git_commit(work, 'local', Author('L', 'l@x'), '1700000000 +0000')
    assert_refused(work, local, reason=f'fatal: {local} is not the commit '
                   'of a Mercurial changeset')

    # A full Mercurial id (the helper refused 40 digits), from a
    # subdirectory (the notes tree was read from there, finding nothing).
    (work / 'sub').mkdir()
    assert strip(work / 'sub', b).out == ''
    after = hg2git(work, [a, b, c, d])
    assert after == {a: mapping[a], b: NULL_ID, c: NULL_ID, d: mapping[d]}
    candidates = git('cinnabar', 'rollback', '--candidates', cwd=work).out
    assert candidates.split()[1:] == ['(current)', first]
    assert git('cinnabar', 'fsck', '--full', cwd=work).returncode == 0
    assert_no_traceback(git('fetch', '-q', 'origin', cwd=work))
    assert hg2git(work, [a, b, c, d]) == mapping

    # By git commit, then undone by rollback.
    before = rev_parse(work, METADATA_REF)
    strip(work, mapping[c])
    assert hg2git(work, [b, c]) == {b: mapping[b], c: NULL_ID}
    git('update-ref', 'refs/cinnabar/broken', METADATA_REF, cwd=work)
    assert_refused(work, mapping[b], reason=damaged(work))
    git('cinnabar', 'rollback', cwd=work)
    assert rev_parse(work, METADATA_REF) == before
    assert hg2git(work, [a, b, c, d]) == mapping
