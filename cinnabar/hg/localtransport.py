"""Local Mercurial repositories: `hg -R <path> serve --stdio`.

The hg executable is the HG environment variable, else `hg` on the PATH.
The server runs with HGPLAIN=1, so that the user's aliases and defaults
do not change what it does.
"""

import os

from cinnabar.hg.stdio import StdioTransport


def local_argv(path, environ):
    return [environ.get('HG') or 'hg', '-R', path, 'serve', '--stdio']


def connect(url):
    """A StdioTransport to the local repository at a file HgUrl."""
    env = dict(os.environ, HGPLAIN='1')
    return StdioTransport(local_argv(url.path, env), url.display, env=env,
                          missing_hint='install Mercurial, or set HG to '
                                       'the path of hg')
