"""Parsing of the URLs git hands to git-remote-hg.

git strips the `hg::` prefix before running us, but the remote name of an
anonymous remote is the full URL, so both forms are accepted. What is
understood:

- `http://...`, `https://...`: a server over HTTP(S) (or a bundle file
  served over HTTP);
- `ssh://[user@]host[:port]/path`: `hg serve --stdio` over ssh; as in
  Mercurial, the path is relative to the remote home directory unless it
  starts with two slashes (`ssh://host//abs/path`);
- `file:///path`, `/path` or a relative path (relative to the current
  directory): a local repository, or a bundle file.

`hg://` URLs are not supported.
"""

import collections
import os
import re
from urllib.parse import unquote, urlsplit, urlunsplit

from cinnabar.errors import Abort

HgUrl = collections.namedtuple('HgUrl',
                               'scheme user host port path url display')
HgUrl.__doc__ = """A parsed URL. For `file`, only `path` (absolute) is
set; for `ssh`, `path` is the path to give `hg -R`; `url` is the URL as
given (for HTTP(S) requests), `display` the text to show people (without
password)."""

_SCHEME = re.compile(r'[A-Za-z][A-Za-z0-9+.-]*:')


def strip_prefix(text):
    return text[len('hg::'):] if text.startswith('hg::') else text


def _split_netloc(netloc):
    """(user, host, port) from `[user[:password]@]host[:port]`."""
    userinfo, _, hostport = netloc.rpartition('@')
    user = unquote(userinfo.partition(':')[0]) or None
    if hostport.startswith('['):
        host, _, rest = hostport[1:].partition(']')
        port = rest[1:] if rest.startswith(':') else ''
    else:
        host, _, port = hostport.partition(':')
    if port and not port.isdigit():
        raise Abort('invalid port in URL: %r' % port)
    return user, unquote(host), int(port) if port else None


def _without_password(parts):
    user, _, host = parts.netloc.rpartition('@')
    if ':' in user:
        user = user.partition(':')[0]
    netloc = '%s@%s' % (user, host) if user else host
    return urlunsplit(parts._replace(netloc=netloc))


def _parse_ssh(text):
    parts = urlsplit(text)
    user, host, port = _split_netloc(parts.netloc)
    if not host:
        raise Abort('no host in URL %s' % text)
    path = unquote(parts.path)
    path = path[1:] if path.startswith('/') else path
    return HgUrl('ssh', user, host, port, path or '.', text,
                 _without_password(parts))


def _parse_file(text):
    parts = urlsplit(text)
    if parts.netloc not in ('', 'localhost'):
        raise Abort('file URLs with a host are not supported: %s' % text)
    path = unquote(parts.path)
    return HgUrl('file', None, None, None, path, text, text)


def parse_url(text, cwd=None):
    """Parse a git-remote-hg URL (with or without `hg::`) into an HgUrl."""
    text = strip_prefix(text)
    if text.startswith('hg://'):
        raise Abort('hg:// URLs are not supported', hint='use hg::<url> '
                    'instead, e.g. hg::https://example.com/repo')
    match = _SCHEME.match(text)
    scheme = match.group(0)[:-1].lower() if match else None
    if scheme in ('http', 'https'):
        parts = urlsplit(text)
        user, host, port = _split_netloc(parts.netloc)
        return HgUrl(scheme, user, host, port, parts.path, text,
                     _without_password(parts))
    if scheme == 'ssh':
        return _parse_ssh(text)
    if scheme == 'file':
        return _parse_file(text)
    if scheme is not None and len(scheme) > 1 and '://' in text:
        raise Abort('unsupported URL scheme %r in %s' % (scheme, text))
    path = os.path.join(cwd or os.getcwd(), os.path.expanduser(text))
    return HgUrl('file', None, None, None, os.path.normpath(path), text,
                 text)
