"""Clones from an `hg serve` running our server extension
(hg/cinnabarclone.py) with a `.hg/cinnabar.manifest` pointing at
git-cinnabar metadata in a git bundle or a git repository, served by our
bundle server (lib.bundleserver) on 127.0.0.1.

Evidence is taken on the server side: `hg serve`'s access log (which wire
commands were answered), the bytes of `getbundle` answers counted by the
proxy (lib.proxy), and the bundle server's access log.
"""

import shutil

import pytest

from lib.checks import assert_expected_ids, assert_no_traceback
from lib.env import ROOT, helper_fault_env
from lib.bundleserver import BundleServer
from lib.git import METADATA_REF, clone, git, hg_url, refs, rev_parse
from lib.plumbing import MetadataParts, cat, edit_tree, forge_author
from lib.plumbing import hash_blob, ls_tree, move_changeset, parents
from lib.plumbing import tree_of
from lib.proxy import HgProxy
from lib.push import hg_commit, make_hg_repo

pytestmark = pytest.mark.hgserver

BUNDLE = 'issue4438-r1.hg'   # 111 changesets
EXTENSION = ROOT / 'hg' / 'cinnabarclone.py'
PARTS = 5   # changesets, manifests, hg2git, git2hg, files-meta


class Site:
    """For the whole module: a writable hg repository of a corpus bundle
    served with the cinnabarclone extension (`hg serve`, and a proxy in
    front of it counting bytes), a bundle server for `www` holding git
    bundles and a git repository of its metadata, and a plain clone (made
    without cinnabarclone, through the proxy) to compare with."""

    def __init__(self, hg, hg_repos, hg_serve, tmp_path):
        self.hg = hg
        self.tmp = tmp_path
        self.repo = hg_repos.copy(BUNDLE, tmp_path / 'hg')
        with open(self.repo / '.hg' / 'hgrc', 'a') as f:
            f.write(f'[extensions]\ncinnabarclone = {EXTENSION}\n')
        self.www = tmp_path / 'www'
        self.www.mkdir()
        self.make_bundle('full.bundle')
        self.make_bundle('part.bundle', rev=60)
        self.make_repository('meta.git', 'refs/cinnabar/mirror')
        self.server = hg_serve(self.repo)
        self.bundles = BundleServer(self.www, tmp_path / 'bundle-server')
        self.proxy = HgProxy(self.server.port)

    def start(self, request):
        for server in (self.bundles, self.proxy):
            request.addfinalizer(server.stop)
            server.start()
        self.set_manifest([])
        self.plain = self.tmp / 'plain'
        result = clone(hg_url(self.proxy.url), self.plain, '--no-checkout',
                       '-c', 'cinnabar.clone=')
        assert result.returncode == 0, result.describe()
        self.full_getbundle = self.proxy.bytes_by_command['getbundle']
        return self

    def metadata_clone(self, rev=None):
        """A git-cinnabar clone of the repository (up to `rev`)."""
        source = self.repo
        if rev is not None:
            # A bundle file of revisions 0 to `rev`, cloned as it is.
            source = self.tmp / f'hg-0-{rev}.hg'
            self.hg('-R', self.repo, 'bundle', '-q', '--type', 'none-v2',
                    '--base', 'null', '-r', f'0:{rev}', source)
        dest = self.tmp / f'src-{rev}'
        if not dest.exists():
            result = clone(hg_url(source), dest, '--no-checkout', '-q')
            assert result.returncode == 0, result.describe()
        return dest

    def make_bundle(self, filename, rev=None):
        """A git bundle of the metadata of a clone up to `rev`."""
        src = self.metadata_clone(rev)
        git('bundle', 'create', self.www / filename, METADATA_REF,
            cwd=src)
        return self.www / filename

    def make_repository(self, dirname, ref):
        """A bare git repository served over git's dumb HTTP protocol,
        holding the full metadata as `ref`."""
        src = self.metadata_clone()
        dest = self.www / dirname
        git('init', '-q', '--bare', dest)
        git('push', '-q', dest, f'{METADATA_REF}:{ref}', cwd=src)
        git('update-server-info', cwd=dest)
        return dest

    def set_manifest(self, lines):
        """Write the manifest (`{www}` in a line is the bundle server's
        URL); hg serve reads it at each request. No lines: no manifest
        (and no capability)."""
        path = self.repo / '.hg' / 'cinnabar.manifest'
        if not lines:
            path.unlink(missing_ok=True)
            return
        path.write_text(''.join(line.format(www=self.bundles.url()) + '\n'
                                for line in lines))

    @property
    def url(self):
        return hg_url(self.server.url)

    def clone(self, dest, *options, **kwargs):
        """Clone with --no-checkout; returns (result, the wire commands
        hg serve answered, the paths the bundle server served)."""
        log = self.server.logdir / 'access.log'
        lines_before = len(log.read_text().splitlines())
        requests_before = len(self.bundles.requests())
        result = clone(kwargs.pop('url', self.url), dest, '--no-checkout',
                       *options, **kwargs)
        assert_no_traceback(result)
        assert result.returncode == 0, result.describe()
        commands = [line.split('cmd=')[1].split()[0].split('&')[0]
                    for line in log.read_text().splitlines()[lines_before:]
                    if 'cmd=' in line]
        # Not `git ls-remote`'s probes (telling repositories from
        # bundles).
        gets = [r['path'] for r in self.bundles.requests()[requests_before:]
                if r['method'] == 'GET' and '/info/refs' not in r['path']]
        return result, commands, gets


@pytest.fixture(scope='module')
def site(hg, hg_repos, hg_serve_module, tmp_path_factory, request):
    return Site(hg, hg_repos, hg_serve_module,
                tmp_path_factory.mktemp('cinnabarclone')).start(request)


def metadata_parts(repo):
    """The metadata commit's parts, the changeset heads as a set (their
    order is the order they were first imported in)."""
    commit = git('cat-file', 'commit', METADATA_REF, cwd=repo).out
    parents = [line.split()[1] for line in commit.splitlines()
               if line.startswith('parent ')][:PARTS]
    changesets = git('cat-file', 'commit', parents[0], cwd=repo).out
    heads = changesets.split('\n\n', 1)[1].split('\n')
    return set(heads), parents[1:]


def branch_refs(repo):
    """The refs, but for the metadata and fsck's mark."""
    ignored = (METADATA_REF, 'refs/cinnabar/checked')
    return {k: v for k, v in refs(repo).items() if k not in ignored}


def assert_same_as_plain_clone(dest, plain, corpus):
    """Refs, metadata and ids of `dest` are those of the plain clone, and
    both fsck passes are clean."""
    assert_expected_ids(dest, corpus.expected(BUNDLE))
    assert branch_refs(dest) == branch_refs(plain)
    assert metadata_parts(dest) == metadata_parts(plain)
    result = git('cinnabar', 'fsck', '--full', cwd=dest)
    assert 'no problem' in result.out + result.err, result.describe()
    result = git('fsck', '--full', '--no-dangling', cwd=dest)
    assert not [line for line in result.err.splitlines()
                if not line.startswith('notice: ')], result.describe()


def test_clone_from_a_full_metadata_bundle(site, corpus, tmp_path):
    site.set_manifest(['{www}full.bundle'])
    dest = tmp_path / 'clone'
    result, commands, gets = site.clone(dest)
    assert 'Fetching cinnabar metadata from' in result.err
    assert gets == ['/full.bundle']
    assert 'cinnabarclone' in commands
    # Everything came from the bundle: nothing from hg serve.
    assert 'getbundle' not in commands
    assert not list((dest / '.git' / 'cinnabar' / 'downloads').iterdir())
    assert 'refs/cinnabar/clone' not in refs(dest)
    assert_same_as_plain_clone(dest, site.plain, corpus)


def test_clone_over_ssh(site, tmp_path):
    """The manifest comes through `hg serve --stdio` (the ssh wrapper),
    which loads the extension from the repository's hgrc."""
    site.set_manifest(['{www}full.bundle'])
    dest = tmp_path / 'clone'
    result, _, gets = site.clone(dest,
                                 url=hg_url(f'ssh://localhost/{site.repo}'))
    assert 'Fetching cinnabar metadata from' in result.err
    assert gets == ['/full.bundle']
    assert branch_refs(dest) == branch_refs(site.plain)


def test_partial_bundle_then_the_rest_from_the_server(site, corpus,
                                                      tmp_path):
    site.set_manifest(['{www}part.bundle'])
    before = site.proxy.bytes_by_command['getbundle']
    calls = site.proxy.calls_by_command['getbundle']
    dest = tmp_path / 'clone'
    result, commands, gets = site.clone(dest, url=hg_url(site.proxy.url))
    assert gets == ['/part.bundle']
    assert site.proxy.calls_by_command['getbundle'] == calls + 1
    # Only what the bundle lacks came from hg serve.
    got = site.proxy.bytes_by_command['getbundle'] - before
    assert 0 < got < site.full_getbundle * 0.6, (got, site.full_getbundle)
    assert_same_as_plain_clone(dest, site.plain, corpus)


def test_clone_from_a_git_repository_and_branch(site, corpus, tmp_path):
    """A bare repository over git's dumb HTTP protocol, the metadata in
    `refs/cinnabar/mirror` named by the line's `#mirror`; a first line
    with an unknown parameter is skipped."""
    site.set_manifest(['{www}nothere.bundle future=1',
                       '{www}meta.git#mirror'])
    dest = tmp_path / 'clone'
    result, commands, gets = site.clone(dest)
    assert 'getbundle' not in commands
    assert '/nothere.bundle' not in gets
    assert_same_as_plain_clone(dest, site.plain, corpus)


def write_broken_sources(site):
    """Files for BROKEN: a valid git bundle whose ref is an ordinary
    commit, half a bundle, and junk."""
    src = site.metadata_clone()
    head = git('for-each-ref', '--count=1', '--format=%(objectname)',
               'refs/remotes/origin/', cwd=src).out.strip()
    git('update-ref', 'refs/heads/metadata', head, cwd=src)
    git('bundle', 'create', site.www / 'other.bundle',
        'refs/heads/metadata', cwd=src)
    data = (site.www / 'full.bundle').read_bytes()
    (site.www / 'cut.bundle').write_bytes(data[:len(data) // 2])
    (site.www / 'junk.bundle').write_bytes(b'not a bundle\n' * 100)


BROKEN = {
    'missing': '{www}nothere.bundle',
    'not-a-bundle': '{www}junk.bundle',
    'truncated': '{www}cut.bundle',
    'unreachable': 'http://127.0.0.1:9/meta.bundle',
    'not-cinnabar': '{www}other.bundle',
    'ftp': 'ftp://127.0.0.1/meta.bundle',
}


def test_broken_sources_fall_back_to_a_normal_clone(site, corpus,
                                                    tmp_path):
    write_broken_sources(site)
    for problem, line in sorted(BROKEN.items()):
        site.set_manifest([line])
        dest = tmp_path / problem
        result, commands, _ = site.clone(dest)
        assert 'falling back to a normal clone' in result.err, (
            problem, result.describe())
        if problem == 'not-cinnabar':
            # Refused as what it is, before its ids are checked.
            assert 'is not git-cinnabar metadata' in result.err, \
                result.describe()
        assert 'getbundle' in commands, problem
        # The same commits as the plain clone.
        assert branch_refs(dest) == branch_refs(site.plain), problem
    assert_expected_ids(dest, corpus.expected(BUNDLE))
    result = git('cinnabar', 'fsck', '--full', cwd=dest)
    assert 'no problem' in result.out + result.err, result.describe()


def test_settings_override_the_server(site, corpus, tmp_path):
    """`cinnabar.clone` replaces the server's manifest, an empty value
    disables cinnabarclone; `GIT_CINNABAR_CLONE` naming a local bundle
    works with a server that advertises nothing."""
    site.set_manifest(['{www}nothere.bundle'])
    good = site.bundles.url('full.bundle')
    dest = tmp_path / 'configured'
    result, commands, gets = site.clone(dest, '-c', f'cinnabar.clone={good}')
    assert gets == ['/full.bundle']
    assert 'getbundle' not in commands
    assert_expected_ids(dest, corpus.expected(BUNDLE))

    result, commands, gets = site.clone(tmp_path / 'disabled', '-c',
                                        'cinnabar.clone=')
    assert 'cinnabar metadata' not in result.err
    assert gets == [] and 'cinnabarclone' not in commands

    site.set_manifest([])
    dest = tmp_path / 'environment'
    result, commands, gets = site.clone(
        dest, extra_env={'GIT_CINNABAR_CLONE': str(site.www / 'full.bundle')})
    assert 'Fetching cinnabar metadata from' in result.err
    assert 'getbundle' not in commands and gets == []
    assert_expected_ids(dest, corpus.expected(BUNDLE))


def renamed_bundle(site, filename, new_ref):
    """A copy of full.bundle whose header names its one commit `new_ref`
    (a name git cannot make itself) and HEAD (what `git fetch <bundle>`
    takes when given no ref)."""
    data = (site.www / 'full.bundle').read_bytes()
    old = b' ' + METADATA_REF.encode() + b'\n'
    assert data.count(old) == 1
    at = data.index(old)
    oid = data[data.rindex(b'\n', 0, at) + 1:at]
    (site.www / filename).write_bytes(data.replace(
        old, b' %s\n%s HEAD\n' % (new_ref.encode(), oid)))


def test_ref_starting_with_dash_is_refused(site, tmp_path):
    """A bundle header ref and a `#branch` that `git fetch` would read as
    its option `--write-fetch-head`: refused in one line (a normal clone
    follows), and FETCH_HEAD is not written."""
    renamed_bundle(site, 'dash.bundle', '--write-fetch-head')
    site.set_manifest(['{www}dash.bundle#--write-fetch-head'])
    dest = tmp_path / 'clone'
    result, commands, _ = site.clone(dest)
    assert ('warning: cinnabarclone failed: the metadata ref '
            "'--write-fetch-head' of %s starts with \"-\"; refusing it\n"
            % site.bundles.url('dash.bundle')) in result.err, \
        result.describe()
    assert not (dest / '.git' / 'FETCH_HEAD').exists()
    assert 'getbundle' in commands
    assert branch_refs(dest) == branch_refs(site.plain)


SSH_RECORDER = '''#!/bin/sh
echo "$@" >> "$0.log"
exit 1
'''


def test_server_urls_without_scheme_slashes_are_skipped(site, tmp_path):
    """URLs git would read as an scp-like `host:path` (an SSH connection
    to a host named `git`, `http` or `https`) or as `<helper>::<address>`
    are skipped with a warning; the next line is used; ssh never runs."""
    ssh = tmp_path / 'ssh'
    ssh.write_text(SSH_RECORDER)
    ssh.chmod(0o755)
    bad = ['git:/srv/meta.git', 'http:/x', 'https:x',
           'https::ext::false']
    site.set_manifest(bad + ['{www}full.bundle'])
    result, commands, gets = site.clone(
        tmp_path / 'clone', extra_env={'GIT_SSH_COMMAND': str(ssh)})
    assert not (tmp_path / 'ssh.log').exists(), \
        (tmp_path / 'ssh.log').read_text()
    for url in bad:
        assert f'({url}); skipping it' in result.err, result.describe()
    assert gets == ['/full.bundle']
    assert 'getbundle' not in commands


def test_server_urls_get_only_http_https_git(site, tmp_path):
    """git runs for the server's URLs with only http, https and git
    allowed (as for submodule URLs): a URL that the user's configuration
    turns into a local path is not fetched (a normal clone follows),
    while `cinnabar.clone`, the user's own line, may name one."""
    mirror = site.www / 'meta.git'
    rewrite = f'url.{mirror}.insteadOf=https://mirror.invalid/meta.git'
    site.set_manifest(['https://mirror.invalid/meta.git#mirror'])
    result, commands, _ = site.clone(tmp_path / 'server', '-c', rewrite)
    assert 'falling back to a normal clone' in result.err, result.describe()
    assert 'getbundle' in commands
    assert branch_refs(tmp_path / 'server') == branch_refs(site.plain)

    mine = 'cinnabar.clone=https://mirror.invalid/meta.git#mirror'
    result, commands, _ = site.clone(tmp_path / 'user', '-c', rewrite,
                                     '-c', mine)
    assert 'falling back' not in result.err, result.describe()
    assert 'getbundle' not in commands


class Trojan:
    """A small hg repository served with the extension (`a`, `b`, then
    `a` changed in the tip), its plain clone, and a bundle server for
    crafted metadata bundles."""

    def __init__(self, hg, hg_serve, bundle_server, tmp_path):
        self.hg = hg
        self.repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
        hg_commit(hg, self.repo, {'b': 'b\n'}, 'second')
        self.node = hg_commit(hg, self.repo, {'a': 'a\nchanged\n'}, 'tip')
        with open(self.repo / '.hg' / 'hgrc', 'a') as f:
            f.write(f'[extensions]\ncinnabarclone = {EXTENSION}\n')
        self.url = hg_url(hg_serve(self.repo).url)
        self.plain = tmp_path / 'plain'
        assert clone(self.url, self.plain, '-q').returncode == 0
        self.www = tmp_path / 'www'
        self.www.mkdir()
        self.bundles = bundle_server(self.www)

    def metadata(self, tmp_path, kind):
        """A git bundle of metadata where the tip's commit has `a` changed
        (`trojan` appended), its hg id kept (hg2git, git2hg and the
        changeset heads moved to the new commit). `kind`: 'file', the
        file revision's hg2git entry moved to the changed blob too (only
        its id then tells), or 'tree', only the commit changed (its tree
        then differs from what its manifest gives). Returns the bundle's
        URL and the changed blob."""
        src = self.copy_plain(tmp_path)
        parts = MetadataParts(src)
        old = git('cinnabar', 'hg2git', self.node, cwd=src).out.strip()
        mode, _, blob, _ = [e for e in ls_tree(src, tree_of(src, old))
                            if e[3] == 'a'][0]
        trojan = hash_blob(src, cat(src, blob) + b'trojan\n')
        tree = edit_tree(src, tree_of(src, old), 'a', (mode, 'blob', trojan))
        raw = git('cat-file', 'commit', old, cwd=src).stdout
        raw = raw.replace(tree_of(src, old).encode(), tree.encode(), 1)
        new = git('hash-object', '-t', 'commit', '-w', '--stdin', cwd=src,
                  input=raw).out.strip()
        if kind == 'file':
            manifest = self.hg('-R', self.repo, 'manifest', '--debug',
                               '-r', self.node).out
            file_node = [line.split()[0] for line in manifest.splitlines()
                         if line.endswith(' a')][0]
            assert parts.notes('hg2git')[file_node][1] == blob
            parts.edit_note('hg2git', file_node, trojan)
        note = parts.notes('git2hg')[old][1]
        move_changeset(parts, self.node, old, new, note)
        parts.store()
        return self.serve(src, kind), trojan

    def copy_plain(self, tmp_path):
        """A copy of the plain clone, to forge metadata in."""
        src = tmp_path / 'src'
        shutil.copytree(self.plain, src, symlinks=True)
        return src

    def clone_from(self, url, dest, *options):
        """Clone with the manifest naming `url` only; the clone passes."""
        (self.repo / '.hg' / 'cinnabar.manifest').write_text(url + '\n')
        result = clone(self.url, dest, *options)
        assert_no_traceback(result)
        assert result.returncode == 0, result.describe()
        return result

    def serve(self, src, name):
        """The URL of a bundle of the metadata of `src`."""
        git('bundle', 'create', self.www / f'{name}.bundle', METADATA_REF,
            cwd=src)
        return self.bundles.url(f'{name}.bundle')

    def forge_author(self, src):
        """The tip's commit forged in the clone `src` (see
        lib.plumbing.forge_author); returns (the real commit, the forged
        one)."""
        text = git('cinnabar', 'data', '-c', self.node, cwd=src).stdout
        return forge_author(src, self.node, text)


@pytest.mark.parametrize('kind,check', [('file', 'all'), ('tree', 'all'),
                                        ('tree', 'none')])
def test_trojan_metadata_is_refused(hg, hg_serve, bundle_server, tmp_path,
                                    kind, check):
    """Metadata in which a real changeset id maps to a commit with other
    contents is checked before it is used (as a normal clone checks what
    it receives, per cinnabar.check; each commit's tree against its
    manifest whatever it says): refused with one line naming the
    changeset, a normal clone follows, and nothing of it stays (objects,
    refs, files)."""
    trojan = Trojan(hg, hg_serve, bundle_server, tmp_path)
    url, blob = trojan.metadata(tmp_path, kind)
    dest = tmp_path / 'clone'
    result = trojan.clone_from(url, dest, '-c', f'cinnabar.check={check}')
    warnings = [line for line in result.err.splitlines()
                if 'does not match' in line]
    assert len(warnings) == 1, result.describe()
    assert f'changeset {trojan.node}' in warnings[0], result.describe()
    assert 'falling back to a normal clone' in result.err
    assert (dest / 'a').read_text() == 'a\nchanged\n'
    assert refs(dest) == refs(trojan.plain)
    assert git('cat-file', '-e', blob, cwd=dest,
               check=False).returncode != 0
    assert not (dest / '.git' / 'cinnabar' / 'incoming').exists()
    assert not list((dest / '.git' / 'cinnabar' / 'downloads').iterdir())
    result = git('cinnabar', 'fsck', '--full', cwd=dest)
    assert 'no problem' in result.err, result.describe()


def converts_to(commit, node, fresh):
    """fsck's line for a changeset commit that is not what an import
    makes of its changeset."""
    return (f'commit {commit} for changeset {node} is not the commit its '
            f'changeset converts to: would be {fresh}')


def test_forged_author_is_refused(hg, hg_serve, bundle_server, tmp_path):
    """Metadata mapping the real tip to a commit with the same tree and
    parents but another author and message, its note's `author` and
    `patch` rebuilding the real changeset (every id checks out): the
    commit is not what an import makes of the changeset, so the metadata
    is refused with one line naming both commits, a normal clone follows,
    and the forged commit is not kept."""
    trojan = Trojan(hg, hg_serve, bundle_server, tmp_path)
    src = trojan.copy_plain(tmp_path)
    real, forged = trojan.forge_author(src)
    dest = tmp_path / 'clone'
    result = trojan.clone_from(trojan.serve(src, 'author'), dest)
    warnings = [line for line in result.err.splitlines()
                if 'does not match' in line]
    assert len(warnings) == 1, result.describe()
    assert f'changeset {trojan.node} (1 problem, the first: ' \
        f'{converts_to(forged, trojan.node, real)})' in warnings[0], \
        result.describe()
    assert 'falling back to a normal clone' in result.err
    assert refs(dest) == refs(trojan.plain)
    assert git('cat-file', '-e', forged, cwd=dest,
               check=False).returncode != 0
    assert not (dest / '.git' / 'cinnabar' / 'incoming').exists()


@pytest.mark.parametrize('full', [False, True])
def test_fsck_reports_a_forged_author(hg, hg_serve, bundle_server, tmp_path,
                                      full):
    """The same forgery in a repository's own metadata: `git cinnabar
    fsck` (the changesets new since the last check) and `fsck --full`
    report it on one line and exit 1."""
    trojan = Trojan(hg, hg_serve, bundle_server, tmp_path)
    src = trojan.copy_plain(tmp_path)
    assert git('cinnabar', 'fsck', cwd=src).returncode == 0
    real, forged = trojan.forge_author(src)
    result = git('cinnabar', 'fsck', *(['--full'] if full else []),
                 cwd=src, check=False)
    assert_no_traceback(result)
    assert result.returncode == 1, result.describe()
    errors = [line for line in result.err.splitlines()
              if line.startswith('error: ')]
    assert errors == ['error: ' + converts_to(forged, trojan.node, real)], \
        result.describe()


def test_unchecked_previous_metadata_is_not_kept(hg, hg_serve, bundle_server,
                                                 tmp_path):
    """Good metadata whose previous metadata commit (its sixth parent) is
    trojaned: the clone takes the good parts in a metadata commit of its
    own without a previous one, so neither rollback nor fsck's marks can
    reach the trojan."""
    trojan = Trojan(hg, hg_serve, bundle_server, tmp_path)
    trojan.metadata(tmp_path, 'tree')
    src = tmp_path / 'src'
    bad = rev_parse(src, METADATA_REF)
    good = parents(trojan.plain,
                   rev_parse(trojan.plain, METADATA_REF))[:PARTS]
    parts = MetadataParts(src)
    parts.parts = dict(zip(parts.parts, good))
    parts.store()
    dest = tmp_path / 'clone'
    result = trojan.clone_from(trojan.serve(src, 'previous'), dest)
    assert 'falling back' not in result.err, result.describe()
    current = rev_parse(dest, METADATA_REF)
    assert parents(dest, current) == good
    assert git('cinnabar', 'rollback', '--candidates',
               cwd=dest).out.splitlines() == [f'{current} (current)']
    refused = git('cinnabar', 'rollback', bad, cwd=dest, check=False)
    assert 'is not in the chain of the current metadata' in refused.err
    assert git('cinnabar', 'fsck', cwd=dest).returncode == 0
    assert git('cinnabar', 'rollback', cwd=dest).returncode == 0
    assert METADATA_REF not in refs(dest)
    assert 'refs/cinnabar/checked' not in refs(dest)


@pytest.mark.parametrize('fault,how', [('check-exit', 'exited with status 3'),
                                       ('check-signal',
                                        'was killed by signal 9')])
def test_failed_check_falls_back_to_a_normal_clone(site, corpus, tmp_path,
                                                   fault, how):
    """The helper checking the metadata fetched dies during the check
    (bin/helper-fault: a wrapper of the real helper, the other helpers of
    the clone untouched): the metadata is not taken as checked; the
    warning says why, the clone gets everything from the server, and it
    is the plain clone."""
    site.set_manifest(['{www}full.bundle'])
    dest = tmp_path / 'clone'
    result, commands, gets = site.clone(dest,
                                        extra_env=helper_fault_env(fault))
    assert gets == ['/full.bundle']
    warnings = [line for line in result.err.splitlines()
                if line.startswith('warning: cinnabarclone failed: ')]
    assert len(warnings) == 1, result.describe()
    assert f'git-cinnabar-helper {how}' in warnings[0], result.describe()
    assert 'falling back to a normal clone' in result.err
    assert 'getbundle' in commands
    assert not (dest / '.git' / 'cinnabar' / 'incoming').exists()
    assert_same_as_plain_clone(dest, site.plain, corpus)
