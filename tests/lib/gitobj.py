"""git objects written directly as loose objects, for trees git's own
commands refuse to make (names with a newline, `..`, an empty name) or
make slowly (thousands of nested trees).

A loose object is zlib(`<type> <size>\\0<data>`) at
`objects/<2 hex>/<38 hex>` of the sha1 of the uncompressed bytes.  A tree
is a sequence of `<octal mode> <name>\\0<20-byte id>` entries sorted by
name, a tree's name sorting as if it ended with `/`.
"""

import hashlib
import os
import zlib
from pathlib import Path

from .git import git


class ObjectWriter:
    """Writes loose objects into the repository at `repo`."""

    def __init__(self, repo):
        out = git('rev-parse', '--git-path', 'objects', cwd=repo).out
        self.objects = Path(repo) / out.strip()

    def write(self, kind, data):
        raw = b'%s %d\0' % (kind.encode(), len(data)) + data
        oid = hashlib.sha1(raw).hexdigest()
        path = self.objects / oid[:2] / oid[2:]
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            tmp = path.with_name(path.name + '.tmp')
            tmp.write_bytes(zlib.compress(raw))
            os.replace(tmp, path)
        return oid

    def blob(self, data):
        return self.write('blob', data)

    def tree(self, entries):
        """A tree of `entries`: {name (bytes): (mode str, oid)}."""
        def order(name):
            return name + (b'/' if entries[name][0] == '40000' else b'')
        data = b''.join(b'%s %s\0' % (entries[n][0].encode(), n)
                        + bytes.fromhex(entries[n][1])
                        for n in sorted(entries, key=order))
        return self.write('tree', data)

    def tree_of_paths(self, files):
        """A tree holding `files` ({path components tuple: blob oid}),
        components as bytes, so that a component may hold anything,
        even `/`."""
        subdirs = {}
        entries = {}
        for parts, oid in files.items():
            if len(parts) == 1:
                entries[parts[0]] = ('100644', oid)
            else:
                subdirs.setdefault(parts[0], {})[parts[1:]] = oid
        for name, sub in subdirs.items():
            entries[name] = ('40000', self.tree_of_paths(sub))
        return self.tree(entries)

    def deep_tree(self, depth, leaf=b'file', data=b'deep\n'):
        """A tree with one file `depth` components deep (`d/d/.../leaf`),
        built bottom-up without recursion."""
        tree = self.tree({leaf: ('100644', self.blob(data))})
        for _ in range(depth - 1):
            tree = self.tree({b'd': ('40000', tree)})
        return tree
