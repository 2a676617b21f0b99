"""Drop-in for git-cinnabar 0.7 users: pushing from a shallow clone,
against a real `hg serve`.

A `git clone --depth 2` of a converted repository, completed with `git
cinnabar fetch` of the Mercurial history, pushes a new commit to another
hg repository that has only the first changesets: what the server lacks
is found by asking it (`known`) along the whole history, not only the
part the shallow clone started with, so the server gets every missing
changeset, parents first, and `hg verify` is clean.
"""

from lib.checks import assert_no_traceback
from lib.git import clone, git, git2hg, hg_url
from lib.push import Author, assert_hg_verify, assert_pushed
from lib.push import git_commit, hg_commit, make_hg_repo, push

AUTHOR = Author('Shallow Pusher', 'shallow@example.com')


def nodes(hg, repo):
    return hg('-R', repo, 'log', '-r', 'all()', '-T', '{node}\n').out.split()


def test_push_from_completed_shallow_clone(hg, hg_serve, tmp_path):
    full = make_hg_repo(hg, tmp_path / 'full', {'f0': '0\n'})
    for i in range(1, 6):
        hg_commit(hg, full, {'f%d' % i: '%d\n' % i}, 'c%d' % i,
                  date='%d 0' % (1600000000 + i))
    partial = tmp_path / 'partial'
    hg('clone', '-q', '-r', '2', full, partial)
    server = hg_serve(partial)

    converted = tmp_path / 'converted'
    clone(hg_url(full), converted, '-q')
    shallow = tmp_path / 'shallow'
    git('clone', '-q', '--depth', '2', converted.as_uri(), shallow)
    assert (shallow / '.git' / 'shallow').exists()
    tip = nodes(hg, full)[-1]
    assert_no_traceback(git('cinnabar', 'fetch', hg_url(full), tip,
                            cwd=shallow))

    (shallow / 'new').write_text('new\n')
    git('add', 'new', cwd=shallow)
    new = git_commit(shallow, 'new', AUTHOR, '1700000000 +0000')
    # git itself sees the server's head beyond the cut, hence -f.
    result = push(shallow, '-f', hg_url(server.url),
                  'HEAD:refs/heads/branches/default/tip')
    assert_pushed(result)
    assert 'unknown parent' not in result.err
    assert_hg_verify(hg, partial)
    assert nodes(hg, partial) == nodes(hg, full) + [
        git2hg(shallow, [new])[new]]
