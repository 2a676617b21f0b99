"""A static file server for bundles (and helpers to download), in its own
process on 127.0.0.1, that can cut transfers.

Run as a program (`python bundleserver.py --root DIR --log FILE
--port-file FILE [--cut-after N] [--cuts K]`) it serves the files of
DIR with GET and HEAD, with a strong ETag and a Last-Modified date, and
honours `Range: bytes=<first>-[<last>]` (206 with Content-Range; 416
with `Content-Range: bytes */<size>` when <first> is past the end) and
`If-Range` (a range is served only when If-Range matches the ETag or the
date; else the whole file, 200). With --cut-after N, the first K (1 by
default) answers that carry a body announce their full length but send
only N bytes of it, then close the connection. Every request is one JSON
line in the log: method, path, range, if_range, status, sent (body
bytes sent).

With --tls-cert and --tls-key it speaks https (see `tls`).

`BundleServer` starts it as a child process (its own process group) and
stops it by pid.
"""

import argparse
import email.utils
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_RANGE = re.compile(r'bytes=(\d+)-(\d*)\Z')
START_TIMEOUT = 30


class _Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, format, *args):
        pass

    def do_HEAD(self):
        self._serve(body=False)

    def do_GET(self):
        self._serve(body=True)

    def _serve(self, body):
        state = self.server.state
        path = Path(state.root, self.path.split('?')[0].lstrip('/'))
        if not path.is_file() or '..' in self.path:
            return self._finish(404, [], b'not found\n', body)
        data = path.read_bytes()
        stat = path.stat()
        etag = '"%x-%x"' % (stat.st_size, int(stat.st_mtime_ns))
        modified = email.utils.formatdate(stat.st_mtime, usegmt=True)
        headers = [('ETag', etag), ('Last-Modified', modified),
                   ('Accept-Ranges', 'bytes'),
                   ('Content-Type', 'application/octet-stream')]
        wanted = _RANGE.match(self.headers.get('Range', ''))
        if_range = self.headers.get('If-Range')
        if wanted and if_range not in (None, etag, modified):
            wanted = None
        if not wanted:
            return self._finish(200, headers, data, body)
        first = int(wanted.group(1))
        last = int(wanted.group(2)) if wanted.group(2) else len(data) - 1
        if first >= len(data):
            headers.append(('Content-Range', 'bytes */%d' % len(data)))
            return self._finish(416, headers, b'', body)
        last = min(last, len(data) - 1)
        headers.append(('Content-Range',
                        'bytes %d-%d/%d' % (first, last, len(data))))
        return self._finish(206, headers, data[first:last + 1], body)

    def _finish(self, status, headers, data, body):
        state = self.server.state
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(data)))
        cut = body and data and state.take_cut()
        if cut:
            self.send_header('Connection', 'close')
        self.end_headers()
        sent = data[:state.cut_after] if cut else (data if body else b'')
        try:
            self.wfile.write(sent)
            self.wfile.flush()
        finally:
            state.record(self, status, len(sent))
        if cut:
            self.close_connection = True


class _State:
    def __init__(self, root, log, cut_after, cuts):
        self.root = root
        self.log = log
        self.cut_after = cut_after
        self.cuts_left = cuts if cut_after is not None else 0
        self.lock = threading.Lock()

    def take_cut(self):
        with self.lock:
            if self.cuts_left <= 0:
                return False
            self.cuts_left -= 1
            return True

    def record(self, handler, status, sent):
        line = json.dumps({
            'method': handler.command, 'path': handler.path,
            'range': handler.headers.get('Range'),
            'if_range': handler.headers.get('If-Range'),
            'status': status, 'sent': sent})
        with self.lock, open(self.log, 'a') as f:
            f.write(line + '\n')


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', required=True)
    parser.add_argument('--log', required=True)
    parser.add_argument('--port-file', required=True)
    parser.add_argument('--cut-after', type=int)
    parser.add_argument('--cuts', type=int, default=1)
    parser.add_argument('--tls-cert')
    parser.add_argument('--tls-key')
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    server.state = _State(args.root, args.log, args.cut_after, args.cuts)
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever()


class BundleServer:
    """The server above, in a child process, serving `root`."""

    def __init__(self, root, workdir, cut_after=None, cuts=1, tls=None):
        self.root = Path(root)
        self.tls = tls  # (certificate, key) paths for https
        self.workdir = Path(workdir)
        self.cut_after = cut_after
        self.cuts = cuts
        self.log_path = self.workdir / 'bundle-access.log'
        self.proc = None
        self.port = None

    def url(self, name=''):
        scheme = 'https' if self.tls else 'http'
        return f'{scheme}://127.0.0.1:{self.port}/{name}'

    def start(self):
        self.workdir.mkdir(parents=True, exist_ok=True)
        port_file = self.workdir / 'bundle-server.port'
        if port_file.exists():
            port_file.unlink()
        args = [sys.executable, __file__, '--root', str(self.root),
                '--log', str(self.log_path), '--port-file', str(port_file)]
        if self.cut_after is not None:
            args += ['--cut-after', str(self.cut_after),
                     '--cuts', str(self.cuts)]
        if self.tls:
            args += ['--tls-cert', str(self.tls[0]),
                     '--tls-key', str(self.tls[1])]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while not port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError('the bundle server did not start')
            time.sleep(0.02)
        self.port = int(port_file.read_text())
        return self

    def requests(self):
        """The access log, as a list of dicts."""
        if not self.log_path.exists():
            return []
        return [json.loads(line)
                for line in self.log_path.read_text().splitlines()]

    def bytes_sent(self, name=None):
        return sum(r['sent'] for r in self.requests()
                   if name is None or r['path'].lstrip('/') == name)

    def stop(self):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


if __name__ == '__main__':
    main()
