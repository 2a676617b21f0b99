"""Writing Mercurial bundle files, as `hg bundle -t <bundlespec>` does.

A bundlespec (`hg help bundlespec`) is `<compression>-<version>`:

    compression   none, gzip, bzip2 or zstd (zstd needs v2)
    version       v1: a bundle1 file, holding a changegroup 01;
                  v2: a bundle2 file, holding a changegroup 02

Either part alone is accepted too, as hg accepts it: a compression alone
takes the version asked for (v2 by default, as hg makes for any
repository using generaldelta, which is every repository made these
days), a version alone takes bzip2, and no bundlespec at all is
bzip2 with that version.

The files, byte for byte:

    bundle1   "HG10" + "UN" + changegroup
              "HG10" + "GZ" + zlib stream of the changegroup
              "HG10" + bzip2 stream of the changegroup (the stream's own
                       "BZ" magic doubles as the type)
    bundle2   "HG20" + <u32 size> + stream parameters
                       (`Compression=GZ|BZ|ZS`, nothing for none)
              then, compressed as the parameter says: one part of type
              CHANGEGROUP (mandatory), part id 0, mandatory parameter
              `version=02`, advisory parameter `nbchanges=<count>`, whose
              payload is the changegroup; then the end of the bundle.
              (cinnabar.hg.bundle2 has the framing.)

Compression is the helper's (`compress`): Python's standard library has
no zstd.
"""

import os
import struct
import tempfile

from cinnabar.errors import Abort
from cinnabar.hg import bundle2
from cinnabar.record import record

BundleSpec = record('BundleSpec', 'compression version')
BundleSpec.__doc__ = """A bundlespec: `compression` is one of COMPRESSIONS,
`version` is `v1` or `v2`."""

# bundlespec compression name: (bundle type, helper compression engine)
COMPRESSIONS = {
    'none': ('UN', 'none'),
    'gzip': ('GZ', 'zlib'),
    'bzip2': ('BZ', 'bzip2'),
    'zstd': ('ZS', 'zstd'),
}
VERSIONS = ('v1', 'v2')
DEFAULT_COMPRESSION = 'bzip2'
DEFAULT_VERSION = 'v2'
# The changegroup version each bundle version holds.
CHANGEGROUP_VERSIONS = {'v1': '01', 'v2': '02'}
SUPPORTED = ('none-v1', 'gzip-v1', 'bzip2-v1', 'none-v2', 'gzip-v2',
             'bzip2-v2', 'zstd-v2')
SUPPORTED_HINT = ('supported bundlespecs: %s (or a compression or a version '
                  'alone)' % ', '.join(SUPPORTED))


def parse_bundlespec(text, version=None):
    """The BundleSpec of `text` (None: the default), given the version
    asked for separately (`v1`, `v2` or None)."""
    compression = spec_version = None
    if text is not None:
        name = text.strip().lower()
        if ';' in name:
            raise Abort('bundlespec parameters are not supported: %r' % text,
                        hint=SUPPORTED_HINT)
        if '-' in name:
            compression, spec_version = name.split('-', 1)
        elif name in VERSIONS:
            spec_version = name
        else:
            compression = name
        if (compression is not None and compression not in COMPRESSIONS
                or spec_version is not None
                and spec_version not in VERSIONS):
            raise Abort('unknown bundlespec %r' % text, hint=SUPPORTED_HINT)
    if spec_version and version and spec_version != version:
        raise Abort('bundlespec %r asks for a %s bundle, but --version asks '
                    'for %s' % (text, spec_version, version))
    spec = BundleSpec(compression or DEFAULT_COMPRESSION,
                      spec_version or version or DEFAULT_VERSION)
    if '%s-%s' % spec not in SUPPORTED:
        raise Abort('%s compression needs a v2 bundle' % spec.compression,
                    hint=SUPPORTED_HINT)
    return spec


def changegroup_version(spec):
    return CHANGEGROUP_VERSIONS[spec.version]


def _bundle1_header(spec):
    bundle_type = COMPRESSIONS[spec.compression][0]
    # A bzip2 stream starts with "BZ": the compressed data brings it.
    return b'HG10' if bundle_type == 'BZ' else b'HG10' + bundle_type.encode()


def _bundle2_header(spec):
    bundle_type = COMPRESSIONS[spec.compression][0]
    params = b'' if bundle_type == 'UN' else b'Compression=' + (
        bundle_type.encode())
    return bundle2.MAGIC + struct.pack('>I', len(params)) + params


def _write_bundle2_parts(out, changegroup, count):
    with open(changegroup, 'rb') as payload:
        bundle2.write_part(out, 'CHANGEGROUP', 0, payload,
                           mandatory_params=[('version', '02')],
                           advisory_params=[('nbchanges', str(count))])
    bundle2.write_end(out)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bundle(helper, spec, changegroup, count, dest):
    """Write to the file `dest` the bundle of `spec` holding the bare
    changegroup in the file `changegroup` (of `count` changesets, of the
    spec's changegroup version). The file is replaced only once whole."""
    engine = COMPRESSIONS[spec.compression][1]
    directory = os.path.dirname(os.path.abspath(dest))
    try:
        fd, partial = tempfile.mkstemp(prefix='.cinnabar-bundle-',
                                       dir=directory)
    except OSError as error:
        raise Abort('cannot write a bundle in %s: %s'
                    % (directory, error.strerror))
    try:
        with os.fdopen(fd, 'wb') as out:
            if spec.version == 'v1':
                out.write(_bundle1_header(spec))
                body = changegroup
            else:
                out.write(_bundle2_header(spec))
                body = changegroup + '.parts'
                with open(body, 'wb') as parts:
                    _write_bundle2_parts(parts, changegroup, count)
        helper.compress(engine, body, partial)
        os.chmod(partial, 0o666 & ~_umask())
        try:
            os.replace(partial, dest)
        except OSError as error:
            raise Abort('cannot write %s: %s' % (dest, error.strerror))
    except BaseException:
        try:
            os.unlink(partial)
        except OSError:
            pass
        raise
