"""`make dist`, end to end: the release trees of this commit, built twice
in two directories, are byte for byte the same; with the tree of a fake
newer version (0.2.0), signed with a key made for the test, they are
served over https on 127.0.0.1 (lib.tls certificate, trusted through
GIT_SSL_CAINFO); from a checkout that was never built, `git cinnabar
download` installs the helper, which clones and pushes; an installation
from the release tarball self-updates to 0.2.0 trusting only the key its
tree carries; refusals leave the installed helper as it was.

Cost: the helper's objects are compiled twice (two builds of this
commit; 0.2.0 recompiles only main.o, which holds the version). git's
libraries, compiled from relative paths with the release flags, are
built once in build/dist/ of this checkout and shared (DIST_GIT_TREE);
`make dist-check` (tools/dist-check, by hand) rebuilds them too in each
directory. The builds hold
build/.dist.lock, so that concurrent sessions do not build the shared
tree at once."""

import fcntl
import os
import shutil
import tarfile

import pytest

from cinnabar.helper import PROTOCOL

from lib import env as test_env
from lib.checks import (assert_failed_for_people, assert_no_traceback,
                        file_digests)
from lib.git import git
from lib.proc import run


ROOT = test_env.ROOT
GIT_VERSION = run(['make', '-s', '--no-print-directory', 'print-git-version'],
                  cwd=ROOT).out.strip()
DIST_GIT_TREE = ROOT / 'build' / 'dist' / f'git-{GIT_VERSION}'
LOCK = ROOT / 'build' / '.dist.lock'
PLATFORM = '%s-%s' % (os.uname().sysname.lower(), os.uname().machine.lower())
HELPER = 'git-cinnabar-helper'
EPOCH = '1767225600'  # 2026-01-01
# One `make dist`: the git tree compiled with the release flags, then the
# helper; under a loaded CI core about 5 minutes.
BUILD_TIMEOUT = 900

# The first test's setup builds the helper three times (`built`), from
# scratch the first time.
pytestmark = [pytest.mark.usefixtures('trusted_release'),
              pytest.mark.timeout(3 * BUILD_TIMEOUT)]


def copy_source(dest, umask, date, reverse):
    """The files of this checkout (tracked or not ignored) copied to
    `dest`, created in sorted or reverse order under `umask`, all dated
    `date`: what varies between two builds but must not show."""
    listing = run(['git', 'ls-files', '-z', '--cached', '--others',
                   '--exclude-standard'], cwd=ROOT).out
    names = sorted(n for n in listing.split('\0') if n
                   and (ROOT / n).is_file())
    old = os.umask(umask)
    try:
        for name in reversed(names) if reverse else names:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, dest / name)
            shutil.copymode(ROOT / name, dest / name)
    finally:
        os.umask(old)
    run(['find', dest, '-exec', 'touch', '-h', '-d', date, '{}', '+'])
    (dest / 'build').mkdir()
    tarball = f'git-{GIT_VERSION}.tar.xz'
    (dest / 'build' / tarball).symlink_to(ROOT / 'build' / tarball)
    return dest


def make_dist(source, key_file, *args):
    with open(LOCK, 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return run(['nice', 'make', '--no-print-directory', 'dist',
                    f'DIST_GIT_TREE={DIST_GIT_TREE}',
                    f'DIST_KEY={key_file}', f'SOURCE_DATE_EPOCH={EPOCH}',
                    *args], cwd=source, timeout=BUILD_TIMEOUT)


def bump_version(source, version):
    for path, old, new in (
            ('cinnabar/__init__.py', "VERSION = '0.1.0'",
             f"VERSION = '{version}'"),
            ('helper/helper.mk', 'HELPER_VERSION = 0.1.0',
             f'HELPER_VERSION = {version}')):
        text = (source / path).read_text()
        assert old in text
        (source / path).write_text(text.replace(old, new))


@pytest.fixture(scope='module')
def built(tmp_path_factory, release_key):
    """{'a', 'b', 'new'}: (source directory, make dist output) of this
    commit built twice and of 0.2.0."""
    base = tmp_path_factory.mktemp('dist')
    key_file = release_key.write_seed(base / 'release.key')
    sources = {
        'a': copy_source(base / 'a', 0o022, '2001-01-01', False),
        'b': copy_source(base / 'second' / 'b-longer-name', 0o002,
                         '2030-06-15 12:34', True),
    }
    built = {name: (source, make_dist(source, key_file).out)
             for name, source in sources.items()}
    # 0.2.0 is built where the first tree was (the source directory is in
    # the helper's flags: -ffile-prefix-map), on its objects, so that only
    # main.o, which holds the version, is compiled again; 0.1.0 is kept in
    # a copy.
    release = base / 'release-0.1.0'
    shutil.copytree(sources['a'], release, symlinks=True)
    bump_version(sources['a'], '0.2.0')
    built['new'] = (sources['a'], make_dist(sources['a'], key_file).out)
    built['a'] = (release, built['a'][1])
    return built


def test_dist_is_reproducible(built, release_key):
    (a, out), (b, _) = built['a'], built['b']
    assert file_digests(a / 'dist') == file_digests(b / 'dist')
    assert sorted(file_digests(a / 'dist')) == [
        'git-cinnabar-0.1.0.tar.gz', f'{PLATFORM}/{HELPER}',
        f'{PLATFORM}/{HELPER}.sha256', 'release', 'release.sig']
    assert f'release public key: {release_key.public}' in out
    assert 'helper needs glibc >= 2.' in out
    assert 'throwaway' not in out


def test_new_version_recompiles_only_main(built):
    """The version and build id are compiled into main.o alone
    (helper/helper.mk): a version bump rebuilds that object, not all."""
    compiled = [line.split()[-1] for line in built['new'][1].splitlines()
                if line.split()[:1] == ['CC']]
    assert [os.path.basename(c) for c in compiled] == ['main.o']


def test_dist_contents(built):
    source, _ = built['a']
    dist = source / 'dist'
    # sha256sum agrees with the checksum file.
    run(['sha256sum', '-c', f'{HELPER}.sha256'], cwd=dist / PLATFORM)
    with tarfile.open(dist / 'git-cinnabar-0.1.0.tar.gz') as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    assert {'git-cinnabar', 'git-remote-hg', 'cinnabar/__init__.py',
            'cinnabar/build_info.py', 'cinnabar/cmd/download.py'} <= set(
                names)
    assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {
        (0, 0, '', '', int(EPOCH))}
    # The helper: zlib, zstd, bzip2 and OpenSSL are inside it.
    needed = run(['objdump', '-p', dist / PLATFORM / HELPER]).out
    libraries = {line.split()[1] for line in needed.splitlines()
                 if line.split()[:1] == ['NEEDED']}
    assert any(lib.startswith('libcurl') for lib in libraries)
    assert not any(lib.startswith(('libz.', 'libzstd', 'libbz2',
                                   'libcrypto')) for lib in libraries)


def test_dist_throwaway_key(built, tmp_path):
    """Without DIST_KEY, the tree is signed with a throwaway key and
    says it is for testing only (built where its objects are: 0.2.0's
    tree)."""
    source, _ = built['new']
    with open(LOCK, 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = run(['make', '--no-print-directory', 'dist',
                   f'DIST_GIT_TREE={DIST_GIT_TREE}', f'DIST={tmp_path}/t',
                   f'SOURCE_DATE_EPOCH={EPOCH}'], cwd=source,
                  timeout=BUILD_TIMEOUT).out
    assert 'for testing only' in out
    assert (source / 'build' / 'dist' / 'throwaway.key').exists()


@pytest.fixture(scope='module')
def www(built, tmp_path_factory):
    """The server's tree: 0.2.0 as the latest, both under versions/."""
    www = tmp_path_factory.mktemp('www')
    for name, version in (('a', '0.1.0'), ('new', '0.2.0')):
        shutil.copytree(built[name][0] / 'dist', www / 'versions' / version)
    shutil.copytree(built['new'][0] / 'dist', www, dirs_exist_ok=True)
    return www


def fresh_checkout(built, dest):
    """The Python side of this commit, never built: no helper."""
    source, _ = built['a']
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(
        'build', 'dist', HELPER))
    return dest


def without_this_checkout(first):
    """The environment's PATH, `first` first and this checkout (whose
    helper would be found there) left out."""
    parts = [p for p in os.environ['PATH'].split(os.pathsep)
             if p and os.path.realpath(p) != str(ROOT)]
    return {'PATH': os.pathsep.join([str(first)] + parts)}


def cinnabar(directory, *args, check=True):
    return run(['python3', directory / 'git-cinnabar', *args],
               cwd=directory.parent, check=check,
               extra_env=without_this_checkout(directory))


def test_download_clone_push(built, www, tmp_path, https_server, hg):
    checkout = fresh_checkout(built, tmp_path / 'checkout')
    assert 'helper: missing' in cinnabar(checkout, '--version').out
    server = https_server(www)
    result = cinnabar(checkout, 'download', '--url', server.url())
    assert_no_traceback(result)
    assert 'installed git-cinnabar-helper 0.1.0' in result.out
    helper = checkout / HELPER
    assert helper.read_bytes() == (
        built['a'][0] / 'dist' / PLATFORM / HELPER).read_bytes()
    assert 'stale' not in cinnabar(checkout, '--version').out
    # Clone and push through that checkout's git-remote-hg and helper.
    repo = tmp_path / 'hg'
    hg('init', repo)
    (repo / 'a').write_text('a\n')
    hg('-R', repo, 'commit', '-A', '-m', 'first', '-u', 'test <t@t>')
    path = without_this_checkout(checkout)
    clone = tmp_path / 'clone'
    git('clone', f'hg::{repo}', clone, extra_env=path)
    (clone / 'b').write_text('b\n')
    git('add', 'b', cwd=clone)
    git('commit', '-m', 'second', cwd=clone)
    git('push', 'origin', 'HEAD:refs/heads/branches/default/tip',
        cwd=clone, extra_env=path)
    assert hg('-R', repo, 'log', '-r', 'tip', '-T', '{desc}').out == 'second'
    hg('-R', repo, 'verify', '-q')


def install_release(built, dest, name='a', version='0.1.0'):
    """An installation made by hand from a release tree."""
    dist = built[name][0] / 'dist'
    dest.mkdir()
    safe = {'filter': 'data'} if hasattr(tarfile, 'data_filter') else {}
    with tarfile.open(dist / f'git-cinnabar-{version}.tar.gz') as tar:
        tar.extractall(dest, **safe)
    shutil.copy2(dist / PLATFORM / HELPER, dest / HELPER)
    return dest


def test_self_update_with_the_release_keys(built, www, tmp_path,
                                           https_server, monkeypatch):
    """The installation trusts the key its release tree carries: no
    GIT_CINNABAR_RELEASE_KEY."""
    monkeypatch.delenv('GIT_CINNABAR_RELEASE_KEY')
    install = install_release(built, tmp_path / 'install')
    server = https_server(www)
    result = cinnabar(install, 'self-update', '--url', server.url())
    assert_no_traceback(result)
    assert 'updated git-cinnabar from 0.1.0 to 0.2.0' in result.out
    out = cinnabar(install, '--version').out
    assert out.startswith('git-cinnabar 0.2.0 ')
    assert f'helper: 0.2.0, protocol {PROTOCOL}' in out
    # Back to 0.1.0 only with --exact; a replayed 0.1.0 is refused.
    old = tmp_path / 'old-www'
    shutil.copytree(www / 'versions' / '0.1.0', old)
    before = file_digests(install, ['__pycache__'])
    refused = cinnabar(install, 'self-update', '--url', old, check=False)
    assert_failed_for_people(refused)
    assert 'refusing to go back' in refused.err
    assert file_digests(install, ['__pycache__']) == before
    result = cinnabar(install, 'self-update', '--url', server.url(),
                      '--exact', '0.1.0')
    assert 'updated git-cinnabar from 0.2.0 to 0.1.0' in result.out


def tamper(served, case, key):
    """Damage the release tree `served` (a copy of 0.1.0's) for `case`."""
    if case == 'bad-signature':
        line = (served / 'release.sig').read_text()
        flipped = '0' if line[70] != '0' else '1'
        (served / 'release.sig').write_text(line[:70] + flipped + line[71:])
    elif case == 'checksum':
        helper = served / PLATFORM / HELPER
        helper.write_bytes(helper.read_bytes() + b'\0')
    elif case == 'wrong-platform':
        (served / PLATFORM).rename(served / 'plan9-mips')
        text = (served / 'release').read_text()
        (served / 'release').write_text(text.replace(PLATFORM, 'plan9-mips'))
        key.sign(served / 'release')


REFUSALS = {
    'bad-signature': 'does not verify with the release key',
    'checksum': 'the checksum of the %s helper does not match' % PLATFORM,
    'wrong-platform': 'has no helper for %s' % PLATFORM,
    'downgrade': 'older than this git-cinnabar 0.2.0: refusing to go back',
    'http': 'not https',
    'cut': 'was cut short',
}


@pytest.mark.parametrize('case', sorted(REFUSALS))
def test_refusals_leave_the_installation(case, built, www, tmp_path,
                                         https_server, bundle_server,
                                         tls_certificate, release_key):
    if case == 'downgrade':
        install = install_release(built, tmp_path / 'install', 'new',
                                  '0.2.0')
    else:
        install = install_release(built, tmp_path / 'install')
    served = tmp_path / 'served'
    shutil.copytree(www / 'versions' / '0.1.0', served)
    tamper(served, case, release_key)
    if case == 'http':
        server = bundle_server(served)
    elif case == 'cut':
        # The manifest and its signature whole, the helper cut short.
        server = bundle_server(served, cut_after=4096, cuts=3,
                               tls=tls_certificate)
    else:
        server = https_server(served)
    command = 'self-update' if case == 'downgrade' else 'download'
    before = file_digests(install, ['__pycache__'])
    result = cinnabar(install, command, '--url', server.url(), check=False)
    assert_failed_for_people(result)
    assert REFUSALS[case] in result.err
    assert file_digests(install, ['__pycache__']) == before
    assert sorted(os.listdir(install)) == [
        'cinnabar', 'git-cinnabar', HELPER, 'git-remote-hg']
