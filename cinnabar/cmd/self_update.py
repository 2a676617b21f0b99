"""Update this git-cinnabar installation to the latest release.

usage: git cinnabar self-update [--url <base URL>] [--check]
                                [--branch <name> | --exact <version>]

Reads the release manifest `<base URL>/release` and checks its signature
(`release.sig`, made with the release key); its format is described
in cinnabar/release.py: the latest version, its helper protocol, the
SHA-256 and path of its Python tree archive and of its helper for each
platform). When that version is newer than this one, downloads the
Python tree and this platform's helper, checks both checksums, checks
that the archive holds that version speaking that protocol and that the
helper's `version` handshake says the same, then replaces `git-cinnabar`,
`git-remote-hg`, `cinnabar/` and `git-cinnabar-helper` in the directory
of the running launcher. Nothing is replaced when any check fails. A
source checkout (a directory with `.git`) is not updated: use git there.

    --url <base URL>   where the releases are: https, file:// or a local
                       path (default: the setting cinnabar.download-url)
    --check            only say whether there is a newer release
    --branch <name>    follow the releases of that branch (git-cinnabar's
                       option): the manifest `<base URL>/branches/<name>/
                       release`, its paths relative to that directory
    --exact <version>  install that version, older or newer: the manifest
                       `<base URL>/versions/<version>/release`, which must
                       name that version
"""

import os
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.parse

from cinnabar import VERSION, release
from cinnabar.errors import Abort
from cinnabar.helper import HELPER_NAME
from cinnabar.redact import redact_url

USAGE = ('usage: git cinnabar self-update [--url <base URL>] [--check] '
         '[--branch <name> | --exact <version>]')
# Where the manifest of a --branch or an --exact version is.
SUBDIRS = {'branch': 'branches/%s/', 'exact': 'versions/%s/'}
TREE = ('cinnabar', 'git-cinnabar', 'git-remote-hg')
_VERSION_LINE = re.compile(r"^VERSION = '([^']+)'$", re.M)
_PROTOCOL_LINE = re.compile(r'^PROTOCOL = (\d+)$', re.M)


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
                raise Abort('%s needs a value' % name, hint=USAGE)
            values[name[2:]] = value
        else:
            raise Abort('unknown argument %s' % arg, hint=USAGE)
    if 'branch' in values and 'exact' in values:
        raise Abort('--branch and --exact do not go together', hint=USAGE)
    url = values.pop('url', None)
    return url, check, values


def version_tuple(text):
    parts = text.split('.')
    if not all(p.isdigit() for p in parts):
        raise Abort('invalid version %r in the release manifest' % text)
    return tuple(int(p) for p in parts)


def parse_manifest(data, url):
    """{'version', 'protocol', 'python': (sha, path), 'helpers':
    {platform: (sha, path)}} from a release manifest."""
    manifest = {'helpers': {}}
    for number, line in enumerate(data.decode('utf-8').splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith('#'):
            continue
        shape = {'version': 2, 'protocol': 2, 'python': 3, 'helper': 4}
        if shape.get(words[0]) != len(words):
            raise Abort('%s line %d is not understood: %r'
                        % (url, number, line))
        if words[0] == 'helper':
            manifest['helpers'][words[1]] = (words[2].lower(), words[3])
        elif words[0] == 'python':
            manifest['python'] = (words[1].lower(), words[2])
        else:
            manifest[words[0]] = words[1]
    for key in ('version', 'protocol', 'python'):
        if key not in manifest:
            raise Abort('%s has no %s line' % (url, key))
    if not manifest['protocol'].isdigit():
        raise Abort('%s: invalid protocol %r' % (url, manifest['protocol']))
    version_tuple(manifest['version'])
    return manifest


def fetch_checked(base, entry, what):
    sha, path = entry
    url = urllib.parse.urljoin(base, path)
    sys.stderr.write('Downloading %s\n' % redact_url(url))
    data = release.fetch(url)
    release.check_sha256(data, sha, what)
    return data


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


def check_tree(directory, manifest):
    try:
        with open(os.path.join(directory, 'cinnabar', '__init__.py')) as f:
            version = _VERSION_LINE.search(f.read())
        with open(os.path.join(directory, 'cinnabar', 'helper.py')) as f:
            protocol = _PROTOCOL_LINE.search(f.read())
    except OSError as error:
        raise Abort('the Python tree archive lacks %s' % error.filename)
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


def run(args):
    url, check_only, which = parse_args(args)
    base = release.base_url(url)
    for kind, value in which.items():
        base = urllib.parse.urljoin(base, SUBDIRS[kind] % value)
    manifest_url = urllib.parse.urljoin(base, 'release')
    manifest = parse_manifest(release.fetch_signed(manifest_url),
                              redact_url(manifest_url))
    latest = manifest['version']
    exact = which.get('exact')
    if exact is not None and latest != exact:
        raise Abort('%s is for version %s, not %s'
                    % (manifest_url, latest, exact))
    if exact is not None:
        up_to_date = latest == VERSION
    else:
        up_to_date = version_tuple(latest) <= version_tuple(VERSION)
    if up_to_date:
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
        tree = fetch_checked(base, manifest['python'], 'the Python tree')
        helper = fetch_checked(base, manifest['helpers'][platform],
                               'the helper')
        extract_tree(tree, new, manifest)
        release.install_helper(helper, os.path.join(new, HELPER_NAME),
                               helper_check(manifest))
        swap_in(install, new, old)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print('updated git-cinnabar from %s to %s in %s'
          % (VERSION, latest, install))
    return 0
