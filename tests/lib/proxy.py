"""An HTTP proxy in front of `hg serve`, to count and to break transfers.

It runs in a thread of the test process, listens on 127.0.0.1 and
forwards every request to the real server.  It counts the response bytes
of each wire command (`?cmd=...`), and, when asked, cuts the response to
`getbundle` half-way and drops the connection:

- `cut='with-length'`: the headers announce the full length, so the client
  sees a short body;
- `cut='without-length'`: no length and `Connection: close`, so the body
  just ends early and only the bundle decoder can tell.

`trickle=(size, pause)` sends the response to `getbundle` `size` bytes at
a time, `pause` seconds apart: a server slow to send.

`before[command]`, when set to a function, is called (once, then
removed) before the first request for that command goes to the server:
for instance to change the repository while a client is pushing.
"""

import collections
import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HOP_BY_HOP = {'connection', 'keep-alive', 'transfer-encoding', 'te',
              'upgrade', 'proxy-authorization', 'proxy-authenticate',
              'trailer', 'host', 'content-length', 'expect'}
CUT_MODES = (None, 'with-length', 'without-length')


class _Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def do_GET(self):
        self._forward()

    def do_POST(self):
        self._forward()

    def log_message(self, format, *args):
        pass

    def _forward(self):
        proxy = self.server.proxy
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in HOP_BY_HOP}
        command = parse_qs(urlsplit(self.path).query).get('cmd', ['?'])[0]
        action = proxy.before.pop(command, None)
        if action:
            action()
        status, reason, out_headers, data = proxy.upstream(
            self.command, self.path, headers, body)
        proxy.record(command, len(data))
        if command == 'getbundle' and proxy.cut:
            self._send_cut(status, reason, out_headers, data, proxy.cut)
        elif command == 'getbundle' and proxy.trickle:
            self._send_trickled(status, reason, out_headers, data,
                                *proxy.trickle)
        else:
            self._send(status, reason, out_headers, data)

    def _send_headers(self, status, reason, headers):
        self.send_response(status, reason)
        for name, value in headers:
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)

    def _send(self, status, reason, headers, data):
        self._send_headers(status, reason, headers)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_trickled(self, status, reason, headers, data, size, pause):
        self._send_headers(status, reason, headers)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        for start in range(0, len(data), size):
            self.wfile.write(data[start:start + size])
            self.wfile.flush()
            time.sleep(pause)

    def _send_cut(self, status, reason, headers, data, mode):
        self._send_headers(status, reason, headers)
        if mode == 'with-length':
            self.send_header('Content-Length', str(len(data)))
        self.send_header('Connection', 'close')
        self.end_headers()
        self.wfile.write(data[:len(data) // 2])
        self.wfile.flush()
        self.close_connection = True


class HgProxy:
    """Proxy to the `hg serve` at `upstream_port` on 127.0.0.1."""

    def __init__(self, upstream_port, cut=None, trickle=None):
        if cut not in CUT_MODES:
            raise ValueError(f'cut must be one of {CUT_MODES}')
        self.upstream_port = upstream_port
        self.cut = cut
        self.trickle = trickle
        self.bytes_by_command = collections.Counter()
        self.calls_by_command = collections.Counter()
        self.before = {}
        self._lock = threading.Lock()
        self._server = None
        self._thread = None

    @property
    def url(self):
        return f'http://127.0.0.1:{self._server.server_address[1]}/'

    def upstream(self, method, path, headers, body):
        conn = http.client.HTTPConnection('127.0.0.1', self.upstream_port,
                                          timeout=300)
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
            return (response.status, response.reason,
                    response.getheaders(), data)
        finally:
            conn.close()

    def record(self, command, size):
        with self._lock:
            self.bytes_by_command[command] += size
            self.calls_by_command[command] += 1

    def start(self):
        self._server = ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
        self._server.daemon_threads = True
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        name='hg-proxy', daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
