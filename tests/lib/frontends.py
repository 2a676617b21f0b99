"""Real servers in front of Mercurial, as people run them, on 127.0.0.1.

- `HgwebGunicorn`: Mercurial's `hgwebdir` (several repositories) under
  Debian's gunicorn, over HTTPS, behind HTTP Basic authentication (a small
  WSGI layer of ours that sets REMOTE_USER, as Kallithea or an Apache
  `Require valid-user` do; hgweb then allows the push to that user);
- `Sshd`: Debian's OpenSSH server on a high port with a test host key,
  letting one test key in with `hg-ssh` as its forced command;
- `Tinyproxy`: Debian's tinyproxy, an HTTP proxy.

Each runs in the foreground as the leader of its own process group and
is stopped by its pid (`stop`). Debian's Mercurial (/usr/bin/hg's
Python modules) serves, whatever hg the tests use otherwise.
"""

import re
import signal
import subprocess
import textwrap
from pathlib import Path

from .hg import free_port
from .proc import kill_group, run, wait_for, wait_then_kill_group

READY_TIMEOUT = 60
GUNICORN = '/usr/bin/gunicorn'
SSHD = '/usr/sbin/sshd'
HG_SSH = '/usr/bin/hg-ssh'
TINYPROXY = '/usr/bin/tinyproxy'
# What sshd and tinyproxy say when the port they were given is taken.
BIND_FAILED = ('Address already in use', 'Could not create listening sockets')
BIND_ATTEMPTS = 5


class Daemon:
    """A server process logging to `log`, ready once `ready()` says so."""

    def __init__(self, workdir):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.logfile = self.workdir / 'server.log'
        self.proc = None

    def _spawn(self, args, env=None):
        with open(self.logfile, 'ab') as log:
            self.proc = subprocess.Popen(
                [str(a) for a in args], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, env=env, start_new_session=True)
        if wait_for(self.ready, self.proc, READY_TIMEOUT):
            return self
        self.stop()
        raise AssertionError(f'{args[0]} did not start:\n{self.log()}')

    def _spawn_on_a_free_port(self, args_for_port, env=None):
        """Spawn `args_for_port(port)` on a port that was free a moment
        ago; should another process take it first (the daemon exits,
        unable to bind), again on another one."""
        for attempt in range(BIND_ATTEMPTS):
            self.logfile.write_bytes(b'')
            self.port = free_port()
            try:
                return self._spawn(args_for_port(self.port), env)
            except AssertionError:
                log = self.log()
                if not any(what in log for what in BIND_FAILED):
                    raise
        raise AssertionError(f'no free port in {BIND_ATTEMPTS} attempts:\n'
                             f'{self.log()}')

    def log(self):
        try:
            return self.logfile.read_text(errors='replace')
        except OSError:
            return ''

    def stop(self):
        if self.proc is not None:
            kill_group(self.proc.pid, signal.SIGTERM)
            wait_then_kill_group(self.proc)
            self.proc = None


WSGI_APP = '''\
"""hgwebdir behind HTTP Basic authentication (tests/lib/frontends.py)."""
import base64

from mercurial.hgweb import hgwebdir

USERS = {USERS!r}
hgweb = hgwebdir({CONFIG!r})


def application(environ, start_response):
    header = environ.get('HTTP_AUTHORIZATION', '')
    if header.startswith('Basic '):
        given = base64.b64decode(header[6:]).decode('utf-8', 'replace')
        user, _, password = given.partition(':')
        if USERS.get(user) == password:
            environ['REMOTE_USER'] = user
            return hgweb(environ, start_response)
    start_response('401 Unauthorized', [
        ('WWW-Authenticate', 'Basic realm="cinnabar tests"'),
        ('Content-Type', 'text/plain')])
    return [b'authorization required\\n']
'''


class HgwebGunicorn(Daemon):
    """hgwebdir serving `repos` ({name: path}) at https://127.0.0.1:PORT/
    <name>, to `users` ({user: password}), pushes allowed to all of them."""

    LISTENING = re.compile(r'Listening at: https://127\.0\.0\.1:(\d+)')

    def __init__(self, workdir, repos, users, certificate, key):
        super().__init__(workdir)
        self.repos, self.users = repos, users
        self.certificate, self.key = certificate, key
        self.port = None

    def start(self, env):
        config = self.workdir / 'hgweb.config'
        paths = ''.join(f'{name} = {path}\n'
                        for name, path in self.repos.items())
        config.write_text(f'[paths]\n{paths}[web]\n'
                          f'allow-push = {", ".join(self.users)}\n')
        (self.workdir / 'hgweb_app.py').write_text(WSGI_APP.format(
            USERS=self.users, CONFIG=str(config).encode()))
        return self._spawn(
            [GUNICORN, '--chdir', self.workdir, '--bind', '127.0.0.1:0',
             '--workers', '1', '--certfile', self.certificate,
             '--keyfile', self.key, '--error-logfile', '-',
             '--access-logfile', self.workdir / 'access.log',
             'hgweb_app:application'], env=env)

    def ready(self):
        found = self.LISTENING.search(self.log())
        if found:
            self.port = int(found.group(1))
        return bool(found)

    def url(self, name):
        return f'https://127.0.0.1:{self.port}/{name}'


SSHD_CONFIG = '''\
ListenAddress 127.0.0.1
Port {port}
HostKey {host_key}
PidFile {workdir}/sshd.pid
AuthorizedKeysFile {workdir}/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
LogLevel VERBOSE
'''


class Sshd(Daemon):
    """OpenSSH's sshd letting `client_key` (its .pub) in as the user
    running the tests, with the forced command `hg-ssh <repos>...`."""

    def __init__(self, workdir, repos):
        super().__init__(workdir)
        self.repos = repos
        self.host_key = self.workdir / 'host_key'
        self.client_key = self.workdir / 'client_key'
        self.port = None

    def start(self):
        for key in (self.host_key, self.client_key):
            run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', key])
        forced = ' '.join([HG_SSH, *map(str, self.repos)])
        public = Path(f'{self.client_key}.pub').read_text().strip()
        (self.workdir / 'authorized_keys').write_text(
            f'command="{forced}",no-port-forwarding,no-X11-forwarding,'
            f'no-agent-forwarding,no-pty {public}\n')
        # sshd wants its privilege separation directory.
        Path('/run/sshd').mkdir(mode=0o755, exist_ok=True)
        config = self.workdir / 'sshd_config'

        def args(port):
            config.write_text(SSHD_CONFIG.format(
                port=port, host_key=self.host_key, workdir=self.workdir))
            return [SSHD, '-D', '-e', '-f', config]
        return self._spawn_on_a_free_port(args)

    def ready(self):
        return 'Server listening on 127.0.0.1' in self.log()

    def client_config(self, path, user):
        """Write an ssh_config for this server at `path`: the test key,
        the server's host key known, nothing from the user's files."""
        known = self.workdir / 'known_hosts'
        host_key = Path(f'{self.host_key}.pub').read_text().split()
        known.write_text(f'[127.0.0.1]:{self.port} {host_key[0]} '
                         f'{host_key[1]}\n')
        Path(path).write_text(textwrap.dedent(f'''\
            Host 127.0.0.1
              User {user}
              IdentityFile {self.client_key}
              IdentitiesOnly yes
              UserKnownHostsFile {known}
              StrictHostKeyChecking yes
              BatchMode yes
            '''))


class Tinyproxy(Daemon):
    """tinyproxy on 127.0.0.1, logging each request it forwards."""

    def start(self):
        config = self.workdir / 'tinyproxy.conf'

        def args(port):
            config.write_text(
                f'Port {port}\nListen 127.0.0.1\nAllow 127.0.0.1\n'
                f'Timeout 60\nLogLevel Info\nMaxClients 10\n'
                f'LogFile "{self.workdir}/tinyproxy.log"\n')
            return [TINYPROXY, '-d', '-c', config]
        return self._spawn_on_a_free_port(args)

    def ready(self):
        return 'listening on' in self.log().lower() or \
            'listening on' in self.requests().lower()

    def requests(self):
        try:
            return (self.workdir / 'tinyproxy.log').read_text(
                errors='replace')
        except OSError:
            return ''
