"""Prebuilt helpers and releases: where they are and how they are checked.

Used by `git cinnabar download` and `git cinnabar self-update`. Files are
fetched with Python's urllib (the helper may be missing or stale: that
is why they run), from a base URL: `--url`, else the setting
`cinnabar.download-url` (or GIT_CINNABAR_DOWNLOAD_URL). It must be an
https URL, a file:// URL or a local path: plain http is refused, and so
is a redirect from https to anything else. The certificate authorities
are the system's, or those of the file named by GIT_SSL_CAINFO, else by
git's `http.sslCAInfo` setting (as for git).

Layout under the base URL:

    <base>/<platform>/git-cinnabar-helper              the helper
    <base>/<platform>/git-cinnabar-helper.sha256       its SHA-256, as
                                                       `sha256sum` prints it
    <base>/<platform>/git-cinnabar-helper.sha256.sig   signature of that
    <base>/release                                     the release manifest
    <base>/release.sig                                 signature of that

`<platform>` is `<system>-<machine>` from os.uname(), lower case, e.g.
`linux-x86_64`, `darwin-arm64`.

Signatures: a `.sig` file holds, in hex, the Ed25519 signature
(`cinnabar.ed25519`) of the bytes of the file it is named after, made
with the project's release key; `tools/sign-release` makes them. The
public half of that key is RELEASE_KEYS below, shipped with the
project; GIT_CINNABAR_RELEASE_KEY (hex) replaces it, for one's own
builds and for tests. A checksum file or manifest whose signature does
not verify is refused before anything else is downloaded, and a
downloaded file is written, let alone run, only after its SHA-256
matched the signed one.

The release manifest (for self-update) is text, one item a line, `#`
comments and empty lines ignored:

    version <version>                  e.g. `version 0.2.0`
    protocol <helper protocol>         e.g. `protocol 1`
    python <sha256> <path>             the Python tree, a .tar.gz holding
                                       `git-cinnabar`, `git-remote-hg`
                                       and `cinnabar/`
    helper <platform> <sha256> <path>  one line per platform

paths relative to the base URL. A helper is only installed after its
SHA-256 matched and its `version` handshake gave the expected protocol
and version; it replaces the old one atomically (os.replace of a file
written next to it under a name from mkstemp), so a refused or failed
download leaves the installed helper as it was.
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
from cinnabar.redact import redact_url

TIMEOUT = 60
# The public halves of the keys releases are signed with (hex).
RELEASE_KEYS = (
    'fdd417f7e7dd46c692a4241ef60949dc13beb29a8e9fdf3c527c154fb7a50edc',
)
KEY_VARIABLE = 'GIT_CINNABAR_RELEASE_KEY'
# The largest file we download (into memory).
MAX_SIZE = 512 * 1024 * 1024
SCHEME_HINT = 'use an https:// URL, a file:// URL or a local path'
URL_HINT = ('give the base URL of the downloads with --url or '
            '`git config --global cinnabar.download-url <URL>`')


def platform_name():
    uname = os.uname()
    return '%s-%s' % (uname.sysname.lower(), uname.machine.lower())


def base_url(option):
    """The base URL of the downloads, which must be https, file:// or a
    local path (made a file:// URL)."""
    url = option or config.lookup('download-url')
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
                               urllib.parse.unquote(parts.username),
                               urllib.parse.unquote(parts.password or ''))
        handlers.append(urllib.request.HTTPBasicAuthHandler(passwords))
    return urllib.request.build_opener(*handlers)


def fetch(url):
    """The bytes at `url` (https or file://); raises Abort."""
    shown = redact_url(url)
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ('https', 'file'):
        raise Abort('refusing to download %s: not https' % shown,
                    hint=SCHEME_HINT)
    try:
        with _opener(url).open(shown, timeout=TIMEOUT) as response:
            data = response.read(MAX_SIZE + 1)
    except urllib.error.HTTPError as error:
        raise Abort('HTTP error %d from %s' % (error.code, shown))
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, 'reason', error)
        raise Abort('cannot download %s: %s' % (shown, reason))
    if len(data) > MAX_SIZE:
        raise Abort('%s is larger than %d bytes' % (shown, MAX_SIZE))
    return data


def trusted_keys():
    """The release public keys we trust, as bytes."""
    override = os.environ.get(KEY_VARIABLE)
    texts = [override] if override else RELEASE_KEYS
    try:
        keys = [bytes.fromhex(t.strip()) for t in texts]
    except ValueError:
        keys = []
    if not keys or any(len(k) != ed25519.KEY_SIZE for k in keys):
        raise Abort('%s is not an Ed25519 public key (64 hex digits)'
                    % KEY_VARIABLE)
    return keys


def fetch_signed(url):
    """The bytes at `url`, once `<url>.sig` proved them signed with a
    release key; raises Abort."""
    data = fetch(url)
    text = fetch(url + '.sig').decode('ascii', 'replace').strip()
    try:
        signature = bytes.fromhex(text)
    except ValueError:
        signature = b''
    if not any(ed25519.verify(key, data, signature)
               for key in trusted_keys()):
        raise Abort('the signature of %s does not verify with the release '
                    'key' % redact_url(url),
                    hint='nothing was installed; the download may be '
                         'damaged or tampered with')
    return data


def parse_sha256(text, url):
    """The hex digest from `sha256sum` output (first word)."""
    words = text.decode('ascii', 'replace').split()
    if not words or len(words[0]) != 64 or any(
            c not in '0123456789abcdef' for c in words[0].lower()):
        raise Abort('%s is not a SHA-256 checksum' % url)
    return words[0].lower()


def check_sha256(data, expected, what):
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise Abort('the checksum of %s does not match: got %s, expected %s'
                    % (what, actual, expected),
                    hint='nothing was installed; the download may be '
                         'damaged or tampered with')


def helper_urls(base, platform):
    url = urllib.parse.urljoin(base, '%s/%s' % (platform, HELPER_NAME))
    return url, url + '.sha256'


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
