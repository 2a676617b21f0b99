"""git repositories made through git-cinnabar, and reading its metadata."""

import shutil
from pathlib import Path

from .proc import run

NULL_ID = '0' * 40
METADATA_REF = 'refs/cinnabar/metadata'


def git(*args, cwd=None, **kwargs):
    return run(['git', *args], cwd=cwd, **kwargs)


def identity_env(name, email, date='1700000000 +0000'):
    """The environment making `name <email>` at `date` both author and
    committer of what git writes."""
    return {f'GIT_{who}_{what}': value
            for who in ('AUTHOR', 'COMMITTER')
            for what, value in (('NAME', name), ('EMAIL', email),
                                ('DATE', date))}


def hg_url(location):
    """The git URL of a Mercurial URL or path."""
    return f'hg::{location}'


def clone(url, dest, *options, **kwargs):
    """`git clone [options] url dest`; returns the `Result`."""
    dest = Path(dest)
    return git('clone', *options, url, dest.name, cwd=dest.parent,
               **kwargs)


class CloneCache:
    """--no-checkout clones of the pristine hg repositories of a RepoCache
    (`git clone hg::<local path>`), made once each per session: what a test
    needs to start from, not what it checks.  `get` returns a clone nobody
    may change; `copy` a writable copy of it."""

    def __init__(self, hg_repos, workdir, timeout=600):
        self.hg_repos = hg_repos
        self.workdir = Path(workdir)
        self.timeout = timeout
        self.clones = {}

    def get(self, name):
        if name not in self.clones:
            dest = self.workdir / name
            result = clone(hg_url(self.hg_repos.get(name)), dest,
                           '--no-checkout', timeout=self.timeout)
            assert 'Traceback' not in result.err, result.describe()
            self.clones[name] = dest
        return self.clones[name]

    def copy(self, name, dest):
        shutil.copytree(self.get(name), dest, symlinks=True)
        return Path(dest)


def init(dest):
    git('init', '-q', dest)
    return Path(dest)


def fetch(repo, url, *refspecs, config=(), **kwargs):
    """`git [-c k=v]... fetch url refspecs...` in `repo`."""
    options = []
    for item in config:
        options += ['-c', item]
    return git(*options, 'fetch', url, *refspecs, cwd=repo, **kwargs)


def refs(repo, *patterns):
    """{ref name: object id} of `git for-each-ref [patterns]`."""
    out = git('for-each-ref', '--format=%(objectname) %(refname)',
              *patterns, cwd=repo).out
    return {name: oid for oid, name in
            (line.split(' ', 1) for line in out.splitlines())}


# Where git-remote-hg leaves what git reads of an import (cinnabar.remote):
# replaced by each import that succeeds, as they were after one that fails.
SCRATCH_REFS = ('refs/cinnabar/refs/', 'refs/cinnabar/hg/',
                'refs/cinnabar/HEAD')


def lasting_refs(repo):
    """refs(repo) but the scratch refs of imports."""
    return {name: oid for name, oid in refs(repo).items()
            if not name.startswith(SCRATCH_REFS)}


def ls_remote(url, cwd):
    """{ref name: object id} of `git ls-remote url`, HEAD included."""
    out = git('ls-remote', url, cwd=cwd).out
    return {name: oid for oid, name in
            (line.split('\t', 1) for line in out.splitlines())}


def rev_parse(repo, rev):
    """The object id of `rev`, or '' when it does not resolve."""
    result = git('rev-parse', '--verify', '-q', rev, cwd=repo, check=False)
    return result.out.strip() if result.returncode == 0 else ''


def is_ancestor(repo, ancestor, descendant):
    result = git('merge-base', '--is-ancestor', ancestor, descendant,
                 cwd=repo, check=False)
    return result.returncode == 0


def rev_list(repo, *args):
    return set(git('rev-list', *args, cwd=repo).out.split())


def _batch(repo, command, ids):
    ids = list(ids)
    text = ''.join(f'{i}\n' for i in ids).encode()
    out = git('cinnabar', command, '--batch', cwd=repo, input=text).out
    answers = out.split()
    if len(answers) != len(ids):
        raise AssertionError(f'git cinnabar {command} --batch answered '
                             f'{len(answers)} lines for {len(ids)} ids')
    return dict(zip(ids, answers))


def hg2git(repo, hg_ids):
    """{hg id: git id} from the clone's metadata (null id when unknown)."""
    return _batch(repo, 'hg2git', hg_ids)


EMPTY_BLOB = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'


def git_copies(repo, old, new, similarity=100):
    """{path: source path}: the copies git finds from commit `old` to
    `new` as git-cinnabar 0.7.5 asks for them (`git diff-tree -r -C
    -C<similarity>%`: `-C` twice looks at every file of `old`), renamed or
    copied, but not an empty file (0.7.5 pushes it as a plain addition)."""
    out = git('diff-tree', '-r', '-z', '-C', f'-C{similarity}%', old, new,
              cwd=repo).stdout.split(b'\0')
    copies = {}
    while len(out) > 1:
        meta, out = out[0].split(), out[1:]
        if meta[4][:1] in (b'R', b'C'):
            source, path, out = out[0], out[1], out[2:]
            if meta[3].decode() != EMPTY_BLOB:
                copies[path.decode()] = source.decode()
        else:
            out = out[1:]
    return copies


def git2hg(repo, git_ids):
    """{git id: hg changeset id} from the metadata (null when unknown)."""
    return _batch(repo, 'git2hg', git_ids)


def object_types(repo, ids):
    """{id: type} for `ids`; 'missing' for those not in the repository."""
    ids = list(ids)
    text = ''.join(f'{i}\n' for i in ids).encode()
    out = git('cat-file', '--batch-check=%(objectname) %(objecttype)',
              cwd=repo, input=text).out
    return {i: line.split()[-1] for i, line in zip(ids, out.splitlines())}


def _commit_info(repo, rev):
    """(tree, parents, message) of a commit."""
    out = git('show', '-s', '--format=%T%n%P%n%B', rev, cwd=repo).out
    tree, parents, message = out.split('\n', 2)
    return tree, parents.split(), message.strip()


class Metadata:
    """The `refs/cinnabar/metadata` commit of a repository, in parts.

    The metadata commit's parents are the changesets, manifests, hg2git,
    git2hg and files-meta commits, plus, after an update, the previous
    metadata commit (the chain parent).  `parts` is the sorted list of the
    tree ids of the non-chain parents: two imports of the same history
    have the same parts however they got there.

    A parent is taken as the chain parent when it is `previous` (the
    metadata before the update) or when it looks like a metadata commit:
    same tree, same message and as many parents, or one fewer.
    """

    def __init__(self, repo, previous=None):
        self.commit = rev_parse(repo, METADATA_REF)
        if not self.commit:
            raise AssertionError(f'{METADATA_REF} is missing in {repo}')
        self.tree, parents, self.message = _commit_info(repo, self.commit)
        self.chain = []
        self.parts = []
        for parent in parents:
            tree, grandparents, message = _commit_info(repo, parent)
            is_chain = parent == previous or (
                tree == self.tree and message == self.message
                and len(parents) - len(grandparents) in (0, 1))
            if is_chain:
                self.chain.append(parent)
            else:
                self.parts.append(tree)
        self.parts.sort()

    def summary(self):
        return {'message': self.message, 'tree': self.tree,
                'parts': self.parts}
