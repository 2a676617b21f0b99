"""Mercurial tags become git tags on request, as `hg tags` sees them.

A small repository made with hg has two heads whose `.hgtags` disagree:
tags moved on one head and not the other, removed, removed then re-added,
a tag only on one head, a name git refuses (`bad name`), and a tag on a
changeset that does not exist. After `git cinnabar fetch --tags`, and
after `git fetch` with `remote.origin.tagOpt=--tags`, the git tags are
exactly `hg tags --debug` (without `tip`) minus the name git refuses, each
on the commit hg2git gives for its node. Before that, a clone has no tags
and neither `git fetch` nor `git fetch --tags` makes any (as with
git-cinnabar 0.7.5: git tells a remote helper nothing of --tags);
`git ls-remote hg::tags:` lists them; pushing a tag is refused with a
message.
"""

import pytest

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import clone, git, hg2git, hg_url, ls_remote, refs, rev_parse

GHOST = '1234567890abcdef1234567890abcdef12345678'
BAD_NAME = 'bad name'


def commit(hg, repo, name, date):
    (repo / name).write_text(name + '\n')
    hg('-R', repo, 'add', '-q', repo / name)
    hg('-R', repo, 'commit', '-q', '-m', name, '-u', 'tagger', '-d', date)


def tag(hg, repo, *args, date):
    hg('-R', repo, 'tag', '-u', 'tagger', '-d', date, *args)


def make_tagged_repo(hg, repo):
    """Two heads (default and `other`) with conflicting `.hgtags`."""
    hg('init', repo)
    commit(hg, repo, 'a', '0 0')                       # rev 0
    commit(hg, repo, 'b', '1 0')                       # rev 1
    tag(hg, repo, '-r', '0', 'moved', 'removed', 'readded', 'both',
        date='2 0')                                    # rev 2
    hg('-R', repo, 'branch', '-q', 'other')
    commit(hg, repo, 'c', '3 0')                       # rev 3
    tag(hg, repo, '-f', '-r', '3', 'both', date='4 0')
    tag(hg, repo, '-r', '3', 'only-other', date='5 0')
    hg('-R', repo, 'update', '-q', 'default')
    commit(hg, repo, 'd', '6 0')
    tag(hg, repo, '-f', '-r', '1', 'moved', date='7 0')
    tag(hg, repo, '--remove', 'removed', date='8 0')
    tag(hg, repo, '--remove', 'readded', date='9 0')
    tag(hg, repo, '-r', '1', 'readded', date='10 0')
    tag(hg, repo, '-r', '1', BAD_NAME, date='11 0')
    with open(repo / '.hgtags', 'a') as hgtags:
        hgtags.write('%s ghost\n' % GHOST)
    hg('-R', repo, 'commit', '-q', '-m', 'ghost', '-u', 'tagger',
       '-d', '12 0')
    return repo


def hg_tags(hg, repo):
    """{name: node} of `hg tags --debug`, without `tip`."""
    out = hg('-R', repo, 'tags', '--debug').out
    tags = {}
    for line in out.splitlines():
        name, revnode = line.rstrip().rsplit(None, 1)
        tags[name.strip()] = revnode.split(':')[1]
    del tags['tip']
    return tags


@pytest.fixture
def tagged(hg, tmp_path):
    """(hg repository, git clone of it)."""
    repo = make_tagged_repo(hg, tmp_path / 'repo')
    work = tmp_path / 'work'
    result = clone(hg_url(repo), work)
    assert_no_traceback(result)
    assert 'git cinnabar fetch --tags' in result.err
    return repo, work


def test_tags_follow_hg_precedence(hg, tagged):
    repo, work = tagged
    expected = hg_tags(hg, repo)
    # What the repository was made for: hg's own view of it.
    assert set(expected) == {'moved', 'readded', 'both', 'only-other',
                             BAD_NAME}
    assert 'ghost' not in expected
    assert refs(work, 'refs/tags/') == {}
    git('fetch', 'origin', cwd=work)
    git('fetch', '--tags', 'origin', cwd=work)
    assert refs(work, 'refs/tags/') == {}
    assert not [n for n in ls_remote('origin', work) if 'tags' in n]
    del expected[BAD_NAME]
    commits = hg2git(work, expected.values())
    want = {'refs/tags/' + name: commits[node]
            for name, node in expected.items()}

    git('config', 'remote.origin.tagOpt', '--tags', cwd=work)
    result = git('fetch', 'origin', cwd=work)
    assert_no_traceback(result)
    assert 'ignoring tag bad name' in result.err
    assert 'ignoring tag ghost' in result.err
    assert refs(work, 'refs/tags/') == want
    listed = ls_remote('origin', work)
    assert {n: o for n, o in listed.items() if n.startswith('refs/tags/')} \
        == want

    git('tag', '-d', *[name[len('refs/tags/'):] for name in want], cwd=work)
    result = git('cinnabar', 'fetch', '--tags', cwd=work)
    assert_no_traceback(result)
    assert 'ignoring tag bad name' in result.err
    assert 'ignoring tag ghost' in result.err
    assert refs(work, 'refs/tags/') == want
    listed = ls_remote('hg::tags:', work)
    assert listed == want


def test_moved_tag_updates_and_push_refused(hg, tagged):
    repo, work = tagged
    git('cinnabar', 'fetch', '--tags', cwd=work)
    hg('-R', repo, 'update', '-q', 'other')
    commit(hg, repo, 'e', '19 0')
    # No tag changed: no hint.
    assert 'fetch --tags' not in git('fetch', 'origin', cwd=work).err
    hg('-R', repo, 'update', '-q', 'default')
    tag(hg, repo, '-f', '-r', '0', 'moved', date='20 0')
    assert 'fetch --tags' in git('fetch', 'origin', cwd=work).err
    git('cinnabar', 'fetch', '--tags', cwd=work)
    expected = hg_tags(hg, repo)
    assert expected['moved'] == hg.nodes(repo, '0')[0]
    moved = hg2git(work, [expected['moved']])[expected['moved']]
    assert refs(work, 'refs/tags/moved') == {'refs/tags/moved': moved}

    before = refs(work)
    result = git('push', 'origin', 'refs/tags/moved', cwd=work,
                 check=False)
    assert result.returncode != 0
    # One line, naming the way the tag command's help and the README do.
    assert ('(pushing git tags is not supported; a Mercurial tag is a commit '
            'to .hgtags: make it with `git cinnabar tag <name> [<commit>]` '
            '(once `git config cinnabar.experiments tag` is set) or `hg tag`, '
            'then push that commit)') in result.err
    assert refs(work) == before
    assert 'moved' in hg_tags(hg, repo)


def test_hint_when_a_merge_hides_a_head(hg, tagged, tmp_path):
    """The hint compares the tags before and after a fetch; after, the
    topological heads come from those before and the heads the imported
    changesets have for parents, and before, from what the clone kept
    (cinnabar/topological.py): no `git merge-base`. Here a merge on
    default takes in `other`'s head, which stays a branch head but is no
    longer a topological one, with default's `.hgtags`: `only-other` goes
    away."""
    repo, work = tagged
    hg('-R', repo, 'update', '-q', 'default')
    # `.hgtags` conflicts: default's is kept.
    hg('-R', repo, 'merge', '-q', '--tool', ':local', 'other')
    hg('-R', repo, 'commit', '-q', '-m', 'merge', '-u', 'tagger',
       '-d', '13 0')
    assert 'only-other' not in hg_tags(hg, repo)
    trace = tmp_path / 'git-trace'
    result = git('fetch', 'origin', cwd=work,
                 extra_env={'GIT_TRACE': str(trace)})
    assert_no_traceback(result)
    assert 'git cinnabar fetch --tags' in result.err
    merge_bases = [line for line in trace.read_text().splitlines()
                   if 'built-in: git merge-base' in line]
    assert merge_bases == []


def test_hint_reads_hgtags_only_when_they_differ(hg, tagged, tmp_path):
    """A fetch whose new heads have the same `.hgtags` files as before
    reads none of them (one `git cat-file --batch-check`, no `--batch`),
    and gives no hint; one whose files differ reads them, and gives the
    hint only when the tags differ: a blank line added changes no tag."""
    repo, work = tagged
    git('cinnabar', 'fetch', '--tags', cwd=work)

    def fetch(name):
        trace = tmp_path / name
        result = git('fetch', 'origin', cwd=work,
                     extra_env={'GIT_TRACE': str(trace)})
        assert_no_traceback(result)
        reads = [line for line in trace.read_text().splitlines()
                 if "'cat-file' '--batch'" in line
                 or 'cat-file --batch\n' in line + '\n']
        return result, reads

    hg('-R', repo, 'update', '-q', 'default')
    commit(hg, repo, 'e', '19 0')
    result, reads = fetch('same-files')
    assert 'fetch --tags' not in result.err
    assert reads == []
    with open(repo / '.hgtags', 'a') as hgtags:
        hgtags.write('\n')
    hg('-R', repo, 'commit', '-q', '-m', 'blank', '-u', 'tagger',
       '-d', '20 0')
    result, reads = fetch('blank-line')
    assert 'fetch --tags' not in result.err
    assert reads


def test_tag_list_needs_no_experiment(hg, tagged):
    """`git cinnabar tag -l` lists the tags hg sees without the `tag`
    experiment, which making a tag still needs (nothing made then)."""
    repo, work = tagged
    result = git('cinnabar', 'tag', '-l', '--format',
                 '%(tagname) %(hg::objectname)', cwd=work)
    assert_no_traceback(result)
    # hg's tags, and (as git-cinnabar 0.7.5's -l) the one on a changeset
    # nobody has, which hg leaves out.
    listed = dict(hg_tags(hg, repo), ghost=GHOST)
    assert result.out == ''.join(f'{name} {node}\n' for name, node
                                 in sorted(listed.items()))
    before = refs(work)
    result = git('cinnabar', 'tag', 'new', cwd=work, check=False)
    assert_failed_for_people(result, 'git cinnabar tag is an experiment '
                             '(listing with -l is not)')
    assert 'hint: enable it with `git config cinnabar.experiments tag`' \
        in result.err
    assert refs(work) == before


@pytest.mark.parametrize('kind', ['directory', 'symlink'])
def test_tag_refused_unless_hgtags_is_a_file(hg, tmp_path, kind):
    """`git cinnabar tag` with `.hgtags` a directory or a symbolic link in
    HEAD: refused, nothing changed (not replaced with a file made of `git
    cat-file -p` output). Mercurial makes no tag commit there
    either: `hg tag` aborts on the directory, and commits nothing with
    the symlink."""
    repo = tmp_path / 'repo'
    hg('init', repo)
    (repo / 'a').write_text('a\n')
    if kind == 'directory':
        (repo / '.hgtags').mkdir()
        (repo / '.hgtags' / 'x').write_text('x\n')
    else:
        (repo / '.hgtags').symlink_to('a')
    hg('-R', repo, 'add', '-q')
    hg('-R', repo, 'commit', '-q', '-m', 'odd .hgtags', '-u', 'tagger',
       '-d', '0 0')
    work = tmp_path / 'work'
    assert_no_traceback(clone(hg_url(repo), work, '-q'))
    git('config', 'cinnabar.experiments', 'tag', cwd=work)
    before = git('for-each-ref', cwd=work).out, rev_parse(work, 'HEAD')
    result = git('cinnabar', 'tag', 'v1', cwd=work, check=False)
    assert_failed_for_people(result)
    assert '.hgtags' in result.err and kind[:3] in result.err, \
        result.describe()
    assert (git('for-each-ref', cwd=work).out,
            rev_parse(work, 'HEAD')) == before
    assert git('status', '--porcelain', cwd=work).out == ''

    hg('-R', repo, 'tag', '-u', 'tagger', 'v1', check=False)
    assert hg('-R', repo, 'log', '-T', '{rev}\n').out.split() == ['0']
