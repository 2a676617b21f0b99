"""The oracle for accepted inputs: do the hg ids of a bundle verify?

A revision's id is SHA-1(min(p1, p2) + max(p1, p2) + text), its text
being its delta applied to its delta base (see bundlefmt).  A base is the
previous revision of the same group (version 01), or any revision named
by the chunk (02, 03) that came earlier in the group, or the null id
(empty text).  `bundle_ids_verify` answers False when some revision of
the bundle's changegroups has an id its text does not give, or a delta
that cannot be applied (Mercurial would refuse both), True when every one
verifies (a revision sent twice is taken as known the second time, as
Mercurial and the helper do; for file revisions the helper, unlike
Mercurial, also does so when the second time is under another file),
and None when it cannot tell (zstd, which Python's standard library
cannot read, or a base outside the bundle, i.e. in the importing
repository, which the fuzzer's scratch repositories never have).
"""

import hashlib

from lib.bundlefmt import (FormatError, apply_delta, read_bundle,
                           read_changegroup)

NULL = b'\0' * 20
# The empty file revision without parents: the helper takes it as known
# (PROTOCOL.md, `data`), as Mercurial takes any revision it already has,
# without looking at the parents a chunk claims for it; it stores nothing
# for it, so a chunk claiming other parents changes nothing.
EMPTY_FILE = hashlib.sha1(NULL + NULL).digest()


def hg_id(p1, p2, text):
    a, b = sorted((p1, p2))
    return hashlib.sha1(a + b + text).digest()


def group_verifies(revs, files=False, known=None):
    """`known`: texts of revisions known before the group (by id)."""
    texts = {NULL: b''}
    if known is not None:
        texts = known
        texts.setdefault(NULL, b'')
    for rev in revs:
        if files and rev.node == EMPTY_FILE:
            texts[rev.node] = b''
            continue
        if rev.node in texts:
            continue  # sent again: skipped as known, as Mercurial does
        if rev.base not in texts:
            return None
        try:
            text = apply_delta(texts[rev.base], rev.delta)
        except FormatError:
            return False
        if hg_id(rev.p1, rev.p2, text) != rev.node:
            return False
        texts[rev.node] = text
    return True


def bundle_ids_verify(data):
    try:
        bundle = read_bundle(data)
        groups = []
        for version, payload in bundle.changegroups():
            if version not in (1, 2, 3):
                return None
            cg = read_changegroup(payload, version)
            groups += [(cg.changesets, False), (cg.manifests, False)]
            groups += [(revs, False) for _, revs in cg.trees]
            groups += [(revs, True) for _, revs in cg.files]
    except (FormatError, ValueError, OSError, EOFError):
        return None
    # File revisions are known by id whatever their file, to the helper as
    # to git-cinnabar: one sent again under another file is skipped.
    file_texts = {}
    verdicts = [group_verifies(revs, files, file_texts if files else None)
                for revs, files in groups]
    if False in verdicts:
        return False
    return None if None in verdicts else True


def _paths(manifest_text):
    return [line.split(b'\0', 1)[0] for line in manifest_text.split(b'\n')
            if b'\0' in line]


def has_file_and_directory(data):
    """Whether a manifest of the bundle holds a path that is both a file
    and a directory (`a` and `a/b`, as Mercurial's own tampered.hg does):
    the metadata cannot keep such a manifest exactly, so `fsck full`
    reports it, as git-cinnabar's fsck does; importing it is not a bug.
    None when the bundle cannot be read here (zstd)."""
    try:
        bundle = read_bundle(data)
        texts = {NULL: b''}
        for version, payload in bundle.changegroups():
            if version not in (1, 2, 3):
                return None
            for rev in read_changegroup(payload, version).manifests:
                if rev.base not in texts:
                    return None
                texts[rev.node] = apply_delta(texts[rev.base], rev.delta)
    except (FormatError, ValueError, OSError, EOFError):
        return None
    for text in texts.values():
        paths = set(_paths(text))
        for path in paths:
            parts = path.split(b'/')
            if any(b'/'.join(parts[:i]) in paths
                   for i in range(1, len(parts))):
                return True
    return False
