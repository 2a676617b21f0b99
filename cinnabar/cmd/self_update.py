"""Update this git-cinnabar installation to the latest release.

usage: git cinnabar self-update [--url <base URL>] [--check]
                                [--branch <name> | --exact <version>]

Reads the release manifest `<base URL>/release` and checks its signature
(`release.sig`, made with a release key this installation trusts) and
its channel; the manifest names the latest version, its date, its helper
protocol, the keys it trusts, and the SHA-256 and path of its Python
tree archive and of its helper for each platform. A manifest of an older
version than this one is refused (it may be replayed to keep you on a
vulnerable release) unless --exact asks for it. When that version is
newer than this one, downloads the Python tree and this platform's
helper, checks both checksums, checks that the archive holds that
version speaking that protocol and trusting the manifest's keys, and
that the helper's `version` handshake says the same, then replaces
`git-cinnabar`, `git-remote-hg`, `cinnabar/` and `git-cinnabar-helper`
in the directory of the running launcher. Nothing is replaced when any
check fails. A source checkout (a directory with `.git`) is not updated:
use git there.

    --url <base URL>   where the releases are: https, file:// or a local
                       path (default: the setting cinnabar.download-url,
                       else the URL chosen at build time)
    --check            only say whether there is a newer release
    --branch <name>    follow the releases of that branch (git-cinnabar's
                       option): the manifest `<base URL>/branches/<name>/
                       release`, of the channel <name>, its paths
                       relative to that directory
    --exact <version>  install that version, older or newer: the manifest
                       `<base URL>/versions/<version>/release`, which must
                       name that version
"""

import compileall
import os
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.parse

from cinnabar import VERSION, release
from cinnabar.cmd.options import unexpected, usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import HELPER_NAME

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = ('--url=', '--check', '--branch=', '--exact=')
# Where the manifest of a --branch or an --exact version is.
SUBDIRS = {'branch': 'branches/%s/', 'exact': 'versions/%s/'}
TREE = ('cinnabar', 'git-cinnabar', 'git-remote-hg')
_VERSION_LINE = re.compile(r"^VERSION = '([^']+)'$", re.M)
_PROTOCOL_LINE = re.compile(r'^PROTOCOL = (\d+)$', re.M)
_KEYS_LINE = re.compile(r'^RELEASE_KEYS = \(([^)]*)\)$', re.M)


def parse_args(args):
    """(url, check, {'branch' or 'exact': value})."""
    values, check = {}, False
    arguments = iter(args)
    for arg in arguments:
        name, equals, value = arg.partition('=')
        if arg == '--check':
            check = True
        elif name in ('--url', '--branch', '--exact'):
            if not equals:
                value = next(arguments, None)
            if not value or '/' in value and name != '--url':
                raise UsageError('%s needs a value' % name, hint=USAGE)
            values[name[2:]] = value
        else:
            raise unexpected(arg, OPTIONS, USAGE)
    if 'branch' in values and 'exact' in values:
        raise UsageError('--branch and --exact do not go together', hint=USAGE)
    url = values.pop('url', None)
    return url, check, values


def extract_tree(data, directory, manifest):
    """Extract the Python tree archive into `directory` and check it."""
    fd, archive = tempfile.mkstemp(dir=directory, suffix='.tar.gz')
    with os.fdopen(fd, 'wb') as f:
        f.write(data)
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            for member in members:
                name = os.path.normpath(member.name)
                if (name.startswith(('/', '..')) or not (
                        member.isfile() or member.isdir())
                        or name.split(os.sep)[0] not in TREE):
                    raise Abort('the Python tree archive holds an '
                                'unexpected entry %r' % member.name)
            # The members were checked above; Python 3.12+ also wants a
            # filter named.
            safe = {'filter': 'data'} if hasattr(tarfile, 'data_filter') \
                else {}
            tar.extractall(directory, members, **safe)
    except tarfile.TarError as error:
        raise Abort('the Python tree archive cannot be read: %s' % error)
    os.unlink(archive)
    check_tree(directory, manifest)


def compile_tree(directory, install):
    """Byte-compile the new tree as it will be named once in `install`:
    an installation is seldom writable by its users, whose every command
    would otherwise compile the package again. Not fatal: Python compiles
    what it lacks."""
    compileall.compile_dir(os.path.join(directory, 'cinnabar'), quiet=2,
                           ddir=os.path.join(install, 'cinnabar'))


def check_tree(directory, manifest):
    try:
        with open(os.path.join(directory, 'cinnabar', '__init__.py')) as f:
            version = _VERSION_LINE.search(f.read())
        with open(os.path.join(directory, 'cinnabar', 'helper.py')) as f:
            protocol = _PROTOCOL_LINE.search(f.read())
    except OSError as error:
        raise Abort('the Python tree archive lacks %s' % error.filename)
    keys = _tree_keys(directory)
    missing = [n for n in TREE if not os.path.exists(
        os.path.join(directory, n))]
    if missing or not version or not protocol:
        raise Abort('the Python tree archive is not a git-cinnabar tree')
    if version.group(1) != manifest['version'] or (
            protocol.group(1) != manifest['protocol']):
        raise Abort('the Python tree archive is version %s (protocol %s), '
                    'the manifest says %s (protocol %s)'
                    % (version.group(1), protocol.group(1),
                       manifest['version'], manifest['protocol']),
                    hint='nothing was installed')
    if keys != sorted(manifest['keys']):
        raise Abort('the Python tree archive trusts other release keys than '
                    'the manifest lists', hint=release.TAMPERED_HINT)


def _tree_keys(directory):
    """The sorted RELEASE_KEYS of the tree's cinnabar/build_info.py."""
    try:
        with open(os.path.join(directory, 'cinnabar', 'build_info.py')) as f:
            found = _KEYS_LINE.search(f.read())
    except OSError:
        found = None
    if not found:
        raise Abort('the Python tree archive names no release key',
                    hint=release.TAMPERED_HINT)
    return sorted(re.findall(r"'([0-9a-f]{64})'", found.group(1)))


def helper_check(manifest):
    def check(found):
        wrong = []
        if str(found.protocol) != manifest['protocol']:
            wrong.append('it speaks protocol %d, the release %s needs %s'
                         % (found.protocol, manifest['version'],
                            manifest['protocol']))
        if found.version != manifest['version']:
            wrong.append('it is version %s, the release is %s'
                         % (found.version, manifest['version']))
        return wrong
    return check


def swap_in(install, new, old):
    """Move the entries of TREE and the helper from `new` into `install`,
    the current ones to `old`; put them back if a move fails."""
    moved = []
    try:
        for name in TREE + (HELPER_NAME,):
            current = os.path.join(install, name)
            if os.path.lexists(current):
                os.rename(current, os.path.join(old, name))
            moved.append(name)
            os.rename(os.path.join(new, name), current)
    except OSError as error:
        for name in reversed(moved):
            current = os.path.join(install, name)
            if os.path.lexists(os.path.join(old, name)):
                if os.path.isdir(current) and not os.path.islink(current):
                    shutil.rmtree(current)
                elif os.path.lexists(current):
                    os.unlink(current)
                os.rename(os.path.join(old, name), current)
        raise Abort('cannot replace the installation in %s: %s'
                    % (install, error), hint='nothing was changed')


def installation():
    install = os.path.dirname(os.path.realpath(sys.argv[0]))
    if os.path.exists(os.path.join(install, '.git')):
        raise Abort('%s is a source checkout' % install,
                    hint='update it with git (`git pull`) and `make`')
    if not os.access(install, os.W_OK):
        raise Abort('cannot write to %s' % install)
    return install


def check_version(manifest, exact):
    """Whether the manifest's release is to be installed: False when it
    is this one; Abort when it is older, unless it is the --exact one."""
    latest = manifest['version']
    if exact is not None:
        if latest != exact:
            raise Abort('%s is for version %s, not %s'
                        % (manifest['url'], latest, exact),
                        hint=release.TAMPERED_HINT)
        return latest != VERSION
    release.check_not_stale(manifest, VERSION)
    older = release.version_tuple(latest) < release.version_tuple(VERSION)
    if older:
        raise Abort('%s is of version %s, older than this git-cinnabar %s: '
                    'refusing to go back' % (manifest['url'], latest, VERSION),
                    hint='it may be stale or replayed; to install an older '
                         'version on purpose, use --exact %s' % latest)
    return latest != VERSION


def run(args):
    url, check_only, which = parse_args(args)
    base = release.base_url(url)
    for kind, value in which.items():
        base = urllib.parse.urljoin(base, SUBDIRS[kind] % value)
    channel = which.get('branch', release.DEFAULT_CHANNEL)
    manifest = release.read_manifest(base, channel)
    latest = manifest['version']
    if not check_version(manifest, which.get('exact')):
        print('git-cinnabar %s is up to date (latest release: %s)'
              % (VERSION, latest))
        return 0
    if check_only:
        print('git-cinnabar %s is available (this is %s)' % (latest, VERSION))
        return 0
    platform = release.platform_name()
    if platform not in manifest['helpers']:
        raise Abort('release %s has no helper for %s' % (latest, platform))
    install = installation()
    work = tempfile.mkdtemp(dir=install, prefix='.self-update-')
    new, old = os.path.join(work, 'new'), os.path.join(work, 'old')
    os.makedirs(new)
    os.makedirs(old)
    try:
        tree = release.fetch_checked(base, manifest['python'],
                                     'the Python tree')
        helper = release.fetch_checked(base, manifest['helpers'][platform],
                                       'the helper')
        extract_tree(tree, new, manifest)
        compile_tree(new, install)
        release.install_helper(helper, os.path.join(new, HELPER_NAME),
                               helper_check(manifest))
        swap_in(install, new, old)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print('updated git-cinnabar from %s to %s in %s'
          % (VERSION, latest, install))
    return 0
