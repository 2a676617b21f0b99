"""Progress meters on stderr, for what Python receives itself (a stream
clone): the same lines as the helper's meters (helper/meter.h), e.g.

    Receiving stream:  45% (130/289), 12.30 MiB | 8.10 MiB/s

drawn when the meter starts, redrawn in place at most once every INTERVAL
seconds (counted from the start) while the count changes, and ended with
`, done.`."""

import sys
import time

INTERVAL = 0.1
UNITS = ('bytes', 'KiB', 'MiB', 'GiB', 'TiB')


def size(n):
    """`n` bytes for people: '12.30 MiB'."""
    unit = 0
    while n >= 1024 and unit + 1 < len(UNITS):
        n /= 1024
        unit += 1
    return ('%.2f %s' if unit else '%.0f %s') % (n, UNITS[unit])


class Meter:
    """A phase named `title` whose count goes to `total` (0: unknown),
    with the bytes received when updates give them."""

    def __init__(self, title, total=0, counts_bytes=False, out=None):
        self.title = title
        self.total = total
        self.count = 0
        self.bytes = 0 if counts_bytes else None
        self._out = out or sys.stderr
        self._start = time.monotonic()
        self._tick = 0
        self._last_len = 0
        self._draw('')

    def update(self, count, received=None):
        if count == self.count and received == self.bytes:
            return
        self.count, self.bytes = count, received
        # Once an INTERVAL counted from the start, as the helper does.
        if self._tick_now() != self._tick:
            self._draw('')

    def stop(self):
        self._draw(', done.')

    def _line(self):
        if self.total:
            text = '%3d%% (%d/%d)' % (self.count * 100 // self.total,
                                      self.count, self.total)
        else:
            text = '%d' % self.count
        if self.bytes is not None:
            seconds = time.monotonic() - self._start
            text += ', ' + size(self.bytes)
            if self.bytes and seconds > 0:
                text += ' | %s/s' % size(self.bytes / seconds)
        return '%s: %s' % (self.title, text)

    def _draw(self, end):
        line = self._line() + end
        pad = ' ' * max(0, self._last_len - len(line))
        self._last_len = len(line)
        self._out.write(line + pad + ('\n' if end else '\r'))
        self._out.flush()
        self._tick = self._tick_now()

    def _tick_now(self):
        return int((time.monotonic() - self._start) // INTERVAL)


def shown(option, verbosity):
    """Whether to show meters, by git's rule (transport.c): as git's
    `option progress` says (`option`: --progress or --no-progress, else
    whether stderr is a terminal and there is no -q), which git always
    sends; without it, not with -q (`verbosity` 0), else when stderr is a
    terminal. An explicit --progress shows them even with -q, as `git
    clone -q --progress` shows git's own."""
    if option is not None:
        return option
    return verbosity >= 1 and sys.stderr.isatty()
