"""Editing cinnabar metadata by hand with git plumbing, to make the damaged
or foreign states the metadata-health commands must recognise.

Everything goes through `git hash-object`, `mktree`, `commit-tree` and
`update-ref`: no code of the project under test is used.
"""

from .git import METADATA_REF, git, rev_parse

FLAGS = 'files-meta unified-manifests-v2'
PARTS = ('changesets', 'manifests', 'hg2git', 'git2hg', 'files-meta')
# The authorship of all metadata commits (git refuses an empty name and
# date 0 in commit-tree: metadata commits are written by hash-object).
AUTHORSHIP = (b'author  <cinnabar@git> 0 +0000\n'
              b'committer  <cinnabar@git> 0 +0000\n')


def hash_blob(repo, data):
    return git('hash-object', '-w', '--stdin', cwd=repo,
               input=data).out.strip()


def cat(repo, oid):
    return git('cat-file', '-p', oid, cwd=repo).stdout


def parents(repo, commit):
    return git('show', '-s', '--format=%P', commit, cwd=repo).out.split()


def tree_of(repo, commit):
    return rev_parse(repo, f'{commit}^{{tree}}')


def message(repo, commit):
    return git('cat-file', 'commit', commit, cwd=repo).stdout.split(
        b'\n\n', 1)[1]


def commit_tree(repo, tree, parent_ids, text):
    """Write a commit as git-cinnabar writes metadata commits."""
    data = b'tree %s\n' % tree.encode()
    data += b''.join(b'parent %s\n' % p.encode() for p in parent_ids)
    data += AUTHORSHIP + b'\n' + text
    return git('hash-object', '-t', 'commit', '-w', '--literally', '--stdin',
               cwd=repo, input=data).out.strip()


def ls_tree(repo, tree):
    """[(mode, type, oid, name)] of one level of a tree."""
    out = git('ls-tree', '-z', tree, cwd=repo).stdout
    entries = []
    for item in out.split(b'\0'):
        if item:
            info, name = item.split(b'\t', 1)
            mode, kind, oid = info.decode().split()
            entries.append((mode, kind, oid, name.decode()))
    return entries


def _tree_order(entry):
    mode, _, _, name = entry
    return name.encode() + (b'/' if mode == '040000' else b'')


def mktree(repo, entries):
    """Write a tree of `entries` ((mode, type, oid, name)). Built by hand
    (`git mktree` refuses a gitlink to a blob, which hg2git has)."""
    data = b''.join(b'%s %s\0' % (m.lstrip('0').encode(), n.encode())
                    + bytes.fromhex(o)
                    for m, _, o, n in sorted(entries, key=_tree_order))
    return git('hash-object', '-t', 'tree', '-w', '--literally', '--stdin',
               cwd=repo, input=data).out.strip()


def edit_tree(repo, tree, path, entry):
    """The tree `tree` with `path` (a/b/c) set to `entry` ((mode, type,
    oid)) or removed (None)."""
    first, _, rest = path.partition('/')
    entries = [e for e in ls_tree(repo, tree) if e[3] != first]
    if rest:
        sub = [e for e in ls_tree(repo, tree) if e[3] == first]
        new = edit_tree(repo, sub[0][2], rest, entry)
        entries.append(('040000', 'tree', new, first))
    elif entry is not None:
        entries.append((*entry, first))
    return mktree(repo, entries)


def notes(repo, notes_commit):
    """{40-hex key: (mode, oid, path in the tree)} of a notes commit."""
    out = git('ls-tree', '-r', notes_commit, cwd=repo).out
    found = {}
    for line in out.splitlines():
        info, path = line.split('\t', 1)
        mode, _, oid = info.split()
        found[path.replace('/', '')] = (mode, oid, path)
    return found


class MetadataParts:
    """The parts of the current metadata commit, to edit and store as a
    new metadata commit (chained to the current one, as an update)."""

    def __init__(self, repo):
        self.repo = repo
        self.commit = rev_parse(repo, METADATA_REF)
        self.parts = dict(zip(PARTS, parents(repo, self.commit)))

    def notes(self, part):
        return notes(self.repo, self.parts[part])

    def edit_note(self, part, key, oid):
        """Map `key` to `oid` (None: remove it) in notes part `part`."""
        mode, _, path = self.notes(part)[key]
        old = self.parts[part]
        tree = edit_tree(self.repo, tree_of(self.repo, old), path,
                         None if oid is None else
                         (mode, 'commit' if mode == '160000' else 'blob',
                          oid))
        self.parts[part] = commit_tree(self.repo, tree, [old], b'')

    def add_note(self, part, key, oid):
        """Add `key` -> `oid` to notes part `part`, at the top level (the
        fanout layout is the writer's choice; readers take any)."""
        old = self.parts[part]
        mode = '160000' if part == 'hg2git' else '100644'
        tree = edit_tree(self.repo, tree_of(self.repo, old), key,
                         (mode, 'commit' if mode == '160000' else 'blob',
                          oid))
        self.parts[part] = commit_tree(self.repo, tree, [old], b'')

    def store(self, text=FLAGS.encode()):
        """Write the new metadata commit and point the ref at it."""
        new = commit_tree(self.repo, tree_of(self.repo, self.commit),
                          [self.parts[p] for p in PARTS] + [self.commit],
                          text)
        git('update-ref', METADATA_REF, new, cwd=self.repo)
        return new


def move_changeset(parts, node, old, new, note):
    """In MetadataParts `parts`: changeset `node`'s hg2git entry, git2hg
    note and place among the changeset heads moved from commit `old` to
    commit `new` (with the note blob `note`)."""
    repo = parts.repo
    parts.edit_note('hg2git', node, new)
    parts.edit_note('git2hg', old, None)
    parts.add_note('git2hg', new, note)
    heads = parts.parts['changesets']
    parts.parts['changesets'] = commit_tree(
        repo, tree_of(repo, heads),
        [new if p == old else p for p in parents(repo, heads)],
        message(repo, heads))


def forge_author(repo, node, text):
    """In the clone `repo`: the commit of changeset `node` (whose raw
    text is `text`) replaced by one with the same tree, parents and date,
    but another author and message, whose git2hg note gets an `author`
    field (the real user) and a `patch` (the real description in place of
    the message) that rebuild the real changeset text from it, so every
    hg id still checks out. Returns (the real commit, the forged one)."""
    parts = MetadataParts(repo)
    old = parts.notes('hg2git')[node][1]
    raw = git('cat-file', 'commit', old, cwd=repo).stdout
    header, _, _ = raw.partition(b'\n\n')
    date = b' '.join(header.split(b'\nauthor ')[1].split(b'\n')[0]
                     .split(b' ')[-2:])
    ident = b'Trusted Dev <trusted@example.org> ' + date
    forged_raw = b'\n'.join(
        line for line in header.split(b'\n')
        if not line.startswith((b'author ', b'committer '))) + \
        b'\nauthor %s\ncommitter %s\n\nReviewed security fix' % (
            ident, ident)
    forged = git('hash-object', '-t', 'commit', '-w', '--stdin',
                 cwd=repo, input=forged_raw).out.strip()
    head, _, description = text.partition(b'\n\n')
    user = head.split(b'\n')[1]
    start = len(head) + 2
    end = start + len(b'Reviewed security fix')
    patch = b'%d,%d,%s' % (start, end, b''.join(
        b'%%%02X' % c for c in description))
    note = cat(repo, parts.notes('git2hg')[old][1])
    fields = [line for line in note.split(b'\n')
              if not line.startswith((b'author ', b'patch '))]
    fields += [b'author ' + user, b'patch ' + patch]
    move_changeset(parts, node, old, forged,
                   hash_blob(repo, b'\n'.join(fields)))
    parts.store()
    return old, forged
