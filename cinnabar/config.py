"""git-cinnabar settings, looked up where git-cinnabar looks for them.

A setting `<name>` (e.g. `refs`) is taken, first found wins, from:

1. the environment variable GIT_CINNABAR_<NAME> (upper case, `-` as `_`);
2. the git configuration `remote.<remote>.cinnabar-<name>`, when the
   remote has a name;
3. the git configuration `cinnabar.<name>`.
"""

import os

from cinnabar import git


def env_name(name):
    return 'GIT_CINNABAR_' + name.upper().replace('-', '_')


def lookup(name, remote=None):
    """The value of setting `name` for `remote` (a name or None), or None."""
    value = os.environ.get(env_name(name))
    if value is not None:
        return value
    if remote:
        value = git.config('remote.%s.cinnabar-%s' % (remote, name))
        if value is not None:
            return value
    return git.config('cinnabar.%s' % name)
