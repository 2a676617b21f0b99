"""Download a prebuilt git-cinnabar-helper for this machine.

usage: git cinnabar download [--url <base URL>] [--platform <name>]
                             [--output <path>]

Reads the release manifest `<base URL>/release` (or, when that is of
another version, `<base URL>/versions/<this version>/release`) and
checks its signature with the release keys, its channel (`release`) and
that it is of this git-cinnabar's version and helper protocol, then
fetches the platform's helper it lists, checks its SHA-256, and only
then runs the downloaded helper's `version` handshake, and installs it
only when it speaks this git-cinnabar's protocol, is its version and,
when the helper sources are here, was built from them. It replaces the
helper next to the `git-cinnabar` launcher (or the file given with
--output) atomically; when anything does not match, nothing is
installed. A source checkout that was never built can get its helper
this way.

    --url <base URL>    where the downloads are: https, file:// or a
                        local path (default: the setting
                        cinnabar.download-url, else the URL chosen at
                        build time with `make DOWNLOAD_URL=...`)
    --platform <name>   another platform than this one (e.g.
                        linux-x86_64); the handshake is then not run
                        and the file is only saved to --output
    --output <path>     where to install the helper
"""

import os
import urllib.parse

from cinnabar import VERSION, release
from cinnabar.cmd.options import unexpected, usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import PROTOCOL
from cinnabar.helper_version import problems

USAGE = usage_of(__doc__)
OPTIONS = ('--url=', '--platform=', '--output=')


def parse_args(args):
    """{option: value} for --url, --platform and --output."""
    options = {}
    arguments = iter(args)
    for arg in arguments:
        name, equal, value = arg.partition('=')
        if name + '=' not in OPTIONS:
            raise unexpected(arg, OPTIONS, USAGE)
        if not equal:
            value = next(arguments, None)
            if value is None:
                raise UsageError('%s needs a value' % name, hint=USAGE)
        options[name[2:]] = value
    return options


def this_release(base):
    """(base, manifest) of this version's release: the latest, or the
    one under versions/<VERSION>/."""
    manifest = release.read_manifest(base, release.DEFAULT_CHANNEL)
    if manifest['version'] != VERSION:
        latest = '%s is for version %s, not %s' % (
            manifest['url'], manifest['version'], VERSION)
        base = urllib.parse.urljoin(base, 'versions/%s/' % VERSION)
        try:
            manifest = release.read_manifest(base, release.DEFAULT_CHANNEL)
        except Abort as error:
            raise Abort('%s; %s' % (latest, error.message), hint=error.hint)
        if manifest['version'] != VERSION:
            raise Abort('%s; so is %s' % (latest, manifest['url']),
                        hint=release.TAMPERED_HINT)
    if manifest['protocol'] != str(PROTOCOL):
        raise Abort('%s is for helper protocol %s, this git-cinnabar '
                    'speaks %d' % (manifest['url'], manifest['protocol'],
                                   PROTOCOL), hint=release.TAMPERED_HINT)
    release.check_not_stale(manifest, VERSION)
    return base, manifest


def download_helper(base, platform):
    """The checked bytes of this version's helper for `platform`."""
    base, manifest = this_release(base)
    entry = manifest['helpers'].get(platform)
    if entry is None:
        raise Abort('release %s has no helper for %s (it has: %s)'
                    % (VERSION, platform,
                       ', '.join(sorted(manifest['helpers'])) or 'none'),
                    hint='build one with `make`')
    return release.fetch_checked(base, entry, 'the %s helper' % platform)


def run(args):
    options = parse_args(args)
    base = release.base_url(options.get('url'))
    platform = options.get('platform') or release.platform_name()
    foreign = platform != release.platform_name()
    if foreign and not options.get('output'):
        raise UsageError('a helper for %s needs --output' % platform,
                         hint=USAGE)
    data = download_helper(base, platform)
    target = options.get('output') or release.default_target()
    if foreign:
        temporary = release.write_beside(data, target)
        os.replace(temporary, target)
        print('saved the %s helper %s (signed manifest and checksum '
              'verified) to %s' % (platform, VERSION, target))
        return 0
    found = release.install_helper(data, target,
                                   lambda found: problems(found, VERSION))
    print('installed git-cinnabar-helper %s (protocol %d, build %s) as %s'
          % (found.version, found.protocol, found.build_id, target))
    return 0
