"""`git cinnabar download` and `git cinnabar --version`: a helper served
over https by our file server on 127.0.0.1 (a certificate of the
test's, trusted through GIT_SSL_CAINFO) is installed only when the
release manifest listing it is signed with the release key (one made for
the test, trusted through GIT_CINNABAR_RELEASE_KEY) and is of this
channel, version and protocol, its checksum matches and its version
handshake is right; the installed one stays otherwise. Plain http is
refused, and nothing is fetched past a bad signature."""

import os
import shutil
from pathlib import Path

import pytest

from cinnabar.helper import PROTOCOL
from cinnabar.helper_version import (build_id_sources, expected_build_id,
                                     probe)
from lib import env as test_env
from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import git
from lib.proc import run
from lib.releases import publish_helper, sha256, write_manifest

# A protocol this git-cinnabar does not speak.
OTHER = PROTOCOL + 1

HELPER = test_env.ROOT / 'git-cinnabar-helper'
PLATFORM = '%s-%s' % (os.uname().sysname.lower(), os.uname().machine.lower())
OLD = b'#!/bin/sh\n# the installed helper\n'


def publish(www, data, key, checksum_of=None, platform=PLATFORM,
            **manifest):
    """Put `data` as the helper of `platform` under `www`, in a manifest
    of version 0.1.0 (unless `manifest` says otherwise) giving the
    checksum of `checksum_of` (default: of `data`), signed with `key`."""
    entry = publish_helper(www, platform, data)
    if checksum_of is not None:
        entry = (sha256(checksum_of), entry[1])
    manifest.setdefault('version', '0.1.0')
    write_manifest(www, key, helpers={platform: entry}, **manifest)


# Commands trust the test's certificate and release key (conftest.py).
pytestmark = pytest.mark.usefixtures('trusted_release')


def script(answer):
    """A shell script answering the version handshake with `answer`."""
    return ('#!/bin/sh\nread command\necho "%s"\n' % answer).encode()


@pytest.fixture
def www(tmp_path):
    path = tmp_path / 'www'
    path.mkdir()
    return path


@pytest.fixture
def target(tmp_path):
    path = tmp_path / 'bin' / 'git-cinnabar-helper'
    path.parent.mkdir()
    path.write_bytes(OLD)
    path.chmod(0o755)
    return path


def download(tmp_path, *args, **kwargs):
    return git('cinnabar', 'download', *args, cwd=tmp_path, **kwargs)


def test_download_installs_the_helper(www, target, tmp_path, https_server,
                                      release_key):
    publish(www, HELPER.read_bytes(), release_key)
    server = https_server(www)
    result = download(tmp_path, '--url', server.url(), '--output', target)
    assert_no_traceback(result)
    assert 'installed git-cinnabar-helper' in result.out
    assert target.read_bytes() == HELPER.read_bytes()
    assert os.access(target, os.X_OK)
    paths = [r['path'] for r in server.requests()]
    assert paths == ['/release', '/release.sig',
                     f'/{PLATFORM}/git-cinnabar-helper']
    out = git('cinnabar', '--version', cwd=tmp_path,
              extra_env={'GIT_CINNABAR_HELPER': str(target)}).out
    assert f'({target})' in out and 'stale' not in out
    # Nothing left behind next to it.
    assert os.listdir(target.parent) == ['git-cinnabar-helper']


# The platforms of a Linux release (make dist-all), one of them this
# machine's.
LINUX_PLATFORMS = ('linux-x86_64', 'linux-aarch64')


def publish_linux_release(www, key):
    """This machine's helper under PLATFORM, a script that is no helper
    under the other Linux platforms, in one signed manifest."""
    helpers = {p: publish_helper(www, p, script(f'not the {p} helper'))
               for p in LINUX_PLATFORMS if p != PLATFORM}
    helpers[PLATFORM] = publish_helper(www, PLATFORM, HELPER.read_bytes())
    write_manifest(www, key, version='0.1.0', helpers=helpers)


@pytest.mark.skipif(PLATFORM not in LINUX_PLATFORMS,
                    reason='not a linux-x86_64 or linux-aarch64 machine')
def test_download_picks_the_helper_uname_names(www, target, tmp_path,
                                               https_server, release_key):
    """From a release with linux-x86_64 and linux-aarch64 helpers, the one
    of this machine's `uname -m` is fetched and installed; under
    `setarch linux32` (uname -m: i686, an x86_64 kernel's 32-bit
    personality) none is, and the refusal names linux-i686."""
    publish_linux_release(www, release_key)
    server = https_server(www)
    result = download(tmp_path, '--url', server.url(), '--output', target)
    assert_no_traceback(result)
    assert target.read_bytes() == HELPER.read_bytes()
    assert [r['path'] for r in server.requests()][-1] == (
        f'/{PLATFORM}/git-cinnabar-helper')
    if PLATFORM != 'linux-x86_64':
        return
    target.write_bytes(OLD)
    result = run(['setarch', 'linux32', 'git', 'cinnabar', 'download',
                  '--url', server.url(), '--output', str(target)],
                 cwd=tmp_path, check=False)
    assert_failed_for_people(
        result, 'release 0.1.0 has no helper for linux-i686 (it has: '
        'linux-aarch64, linux-x86_64)')
    assert target.read_bytes() == OLD


def test_download_url_from_config(www, target, tmp_path, https_server,
                                  release_key):
    publish(www, HELPER.read_bytes(), release_key)
    server = https_server(www)
    result = git('-c', f'cinnabar.download-url={server.url()}', 'cinnabar',
                 'download', '--output', str(target), cwd=tmp_path)
    assert_no_traceback(result)
    assert target.read_bytes() == HELPER.read_bytes()


@pytest.mark.parametrize('case', [
    'checksum', 'protocol', 'version', 'build', 'not-a-helper', 'missing'])
def test_download_refuses(case, www, target, tmp_path, https_server,
                          release_key):
    real = HELPER.read_bytes()
    out = git('cinnabar', '--version', cwd=tmp_path).out
    build = out.split('build ')[1].split()[0]
    if case == 'checksum':
        publish(www, real, release_key, checksum_of=real + b'tampered')
    elif case == 'protocol':
        publish(www, script(f'version {OTHER} 0.1.0 {build}'),
                release_key)
    elif case == 'version':
        publish(www, script(f'version {PROTOCOL} 9.9.9 {build}'),
                release_key)
    elif case == 'build':
        publish(www, script(f'version {PROTOCOL} 0.1.0 0123456789abcdef'),
                release_key)
    elif case == 'not-a-helper':
        publish(www, script('hello'), release_key)
    server = https_server(www)
    result = download(tmp_path, '--url', server.url(), '--output', target,
                      check=False)
    assert_failed_for_people(result)
    expected = {
        'checksum': 'checksum of',
        'protocol': f'speaks protocol {OTHER}, this git-cinnabar needs '
                    f'{PROTOCOL}',
        'version': 'it is version 9.9.9',
        'build': 'built from other sources',
        'not-a-helper': 'not a git-cinnabar-helper',
        'missing': 'HTTP error 404',
    }[case]
    assert expected in result.err
    assert target.read_bytes() == OLD
    assert os.listdir(target.parent) == ['git-cinnabar-helper']


def witness_helper(tmp_path):
    """A helper that leaves a file behind if it ever runs."""
    witness = tmp_path / 'it-ran'
    return (f'#!/bin/sh\ntouch {witness}\nread command\n'
            f'echo "version {PROTOCOL} 0.1.0 0"\n').encode(), witness


@pytest.mark.parametrize('case', [
    'other-key', 'no-signature', 'tampered-manifest', 'other-key-named',
    'other-channel', 'older-version', 'newer-version', 'other-protocol'])
def test_download_refuses_unsigned(case, www, target, tmp_path,
                                   https_server, release_key):
    """Nothing is fetched past the manifest, and nothing runs, unless the
    manifest's signature verifies with the release key and it is of this
    channel, version and protocol (a signed manifest of another channel,
    or an older release, replayed, is refused)."""
    from lib.signing import ReleaseKey
    data, witness = witness_helper(tmp_path)
    manifest = {'other-channel': {'channel': 'nightly'},
                'older-version': {'version': '0.0.9'},
                'newer-version': {'version': '0.2.0'},
                'other-protocol': {'protocol': OTHER}}.get(case, {})
    publish(www, data, ReleaseKey() if case == 'other-key' else release_key,
            **manifest)
    signature = www / 'release.sig'
    if case == 'no-signature':
        signature.unlink()
    elif case == 'tampered-manifest':
        text = (www / 'release').read_text()
        (www / 'release').write_text(text.replace(
            f'protocol {PROTOCOL}', f'protocol {PROTOCOL}\n#'))
    elif case == 'other-key-named':
        # A signature by another key, naming that key: not trusted.
        ReleaseKey().sign(www / 'release')
    server = https_server(www)
    result = download(tmp_path, '--url', server.url(), '--output', target,
                      check=False)
    assert_failed_for_people(result)
    expected = {
        'no-signature': 'HTTP error 404',
        'other-channel': 'manifest of the nightly channel, not of release',
        'older-version': 'is for version 0.0.9, not 0.1.0',
        'newer-version': 'is for version 0.2.0, not 0.1.0',
        'other-protocol': f'is for helper protocol {OTHER}',
    }.get(case, 'does not verify with the release key')
    assert expected in result.err
    assert target.read_bytes() == OLD
    assert os.listdir(target.parent) == ['git-cinnabar-helper']
    assert not witness.exists()
    paths = [r['path'] for r in server.requests()]
    assert f'/{PLATFORM}/git-cinnabar-helper' not in paths


def test_download_falls_back_to_this_version(www, target, tmp_path,
                                             https_server, release_key):
    """When the latest release is newer, this version's helper comes from
    versions/<this version>/."""
    publish(www, b'a newer helper', release_key, version='0.2.0')
    publish(www / 'versions' / '0.1.0', HELPER.read_bytes(), release_key)
    server = https_server(www)
    result = download(tmp_path, '--url', server.url(), '--output', target)
    assert_no_traceback(result)
    assert target.read_bytes() == HELPER.read_bytes()
    paths = [r['path'] for r in server.requests()]
    assert paths[-1] == f'/versions/0.1.0/{PLATFORM}/git-cinnabar-helper'


def test_download_without_a_trusted_key(www, target, tmp_path,
                                        release_key, monkeypatch):
    """A source checkout trusts no key (the first one was lost): it says
    so and what to do."""
    publish(www, HELPER.read_bytes(), release_key)
    monkeypatch.delenv('GIT_CINNABAR_RELEASE_KEY')
    result = download(tmp_path, '--url', str(www), '--output', target,
                      check=False)
    assert_failed_for_people(result)
    assert 'trusts no release key' in result.err
    assert 'GIT_CINNABAR_RELEASE_KEY' in result.err
    assert target.read_bytes() == OLD


def test_download_refuses_plain_http(www, target, tmp_path, bundle_server,
                                     release_key):
    publish(www, HELPER.read_bytes(), release_key)
    server = bundle_server(www)
    result = download(tmp_path, '--url', server.url(), '--output', target,
                      check=False)
    assert_failed_for_people(result)
    assert 'not https' in result.err
    assert server.requests() == []
    assert target.read_bytes() == OLD


def test_download_refuses_an_untrusted_certificate(www, target, tmp_path,
                                                   https_server,
                                                   release_key,
                                                   monkeypatch):
    publish(www, HELPER.read_bytes(), release_key)
    server = https_server(www)
    monkeypatch.delenv('GIT_SSL_CAINFO')
    result = download(tmp_path, '--url', server.url(), '--output', target,
                      check=False)
    assert_failed_for_people(result)
    assert 'CERTIFICATE_VERIFY_FAILED' in result.err
    assert target.read_bytes() == OLD


def test_download_from_a_local_directory(www, target, tmp_path,
                                         release_key):
    publish(www, HELPER.read_bytes(), release_key)
    for url in (str(www), www.as_uri()):
        target.write_bytes(OLD)
        result = download(tmp_path, '--url', url, '--output', target)
        assert_no_traceback(result)
        assert target.read_bytes() == HELPER.read_bytes()


def test_download_hides_credentials(www, target, tmp_path, https_server,
                                    release_key):
    publish(www, HELPER.read_bytes(), release_key)
    server = https_server(www)
    url = server.url().replace('https://', 'https://user:s3cret@')
    result = download(tmp_path, '--url', url, '--output', target)
    assert 'Downloading https://127.0.0.1' in result.err
    assert 's3cret' not in result.err + result.out
    missing = download(tmp_path, '--url', url + 'nothere/', '--output',
                       target, check=False)
    assert_failed_for_people(missing, 'HTTP error 404 from https://127.0.0.1:')
    assert 's3cret' not in missing.err + missing.out


def test_download_for_another_platform_writes_no_guessable_file(
        www, target, tmp_path, release_key):
    """The file saved for another platform is written under a name made
    by mkstemp, not through whatever `<output>.tmp` is (here a symbolic
    link to a file that must stay as it is)."""
    publish(www, b'a helper for elsewhere', release_key,
            platform='plan9-mips')
    victim = tmp_path / 'victim'
    victim.write_text('untouched')
    (target.parent / 'git-cinnabar-helper.tmp').symlink_to(victim)
    result = download(tmp_path, '--url', str(www), '--platform',
                      'plan9-mips', '--output', target)
    assert 'saved the plan9-mips helper 0.1.0' in result.out
    assert target.read_bytes() == b'a helper for elsewhere'
    assert victim.read_text() == 'untouched'
    assert sorted(os.listdir(target.parent)) == [
        'git-cinnabar-helper', 'git-cinnabar-helper.tmp']


def test_download_needs_a_url(tmp_path):
    result = download(tmp_path, check=False)
    assert_failed_for_people(result)
    assert 'cinnabar.download-url' in result.err


def test_download_usage(tmp_path):
    result = download(tmp_path, '--frob', check=False)
    assert_failed_for_people(result)
    assert 'usage: git cinnabar download' in result.err


def test_version_shows_the_helper(tmp_path):
    out = git('cinnabar', '--version', cwd=tmp_path).out
    first, second = out.splitlines()[:2]
    assert first.startswith('git-cinnabar 0.1.0 (python 3.')
    assert second.startswith(f'helper: 0.1.0, protocol {PROTOCOL}, build ')
    assert str(HELPER) in second
    missing = git('cinnabar', '--version', cwd=tmp_path, extra_env={
        'GIT_CINNABAR_HELPER': str(tmp_path / 'nothere')}).out
    assert 'helper: missing' in missing
    stale = tmp_path / 'stale-helper'
    stale.write_bytes(script('version 0 0.0.1 0000000000000000'))
    stale.chmod(0o755)
    out = git('cinnabar', '--version', cwd=tmp_path, extra_env={
        'GIT_CINNABAR_HELPER': str(stale)}).out
    assert 'helper is stale: it speaks protocol 0' in out
    copy = tmp_path / 'copy'
    shutil.copy(HELPER, copy)
    out = git('cinnabar', '--version', cwd=tmp_path, extra_env={
        'GIT_CINNABAR_HELPER': str(copy)}).out
    assert 'stale' not in out


def test_built_helper_has_the_build_id_python_expects():
    """helper/helper.mk compiles in the build id that
    cinnabar.helper_version computes (its one definition): the helper
    built here answers it, and it covers every C file git tracks under
    helper/ (helper/sha1/ included)."""
    assert probe(str(HELPER)).build_id == expected_build_id()
    tracked = git('ls-files', '-z', 'helper', cwd=test_env.ROOT).out
    c_files = {test_env.ROOT / name for name in tracked.split('\0')
               if name.endswith(('.c', '.h'))}
    assert any(path.parent.name == 'sha1' for path in c_files)
    assert c_files <= {Path(path) for path in build_id_sources()}


def test_remote_helper_without_helper_says_how(tmp_path, hg):
    """git-remote-hg of a checkout with no helper says to download one
    or build it."""
    checkout = tmp_path / 'checkout'
    checkout.mkdir()
    for name in ('git-cinnabar', 'git-remote-hg'):
        shutil.copy2(test_env.ROOT / name, checkout / name)
    shutil.copytree(test_env.ROOT / 'cinnabar', checkout / 'cinnabar',
                    ignore=shutil.ignore_patterns('__pycache__'))
    parts = [p for p in os.environ['PATH'].split(os.pathsep)
             if p and os.path.realpath(p) != str(test_env.ROOT)]
    path = os.pathsep.join([str(checkout)] + parts)
    repo = tmp_path / 'repo'
    hg('init', repo)
    result = git('clone', f'hg::{repo}', tmp_path / 'clone', check=False,
                 extra_env={'PATH': path})
    assert result.returncode != 0
    assert_no_traceback(result)
    assert 'cannot find git-cinnabar-helper' in result.err
    assert '`git cinnabar download`' in result.err
    assert '`make`' in result.err


def test_download_url_chosen_at_build_time(www, target, tmp_path,
                                           release_key):
    """`make DOWNLOAD_URL=...` (tools/make-dist --build-info) gives the
    default URL; cinnabar.download-url wins over it."""
    publish(www, HELPER.read_bytes(), release_key)
    checkout = tmp_path / 'checkout'
    checkout.mkdir()
    shutil.copy2(test_env.ROOT / 'git-cinnabar', checkout)
    shutil.copytree(test_env.ROOT / 'cinnabar', checkout / 'cinnabar',
                    ignore=shutil.ignore_patterns('__pycache__',
                                                  'build_info.py'))
    git_cinnabar = ['python3', checkout / 'git-cinnabar']
    result = run([*git_cinnabar, 'download', '--output', target],
                 cwd=tmp_path, check=False)
    assert 'no download URL is configured' in result.err
    run(['python3', test_env.ROOT / 'tools' / 'make-dist', '--build-info',
         checkout / 'cinnabar' / 'build_info.py', '--download-url',
         str(www)])
    result = run([*git_cinnabar, 'download', '--output', target],
                 cwd=tmp_path)
    assert_no_traceback(result)
    assert target.read_bytes() == HELPER.read_bytes()
    target.write_bytes(OLD)
    result = run(['git', '-c', f'cinnabar.download-url={tmp_path}/nowhere',
                  'cinnabar', 'download', '--output', target], cwd=tmp_path,
                 check=False,
                 extra_env={'PATH': f'{checkout}:{os.environ["PATH"]}'})
    assert 'nowhere/release' in result.err
    assert target.read_bytes() == OLD


@pytest.mark.parametrize('offset', [1, -1, 0])
def test_helper_of_another_protocol_is_refused(offset, tmp_path, hg,
                                               hg_serve):
    """The real helper, its answer to `version` naming a newer or an
    older protocol (bin/helper-fault): a clone from `hg serve` stops at
    once with one `fatal:` line saying both protocols and a hint naming
    the commands that give a matching helper, and `--version` calls the
    helper stale; the same wrapper answering this protocol clones."""
    repo = tmp_path / 'hg'
    hg('init', repo)
    (repo / 'a').write_text('a\n')
    hg('-R', repo, 'commit', '-Aqm', 'a')
    server = hg_serve(repo)
    protocol = PROTOCOL + offset
    env = test_env.helper_fault_env(f'version={protocol}')
    dest = tmp_path / 'clone'
    result = git('clone', '-q', f'hg::{server.url}', dest, check=False,
                 extra_env=env)
    out = git('cinnabar', '--version', cwd=tmp_path, extra_env=env).out
    if not offset:
        assert result.returncode == 0, result.describe()
        assert (dest / 'a').read_text() == 'a\n'
        assert 'stale' not in out
        return
    assert_failed_for_people(
        result, f'fatal: git-cinnabar-helper speaks protocol {protocol}, '
        f'this git-cinnabar needs {PROTOCOL}')
    assert result.err.splitlines()[-1] == (
        'hint: run `git cinnabar download` for a prebuilt one, or build it '
        'with `make` at the top of the git-cinnabar source tree'), \
        result.describe()
    assert not dest.exists()
    assert f'helper is stale: it speaks protocol {protocol}, this ' \
        f'git-cinnabar needs {PROTOCOL}' in out
