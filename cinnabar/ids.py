"""Mercurial and git object ids, kept apart by type.

Both are 40 lowercase hex digits, so nothing in the text tells them apart:
the type does. `HgId` names a Mercurial changeset, manifest or file
revision; `GitId` names a git object. Each constructor checks the form and
raises ValueError on anything else, so ids read from the wire or from the
helper are checked once, where they enter.
"""

_HEX_DIGITS = '0123456789abcdef'


def is_hex40(text):
    """Whether `text` is 40 lower-case hex digits (without `re`, which a
    fetch with nothing new does not load)."""
    return len(text) == 40 and not text.strip(_HEX_DIGITS)


class HgId(str):
    """A full Mercurial node id in hex."""

    __slots__ = ()

    def __new__(cls, text):
        if isinstance(text, bytes):
            text = text.decode('ascii', 'replace')
        if not is_hex40(text):
            raise ValueError('not a Mercurial id: %r' % text)
        return super().__new__(cls, text)

    @property
    def is_null(self):
        return self == NULL_HG


class GitId(str):
    """A full git object id (sha1) in hex."""

    __slots__ = ()

    def __new__(cls, text):
        if isinstance(text, bytes):
            text = text.decode('ascii', 'replace')
        if not is_hex40(text):
            raise ValueError('not a git id: %r' % text)
        return super().__new__(cls, text)

    @property
    def is_null(self):
        return self == NULL_GIT


NULL_HG = HgId('0' * 40)
NULL_GIT = GitId('0' * 40)
