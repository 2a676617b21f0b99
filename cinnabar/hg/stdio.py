"""Wire protocol v1 over the pipes of `hg serve --stdio`.

Used for ssh (`sshtransport`) and local (`localtransport`) repositories;
they only differ in the command that starts the server.

Request
    `<command>\\n`, then each argument of the command's spec (see
    `wireformat.ARGUMENT_SPECS`) as `<name> <length>\\n<value>`. A `*` in
    the spec is sent as `* <count>\\n` followed by that many arguments
    written the same way.

Answer to a string command
    `<length>\\n<value>`. An empty line instead means an error; the server
    wrote the message on its standard error, which we copy to ours with a
    `remote: ` prefix (but, until the server answered the handshake, the
    lines the transport says are the client's own, e.g. ssh's).

Answer to a stream command (getbundle)
    Raw bytes with no framing. We close the server's input right after the
    command: the server then exits after answering, and the stream ends at
    end of file. No command can follow on that connection.

Pushing (unbundle)
    After the command and its `heads` argument, the server answers an
    empty string (`0\\n`; anything else is a refusal, e.g. because its
    heads changed), then reads the bundle as chunks `<length>\\n<bytes>`
    ending with `0\\n`. It then answers a bundle2 without framing when
    it got a bundle2 (read up to its end marker), else two strings: an
    error message (empty when none) and the integer result. Hook output
    comes on the server's standard error.

Lengths are decimal ASCII digits; a length over MAX_ANSWER (or anything
else than digits) is refused before anything is read, and so is a line
longer than MAX_LINE.

Handshake
    `hello`, then `between` with `pairs` = 40 zeros, `-`, 40 zeros. The
    server may first print banner lines (ssh's motd); they are skipped.
    `hello` answers `capabilities: <caps>\\n` (old servers answer nothing,
    `0\\n`); `between` answers `\\n` (`1\\n\\n`), which ends the handshake.
"""

import os
import shutil
import subprocess
import sys
import threading

from cinnabar.errors import Abort
from cinnabar.hg import bundle2, wireformat
from cinnabar.hg.wire import Transport
from cinnabar.trace import Tracer

NULL_PAIR = '-'.join(['0' * 40] * 2)
# How many lines of banner we skip before giving up on the handshake.
MAX_BANNER_LINES = 500
# How long a server may take to exit once its pipes are closed.
WAIT_SECONDS = 30
# The size of the chunks of a bundle we push.
PUSH_CHUNK_SIZE = 65536
# The largest answer to a string command we read (into memory).
MAX_ANSWER = 256 * 1024 * 1024
# The longest line (a length, a banner line) we read.
MAX_LINE = 65536
# The largest piece of the server's standard error held at once.
STDERR_PIECE = 65536


def _encode_argument(name, value):
    value = wireformat.to_bytes(value)
    return b'%s %d\n%s' % (name.encode('ascii'), len(value), value)


def encode_command(command, args):
    """Frame `command` with `args` ({name: value}) for the stdio protocol."""
    spec = wireformat.ARGUMENT_SPECS.get(command)
    if spec is None:
        raise ValueError('unknown wire command %r' % command)
    named = [n for n in spec if n != '*']
    unknown = sorted(set(args) - set(named))
    if unknown and '*' not in spec:
        raise ValueError('%s takes no argument %s' % (command, unknown[0]))
    parts = [command.encode('ascii') + b'\n']
    for name in spec:
        if name == '*':
            parts.append(b'* %d\n' % len(unknown))
            parts.extend(_encode_argument(n, args[n]) for n in unknown)
        else:
            parts.append(_encode_argument(name, args.get(name, b'')))
    return b''.join(parts)


def _copy_stderr(stream, out, own_line, answered):
    """Copy the server's standard error to `out`, each line labelled
    `remote: `, but those `own_line` says are the client's (the program
    running the server, e.g. ssh) before the server `answered`; in pieces
    of at most STDERR_PIECE bytes: a line that never ends is not held
    whole."""
    line_start = True
    for piece in iter(lambda: stream.readline(STDERR_PIECE), b''):
        if line_start:
            own = own_line and not answered.is_set() and own_line(piece)
            if not own:
                out.write(b'remote: ')
        out.write(piece)
        out.flush()
        line_start = piece.endswith(b'\n')


class StdioTransport(Transport):
    """A running `hg serve --stdio`, started from `argv`."""

    def __init__(self, argv, description, env=None, missing_hint=None,
                 own_line=None):
        self.description = description
        self._trace = Tracer('wire')
        self._trace.note('running %r' % (argv,))
        try:
            self._process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=env)
        except OSError as error:
            raise Abort('cannot run %s: %s' % (argv[0], error.strerror),
                        hint=missing_hint)
        self._answered = threading.Event()
        self._stderr_thread = threading.Thread(
            target=_copy_stderr,
            args=(self._process.stderr, sys.stderr.buffer, own_line,
                  self._answered), daemon=True)
        self._stderr_thread.start()
        self._input_open = True
        self._stopped_reading = False
        self._capabilities = self._handshake()
        self._answered.set()

    # The one send and the one receive function.

    def _send(self, data):
        """Send `data`. A server that stopped reading may have answered
        first (an error, an absurd length...): what it sent is read next,
        and only when there is nothing is the connection reported lost."""
        self._trace.sent(data)
        if self._stopped_reading:
            return
        # Written to the descriptor, not through the pipe's buffer: after a
        # broken pipe, a buffer would still hold the data and complain when
        # Python flushes it at exit.
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._process.stdin.fileno(), view):]
        except (BrokenPipeError, ValueError):
            self._stopped_reading = True

    def _receive(self, size=None):
        """Read one line (with its LF) or, given a size, that many bytes."""
        stdout = self._process.stdout
        data = (stdout.readline(MAX_LINE) if size is None
                else stdout.read(size))
        if size is None and len(data) == MAX_LINE and not data.endswith(
                b'\n'):
            raise Abort('%s sent a line longer than %d bytes'
                        % (self.description, MAX_LINE))
        if size is None and not data.endswith(b'\n'):
            self._lost()
        if size is not None and len(data) != size:
            self._lost()
        self._trace.received(data)
        return data

    def _lost(self):
        code = self._wait()
        raise Abort('the connection to %s ended unexpectedly%s'
                    % (self.description,
                       ' (exit status %d)' % code if code else ''),
                    hint='see the lines above for the reason')

    def _length(self, line):
        """The length given by an answer's first line (digits only)."""
        digits = line.rstrip(b'\n')
        length = wireformat.parse_decimal(digits)
        if length is None:
            raise Abort('unexpected answer from %s: %r'
                        % (self.description, digits[:80]))
        if length > MAX_ANSWER:
            raise Abort('%s announced an answer of %d bytes, more than the '
                        '%d we accept' % (self.description, length,
                                          MAX_ANSWER))
        return length

    def _handshake(self):
        self._send(encode_command('hello', {})
                   + encode_command('between', {'pairs': NULL_PAIR}))
        capabilities = b''
        for _ in range(MAX_BANNER_LINES):
            line = self._receive()
            if wireformat.parse_decimal(line.rstrip(b'\n')) is None:
                continue
            answer = self._receive(self._length(line))
            if answer == b'\n':
                return capabilities
            if answer.startswith(b'capabilities:'):
                capabilities = answer[len(b'capabilities:'):].strip()
        raise Abort('no Mercurial server answered at %s' % self.description)

    def _wait(self):
        """Close our ends of the pipes (a server still writing an answer
        nobody reads then stops) and wait for the server to exit."""
        self._close_input()
        self._process.stdout.close()
        try:
            code = self._process.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            code = self._process.wait()
        self._stderr_thread.join()
        return code

    def _close_input(self):
        if self._input_open:
            self._input_open = False
            try:
                self._process.stdin.close()
            except BrokenPipeError:
                pass

    # The Transport interface.

    def capabilities(self):
        return self._capabilities

    def _send_command(self, command, args):
        if not self._input_open:
            raise RuntimeError('command after a stream on %s'
                               % self.description)
        self._send(encode_command(command, args))

    def _read_answer(self, command):
        line = self._receive().rstrip(b'\n')
        if not line:
            raise Abort('the server at %s failed to answer "%s"'
                        % (self.description, command),
                        hint='see the lines above for the reason')
        return self._receive(self._length(line))

    def call(self, command, args):
        self._send_command(command, args)
        return self._read_answer(command)

    def import_stream(self, command, args, kind, helper):
        self._send(encode_command(command, args))
        self._close_input()
        counts = helper.import_stream(kind, self._process.stdout)
        self._wait()
        return counts

    def read_stream(self, command, args, consume):
        self._send(encode_command(command, args))
        self._close_input()
        try:
            return consume(self._process.stdout.read)
        finally:
            self._wait()

    def save_stream(self, command, args, out):
        self._send(encode_command(command, args))
        self._close_input()
        shutil.copyfileobj(self._process.stdout, out)
        self._wait()

    def unbundle(self, args, path, bundle2_reply):
        self._send_command('unbundle', args)
        refusal = self._read_answer('unbundle')
        if refusal:
            return (b'0', refusal)
        with open(path, 'rb') as bundle:
            for chunk in iter(lambda: bundle.read(PUSH_CHUNK_SIZE), b''):
                self._send(b'%d\n' % len(chunk) + chunk)
        self._send(b'0\n')
        if bundle2_reply:
            return bundle2.read_bundle(self._receive)
        refusal = self._read_answer('unbundle')
        if refusal:
            return (b'0', refusal)
        return (self._read_answer('unbundle'), b'')

    def close(self):
        self._wait()
