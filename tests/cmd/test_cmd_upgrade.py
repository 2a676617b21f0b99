"""Metadata of other formats, crafted with git plumbing: every command
refuses it with a message saying what to run, and `git cinnabar upgrade`
upgrades what it can and explains the rest.

Formats (see cinnabar/metadata.py): git-cinnabar before 0.4 kept no
metadata commit (refs/cinnabar/hg2git, refs/notes/cinnabar, ...); 0.4
wrote flags without `unified-manifests-v2` (0.5.0's betas had
`unified-manifests`); 0.5 to 0.7 write `files-meta unified-manifests-v2`;
a flag this version does not know comes from a newer version.
"""

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import METADATA_REF, clone, git, hg_url, lasting_refs, refs
from lib.git import rev_parse
from lib.plumbing import MetadataParts, commit_tree, parents, tree_of

OLDER = 'run `git cinnabar upgrade`'
NEWER = 'upgrade git-cinnabar'


@pytest.fixture
def repo(corpus, tmp_path):
    repo = tmp_path / 'clone'
    clone(hg_url(corpus.bundle('renames.hg')), repo, '--no-checkout')
    return repo


def set_flags(repo, text):
    """Replace the metadata commit by one with the flags `text`."""
    current = rev_parse(repo, METADATA_REF)
    new = commit_tree(repo, tree_of(repo, current), parents(repo, current),
                      text.encode())
    git('update-ref', METADATA_REF, new, cwd=repo)
    return new


def other_bundle(corpus):
    return hg_url(corpus.bundle('test-manifest.hg'))


def assert_all_refuse(repo, corpus, hint):
    """hg2git, fsck and a fetch of something new all refuse, saying
    `hint`, and change no ref (but the scratch refs of imports)."""
    before = lasting_refs(repo)
    head = rev_parse(repo, 'refs/remotes/origin/HEAD')
    for args in (('cinnabar', 'git2hg', head), ('cinnabar', 'fsck'),
                 ('fetch', other_bundle(corpus), 'refs/heads/*:refs/o/*')):
        result = git(*args, cwd=repo, check=False)
        assert_failed_for_people(result)
        assert hint in result.err, result.describe()
    assert lasting_refs(repo) == before


def upgrade(repo):
    return git('cinnabar', 'upgrade', cwd=repo, check=False)


def test_current_format_needs_nothing(repo):
    before = refs(repo)
    result = upgrade(repo)
    assert result.returncode == 0 and 'already' in result.out
    assert refs(repo) == before


def test_flags_written_differently_are_rewritten(repo, corpus):
    good = rev_parse(repo, METADATA_REF)
    set_flags(repo, 'unified-manifests-v2  files-meta')
    assert_all_refuse(repo, corpus, OLDER)
    result = upgrade(repo)
    assert result.returncode == 0, result.describe()
    assert 'rewrote the metadata flags' in result.out
    # Same parts, same flags: the very commit git-cinnabar wrote.
    assert rev_parse(repo, METADATA_REF) == good
    assert git('cinnabar', 'fsck', '--full', cwd=repo,
               check=False).returncode == 0


@pytest.mark.parametrize('flags', ['files-meta unified-manifests',
                                   'files-meta', ''])
def test_before_0_5_cannot_be_upgraded_in_place(repo, corpus, flags):
    set_flags(repo, flags)
    assert_all_refuse(repo, corpus, OLDER)
    before = refs(repo)
    result = upgrade(repo)
    assert_failed_for_people(result)
    assert 'before 0.5' in result.err and 'clear' in result.err
    assert refs(repo) == before
    assert_no_traceback(git('cinnabar', 'clear', cwd=repo))
    assert_no_traceback(git('fetch', 'origin', cwd=repo))
    assert git('cinnabar', 'fsck', cwd=repo, check=False).returncode == 0


def test_unknown_flag_is_a_newer_version(repo, corpus):
    set_flags(repo, 'files-meta unified-manifests-v2 some-future-flag')
    assert_all_refuse(repo, corpus, NEWER)
    result = upgrade(repo)
    assert_failed_for_people(result)
    assert NEWER in result.err and 'some-future-flag' in result.err


def test_before_0_4_refs(repo, corpus):
    metadata = rev_parse(repo, METADATA_REF)
    hg2git = MetadataParts(repo).parts['hg2git']
    git('update-ref', 'refs/cinnabar/hg2git', hg2git, cwd=repo)
    git('update-ref', 'refs/notes/cinnabar', metadata, cwd=repo)
    git('update-ref', '-d', METADATA_REF, cwd=repo)
    before = lasting_refs(repo)
    result = git('fetch', other_bundle(corpus), 'refs/heads/*:refs/o/*',
                 cwd=repo, check=False)
    assert_failed_for_people(result)
    assert OLDER in result.err and 'before 0.4' in result.err
    result = upgrade(repo)
    assert_failed_for_people(result)
    assert 'before 0.4' in result.err and 'reclone' in result.err
    assert lasting_refs(repo) == before


def test_leftover_refs_next_to_current_metadata_are_removed(repo):
    hg2git = MetadataParts(repo).parts['hg2git']
    git('update-ref', 'refs/cinnabar/hg2git', hg2git, cwd=repo)
    result = upgrade(repo)
    assert result.returncode == 0, result.describe()
    assert 'refs/cinnabar/hg2git' in result.out
    assert rev_parse(repo, 'refs/cinnabar/hg2git') == ''
