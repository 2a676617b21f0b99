"""Tracing of protocol lines, for bug reports.

Channels (categories) that can be traced:

`remote-helper`
    what git and we say to each other (gitremote-helpers protocol);
`helper`
    what we and git-cinnabar-helper say (helper/PROTOCOL.md), HTTP
    requests included, as the helper runs them;
`wire`
    the Mercurial wire protocol, on every transport: the lines sent to
    and read from `hg serve --stdio` (ssh, local repositories), and for
    HTTP each request's method, URL and headers and the server's status
    and headers.

Each traced line reads `<channel><direction> <text>`: `>` for what we
send, `<` for what we read, `:` for a note, e.g. `helper> hg2git 1234...`.
Binary payloads are shown by size only. URLs are shown without their
user and password (`cinnabar.redact`), and a trace file we create is
readable by its owner only (mode 0600), as it may show private URLs.

Where tracing goes, first found wins:

1. GIT_CINNABAR_TRACE (as git's GIT_TRACE): `1`, `2` or `true` traces
   every channel to standard error, an absolute path appends to that
   file; empty, `0` or `false` turns it off.
2. GIT_CINNABAR_LOG, else the git configuration `cinnabar.log`: a
   comma-separated list of items, each one of
   - `<channel>` or `<channel>:<level>`, `*` for every channel (the
     syntax of git-cinnabar's GIT_CINNABAR_LOG): the channel is traced
     when there is no level or the level is 3 (info) or more; a level is
     a number or a name (`off`, `error`, `warn`, `info`, `debug`,
     `trace`: 0 to 5); git-cinnabar's channels `raw-wire` (and
     `raw-wire::<command>`, `wire::<command>`) are our `wire`, its other
     ones (`root`, `find-common`, ...) are accepted and trace nothing;
   - any of these followed by `>` and a path (git-cinnabar's way of
     naming the file): that path, for the trace as a whole;
   - `1`, `true`, `yes` or `on`: every channel;
   - anything else: the path of the file to append to (relative to the
     current directory; a git cinnabar command passes it on to the git
     and remote helper it runs as an absolute path).
   Without a path, the trace goes to standard error; without a channel,
   every channel is traced.
"""

import os
import sys

from cinnabar import git
from cinnabar.errors import Abort
from cinnabar.redact import redact_text

CHANNELS = ('remote-helper', 'helper', 'wire')
INFO_LEVEL = 3
_OFF = ('', '0', 'false')
_ON = ('1', 'true', 'yes', 'on')
_STDERR = ('1', '2', 'true')


def _once(function):
    """`function` (without arguments), run at its first call only: what
    it returned then is kept. `.cache_clear()` forgets it. (What we used of
    functools.lru_cache: git-remote-hg does not load functools.)"""
    kept = []

    def once():
        if not kept:
            kept.append(function())
        return kept[0]
    once.cache_clear = kept.clear
    return once


def _log_setting():
    """The value of GIT_CINNABAR_LOG, else of cinnabar.log, or ''."""
    value = os.environ.get('GIT_CINNABAR_LOG')
    if value is not None:
        return value
    try:
        return (git.config('cinnabar.log') or '').strip()
    except (OSError, Abort):
        return ''


LEVELS = {'off': 0, 'error': 1, 'warn': 2, 'info': 3, 'debug': 4,
          'trace': 5}


def _level(text):
    """A level number, from digits or a level name, or None."""
    if text.isdigit():
        return int(text)
    return LEVELS.get(text.lower())


def _channel_item(item):
    """(channels, enabled) when `item` names channels, else None."""
    name, level = item, None
    head, colon, tail = item.rpartition(':')
    if colon and not head.endswith(':'):
        level = _level(tail)
        if level is None:
            return None
        name = head
    base = name.split('::')[0]
    if base == 'raw-wire':
        base = 'wire'
    if base == '*':
        channels = CHANNELS
    elif base in CHANNELS:
        channels = (base,)
    elif level is not None or '::' in name:
        channels = ()  # one of git-cinnabar's we have nothing for
    else:
        return None
    return channels, level is None or level >= INFO_LEVEL


def parse_log_setting(value):
    """(path or None, set of channels) from a GIT_CINNABAR_LOG value."""
    path = None
    channels = set()
    named = False
    for item in value.split(','):
        item, arrow, target = item.strip().partition('>')
        if arrow and target:
            path = os.path.abspath(os.path.expanduser(target))
        if not item:
            continue
        if item.lower() in _ON:
            channels.update(CHANNELS)
            named = True
            continue
        parsed = _channel_item(item)
        if parsed is None:
            path = os.path.abspath(os.path.expanduser(item))
            continue
        names, enabled = parsed
        named = True
        if enabled:
            channels.update(names)
    if not named and path is not None:
        channels.update(CHANNELS)
    return path, frozenset(channels)


def _open(path):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return os.fdopen(fd, 'a', encoding='utf-8', errors='replace')
    except OSError as error:
        sys.stderr.write('warning: cannot write the trace to %s: %s; '
                         'tracing to standard error\n'
                         % (path, error.strerror))
        return sys.stderr


@_once
def _sinks():
    """{channel: open file} of the channels traced."""
    value = os.environ.get('GIT_CINNABAR_TRACE', '')
    if value.lower() in _STDERR:
        return {c: sys.stderr for c in CHANNELS}
    if value.lower() not in _OFF:
        if os.path.isabs(value):
            sink = _open(value)
        else:
            sys.stderr.write('warning: GIT_CINNABAR_TRACE must be 1 or an '
                             'absolute path; tracing to standard error\n')
            sink = sys.stderr
        return {c: sink for c in CHANNELS}
    setting = _log_setting()
    if setting.lower() in _OFF:
        return {}
    path, channels = parse_log_setting(setting)
    if not channels:
        return {}
    sink = sys.stderr
    if path is not None:
        sink = _open(path)
        if sink is not sys.stderr:
            # What we run (git, the remote helper) writes to the same
            # file wherever it runs.
            os.environ['GIT_CINNABAR_LOG'] = ','.join(
                [path] + ['%s:%d' % (c, INFO_LEVEL) for c in sorted(channels)])
    return {c: sink for c in channels}


class Tracer:
    """Writes trace lines for one channel (see CHANNELS).

    Where they go is looked up at the first line, not when the tracer is
    made: the git configuration (`cinnabar.log`) may still be being read
    then (a fetch starts `git config` beside the helper, whose tracer is
    made as it is spawned) and waiting for it there would hold up the
    session."""

    def __init__(self, channel):
        self.channel = channel
        self._looked_up = False
        self._sink = None

    @property
    def enabled(self):
        if not self._looked_up:
            if git.config_being_read():
                return False    # the helper saying it (the handshake too)
            self._sink = _sinks().get(self.channel)
            self._looked_up = True
        return self._sink is not None

    def _write(self, direction, text):
        line = '%s%s %s\n' % (self.channel, direction, redact_text(text))
        self._sink.write(line)
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
