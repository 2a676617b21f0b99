"""What a git-cinnabar-helper executable is, without using it for work.

`probe(path)` runs the helper at `path` outside any repository, sends it
`version` (helper/PROTOCOL.md) and returns its answer `version
<protocol> <helper version> <build id>` as a HelperVersion.

`expected_build_id()` is the build id of a helper built from the helper
sources next to this package: the first 16 hex digits of the SHA-256 of
the contents of `build_id_sources()`, every .c and .h file under helper/
(helper/sha1/ included), concatenated in byte order of their paths.
None when the sources are not there (an installed git-cinnabar). This
is the one definition: helper/helper.mk runs this function to get the
build id it compiles into the helper.

`describe(path)` is the line `git cinnabar --version` shows for it.
"""

import glob
import hashlib
import os
import subprocess

from cinnabar.errors import Abort
from cinnabar.helper import PROTOCOL, find_helper
from cinnabar.record import record

HelperVersion = record('HelperVersion',
                       'protocol version build_id')
PROBE_TIMEOUT = 30
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ProbeError(Abort):
    """The executable did not answer the `version` handshake."""


def probe(path):
    """The HelperVersion the executable at `path` answers."""
    env = {k: v for k, v in os.environ.items() if k != 'GIT_DIR'}
    try:
        result = subprocess.run([path], input=b'version\n',
                                stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env,
                                cwd=os.path.dirname(os.path.abspath(path))
                                or None, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as error:
        raise ProbeError('cannot run %s: %s' % (path, error))
    fields = result.stdout.decode('ascii', 'replace').split('\n')[0].split()
    if len(fields) != 4 or fields[0] != 'version' or (
            not fields[1].isdigit()):
        raise ProbeError('%s does not answer the version handshake of a '
                         'git-cinnabar-helper' % path)
    return HelperVersion(int(fields[1]), fields[2], fields[3])


def build_id_sources(top=TOP):
    """The helper sources the build id covers, in the order hashed."""
    sources = glob.glob(os.path.join(top, 'helper', '**', '*.[ch]'),
                        recursive=True)
    return sorted(sources, key=os.fsencode)


def expected_build_id(top=TOP):
    sources = build_id_sources(top)
    if not sources:
        return None
    digest = hashlib.sha256()
    for path in sources:
        with open(path, 'rb') as f:
            digest.update(f.read())
    return digest.hexdigest()[:16]


def problems(found, version):
    """What is wrong with a helper answering HelperVersion `found`, for
    this Python side at `version`: a list of strings (empty when none)."""
    wrong = []
    if found.protocol != PROTOCOL:
        wrong.append('it speaks protocol %d, this git-cinnabar needs %d'
                     % (found.protocol, PROTOCOL))
    if found.version != version:
        wrong.append('it is version %s, this git-cinnabar is %s'
                     % (found.version, version))
    expected = expected_build_id()
    if expected is not None and found.build_id != expected:
        wrong.append('it was built from other sources (build %s, the '
                     'sources here are %s)' % (found.build_id, expected))
    return wrong


def describe(version):
    """The helper line of `git cinnabar --version`."""
    path = find_helper()
    if path is None or not os.path.exists(path):
        return ('helper: missing (run `make`, or `git cinnabar download` '
                'for a prebuilt one)')
    try:
        found = probe(path)
    except ProbeError as error:
        return 'helper: unusable: %s' % error.message
    text = 'helper: %s, protocol %d, build %s (%s)' % (
        found.version, found.protocol, found.build_id, path)
    wrong = problems(found, version)
    if wrong:
        text += '\nhelper is stale: %s; rebuild it with `make` or run ' \
                '`git cinnabar download`' % '; '.join(wrong)
    return text
