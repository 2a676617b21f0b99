"""Commits a Mercurial changeset cannot hold exactly are refused before
anything is sent, as the README says: a merge of more than two parents, a
commit with a header other than tree, parent, author and committer (a
`gpgsig` signature), a submodule (a gitlink in the tree), an author
git-cinnabar cannot parse, a committer (other than the author: it goes
into the `committer` extra, which git-cinnabar writes unescaped, as 0.7
did) holding a backslash or a NUL byte, which Mercurial's decodeextra
would read back as something else (`CORP\\tom` as `CORP<TAB>om`) or die
on (`CORP\\xavier`: an invalid \\x escape).  Each is pushed to a real
`hg serve`: the push fails with git's one rejection line, whose message
names the commit (or the submodule's path) and what Mercurial cannot
hold; the server is unchanged (same changesets, phases, heads and
bookmarks as `hg log` shows them, `hg verify` clean), and so are the
clone's refs under refs/cinnabar and refs/remotes.

The odd commits are made with git's plumbing: `git commit-tree` for the
octopus merge, `git mktree` for the gitlink, `git hash-object -t commit`
for a signed commit (its `gpgsig` header written by hand: no gpg needed,
nothing verifies the signature) and `--literally` for the author git
itself would refuse.

A committer without those bytes (quotes, non-ASCII) is pushed, and hg
shows exactly it as the `committer` extra.
"""

import codecs

import pytest

from lib.git import clone, git, rev_parse
from lib.push import BRANCH_TIP, assert_hg_verify, assert_refused
from lib.push import make_hg_repo, nothing_changes, push, rejection_lines
from lib.push import writable_remote

TIP = BRANCH_TIP.format('default')
IDENT = 'Pusher <pusher@example.com> 1700000000 +0000'
ENV = {
    'GIT_AUTHOR_NAME': 'Pusher', 'GIT_AUTHOR_EMAIL': 'pusher@example.com',
    'GIT_AUTHOR_DATE': '1700000000 +0000',
    'GIT_COMMITTER_NAME': 'Pusher',
    'GIT_COMMITTER_EMAIL': 'pusher@example.com',
    'GIT_COMMITTER_DATE': '1700000000 +0000',
}
SIGNATURE = (
    '-----BEGIN PGP SIGNATURE-----\n'
    ' \n'
    ' iQEzBAABCAAdFiEEcrafted0signature0not0checked0by0anyone0AAoJ\n'
    ' =abcd\n'
    ' -----END PGP SIGNATURE-----')


@pytest.fixture(scope='module')
def served(hg, hg_serve_module, tmp_path_factory, module_monkeypatch):
    """(server, clone) over http: an hg repository with one changeset.
    Shared by the tests: each checks that its push changed nothing."""
    tmp_path = tmp_path_factory.mktemp('unholdable')
    server = make_hg_repo(hg, tmp_path / 'server', {'file': 'base\n'})
    src = writable_remote('http', server, hg_serve_module, tmp_path,
                          module_monkeypatch.setenv)
    work = tmp_path / 'work'
    clone(src.url, work)
    return server, work


def tree_with(work, entries):
    """HEAD's tree plus `entries`: mktree lines without the path
    separator, e.g. `100644 blob <oid>`, keyed by name."""
    lines = git('ls-tree', 'HEAD', cwd=work).out.splitlines()
    lines += [f'{entry}\t{name}' for name, entry in entries.items()]
    text = '\n'.join(lines) + '\n'
    return git('mktree', cwd=work, input=text.encode()).out.strip()


def blob(work, data):
    return git('hash-object', '-w', '--stdin', cwd=work,
               input=data.encode()).out.strip()


def commit_tree(work, tree, *parents, message='unholdable'):
    args = [a for p in parents for a in ('-p', p)]
    return git('commit-tree', tree, *args, '-m', message, cwd=work,
               extra_env=ENV).out.strip()


def raw_commit(work, text, literally=False):
    args = ['--literally'] if literally else []
    return git('hash-object', '-t', 'commit', '-w', '--stdin', *args,
               cwd=work, input=text.encode()).out.strip()


def octopus(work):
    head = rev_parse(work, 'HEAD')
    files = {name: '100644 blob ' + blob(work, name + '\n')
             for name in ('left', 'right')}
    sides = [commit_tree(work, tree_with(work, {name: files[name]}), head)
             for name in files]
    commit = commit_tree(work, tree_with(work, files), head, *sides)
    return commit, (f'commit {commit} has more than two parents; '
                    'Mercurial changesets have at most two')


def signed(work):
    text = (f'tree {rev_parse(work, "HEAD^{tree}")}\n'
            f'parent {rev_parse(work, "HEAD")}\n'
            f'author {IDENT}\ncommitter {IDENT}\n'
            f'gpgsig {SIGNATURE}\n\nsigned\n')
    commit = raw_commit(work, text)
    assert 'gpgsig' in git('cat-file', 'commit', commit, cwd=work).out
    return commit, (f"commit {commit} has a header ('gpgsig') that "
                    'Mercurial cannot keep; it cannot be pushed')


def submodule(work):
    head = rev_parse(work, 'HEAD')
    tree = tree_with(work, {'sub': f'160000 commit {head}'})
    commit = commit_tree(work, tree, head)
    return commit, ("'sub' is a submodule, which Mercurial cannot hold; "
                    'it cannot be pushed')


def bad_author(work):
    text = (f'tree {rev_parse(work, "HEAD^{tree}")}\n'
            f'parent {rev_parse(work, "HEAD")}\n'
            f'author nobody\ncommitter {IDENT}\n\nno author\n')
    commit = raw_commit(work, text, literally=True)
    return commit, f'commit {commit} has an author git cannot parse'


def committed_by(name, literally=False):
    """A maker of a commit whose committer (not its author) is `name`,
    which Mercurial's changeset extras cannot hold as git-cinnabar writes
    them (unescaped): the message names what it holds."""
    def make(work):
        committer = f'{name} <corp@example.com> 1700000000 +0000'
        text = (f'tree {rev_parse(work, "HEAD^{tree}")}\n'
                f'parent {rev_parse(work, "HEAD")}\n'
                f'author {IDENT}\ncommitter {committer}\n\ncommitter\n')
        commit = raw_commit(work, text, literally=literally)
        what = 'a NUL byte' if '\0' in name else 'a backslash'
        return commit, (f'commit {commit} has a committer holding {what}, '
                        'which Mercurial would read back as another (its '
                        '"committer" extra is not escaped); it cannot be '
                        'pushed: rewrite the commit without it (git commit '
                        '--amend makes you the committer)')
    make.__name__ = 'committed_by_' + name.encode('unicode_escape').decode()
    return make


UNHOLDABLE = [octopus, signed, submodule, bad_author,
              # hg would read `CORP<TAB>om` back, or die on a bad \x escape
              committed_by('CORP\\tom'), committed_by('CORP\\xavier'),
              committed_by('CORP\0tom', literally=True)]


@pytest.mark.parametrize('make', UNHOLDABLE, ids=lambda m: m.__name__)
def test_refused_before_sending(make, served, hg):
    server, work = served
    commit, message = make(work)
    with nothing_changes(hg, server, work):
        result = push(work, 'origin', f'{commit}:{TIP}')
        assert_refused(result, message)
    # git's one rejection line carries the message, nothing else fails.
    assert rejection_lines(result) == [
        f' ! [remote rejected] {commit} -> branches/default/tip '
        f'({message})'], result.describe()
    assert_hg_verify(hg, server)
    assert len(hg.nodes(server)) == 1


def test_committer_pushed_exactly(served, hg):
    """A committer with quotes, a tab-free odd name and non-ASCII bytes is
    the changeset's committer extra as it is."""
    server, work = served
    name = 'Tom "T" O\'Neil \u00dcnal/CORP'
    tree = rev_parse(work, 'HEAD^{tree}')
    env = dict(ENV, GIT_COMMITTER_NAME=name,
               GIT_COMMITTER_EMAIL='tom@example.com')
    commit = git('commit-tree', tree, '-p', rev_parse(work, 'HEAD'), '-m',
                 'odd committer', cwd=work, extra_env=env).out.strip()
    result = push(work, 'origin', f'{commit}:{TIP}')
    assert result.returncode == 0, result.describe()
    value = f'{name} <tom@example.com> 1700000000 0'
    out = hg('-R', server, 'log', '-r', 'tip', '-T',
             '{get(extras, "committer")}').out
    assert out == value
    # --debug shows extras as Python's escape_encode writes bytes.
    shown = codecs.escape_encode(value.encode())[0].decode()
    out = hg('-R', server, 'log', '--debug', '-r', 'tip').out
    assert f'extra:       committer={shown}\n' in out, out
    assert_hg_verify(hg, server)
