"""Random git histories whose trees are made to hurt a git -> Mercurial
conversion, written with `git fast-import`.

`generate(seed, commits)` makes a `History`: a list of `Commit`s, each a
full snapshot ({path: (mode, data)}) with its parents (indices of earlier
commits), author, committer, dates and message.  The same seed gives the
same history.  What it is made of:

- names that sort next to directories: `a.b`, `a-c`, `a0` beside `a/`,
  `x/y.z`, `x/y-z`, `x/y0` beside `x/y/` (git sorts a directory as if its
  name ended with `/`, Mercurial's manifest by plain bytes), non-ASCII
  names, a name with a space;
- files replaced by directories of the same name and back, regular files
  turned into symbolic links and back (same content), exec bits set and
  cleared, empty files, binary content (NULs), content starting with the
  `\\1\\n` of Mercurial's metadata block;
- exact renames: a removed file's exact content added elsewhere in the
  same commit, sometimes to two places at once;
- forks and merges (up to `MAX_HEADS` heads at once), authors with
  non-ASCII names, a committer other than the author, time zones.

Merges resolve each path the way git-cinnabar 0.7, `hg commit` (after `hg
debugsetparents`) and our push agree on (see `_merge_path`): a file
changed on one side only takes that side, a file changed on both sides
gets new content, and a file only on the second parent never is a rename
target.  To tell "changed on one side" the generator follows the
Mercurial file revisions the conversion makes (`FileRevs`: ids computed
as Mercurial does, sha1 of the sorted parents and the text).

Which added files are copies is git's to say, as git-cinnabar 0.7.5 asks
it (lib.git.git_copies, once the history is written): the generator does
not model copies (its file revisions of a copied file lack the copy
metadata; they only steer the merges it makes).  Paths in order of their
bytes are git's order of a recursive tree walk.
"""

import hashlib
import random

from .git import git

REG, EXEC, LINK = '100644', '100755', '120000'
NULL = b'\0' * 20
MAX_HEADS = 3

# Names chosen to sort between a directory and its `/`, or right after it.
DIRS = ('', '', 'a/', 'a/b/', 'x/', 'x/y/', 'é/', 'dir/sub/')
LEAVES = ('a', 'a.b', 'a-c', 'a0', 'b', 'b.c', 'x', 'y', 'y.z', 'y-z', 'y0',
          'z', 'w', 'é', 'ü.txt', 'ñ-ñ', 'sub', 'sub.f', 'sub0', 'd e',
          'f', 'é.b')
ZONES = ('+0000', '+0200', '-0500', '+0530', '-0930', '+1345', '-1200')
PEOPLE = (('Alice Tester', 'alice@example.com'),
          ('Zoë Ünicode', 'zoe@example.com'),
          ('Bob', 'bob@example.org'),
          ('Jürgen Groß', 'j@example.de'))


class Commit:
    """One commit: `files` is {path: (mode, data bytes)}, `parents` the
    indices of its parents, `ops` what the generator did (for reports)."""

    def __init__(self, index, parents, files, author, committer, date,
                 committer_date, message, ops):
        self.index = index
        self.parents = parents
        self.files = files
        self.author = author
        self.committer = committer
        self.date = date
        self.committer_date = committer_date
        self.message = message
        self.ops = ops

    def describe(self):
        return (f'commit {self.index} parents {self.parents}: '
                f'{"; ".join(self.ops) or "no change"}')


class History:
    def __init__(self, seed, commits, steps):
        self.seed = seed
        self.commits = commits
        # Push after commits [0, b) for each b in steps (the last is all).
        self.steps = steps

    def heads(self, upto):
        """Indices of the commits before `upto` that none of them has as
        parent."""
        parents = {p for c in self.commits[:upto] for p in c.parents}
        return [i for i in range(upto) if i not in parents]


def git_order(paths):
    return sorted(paths, key=lambda p: p.encode())


def file_text(data):
    """A file revision's text: the content, with an empty metadata block
    when it starts with `\\1\\n`."""
    if data.startswith(b'\1\n'):
        return b'\1\n\1\n' + data
    return data


class FileRevs:
    """The Mercurial file revisions of the generated history: node ->
    parents, with ids computed as Mercurial does."""

    def __init__(self):
        self.parents = {NULL: ()}

    def make(self, p1, p2, text):
        node = hashlib.sha1(min(p1, p2) + max(p1, p2) + text).digest()
        self.parents[node] = tuple(p for p in (p1, p2) if p != NULL)
        return node

    def is_ancestor(self, a, b):
        """a is b or one of its ancestors."""
        todo, seen = [b], set()
        while todo:
            n = todo.pop()
            if n == a:
                return True
            if n not in seen:
                seen.add(n)
                todo.extend(self.parents[n])
        return False


class Generator:
    def __init__(self, seed, meta=True):
        self.rng = random.Random(seed)
        self.seed = seed
        self.meta = meta
        self.counter = 0
        self.revs = FileRevs()
        self.commits = []
        self.nodes = []  # per commit: {path: file node}

    # Contents and names.

    def fresh(self, kind=None):
        self.counter += 1
        n = self.counter
        kind = kind or self.rng.choice(
            ('text', 'text', 'text', 'text', 'empty', 'binary',
             'meta' if self.meta else 'text'))
        if kind == 'empty':
            return b''
        if kind == 'binary':
            return bytes([0, 1, 2, 255, n % 256]) + b'\0bin %d\0' % n
        if kind == 'meta':
            return b'\1\nnot metadata %d\n\1\nbody\n' % n
        lines = self.rng.randint(1, 4)
        return b''.join(b'seed %d content %d line %d\n' % (self.seed, n, i)
                        for i in range(lines))

    def link_target(self):
        self.counter += 1
        return self.rng.choice(('a', 'x/y', '../é', 'missing')) + \
            '-%d' % self.counter

    def new_path(self, files):
        for _ in range(20):
            path = self.rng.choice(DIRS) + self.rng.choice(LEAVES)
            if path not in files:
                return path
        return 'extra/%d' % self.counter

    def fresh_entry(self):
        mode = self.rng.choice((REG, REG, REG, REG, EXEC, LINK))
        if mode == LINK:
            return mode, self.link_target().encode()
        return mode, self.fresh()

    # Tree edits.

    @staticmethod
    def place(files, path, entry):
        """Set `path`, removing what is in its way: a file where one of
        its directories goes, or a directory where it goes."""
        parts = path.split('/')
        for i in range(1, len(parts)):
            files.pop('/'.join(parts[:i]), None)
        for other in [p for p in files if p.startswith(path + '/')]:
            del files[other]
        files[path] = entry

    def edit(self, files, ops):
        rng = self.rng
        existing = git_order(files)
        op = rng.choice(('add', 'add', 'modify', 'modify', 'delete', 'chmod',
                         'link', 'rename', 'rename', 'swap', 'swap'))
        if op == 'add' or not existing:
            path = self.new_path(files)
            self.place(files, path, self.fresh_entry())
            ops.append(f'add {path} {files[path][0]}')
            return
        path = rng.choice(existing)
        mode, data = files[path]
        if op == 'modify':
            files[path] = (mode, self.link_target().encode()
                           if mode == LINK else self.fresh())
        elif op == 'delete':
            del files[path]
        elif op == 'chmod':
            files[path] = ({REG: EXEC, EXEC: REG, LINK: REG}[mode], data)
        elif op == 'link' and (mode == LINK or data and b'\0' not in data):
            # A symbolic link's target is the content (a path: no NUL).
            files[path] = (REG if mode == LINK else LINK, data)
        elif op == 'link':
            files[path] = (mode, self.fresh('text'))
            op = 'modify'
        elif op == 'rename':
            self.rename(files, path, ops)
            return
        elif op == 'swap':
            self.swap(files, path, ops)
            return
        ops.append(f'{op} {path}')

    def rename(self, files, path, ops):
        mode, data = files.pop(path)
        targets = 2 if self.rng.random() < 0.15 else 1
        if self.rng.random() < 0.2 and mode != LINK and data and \
                b'\0' not in data:
            # Similar, not the same: copies only with cinnabar.similarity.
            data += b'edited %d\n' % self.counter
            ops.append(f'edit {path}')
        for _ in range(targets):
            new = self.new_path(files)
            if self.rng.random() < 0.2 and mode != LINK:
                mode = EXEC if mode == REG else REG
            self.place(files, new, (mode, data))
            ops.append(f'rename {path} -> {new} {mode}')

    def swap(self, files, path, ops):
        """A file becomes a directory of the same name, or a directory
        (the one holding `path`) a file; sometimes keeping a content."""
        mode, data = files[path]
        keep = self.rng.random() < 0.5
        if '/' in path and self.rng.random() < 0.5:
            directory = path.rsplit('/', 1)[0]
            self.place(files, directory,
                       (mode, data) if keep else self.fresh_entry())
            ops.append(f'directory {directory}/ -> file')
        else:
            child = path + '/' + self.rng.choice(LEAVES)
            self.place(files, child,
                       (mode, data) if keep else self.fresh_entry())
            ops.append(f'file {path} -> directory {child}')

    # File revisions, as the conversion makes them.

    def simple_nodes(self, parent, files):
        pfiles = self.commits[parent].files if parent is not None else {}
        pnodes = self.nodes[parent] if parent is not None else {}
        nodes = {}
        for path, (mode, data) in files.items():
            if path in pfiles and pfiles[path][1] == data:
                nodes[path] = pnodes[path]
            else:
                nodes[path] = self.revs.make(pnodes.get(path, NULL), NULL,
                                             file_text(data))
        return nodes

    def _merge_path(self, path, f1, f2, n1, n2, files, nodes, ops):
        """The merge's file at `path` (f1/f2: the parents' (mode, data)
        or None, n1/n2 their nodes) in `files` and `nodes`."""
        rng = self.rng
        if f1 and f2 and n1 == n2:
            if rng.random() < 0.12:
                files[path] = (f1[0], self.fresh('text'))
                nodes[path] = self.revs.make(n1, NULL, files[path][1])
                ops.append(f'merge edits {path}')
            elif rng.random() < 0.05:
                ops.append(f'merge removes {path}')
            else:
                # The mode may differ: one side changed the flag only.
                files[path], nodes[path] = (f1 if rng.random() < 0.5
                                            else f2), n1
        elif f1 and f2:
            if rng.random() < 0.08:
                ops.append(f'merge removes {path}')
            elif self.revs.is_ancestor(n1, n2):
                files[path], nodes[path] = f2, n2
            elif self.revs.is_ancestor(n2, n1):
                files[path], nodes[path] = f1, n1
            else:
                files[path] = (f1[0], self.fresh('text'))
                nodes[path] = self.revs.make(n1, n2, files[path][1])
                ops.append(f'merge resolves {path}')
        elif f1:
            if rng.random() < 0.08:
                ops.append(f'merge removes {path}')
            elif rng.random() < 0.15 and f1[0] != LINK:
                files[path] = (f1[0], self.fresh('text'))
                nodes[path] = self.revs.make(n1, NULL, files[path][1])
                ops.append(f'merge edits {path}')
            else:
                files[path], nodes[path] = f1, n1
        else:
            roll = rng.random()
            if roll < 0.15:
                ops.append(f'merge leaves out {path}')
            elif roll < 0.25 and f2[0] != LINK:
                files[path] = (f2[0], self.fresh('text'))
                nodes[path] = self.revs.make(n2, NULL, files[path][1])
                ops.append(f'merge edits {path}')
            else:
                files[path], nodes[path] = f2, n2

    def merge(self, p1, p2, ops):
        c1, c2 = self.commits[p1], self.commits[p2]
        files, nodes = {}, {}
        for path in git_order(set(c1.files) | set(c2.files)):
            self._merge_path(path, c1.files.get(path), c2.files.get(path),
                             self.nodes[p1].get(path),
                             self.nodes[p2].get(path), files, nodes, ops)
        # A path of the second parent only that is in the way of one of
        # the first parent's is left out.
        while True:
            bad = [p for p in files if p not in c1.files and
                   any(q.startswith(p + '/') or p.startswith(q + '/')
                       for q in files if q != p)]
            if not bad:
                break
            for p in bad:
                del files[p], nodes[p]
                ops.append(f'merge leaves out {p}')
        if self.rng.random() < 0.3:
            path = ('merged.%d' if 'merged' in files else 'merged/%d') % \
                self.counter
            files[path] = (REG, self.fresh('text'))
            nodes[path] = self.revs.make(NULL, NULL, files[path][1])
            ops.append(f'merge adds {path}')
        return files, nodes

    # Commits.

    def identity(self, index, ops):
        rng = self.rng
        author = rng.choice(PEOPLE)
        date = '%d %s' % (1500000000 + index * 7200 + rng.randint(0, 3600),
                          rng.choice(ZONES))
        if rng.random() < 0.3:
            committer = rng.choice(PEOPLE)
            committer_date = '%d %s' % (int(date.split()[0])
                                        + rng.randint(0, 99999),
                                        rng.choice(ZONES))
            ops.append('committer differs')
        else:
            committer, committer_date = author, date
        return author, committer, date, committer_date

    def message(self, index):
        subject = f'commit {index} of seed {self.seed}'
        roll = self.rng.random()
        if roll < 0.2:
            subject += ' — été ☃'
        if roll > 0.8:
            subject += f'\n\nA body, line one.\nLine two of {index}.'
        return subject + '\n'

    def commit(self, parents):
        index = len(self.commits)
        ops = []
        if len(parents) == 2:
            files, nodes = self.merge(*parents, ops)
        else:
            files = dict(self.commits[parents[0]].files) if parents else {}
            for _ in range(self.rng.choice((0, 1, 1, 1, 2, 2, 3, 4))):
                self.edit(files, ops)
            while not parents and not files:
                # An empty root gets the null manifest from hg commit but
                # the empty manifest's id from git-cinnabar 0.7 and us.
                self.edit(files, ops)
            nodes = self.simple_nodes(parents[0] if parents else None, files)
        commit = Commit(index, parents, files, *self.identity(index, ops),
                        self.message(index), ops)
        self.commits.append(commit)
        self.nodes.append(nodes)
        return index

    def next_parents(self, heads, merges=True):
        rng = self.rng
        roll = rng.random()
        if merges and len(heads) >= 2 and (
                roll < 0.15 or len(heads) >= MAX_HEADS and roll < 0.5):
            p1, p2 = rng.sample(heads, 2)
            return [p1, p2]
        if len(heads) < MAX_HEADS and roll > 0.9:
            return [rng.randrange(max(0, len(self.commits) - 8),
                                  len(self.commits))]
        return [rng.choice(heads)]


def generate(seed, count, steps=3, merges=True, meta=True):
    """A History of `count` commits (the first a root, a single root),
    pushed in `steps` steps; without merges when `merges` is false (forks
    still), without content starting with `\\1\\n` when `meta` is false
    (what git-cinnabar 0.7.5 pushes as Mercurial does: it does not escape
    such content)."""
    gen = Generator(seed, meta)
    heads = [gen.commit([])]
    for _ in range(count - 1):
        parents = gen.next_parents(heads, merges)
        index = gen.commit(parents)
        heads = [h for h in heads if h not in parents] + [index]
    cuts = sorted(gen.rng.sample(range(2, count), min(steps - 1, count - 2)))
    return History(seed, gen.commits, cuts + [count])


def _ident(person, date):
    name, email = person
    return f'{name} <{email}> {date}'.encode()


def _fast_import_stream(history):
    out = []
    for c in history.commits:
        message = c.message.encode()
        out.append(b'commit refs/heads/main\nmark :%d\n' % (c.index + 1))
        out.append(b'author %s\n' % _ident(c.author, c.date))
        out.append(b'committer %s\n' % _ident(c.committer, c.committer_date))
        out.append(b'data %d\n%s\n' % (len(message), message))
        if c.parents:
            out.append(b'from :%d\n' % (c.parents[0] + 1))
        if len(c.parents) > 1:
            out.append(b'merge :%d\n' % (c.parents[1] + 1))
        out.append(b'deleteall\n')
        for path in git_order(c.files):
            mode, data = c.files[path]
            out.append(b'M %s inline %s\ndata %d\n%s\n' % (
                mode.encode(), path.encode(), len(data), data))
        out.append(b'\n')
    return b''.join(out)


def write_git(history, repo):
    """Write the history into the git repository `repo` (refs/heads/main
    at the last commit); return the commit ids, in history order."""
    marks = repo / 'oracle-marks'
    git('fast-import', '--quiet', f'--export-marks={marks}', cwd=repo,
        input=_fast_import_stream(history))
    ids = {}
    for line in marks.read_text().splitlines():
        mark, oid = line.split()
        ids[int(mark[1:]) - 1] = oid
    marks.unlink()
    return [ids[c.index] for c in history.commits]
