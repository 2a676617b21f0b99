"""The bundle2 parts we read in servers' answers: one table of the part
types we know, each with the parameters it may carry and its handler.

A handler is registered for a part type (lower case) with the decorator
`parthandler`, and called as `handler(op, params, payload)`: `op` is
the state of the reader of the bundle (a `PartReader`: a push's reply,
a stream clone), `params` the part's parameters {str: str}, `payload`
what the reader gives for it (bytes for a push's reply, read whole; a
`bundle2.PartPayload` for a stream). Each reader says which of the
table's types it reads (`PartReader.parts`); for it, the others are
unknown.

`process` hands a part to its handler. A part of a type the reader does
not read is skipped when advisory and refused when mandatory (upper
case in its type: the bundle cannot be understood without it), as is a
part with a mandatory parameter its handler does not take; both with
`UnknownPart`, in one wording.

The server's `error:abort` part (parameters `message`, `hint`) is
handled here for every reader: it raises `ServerAbort`, whose message
the helper words the same way (helper/bundle.c).
"""

from cinnabar.hg.bundle2 import BundleError
from cinnabar.record import record

Handler = record('Handler', 'function params')
Handler.__doc__ = """A part type's handler: the function, and the names of
the parameters the part may carry (a frozenset)."""

_TABLE = {}


def parthandler(part_type, params=()):
    """Decorator registering `function(op, params, payload)` as the handler
    of the parts of `part_type`, which may carry the parameters `params`
    (names)."""
    def register(function):
        if part_type in _TABLE:
            raise ValueError('two handlers of bundle2 %r parts' % part_type)
        _TABLE[part_type] = Handler(function, frozenset(params))
        return function
    return register


class PartReader:
    """The state of a reader of a bundle2 answer, given to the handlers.
    `parts` names the part types it reads."""

    parts = frozenset()


class UnknownPart(BundleError):
    """A mandatory part, or a part's mandatory parameter, we do not read."""


class ServerAbort(BundleError):
    """The server's `error:abort` part: its `server_message` ('' when it
    gave none) and `server_hint` (None), also the Abort's message (worded
    as the helper words it) and hint."""

    def __init__(self, message, hint=None):
        super().__init__('the server aborted: %s' % message, hint=hint)
        self.server_message = message
        self.server_hint = hint


def server_abort(params):
    """The ServerAbort of an `error:abort` part's parameters."""
    return ServerAbort(params.get('message', ''), params.get('hint'))


@parthandler('error:abort', ('message', 'hint'))
def _abort(op, params, payload):
    raise server_abort(params)


def process(op, part_type, params, mandatory, payload):
    """Hand a part (its lower-case type, parameters and payload, and
    whether it is mandatory) to its handler for the PartReader `op`."""
    found = _TABLE.get(part_type) if part_type in op.parts else None
    if found is None:
        if mandatory:
            raise UnknownPart('the server answered with a %r part we do '
                              'not read' % part_type)
        return
    # Parameters read off the wire say which are mandatory
    # (bundle2.PartParams); a plain dict has none.
    unknown = sorted(getattr(params, 'mandatory', frozenset())
                     - found.params)
    if unknown:
        raise UnknownPart('the server answered with a %r part with a '
                          'parameter we do not read (%s)'
                          % (part_type, ', '.join(unknown)))
    found.function(op, params, payload)
