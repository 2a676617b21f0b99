"""`tools/sign-release merge`: release trees built apart (this machine's
and a cross-built linux-aarch64 one, as `make dist-all` makes them) become
one tree whose manifest, signed again, lists both helpers; `git cinnabar
download` served that tree over https on 127.0.0.1 installs this
machine's helper and saves the linux-aarch64 one for --platform. Trees
that are not of one release (another date), that name one platform with
two checksums, or whose helper is not the file its line says are refused,
leaving the target tree as it was."""

import pytest

from lib import env as test_env
from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import git
from lib.proc import run
from lib.releases import publish_helper, sha256, write_manifest

HELPER = test_env.ROOT / 'git-cinnabar-helper'
SIGN_RELEASE = test_env.ROOT / 'tools' / 'sign-release'
PLATFORM = 'linux-x86_64'
OTHER = 'linux-aarch64'
OTHER_HELPER = b'\x7fELF a linux-aarch64 helper'

pytestmark = pytest.mark.usefixtures('trusted_release')


def release_tree(path, key, helpers, **manifest):
    """A release tree at `path` as `make dist` writes it: {platform:
    bytes} helpers with their .sha256, a manifest signed with `key`."""
    entries = {}
    for platform, data in helpers.items():
        entries[platform] = publish_helper(path, platform, data)
        (path / platform / 'git-cinnabar-helper.sha256').write_text(
            f'{sha256(data)}  git-cinnabar-helper\n')
    write_manifest(path, key, version='0.1.0', helpers=entries, **manifest)
    return path


def merge(key, tmp_path, *trees):
    key_file = key.write_seed(tmp_path / 'release.key')
    return run(['python3', SIGN_RELEASE, 'merge', key_file, *trees],
               check=False)


def tree_state(path):
    return {str(p.relative_to(path)): p.read_bytes()
            for p in sorted(path.rglob('*')) if p.is_file()}


def test_merged_tree_serves_both_helpers(tmp_path, release_key,
                                         https_server):
    this = release_tree(tmp_path / 'dist', release_key,
                        {PLATFORM: HELPER.read_bytes()})
    other = release_tree(tmp_path / 'aarch64', release_key,
                         {OTHER: OTHER_HELPER})
    result = merge(release_key, tmp_path, this, other)
    assert result.returncode == 0, result.describe()
    assert f'merged the {OTHER} helper' in result.out
    lines = (this / 'release').read_text().splitlines()
    assert [line.split()[1] for line in lines
            if line.startswith('helper ')] == [OTHER, PLATFORM]
    assert (this / OTHER / 'git-cinnabar-helper.sha256').exists()

    server = https_server(this)
    installed = tmp_path / 'bin' / 'git-cinnabar-helper'
    installed.parent.mkdir()
    args = ('cinnabar', 'download', '--url', server.url(), '--output')
    assert_no_traceback(git(*args, installed, cwd=tmp_path))
    assert installed.read_bytes() == HELPER.read_bytes()
    saved = tmp_path / 'aarch64-helper'
    assert_no_traceback(git(*args, saved, '--platform', OTHER, cwd=tmp_path))
    assert saved.read_bytes() == OTHER_HELPER


@pytest.mark.parametrize('case', ['date', 'checksum', 'file'])
def test_merge_refuses(case, tmp_path, release_key):
    this = release_tree(tmp_path / 'dist', release_key,
                        {PLATFORM: HELPER.read_bytes()})
    other_helpers, manifest = {OTHER: OTHER_HELPER}, {}
    if case == 'date':
        manifest['date'] = '2026-02-01T00:00:00Z'
        message = 'differ beyond their helpers'
    elif case == 'checksum':
        other_helpers[PLATFORM] = b'another build'
        message = f'have two {PLATFORM} helpers'
    else:
        message = 'SHA-256 differs from its manifest line'
    other = release_tree(tmp_path / 'other', release_key, other_helpers,
                         **manifest)
    if case == 'file':
        (other / OTHER / 'git-cinnabar-helper').write_bytes(b'tampered')
    before = tree_state(this)
    result = merge(release_key, tmp_path, this, other)
    assert_failed_for_people(result, f'error: {other}' if case == 'file'
                             else f'error: {other} and {this}')
    assert message in result.err
    assert tree_state(this) == before
