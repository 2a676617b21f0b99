"""Push settings and Mercurial's own conventions.

- `cinnabar.similarity`: a file renamed with edits is recorded as a copy
  when git's rename detection pairs it at that similarity, and not without
  the setting (exact renames only).
- A merge that takes a file unchanged from its second parent keeps that
  side's file revision and does not list the file as changed, as `hg
  merge` + `hg commit` would make it.
- `cinnabar.data`: on a non-publishing server, pushed changesets stay
  drafts and, by default (`phase`), their metadata is not kept (a fetch
  brings them back, as the same commits); `always` keeps it.
"""

import pytest

from lib.git import NULL_ID, clone, git, git2hg
from lib.push import BRANCH_TIP, Author, assert_hg_verify, assert_pushed
from lib.push import changeset, git_commit, make_hg_repo, push
from lib.push import writable_remote

TIP = BRANCH_TIP.format('default')
AUTHOR = Author('Option Tester', 'options@example.com')
LINES = ''.join(f'line {n}\n' for n in range(40))


def clone_for_push(hg, hg_serve, tmp_path, monkeypatch, files,
                   transport='http', hgrc=''):
    server = make_hg_repo(hg, tmp_path / 'server', files)
    with open(server / '.hg' / 'hgrc', 'a') as config:
        config.write(hgrc)
    src = writable_remote(transport, server, hg_serve, tmp_path,
                          monkeypatch.setenv)
    work = tmp_path / 'work'
    clone(src.url, work)
    return server, work


@pytest.mark.parametrize('similarity', (None, '50'))
def test_rename_with_edits(similarity, hg, hg_serve, tmp_path, monkeypatch):
    server, work = clone_for_push(hg, hg_serve, tmp_path, monkeypatch,
                                  {'old.txt': LINES})
    if similarity:
        git('config', 'cinnabar.similarity', similarity, cwd=work)
    git('mv', 'old.txt', 'new.txt', cwd=work)
    (work / 'new.txt').write_text(LINES + 'one more line\n')
    git('add', 'new.txt', cwd=work)
    git_commit(work, 'Rename and edit', AUTHOR, '1700000000 +0200')
    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    assert_hg_verify(hg, server)
    cs = changeset(hg, server, 'tip')
    expected = {'new.txt': 'old.txt'} if similarity else {}
    assert cs.copies == expected


def test_merge_keeps_the_other_sides_revision(hg, hg_serve, tmp_path,
                                              monkeypatch):
    server, work = clone_for_push(hg, hg_serve, tmp_path, monkeypatch,
                                  {'base.txt': 'base\n'})
    git('checkout', '-q', '-b', 'side', cwd=work)
    (work / 'side.txt').write_text('from the side\n')
    git('add', 'side.txt', cwd=work)
    git_commit(work, 'Side', AUTHOR, '1700000000 +0000')
    git('checkout', '-q', '-', cwd=work)
    (work / 'main.txt').write_text('on the main line\n')
    git('add', 'main.txt', cwd=work)
    git_commit(work, 'Main', AUTHOR, '1700000100 +0000')
    git('merge', '-q', '--no-edit', 'side', cwd=work,
        extra_env={'GIT_AUTHOR_NAME': AUTHOR.name,
                   'GIT_AUTHOR_EMAIL': AUTHOR.email,
                   'GIT_COMMITTER_NAME': AUTHOR.name,
                   'GIT_COMMITTER_EMAIL': AUTHOR.email})
    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    assert_hg_verify(hg, server)
    merge = changeset(hg, server, 'tip')
    assert len(merge.parents) == 2
    assert merge.files == set()
    revisions = hg('-R', server, 'log', '-T', '{rev}\n',
                   str(server / 'side.txt'), cwd=server).out
    assert len(revisions.split()) == 1


@pytest.mark.parametrize('policy', (None, 'always'))
def test_drafts_on_non_publishing_server(policy, hg, hg_serve, tmp_path,
                                         monkeypatch):
    server, work = clone_for_push(hg, hg_serve, tmp_path, monkeypatch,
                                  {'file': 'one\n'},
                                  hgrc='[phases]\npublish = False\n')
    if policy:
        git('config', 'cinnabar.data', policy, cwd=work)
    (work / 'file').write_text('two\n')
    git('add', 'file', cwd=work)
    commit = git_commit(work, 'A draft', AUTHOR, '1700000000 -0500')
    assert_pushed(push(work, 'origin', f'HEAD:{TIP}'))
    assert hg('-R', server, 'log', '-r', 'tip', '-T', '{phase}').out == \
        'draft'
    known = git2hg(work, [commit])[commit]
    if policy == 'always':
        assert known != NULL_ID
    else:
        assert known == NULL_ID
        git('fetch', '-q', 'origin', cwd=work)
        assert git2hg(work, [commit])[commit] != NULL_ID
