"""Replaying a `randhist.History` with Mercurial's own commands, into a new
repository: what `hg commit` makes of the same working-directory changes.

For each commit, in history order (so that commit i is revision i):
- the working directory is made to hold the commit's files (contents,
  exec bits, symbolic links);
- when its first parent is not the working directory's parent,
  `hg debugrebuilddirstate -r <p1>`; for a merge, then `hg debugsetparents
  <p1> <p2>` (the merge is the commit's tree, with hg's file-revision
  rules for merges: see `hg help commit` and mercurial/commit.py);
- `hg addremove -s 0` (no rename guessed), then `hg copy --after <source>
  <path>` for each copy git finds in the commit (given by the caller:
  lib.git.git_copies, as git-cinnabar 0.7.5 asks git), which is `hg mv
  --after` once the source is marked removed;
- `hg commit` with the
  commit's message, author as user, and author date
  (`ui.allowemptycommit`: a commit changing nothing is a changeset too).

All of it through one `hg serve --cmdserver pipe` (lib.hgcmdserver).
"""

import os

from .hgcmdserver import HgCommandServer
from .push import hg_date
from .randhist import EXEC, LINK


def hg_user(person):
    name, email = person
    return f'{name} <{email}>'


class WorkingDirectory:
    """The files of a directory, kept equal to the snapshots given."""

    def __init__(self, root):
        self.root = root
        self.files = {}

    def _remove(self, path):
        full = self.root / path
        full.unlink()
        parent = full.parent
        while parent != self.root and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent

    def _write(self, path, mode, data):
        full = self.root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if mode == LINK:
            os.symlink(data, full)
        else:
            full.write_bytes(data)
            full.chmod(0o755 if mode == EXEC else 0o644)

    def set(self, files):
        for path, (mode, data) in list(self.files.items()):
            if path not in files or files[path] != (mode, data):
                self._remove(path)
                del self.files[path]
        for path, (mode, data) in files.items():
            if path not in self.files:
                self._write(path, mode, data)
        self.files = dict(files)


def record_copies(hg, copies):
    """`hg copy --after` for each {path: source}, the sources being
    removed already; hg records the copy even where it warns that the
    path collides with its source (a file becoming a directory holding
    it), so what it recorded is checked with `hg status --copies`."""
    for path, source in copies.items():
        hg('copy', '--after', source, path, check=False)
    out = hg('status', '--added', '--copies', '-0').stdout.split(b'\0')
    recorded, last = {}, None
    for item in out:
        if item.startswith(b'A '):
            last = item[2:].decode()
        elif item.startswith(b'  ') and last:
            recorded[last] = item[2:].decode()
    assert recorded == copies, f'hg recorded copies {recorded}, not {copies}'


def replay(hg_exe, history, repo, copies):
    """Make the hg repository `repo` (new) from `history`, `copies` being
    each commit's {path: source path}."""
    repo.mkdir()
    with HgCommandServer(hg_exe, repo.parent) as hg:
        hg('init', repo.name)
    work = WorkingDirectory(repo)
    message = repo.parent / (repo.name + '-message')
    parent = None
    with HgCommandServer(hg_exe, repo,
                         ['ui.allowemptycommit=True']) as hg:
        for c in history.commits:
            work.set(c.files)
            p1 = c.parents[0] if c.parents else None
            if p1 != parent or len(c.parents) > 1:
                hg('debugrebuilddirstate', '-r', p1)
            if len(c.parents) > 1:
                hg('debugsetparents', *c.parents)
            tracked = history.commits[p1].files if c.parents else {}
            if set(c.files) != set(tracked):
                hg('addremove', '-q', '-s', '0')
            if copies[c.index]:
                record_copies(hg, copies[c.index])
            message.write_bytes(c.message.encode())
            hg('commit', '-q', '-l', message,
               '-u', hg_user(c.author), '-d', hg_date(c.date))
            parent = c.index
    message.unlink()
    return repo
