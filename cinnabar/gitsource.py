"""A git repository or git bundle to fetch one ref from (cinnabarclone).

A source is a URL or path that is either a git repository (anything `git
ls-remote` and `git fetch` read: a path, file://, git://, ssh, http(s)
with git's smart or dumb protocol) or a git bundle file, local or on an
http(s) URL (downloaded first, through the helper, see
cinnabar.resumable).

A git bundle (git's Documentation/gitformat-bundle.txt) starts with a
header of text lines:

    # v2 git bundle            (or `# v3 git bundle`)
    @<capability>[=<value>]    (v3 only, e.g. `@object-format=sha1`)
    -<object id>[ <comment>]   (a prerequisite: the receiver must have it)
    <object id> <ref name>     (a ref the bundle carries)
    <empty line>

followed by a packfile. `git fetch` reads bundle files itself (and
checks the prerequisites, the pack and the connectivity of what it got),
so once downloaded, a bundle is fetched from as a repository is.
"""

import os
import urllib.parse

from cinnabar import git
from cinnabar.errors import Abort
from cinnabar.ids import GitId
from cinnabar.resumable import Download

SIGNATURES = (b'# v2 git bundle\n', b'# v3 git bundle\n')
# A bundle header is small; more than this without its end is not one.
MAX_HEADER = 1 << 20


def parse_bundle_header(data):
    """{ref name: GitId} from the start of a bundle file (bytes); raises
    ValueError when it is not a git bundle."""
    signature = next((s for s in SIGNATURES if data.startswith(s)), None)
    if signature is None:
        raise ValueError('not a git bundle')
    end = data.find(b'\n\n', len(signature) - 1)
    if end < 0:
        raise ValueError('the git bundle header is cut or too long')
    refs = {}
    for line in data[len(signature):end].decode('utf-8', 'replace').split(
            '\n'):
        if not line or line.startswith(('-', '@')):
            continue
        oid, _, name = line.partition(' ')
        try:
            refs[name] = GitId(oid)
        except ValueError:
            raise ValueError('malformed git bundle header line %r' % line)
    return refs


def read_bundle_refs(path):
    with open(path, 'rb') as f:
        return parse_bundle_header(f.read(MAX_HEADER))


def _scheme(url):
    return urllib.parse.urlsplit(url).scheme.lower()


def local_path(url):
    """The path of a file:// URL or of a plain path, else None."""
    scheme = _scheme(url)
    if scheme == 'file':
        return urllib.parse.unquote(urllib.parse.urlsplit(url).path)
    if not scheme or len(scheme) == 1:   # a path (or a drive letter)
        return url
    return None


# What git may do with a URL a server gave, as git itself does for the
# URLs of submodules: only these protocols (whatever the user's
# protocol.allow), and none of those allowed only "from the user"
# (GIT_PROTOCOL_FROM_USER=0). The `file` protocol is added for the
# bundle a Source downloaded itself.
SERVER_PROTOCOLS = ('https', 'http', 'git')


def restricted_git(args, protocols, env):
    """The git command line and environment (for git.run) running `args`
    in `env` with only `protocols` allowed."""
    options = ['-c', 'protocol.allow=never']
    for name in protocols:
        options += ['-c', 'protocol.%s.allow=always' % name]
    env = dict(env, GIT_PROTOCOL_FROM_USER='0')
    return options + list(args), env


def run_git(args, protocols=None, env=None):
    """git.run(args) in `env` (default: ours), restricted to `protocols`
    unless None."""
    if protocols is not None:
        args, env = restricted_git(args, protocols,
                                   os.environ if env is None else env)
    return git.run(args, check=False, env=env)


def remote_refs(url, protocols=None):
    """{ref name: GitId} of `git ls-remote <url>`; empty when it is not a
    repository git can read (then, maybe a bundle)."""
    result = run_git(['ls-remote', '--', url], protocols)
    if result.returncode:
        return {}
    refs = {}
    for line in result.stdout.decode('utf-8', 'surrogateescape').split('\n'):
        oid, tab, name = line.partition('\t')
        if tab:
            refs[name] = GitId(oid)
    return refs


class Source:
    """The git repository or bundle at `url`. `open()` finds which, and
    the refs it has; `fetch(ref, into)` brings one ref's objects. With
    `from_server`, git may only use SERVER_PROTOCOLS for it."""

    def __init__(self, url, helper, git_dir, say, from_server=False):
        self.url = url
        self._protocols = SERVER_PROTOCOLS if from_server else None
        self._helper = helper
        self._git_dir = git_dir
        self._say = say
        self._download = None
        self.location = url
        self.refs = {}

    def open(self):
        self.refs = remote_refs(self.url, self._protocols)
        if self.refs:
            return self
        path = local_path(self.url)
        if path is None and _scheme(self.url) in ('http', 'https'):
            self._download = Download(self.url, self._git_dir, self._say)
            path = self._download.fetch(self._helper)
        if path is None or not os.path.isfile(path):
            raise Abort('no git repository or bundle at %s' % self.url)
        try:
            self.refs = read_bundle_refs(path)
        except (OSError, ValueError) as error:
            raise Abort('%s: %s' % (self.url, error))
        self.location = path
        return self

    def fetch(self, ref, env):
        """Fetch the objects of `ref` of the source (and update no ref),
        git running in `env` (see cinnabar.quarantine)."""
        protocols = self._protocols
        if protocols is not None and self._download is not None:
            protocols += ('file',)      # the bundle downloaded here
        # Whatever fetch brings stays a pack; no gc in the quarantine.
        options = ['-c', 'fetch.unpackLimit=1', '-c', 'gc.auto=0',
                   '-c', 'maintenance.auto=false']
        result = run_git(options + [
            'fetch', '--no-tags', '--no-write-fetch-head',
            '--no-recurse-submodules', '-q', '--', self.location, ref],
            protocols, env)
        if result.returncode:
            message = result.stderr.decode('utf-8', 'replace').strip()
            raise Abort('fetching %s from %s failed: %s'
                        % (ref, self.url, ' '.join(message.split())))

    def discard(self):
        """Remove the downloaded bundle, if any."""
        if self._download is not None:
            self._download.discard()
