"""Clones from an `hg serve` whose repository advertises clone bundles
(the `clonebundles` extension and `.hg/clonebundles.manifest`), the
bundles served by our bundle server (lib.bundleserver) on 127.0.0.1.

Evidence is taken on the server side: the bundle server's access log,
`hg serve`'s access log, and the bytes of `getbundle` answers counted by
the proxy (lib.proxy) in front of `hg serve`.
"""

import pytest

from lib.checks import (assert_expected_ids, assert_failed_for_people,
                        assert_no_traceback)
from lib.corpus import NGINX
from lib.git import METADATA_REF, clone, git, hg_url, init, refs
from lib.hg import closed_port
from lib.oddpaths import odd_dir

BUNDLE = 'issue4438-r1.hg'   # 111 changesets


class ClonebundleSetup:
    """A writable hg repository of a corpus bundle that advertises clone
    bundles, its `hg serve`, and a bundle server for `www`."""

    def __init__(self, hg, hg_repos, hg_serve, bundle_server, tmp_path,
                 name=BUNDLE):
        self.hg = hg
        self.name = name
        self.repo = hg_repos.copy(name, tmp_path / 'hg')
        with open(self.repo / '.hg' / 'hgrc', 'a') as f:
            f.write('[extensions]\nclonebundles =\n')
        self.www = tmp_path / 'www'
        self.www.mkdir()
        self._hg_serve = hg_serve
        self._bundle_server = bundle_server
        self.server = None
        self.bundles = None

    def make_bundle(self, filename, spec='zstd-v2', rev=None):
        args = ['-R', self.repo, 'bundle', '-q', '--type', spec]
        args += (['--base', 'null', '-r', rev] if rev is not None
                 else ['--all'])
        self.hg(*args, self.www / filename)
        return self.www / filename

    def serve(self, manifest_lines, **options):
        """Start the bundle server, write the manifest (`{bundles}` in a
        line is the bundle server's URL) and start hg serve."""
        self.bundles = self._bundle_server(self.www, **options)
        text = ''.join(line.format(bundles=self.bundles.url()) + '\n'
                       for line in manifest_lines)
        (self.repo / '.hg' / 'clonebundles.manifest').write_text(text)
        self.server = self._hg_serve(self.repo)
        return self

    @property
    def url(self):
        return hg_url(self.server.url)

    def hg_commands(self):
        """The wire commands hg serve answered, from its access log."""
        log = (self.server.logdir / 'access.log').read_text()
        return [line.split('cmd=')[1].split()[0].split('&')[0]
                for line in log.splitlines() if 'cmd=' in line]

    def bundle_gets(self):
        return [r for r in self.bundles.requests() if r['method'] == 'GET']


@pytest.fixture
def setup(hg, hg_repos, hg_serve, bundle_server, tmp_path):
    return ClonebundleSetup(hg, hg_repos, hg_serve, bundle_server, tmp_path)


def assert_clone_ok(result, dest, corpus, name=BUNDLE):
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    assert_expected_ids(dest, corpus.expected(name))


def test_clone_uses_the_first_usable_clone_bundle(setup, corpus, tmp_path):
    setup.make_bundle('full.hg')
    setup.serve([
        '{bundles}stream.hg BUNDLESPEC=none-v2%3Bstream%3Dv4',
        '{bundles}packed.hg BUNDLESPEC=zstd-packed1',
        '{bundles}zstd-v1.hg BUNDLESPEC=zstd-v1',
        'peer-bundle-cache://full.hg BUNDLESPEC=zstd-v2',
        '{bundles}full.hg BUNDLESPEC=zstd-v2 REQUIRESNI=true',
        '{bundles}second.hg BUNDLESPEC=gzip-v2',
    ])
    dest = tmp_path / 'clone'
    result = clone(setup.url, dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    assert 'Getting clone bundle from' in result.err
    assert [(r['path'], r['status']) for r in setup.bundle_gets()] == [
        ('/full.hg', 200)]
    commands = setup.hg_commands()
    assert 'clonebundles' in commands or (
        'clonebundles_manifest' in commands)
    # Everything came from the bundle: no getbundle at all.
    assert 'getbundle' not in commands
    assert not list((dest / '.git' / 'cinnabar' / 'downloads').iterdir())


@pytest.mark.parametrize('name', ['space', 'not-utf8'])
def test_clone_bundle_into_an_odd_directory(name, setup, corpus, tmp_path):
    """The download is spooled in the clone's git directory, whose path
    travels to the helper (`http fetch`'s output file, `import file`)."""
    setup.make_bundle('full.hg')
    setup.serve(['{bundles}full.hg BUNDLESPEC=zstd-v2'])
    dest = odd_dir(tmp_path, name) / 'clone'
    result = clone(setup.url, dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    assert [(r['path'], r['status']) for r in setup.bundle_gets()] == [
        ('/full.hg', 200)]
    assert 'getbundle' not in setup.hg_commands()


def test_clone_over_ssh_uses_the_clone_bundle(setup, corpus, tmp_path):
    """The manifest comes through `hg serve --stdio` (the ssh wrapper),
    the bundle from the bundle server."""
    setup.make_bundle('full.hg')
    setup.serve(['{bundles}full.hg BUNDLESPEC=zstd-v2'])
    dest = tmp_path / 'clone'
    result = clone(hg_url(f'ssh://localhost/{setup.repo}'), dest,
                   '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    assert [r['path'] for r in setup.bundle_gets()] == ['/full.hg']
    # hg serve over HTTP was not used (the fixture reads the port hg serve
    # bound from its output: no request of its own).
    assert not setup.hg_commands()


def full_getbundle_bytes(setup, hg_proxy, tmp_path):
    proxy = hg_proxy(setup.server)
    result = clone(hg_url(proxy.url), tmp_path / 'plain', '--no-checkout',
                   '-c', 'cinnabar.clonebundles=false')
    assert_no_traceback(result)
    return proxy.bytes_by_command['getbundle']


def test_clone_bundle_then_the_rest_from_the_server(setup, corpus, hg_proxy,
                                                    tmp_path):
    setup.make_bundle('part.hg', rev='0:60')
    setup.serve(['{bundles}part.hg BUNDLESPEC=zstd-v2'])
    full = full_getbundle_bytes(setup, hg_proxy, tmp_path)
    assert not setup.bundle_gets()   # disabled: not even looked at
    proxy = hg_proxy(setup.server)
    dest = tmp_path / 'clone'
    result = clone(hg_url(proxy.url), dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    assert [r['status'] for r in setup.bundle_gets()] == [200]
    assert proxy.calls_by_command['getbundle'] == 1
    # Only what the bundle lacks came from hg serve.
    assert 0 < proxy.bytes_by_command['getbundle'] < full * 0.7, (
        proxy.bytes_by_command['getbundle'], full)


def test_cut_download_resumes(setup, corpus, tmp_path):
    bundle = setup.make_bundle('full.hg')
    size = bundle.stat().st_size
    setup.serve(['{bundles}full.hg BUNDLESPEC=zstd-v2'],
                cut_after=size // 2)
    dest = tmp_path / 'clone'
    result = clone(setup.url, dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    gets = setup.bundle_gets()
    assert [r['status'] for r in gets] == [200, 206], gets
    assert gets[0]['sent'] == size // 2
    assert gets[1]['range'] == f'bytes={size // 2}-'
    assert gets[1]['if_range']
    sent = setup.bundles.bytes_sent('full.hg')
    assert sent == size < 2 * size
    assert 'getbundle' not in setup.hg_commands()


def test_cut_download_resumes_across_runs(setup, corpus, tmp_path):
    """`git cinnabar unbundle --clonebundle` keeps what it got when every
    attempt of a run was cut; the next run asks for the rest only."""
    bundle = setup.make_bundle('full.hg')
    size = bundle.stat().st_size
    setup.serve(['{bundles}full.hg BUNDLESPEC=zstd-v2'],
                cut_after=size // 10, cuts=5)
    repo = init(tmp_path / 'repo')
    result = git('cinnabar', 'unbundle', '--clonebundle', setup.server.url,
                 cwd=repo, check=False)
    assert_failed_for_people(result)
    assert 'run the command again' in result.err
    assert METADATA_REF not in refs(repo)
    result = git('cinnabar', 'unbundle', '--clonebundle', setup.server.url,
                 cwd=repo)
    assert 'resuming' in result.err
    gets = setup.bundle_gets()
    assert [r['status'] for r in gets] == [200] + [206] * 5
    assert gets[-1]['range'] == f'bytes={5 * (size // 10)}-'
    assert setup.bundles.bytes_sent('full.hg') == size
    git('remote', 'add', 'origin', setup.url, cwd=repo)
    git('fetch', '-q', 'origin', cwd=repo)
    assert 'getbundle' not in setup.hg_commands()
    assert_expected_ids(repo, corpus.expected(BUNDLE))


@pytest.mark.parametrize('problem', ['missing', 'corrupt', 'cut-forever'])
def test_failed_clone_bundle_falls_back(problem, setup, corpus, tmp_path):
    bundle = setup.make_bundle('full.hg')
    options = {}
    if problem == 'corrupt':
        data = bundle.read_bytes()
        bundle.write_bytes(data[:len(data) // 2] + bytes(
            b ^ 0x33 for b in data[len(data) // 2:]))
    elif problem == 'cut-forever':
        options = {'cut_after': 100, 'cuts': 1000}
    name = 'nothere.hg' if problem == 'missing' else 'full.hg'
    setup.serve([f'{{bundles}}{name} BUNDLESPEC=zstd-v2'], **options)
    dest = tmp_path / 'clone'
    result = clone(setup.url, dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    assert 'warning: the clone bundle failed' in result.err
    assert 'falling back to a normal clone' in result.err
    assert 'getbundle' in setup.hg_commands()
    assert setup.bundle_gets()
    assert not list((dest / '.git' / 'cinnabar' / 'downloads').iterdir())


@pytest.mark.parametrize('case', ['empty', 'none-usable', 'server-down'])
def test_manifests_without_a_bundle_to_take(case, setup, corpus, tmp_path):
    """Cases of Mercurial's test-clonebundles.t, as its client does them:
    an empty manifest is no clone bundle (a normal clone, nothing said);
    entries none of which can be used (an unknown BUNDLESPEC compression
    or type, a URL we do not download from) are skipped, saying so in one
    line (hg: "no compatible clone bundles available on server; falling
    back to regular clone"); a bundle URL on a server that is down makes
    a normal clone after a warning, as any failed clone bundle does here
    (hg aborts instead, unless ui.clonebundlefallback is true)."""
    setup.make_bundle('full.hg')
    manifests = {
        'empty': [],
        'none-usable': ['{bundles}full.hg BUNDLESPEC=lzma-v2',
                        '{bundles}full.hg BUNDLESPEC=gzip-v9',
                        'ftp://127.0.0.1/full.hg BUNDLESPEC=gzip-v2'],
        'server-down': ['http://127.0.0.1:{port}/full.hg BUNDLESPEC=gzip-v2'],
    }
    with closed_port() as port:
        setup.serve([line.replace('{port}', str(port))
                     for line in manifests[case]])
        dest = tmp_path / 'clone'
        result = clone(setup.url, dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    assert 'getbundle' in setup.hg_commands()
    assert 'Getting clone bundle' not in result.err or case == 'server-down'
    if case == 'empty':
        assert 'clone bundle' not in result.err, result.describe()
    elif case == 'none-usable':
        assert not setup.bundle_gets()
        said = [line for line in result.err.splitlines()
                if line.startswith('no clone bundle we can use')]
        assert len(said) == 1, result.describe()
        for reason in ("'lzma'", "'v9'", 'ftp://'):
            assert reason in said[0], said
    else:
        assert 'warning: the clone bundle failed' in result.err
        assert 'falling back to a normal clone' in result.err


def test_malformed_urls_are_skipped(setup, corpus, tmp_path):
    """Manifest entries whose URL cannot be parsed (brackets not closed or
    around no address, a port out of range, no host) are skipped like
    any other unusable entry: the next one is taken."""
    setup.make_bundle('full.hg')
    setup.serve(['http://[::1/full.hg BUNDLESPEC=zstd-v2',
                 'http://[zz]/full.hg BUNDLESPEC=zstd-v2',
                 'http://127.0.0.1:99999/full.hg BUNDLESPEC=zstd-v2',
                 'http:///full.hg BUNDLESPEC=zstd-v2',
                 '{bundles}full.hg BUNDLESPEC=zstd-v2'])
    dest = tmp_path / 'clone'
    result = clone(setup.url, dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    assert 'Getting clone bundle from %sfull.hg' % setup.bundles.url() in (
        result.err), result.describe()
    assert setup.bundle_gets()
    assert 'getbundle' not in setup.hg_commands()


def test_settings(setup, corpus, tmp_path):
    setup.make_bundle('full.hg')
    setup.make_bundle('other.hg', spec='gzip-v1')
    setup.serve(['{bundles}full.hg BUNDLESPEC=zstd-v2'])
    cases = [
        (['-c', 'cinnabar.clonebundles=false'], {}, []),
        (['-c', 'remote.origin.cinnabar-clonebundle='], {}, []),
        (['-c', 'cinnabar.clonebundle=false'], {}, []),
        (['-c', 'remote.origin.cinnabar-clonebundle='
          + setup.bundles.url('other.hg')], {}, ['/other.hg']),
        ([], {'GIT_CINNABAR_CLONEBUNDLE': setup.bundles.url('other.hg')},
         ['/other.hg']),
        (['-c', 'cinnabar.clonebundles=true'], {}, ['/full.hg']),
    ]
    for number, (options, env, paths) in enumerate(cases):
        before = len(setup.bundle_gets())
        dest = tmp_path / f'clone{number}'
        result = clone(setup.url, dest, '--no-checkout', *options,
                       extra_env=env)
        assert_clone_ok(result, dest, corpus)
        used = [r['path'] for r in setup.bundle_gets()[before:]]
        assert used == paths, (options, env, used)
    result = clone(setup.url, tmp_path / 'bad', '--no-checkout', '-c',
                   'cinnabar.clonebundles=maybe', check=False)
    assert_failed_for_people(result)
    assert 'cinnabar.clonebundles' in result.err


def test_fetch_into_existing_metadata_does_not_use_clone_bundles(
        setup, corpus, tmp_path):
    setup.make_bundle('full.hg')
    setup.serve(['{bundles}full.hg BUNDLESPEC=zstd-v2'])
    repo = init(tmp_path / 'repo')
    git('cinnabar', 'unbundle', corpus.bundle('remote.hg'), cwd=repo)
    git('remote', 'add', 'origin', setup.url, cwd=repo)
    git('fetch', '-q', 'origin', cwd=repo)
    assert not setup.bundle_gets()
    assert_expected_ids(repo, corpus.expected(BUNDLE))


def test_unbundle_clonebundle(setup, corpus, tmp_path):
    setup.make_bundle('full.hg')
    setup.serve(['{bundles}full.hg BUNDLESPEC=zstd-v2'])
    repo = init(tmp_path / 'repo')
    git('remote', 'add', 'origin', setup.url, cwd=repo)
    git('config', 'remote.origin.cinnabar-clonebundle', '', cwd=repo)
    result = git('cinnabar', 'unbundle', '--clonebundle', 'origin',
                 cwd=repo, check=False)
    assert_failed_for_people(result)
    assert 'no clone bundle to use' in result.err
    assert not setup.bundle_gets()
    git('config', '--unset', 'remote.origin.cinnabar-clonebundle', cwd=repo)
    git('config', 'cinnabar.clonebundles', 'false', cwd=repo)
    result = git('cinnabar', 'unbundle', '--clonebundle', 'origin',
                 cwd=repo)
    assert result.out.startswith('imported 111 changesets')
    assert [r['path'] for r in setup.bundle_gets()] == ['/full.hg']
    git('fetch', '-q', 'origin', cwd=repo)
    assert 'getbundle' not in setup.hg_commands()
    assert_expected_ids(repo, corpus.expected(BUNDLE))


def test_unbundle_clonebundle_without_clone_bundles(hg_repos, hg_serve,
                                                    tmp_path):
    server = hg_serve(hg_repos.get(BUNDLE))
    repo = init(tmp_path / 'repo')
    result = git('cinnabar', 'unbundle', '--clonebundle', server.url,
                 cwd=repo, check=False)
    assert_failed_for_people(result)
    assert 'does not advertise clone bundles' in result.err
    assert METADATA_REF not in refs(repo)


@pytest.mark.slow
def test_nginx_clone_bundle_cut_and_resumed(hg, hg_repos, hg_serve,
                                            bundle_server, corpus,
                                            tmp_path):
    setup = ClonebundleSetup(hg, hg_repos, hg_serve, bundle_server,
                             tmp_path, NGINX)
    bundle = setup.make_bundle('nginx.hg', rev='0:8000')
    size = bundle.stat().st_size
    setup.serve(['{bundles}nginx.hg BUNDLESPEC=zstd-v2'],
                cut_after=size // 3)
    dest = tmp_path / 'clone'
    result = clone(setup.url, dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus, NGINX)
    assert [r['status'] for r in setup.bundle_gets()] == [200, 206]
    assert setup.bundles.bytes_sent('nginx.hg') == size
    assert setup.hg_commands().count('getbundle') == 1


def make_stream_bundle(setup, filename, spec):
    """A stream clone bundle of the repository, as Mercurial makes them
    (`packed1` only by its debug command)."""
    path = setup.www / filename
    if spec == 'none-packed1':
        setup.hg('-R', setup.repo, 'debugcreatestreamclonebundle', path)
    else:
        setup.hg('-R', setup.repo, 'bundle', '-q', '-a', '--type', spec,
                 path)
    return path


@pytest.mark.parametrize('spec', ['none-v2;stream=v2', 'none-packed1'])
def test_stream_clone_bundle(spec, setup, corpus, tmp_path):
    """A stream clone bundle first in the manifest is used (cinnabar.stream
    `auto`), and the clone is that of a normal clone; with `never` it is
    skipped."""
    make_stream_bundle(setup, 'stream.hg', spec)
    setup.make_bundle('full.hg')
    quoted = spec.replace(';', '%3B').replace('=', '%3D')
    setup.serve([f'{{bundles}}stream.hg BUNDLESPEC={quoted}',
                 '{bundles}full.hg BUNDLESPEC=zstd-v2'])
    dest = tmp_path / 'clone'
    result = clone(setup.url, dest, '--no-checkout')
    assert_clone_ok(result, dest, corpus)
    assert 'clone bundle: 111 changesets, ' in result.err, result.describe()
    assert 'getbundle' not in setup.hg_commands()
    normal = tmp_path / 'normal'
    result = clone(setup.url, normal, '--no-checkout', '-c',
                   'cinnabar.stream=never')
    assert_clone_ok(result, normal, corpus)
    assert [r['path'] for r in setup.bundle_gets()] == ['/stream.hg',
                                                        '/full.hg']
    assert (git('rev-parse', METADATA_REF, cwd=dest).out
            == git('rev-parse', METADATA_REF, cwd=normal).out)
