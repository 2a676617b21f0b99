"""git's smart HTTP, as a git hosting site serves it, on 127.0.0.1.

Run as a program (`python githttp.py --root DIR --port-file FILE`), it
answers every GET and POST by running `git http-backend` (CGI) on the
repositories under DIR, all exported: `GET /<repo>/info/refs?service=
git-upload-pack` gets git's advertisement, anything else what
http-backend says of it (404 for a Mercurial wire request). Each request
is one line `<method> <path> <status>` in DIR/../githttp.log.

`GitHttpServer` starts it as a child process (its own process group) and
stops it by pid.
"""

import argparse
import os
import signal
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

START_TIMEOUT = 30


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self._backend(b'')

    def do_POST(self):
        self._backend(self.rfile.read(int(
            self.headers.get('Content-Length') or 0)))

    def _backend(self, body):
        path, _, query = self.path.partition('?')
        env = dict(os.environ, GIT_PROJECT_ROOT=self.server.root,
                   GIT_HTTP_EXPORT_ALL='1', REQUEST_METHOD=self.command,
                   PATH_INFO=path, QUERY_STRING=query,
                   CONTENT_TYPE=self.headers.get('Content-Type', ''),
                   CONTENT_LENGTH=str(len(body)), REMOTE_ADDR='127.0.0.1')
        out = subprocess.run(['git', 'http-backend'], input=body, env=env,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL).stdout
        head, _, content = out.partition(b'\r\n\r\n')
        headers = [line.split(b': ', 1) for line in head.split(b'\r\n')
                   if b': ' in line]
        status = 200
        for name, value in headers:
            if name.lower() == b'status':
                status = int(value.split()[0])
        self.send_response(status)
        for name, value in headers:
            if name.lower() != b'status':
                self.send_header(name.decode(), value.decode())
        self.send_header('Content-Length', str(len(content)))
        self.end_headers()
        self.wfile.write(content)
        with open(self.server.log, 'a') as log:
            log.write(f'{self.command} {self.path} {status}\n')

    def log_message(self, *args):
        pass


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', required=True)
    parser.add_argument('--port-file', required=True)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(('127.0.0.1', 0), _Handler)
    server.daemon_threads = True
    server.root = args.root
    server.log = str(Path(args.root).parent / 'githttp.log')
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    server.serve_forever()


class GitHttpServer:
    """The server above, in a child process, serving the git repositories
    under `root`."""

    def __init__(self, root):
        self.root = Path(root)
        self.log_path = self.root.parent / 'githttp.log'
        self.proc = None
        self.port = None

    def url(self, name):
        return f'http://127.0.0.1:{self.port}/{name}'

    def requests(self):
        """[(method, path, status)] of the requests so far."""
        if not self.log_path.exists():
            return []
        return [tuple(line.split(' ')) for line
                in self.log_path.read_text().splitlines()]

    def start(self):
        # lib is importable in the tests, not where this file runs alone.
        from lib.proc import wait_for
        port_file = self.root.parent / 'githttp.port'
        self.proc = subprocess.Popen(
            [sys.executable, __file__, '--root', str(self.root),
             '--port-file', str(port_file)],
            stdin=subprocess.DEVNULL, start_new_session=True)
        if not wait_for(port_file.exists, self.proc, START_TIMEOUT):
            self.stop()
            raise RuntimeError('the git http server did not start')
        self.port = int(port_file.read_text())
        return self

    def stop(self):
        from lib.proc import kill_group, wait_then_kill_group
        if self.proc is not None:
            kill_group(self.proc.pid, signal.SIGTERM)
            wait_then_kill_group(self.proc)
            self.proc = None


if __name__ == '__main__':
    main()
