"""A git clone of an hg repository pushes all of its history, as it was
fetched, to an empty hg repository over HTTP.

The changegroup of such a push is made from stored data: each manifest
from the previous one and the changes between their git trees, each file
revision's text and delta from the pack's delta against the previous
revision of the file when there is one (helper/pack-delta-reuse.h).  The
history is shaped for that: a file edited in many revisions, among them
a swap of its two halves (a git delta copying from the base backwards),
an emptying and a regrowth, a prepend, a flag change, a text starting
with "\\1\\n" (framed without metadata), an hg copy (metadata) edited
afterwards, a file that becomes a directory and back, a removal, and a
merge of two heads that both edited the big file.

Afterwards the new repository has every changeset with the same id,
parents and manifest id as the original, `hg verify` is clean, and
`git fetch` from it imports nothing.  The file revisions are written by
two processes (CINNABAR_TEST_PUSH_SPLIT), as in a big push.
"""

from lib.git import clone, hg_url, refs
from lib.push import assert_fetch_imports_nothing, assert_hg_verify
from lib.push import assert_pushed, hg_commit, make_hg_repo, push
from lib.push import writable_remote

ORIGIN = 'refs/remotes/origin/'
LOG = '{node} {p1.node} {p2.node} {manifest.node}\n'


def numbered(start, stop, word='line'):
    return ''.join(f'{word} {i}: some text to make the line longer\n'
                   for i in range(start, stop))


def history(hg, repo):
    """The original repository: two heads merged, then more edits."""
    big = numbered(0, 400)
    make_hg_repo(hg, repo, {'big.txt': big, 'small.txt': 'one\n',
                            'path': 'a file for now\n'})
    steps = [
        {'big.txt': big.replace('line 200:', 'LINE 200:')},
        {'big.txt': numbered(200, 400) + numbered(0, 200)},
        {'big.txt': ''},
        {'big.txt': numbered(0, 50, 'again')},
        {'big.txt': 'a new first line\n' + numbered(0, 50, 'again')},
        {'framed.txt': '\1\nnot metadata\n\1\nbody\n'},
        {'framed.txt': '\1\nnot metadata\n\1\nbody, edited\n'},
    ]
    for number, files in enumerate(steps):
        hg_commit(hg, repo, files, f'step {number}',
                  date=f'{1600000000 + number} 0')
    hg('-R', repo, 'copy', 'big.txt', 'copied.txt', cwd=repo)
    hg_commit(hg, repo, {}, 'copy', date='1600000100 0')
    hg_commit(hg, repo, {'copied.txt': numbered(0, 60, 'copy')},
              'edit the copy', date='1600000101 0')
    hg('-R', repo, 'remove', 'path', cwd=repo)
    hg_commit(hg, repo, {'path/inside': 'now a directory\n'},
              'file to directory', date='1600000102 0')
    (repo / 'small.txt').chmod(0o755)
    hg_commit(hg, repo, {}, 'flag change', date='1600000099 0')
    hg('-R', repo, 'remove', 'small.txt', cwd=repo)
    hg_commit(hg, repo, {}, 'removal', date='1600000103 0')
    fork = hg('-R', repo, 'log', '-r', '.', '-T', '{node}').out
    hg_commit(hg, repo, {'big.txt': numbered(0, 80, 'again')},
              'one side', date='1600000104 0')
    hg('-R', repo, 'update', '-q', fork, cwd=repo)
    (repo / 'small.txt').write_text('back\n')
    hg_commit(hg, repo, {'big.txt': 'top\n' + numbered(0, 50, 'again')},
              'other side', date='1600000105 0')
    hg('-R', repo, 'merge', '-q', '--tool', ':local', cwd=repo)
    hg_commit(hg, repo, {}, 'merge', date='1600000106 0')
    hg('-R', repo, 'remove', 'path/inside', cwd=repo)
    hg_commit(hg, repo, {'path': 'a file again\n',
                         'big.txt': numbered(0, 120, 'final')},
              'directory to file', date='1600000107 0')
    return repo


def test_push_stored_history(hg, hg_serve, tmp_path, monkeypatch):
    original = history(hg, tmp_path / 'hg')
    monkeypatch.setenv('CINNABAR_TEST_PUSH_SPLIT', '2')
    repo = tmp_path / 'clone'
    clone(hg_url(original), repo, '--no-checkout')
    target = tmp_path / 'empty'
    hg('init', target)
    dest = writable_remote('http', target, hg_serve, tmp_path,
                           monkeypatch.setenv)
    names = refs(repo, ORIGIN + 'branches')
    specs = [f'{n}:refs/heads/{n[len(ORIGIN):]}' for n in names]
    assert_pushed(push(repo, dest.url, *specs))

    def log(where):
        return sorted(hg('-R', where, 'log', '-T', LOG).out.splitlines())
    assert log(target) == log(original)
    assert_hg_verify(hg, target)
    assert_fetch_imports_nothing(repo, dest.url)
