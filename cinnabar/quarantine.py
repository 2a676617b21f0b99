"""Git objects received from elsewhere, kept apart until they are checked.

As git keeps what a push brings a server in a directory of its own until
the server's hooks accept it (git's tmp-objdir.c), the objects
cinnabarclone fetches go to `<git dir>/cinnabar/incoming`: the git
commands that write or read them run with that directory as their object
directory and the repository's objects as an alternate (`writer_env`,
`GIT_OBJECT_DIRECTORY` and `GIT_ALTERNATE_OBJECT_DIRECTORIES`), or with
it as one more alternate (`reader_env`, for reading only: the helper that
checks them among others). Nothing else sees them. `accept()` moves them
into the repository's object directory (each pack's index last, so that
no index names a pack not there yet); otherwise leaving the `with` block
removes them, and nothing of them stays. A directory left by an
interrupted run is removed when the next one starts.
"""

import os
import shutil

from cinnabar import git
from cinnabar.errors import Abort

DIRNAME = os.path.join('cinnabar', 'incoming')


def objects_dir():
    """The absolute path of the repository's object directory."""
    out = git.run(['rev-parse', '--git-path', 'objects']).stdout
    return os.path.abspath(os.fsdecode(out.rstrip(b'\n')))


def _with_alternate(env, path):
    """`env` with `path` added to GIT_ALTERNATE_OBJECT_DIRECTORIES."""
    env = dict(env)
    given = env.get('GIT_ALTERNATE_OBJECT_DIRECTORIES')
    env['GIT_ALTERNATE_OBJECT_DIRECTORIES'] = \
        path + (os.pathsep + given if given else '')
    return env


class Quarantine:
    """Use as a context manager, in the repository at `git_dir`."""

    def __init__(self, git_dir):
        self.path = os.path.join(git_dir, DIRNAME)
        self.objects = None

    def __enter__(self):
        self.objects = objects_dir()
        shutil.rmtree(self.path, ignore_errors=True)
        os.makedirs(os.path.join(self.path, 'pack'))
        return self

    def __exit__(self, *exc_info):
        shutil.rmtree(self.path, ignore_errors=True)

    def writer_env(self):
        """The environment of git commands that fetch into it."""
        env = _with_alternate(os.environ, self.objects)
        env['GIT_OBJECT_DIRECTORY'] = self.path
        return env

    def reader_env(self):
        """The environment of commands that read its objects."""
        return _with_alternate(os.environ, self.path)

    def _files(self):
        """Paths (relative) of the files received, indexes last."""
        found = []
        for top, _, names in os.walk(self.path):
            for name in names:
                found.append(os.path.relpath(os.path.join(top, name),
                                             self.path))
        return sorted(found, key=lambda p: (p.endswith('.idx'), p))

    def accept(self):
        """Move the objects into the repository's object directory."""
        try:
            for name in self._files():
                target = os.path.join(self.objects, name)
                if os.path.exists(target):
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.replace(os.path.join(self.path, name), target)
        except OSError as error:
            raise Abort('cannot move the objects received into %s: %s'
                        % (self.objects, error.strerror))
