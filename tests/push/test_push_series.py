"""A scripted series of git commits pushed to an hg server, over HTTP,
SSH and a local path, each push checked on both sides.

The server starts as an hg repository with one changeset; a git clone of
it then pushes, one push at a time: new files and edits, a deletion, an
exact rename (`git mv`, with a committer other than the author), an exec
bit change and a symbolic link (two commits in one push), and a merge of
two branches whose conflicting edits were resolved by hand.  Every commit
has its own author and a date in a time zone other than UTC.

After each push:
- `hg verify` is clean, the server gained exactly the pushed changesets,
  and the default branch has one head, the pushed commit;
- each new changeset has the parents, user ("Name <email>"), date and
  time zone, branch, files added, removed and modified, copy metadata,
  file flags and file contents of its git commit;
- a fresh `git clone` of the server gives exactly the commits pushed;
- `git fetch` right after imports nothing: no ref changes.
"""

import collections

import pytest

from lib.git import clone, git, rev_parse
from lib.push import BRANCH_TIP, Author, assert_fetch_imports_nothing
from lib.push import assert_fresh_clone_matches, assert_hg_verify
from lib.push import assert_pushed, changeset, git_commit
from lib.push import hg_date, make_hg_repo, pushed_nodes, push
from lib.push import writable_remote
from lib.tree import differences, git_tree, hg_tree

TRANSPORTS = ('http', 'ssh', 'local')
# Run again with each git release `make test-user-git` builds (git push
# through git-remote-hg, the git commands of the client).
pytestmark = [pytest.mark.hgserver, pytest.mark.usergit]
TIP = BRANCH_TIP.format('default')
# A file's flags in hg's manifest (`hg files -T '{flags}'`) by its kind in
# `hg archive`'s tar (lib.tree), which takes them from the manifest.
FLAGS = {'file': '', 'exec': 'x', 'link': 'l'}
TRACKING = 'refs/remotes/origin/branches/default/tip'

INITIAL = {
    'README': 'A project kept in Mercurial.\n',
    'src/main.c': 'int main(void) { return 0; }\n',
    'doc/old.txt': 'The guide.\n' * 20,
    'tools/run.sh': '#!/bin/sh\nexec ./main "$@"\n',
    'conflict.txt': 'one\ntwo\nthree\n',
    'obsolete.txt': 'to be removed\n',
}

ALICE = Author('Alice Liddell', 'alice@example.com')
BOB = Author('Bob Builder', 'bob@builders.example.org')
ZOE = Author('Zoë Ångström', 'zoe@example.net')
CAROL = Author('Carol Committer', 'carol@example.com')

Expect = collections.namedtuple('Expect', 'author date adds dels mods '
                                'copies flags merged')
Expect.__new__.__defaults__ = (set(), set(), set(), {}, {}, set())
Expect.__doc__ = """What hg must show of a pushed commit: its author and
git date; files added, removed, modified (against the first parent, per
`hg status --change`); copies {new: source}; some file flags {path:
flags}.  The changeset's list of files is those added, removed and
modified, except for a merge: then it lists at least the `merged` files
(those that differ from both parents) and nothing that did not change
against the first parent (hg itself leaves out the files taken unchanged
from the second parent)."""


def write(repo, path, text):
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)


def commit(repo, message, author, date, **kwargs):
    return git_commit(repo, message, author, date, **kwargs)


# The steps.  Each makes commits in the clone `repo` and returns
# ([(commit, Expect)], push arguments).

def new_files_and_edits(repo):
    write(repo, 'src/util.c', '#include "util.h"\nint twice(int x);\n')
    write(repo, 'src/util.h', 'int twice(int x);\n')
    write(repo, 'data/numbers.txt', ''.join(f'{i}\n' for i in range(100)))
    write(repo, 'README', 'A project kept in Mercurial, pushed from git.\n')
    git('add', '-A', cwd=repo)
    date = '1709622296 +0530'
    c = commit(repo, 'Add util and numbers, reword README', ALICE, date)
    return [(c, Expect(ALICE, date,
                       adds={'src/util.c', 'src/util.h', 'data/numbers.txt'},
                       mods={'README'}))], \
        ['origin', f'HEAD:{TIP}']


def deletion(repo):
    git('rm', '-q', 'obsolete.txt', cwd=repo)
    date = '1709700000 -0700'
    c = commit(repo, 'Remove obsolete.txt', BOB, date)
    # A plain `git push`: the clone's branch tracks the branch tip.
    return [(c, Expect(BOB, date, dels={'obsolete.txt'}))], []


def exact_rename(repo):
    git('mv', 'doc/old.txt', 'doc/guide.txt', cwd=repo)
    date = '1709800000 -0330'
    c = commit(repo, 'Rename the guide', ZOE, date, committer=CAROL,
               committer_date='1709803600 +0100')
    return [(c, Expect(ZOE, date, adds={'doc/guide.txt'},
                       dels={'doc/old.txt'},
                       copies={'doc/guide.txt': 'doc/old.txt'}))], \
        ['origin', f'HEAD:{TIP}']


def exec_bit_and_symlink(repo):
    (repo / 'tools/run.sh').chmod(0o755)
    git('add', 'tools/run.sh', cwd=repo)
    first_date = '1709900000 +1245'
    first = commit(repo, 'Make run.sh executable', ALICE, first_date)
    (repo / 'guide').symlink_to('doc/guide.txt')
    git('add', 'guide', cwd=repo)
    second_date = '1709900100 -0930'
    second = commit(repo, 'Link to the guide', BOB, second_date)
    return [(first, Expect(ALICE, first_date, mods={'tools/run.sh'},
                           flags={'tools/run.sh': 'x', 'src/main.c': ''})),
            (second, Expect(BOB, second_date, adds={'guide'},
                            flags={'guide': 'l', 'tools/run.sh': 'x'}))], \
        ['origin', f'HEAD:{TIP}']


def merge_with_conflict(repo):
    git('checkout', '-q', '-b', 'side', cwd=repo)
    write(repo, 'conflict.txt', 'one\ntwo, as the side branch says\nthree\n')
    write(repo, 'side.txt', 'from the side branch\n')
    git('add', '-A', cwd=repo)
    side_date = '1710000000 +0200'
    side = commit(repo, 'Side: change line two', BOB, side_date)
    git('checkout', '-q', '-', cwd=repo)
    write(repo, 'conflict.txt', 'one\ntwo, as the main line says\nthree\n')
    git('add', '-A', cwd=repo)
    main_date = '1710000500 -0500'
    main = commit(repo, 'Main: change line two', ALICE, main_date)
    result = git('merge', '--no-edit', 'side', cwd=repo, check=False)
    assert result.returncode != 0 and 'CONFLICT' in result.out, (
        'the merge was expected to conflict\n' + result.describe())
    write(repo, 'conflict.txt', 'one\ntwo, as both agreed\nthree\n')
    git('add', 'conflict.txt', cwd=repo)
    merge_date = '1710001000 +0930'
    merge = commit(repo, 'Merge the side branch', ZOE, merge_date)
    return [(side, Expect(BOB, side_date, adds={'side.txt'},
                          mods={'conflict.txt'})),
            (main, Expect(ALICE, main_date, mods={'conflict.txt'})),
            (merge, Expect(ZOE, merge_date, adds={'side.txt'},
                           mods={'conflict.txt'},
                           merged={'conflict.txt'}))], \
        ['origin', f'HEAD:{TIP}']


STEPS = (new_files_and_edits, deletion, exact_rename, exec_bit_and_symlink,
         merge_with_conflict)


def git_parents(repo, commit):
    return git('show', '-s', '--format=%P', commit, cwd=repo).out.split()


def check_changeset(hg, server, work, commit, expect, hg_of, scratch):
    """The changeset of `commit` on the server is what `expect` says."""
    cs = changeset(hg, server, hg_of[commit])
    parents = git_parents(work, commit)
    assert cs.parents == [hg_of[p] for p in parents], 'parents'
    assert cs.user == expect.author.hg_user, 'user'
    assert cs.date == hg_date(expect.date), 'date and time zone'
    assert cs.branch == 'default', 'branch'
    assert (cs.adds, cs.dels, cs.mods) == (expect.adds, expect.dels,
                                           expect.mods), 'files'
    assert cs.copies == expect.copies, 'copies'
    changed = cs.adds | cs.dels | cs.mods
    if len(parents) == 1:
        assert cs.files == changed, 'list of files'
    else:
        assert expect.merged <= cs.files <= changed, 'list of files'
    tree = hg_tree(hg, server, cs.node, scratch)
    flags = {path: FLAGS[kind] for path, (kind, _) in tree.items()}
    assert {p: flags.get(p) for p in expect.flags} == expect.flags, 'flags'
    diff = differences(tree, git_tree(work, commit))
    assert not diff, f'file tree:\n{diff}'


@pytest.mark.parametrize('transport', TRANSPORTS)
def test_scripted_series(transport, hg, hg_serve, tmp_path, monkeypatch):
    server = make_hg_repo(hg, tmp_path / 'server', INITIAL)
    src = writable_remote(transport, server, hg_serve, tmp_path,
                          monkeypatch.setenv)
    work = tmp_path / 'work'
    clone(src.url, work)
    src.assert_used()
    assert git('symbolic-ref', 'HEAD', cwd=work).out.strip() == TIP
    for number, step in enumerate(STEPS):
        before = set(hg.nodes(server))
        commits, push_args = step(work)
        result = push(work, *push_args)
        where = f'step {number} ({step.__name__}) over {transport}'
        assert_pushed(result, where)
        head = rev_parse(work, 'HEAD')
        assert rev_parse(work, TRACKING) == head, where
        assert_hg_verify(hg, server)
        hg_of = pushed_nodes(work, git('rev-list', head, cwd=work).out.split())
        new = set(hg.nodes(server)) - before
        assert new == {hg_of[c] for c, _ in commits}, (
            f'{where}: the server did not get exactly the pushed commits')
        assert hg.heads(server) == [(hg_of[head], 'default')], where
        for commit_id, expect in commits:
            try:
                check_changeset(hg, server, work, commit_id, expect, hg_of,
                                tmp_path)
            except AssertionError as e:
                raise AssertionError(f'{where}, commit {commit_id}: {e}')
        assert_fresh_clone_matches(src.url, tmp_path / f'fresh-{number}',
                                   work, hg.nodes(server))
        assert_fetch_imports_nothing(work, 'origin')


def test_scripted_series_files_written_by_two_processes(
        hg, hg_serve, tmp_path, monkeypatch):
    """The same series with the file revisions of every push written by
    two processes (helper/push.c splits big pushes; forced here from two
    file revisions), over a local path."""
    monkeypatch.setenv('CINNABAR_TEST_PUSH_SPLIT', '2')
    test_scripted_series('local', hg, hg_serve, tmp_path, monkeypatch)
