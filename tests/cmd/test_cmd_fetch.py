"""`git cinnabar fetch <remote-or-url> <hg id>...` imports changesets no
fetched ref leads to, and prints `<hg id> <git id>` for each.

The server (over http and ssh, and as a local path) has a `default`
branch and a branch `other` whose head was closed and then tagged; a
clone limited to the default branch lacks `other`. Fetching the closed
head by an abbreviated id, by a revision number and the tag by name
imports them (with their ancestors) under the git ids a full clone
gives; an id the server does not know fails with a message and changes
nothing.
"""

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import METADATA_REF, clone, git, hg2git, hg_url, init
from lib.git import refs
from lib.sources import make_source

DEFAULT_TIP = 'refs/heads/branches/default/tip'


def commit(hg, repo, name, date, *extra):
    (repo / name).write_text(name + '\n')
    hg('-R', repo, 'add', '-q', repo / name)
    hg('-R', repo, 'commit', '-q', '-m', name, '-u', 'someone', '-d', date,
       *extra)


def make_repo(hg, repo):
    hg('init', repo)
    commit(hg, repo, 'a', '0 0')
    hg('-R', repo, 'branch', '-q', 'other')
    commit(hg, repo, 'b', '1 0')
    commit(hg, repo, 'c', '2 0', '--close-branch')
    hg('-R', repo, 'update', '-q', 'default')
    commit(hg, repo, 'd', '3 0')
    hg('-R', repo, 'tag', '-u', 'someone', '-d', '4 0', '-r', '2', 'old')
    return repo


@pytest.mark.parametrize('transport', ('http', 'ssh', 'local'))
def test_fetch_changesets_by_id(transport, hg, hg_serve, tmp_path,
                                monkeypatch):
    repo = make_repo(hg, tmp_path / 'repo')
    src = make_source(transport, repo, None, hg_serve, tmp_path,
                      monkeypatch.setenv)
    nodes = hg.nodes(repo)
    closed, its_parent = nodes[2], nodes[1]

    full = tmp_path / 'full'
    clone(hg_url(repo), full)
    want = hg2git(full, nodes)

    work = init(tmp_path / 'work')
    git('fetch', '-q', src.url, DEFAULT_TIP, cwd=work)
    assert hg2git(work, [closed])[closed] == '0' * 40

    before = refs(work)
    bad = git('cinnabar', 'fetch', src.url, closed[:12], 'f00dfeed',
              cwd=work, check=False)
    assert_failed_for_people(bad)
    assert 'f00dfeed' in bad.err
    assert refs(work) == before

    result = git('cinnabar', 'fetch', src.url, closed[:12], cwd=work)
    assert_no_traceback(result)
    # As git-cinnabar: nothing on standard output.
    assert result.out == ''
    assert hg2git(work, [closed])[closed] == want[closed]
    assert hg2git(work, [its_parent])[its_parent] == want[its_parent]
    src.assert_used()
    # Only the metadata moved (and refs/notes/cinnabar, which follows its
    # git2hg notes).
    after = refs(work)
    assert after.pop(METADATA_REF) != before.pop(METADATA_REF)
    assert after.pop('refs/notes/cinnabar') != before.pop(
        'refs/notes/cinnabar')
    assert after == before

    # Already known, by revision number and by tag name: nothing to get.
    again = git('cinnabar', 'fetch', '-v', src.url, '1', 'old', cwd=work)
    assert again.out == ''
    assert again.err.splitlines()[:2] == [
        '%s %s' % (its_parent, want[its_parent]),
        '%s %s' % (closed, want[closed])]


def test_fetch_by_remote_name_with_tags(hg, tmp_path):
    repo = make_repo(hg, tmp_path / 'repo')
    closed = hg.nodes(repo)[2]
    work = tmp_path / 'work'
    clone(hg_url(repo), work, '-c', 'cinnabar.refs=bookmarks')
    assert refs(work, 'refs/remotes/') == {}
    result = git('cinnabar', 'fetch', '--tags', 'origin', closed, cwd=work)
    assert_no_traceback(result)
    git_id = hg2git(work, [closed])[closed]
    assert git_id != '0' * 40
    assert result.out == ''
    # The tag `old` is on the default head, not fetched yet: left out.
    assert refs(work, 'refs/tags/') == {}
    git('cinnabar', 'fetch', '--tags', 'origin', cwd=work)
    assert refs(work, 'refs/tags/') == {'refs/tags/old': git_id}


def test_fetch_refuses_non_hg_remote_and_bad_usage(tmp_path):
    work = init(tmp_path / 'work')
    git('remote', 'add', 'plain', 'https://example.invalid/x.git',
        cwd=work)
    for args, reason, status in (
            (['plain', '0' * 12], 'fatal: remote plain is not a Mercurial '
             'remote (its URL is https://example.invalid/x.git)', 128),
            ([], 'fatal: nothing to fetch', 129),
            (['plain'], 'fatal: which changesets? give their ids after '
             'plain', 129),
            (['--bogus'], 'fatal: unknown option --bogus', 129)):
        result = git('cinnabar', 'fetch', *args, cwd=work, check=False)
        assert result.returncode == status, result.describe()
        assert assert_failed_for_people(result) == reason, result.describe()
    assert refs(work) == {}
