"""Bundle files written by hand, for input Mercurial itself would never
produce but whose ids are all correct.

Format (`hg help internals.changegroups`): "HG10UN", then a version 01
changegroup: the changelog group, the manifest group, then for each file
a chunk holding its name and its group, and an empty chunk.  A group is
a sequence of chunks ended by an empty one; a chunk is a 4-byte
big-endian length (counting itself) and its payload.  A revision's
payload is node, p1, p2 and linked changeset (20 bytes each), then a
delta against the previous revision of the group (the first one: against
its p1, here always null, so against the empty text): hunks of start,
end, length (big-endian 32-bit) and data.  Every id is
sha1(min(p1, p2) + max(p1, p2) + text).
"""

import hashlib
import struct

NULL = b'\0' * 20


def node(text, p1=NULL, p2=NULL):
    return hashlib.sha1(min(p1, p2) + max(p1, p2) + text).digest()


def chunk(payload):
    """A chunk; the empty one (end of a group) has length 0."""
    return struct.pack('>I', len(payload) + 4 if payload else 0) + payload


def replace_delta(previous, text):
    """A delta replacing all of `previous` by `text`."""
    return struct.pack('>III', 0, len(previous), len(text)) + text


def group(revisions):
    """revisions: [(node, p1, linked changeset, text, delta or None)];
    None: a delta replacing the whole previous text of the group."""
    out, previous = [], b''
    for n, p1, cs, text, delta in revisions:
        if delta is None:
            delta = replace_delta(previous, text)
        out.append(chunk(n + p1 + NULL + cs + delta))
        previous = text
    return b''.join(out) + chunk(b'')


def manifest_line(path, content, file_node=None):
    file_node = file_node or node(content)
    return b'%s\0%s\n' % (path, file_node.hex().encode())


def spoil(text, kind, wrong):
    """`text`, or something else when `kind` is the `wrong` one: the id
    of a revision said to be `text` is then not that of its text."""
    return text + b'!' if kind == wrong else text


class History:
    """A linear history of changesets; each file has one content."""

    def __init__(self):
        self.files = {}  # path -> (node, linked changeset, content)
        self.manifests = []  # (node, p1, changeset, text, delta)
        self.changesets = []  # (node, p1, changeset, text, None)

    def add(self, files, manifest_text=None, delta=None, wrong=None):
        """A changeset with `files` ({path: content}).  Its manifest is
        their lines in the given order, or `manifest_text`; it comes as
        `delta` against the previous manifest (default: a delta replacing
        the whole text).  With `wrong` ('changeset', 'manifest' or
        'file'), the ids of that kind of revision added here (and the
        references to them) are not those of their texts.  Returns the
        manifest text."""
        fnodes = {p: node(spoil(t, 'file', wrong)) for p, t in files.items()}
        text = manifest_text
        if text is None:
            text = b''.join(manifest_line(p, t, fnodes[p])
                            for p, t in files.items())
        p1 = self.manifests[-1][0] if self.manifests else NULL
        mnode = node(spoil(text, 'manifest', wrong), p1)
        cs_p1 = self.changesets[-1][0] if self.changesets else NULL
        cs_text = b'%s\nTest <test@example.com>\n0 0\n%s\n\nchange %d' % (
            mnode.hex().encode(), b'\n'.join(sorted(files)),
            len(self.changesets))
        cs = node(spoil(cs_text, 'changeset', wrong), cs_p1)
        self.changesets.append((cs, cs_p1, cs, cs_text, None))
        self.manifests.append((mnode, p1, cs, text, delta))
        for path, content in files.items():
            self.files.setdefault(path, (fnodes[path], cs, content))
        return text

    def bundle(self):
        out = [b'HG10UN', group(self.changesets), group(self.manifests)]
        for path, (n, cs, content) in sorted(self.files.items()):
            out.append(chunk(path) + group([(n, NULL, cs, content, None)]))
        out.append(chunk(b''))
        return b''.join(out)
