"""Mercurial's command server (`hg serve --cmdserver pipe`), to run many
hg commands in one repository without starting hg each time.

Protocol (`hg help internals.cmdserver`): every message from the server is
a channel byte, a 4-byte big-endian length and, for output channels, that
many bytes.  The server first sends a hello on channel `o`.  The client
sends `runcommand\\n`, a 4-byte length and the arguments joined by NUL;
the server answers with `o` (output) and `e` (error) messages, then `r`
with the command's exit code as a 4-byte big-endian integer.  `I`/`L`
ask for input, which these commands never need: answered with nothing.
"""

import struct
import subprocess
from pathlib import Path

from .proc import CommandFailed, Result, wait_then_kill_group


class HgCommandServer:
    """One `hg serve --cmdserver pipe` process in `repo`; call it as
    `server('commit', '-m', 'msg')`.  Stopped (by pid) by `stop`; `repo`
    is its repository's path."""

    def __init__(self, hg_exe, repo, config=()):
        self.repo = Path(repo)
        self.args = [str(hg_exe), 'serve', '--cmdserver', 'pipe']
        for item in config:
            self.args += ['--config', item]
        self.proc = subprocess.Popen(
            self.args, cwd=repo, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, start_new_session=True)
        channel, hello = self._read()
        if channel != b'o' or b'runcommand' not in hello:
            self.stop()
            raise AssertionError(f'no hg command server hello: {hello!r}')

    def _read(self):
        head = self.proc.stdout.read(5)
        if len(head) < 5:
            raise AssertionError('the hg command server went away')
        channel, length = head[:1], struct.unpack('>I', head[1:])[0]
        if channel in b'IL':
            return channel, length
        return channel, self.proc.stdout.read(length)

    def __call__(self, *args, check=True):
        data = b'\0'.join(a if isinstance(a, bytes) else str(a).encode()
                          for a in args)
        self.proc.stdin.write(b'runcommand\n' + struct.pack('>I', len(data))
                              + data)
        self.proc.stdin.flush()
        out, err = [], []
        while True:
            channel, data = self._read()
            if channel == b'o':
                out.append(data)
            elif channel == b'e':
                err.append(data)
            elif channel in b'IL':
                self.proc.stdin.write(struct.pack('>I', 0))
                self.proc.stdin.flush()
            elif channel == b'r':
                code = struct.unpack('>i', data)[0]
                break
            elif channel.isupper():
                raise AssertionError(f'unknown required channel {channel}')
        result = Result(['hg', *args], code, b''.join(out), b''.join(err))
        if check and code != 0:
            raise CommandFailed(result)
        return result

    def stop(self):
        if self.proc is None:
            return
        self.proc.stdin.close()
        wait_then_kill_group(self.proc)
        self.proc.stdout.close()
        self.proc = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
