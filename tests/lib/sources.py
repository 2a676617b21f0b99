"""Where a test clones from: one corpus repository over one transport.

- `http`: `hg serve` on 127.0.0.1;
- `ssh`: `hg::ssh://localhost//abs/path`, run by tests/bin/ssh-wrapper
  (GIT_SSH_COMMAND) as `hg -R /abs/path serve --stdio` on this machine;
- `local`: the repository's path;
- `bundle`: the bundle file the repository was made from.
"""

from .git import hg_url

TRANSPORTS = ('http', 'ssh', 'local', 'bundle')


class Source:
    """Where a clone comes from: its git URL, and a check it was used."""

    def __init__(self, transport, url, used):
        self.transport = transport
        self.url = url
        self._used = used

    def assert_used(self):
        assert self._used(), f'the {self.transport} transport was not used'


def ssh_log_has(log, *words):
    """Whether the ssh wrapper ran `hg ... serve --stdio` with `words` in
    its log line (see tests/bin/ssh-wrapper)."""
    if not log.exists():
        return False
    return any('serve --stdio' in line and all(w in line for w in words)
               for line in log.read_text().splitlines())


def make_source(transport, repo, bundle, serve, logdir, setenv):
    """A Source for `transport` serving the hg repository `repo`.

    `bundle` is the bundle file `repo` was made from, for the `bundle`
    transport.  `serve` starts `hg serve`; `logdir` receives the ssh log,
    whose path is given to the ssh wrapper with `setenv`.
    """
    if transport == 'http':
        server = serve(repo)
        access = server.logdir / 'access.log'
        return Source(transport, hg_url(server.url),
                      lambda: 'cmd=' in access.read_text())
    if transport == 'ssh':
        log = logdir / 'ssh.log'
        setenv('CINNABAR_TEST_SSH_LOG', str(log))
        return Source(transport, hg_url(f'ssh://localhost/{repo}'),
                      lambda: ssh_log_has(log, str(repo)))
    if transport == 'local':
        return Source(transport, hg_url(str(repo)), lambda: True)
    if transport == 'bundle':
        return Source(transport, hg_url(str(bundle)), lambda: True)
    raise ValueError(f'unknown transport {transport}')
