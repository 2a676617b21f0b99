"""Crafted Mercurial data with valid ids, written as bundle files.

Mercurial refuses to make some changesets (a NUL in the user, a date it
cannot parse, paths its auditor refuses); hostile servers send them
anyway.  This module builds such revisions by hand, with the ids hg would
give them, and writes them as HG10UN or HG20 bundles that `hg unbundle`,
`git cinnabar unbundle` and a clone from a bundle file read.

Formats (`hg help internals.revlogs`, `internals.changegroups`,
`internals.bundles`, `internals.bundle2`):

- a revision id is sha1(min(p1, p2) + max(p1, p2) + text), parents as
  20 raw bytes, the null id for a missing parent;
- a changeset text is `<manifest hex>\\n<user>\\n<time> <tz>[ <extra>]\\n`
  then the sorted changed files one per line, an empty line and the
  description; extra is `key:value` pairs joined by NUL, with `\\`, `\\n`,
  `\\r` and NUL escaped;
- a manifest text is one `<path>\\0<hex node><flags>\\n` line per file,
  sorted by path bytes; flags are '', 'x' or 'l';
- a file text is the content, preceded by a `\\1\\n...\\1\\n` metadata
  block when it has copy information or starts with `\\1\\n`;
- a changegroup is the changelog group, the manifest group, (version 03:
  directory manifests, each a name chunk and a group, ended by an empty
  chunk), then for each file a chunk holding its name followed by its
  group, and an empty chunk.
  A chunk is a 4-byte big-endian length (counting itself) and data; a
  length of 0 (or less than 5) ends a group.  A revision chunk is a header
  (version 01: node p1 p2 linknode; 02: node p1 p2 deltabase linknode;
  03: the same and 2 bytes of flags)
  and a delta: (start, end, length) 4-byte big-endian triples, each
  followed by `length` bytes replacing base[start:end].  Version 01
  deltas are against the previous chunk of the group (p1 for the first);
  version 02 names its base, the null id meaning the empty text.
- HG10UN is the magic `HG10UN` then a version 01 changegroup.  HG20 is
  `HG20`, a 4-byte length and stream parameters, then parts: a 4-byte
  header length, the header (type length, type, 4-byte part id, counts of
  mandatory and advisory parameters, their key/value lengths, keys and
  values) and payload chunks (4-byte length, data) ended by a 0 length;
  a 0 header length ends the bundle.

Everything is bytes.  Nothing here checks what it is given: the point is
to be able to write what hg would refuse.
"""

from lib import bundlefmt
from lib.bundlefmt import NULL, node_id


def escape_extra(value):
    return (value.replace(b'\\', b'\\\\').replace(b'\n', b'\\n')
            .replace(b'\r', b'\\r').replace(b'\0', b'\\0'))


def changeset_text(manifest, user, date, files, desc, extra=None):
    """A changelog text.  `manifest` is a raw id, `date` the raw
    `<time> <tz>` field (bytes, written as is), `extra` a dict of bytes
    or a raw bytes field (written as is)."""
    line = date
    if isinstance(extra, dict):
        extra = b'\0'.join(escape_extra(k + b':' + v)
                           for k, v in sorted(extra.items()))
    if extra:
        line += b' ' + extra
    head = [manifest.hex().encode(), user, line] + sorted(files)
    return b'\n'.join(head) + b'\n\n' + desc


def manifest_text(entries):
    """A manifest text from {path: (file node, flags)}, sorted by path.
    A list of (path, node, flags) is written in the order given."""
    if isinstance(entries, dict):
        entries = [(p, n, f) for p, (n, f) in sorted(entries.items())]
    return b''.join(path + b'\0' + node.hex().encode() + flags + b'\n'
                    for path, node, flags in entries)


def file_text(data, meta=None):
    """A filelog text: `data` with its metadata block if needed."""
    if meta or data.startswith(b'\1\n'):
        block = b''.join(k + b': ' + v + b'\n'
                         for k, v in sorted((meta or {}).items()))
        return b'\1\n' + block + b'\1\n' + data
    return data


class Rev:
    """One revision of a revlog: its text, parents, linked changeset."""

    def __init__(self, text, p1=NULL, p2=NULL, link=None):
        self.text = text
        self.p1 = p1
        self.p2 = p2
        self.node = node_id(text, p1, p2)
        self.link = link if link is not None else self.node
        # Version 02/03: the revision this one's delta is against (None:
        # the null id, a full text), and the delta (None: replace all).
        self.delta_base = None
        self.delta = None


class Repo:
    """Revisions to put in a bundle, built in topological order.

    `commit` adds a changeset with its manifest and file revisions; the
    lower-level `add_*` methods add revisions whose texts the caller
    made (for damaged manifests, odd changesets)."""

    def __init__(self):
        self.changesets = []
        self.manifests = []
        self.files = {}          # path -> [Rev]
        self.trees = {}          # changeset node -> {path: (node, flags)}
        self.texts = {}          # file node -> text

    def add_file(self, path, text, p1=NULL, p2=NULL, link=NULL):
        rev = Rev(text, p1, p2, link)
        revs = self.files.setdefault(path, [])
        if all(r.node != rev.node for r in revs):
            revs.append(rev)
        self.texts[rev.node] = text
        return rev

    def add_manifest(self, text, p1=NULL, p2=NULL, link=NULL):
        rev = Rev(text, p1, p2, link)
        self.manifests.append(rev)
        return rev

    def add_changeset(self, text, p1=NULL, p2=NULL):
        rev = Rev(text, p1, p2)
        self.changesets.append(rev)
        return rev

    def commit(self, files, user=b'Crafter <craft@example.com>',
               date=b'0 0', desc=b'crafted', parents=(), extra=None,
               manifest_entries=None):
        """A changeset whose tree is `files` ({path: data} or
        {path: (data, flags)}), on `parents` (changeset Revs).  A file
        equal to its first parent's keeps its revision, others get a new
        one with the parents' revisions as parents.  `manifest_entries`
        (a list of (path, data, flags)) replaces the sorted manifest, for
        manifests hg would not write.  Returns the changeset Rev."""
        p1, p2 = (list(parents) + [None, None])[:2]
        entries = manifest_entries
        if entries is None:
            entries = []
            for path, value in sorted(files.items()):
                data, flags = value if isinstance(value, tuple) \
                    else (value, b'')
                entries.append((path, data, flags))
        old1 = self.trees.get(p1.node, {}) if p1 else {}
        old2 = self.trees.get(p2.node, {}) if p2 else {}
        tree, new, changed = {}, [], set()
        for path, data, flags in entries:
            text = file_text(data)
            f1 = old1.get(path, (NULL, b''))
            f2 = old2.get(path, (NULL, b''))
            if f1[0] != NULL and self.texts[f1[0]] == text and \
                    f2[0] in (NULL, f1[0]):
                node = f1[0]
                if flags != f1[1]:
                    changed.add(path)
            else:
                rev = self.add_file(path, text, f1[0], f2[0])
                new.append(rev)
                node = rev.node
                changed.add(path)
            tree[path] = (node, flags)
        changed |= (set(old1) | set(old2)) - set(tree)
        mtext = manifest_text([(p, tree[p][0], f) for p, _, f in entries])
        manifest = self.add_manifest(mtext, self._manifest_of(p1),
                                     self._manifest_of(p2))
        text = changeset_text(manifest.node, user, date, changed, desc,
                              extra)
        cs = self.add_changeset(text, p1.node if p1 else NULL,
                                p2.node if p2 else NULL)
        manifest.link = cs.node
        for rev in new:
            rev.link = cs.node
        self.trees[cs.node] = tree
        return cs

    def _manifest_of(self, cs):
        if cs is None:
            return NULL
        hexid = cs.text.split(b'\n', 1)[0]
        return bytes.fromhex(hexid.decode())

    # Writing.

    def changegroup(self, version='01'):
        """The changegroup of every revision, as bytes."""
        files = [(path, _group(revs, version))
                 for path, revs in self.files.items()]
        return bundlefmt.Changegroup(
            int(version), _group(self.changesets, version),
            _group(self.manifests, version), files).encode()

    def bundle_v1(self):
        """An HG10UN bundle."""
        return b'HG10UN' + self.changegroup('01')

    def bundle_v2(self, version='02', params=b''):
        """An uncompressed HG20 bundle with one changegroup part."""
        return bundle2([('changegroup', {'version': version},
                         self.changegroup(version))], params)


def small_delta(base, text):
    """A one-hunk delta from `base` to `text`, replacing only the lines
    between their common first lines and their common last lines (as
    Mercurial's line-based deltas do)."""
    if base == text:
        return bundlefmt.encode_delta([(len(base), len(base), b'')])
    return bundlefmt.make_delta(base, text)


def _group(revs, version):
    """bundlefmt.Rev chunks of `revs`: version 01 deltas against the
    previous revision (p1 for the first), 02/03 against their delta_base
    (None: the null id, the empty text)."""
    texts = {NULL: b''}
    out = []
    prev = None
    for rev in revs:
        if version == '01':
            base = prev.node if prev else rev.p1
        else:
            base = rev.delta_base or NULL
        # A base outside the group (p1 in the receiver's repository) is
        # not known here; version 01 callers keep groups self-contained.
        delta = rev.delta if version != '01' and rev.delta is not None \
            else bundlefmt.full_delta(texts.get(base, b''), rev.text)
        out.append(bundlefmt.Rev(rev.node, rev.p1, rev.p2, base, rev.link,
                                 delta))
        texts[rev.node] = rev.text
        prev = rev
    return out


def bundle2(parts, params=b''):
    """An HG20 bundle of `parts`: (type, {param: value}, payload), each
    payload one chunk, and the stream parameters `params` as written."""
    return bundlefmt.Bundle('bundle2', parts=[
        bundlefmt.Part(kind.encode(), [(k.encode(), v.encode())
                                       for k, v in mandatory.items()],
                       part_id=number, chunks=[payload] if payload else [])
        for number, (kind, mandatory, payload) in enumerate(parts)],
        params=params).encode()


def write(path, data):
    with open(path, 'wb') as f:
        f.write(data)
    return path
