"""The `hg::tags:` pseudo-remote: the Mercurial tags of every head the
metadata knows, as git tags (git-cinnabar's way of exposing tags).

    git fetch --tags hg::tags: tag '*'      (what `git cinnabar fetch
                                             --tags` runs)

Tags do not belong to one Mercurial remote: they come from the `.hgtags`
of all the heads fetched from all remotes (see `cinnabar.tags`). The
remotes of hg:: URLs list them only when git does not ask to follow tags
(`git fetch --tags`, ls-remote; a plain `git fetch` or `git clone` does
not create tags), and this remote lists nothing else:

`list`
    `<git id> refs/tags/<name>` for each tag (warnings on standard error
    for those left out), then an empty line.
`import refs/tags/<name>`...
    Nothing is fetched; the fast-import stream sets
    `refs/cinnabar/refs/tags/<name>` to the listed commit.
`push`
    Refused: every ref gets `error ... pushing git tags is not supported; ...`
    (tags.PUSH_REFUSAL).
"""

import sys

from cinnabar import git
from cinnabar.errors import Abort
from cinnabar.refs import FETCH_REFS
from cinnabar.remote import PRIVATE_PREFIX, RemoteHelper
from cinnabar.tags import PUSH_REFUSAL, git_tags

TAGS_URL = 'tags:'
TAGS_CAPABILITIES = (
    'option',
    'import',
    'push',
    'refspec refs/tags/*:refs/cinnabar/refs/tags/*',
)


class TagsRemoteHelper(RemoteHelper):
    """A remote-helper session for `hg::tags:`."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._tags = None

    def capabilities(self, argument):
        self._write(*TAGS_CAPABILITIES, '')

    def _git_tags(self):
        if self._tags is None:
            if self._git_dir is None:
                raise Abort('hg::tags: needs a git repository')
            found = git_tags(self.helper())
            for warning in found.warnings:
                sys.stderr.write('warning: %s\n' % warning)
            self._tags = found.tags
        return self._tags

    def list(self, argument):
        if argument not in ('', 'for-push'):
            raise Abort('unknown list argument from git: %r' % argument)
        tags = self._git_tags()
        self._write(*['%s refs/tags/%s' % (git_id, name)
                      for name, git_id in sorted(tags.items())], '')

    def import_(self, argument):
        names = [argument] + self._read_batch('import')
        tags = self._git_tags()
        lines = []
        for name in names:
            tag = name[len('refs/tags/'):]
            if not name.startswith('refs/tags/') or tag not in tags:
                raise Abort("couldn't find remote ref %s" % name)
            lines += ['reset %s%s' % (PRIVATE_PREFIX, name),
                      'from %s' % tags[tag], '']
        git.delete_refs(FETCH_REFS)
        self._write('feature done', *lines, 'done')

    def push(self, argument):
        specs = [argument] + self._read_batch('push')
        dsts = [spec.rpartition(':')[2] for spec in specs]
        self._write(*['error %s %s' % (dst, PUSH_REFUSAL) for dst in dsts],
                    '')

    def _read_batch(self, command):
        """The arguments of the rest of a batch of `command` lines."""
        arguments = []
        while True:
            line = self._read_line()
            if not line:
                return arguments
            name, _, rest = line.partition(' ')
            if name == 'option':
                self._set_option(rest)
                continue
            if name != command:
                raise Abort('unexpected %r in a batch of %ss'
                            % (line, command))
            arguments.append(rest)
