"""Clone bundles: seeding a clone from a bundle the server points to.

A Mercurial server with the `clonebundles` extension and a
`.hg/clonebundles.manifest` advertises the `clonebundles` capability
(Mercurial 6.6 and newer also `clonebundles_manifest`); the wire command
of that name answers the manifest. Its format (Mercurial's `hg help -e
clonebundles`), one bundle a line, best first in the server's opinion:

    <URL> [<key>=<value>[ <key>=<value>]...]

keys and values URI-encoded (`%20`...). The keys we look at:

- `BUNDLESPEC`: `<compression>-<type>[;<param>=<value>...]` (parameters
  URI-encoded). We read the compressions `none`, `gzip`, `bzip2` and
  `zstd` (as far as the helper was built with them) and the types `v1`,
  `v2` and `v3` (bundle1, bundle2 with changegroup 01/02/03), and the
  stream clone bundles `none-packed1`, `none-v2;stream=v2` and
  `none-v2;stream=v3-exp` (unless
  `cinnabar.stream` is `never`; with a `requirements` parameter naming
  only what we read, see cinnabar.streamclone). An
  entry without BUNDLESPEC is tried (the helper recognises what it reads
  from the file itself), an entry with one we do not read is skipped.
- `REQUIRESNI=true`: the URL needs TLS Server Name Indication, which the
  helper's libcurl always sends: kept (it would be skipped by a client
  without SNI, see `usable`).

Only http and https URLs are used (not `peer-bundle-cache://` inline
bundles). Otherwise the server's order is kept: the first usable entry
is the one downloaded.

Settings (looked up as `cinnabar.config` does, so also per remote and in
the environment):

- `cinnabar.clonebundles` (boolean, default true): whether a clone (a
  fetch into empty metadata) may use clone bundles at all (`git cinnabar
  unbundle --clonebundle`, an explicit request, ignores it);
- `cinnabar.clonebundle`, `remote.<remote>.cinnabar-clonebundle`: as in
  git-cinnabar, a URL to use instead of the advertised bundles, or an
  empty value (or `false`) to use none from that remote. As in
  git-cinnabar, it only applies to servers advertising clone bundles.

The bundle is downloaded by `cinnabar.resumable` (kept under the git dir
until it was imported, so that a cut download resumes) and imported by
the helper in the same transaction as the rest of the fetch.
"""

import urllib.parse

from cinnabar import config
from cinnabar import streamclone
from cinnabar.errors import Abort, SettingError
from cinnabar.hg import BUNDLE_MAGIC, streamreader
from cinnabar.record import record
from cinnabar.redact import redact_url, say as _say
from cinnabar.resumable import Download

Entry = record('Entry', 'url attributes')
Entry.__doc__ = """One manifest line: its URL and {key: value}."""

COMPRESSIONS = {'none': None, 'gzip': 'zlib', 'bzip2': 'bzip2',
                'zstd': 'zstd'}
TYPES = ('v1', 'v2', 'v3')
# Bundle1 has no zstd.
V1_COMPRESSIONS = ('none', 'gzip', 'bzip2')
SCHEMES = ('http', 'https')
_TRUE = ('true', 'yes', 'on', '1')
_FALSE = ('false', 'no', 'off', '0', '')


def parse_manifest(data):
    """[Entry...] from the manifest (bytes), in its order. Lines that are
    empty are skipped; an attribute without `=` makes its line skipped."""
    entries = []
    for line in data.decode('utf-8', 'replace').splitlines():
        fields = line.split()
        if not fields:
            continue
        attributes = {}
        for field in fields[1:]:
            key, equal, value = field.partition('=')
            if not equal:
                break
            attributes[urllib.parse.unquote(key)] = urllib.parse.unquote(
                value)
        else:
            entries.append(Entry(fields[0], attributes))
    return entries


def parse_bundlespec(text):
    """(compression, type, {param: value}) from a strict bundlespec
    `<compression>-<type>[;<param>=<value>...]`; raises ValueError."""
    head, *params = text.split(';')
    compression, dash, kind = head.partition('-')
    if not dash or not compression or not kind:
        raise ValueError('bundlespec %r is not <compression>-<type>' % text)
    parsed = {}
    for param in params:
        key, equal, value = param.partition('=')
        if not equal:
            raise ValueError('invalid parameter %r in bundlespec' % param)
        parsed[urllib.parse.unquote(key)] = urllib.parse.unquote(value)
    return compression, kind, parsed


def _stream_problem(compression, kind, params):
    """Why we cannot read a stream clone bundle of this spec, or None."""
    if kind != 'packed1' and not (kind == 'v2' and params.get('stream') in (
            'v2', 'v3-exp')):
        return 'stream clone bundle of a kind we do not read'
    if compression != 'none':
        return 'compressed stream clone bundle'
    requirements = params.get('requirements')
    if requirements is None:
        return None
    return streamreader.requirements_problem(
        streamreader.parse_requirements(requirements))


def why_unusable(entry, engines, has_sni=True, streams=True):
    """Why we cannot use `entry` (a str), or None when we can. `engines`
    is the helper's capabilities (`zlib`, `zstd`, `bzip2`...); `streams`
    whether stream clone bundles may be used (cinnabar.stream)."""
    try:
        parts = urllib.parse.urlsplit(entry.url)
        parts.port  # raises ValueError for a port that is none
    except ValueError as error:
        return 'invalid URL: %s' % error
    if parts.scheme.lower() not in SCHEMES:
        return 'not an http(s) URL'
    if not parts.hostname:
        return 'no host in the URL'
    if entry.attributes.get('REQUIRESNI') == 'true' and not has_sni:
        return 'needs SNI'
    spec = entry.attributes.get('BUNDLESPEC')
    if spec is None:
        return None
    try:
        compression, kind, params = parse_bundlespec(spec)
    except ValueError as error:
        return str(error)
    if 'stream' in params or 'stream' in kind or kind == 'packed1':
        return (_stream_problem(compression, kind, params) if streams
                else 'stream clone bundle, cinnabar.stream=never')
    if kind not in TYPES:
        return 'unknown bundle type %r' % kind
    if compression not in COMPRESSIONS or (
            kind == 'v1' and compression not in V1_COMPRESSIONS):
        return 'unknown compression %r for %s' % (compression, kind)
    engine = COMPRESSIONS[compression]
    if engine is not None and engine not in engines:
        return 'the helper was built without %s' % engine
    return None


def choose(entries, engines, has_sni=True):
    """The first entry we can use, or None."""
    for entry in entries:
        if why_unusable(entry, engines, has_sni) is None:
            return entry
    return None


def parse_bool(value, name):
    """A git-style boolean setting's value (None when unset)."""
    if value is None:
        return None
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise SettingError('invalid boolean value %r for %s' % (value, name))


def configured_url(remote, explicit=False):
    """(decided, url): whether the settings decided which bundle to use,
    and the URL they name (None to use no clone bundle). `explicit`: the
    user asked for a clone bundle (`unbundle --clonebundle`), which
    `cinnabar.clonebundles` does not forbid."""
    enabled = parse_bool(config.lookup('clonebundles', remote),
                         'cinnabar.clonebundles')
    if enabled is False and not explicit:
        return True, None
    url = config.lookup('clonebundle', remote)
    if url is None:
        return False, None
    if url.strip().lower() in ('', 'false'):
        return True, None
    return True, url.strip()


def manifest(peer):
    """The server's manifest (bytes)."""
    return peer.clonebundles_manifest()


def advertised(peer):
    """Whether the server has clone bundles (a bundle file has no
    capabilities)."""
    return (peer.capable('clonebundles') is not None
            or peer.capable('clonebundles_manifest') is not None)


def bundle_url(peer, helper, remote, say, explicit=False):
    """The URL of the clone bundle to use from `peer`, or None."""
    decided, url = configured_url(remote, explicit)
    if decided:
        return url
    entries = parse_manifest(manifest(peer))
    engines = helper.capabilities()
    streams = streamclone.mode(remote) != 'never'
    skipped = []
    for entry in entries:
        reason = why_unusable(entry, engines, streams=streams)
        if reason is None:
            return entry.url
        skipped.append('%s (%s)' % (redact_url(entry.url), reason))
    if skipped:
        say('no clone bundle we can use among: %s' % ', '.join(skipped))
    return None


def bundle_download(url, git_dir, say):
    """The Download of the bundle at `url`, refused at its first bytes
    when they are no bundle's."""
    return Download(url, git_dir, say,
                    magic=(BUNDLE_MAGIC, 'a Mercurial bundle'))


def download_and_import(helper, url, git_dir, say=_say):
    """Download the bundle at `url` and import it (pending `finish`).
    Returns (Download, ImportCounts); on failure, the file is
    discarded."""
    download = bundle_download(url, git_dir, say)
    try:
        path = download.fetch(helper)
    except Abort:
        # A clone falls back to a normal one: nothing to resume later.
        download.discard()
        raise
    try:
        if streamreader.is_stream_bundle(path):
            counts = streamclone.import_bundle_file(helper, path, git_dir)
        else:
            counts = helper.import_file(path)
    except Abort:
        download.discard()
        raise
    return download, counts


def seed_clone(peer, helper, git_dir, remote, say=_say):
    """Import the clone bundle `peer` advertises into `helper` (without
    `finish`). Returns the Download (to discard once the fetch is
    finished) or None when no clone bundle was used. Raises Abort (a
    HelperError when the helper died) when the bundle failed."""
    if not advertised(peer):
        return None
    url = bundle_url(peer, helper, remote, say)
    if url is None:
        return None
    say('Getting clone bundle from %s' % redact_url(url))
    download, counts = download_and_import(helper, url, git_dir, say)
    say('clone bundle: %d changesets, %d manifests, %d files' % counts)
    return download
