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

git-cinnabar's other spelling, `hg://<host>[:<port>][.<scheme>]<path>`
(git hands it over whole, and the remote name of an anonymous remote is
it too), is turned into one of the above, as git-cinnabar 0.7 does
(`hg_scheme_url`):

    hg://host/path              https://host/path
    hg://host:8443/path         https://host:8443/path
    hg://host:http/path         http://host/path
    hg://host:8080.http/path    http://host:8080/path
    hg://user@host:ssh/path     ssh://user@host/path
    hg://:file/abs/path         file:///abs/path
    hg://:tags                  tags:

A user part, `user[:password]@`, ends at the last `@` before the path
(a password may hold a `:`). The host part then ends at the first `:`
(outside `[...]`), `/`, `?` or `#`;
what follows a `:` up to the path is a port (digits), a scheme, or
`<port>.<scheme>`.
"""

import os

from cinnabar.errors import Abort
from cinnabar.record import record
from cinnabar.redact import redact_url

# urllib.parse (and re, enum and ipaddress, which it imports) is imported
# only for what `split_url` leaves to it: a fetch with nothing new, which
# people run all day, does not load it.

HgUrl = record('HgUrl',
               'scheme user host port path url display')
HgUrl.__doc__ = """A parsed URL. For `file`, only `path` (absolute) is
set; for `ssh`, `path` is the path to give `hg -R`; `url` is the URL as
given (for HTTP(S) requests), `display` the text to show people (without
password)."""

_LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'
_SCHEME_CHARS = _LETTERS + '0123456789+.-'


def git_repository_error(display):
    """The Abort for a URL (shown as `display`) that names a git repository
    where a Mercurial one was expected: `hg::` was one prefix too many."""
    return Abort('%s is a git repository, not a Mercurial one' % display,
                 hint='drop `hg::` from the URL: git reads git repositories '
                      'itself')


def url_scheme(text):
    """The scheme `text` starts with, in lower case, or None: RFC 3986's
    `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`."""
    name, colon, _ = text.partition(':')
    if not colon or not name or name[0] not in _LETTERS or (
            name.strip(_SCHEME_CHARS)):
        return None
    return name.lower()


def strip_prefix(text):
    """The Mercurial URL of a git URL: without `hg::`, or translated from
    an `hg://` URL."""
    if text.startswith('hg://'):
        return hg_scheme_url(text)
    return text[len('hg::'):] if text.startswith('hg::') else text


def _cut(text, stops, brackets=False):
    """(text up to the first of `stops`, the rest); with `brackets`, the
    stops inside [...] do not count."""
    inside = False
    for i, c in enumerate(text):
        if brackets and c in '[]':
            inside = c == '['
        elif c in stops and not inside:
            return text[:i], text[i:]
    return text, ''


def hg_scheme_url(text):
    """The URL an `hg://` URL stands for (see the module docstring)."""
    # The user part comes first: up to the last `@` before the path, as a
    # password may hold `:` or `@`.
    address = text[len('hg://'):]
    userinfo, at, _ = _cut(address, '/?#')[0].rpartition('@')
    host, rest = _cut(address[len(userinfo + at):], ':/?#', brackets=True)
    scheme, port = 'https', ''
    if rest.startswith(':'):
        spec, rest = _cut(rest[1:], '/?#')
        if '.' in spec:
            port, scheme = spec.split('.', 1)
        elif spec.isdigit():
            port = spec
        else:
            scheme = spec
    if not scheme:
        raise Abort('no scheme in %s' % redact_url(text),
                    hint='e.g. hg://host:8080.http/path')
    if port and not port.isdigit():
        raise Abort('invalid port in URL: %r' % port)
    if scheme == 'tags' and not (userinfo or host or port or rest):
        return 'tags:'
    return '%s://%s%s%s%s%s' % (scheme, userinfo, at, host,
                                ':' + port if port else '', rest)


def split_url(text):
    """urllib.parse.urlsplit(text): itself for URLs out of the ordinary
    (not ASCII; a control character, a space; no `//` host, or one in
    brackets); for the others, which it leaves as they are but for the
    scheme, in lower case, the same parts found here without loading it.
    """
    scheme = url_scheme(text)
    rest = text[len(scheme or '') + 1:]
    host_end = min((i for i in map(rest.find, '/?#', (2, 2, 2)) if i >= 0),
                   default=len(rest))
    netloc = rest[2:host_end]
    if scheme is None or not rest.startswith('//') or not netloc or (
            not text.isascii()) or min(text) <= ' ' or '[' in netloc or (
            ']' in netloc):
        from urllib.parse import urlsplit
        return urlsplit(text)
    rest, _, fragment = rest[host_end:].partition('#')
    path, _, query = rest.partition('?')
    return scheme, netloc, path, query, fragment


def join_url(parts):
    """urllib.parse.urlunsplit(parts) for what split_url gives: itself
    when the host part is empty."""
    scheme, netloc, path, query, fragment = parts
    if not netloc:
        from urllib.parse import urlunsplit
        return urlunsplit(parts)
    if path and not path.startswith('/'):
        path = '/' + path
    return '%s://%s%s%s%s' % (scheme, netloc, path,
                              '?' + query if query else '',
                              '#' + fragment if fragment else '')


def _unquote(text):
    """urllib.parse.unquote(text), loaded only for a `%`."""
    if '%' not in text:
        return text
    from urllib.parse import unquote
    return unquote(text)


def _split_netloc(netloc):
    """(user, host, port) from `[user[:password]@]host[:port]`."""
    userinfo, _, hostport = netloc.rpartition('@')
    user = _unquote(userinfo.partition(':')[0]) or None
    if hostport.startswith('['):
        host, _, rest = hostport[1:].partition(']')
        port = rest[1:] if rest.startswith(':') else ''
    else:
        host, _, port = hostport.partition(':')
    if port and not port.isdigit():
        raise Abort('invalid port in URL: %r' % port)
    return user, _unquote(host), int(port) if port else None


def _without_password(parts):
    scheme, netloc, path, query, fragment = parts
    user, _, host = netloc.rpartition('@')
    if ':' in user:
        user = user.partition(':')[0]
    netloc = '%s@%s' % (user, host) if user else host
    return join_url((scheme, netloc, path, query, fragment))


def _parse_ssh(text):
    from urllib.parse import unquote, urlsplit
    parts = urlsplit(text)
    user, host, port = _split_netloc(parts.netloc)
    if not host:
        raise Abort('no host in URL %s' % text)
    path = unquote(parts.path)
    path = path[1:] if path.startswith('/') else path
    return HgUrl('ssh', user, host, port, path or '.', text,
                 _without_password(parts))


def _parse_file(text):
    from urllib.parse import unquote, urlsplit
    parts = urlsplit(text)
    if parts.netloc not in ('', 'localhost'):
        raise Abort('file URLs with a host are not supported: %s' % text)
    path = unquote(parts.path)
    return HgUrl('file', None, None, None, path, text, text)


def parse_url(text, cwd=None):
    """Parse a git-remote-hg URL (with or without `hg::`) into an HgUrl."""
    text = strip_prefix(text)
    scheme = url_scheme(text)
    if scheme in ('http', 'https'):
        parts = split_url(text)
        user, host, port = _split_netloc(parts[1])
        return HgUrl(scheme, user, host, port, parts[2], text,
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
