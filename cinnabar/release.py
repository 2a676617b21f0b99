"""Prebuilt helpers and releases: where they are and how they are checked.

Used by `git cinnabar download` and `git cinnabar self-update`. Files are
fetched with Python's urllib (the helper may be missing or stale: that
is why they run), from a base URL: `--url`, else the setting
`cinnabar.download-url` (or GIT_CINNABAR_DOWNLOAD_URL).

Layout under the base URL:

    <base>/<platform>/git-cinnabar-helper          the helper
    <base>/<platform>/git-cinnabar-helper.sha256   its SHA-256, as
                                                   `sha256sum` prints it
    <base>/release                                 the release manifest

`<platform>` is `<system>-<machine>` from os.uname(), lower case, e.g.
`linux-x86_64`, `darwin-arm64`.

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
written next to it), so a refused or failed download leaves the
installed helper as it was.
"""

import hashlib
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

from cinnabar import config
from cinnabar.errors import Abort
from cinnabar.helper import HELPER_NAME
from cinnabar.helper_version import ProbeError, probe

TIMEOUT = 60
URL_HINT = ('give the base URL of the downloads with --url or '
            '`git config --global cinnabar.download-url <URL>`')


def platform_name():
    uname = os.uname()
    return '%s-%s' % (uname.sysname.lower(), uname.machine.lower())


def base_url(option):
    url = option or config.lookup('download-url')
    if not url:
        raise Abort('no download URL is configured', hint=URL_HINT)
    return url if url.endswith('/') else url + '/'


def fetch(url):
    """The bytes at `url`; raises Abort."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            return response.read()
    except urllib.error.HTTPError as error:
        raise Abort('HTTP error %d from %s' % (error.code, url))
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, 'reason', error)
        raise Abort('cannot download %s: %s' % (url, reason))


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


def install_helper(data, target, check):
    """Write `data` next to `target`, make it executable, probe it and,
    when `check(HelperVersion)` returns no problem, move it to `target`.
    `check` returns a list of problems (strings)."""
    directory = os.path.dirname(os.path.abspath(target)) or '.'
    temporary = os.path.join(directory, '.%s.new-%d'
                             % (os.path.basename(target), os.getpid()))
    try:
        try:
            with open(temporary, 'wb') as f:
                f.write(data)
            os.chmod(temporary, 0o755)
        except OSError as error:
            raise Abort('cannot write the helper in %s: %s'
                        % (directory, error.strerror))
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
