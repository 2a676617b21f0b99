"""A hostile HTTP server: two "hosts" in front of `hg serve`.

It runs in threads of the test process and listens on two ports of
127.0.0.1, `a` and `b`: for a client, two origins (scheme, host and
port), as two hosts would be. Each request is forwarded to the `hg
serve` at `upstream_port` (when given) or answered from the files of
`files` (`/<name>`), unless a rule says otherwise. Every request is
recorded (`requests`): which side got it, method, path, wire command
(`?cmd=`), Authorization header, all headers (`headers`, names in lower
case); and every answer produced (`answers`):
wire command, content type, compression engine of a
`application/mercurial-0.2` answer.

Rules (attributes, set before the client runs):

- `auth[side] = (user, password)`: that side wants HTTP Basic
  credentials; without them (or with others) it answers 401 with a
  `WWW-Authenticate: Basic` header and a body, as most servers do;
- `redirect[side] = base URL`: every request is answered `302` to the
  same path and query under that base URL (after `auth` is satisfied);
- `cut[command] = 'with-length' | 'chunked'`: the answer to that wire
  command (None: a file of `files`, served with an ETag) stops
  half-way and the connection is closed; `with-length`
  announces the full Content-Length, `chunked` never sends the last
  (empty) chunk;
- `answer[command] = (headers, body)`: the answer to that wire command
  is `body` (bytes) with those headers and its Content-Length, without
  asking the upstream;
- `endless[command] = content type`: the answer to that wire command is
  an endless body of zeros without a length, until the client hangs up
  or ENDLESS_LIMIT bytes were sent;
- `stall[command] = seconds`: the answer to that wire command sends its
  headers (with the full length) and half its body, then nothing for
  that many seconds, then the connection is closed;
- `hold[command] = path`: the request for that wire command is read and
  recorded but never forwarded nor answered: the file `path` is created,
  and the connection is closed only when the server stops (a client
  killed at that point has sent its request to no server);
- `tls`: (certificate, key) paths: side `a` speaks https (`b` stays
  plain http).
"""

import base64
import http.client
import os
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from .proxy import HOP_BY_HOP

ENDLESS_LIMIT = 2 * 1024 * 1024 * 1024
CHUNK = 1 << 16
SIDES = ('a', 'b')


class _Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self._answer()

    def do_POST(self):
        self._answer()

    def _answer(self):
        hostile = self.server.hostile
        side = self.server.side
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length) if length else None
        command = parse_qs(urlsplit(self.path).query).get('cmd', [None])[0]
        hostile.record(side, self.command, self.path, command, self.headers)
        if not hostile.authorized(side, self.headers.get('Authorization')):
            return self._send(401, [('WWW-Authenticate',
                                     'Basic realm="hostile"'),
                                    ('Content-Type', 'text/plain')],
                              b'401 Unauthorized: credentials needed\n')
        if side in hostile.redirect:
            return self._send(302, [('Location',
                                     hostile.redirect[side] + self.path)],
                              b'moved\n')
        if command in hostile.hold:
            with open(hostile.hold[command], 'w'):
                pass
            hostile.stopping.wait()
            self.close_connection = True
            return
        if command in hostile.endless:
            return self._send_endless(hostile.endless[command])
        if command in hostile.answer:
            return self._send(200, *hostile.answer[command])
        status, headers, data = hostile.produce(self.command, self.path,
                                                self.headers, body)
        hostile.record_answer(command, headers, data)
        if command in hostile.cut:
            return self._send_cut(status, headers, data,
                                  hostile.cut[command])
        if command in hostile.stall:
            return self._send_stalled(status, headers, data,
                                      hostile.stall[command])
        self._send(status, headers, data)

    def _send_headers(self, status, headers):
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)

    def _send(self, status, headers, data):
        self._send_headers(status, headers)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_cut(self, status, headers, data, mode):
        self._send_headers(status, headers)
        half = data[:len(data) // 2]
        if mode == 'with-length':
            self.send_header('Content-Length', str(len(data)))
        else:
            self.send_header('Transfer-Encoding', 'chunked')
        self.send_header('Connection', 'close')
        self.end_headers()
        if mode == 'with-length':
            self.wfile.write(half)
        elif half:
            self.wfile.write(b'%x\r\n%s\r\n' % (len(half), half))
        self.wfile.flush()
        self.close_connection = True

    def _send_stalled(self, status, headers, data, seconds):
        self._send_headers(status, headers)
        self.send_header('Content-Length', str(len(data)))
        self.send_header('Connection', 'close')
        self.end_headers()
        self.wfile.write(data[:len(data) // 2])
        self.wfile.flush()
        self.server.hostile.stopping.wait(seconds)
        self.close_connection = True

    def _send_endless(self, content_type):
        self.send_response(200)
        self.send_header('Content-Type', content_type)
        self.send_header('Connection', 'close')
        self.end_headers()
        zeros = b'0' * CHUNK
        try:
            for _ in range(ENDLESS_LIMIT // CHUNK):
                self.wfile.write(zeros)
        except OSError:
            pass  # the client hung up, as it should
        self.close_connection = True


class HostileServer:
    def __init__(self, upstream_port=None, files=None, tls=None):
        self.upstream_port = upstream_port
        self.files = files
        self.tls = tls
        self.auth = {}
        self.redirect = {}
        self.cut = {}
        self.answer = {}
        self.endless = {}
        self.stall = {}
        self.hold = {}
        self.stopping = threading.Event()
        self.requests = []
        self.answers = []
        self._lock = threading.Lock()
        self._servers = {}
        self._threads = []

    def url(self, side):
        scheme = 'https' if side == 'a' and self.tls else 'http'
        port = self._servers[side].server_address[1]
        return f'{scheme}://127.0.0.1:{port}'

    def port(self, side):
        return self._servers[side].server_address[1]

    def record(self, side, method, path, command, headers):
        with self._lock:
            self.requests.append({
                'side': side, 'method': method, 'path': path,
                'command': command,
                'authorization': headers.get('Authorization'),
                'headers': {k.lower(): v for k, v in headers.items()}})

    def record_answer(self, command, headers, data):
        """Keep the content type of the answer to a wire command and, for
        application/mercurial-0.2, the compression engine it names."""
        content_type = dict((k.lower(), v) for k, v in headers).get(
            'content-type', '')
        engine = None
        if content_type.startswith('application/mercurial-0.2') and data:
            engine = data[1:1 + data[0]].decode('ascii', 'replace')
        with self._lock:
            self.answers.append({'command': command,
                                 'content_type': content_type,
                                 'engine': engine})

    def requests_to(self, side):
        with self._lock:
            return [r for r in self.requests if r['side'] == side]

    def authorized(self, side, header):
        wanted = self.auth.get(side)
        if wanted is None:
            return True
        token = base64.b64encode(('%s:%s' % wanted).encode()).decode()
        return header == 'Basic ' + token

    def produce(self, method, path, headers, body):
        """(status, headers, body) of the upstream or file answer."""
        if self.upstream_port is None:
            name = os.path.basename(urlsplit(path).path)
            full = os.path.join(self.files or '', name)
            if not name or not os.path.isfile(full):
                return 404, [], b'not found\n'
            with open(full, 'rb') as f:
                data = f.read()
            etag = '"%x-%x"' % (len(data), os.stat(full).st_mtime_ns)
            return 200, [('Content-Type', 'application/octet-stream'),
                         ('ETag', etag)], data
        forwarded = {k: v for k, v in headers.items()
                     if k.lower() not in HOP_BY_HOP
                     and k.lower() != 'authorization'}
        conn = http.client.HTTPConnection('127.0.0.1', self.upstream_port,
                                          timeout=300)
        try:
            conn.request(method, path, body=body, headers=forwarded)
            response = conn.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            conn.close()

    def start(self):
        for side in SIDES:
            server = ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
            server.daemon_threads = True
            server.hostile = self
            server.side = side
            if side == 'a' and self.tls:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(*self.tls)
                server.socket = context.wrap_socket(server.socket,
                                                    server_side=True)
            self._servers[side] = server
            thread = threading.Thread(target=server.serve_forever,
                                      name='hostile-' + side, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self):
        self.stopping.set()
        for server in self._servers.values():
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=10)
        self._servers = {}
        self._threads = []
