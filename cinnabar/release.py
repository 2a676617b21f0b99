"""Prebuilt helpers and releases: where they are and how they are checked.

Used by `git cinnabar download` and `git cinnabar self-update`. Files are
fetched with Python's urllib (the helper may be missing or stale: that
is why they run), from a base URL: `--url`, else the setting
`cinnabar.download-url` (or GIT_CINNABAR_DOWNLOAD_URL), else the
DOWNLOAD_URL of cinnabar/build_info.py (`make DOWNLOAD_URL=...`, or the
one `make dist` gave the release). It must be an
https URL, a file:// URL or a local path: plain http is refused, and so
is a redirect from https to anything else. The certificate authorities
are the system's, or those of the file named by GIT_SSL_CAINFO, else by
git's `http.sslCAInfo` setting (as for git).

Layout under the base URL (what `make dist` writes, see tools/make-dist):

    <base>/release                        the release manifest
    <base>/release.sig                    its signatures
    <base>/git-cinnabar-<version>.tar.gz  the Python tree: `git-cinnabar`,
                                          `git-remote-hg`, `cinnabar/`
    <base>/<platform>/git-cinnabar-helper the helper (and its .sha256, for
                                          people: `sha256sum -c`)
    <base>/versions/<version>/...         a past release, same layout
    <base>/branches/<channel>/...         the latest of another channel

`<platform>` is `<system>-<machine>` from os.uname(), lower case, e.g.
`linux-x86_64`, `linux-aarch64`, `darwin-arm64` (platform_name():
other systems' amd64 and arm64 are x86_64 and aarch64).

The release manifest is text, one item a line, `#` comments and empty
lines ignored; everything that is checked is in it, and it is what is
signed:

    channel <name>                     `release`, or the branch of
                                       `self-update --branch <name>`
    version <version>                  e.g. `version 0.2.0`
    date <YYYY-MM-DDTHH:MM:SSZ>        the date of the commit released
    protocol <helper protocol>         e.g. `protocol 2`
    key <public key hex>               (any number) the release keys the
                                       release's Python tree trusts
    python <sha256> <path>             the Python tree archive
    helper <platform> <sha256> <path>  one line per platform

paths relative to the directory of the manifest. A manifest is refused
when its channel is not the one asked for (a `branches/nightly/release`
copied to `release`), its version is not the one wanted (download wants
this version; self-update refuses an older one unless --exact), or it is
of this version but older than this installation's date.

Signatures: `release.sig` holds one line per signature, `<public key
hex> <signature hex>`: the Ed25519 signature (`cinnabar.ed25519`) of the
manifest's bytes. One line whose key is trusted and whose signature
verifies is enough; a manifest that has none is refused before anything
else is downloaded, and a downloaded file is written, let alone run,
only after its SHA-256 matched the signed one.

Trusted keys: those of cinnabar/build_info.py, which `make dist` writes
into the Python tree of a release (the keys of its `key` lines), so an
installation trusts the keys its release trusts. Key rotation: a release
signed with the old key lists the new key, and the next one is signed
with the new key only. A source checkout has no key (the project's first
key was lost and retired); GIT_CINNABAR_RELEASE_KEY (hex, several
separated by commas) replaces the trusted keys, for one's own builds and
for tests. `make DOWNLOAD_URL=<URL>` records a default base URL in
cinnabar/build_info.py too.

A helper is only installed after its SHA-256 matched and its `version`
handshake gave the expected protocol and version; it replaces the old
one atomically (os.replace of a file written next to it under a name
from mkstemp), so a refused or failed download leaves the installed
helper as it was.
"""

import hashlib
import os
import ssl
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from cinnabar import config, ed25519, git
from cinnabar.errors import Abort
from cinnabar.helper import HELPER_NAME
from cinnabar.helper_version import ProbeError, probe
from cinnabar.hg.percent import unquote
from cinnabar.hg.wireformat import parse_decimal
from cinnabar.redact import redact_url

try:
    from cinnabar import build_info
except ImportError:  # a source checkout: nothing chosen at build time
    build_info = None

TIMEOUT = 60
MANIFEST_NAME = 'release'
DEFAULT_CHANNEL = 'release'
KEY_VARIABLE = 'GIT_CINNABAR_RELEASE_KEY'
# The largest file we download (into memory).
MAX_SIZE = 512 * 1024 * 1024
# How much of a download is read at a time: Python before 3.12 makes a
# zeroed buffer of whatever size a read of an HTTP response asks for, so
# one read of MAX_SIZE + 1 bytes would allocate and clear that much.
READ_SIZE = 1024 * 1024
SCHEME_HINT = 'use an https:// URL, a file:// URL or a local path'
URL_HINT = ('give the base URL of the downloads with --url or '
            '`git config --global cinnabar.download-url <URL>`')
KEY_HINT = ('set %s=<public key hex> to the key of the releases you '
            'trust (`make dist` prints the one it signed with)'
            % KEY_VARIABLE)
TAMPERED_HINT = ('nothing was installed; the download may be damaged or '
                 'tampered with')


def built_with(name, default=None):
    """A setting chosen at build time (cinnabar/build_info.py)."""
    return getattr(build_info, name, default) if build_info else default


# Other names `uname -m` gives the machines whose helpers are published
# (FreeBSD's arm64 and amd64, a Linux reporting arm64), and the name of
# their release's platform.
_MACHINE_ALIASES = {'amd64': 'x86_64', 'x64': 'x86_64', 'arm64': 'aarch64'}


def platform_name(uname=None):
    """`<system>-<machine>` of `uname` (default os.uname()), lower case,
    the machine named as the release names it: `linux-x86_64`,
    `linux-aarch64`, `darwin-arm64` (macOS calls its arm64 machines so,
    and so does the release)."""
    uname = uname or os.uname()
    system, machine = uname.sysname.lower(), uname.machine.lower()
    if system != 'darwin':
        machine = _MACHINE_ALIASES.get(machine, machine)
    return '%s-%s' % (system, machine)


def base_url(option):
    """The base URL of the downloads, which must be https, file:// or a
    local path (made a file:// URL)."""
    url = (option or config.lookup('download-url')
           or built_with('DOWNLOAD_URL'))
    if not url:
        raise Abort('no download URL is configured', hint=URL_HINT)
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ('https', 'file'):
        if '://' in url:
            raise Abort('refusing to download from %s: not https'
                        % redact_url(url), hint=SCHEME_HINT)
        url = 'file://' + urllib.request.pathname2url(os.path.abspath(url))
    return url if url.endswith('/') else url + '/'


class _HttpsOnlyRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if urllib.parse.urlsplit(newurl).scheme.lower() != 'https':
            raise Abort('refusing the redirect from %s to %s: it leaves '
                        'https' % (redact_url(req.full_url),
                                   redact_url(newurl)), hint=SCHEME_HINT)
        return super().redirect_request(req, fp, code, msg, headers,
                                        newurl)


def _tls_context():
    cafile = os.environ.get('GIT_SSL_CAINFO') or git.config(
        'http.sslCAInfo')
    return ssl.create_default_context(cafile=cafile or None)


def _opener(url):
    """An opener for https only, answering a 401 from the host of `url`
    with the user and password `url` holds, if any (never another host's:
    they are given for that URL only)."""
    handlers = [urllib.request.HTTPSHandler(context=_tls_context()),
                _HttpsOnlyRedirects()]
    parts = urllib.parse.urlsplit(url)
    if parts.username is not None:
        passwords = urllib.request.HTTPPasswordMgrWithDefaultRealm()
        passwords.add_password(None, redact_url(url),
                               unquote(parts.username),
                               unquote(parts.password or ''))
        handlers.append(urllib.request.HTTPBasicAuthHandler(passwords))
    return urllib.request.build_opener(*handlers)


def _read_at_most(response, limit):
    """Up to `limit` bytes of `response`, READ_SIZE at a time."""
    chunks = []
    left = limit
    while left:
        chunk = response.read(min(left, READ_SIZE))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b''.join(chunks)


def fetch(url):
    """The bytes at `url` (https or file://); raises Abort."""
    shown = redact_url(url)
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ('https', 'file'):
        raise Abort('refusing to download %s: not https' % shown,
                    hint=SCHEME_HINT)
    try:
        with _opener(url).open(shown, timeout=TIMEOUT) as response:
            data = _read_at_most(response, MAX_SIZE + 1)
            length = response.headers.get('Content-Length')
    except urllib.error.HTTPError as error:
        raise Abort('HTTP error %d from %s' % (error.code, shown))
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, 'reason', error)
        raise Abort('cannot download %s: %s' % (shown, reason))
    if len(data) > MAX_SIZE:
        raise Abort('%s is larger than %d bytes' % (shown, MAX_SIZE))
    length = parse_decimal(length or '')
    if length is not None and len(data) < length:
        raise Abort('the download of %s was cut short (%d of %s bytes)'
                    % (shown, len(data), length),
                    hint='nothing was installed; try again')
    return data


def trusted_keys():
    """The release public keys we trust, as bytes."""
    override = os.environ.get(KEY_VARIABLE)
    texts = override.split(',') if override else built_with(
        'RELEASE_KEYS', ())
    if not texts:
        raise Abort('this git-cinnabar trusts no release key: it was not '
                    'installed from a release', hint=KEY_HINT)
    try:
        keys = [bytes.fromhex(t.strip()) for t in texts]
    except ValueError:
        keys = []
    if not keys or any(len(k) != ed25519.KEY_SIZE for k in keys):
        raise Abort('%s is not a list of Ed25519 public keys (64 hex '
                    'digits each)' % KEY_VARIABLE)
    return keys


def format_signatures(seeds, data):
    """The text of a `.sig` file: the signatures of `data` by the private
    keys `seeds`, one `<public key hex> <signature hex>` line each."""
    lines = ['%s %s\n' % (ed25519.public_key(seed).hex(),
                          ed25519.sign(seed, data).hex()) for seed in seeds]
    return ''.join(lines)


def parse_signatures(text):
    """[(public key, signature)] from a `.sig` file; bad lines skipped."""
    pairs = []
    for line in text.decode('ascii', 'replace').splitlines():
        try:
            key, signature = (bytes.fromhex(w) for w in line.split())
        except ValueError:
            continue
        pairs.append((key, signature))
    return pairs


def fetch_signed(url):
    """The bytes at `url`, once `<url>.sig` proved them signed with a
    release key; raises Abort."""
    keys = trusted_keys()
    data = fetch(url)
    signatures = parse_signatures(fetch(url + '.sig'))
    if not any(key in keys and ed25519.verify(key, data, signature)
               for key, signature in signatures):
        raise Abort('the signature of %s does not verify with the release '
                    'key' % redact_url(url), hint=TAMPERED_HINT)
    return data


def version_tuple(text):
    parts = text.split('.')
    numbers = tuple(parse_decimal(p) for p in parts)
    if None in numbers:
        raise Abort('invalid version %r in the release manifest' % text)
    return numbers


# The words of each manifest line: name -> number of words after it.
_MANIFEST_SHAPE = {'channel': 1, 'version': 1, 'date': 1, 'protocol': 1,
                   'key': 1, 'python': 2, 'helper': 3}
_MANIFEST_NEEDS = ('channel', 'version', 'date', 'protocol', 'python')


def parse_manifest(data, url):
    """{'channel', 'version', 'date', 'protocol', 'keys': [hex], 'python':
    (sha, path), 'helpers': {platform: (sha, path)}} from a manifest."""
    manifest = {'helpers': {}, 'keys': []}
    for number, line in enumerate(data.decode('utf-8', 'replace')
                                  .splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith('#'):
            continue
        if _MANIFEST_SHAPE.get(words[0]) != len(words) - 1:
            raise Abort('%s line %d is not understood: %r'
                        % (url, number, line))
        if words[0] == 'helper':
            manifest['helpers'][words[1]] = (words[2].lower(), words[3])
        elif words[0] == 'python':
            manifest['python'] = (words[1].lower(), words[2])
        elif words[0] == 'key':
            manifest['keys'].append(words[1].lower())
        else:
            manifest[words[0]] = words[1]
    for key in _MANIFEST_NEEDS:
        if key not in manifest:
            raise Abort('%s has no %s line' % (url, key))
    if parse_decimal(manifest['protocol']) is None:
        raise Abort('%s: invalid protocol %r' % (url, manifest['protocol']))
    version_tuple(manifest['version'])
    return manifest


def read_manifest(base, channel):
    """The signed manifest at `<base>/release`, which must be of
    `channel`; raises Abort."""
    url = urllib.parse.urljoin(base, MANIFEST_NAME)
    shown = redact_url(url)
    manifest = parse_manifest(fetch_signed(url), shown)
    if manifest['channel'] != channel:
        raise Abort('%s is the manifest of the %s channel, not of %s'
                    % (shown, manifest['channel'], channel),
                    hint=TAMPERED_HINT)
    manifest['url'] = shown
    return manifest


def check_not_stale(manifest, version):
    """Refuse a manifest of `version` dated before this installation's
    release (a replayed one)."""
    installed = built_with('RELEASE_DATE')
    if manifest['version'] == version and installed and (
            manifest['date'] < installed):
        raise Abort('%s is dated %s, before this installation (%s): it is '
                    'stale' % (manifest['url'], manifest['date'], installed),
                    hint=TAMPERED_HINT)


def fetch_checked(base, entry, what):
    """The bytes of a manifest entry (sha, path), checked."""
    sha, path = entry
    url = urllib.parse.urljoin(base, path)
    sys.stderr.write('Downloading %s\n' % redact_url(url))
    data = fetch(url)
    check_sha256(data, sha, what)
    return data


def check_sha256(data, expected, what):
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise Abort('the checksum of %s does not match: got %s, expected %s'
                    % (what, actual, expected), hint=TAMPERED_HINT)


def default_target():
    """Where the helper goes: next to the launcher that runs us."""
    launcher = os.path.realpath(sys.argv[0])
    return os.path.join(os.path.dirname(launcher), HELPER_NAME)


def write_beside(data, target):
    """Write `data` to a new file (mode 0755) in the directory of
    `target`, named by mkstemp; returns its path."""
    directory = os.path.dirname(os.path.abspath(target)) or '.'
    try:
        fd, temporary = tempfile.mkstemp(
            dir=directory, prefix='.%s.new-' % os.path.basename(target))
    except OSError as error:
        raise Abort('cannot write the helper in %s: %s'
                    % (directory, error.strerror))
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
        os.chmod(temporary, 0o755)
    except OSError as error:
        os.unlink(temporary)
        raise Abort('cannot write the helper in %s: %s'
                    % (directory, error.strerror))
    return temporary


def install_helper(data, target, check):
    """Write `data` next to `target`, make it executable, probe it and,
    when `check(HelperVersion)` returns no problem, move it to `target`.
    `check` returns a list of problems (strings). `data` must have been
    checked against a signed checksum already."""
    temporary = write_beside(data, target)
    try:
        try:
            found = probe(temporary)
        except ProbeError:
            raise Abort('the downloaded file is not a git-cinnabar-helper '
                        '(it does not answer the version handshake)',
                        hint='nothing was installed')
        wrong = check(found)
        if wrong:
            raise Abort('refusing the downloaded helper: %s'
                        % '; '.join(wrong), hint='nothing was installed')
        os.replace(temporary, target)
        return found
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
