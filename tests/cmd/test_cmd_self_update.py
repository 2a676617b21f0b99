"""`git cinnabar self-update` of an installation (a copy of the launchers,
the Python package and the helper in a directory of the test's), from a
release served over https by our file server on 127.0.0.1, its manifest
signed with a release key made for the test (see test_cmd_download)."""

import os
import shutil
import tarfile

import pytest

from cinnabar.helper import PROTOCOL

from lib import env as test_env
from lib.checks import (assert_failed_for_people, assert_no_traceback,
                        file_digests)
from lib.proc import run
from lib.releases import publish_helper, sha256, write_manifest


ROOT = test_env.ROOT
PLATFORM = '%s-%s' % (os.uname().sysname.lower(), os.uname().machine.lower())
NEW = '0.2.0'


def make_install(directory):
    directory.mkdir()
    for name in ('git-cinnabar', 'git-remote-hg', 'git-cinnabar-helper'):
        shutil.copy2(ROOT / name, directory / name)
    shutil.copytree(ROOT / 'cinnabar', directory / 'cinnabar',
                    ignore=shutil.ignore_patterns('__pycache__'))
    return directory


def build_info(keys, date):
    return (f'DOWNLOAD_URL = None\nRELEASE_KEYS = {tuple(keys)!r}\n'
            f"CHANNEL = 'release'\nRELEASE_DATE = {date!r}\n")


def make_release(www, tmp_path, key, version=NEW, protocol=PROTOCOL,
                 helper_answer=None, tree_sha=None, channel='release',
                 date='2026-06-01T00:00:00Z', tree_keys=None):
    """A release of `version` under `www`: the Python tree with that
    VERSION and trusting `key` (or `tree_keys`), a helper script
    answering the handshake, the manifest signed with `key`."""
    www.mkdir(parents=True, exist_ok=True)
    tree = tmp_path / 'release-tree'
    shutil.rmtree(tree, ignore_errors=True)
    make_install(tree)
    init = tree / 'cinnabar' / '__init__.py'
    init.write_text(init.read_text().replace("VERSION = '0.1.0'",
                                             f"VERSION = '{version}'"))
    keys = [key.public] if tree_keys is None else tree_keys
    (tree / 'cinnabar' / 'build_info.py').write_text(build_info(keys, date))
    archive = www / 'git-cinnabar.tar.gz'
    with tarfile.open(archive, 'w:gz') as tar:
        for name in ('git-cinnabar', 'git-remote-hg', 'cinnabar'):
            tar.add(tree / name, arcname=name)
    answer = helper_answer or f'version {protocol} {version} 0123456789abcdef'
    helper = publish_helper(
        www, PLATFORM, f'#!/bin/sh\nread c\necho "{answer}"\n'.encode())
    python = (tree_sha or sha256(archive.read_bytes()), archive.name)
    write_manifest(www, key, version, {PLATFORM: helper}, python=python,
                   protocol=protocol, channel=channel, date=date,
                   keys=[key.public])


# Commands trust the test's certificate and release key (conftest.py).
pytestmark = pytest.mark.usefixtures('trusted_release')


@pytest.fixture
def install(tmp_path):
    return make_install(tmp_path / 'install')


def self_update(install, *args, check=True):
    return run(['python3', install / 'git-cinnabar', 'self-update', *args],
               cwd=install.parent, check=check)


def test_self_update_installs_a_newer_release(install, tmp_path,
                                              https_server, release_key):
    www = tmp_path / 'www'
    www.mkdir()
    make_release(www, tmp_path, release_key)
    server = https_server(www)
    result = self_update(install, '--check', '--url', server.url())
    assert f'git-cinnabar {NEW} is available' in result.out
    result = self_update(install, '--url', server.url())
    assert_no_traceback(result)
    assert f'updated git-cinnabar from 0.1.0 to {NEW}' in result.out
    out = run(['python3', install / 'git-cinnabar', '--version']).out
    assert out.startswith(f'git-cinnabar {NEW} ')
    assert f'helper: {NEW}, protocol {PROTOCOL}' in out
    assert sorted(os.listdir(install)) == [
        'cinnabar', 'git-cinnabar', 'git-cinnabar-helper', 'git-remote-hg']
    # Byte-compiled under the names it is installed as, not the staging
    # directory's (what tracebacks show).
    compiled = list((install / 'cinnabar' / '__pycache__').glob(
        'remote.*.pyc'))
    assert compiled
    assert str(install / 'cinnabar' / 'remote.py').encode() in \
        compiled[0].read_bytes()
    result = self_update(install, '--url', server.url())
    assert f'git-cinnabar {NEW} is up to date' in result.out


@pytest.mark.parametrize('case', ['tree-checksum', 'helper-protocol',
                                  'helper-version', 'tree-version'])
def test_self_update_refuses(case, install, tmp_path, https_server,
                             release_key):
    www = tmp_path / 'www'
    www.mkdir()
    options = {
        'tree-checksum': {'tree_sha': '0' * 64},
        'helper-protocol': {'helper_answer':
                            f'version {PROTOCOL + 1} {NEW} 0123'},
        'helper-version': {'helper_answer': f'version {PROTOCOL} 0.3.0 0123'},
        'tree-version': {},
    }[case]
    make_release(www, tmp_path, release_key, **options)
    if case == 'tree-version':
        text = (www / 'release').read_text()
        (www / 'release').write_text(text.replace(f'version {NEW}',
                                                  'version 0.2.1'))
        release_key.sign(www / 'release')
    before = file_digests(install, ['__pycache__'])
    server = https_server(www)
    result = self_update(install, '--url', server.url(), check=False)
    assert_failed_for_people(result)
    expected = {
        'tree-checksum': 'the checksum of the Python tree does not match',
        'helper-protocol': f'speaks protocol {PROTOCOL + 1}',
        'helper-version': 'it is version 0.3.0',
        'tree-version': 'the Python tree archive is version 0.2.0',
    }[case]
    assert expected in result.err
    assert file_digests(install, ['__pycache__']) == before
    assert sorted(os.listdir(install)) == [
        'cinnabar', 'git-cinnabar', 'git-cinnabar-helper', 'git-remote-hg']


@pytest.mark.parametrize('case', ['other-key', 'edited', 'plain-http'])
def test_self_update_refuses_unsigned(case, install, tmp_path, https_server,
                                      bundle_server, release_key):
    """A manifest not signed with the release key (or not fetched over
    https) is refused before anything else is fetched or run."""
    from lib.signing import ReleaseKey
    www = tmp_path / 'www'
    www.mkdir()
    witness = tmp_path / 'it-ran'
    make_release(www, tmp_path,
                 ReleaseKey() if case == 'other-key' else release_key)
    helper = www / PLATFORM / 'git-cinnabar-helper'
    helper.write_text(helper.read_text().replace(
        'read c', f'touch {witness}; read c'))
    text = (www / 'release').read_text().split('\n')
    text[-2] = 'helper %s %s %s/git-cinnabar-helper' % (
        PLATFORM, sha256(helper.read_bytes()), PLATFORM)
    (www / 'release').write_text('\n'.join(text))
    if case != 'edited':
        (ReleaseKey() if case == 'other-key' else release_key).sign(
            www / 'release')
    server = (bundle_server if case == 'plain-http' else https_server)(www)
    before = file_digests(install, ['__pycache__'])
    result = self_update(install, '--url', server.url(), check=False)
    assert_failed_for_people(result)
    assert ('not https' if case == 'plain-http'
            else 'does not verify with the release key') in result.err
    assert file_digests(install, ['__pycache__']) == before
    assert not witness.exists()
    assert [r['path'] for r in server.requests()] in (
        [], ['/release', '/release.sig'])


def test_self_update_from_a_local_directory(install, tmp_path, release_key):
    www = tmp_path / 'www'
    www.mkdir()
    make_release(www, tmp_path, release_key)
    result = self_update(install, '--url', str(www))
    assert f'updated git-cinnabar from 0.1.0 to {NEW}' in result.out


def test_self_update_leaves_source_checkouts_alone(tmp_path, https_server,
                                                   release_key):
    www = tmp_path / 'www'
    www.mkdir()
    make_release(www, tmp_path, release_key)
    server = https_server(www)
    result = run(['git', 'cinnabar', 'self-update', '--url', server.url()],
                 cwd=tmp_path, check=False)
    assert_failed_for_people(result)
    assert 'is a source checkout' in result.err


def test_self_update_branch_and_exact(install, tmp_path, https_server,
                                      release_key):
    """git-cinnabar's --branch and --exact: the manifest of a branch, and
    an exact version installed even when older."""
    www = tmp_path / 'www'
    (www / 'branches' / 'next').mkdir(parents=True)
    (www / 'versions' / '0.0.9').mkdir(parents=True)
    (tmp_path / 'b').mkdir()
    (tmp_path / 'e').mkdir()
    make_release(www / 'branches' / 'next', tmp_path / 'b', release_key,
                 version='0.3.0', channel='next')
    make_release(www / 'versions' / '0.0.9', tmp_path / 'e', release_key,
                 version='0.0.9')
    server = https_server(www)
    url = server.url()
    result = self_update(install, '--url', url, '--branch', 'next',
                         '--check')
    assert '0.3.0 is available' in result.out, result.describe()
    before = file_digests(install, ['__pycache__'])
    result = self_update(install, '--url', url, '--exact', '0.2.0',
                         check=False)
    assert_failed_for_people(result, 'HTTP error 404 from https://127.0.0.1:')
    assert '/versions/0.2.0/release' in result.err
    assert file_digests(install, ['__pycache__']) == before
    result = self_update(install, f'--url={url}', '--exact=0.0.9')
    assert_no_traceback(result)
    assert "VERSION = '0.0.9'" in (
        install / 'cinnabar' / '__init__.py').read_text()
    assert_failed_for_people(self_update(install, '--branch', 'a',
                                         '--exact', '0.1.0', check=False),
                             '--branch and --exact do not go together')


@pytest.mark.parametrize('case', ['other-channel', 'older', 'stale',
                                  'tree-keys'])
def test_self_update_refuses_replays(case, install, tmp_path, https_server,
                                     release_key):
    """A signed manifest of another channel, of an older version, or of
    this version dated before this installation (replayed), and a tree
    trusting other keys than its manifest lists, change nothing."""
    from lib.signing import ReleaseKey
    www = tmp_path / 'www'
    (install / 'cinnabar' / 'build_info.py').write_text(
        build_info([release_key.public], '2026-03-01T00:00:00Z'))
    options = {
        'other-channel': {'channel': 'nightly'},
        'older': {'version': '0.0.9'},
        'stale': {'version': '0.1.0', 'date': '2026-02-01T00:00:00Z'},
        'tree-keys': {'tree_keys': [ReleaseKey().public]},
    }[case]
    make_release(www, tmp_path, release_key, **options)
    server = https_server(www)
    before = file_digests(install, ['__pycache__'])
    result = self_update(install, '--url', server.url(), check=False)
    assert_failed_for_people(result)
    expected = {
        'other-channel': 'manifest of the nightly channel, not of release',
        'older': 'older than this git-cinnabar 0.1.0: refusing to go back',
        'stale': 'before this installation (2026-03-01T00:00:00Z)',
        'tree-keys': 'trusts other release keys than the manifest lists',
    }[case]
    assert expected in result.err
    assert file_digests(install, ['__pycache__']) == before
    if case == 'older':
        assert '--exact 0.0.9' in result.err


def test_self_update_key_rotation(install, tmp_path, https_server,
                                  release_key, monkeypatch):
    """The installation trusts the keys its release carries (not
    GIT_CINNABAR_RELEASE_KEY here): a release signed with the old key
    hands over to a new key, and the next one, signed with the new key
    only, is then accepted, while one signed with the old key no more."""
    from lib.signing import ReleaseKey
    new_key = ReleaseKey()
    monkeypatch.delenv('GIT_CINNABAR_RELEASE_KEY')
    (install / 'cinnabar' / 'build_info.py').write_text(
        build_info([release_key.public], None))
    www = tmp_path / 'www'
    make_release(www, tmp_path, release_key, version='0.2.0',
                 tree_keys=[new_key.public])
    text = (www / 'release').read_text()
    (www / 'release').write_text(text.replace(
        f'key {release_key.public}', f'key {new_key.public}'))
    release_key.sign(www / 'release')
    server = https_server(www)
    result = self_update(install, '--url', server.url())
    assert 'updated git-cinnabar from 0.1.0 to 0.2.0' in result.out
    # Signed with the old key only: refused now.
    make_release(www, tmp_path, release_key, version='0.3.0')
    result = self_update(install, '--url', server.url(), check=False)
    assert_failed_for_people(result)
    assert 'does not verify with the release key' in result.err
    make_release(www, tmp_path, new_key, version='0.3.0')
    result = self_update(install, '--url', server.url())
    assert 'updated git-cinnabar from 0.2.0 to 0.3.0' in result.out
