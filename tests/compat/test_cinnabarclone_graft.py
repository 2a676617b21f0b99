"""cinnabarclone of the metadata of a grafted repository (its changesets
recorded onto the commits of a git mirror, cinnabar.graft: see
compat/test_graft.py, whose repositories these tests use).

Such metadata holds commits that are not what an import makes of their
changesets. A clone takes them only where grafting was asked for
(`cinnabar.graft`, or a manifest line's `graft=` naming commits the
repository has), and only commits it already has, each as a fetch
grafts (tree, parents, date, and the changeset rebuilt from the commit
giving its hg id); otherwise the metadata is refused, as any metadata
whose commits are not our conversion, and a normal clone follows (with
`cinnabar.check=cinnabarclone`, a fatal error instead).
"""

import pytest

from lib.checks import assert_died_as_git_dies, assert_failed_for_people
from lib.checks import assert_no_traceback
from lib.git import METADATA_REF, clone, git, git2hg, refs
from lib.plumbing import MetadataParts, cat, commit_tree, forge_author
from lib.plumbing import hash_blob, ls_tree, mktree, move_changeset
from lib.plumbing import parents
from test_graft import Project, Template

TIP = 'refs/remotes/hg/branches/default/tip'


@pytest.fixture(scope='module')
def template(hg, tmp_path_factory):
    return Template(hg, tmp_path_factory.mktemp('graft'))


class Site:
    """A project (test_graft.Project) whose hg server offers, through
    cinnabarclone, the metadata of a repository grafted onto the mirror,
    from a bundle server."""

    def __init__(self, project, hg, bundle_server):
        self.project = project
        self.hg = hg
        self.grafted = project.mirror_clone('grafted')
        result = git('-c', 'cinnabar.graft=true', 'fetch', '-q', 'hg',
                     cwd=self.grafted)
        assert_no_traceback(result)
        assert git2hg(self.grafted, project.expected) == project.expected
        self.main = refs(self.grafted)['refs/heads/main']
        self.root = git('rev-list', '--max-parents=0', self.main,
                        cwd=self.grafted).out.strip()
        self.www = project.tmp / 'www'
        self.www.mkdir()
        self.server = bundle_server(self.www)
        self.tip_node = project.expected[self.main]

    def offer(self, name, *lines):
        """The grafted metadata as bundle `name`, offered with the
        manifest `lines` (`{url}` is the bundle's URL)."""
        git('bundle', 'create', self.www / name, METADATA_REF,
            cwd=self.grafted)
        url = self.server.url(name)
        (self.project.hg_repo / '.hg' / 'cinnabar.manifest').write_text(
            ''.join(line.format(url=url) + '\n' for line in lines))
        return url

    def text(self, node):
        """The raw text of changeset `node`, as Mercurial has it."""
        return self.hg('-R', self.project.hg_repo, 'debugdata', '-c',
                       node).stdout

    def fetch(self, repo, *config):
        """`git fetch hg` in `repo` (with `-c` settings), which passes."""
        options = [arg for item in config for arg in ('-c', item)]
        result = git(*options, 'fetch', 'hg', cwd=repo)
        assert_no_traceback(result)
        return result


@pytest.fixture
def site(template, hg, hg_serve, bundle_server, tmp_path):
    # A mirror grafted onto without a replace commit: metadata holding
    # one is refused by cinnabarclone (see cinnabar.cinnabarclone).
    project = Project(template, hg_serve, tmp_path)
    project.sign_mirror()
    return Site(project, hg, bundle_server)


def assert_taken(site, repo, result, url):
    assert f'Fetching cinnabar metadata from {url}' in result.err
    assert 'cinnabarclone failed' not in result.err, result.describe()
    project = site.project
    assert git2hg(repo, project.expected) == project.expected
    assert refs(repo)[TIP] == site.main
    fsck = git('cinnabar', 'fsck', '--full', cwd=repo)
    assert 'no problem' in fsck.out + fsck.err, fsck.describe()


def refusals(result):
    return [line for line in result.err.splitlines()
            if line.startswith('warning: cinnabarclone failed: ')]


@pytest.mark.parametrize('named,setting', [
    ('root', None), ('second', 'cinnabar.graft=true')])
def test_grafted_metadata_is_taken_where_grafting_is_asked(site, named,
                                                           setting):
    """A `graft=` line naming a commit of the mirror (its root, or the
    commit of `second`) with descendants the metadata grafts changesets
    onto too: a clone of the mirror takes it, with or without
    cinnabar.graft, and gets the grafted ids (git-cinnabar 0.7.5, by hand:
    the same with `second`; naming the root, it dies in `git rev-list
    --ancestry-path`). A plain clone, which asked for no grafting and has
    none of the commits, refuses the same metadata on a plain line
    (0.7.5 takes it unchecked)."""
    commit = site.root if named == 'root' else git(
        'rev-parse', site.main + '^2', cwd=site.grafted).out.strip()
    assert site.project.expected[commit]
    url = site.offer('graft.bundle', f'{{url}} graft={commit}')
    repo = site.project.mirror_clone('user')
    result = site.fetch(repo, *filter(None, [setting]))
    assert_taken(site, repo, result, url)

    site.offer('graft.bundle', '{url}')
    plain = site.project.tmp / 'plain'
    result = clone(site.project.url, plain, '--no-checkout')
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    refused = refusals(result)
    assert len(refused) == 1, result.describe()
    assert 'is not the commit its changeset converts to' in refused[0]
    assert 'falling back to a normal clone' in result.err
    reference = refs(site.project.reference)
    tip = reference['refs/remotes/origin/branches/default/tip']
    assert refs(plain)['refs/remotes/origin/branches/default/tip'] == tip
    assert not set(site.project.expected) & set(
        git('rev-list', '--all', cwd=plain).out.split())


def forge_date(site):
    """In the grafted repository: the tip changeset's commit replaced by
    one with the same tree, parents, author and message but a second
    later, its note's `patch` putting the changeset's date back (the hg
    id checks out); the new commit is also put in a clone of the mirror,
    as `refs/heads/dated`. Returns (that clone, the new commit)."""
    repo = site.grafted
    parts = MetadataParts(repo)
    node = site.tip_node
    raw = git('cat-file', 'commit', site.main, cwd=repo).stdout
    text = site.text(node)
    manifest, user, rest = text.split(b'\n', 2)
    date = rest.split(b' ')[0]
    later = b'%d' % (int(date) + 1)
    assert len(later) == len(date) and b' %s ' % date in raw
    dated_raw = raw.replace(b' %s ' % date, b' %s ' % later)
    dated = git('hash-object', '-t', 'commit', '-w', '--stdin', cwd=repo,
                input=dated_raw).out.strip()
    start = len(manifest) + len(user) + 2
    edit = b'%d,%d,%s' % (start, start + len(date), date)
    fields = cat(repo, parts.notes('git2hg')[site.main][1]).split(b'\n')
    patches = [f[len(b'patch '):] for f in fields if f.startswith(b'patch ')]
    fields = [f for f in fields if not f.startswith(b'patch ')]
    fields.append(b'patch ' + b'\0'.join([edit] + patches))
    move_changeset(parts, node, site.main, dated,
                   hash_blob(repo, b'\n'.join(fields)))
    parts.store()
    # Our own fsck takes it: the ids check out, and this repository
    # grafted.
    fsck = git('cinnabar', 'fsck', '--full', cwd=repo)
    assert 'no problem' in fsck.out + fsck.err, fsck.describe()
    user_repo = site.project.mirror_clone('user')
    git('fetch', '-q', repo, f'{dated}:refs/heads/dated', cwd=user_repo)
    return user_repo, dated


@pytest.mark.parametrize('forgery', ['author', 'date'])
def test_forged_grafts_are_refused(site, forgery):
    """With grafting asked for (cinnabar.graft=true and a `graft=` line),
    a changeset mapped to a commit that is not a graft of it is refused:
    one the source brought, with the real tree, parents and date but
    another author and message (its note rebuilding the real changeset);
    or one the repository has, but dated a second later (its note's
    patch putting the date back). A normal clone follows, with grafting:
    the tip gets the mirror's commit."""
    if forgery == 'author':
        real, forged = forge_author(site.grafted, site.tip_node,
                                    site.text(site.tip_node))
        repo = site.project.mirror_clone('user')
        url = site.offer('forged.bundle', f'{{url}} graft={site.main}')
        problem = (f'commit {forged} for changeset {site.tip_node} is not '
                   'the commit its changeset converts to')
    else:
        repo, forged = forge_date(site)
        url = site.offer('forged.bundle', f'{{url}} graft={forged}')
        problem = (f'commit {forged} for changeset {site.tip_node} is not '
                   "a graft of it: its author date is not the changeset's")
    result = site.fetch(repo, 'cinnabar.graft=true')
    assert f'Fetching cinnabar metadata from {url}' in result.err
    refused = refusals(result)
    assert len(refused) == 1 and problem in refused[0], result.describe()
    assert 'falling back to a normal clone' in result.err
    assert git2hg(repo, site.project.expected) == site.project.expected
    assert refs(repo)[TIP] == site.main
    if forgery == 'author':
        assert git('cat-file', '-e', forged, cwd=repo,
                   check=False).returncode != 0


def test_check_cinnabarclone_makes_a_failure_fatal(site):
    """`cinnabar.check=cinnabarclone` (git-cinnabar's): metadata that is
    refused, or a source that fails, ends the fetch with one fatal line,
    the repository as it was; `no-cinnabarclone` after it falls back."""
    site.offer('graft.bundle', '{url}')
    repo = site.project.mirror_clone('user')
    before = refs(repo)
    for check in ('cinnabarclone', 'nodeid,cinnabarclone'):
        result = git('-c', f'cinnabar.check={check}', 'fetch', 'hg',
                     cwd=repo, check=False)
        assert_failed_for_people(result)
        assert_died_as_git_dies(result)
        # Ours, then at most the line git adds after a failed import
        # where it outlived SIGINT (cinnabar.remote, stop_git).
        fatal = [line for line in result.err.splitlines()
                 if line.startswith('fatal: ')]
        assert fatal[0].startswith(
            'fatal: cinnabarclone failed: the metadata from '), \
            result.describe()
        assert all(line.startswith('fatal: could not read ref ')
                   for line in fatal[1:]), result.describe()
        assert 'falling back' not in result.err
        assert refs(repo) == before
        assert not (repo / '.git' / 'cinnabar' / 'incoming').exists()

    (site.project.hg_repo / '.hg' / 'cinnabar.manifest').write_text(
        site.server.url('missing.bundle') + '\n')
    result = git('-c', 'cinnabar.check=cinnabarclone', 'fetch', 'hg',
                 cwd=repo, check=False)
    assert_failed_for_people(result)
    assert_died_as_git_dies(result)
    assert refs(repo) == before
    dest = site.project.tmp / 'clone'
    result = clone(site.project.url, dest, '--no-checkout', '-c',
                   'cinnabar.check=cinnabarclone', check=False)
    assert_died_as_git_dies(result)
    assert 'fatal: cinnabarclone failed: ' in result.err
    assert not dest.exists()

    result = site.fetch(repo, 'cinnabar.check=cinnabarclone,no-cinnabarclone')
    assert 'falling back to a normal clone' in result.err
    assert refs(repo)[TIP] != site.main


@pytest.fixture
def replacing_site(template, hg, hg_serve, bundle_server, tmp_path):
    # The mirror as make_mirror writes it ('rewritten'): the first
    # commit's message needs a patch, so the graft replaces it with a
    # commit of its own (a replace map in the metadata tree).
    return Site(Project(template, hg_serve, tmp_path), hg, bundle_server)


REPLACE = 'refs/cinnabar/replace/'


def metadata_state(repo):
    """What a repository's metadata is: the tree and parts of the
    metadata commit, refs/notes/cinnabar and the replace refs."""
    commit = refs(repo)[METADATA_REF]
    tree = git('rev-parse', f'{commit}^{{tree}}', cwd=repo).out.strip()
    return (tree, parents(repo, commit)[:5],
            refs(repo, 'refs/notes/cinnabar', REPLACE))


def compared_refs(repo):
    """The refs of `repo` but the remote-tracking branches of its origin
    (each clone has its own) and what fsck marks checked."""
    return {name: oid for name, oid in refs(repo).items()
            if not name.startswith('refs/remotes/origin/')
            and name != 'refs/cinnabar/checked'}


def replace_refs(repo):
    return refs(repo, REPLACE)


@pytest.mark.parametrize('asked', ['setting', 'line'])
def test_metadata_with_a_replace_map_is_taken_where_grafting_is_asked(
        replacing_site, hg, asked):
    """Metadata grafted onto a mirror whose first commit is replaced (its
    metadata tree maps the mirror's commit to a commit of git-cinnabar's
    own), taken by a clone of the mirror with cinnabar.graft=true or a
    `graft=` line: the same metadata, refs and replace refs as the
    repository that grafted, the hg ids Mercurial gives; fsck --full
    clean, a second fetch changes nothing."""
    site = replacing_site
    grafted = metadata_state(site.grafted)
    replaced = replace_refs(site.grafted)
    assert len(replaced) == 1
    mirror_commit = next(iter(replaced))[len(REPLACE):]
    assert mirror_commit == site.root
    # cinnabar.graft=true takes only `graft=` lines (git-cinnabar's rule).
    url = site.offer('graft.bundle', f'{{url}} graft={site.main}')
    config = ['cinnabar.graft=true'] if asked == 'setting' else []
    repo = site.project.mirror_clone('user')
    result = site.fetch(repo, *config)
    assert_taken(site, repo, result, url)
    assert metadata_state(repo) == grafted
    assert replace_refs(repo) == replaced
    # hg's own ids of the commits.
    hg_ids = {line.split()[1] for line in hg(
        '-R', site.project.hg_repo, 'log', '-T', '{rev} {node}\n'
    ).out.splitlines()}
    assert set(git2hg(repo, site.project.expected).values()) == hg_ids
    assert compared_refs(repo) == compared_refs(site.grafted)
    before = refs(repo)
    again = site.fetch(repo, *config)
    assert 'Fetching cinnabar metadata' not in again.err
    assert refs(repo) == before


def test_metadata_with_a_replace_map_is_refused_without_grafting(
        replacing_site):
    """The same metadata, grafting not asked for: refused (a normal clone
    follows, which grafts nothing); fatal with cinnabar.check=
    cinnabarclone, the repository as it was."""
    site = replacing_site
    site.offer('graft.bundle', '{url}')
    repo = site.project.mirror_clone('user')
    before = refs(repo)
    result = git('-c', 'cinnabar.check=cinnabarclone', 'fetch', 'hg',
                 cwd=repo, check=False)
    assert_failed_for_people(result)
    assert 'fatal: cinnabarclone failed: the metadata ' in result.err
    assert 'taken only where grafting is asked for' in result.err
    assert refs(repo) == before
    result = site.fetch(repo)
    refused = refusals(result)
    assert len(refused) == 1, result.describe()
    assert 'taken only where grafting is asked for' in refused[0]
    assert 'falling back to a normal clone' in result.err
    assert refs(repo)[TIP] != site.main
    assert not replace_refs(repo)


def edit_replace_map(site, edit):
    """In the grafted repository: a metadata commit whose replace map is
    `edit` ([(mode, type, oid, name)] -> the same) of the current one,
    the rest as it is, made the metadata."""
    repo = site.grafted
    commit = refs(repo)[METADATA_REF]
    tree = git('rev-parse', f'{commit}^{{tree}}', cwd=repo).out.strip()
    text = git('cat-file', 'commit', commit, cwd=repo).stdout.partition(
        b'\n\n')[2]
    forged = commit_tree(repo, mktree(repo, edit(ls_tree(repo, tree))),
                         parents(repo, commit), text)
    git('update-ref', METADATA_REF, forged, cwd=repo)


def test_a_replace_of_a_commit_the_user_lacks_is_refused(replacing_site):
    """The replace map edited to replace a commit of the source's own
    (same tree, date and parents as the mirror's root, another committer)
    instead of the mirror's: refused, whatever the rest; the fetch then
    grafts by itself, fsck --full clean."""
    site = replacing_site
    repo = site.grafted
    root_raw = git('cat-file', 'commit', site.root, cwd=repo).stdout
    other_raw = root_raw.replace(b'Mirror Bot', b'Other Bot')
    other = git('hash-object', '-t', 'commit', '-w', '--stdin', cwd=repo,
                input=other_raw).out.strip()
    assert [e[3] for e in ls_tree(repo, refs(repo)[METADATA_REF])] == \
        [site.root]
    edit_replace_map(site, lambda entries: [
        (m, k, o, other if n == site.root else n) for m, k, o, n in entries])
    url = site.offer('forged.bundle', f'{{url}} graft={site.main}')
    user = site.project.mirror_clone('user')
    result = site.fetch(user, 'cinnabar.graft=true')
    assert f'Fetching cinnabar metadata from {url}' in result.err
    refused = refusals(result)
    assert len(refused) == 1, result.describe()
    assert (f'replaces {other}, which is not one of this repository\'s '
            'commits a fetch could graft onto') in refused[0]
    assert 'falling back to a normal clone' in result.err
    assert refs(user)[TIP] == site.main
    assert list(replace_refs(user)) == [REPLACE + site.root]
    fsck = git('cinnabar', 'fsck', '--full', cwd=user)
    assert 'no problem' in fsck.out + fsck.err, fsck.describe()


@pytest.mark.parametrize('forgery', ['author', 'replaced'])
def test_a_replace_map_does_not_let_other_commits_in(replacing_site,
                                                     forgery):
    """Metadata with a replace map is checked as any: a changeset mapped
    to a commit the source brought, with another author and message (its
    note rebuilding the real changeset), is refused; so is a replace map
    replacing the mirror's tip (a commit the user has) instead of its
    root, with the root's replacement, whose tree and date are not the
    tip's. The fetch then grafts by itself."""
    site = replacing_site
    if forgery == 'author':
        _, forged = forge_author(site.grafted, site.tip_node,
                                 site.text(site.tip_node))
        problem = (f'commit {forged} for changeset {site.tip_node} is not '
                   'the commit its changeset converts to')
    else:
        edit_replace_map(site, lambda entries: [
            (m, k, o, site.main) for m, k, o, n in entries])
        replacement = refs(site.grafted)[REPLACE + site.root]
        problem = (f'replace: commit {site.main} is replaced by '
                   f'{replacement}, whose tree or author date is not its '
                   'own')
    url = site.offer('forged.bundle', f'{{url}} graft={site.main}')
    user = site.project.mirror_clone('user')
    result = site.fetch(user, 'cinnabar.graft=true')
    assert f'Fetching cinnabar metadata from {url}' in result.err
    refused = refusals(result)
    assert len(refused) == 1 and problem in refused[0], result.describe()
    assert 'falling back to a normal clone' in result.err
    assert git2hg(user, site.project.expected) == site.project.expected
    assert list(replace_refs(user)) == [REPLACE + site.root]
