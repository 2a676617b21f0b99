"""Download a prebuilt git-cinnabar-helper for this machine.

usage: git cinnabar download [--url <base URL>] [--platform <name>]
                             [--output <path>]

Fetches the SHA-256 checksum of `<base URL>/<platform>/git-cinnabar-helper`
(`git-cinnabar-helper.sha256` next to it, as `sha256sum` prints it) and
checks its signature (`git-cinnabar-helper.sha256.sig`, made with the
release key: see cinnabar/release.py), then fetches the helper, checks
the checksum, and only then runs the downloaded helper's `version`
handshake, and installs it only when it speaks this git-cinnabar's
protocol, is its version and, when the helper sources are here, was
built from them. It replaces the helper next to the `git-cinnabar`
launcher (or the file given with --output) atomically; when anything
does not match, nothing is installed.

    --url <base URL>    where the downloads are: https, file:// or a
                        local path (default: the setting
                        cinnabar.download-url)
    --platform <name>   another platform than this one (e.g.
                        linux-x86_64); the handshake is then not run
                        and the file is only saved to --output
    --output <path>     where to install the helper
"""

import os
import sys

from cinnabar import VERSION, release
from cinnabar.errors import Abort
from cinnabar.helper_version import problems
from cinnabar.redact import redact_url

USAGE = ('usage: git cinnabar download [--url <base URL>] '
         '[--platform <name>] [--output <path>]')
OPTIONS = ('--url', '--platform', '--output')


def parse_args(args):
    """{option: value} for --url, --platform and --output."""
    options = {}
    arguments = iter(args)
    for arg in arguments:
        name, equal, value = arg.partition('=')
        if name not in OPTIONS:
            raise Abort('unknown argument %s' % arg, hint=USAGE)
        if not equal:
            value = next(arguments, None)
            if value is None:
                raise Abort('%s needs a value' % name, hint=USAGE)
        options[name[2:]] = value
    return options


def download_helper(base, platform):
    """The checked bytes of the helper for `platform`."""
    url, sum_url = release.helper_urls(base, platform)
    sys.stderr.write('Downloading %s\n' % redact_url(url))
    expected = release.parse_sha256(release.fetch_signed(sum_url),
                                    redact_url(sum_url))
    data = release.fetch(url)
    release.check_sha256(data, expected, redact_url(url))
    return data


def run(args):
    options = parse_args(args)
    base = release.base_url(options.get('url'))
    platform = options.get('platform') or release.platform_name()
    foreign = platform != release.platform_name()
    if foreign and not options.get('output'):
        raise Abort('a helper for %s needs --output' % platform, hint=USAGE)
    data = download_helper(base, platform)
    target = options.get('output') or release.default_target()
    if foreign:
        temporary = release.write_beside(data, target)
        os.replace(temporary, target)
        print('saved the %s helper (checksum verified) to %s'
              % (platform, target))
        return 0
    found = release.install_helper(data, target,
                                   lambda found: problems(found, VERSION))
    print('installed git-cinnabar-helper %s (protocol %d, build %s) as %s'
          % (found.version, found.protocol, found.build_id, target))
    return 0
