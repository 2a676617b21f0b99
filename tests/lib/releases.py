"""Release trees written by hand, in the layout of cinnabar/release.py,
for the tests of `git cinnabar download` and `self-update` (the trees
`make dist` writes are tested in release/test_dist.py)."""

import hashlib

from cinnabar.helper import PROTOCOL

DATE = '2026-01-01T00:00:00Z'


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def write_manifest(directory, key, version, helpers, python=None,
                   protocol=PROTOCOL, channel='release', date=DATE, keys=None):
    """Write `<directory>/release` and, when `key` (a lib.signing
    ReleaseKey) is given, its signature. `helpers`: {platform: (sha,
    path)}; `python`: (sha, path) of the tree archive; `keys`: the hex
    keys the release trusts (default: `key`'s)."""
    if keys is None:
        keys = [key.public] if key else []
    lines = ['# git-cinnabar release manifest', f'channel {channel}',
             f'version {version}', f'date {date}', f'protocol {protocol}']
    lines += [f'key {k}' for k in keys]
    python = python or ('0' * 64, f'git-cinnabar-{version}.tar.gz')
    lines.append('python %s %s' % python)
    lines += ['helper %s %s %s' % (platform, sha, path)
              for platform, (sha, path) in sorted(helpers.items())]
    path = directory / 'release'
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text('\n'.join(lines) + '\n')
    if key:
        key.sign(path)
    return path


def publish_helper(directory, platform, data):
    """Put `data` as the helper of `platform` under `directory`; returns
    its manifest entry (sha, path)."""
    helper = directory / platform / 'git-cinnabar-helper'
    helper.parent.mkdir(parents=True, exist_ok=True)
    helper.write_bytes(data)
    return sha256(data), f'{platform}/git-cinnabar-helper'
