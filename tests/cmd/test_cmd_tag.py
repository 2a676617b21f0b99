"""`git cinnabar tag` makes the changesets `hg tag` makes.

An hg repository with two heads (default, and the named branch `other`)
whose `.hgtags` differ is copied: `hg tag` makes tags in the copy (the
oracle), `git cinnabar tag` makes the same ones in a git clone of the
original, served, with the same user, date and message; pushed, each of
our tag commits is the changeset `hg tag` made (the same hg id, so the
same `.hgtags` and parents), and the served repository has the oracle's
tags. On the way: the revision is given as a full Mercurial id, as an
abbreviation that only changesets make unique (manifest or file ids
share it), and as a git commit; HEAD's branch fast-forwards with git's
report; an existing tag is refused without -f; -d removes a tag made on
the other head (the tags are those of all heads), and `-l` (or `tag`
alone) lists HEAD's tags before they are pushed; --onto commits on a
branch that is not checked out, refuses one that does not exist or that
another worktree has checked out, and on HEAD's own branch is the same
as without it. A tag made from a subdirectory changes only `.hgtags`.
"""

import shutil

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import clone, git, hg_url, identity_env, rev_parse
from lib.push import assert_pushed, push

USER = 'Tagger <tagger@example.com>'
DATE = '1700000000 0'
GIT_ENV = identity_env('Tagger', 'tagger@example.com')


def hg_commit(hg, repo, name, date):
    (repo / name).write_text(name + '\n')
    hg('-R', repo, 'add', '-q', repo / name)
    hg('-R', repo, 'commit', '-q', '-m', name, '-u', 'maker', '-d', date)


def make_repo(hg, repo):
    """default: a, b, "tag onboth on a", d; other (from b): c, "tag
    onother on c"."""
    hg('init', repo)
    hg_commit(hg, repo, 'a', '0 0')
    hg_commit(hg, repo, 'b', '1 0')
    hg('-R', repo, 'tag', '-u', 'maker', '-d', '2 0', '-r', '0', 'onboth')
    hg('-R', repo, 'branch', '-q', 'other')
    hg_commit(hg, repo, 'c', '3 0')
    hg('-R', repo, 'tag', '-u', 'maker', '-d', '4 0', '-r', '3', 'onother')
    hg('-R', repo, 'update', '-q', 'default')
    hg_commit(hg, repo, 'd', '5 0')
    return repo


def node(hg, repo, rev):
    return hg('-R', repo, 'log', '-r', rev, '-T', '{node}').out


def changeset_abbreviation(hg, repo, work):
    """(a changeset id, the shortest prefix of it no other changeset has
    but some manifest or file revision has too)."""
    changesets = hg('-R', repo, 'log', '-T', '{node}\n').out.split()
    known = [name.replace('/', '') for name in git(
        'ls-tree', '-r', '--name-only', 'refs/cinnabar/metadata^3',
        cwd=work).out.split()]
    for full in changesets:
        prefix = next(full[:n] for n in range(1, 41) if sum(
            c.startswith(full[:n]) for c in changesets) == 1)
        if sum(k.startswith(prefix) for k in known) > 1:
            return full, prefix
    raise AssertionError('no changeset has such a prefix')


def hg_tag(hg, repo, *args):
    hg('-R', repo, 'tag', '-u', USER, '-d', DATE, *args)


def cinnabar_tag(work, *args, cwd=None):
    result = git('cinnabar', 'tag', *args, cwd=cwd or work,
                 extra_env=GIT_ENV, check=False)
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    return result


def fast_forward_report(work, before):
    after = rev_parse(work, 'HEAD')
    short = [git('rev-parse', '--short', c, cwd=work).out.strip()
             for c in (before, after)]
    stat = git('diff', '--stat', before, after, cwd=work).out
    return f'Updating {short[0]}..{short[1]}\nFast-forward\n{stat}'


def unchanged(work):
    return (git('for-each-ref', cwd=work).out,
            git('status', '--porcelain', cwd=work).out)


@pytest.fixture
def tagging(hg, tmp_path):
    """(served hg repository, the oracle copy, git clone of the served
    one with the tag experiment and a branch `other`)."""
    served = make_repo(hg, tmp_path / 'served')
    oracle = tmp_path / 'oracle'
    shutil.copytree(served, oracle)
    work = tmp_path / 'work'
    assert_no_traceback(clone(hg_url(served), work, '-q'))
    git('config', 'cinnabar.experiments', 'tag', cwd=work)
    git('branch', '-q', 'other', 'origin/branches/other/tip', cwd=work)
    return served, oracle, work


def test_tag_commits_are_hg_tag_changesets(hg, tagging):
    served, oracle, work = tagging
    a, b, c = (node(hg, oracle, rev) for rev in ('0', '1', '3'))

    # On `other`, not checked out: a git commit names the revision.
    hg('-R', oracle, 'update', '-q', 'other')
    hg_tag(hg, oracle, '-r', a, 'v0')
    head = rev_parse(work, 'HEAD')
    result = cinnabar_tag(work, '--onto', 'other', 'v0', 'HEAD~3')
    assert (result.out, result.err) == ('', '')
    assert rev_parse(work, 'HEAD') == head

    hg('-R', oracle, 'update', '-q', 'default')
    hg_tag(hg, oracle, '-r', b, 'v1')
    result = cinnabar_tag(work, 'v1', b)
    assert result.out == fast_forward_report(work, head)
    assert git('status', '--porcelain', cwd=work).out == ''

    before = unchanged(work)
    result = git('cinnabar', 'tag', 'onboth', a, cwd=work, check=False)
    assert_failed_for_people(result, "tag 'onboth' already exists")
    assert unchanged(work) == before
    hg_tag(hg, oracle, '-f', '-r', c, 'onboth')
    cinnabar_tag(work, '-f', 'onboth', 'other~2')
    full, prefix = changeset_abbreviation(hg, served, work)
    hg_tag(hg, oracle, '-r', full, 'v3')
    cinnabar_tag(work, 'v3', prefix)

    # Made on the other head: the tags are those of every head. From a
    # subdirectory, HEAD's whole tree is kept (it was that directory's).
    hg_tag(hg, oracle, '--remove', 'onother')
    (work / 'sub').mkdir()
    cinnabar_tag(work, '-d', 'onother', cwd=work / 'sub')
    # Listed as HEAD has them before they are pushed (`onother` deleted,
    # `v1` made); `tag` alone lists, as `git tag` does.
    listed = cinnabar_tag(work, '-l').out.split()
    assert 'onother' not in listed and 'v1' in listed, listed
    assert cinnabar_tag(work).out.split() == listed
    # --onto the branch checked out here: as without it.
    hg_tag(hg, oracle, '-r', a, 'v2')
    head = rev_parse(work, 'HEAD')
    result = cinnabar_tag(work, '--onto', 'refs/heads/branches/default/tip',
                          'v2', a)
    assert result.out == fast_forward_report(work, head)

    assert_pushed(push(work, 'origin', 'HEAD:refs/heads/branches/default/tip',
                       'other:refs/heads/branches/other/tip'))
    log = ['-T', '{node} {branch} {desc}\n']
    assert sorted(hg('-R', served, 'log', *log).out.splitlines()) == \
        sorted(hg('-R', oracle, 'log', *log).out.splitlines())
    assert hg('-R', served, 'tags', '--debug').out == \
        hg('-R', oracle, 'tags', '--debug').out


def test_onto_refusals(tagging, tmp_path):
    """--onto a branch that does not exist (git-cinnabar 0.7.5 made a
    commit of only .hgtags and a ref of that name), or that another
    worktree has checked out (its files would no longer match): refused,
    nothing changed."""
    served, oracle, work = tagging
    before = unchanged(work)
    assert_failed_for_people(
        git('cinnabar', 'tag', '--onto', 'nosuch', 'v1', 'HEAD', cwd=work,
            check=False), "no branch 'nosuch' to tag onto")
    assert unchanged(work) == before
    git('worktree', 'add', '-q', tmp_path / 'elsewhere', 'other', cwd=work)
    before = unchanged(work)
    result = git('cinnabar', 'tag', '--onto', 'other', 'v1', 'HEAD',
                 cwd=work, check=False)
    assert_failed_for_people(result, "branch 'other' is checked out at")
    assert unchanged(work) == before
    assert git('status', '--porcelain', cwd=tmp_path / 'elsewhere').out == ''
