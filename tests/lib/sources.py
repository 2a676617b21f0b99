"""Where a test clones from: one corpus repository over one transport.

- `http`: `hg serve` on 127.0.0.1;
- `ssh`: `hg::ssh://localhost//abs/path`, run by tests/bin/ssh-wrapper
  (GIT_SSH_COMMAND) as `hg -R /abs/path serve --stdio` on this machine;
- `local`: the repository's path, served by `hg -R <path> serve --stdio`
  run through tests/bin/hg-wrapper (HG);
- `bundle`: a copy of the bundle file the repository was made from.

`Source.assert_used()` checks, from outside git-cinnabar, that the clone
went through that transport: hg serve's access log, the ssh wrapper's or
the hg wrapper's log of `serve --stdio` for that path, and for the bundle
its copy's access time (set to 0 when copied; reading the file updates it,
as the file system mounts with relatime or strictatime).
"""

import os
import shutil

from .env import HG_WRAPPER
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


def hg_log_has(log, repo):
    """Whether the hg wrapper ran `hg -R <repo> serve --stdio`."""
    if not log.exists():
        return False
    return any(line.startswith('-R ') and 'serve --stdio' in line
               and str(repo) in line for line in log.read_text().splitlines())


def unread_copy(bundle, logdir):
    """A copy of `bundle` in `logdir` whose access time says whether it
    was read since; raises when this file system does not keep access
    times (mounted noatime), where that cannot be told."""
    copy = logdir / bundle.name
    shutil.copyfile(bundle, copy)
    probe = logdir / 'atime-probe'
    probe.write_bytes(b'x')
    for path in (probe, copy):
        os.utime(path, (0, path.stat().st_mtime))
    probe.read_bytes()
    if probe.stat().st_atime == 0:
        raise RuntimeError(f'{logdir} does not update access times: cannot '
                           'tell whether a bundle file is read')
    return copy


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
        log = logdir / 'hg.log'
        setenv('HG', str(HG_WRAPPER))
        setenv('CINNABAR_TEST_HG_LOG', str(log))
        return Source(transport, hg_url(str(repo)),
                      lambda: hg_log_has(log, repo))
    if transport == 'bundle':
        copy = unread_copy(bundle, logdir)
        return Source(transport, hg_url(str(copy)),
                      lambda: copy.stat().st_atime > 0)
    raise ValueError(f'unknown transport {transport}')
