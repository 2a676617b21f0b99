"""The release manifest and signature files (cinnabar.release)."""

import os

import pytest

from cinnabar import ed25519, release
from cinnabar.errors import Abort

MANIFEST = b'''# a comment

channel release
version 0.2.0
date 2026-01-01T00:00:00Z
protocol 1
key %s
key %s
python %s git-cinnabar-0.2.0.tar.gz
helper linux-x86_64 %s linux-x86_64/git-cinnabar-helper
''' % (b'a' * 64, b'b' * 64, b'C' * 64, b'd' * 64)


def test_parse_manifest():
    manifest = release.parse_manifest(MANIFEST, 'URL')
    assert manifest == {
        'channel': 'release', 'version': '0.2.0',
        'date': '2026-01-01T00:00:00Z', 'protocol': '1',
        'keys': ['a' * 64, 'b' * 64],
        'python': ('c' * 64, 'git-cinnabar-0.2.0.tar.gz'),
        'helpers': {'linux-x86_64': ('d' * 64,
                                     'linux-x86_64/git-cinnabar-helper')}}


@pytest.mark.parametrize('line,message', [
    (b'channel release\n', 'has no channel line'),
    (b'date 2026-01-01T00:00:00Z\n', 'has no date line'),
    (b'version 0.2.0\n', 'has no version line'),
])
def test_manifest_needs_every_line(line, message):
    with pytest.raises(Abort, match=message):
        release.parse_manifest(MANIFEST.replace(line, b''), 'URL')


@pytest.mark.parametrize('line', [b'channel a b', b'frob 1', b'key',
                                  b'helper linux-x86_64 abc'])
def test_manifest_refuses_unknown_lines(line):
    with pytest.raises(Abort, match='line 11 is not understood'):
        release.parse_manifest(MANIFEST + line + b'\n', 'URL')


def test_signatures_round_trip():
    seeds = [os.urandom(32), os.urandom(32)]
    text = release.format_signatures(seeds, b'data').encode()
    pairs = release.parse_signatures(b'garbage line\n' + text + b'zz yy\n')
    assert [key for key, _ in pairs] == [ed25519.public_key(s)
                                         for s in seeds]
    assert all(ed25519.verify(key, b'data', signature)
               for key, signature in pairs)


class _Response:
    """A response body that records the size of each read asked of it."""

    def __init__(self, data):
        self.data = data
        self.asked = []

    def read(self, size):
        self.asked.append(size)
        chunk, self.data = self.data[:size], self.data[size:]
        return chunk


@pytest.mark.parametrize('size', [0, 1, release.READ_SIZE,
                                  3 * release.READ_SIZE + 5])
def test_read_at_most_reads_in_bounded_pieces(size):
    data = os.urandom(size)
    response = _Response(data + b'tail')
    assert release._read_at_most(response, size) == data
    assert max(response.asked, default=0) <= release.READ_SIZE
    # Without a limit reached, it reads to the end of the body.
    response = _Response(data)
    assert release._read_at_most(response, release.MAX_SIZE + 1) == data
    assert max(response.asked) <= release.READ_SIZE


@pytest.mark.parametrize('line,message', [
    (b'protocol \xc2\xb2', "invalid protocol '\u00b2'"),
    (b'protocol 1x', "invalid protocol '1x'"),
    (b'version 0.\xc2\xb2.0', "invalid version '0.\u00b2.0'"),
    (b'version 0.2.', "invalid version '0.2.'"),
])
def test_manifest_numbers_are_ascii_digits(line, message):
    """A version or protocol written with other digits than ASCII's
    ('\u00b2' passes str.isdigit, and int() refuses it) is refused in one
    line, not an unexpected ValueError."""
    field = line.split()[0]
    text = b''.join(line + b'\n' if old.startswith(field + b' ') else old
                    for old in MANIFEST.splitlines(keepends=True))
    with pytest.raises(Abort, match=message):
        release.parse_manifest(text, 'URL')


@pytest.mark.parametrize('system,machine,platform', [
    ('Linux', 'x86_64', 'linux-x86_64'),
    ('Linux', 'aarch64', 'linux-aarch64'),
    ('Linux', 'arm64', 'linux-aarch64'),
    ('FreeBSD', 'amd64', 'freebsd-x86_64'),
    ('Darwin', 'arm64', 'darwin-arm64'),
    ('Darwin', 'x86_64', 'darwin-x86_64'),
])
def test_platform_name_from_uname(system, machine, platform):
    """The platform whose helper download picks, from `uname -s` and
    `uname -m`: what `make dist` names it on that machine."""
    uname = os.uname_result((system, 'host', '6.1.0', '#1', machine))
    assert release.platform_name(uname) == platform
