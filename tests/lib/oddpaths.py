"""Directory names that a helper command line must carry unambiguously
(helper/PROTOCOL.md, Framing), and the decoys that show when it did not.

Every name holds a space or a line break, so that a line cut into words
at its spaces (or read up to its first line break) names another path,
`decoy_for(path)`: a test writes a decoy there and checks that it was
neither read nor written.  Besides, each holds something else a quoting
must get right: quotes, backslashes that look like escapes, bytes that
are not UTF-8, a leading dash.
"""

import os
from pathlib import Path

NAMES = {
    'space': b'with space',
    'line-break': b'line\nbreak x',
    'quotes': b'"quoted" x"',
    'backslashes': b'back\\slash \\n\\"\\101',
    'not-utf8': b'latin \xe9\xff\x01',
    'dash': b'-dash x',
}
DECOY = b'not the file the command was given\n'


def odd_dir(parent, name):
    """A new directory `parent`/NAMES[name]."""
    path = Path(parent) / os.fsdecode(NAMES[name])
    path.mkdir()
    return path


def decoy_for(path):
    """Where `path` ends when cut at its first space or line break."""
    raw = os.fsencode(path)
    cuts = [i for i in (raw.find(b' '), raw.find(b'\n')) if i >= 0]
    return Path(os.fsdecode(raw[:min(cuts)]))


def plant_decoy(path, data=DECOY):
    """Write `data` at decoy_for(path); returns that path."""
    decoy = decoy_for(path)
    decoy.write_bytes(data)
    return decoy
