"""File trees of a changeset, as hg and as git see them, for comparing.

A tree is {path: (kind, data)}: kind is 'file', 'exec' or 'link'; data is
the file's bytes or the link's target.  Directories are implied.
"""

import io
import os
import stat
import tarfile

from .git import git
from .proc import CommandFailed

PREFIX = 'tree/'


def _from_tar(data):
    tree = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            path = member.name[len(PREFIX):]
            if member.issym():
                tree[path] = ('link', member.linkname.encode())
            elif member.isfile():
                kind = 'exec' if member.mode & 0o111 else 'file'
                tree[path] = (kind, tar.extractfile(member).read())
    return tree


def hg_tree(hg, repo, rev, scratch):
    """The tree of changeset `rev` per `hg archive` (no .hg_archival.txt).

    `scratch` is a directory where the archive is written.
    """
    out = os.path.join(scratch, f'hg-{rev}.tar')
    result = hg('-R', repo, 'archive', '--config', 'ui.archivemeta=False',
                '-t', 'tar', '-p', PREFIX, '-r', rev, out, check=False)
    if result.returncode and 'no files match' in result.err:
        return {}  # a changeset without files
    if result.returncode:
        raise CommandFailed(result)
    with open(out, 'rb') as f:
        data = f.read()
    os.unlink(out)
    return _from_tar(data)


def git_tree(repo, commit):
    """The tree of `commit` per `git archive`."""
    data = git('archive', '--format=tar', f'--prefix={PREFIX}', commit,
               cwd=repo).stdout
    return _from_tar(data)


def worktree(root):
    """The tree of a checked-out work tree (without .git)."""
    tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath == str(root):
            dirnames[:] = [d for d in dirnames if d != '.git']
        for name in filenames + [d for d in dirnames
                                 if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            path = os.path.relpath(full, root)
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                tree[path] = ('link', os.readlink(full).encode())
            else:
                kind = 'exec' if mode & 0o111 else 'file'
                with open(full, 'rb') as f:
                    tree[path] = (kind, f.read())
    return tree


def differences(got, expected):
    """Human-readable differences between two trees ('' when equal)."""
    lines = []
    for path in sorted(set(got) | set(expected)):
        a, b = got.get(path), expected.get(path)
        if a == b:
            continue
        if a is None:
            lines.append(f'missing: {path}')
        elif b is None:
            lines.append(f'unexpected: {path}')
        else:
            lines.append(f'differs: {path} ({a[0]}, {len(a[1])} bytes; '
                         f'expected {b[0]}, {len(b[1])} bytes)')
    return '\n'.join(lines)
