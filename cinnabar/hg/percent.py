"""Percent-encoding (RFC 3986 section 2.1), as urllib.parse does it.

Mercurial's wire protocol percent-encodes capabilities, branch names and
request arguments; HTTP requests quote their URL. `quote`, `urlencode`,
`unquote_to_bytes` and `unquote` give exactly what urllib.parse's
functions of the same names give (tests/unit/test_percent.py compares
them), without importing it: urllib.parse imports re, enum and
ipaddress, which were a sixth of a fetch with nothing new, which people
run all day.

- `quote(text, safe)`: the UTF-8 bytes of `text`, each byte that is
  neither a letter, a digit, one of `_.-~` nor in `safe` written `%XX`
  (upper-case hex);
- `urlencode(pairs)`: `name=value` pairs joined with `&`, each side
  quoted with nothing safe but a space, which is written `+`;
- `unquote_to_bytes(text)`: each `%` followed by two hex digits (either
  case) is the byte they spell; any other `%` stays as it is;
- `unquote(text)`: the same on a str, each run of ASCII characters
  decoded as UTF-8 (a byte that is not, U+FFFD), the other characters
  kept as they are.
"""

import itertools

_ALWAYS_SAFE = frozenset(b'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
                         b'abcdefghijklmnopqrstuvwxyz0123456789_.-~')
_HEX_DIGITS = b'0123456789abcdefABCDEF'


def quote(text, safe='/'):
    """`text` (str or bytes) percent-encoded, but for the ASCII
    characters of `safe`."""
    data = text.encode('utf-8') if isinstance(text, str) else bytes(text)
    keep = _ALWAYS_SAFE.union(safe.encode('ascii', 'ignore'))
    return ''.join(chr(byte) if byte in keep else '%%%02X' % byte
                   for byte in data)


def _quote_plus(text):
    if not isinstance(text, bytes):
        text = str(text)
    return quote(text, ' ').replace(' ', '+')


def urlencode(pairs):
    """`pairs` (a sequence of (name, value), or a dict) as a form:
    `name=value&...`."""
    if hasattr(pairs, 'items'):
        pairs = pairs.items()
    return '&'.join('%s=%s' % (_quote_plus(name), _quote_plus(value))
                    for name, value in pairs)


def unquote_to_bytes(text):
    """The bytes `text` (str, encoded as UTF-8, or bytes) percent-encodes."""
    data = text.encode('utf-8') if isinstance(text, str) else bytes(text)
    parts = data.split(b'%')
    if len(parts) == 1:
        return data
    out = [parts[0]]
    for part in parts[1:]:
        pair = part[:2]
        if len(pair) == 2 and not pair.strip(_HEX_DIGITS):
            out += [bytes.fromhex(pair.decode('ascii')), part[2:]]
        else:
            out += [b'%', part]
    return b''.join(out)


def unquote(text):
    """The str `text` percent-encodes, as `unquote_to_bytes` then UTF-8
    (errors as U+FFFD) on each run of ASCII characters."""
    if '%' not in text:
        return text
    return ''.join(
        unquote_to_bytes(''.join(run)).decode('utf-8', 'replace')
        if ascii else ''.join(run)
        for ascii, run in itertools.groupby(text, lambda c: c < '\x80'))
