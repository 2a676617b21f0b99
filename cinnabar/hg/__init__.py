"""The Mercurial side: URLs, the wire protocol and its transports.

`connect(url, helper)` opens the repository an `hg::` URL names and
returns a peer: a `wire.Peer` for servers (over HTTP, ssh or a local `hg
serve --stdio`), or a `bundlefile.BundleFilePeer` for bundle files. Both
offer `capabilities`, `capable()`, `state()`, `known()`, `getbundle()` and
`close()`.
"""

import os

from cinnabar.errors import Abort
from cinnabar.hg.url import git_repository_error, parse_url

# Each transport is imported when a URL needs it: a fetch over HTTP loads
# neither ssh's nor the local one (nor what reads bundle files). The wire
# protocol too: importing cinnabar.hg.url, which git-remote-hg does before
# it starts the helper, must not load it (cinnabar.remote_main).


def _connect_file(url, helper):
    from cinnabar.hg import localtransport
    from cinnabar.hg.bundlefile import BundleFilePeer
    from cinnabar.hg.wire import Peer
    if os.path.isfile(url.path):
        if helper is None:
            raise Abort('reading a bundle file needs a git repository')
        return BundleFilePeer(url.path, helper, url.display)
    if not os.path.isdir(url.path):
        raise Abort('no Mercurial repository at %s' % url.path)
    if _is_git_repository(url.path):
        raise git_repository_error(url.display)
    return Peer(localtransport.connect(url))


# How a bundle file starts: bundle1, bundle2, a packed1 stream bundle.
BUNDLE_MAGIC = (b'HG10', b'HG20', b'HGS1')


def _is_git_repository(path):
    """Whether the directory at `path` is a git repository (a work tree's
    top or a bare repository) and not a Mercurial one."""
    if os.path.isdir(os.path.join(path, '.hg')):
        return False
    if os.path.exists(os.path.join(path, '.git')):
        return True
    return all(os.path.exists(os.path.join(path, name))
               for name in ('HEAD', 'objects', 'refs'))


def _connect_ssh(url, helper):
    from cinnabar.hg import sshtransport
    from cinnabar.hg.wire import Peer
    return Peer(sshtransport.connect(url))


def connector(scheme):
    """The function opening a peer for a parsed URL of `scheme`, called
    with (url, helper). The transport's modules are imported here: a
    caller about to wait for the helper gets it first, and they load
    meanwhile (HTTP's: the wire protocol, bundle2)."""
    if scheme in ('http', 'https'):
        from cinnabar.hg import httptransport
        return httptransport.connect
    if scheme == 'ssh':
        return _connect_ssh
    return _connect_file


def connect(text, helper):
    """A peer for the repository at URL `text` (with or without `hg::`).

    `helper` is a running Helper: HTTP requests and bundle files go
    through it."""
    url = parse_url(text)
    return connector(url.scheme)(url, helper)
