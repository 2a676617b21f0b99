"""What a session holds (the lock, the helper, connections), released
last first when it ends: `Resources`, used as a context manager.

The little of `contextlib.ExitStack` we use (`enter_context`, `callback`),
without `contextlib`, which imports `collections` and `functools`: a
fetch with nothing new, which people run all day, loads none of them
(bench/fetch_noop.py).

As with ExitStack, each exit is given the exception on its way out (or
None), an exception raised by an exit takes its place for the exits
left (Python chains the one it replaces as its `__context__`), and an
exit returning true swallows it.
"""


class Resources:
    def __init__(self):
        self._exits = []

    def enter_context(self, manager):
        """Enter the context manager `manager`; its exit is run when the
        session ends. Returns what its `__enter__` returned."""
        kind = type(manager)
        value = kind.__enter__(manager)
        self._exits.append(lambda *exc_info: kind.__exit__(manager,
                                                           *exc_info))
        return value

    def callback(self, function, *args):
        """Call `function(*args)` when the session ends."""
        self._exits.append(lambda *exc_info: function(*args))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        pending = exc_value
        while self._exits:
            exit_ = self._exits.pop()
            try:
                if exit_(type(pending) if pending else None, pending,
                         pending.__traceback__ if pending else None):
                    pending = None
            except BaseException as error:
                pending = error
        if pending is exc_value:
            return False
        if pending is None:
            return True
        raise pending
