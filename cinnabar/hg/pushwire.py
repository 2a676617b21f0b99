"""Pushing with the wire command `unbundle`: the bundle we send, its
`heads` argument, and what the server's answer means.

Format
    A server with the `bundle2` capability gets a bundle2 (see
    `cinnabar.hg.bundle2`) of three mandatory parts: `REPLYCAPS` (the
    bundle2 capabilities of our side, so that the server answers with a
    bundle2), `CHECK:HEADS` (the server heads our decision was based on,
    20 bytes each; the null id for an empty repository) and
    `CHANGEGROUP` (parameter `version`, `02` when the server's bundle2
    capability lists it, else `01`; advisory `nbchanges`; the payload is
    the bare changegroup), and, when a push replaces changesets, a
    mandatory `OBSMARKERS` part (`cinnabar.hg.obsmarkers`). Other
    servers (with `unbundle`, bundle1 only) get `HG10UN` followed by a
    version 01 changegroup.

`heads` argument
    Space-separated hex ids of the heads the server must still have, or
    the hex of a single word: `force` (no check; we use it with bundle2,
    where `CHECK:HEADS` does the checking), or `hashed` followed by the
    SHA-1 of the sorted binary heads (servers with `unbundlehash`).

Answer
    To a bundle2: a bundle2 whose parts are `reply:changegroup`
    (parameter `return`: 0 means the changesets were refused, 1 or more
    that they were added), `output` (what the server's hooks printed),
    `error:abort` (`message`, `hint`), `error:pushraced` (`message`: the
    heads changed), `error:unsupportedcontent`, `error:pushkey`,
    `reply:pushkey`, `reply:obsmarkers` (`cinnabar.hg.bundle2parts` has
    the table of their handlers). To a bundle1: an integer (0 for a
    failure, which comes with a message) and the server's output.
"""

import hashlib
from binascii import unhexlify

from cinnabar.errors import Abort
from cinnabar.hg import bundle2, bundle2parts, wireformat
from cinnabar.ids import NULL_HG
from cinnabar.record import record

FORCE = b'force'.hex()
HASHED = b'hashed'.hex()
# What we tell the server our side understands in its reply.
REPLY_CAPS = (('HG20', ()),
              ('error', ('abort', 'unsupportedcontent', 'pushraced',
                         'pushkey')))
# How Mercurial phrases a bundle1 refusal because the heads changed
# (newer, then older servers).
RACE_MESSAGES = (b'repository changed while', b'unsynced changes')
COPY_SIZE = 65536

PushFormat = record('PushFormat',
                    'bundle2 cg_version obsmarkers',
                    defaults=((),))
PushFormat.__doc__ = """How to push to a server: a bundle2 or not, the
changegroup version (`01` or `02`), and the obsolescence marker format
versions it takes (ints, from `obsmarkers=V0,V1` in its bundle2
capabilities; none without bundle2)."""

UnbundleResult = record(
    'UnbundleResult', 'ok message hint output raced')
UnbundleResult.__doc__ = """The server's answer: `ok`, a `message` and
`hint` when it refused (str, or None when it did not say why), its
`output` (bytes, printed as `remote:` lines), and whether it refused
because its heads changed (`raced`)."""


def push_format(capabilities, description):
    """The PushFormat for a server's capabilities ({name: bytes})."""
    if capabilities.get('unbundle') is None:
        raise Abort('the Mercurial server at %s does not accept pushes'
                    % description)
    if capabilities.get('bundle2') is not None:
        caps = wireformat.decode_bundle2_caps(capabilities['bundle2'])
        versions = caps.get('changegroup', ['01'])
        obsmarkers = tuple(int(v[1:]) for v in caps.get('obsmarkers', ())
                           if v[:1] == 'V' and v[1:].isdigit())
        for version in ('02', '01'):
            if version in versions:
                return PushFormat(True, version, obsmarkers)
        raise Abort('the Mercurial server at %s accepts no changegroup '
                    'version we can write (%s)'
                    % (description, ', '.join(versions)))
    types = capabilities['unbundle'].split(b',')
    if capabilities['unbundle'] and b'HG10UN' not in types:
        raise Abort('the Mercurial server at %s does not accept '
                    'uncompressed bundles' % description)
    return PushFormat(False, '01')


def heads_argument(push_format, server_heads, hashed=False):
    """The `heads` argument of unbundle, as str.

    `server_heads` are the HgIds our checks were based on (empty for an
    empty repository); `hashed` says the server has `unbundlehash`."""
    if push_format.bundle2:
        return FORCE
    heads = list(server_heads) or [NULL_HG]
    if hashed:
        digest = hashlib.sha1(b''.join(sorted(unhexlify(h) for h in heads)))
        return '%s %s' % (HASHED, digest.hexdigest())
    return ' '.join(heads)


def write_bundle(out, push_format, changegroup, server_heads, count,
                 obsmarkers=None):
    """Write the bundle for unbundle to the binary file `out`.

    `changegroup` is a binary file holding the bare changegroup,
    `server_heads` as for `heads_argument`, `count` the number of
    changesets in the changegroup, `obsmarkers` the payload of an
    `OBSMARKERS` part (`cinnabar.hg.obsmarkers.encode_part`; bundle2
    only), None for none."""
    if not push_format.bundle2:
        out.write(b'HG10UN')
        for chunk in iter(lambda: changegroup.read(COPY_SIZE), b''):
            out.write(chunk)
        return
    heads = list(server_heads) or [NULL_HG]
    caps = wireformat.encode_bundle2_caps(REPLY_CAPS).encode('utf-8')
    bundle2.write_start(out)
    bundle2.write_part(out, 'REPLYCAPS', 0, caps)
    bundle2.write_part(out, 'CHECK:HEADS', 1,
                       b''.join(unhexlify(h) for h in heads))
    bundle2.write_part(out, 'CHANGEGROUP', 2, changegroup,
                       mandatory_params=[('version', push_format.cg_version)],
                       advisory_params=[('nbchanges', str(count))])
    if obsmarkers is not None:
        bundle2.write_part(out, 'OBSMARKERS', 3, obsmarkers)
    bundle2.write_end(out)


def _return_code(text):
    text = text.strip()
    negative = text.startswith(b'-')
    value = wireformat.parse_decimal(text[1:] if negative else text)
    if value is None:
        raise Abort('unexpected answer from the server to a push: %r'
                    % text[:80])
    return -value if negative else value


class _Refused(bundle2parts.BundleError):
    """An error part of a push's reply: the server refused the push."""

    def __init__(self, message, raced=False):
        super().__init__(message)
        self.raced = raced


class _PushReply(bundle2parts.PartReader):
    """A push's reply, read part by part: the server's output and the
    `return` of each `reply:changegroup`."""

    parts = frozenset((
        'output', 'reply:changegroup', 'reply:pushkey', 'reply:obsmarkers',
        'error:abort', 'error:pushraced', 'error:unsupportedcontent',
        'error:pushkey'))

    def __init__(self):
        self.output = []
        self.returns = []


@bundle2parts.parthandler('output')
def _output(op, params, data):
    op.output.append(data)


@bundle2parts.parthandler('reply:changegroup', ('return', 'in-reply-to'))
def _changegroup_reply(op, params, data):
    op.returns.append(params.get('return', ''))


@bundle2parts.parthandler('reply:pushkey', ('return', 'in-reply-to'))
def _pushkey_reply(op, params, data):
    """Bookmarks are pushed with the pushkey command, not in the bundle."""


@bundle2parts.parthandler('reply:obsmarkers', ('new', 'in-reply-to'))
def _obsmarkers_reply(op, params, data):
    """The count of markers the server took: nothing to say of it."""


@bundle2parts.parthandler('error:pushraced', ('message',))
def _raced(op, params, data):
    raise _Refused(params.get('message'), raced=True)


@bundle2parts.parthandler('error:unsupportedcontent', ('parttype', 'params'))
def _unsupported(op, params, data):
    raise _Refused('the server does not support the bundle part %r'
                   % params.get('parttype', '?'))


@bundle2parts.parthandler('error:pushkey', (
    'namespace', 'key', 'new', 'old', 'ret', 'in-reply-to'))
def _pushkey_error(op, params, data):
    raise _Refused('the server reported error:pushkey')


def bundle2_result(parts):
    """The UnbundleResult of the parts of a bundle2 reply: the first
    refusal among them, if any (every part's output is kept)."""
    reply = _PushReply()
    refusal = None
    for part in parts:
        try:
            bundle2parts.process(reply, part.type, part.params,
                                 part.mandatory, part.data)
        except bundle2parts.ServerAbort as error:
            refusal = refusal or (error.server_message, error.server_hint,
                                  False)
        except _Refused as error:
            refusal = refusal or (error.message, None, error.raced)
        except bundle2parts.UnknownPart as error:
            refusal = refusal or (error.message, None, False)
    output = b''.join(reply.output)
    if refusal is not None:
        message, hint, raced = refusal
        return UnbundleResult(False, message, hint, output, raced)
    if not reply.returns:
        return UnbundleResult(False, 'the server did not say whether it '
                              'took the changesets', None, output, False)
    if _return_code(reply.returns[0].encode()) == 0:
        return UnbundleResult(False, None, None, output, False)
    return UnbundleResult(True, None, None, output, False)


def bundle1_result(code, output):
    """The UnbundleResult of a bundle1 answer: the integer (bytes) and
    the output or, for a failure, the message (bytes)."""
    if _return_code(code) != 0:
        return UnbundleResult(True, None, None, output, False)
    message = output.strip()
    raced = any(m in message for m in RACE_MESSAGES)
    text = wireformat.to_text(message.splitlines()[-1]) if message else None
    return UnbundleResult(False, text, None, output, raced)


def decode_pushkey(data):
    """(success, output) from a pushkey answer: `<integer>\\n<output>`."""
    code, _, output = data.partition(b'\n')
    return _return_code(code) != 0, output
