"""Tracing of protocol lines, switched on from the environment.

GIT_CINNABAR_TRACE works like git's GIT_TRACE: `1`, `2` or `true` sends the
trace to standard error, an absolute path appends it to that file, and
empty, `0` or `false` turns it off. GIT_CINNABAR_LOG set to anything
non-empty (git-cinnabar's variable) also traces to standard error.

Each traced line reads `<channel><direction> <text>`, e.g.
`helper> hg2git 1234...` for what we send to the helper and `helper< ...`
for what it answers. Binary payloads are shown by size only.
"""

import functools
import os
import sys

_OFF = ('', '0', 'false')
_STDERR = ('1', '2', 'true')


@functools.lru_cache(maxsize=None)
def _open_sink():
    value = os.environ.get('GIT_CINNABAR_TRACE', '')
    if value.lower() in _STDERR:
        return sys.stderr
    if value.lower() not in _OFF:
        if os.path.isabs(value):
            return open(value, 'a', encoding='utf-8', errors='replace')
        sys.stderr.write('warning: GIT_CINNABAR_TRACE must be 1 or an '
                         'absolute path; tracing to standard error\n')
        return sys.stderr
    if os.environ.get('GIT_CINNABAR_LOG'):
        return sys.stderr
    return None


class Tracer:
    """Writes trace lines for one channel (the helper, a wire transport...)."""

    def __init__(self, channel):
        self.channel = channel
        self._sink = _open_sink()
        self.enabled = self._sink is not None

    def _write(self, direction, text):
        self._sink.write('%s%s %s\n' % (self.channel, direction, text))
        self._sink.flush()

    def sent(self, data):
        if self.enabled:
            self._write('>', _printable(data))

    def received(self, data):
        if self.enabled:
            self._write('<', _printable(data))

    def note(self, text):
        if self.enabled:
            self._write(':', text)


def _printable(data):
    if isinstance(data, bytes):
        if len(data) > 200 or b'\0' in data:
            return '<%d bytes>' % len(data)
        data = data.decode('utf-8', 'backslashreplace')
    if data.endswith('\n'):
        data = data[:-1]
    return data.replace('\n', '\\n')
