"""Bundle files written by hand, for input Mercurial itself would never
produce but whose ids are all correct.

Written as HG10UN bundles by lib.bundlefmt (its docstring has the
format): version 01 changegroups, each revision a delta against the
previous one of its group (the first one: against its p1, here always
null, so against the empty text).
"""

from lib.bundlefmt import (NULL, Changegroup, Bundle, Rev, full_delta,
                           node_id)


def group(revisions):
    """revisions: [(node, p1, linked changeset, text, delta or None)] as
    version 01 chunks; None: a delta replacing the whole previous text of
    the group."""
    out, previous = [], b''
    for n, p1, cs, text, delta in revisions:
        if delta is None:
            delta = full_delta(previous, text)
        out.append(Rev(n, p1, NULL, None, cs, delta))
        previous = text
    return out


def manifest_line(path, content, file_node=None):
    file_node = file_node or node_id(content)
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
        fnodes = {p: node_id(spoil(t, 'file', wrong))
                  for p, t in files.items()}
        text = manifest_text
        if text is None:
            text = b''.join(manifest_line(p, t, fnodes[p])
                            for p, t in files.items())
        p1 = self.manifests[-1][0] if self.manifests else NULL
        mnode = node_id(spoil(text, 'manifest', wrong), p1)
        cs_p1 = self.changesets[-1][0] if self.changesets else NULL
        cs_text = b'%s\nTest <test@example.com>\n0 0\n%s\n\nchange %d' % (
            mnode.hex().encode(), b'\n'.join(sorted(files)),
            len(self.changesets))
        cs = node_id(spoil(cs_text, 'changeset', wrong), cs_p1)
        self.changesets.append((cs, cs_p1, cs, cs_text, None))
        self.manifests.append((mnode, p1, cs, text, delta))
        for path, content in files.items():
            self.files.setdefault(path, (fnodes[path], cs, content))
        return text

    def bundle(self):
        """An HG10UN bundle of the history."""
        files = [(path, group([(n, NULL, cs, content, None)]))
                 for path, (n, cs, content) in sorted(self.files.items())]
        cg = Changegroup(1, group(self.changesets), group(self.manifests),
                         files)
        return Bundle('bundle1', b'UN', cg.encode()).encode()
