"""Records: tuples whose fields also have names, `record(name, fields)`.

What we use of `collections.namedtuple`: a tuple subclass (unpacking,
indexing, equality and hashing as tuples), built from positional or
keyword arguments, with defaults for the last fields, a property per
field, a `Name(field=value, ...)` repr and `_replace`. Without
`collections`: a fetch with nothing new, which people run all day, makes
a dozen of them as it starts, and importing `collections` with what it
imports (and each namedtuple, whose methods it compiles from source)
would be a large part of its Python's CPU (doc/performance.md, "A fetch
with nothing new"; bench/fetch_noop.py measures it).
"""

try:
    # operator's C half: `operator` itself is a Python module over it (a
    # fetch with nothing new imports nothing else of it).
    from _operator import itemgetter
except ImportError:
    from operator import itemgetter


def _arguments(cls, args, kwargs):
    """The values of all fields from a constructor's arguments."""
    fields = cls._fields
    if len(args) > len(fields):
        raise TypeError('%s takes %d arguments, %d given'
                        % (cls.__name__, len(fields), len(args)))
    values = list(args)
    for name in fields[len(args):]:
        if name in kwargs:
            values.append(kwargs.pop(name))
        elif name in cls._defaults:
            values.append(cls._defaults[name])
        else:
            raise TypeError('%s: missing argument %r' % (cls.__name__, name))
    if kwargs:
        raise TypeError('%s: unexpected argument %r'
                        % (cls.__name__, sorted(kwargs)[0]))
    return values


def _new(cls, *args, **kwargs):
    if kwargs or len(args) != len(cls._fields):
        args = _arguments(cls, args, kwargs)
    return tuple.__new__(cls, args)


def _repr(self):
    return '%s(%s)' % (type(self).__name__, ', '.join(
        '%s=%r' % item for item in zip(self._fields, self)))


def _replace(self, **changes):
    """A copy of this record with the fields `changes` names changed."""
    return type(self)(**dict(zip(self._fields, self), **changes))


def _getnewargs(self):
    return tuple(self)


def record(name, fields, defaults=()):
    """A tuple subclass `name` with the fields `fields` (names separated by
    spaces), `defaults` giving the values of the last ones when left out."""
    fields = tuple(fields.split())
    namespace = {
        '__slots__': (),
        '__new__': _new,
        '__repr__': _repr,
        '__getnewargs__': _getnewargs,
        '_replace': _replace,
        '_fields': fields,
        '_defaults': dict(zip(fields[len(fields) - len(defaults):],
                              defaults)),
    }
    for index, field in enumerate(fields):
        namespace[field] = property(itemgetter(index),
                                    doc='field %d' % index)
    return type(name, (tuple,), namespace)
