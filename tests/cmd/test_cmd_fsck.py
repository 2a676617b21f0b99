"""`git cinnabar fsck`: passes on clones of every corpus bundle, and finds
metadata damaged by hand with git plumbing, naming what is wrong.

Damage is made on a clone of renames.hg (copies and renames) by editing
the metadata's notes trees and commits with hash-object, mktree,
commit-tree and update-ref, then storing a new metadata commit as an
update would.
"""

import re
import shutil
import time

import pytest

from lib import env as test_env
from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.checks import error_lines
from lib.corpus import NGINX, Corpus
from lib.git import METADATA_REF, clone, git, hg_url, object_types
from lib.git import refs, rev_parse
from lib.plumbing import MetadataParts, cat, commit_tree, edit_tree
from lib.plumbing import hash_blob, ls_tree, message, move_changeset
from lib.plumbing import parents, tree_of
from lib.proc import run_in_terminal
from lib.push import BRANCH_TIP, Author, clone_with_a_change, git_commit
from lib.push import hg_commit, make_hg_repo, push

BUNDLES = Corpus(test_env.corpus_dir()).hgtests_bundles()
CHECKED = 'refs/cinnabar/checked'
BROKEN = 'refs/cinnabar/broken'
# tampered.hg has a manifest with both `back` (a symlink) and `back/test`:
# a git tree cannot hold both, so the metadata cannot give that manifest
# back (git-cinnabar 0.7.5's fsck reports it the same way).
LOSSY = {'tampered.hg': '50802b7aee1a3c7caf5b8b45a77b1feba16e9c0d'}


def fsck(repo, *args, check=False):
    return git('cinnabar', 'fsck', *args, cwd=repo, check=check)


def make_clone(corpus, tmp_path, bundle='renames.hg'):
    repo = tmp_path / 'clone'
    clone(hg_url(corpus.bundle(bundle)), repo, '--no-checkout')
    return repo


@pytest.mark.parametrize('bundle', BUNDLES)
def test_full_check_passes_on_corpus_clones(bundle, corpus, tmp_path):
    repo = make_clone(corpus, tmp_path, bundle)
    result = fsck(repo, '--full')
    assert_no_traceback(result)
    metadata = rev_parse(repo, METADATA_REF)
    if bundle in LOSSY:
        assert result.returncode == 1, result.describe()
        problems = [line for line in result.err.splitlines()
                    if line.startswith('error: ')]
        assert len(problems) == 1 and LOSSY[bundle] in problems[0], \
            result.describe()
        assert rev_parse(repo, BROKEN) == metadata
        return
    assert result.returncode == 0, result.describe()
    assert 'no problem' in result.err
    # Nor any changeset unlike what Mercurial's commit makes (the
    # check of test_cmd_fsck_unlike_hg): these are Mercurial's own.
    assert 'warning' not in result.err, result.err
    assert rev_parse(repo, CHECKED) == metadata
    assert rev_parse(repo, BROKEN) == ''


def timed_fsck(repo, *args):
    start = time.monotonic()
    result = fsck(repo, *args)
    assert result.returncode == 0, result.describe()
    return result, time.monotonic() - start


@pytest.mark.slow
def test_nginx_full_and_incremental(hg, hg_repos, tmp_path):
    """Half of nginx cloned and checked, the rest fetched: the default
    check covers only the new changesets; --full all of them."""
    full = hg_repos.get(NGINX)
    total = len(hg.nodes(full))
    served = hg_repos.copy(NGINX, tmp_path / 'served', rev=total // 2)
    repo = tmp_path / 'nginx'
    clone(hg_url(served), repo, '--no-checkout', timeout=600)
    first, first_time = timed_fsck(repo)
    assert 'checked all the metadata' in first.err
    new_count = total - len(hg.nodes(served))
    hg('-R', served, 'pull', '-q', full, timeout=600)
    assert_no_traceback(git('fetch', 'origin', cwd=repo, timeout=600))
    new, new_time = timed_fsck(repo)
    assert 'the changesets added since' in new.err, new.err
    assert f'{new_count} changesets' in new.err, new.err
    whole, whole_time = timed_fsck(repo, '--full')
    assert f'all the metadata: {total} changesets' in whole.err
    assert 'warning' not in whole.err, whole.err
    nothing, nothing_time = timed_fsck(repo)
    assert 'nothing new to check' in nothing.err
    print(f'\nnginx fsck: --full {whole_time:.1f}s; default after fetching '
          f'{new_count} changesets {new_time:.1f}s; default with nothing new '
          f'{nothing_time:.1f}s; first half {first_time:.1f}s')


def assert_reports(result, repo, *names):
    """fsck failed, naming every one of `names`, and marked the damage."""
    assert_failed_for_people(result)
    assert result.returncode == 1
    errors = [line for line in result.err.splitlines()
              if line.startswith('error: ')]
    assert errors, result.describe()
    for name in names:
        assert any(name in line for line in errors), (name,
                                                      result.describe())
    assert rev_parse(repo, BROKEN) == rev_parse(repo, METADATA_REF)
    assert 'git cinnabar rollback' in result.err
    assert 'reclone' in result.err


def assert_writes_refused(repo, corpus):
    """With refs/cinnabar/broken set, a fetch of changesets the metadata
    does not have refuses, changing nothing (the fetch refs git reads
    imports from included), with our error only, and no fast-import crash
    report."""
    before = refs(repo)
    other = hg_url(corpus.bundle('test-manifest.hg'))
    result = git('fetch', other, 'refs/heads/*:refs/other/*', cwd=repo,
                 check=False)
    assert_failed_for_people(result)
    assert 'damaged' in result.err and 'rollback' in result.err
    lines = error_lines(result)
    assert len(lines) == 1, lines
    assert refs(repo) == before
    assert not list((repo / '.git').glob('fast_import_crash_*'))


def file_revisions(repo, parts):
    """{hg id: blob} of the file revisions in hg2git."""
    entries = parts.notes('hg2git')
    types = object_types(repo, [oid for _, oid, _ in entries.values()])
    return {key: oid for key, (_, oid, _) in entries.items()
            if types[oid] == 'blob'}


def test_changed_blob(corpus, tmp_path):
    repo = make_clone(corpus, tmp_path)
    assert fsck(repo, '--full').returncode == 0
    parts = MetadataParts(repo)
    hg_id, blob = sorted(file_revisions(repo, parts).items())[0]
    other = hash_blob(repo, cat(repo, blob) + b'changed\n')
    parts.edit_note('hg2git', hg_id, other)
    parts.store()
    assert_reports(fsck(repo, '--full'), repo, hg_id, other)
    assert_writes_refused(repo, corpus)


def test_changed_blob_found_by_the_second_process(
        corpus, tmp_path, monkeypatch):
    """Big repositories have their file revisions checked by a forked
    helper (helper/fsck-files.h); forced here on a small one, a clean
    clone passes and a changed blob gives the same report as without
    it."""
    repo = make_clone(corpus, tmp_path)
    monkeypatch.setenv('CINNABAR_TEST_FSCK_SPLIT', '1')
    assert fsck(repo, '--full').returncode == 0
    parts = MetadataParts(repo)
    hg_id, blob = sorted(file_revisions(repo, parts).items())[-1]
    other = hash_blob(repo, cat(repo, blob) + b'changed\n')
    parts.edit_note('hg2git', hg_id, other)
    parts.store()
    split = fsck(repo, '--full')
    assert_reports(split, repo, hg_id, other)
    monkeypatch.delenv('CINNABAR_TEST_FSCK_SPLIT')
    alone = fsck(repo, '--full')
    assert sorted(split.err.splitlines()) == sorted(alone.err.splitlines())


def test_hg2git_values_of_other_types(corpus, tmp_path):
    """hg2git maps a file revision to a tree, another to an object not in
    the repository: each is named, with what it is; the types of the
    other values (blobs deltified in the pack, commits) are read right,
    after a repack that makes longer delta chains too."""
    repo = make_clone(corpus, tmp_path)
    before = fsck(repo, '--full', check=True).err
    git('repack', '-a', '-d', '-q', '-f', '--depth=250', '--window=250',
        cwd=repo)
    after = fsck(repo, '--full', check=True).err
    counts = re.compile(r'\d+ changesets, \d+ manifests, \d+ file revisions')
    assert counts.search(before).group() == counts.search(after).group(), \
        (before, after)
    parts = MetadataParts(repo)
    (to_tree, _), (to_missing, _) = sorted(
        file_revisions(repo, parts).items())[:2]
    tree = tree_of(repo, rev_parse(repo, METADATA_REF))
    missing = '1' * 40
    parts.edit_note('hg2git', to_tree, tree)
    parts.edit_note('hg2git', to_missing, missing)
    parts.store()
    result = fsck(repo, '--full')
    assert_reports(result, repo, to_tree, to_missing)
    assert f'{to_tree} to {tree}, which is neither a commit nor a blob' \
        in result.err, result.describe()
    assert f'{to_missing} to {missing}, which is not in the repository' \
        in result.err, result.describe()


def test_changed_note(corpus, tmp_path):
    repo = make_clone(corpus, tmp_path)
    parts = MetadataParts(repo)
    commit, (_, note, _) = sorted(parts.notes('git2hg').items())[-1]
    text = cat(repo, note)
    assert text.startswith(b'changeset ')
    edited = text.replace(b'\nmanifest ', b'\nmanifest 0', 1)[:-1] \
        if b'\nmanifest ' in text else text + b'\nextra x:y'
    edited = hash_blob(repo, edited)
    parts.edit_note('git2hg', commit, edited)
    parts.store()
    assert_reports(fsck(repo, '--full'), repo, edited, commit)


def test_removed_hg2git_entry_of_a_file(corpus, tmp_path):
    repo = make_clone(corpus, tmp_path)
    parts = MetadataParts(repo)
    hg_id = sorted(file_revisions(repo, parts))[-1]
    parts.edit_note('hg2git', hg_id, None)
    parts.store()
    assert_reports(fsck(repo, '--full'), repo, hg_id)


def test_removed_hg2git_entry_of_a_changeset(corpus, tmp_path):
    repo = make_clone(corpus, tmp_path)
    parts = MetadataParts(repo)
    commit = rev_parse(repo, 'refs/remotes/origin/HEAD')
    note = parts.notes('git2hg')[commit][1]
    hg_id = cat(repo, note).split(b'\n')[0].split()[1].decode()
    parts.edit_note('hg2git', hg_id, None)
    parts.store()
    assert_reports(fsck(repo, '--full'), repo, hg_id, commit)


def test_manifest_tree_edited_by_hand(corpus, tmp_path):
    repo = make_clone(corpus, tmp_path)
    parts = MetadataParts(repo)
    entries = parts.notes('hg2git')
    types = object_types(repo, [oid for _, oid, _ in entries.values()])
    manifests = {key: oid for key, (_, oid, _) in entries.items()
                 if types[oid] == 'commit'
                 and message(repo, oid) == key.encode()}
    hg_id, commit = sorted(manifests.items())[0]
    mode, kind, file_id, name = ls_tree(repo, commit)[0]
    assert mode == '160000' or kind == 'commit', (mode, kind, name)
    forged = 'f' * 40 if file_id != 'f' * 40 else 'e' * 40
    tree = edit_tree(repo, tree_of(repo, commit), name,
                     (mode, kind, forged))
    edited = commit_tree(repo, tree, parents(repo, commit), hg_id.encode())
    parts.edit_note('hg2git', hg_id, edited)
    parts.store()
    assert_reports(fsck(repo, '--full'), repo, hg_id, tree)


def test_incremental_check_and_limits(corpus, tmp_path):
    repo = make_clone(corpus, tmp_path)
    first = fsck(repo)
    assert first.returncode == 0, first.describe()
    assert 'checked all the metadata' in first.err
    again = fsck(repo)
    assert again.returncode == 0 and 'nothing new' in again.err
    head = rev_parse(repo, 'refs/remotes/origin/HEAD')
    limited = fsck(repo, head)
    assert limited.returncode == 0 and '1 changesets' in limited.err
    bad = fsck(repo, 'no-such-commit')
    assert_failed_for_people(bad)
    assert 'no-such-commit' in bad.err
    mine = git('-c', 'user.name=a', '-c', 'user.email=a@b', 'commit-tree',
               '-m', 'mine', '-p', head, f'{head}^{{tree}}',
               cwd=repo).out.strip()
    other = fsck(repo, mine)
    assert_failed_for_people(other)
    assert 'not the commit of a Mercurial changeset' in other.err
    assert rev_parse(repo, BROKEN) == ''


def test_full_pass_clears_broken(corpus, tmp_path):
    repo = make_clone(corpus, tmp_path)
    git('update-ref', BROKEN, METADATA_REF, cwd=repo)
    assert_writes_refused(repo, corpus)
    result = fsck(repo, '--full')
    assert result.returncode == 0, result.describe()
    assert rev_parse(repo, BROKEN) == ''
    other = hg_url(corpus.bundle('test-manifest.hg'))
    assert_no_traceback(git('fetch', other, 'refs/heads/*:refs/other/*',
                            cwd=repo))
    assert git('for-each-ref', 'refs/other/', cwd=repo).out


def test_partial_pass_keeps_broken(corpus, tmp_path):
    """Only a full pass clears refs/cinnabar/broken: one over given
    commits has not looked at the rest (a plain fsck of broken metadata
    checks everything:
    test_damage_found_by_a_partial_check_is_not_passed_over)."""
    repo = make_clone(corpus, tmp_path)
    assert fsck(repo).returncode == 0
    current = rev_parse(repo, METADATA_REF)
    git('update-ref', BROKEN, current, cwd=repo)
    result = fsck(repo, rev_parse(repo, 'refs/remotes/origin/HEAD'))
    assert result.returncode == 0, result.describe()
    assert rev_parse(repo, BROKEN) == current


def test_changeset_commit_with_another_tree(corpus, tmp_path):
    """A changeset's commit replaced by one with the same metadata and
    another tree (one blob changed), both mappings moved to it: the
    changeset id still comes out right, the tree check finds it."""
    repo = make_clone(corpus, tmp_path)
    parts = MetadataParts(repo)
    old = rev_parse(repo, 'refs/remotes/origin/HEAD')
    _, note, _ = parts.notes('git2hg')[old]
    hg_id = cat(repo, note).split(b'\n')[0].split()[1].decode()
    mode, kind, blob, name = [e for e in ls_tree(repo, tree_of(repo, old))
                              if e[1] == 'blob'][0]
    other = hash_blob(repo, cat(repo, blob) + b'more\n')
    tree = edit_tree(repo, tree_of(repo, old), name, (mode, kind, other))
    raw = git('cat-file', 'commit', old, cwd=repo).stdout
    raw = raw.replace(tree_of(repo, old).encode(), tree.encode(), 1)
    new = git('hash-object', '-t', 'commit', '-w', '--stdin', cwd=repo,
              input=raw).out.strip()
    parts.edit_note('hg2git', hg_id, new)
    parts.edit_note('git2hg', old, None)
    parts.add_note('git2hg', new, note)
    parts.store()
    result = fsck(repo, "--full")
    assert_reports(result, repo, hg_id, new, tree)


def test_push_refused_while_broken(hg, hg_serve, tmp_path, monkeypatch):
    """A push with refs/cinnabar/broken set sends nothing to the server."""
    server, work, _ = clone_with_a_change(hg, hg_serve, tmp_path,
                                          monkeypatch.setenv, 'local')
    git('update-ref', BROKEN, METADATA_REF, cwd=work)
    nodes = hg.nodes(server)
    before = git('for-each-ref', cwd=work).out
    result = push(work, 'origin', f'HEAD:{BRANCH_TIP.format("default")}')
    assert result.returncode != 0
    assert 'damaged' in result.err and 'rollback' in result.err
    assert hg.nodes(server) == nodes
    assert git('for-each-ref', cwd=work).out == before


def test_recovery_by_rollback(corpus, tmp_path):
    """The way out fsck points to: rollback --fsck goes back to the
    checked metadata, clears the mark, and fetching works again."""
    repo = make_clone(corpus, tmp_path)
    assert fsck(repo).returncode == 0
    good = rev_parse(repo, METADATA_REF)
    parts = MetadataParts(repo)
    hg_id = sorted(file_revisions(repo, parts))[0]
    parts.edit_note('hg2git', hg_id, None)
    parts.store()
    result = fsck(repo, '--full')
    assert_reports(result, repo, hg_id)
    assert f'rollback --fsck` to go back to {good}' in result.err
    damaged = rev_parse(repo, METADATA_REF)
    git('cinnabar', 'rollback', '--fsck', cwd=repo)
    assert rev_parse(repo, METADATA_REF) == good
    # As git-cinnabar: the mark stays on the damaged metadata.
    assert rev_parse(repo, BROKEN) == damaged
    assert fsck(repo, '--full').returncode == 0
    other = hg_url(corpus.bundle('test-manifest.hg'))
    assert_no_traceback(git('fetch', other, 'refs/heads/*:refs/other/*',
                            cwd=repo))
    assert fsck(repo).returncode == 0


def test_other_writers_refused_and_reclone_recovers(corpus, tmp_path):
    """`git cinnabar unbundle` and `git cinnabar fetch` write metadata too:
    they refuse while it is marked broken; `reclone`, the other way out,
    rebuilds it from the remote and clears the mark."""
    repo = make_clone(corpus, tmp_path)
    expected = corpus.expected('renames.hg')
    parts = MetadataParts(repo)
    hg_id = sorted(file_revisions(repo, parts))[0]
    parts.edit_note('hg2git', hg_id, None)
    parts.store()
    assert_reports(fsck(repo, '--full'), repo, hg_id)
    before = git('for-each-ref', cwd=repo).out
    bundle = corpus.bundle('test-manifest.hg')
    for command in (['unbundle', bundle],
                    ['fetch', hg_url(bundle), sorted(expected)[0]]):
        result = git('cinnabar', *command, cwd=repo, check=False)
        assert_failed_for_people(result)
        assert 'damaged' in result.err and 'rollback' in result.err
        assert git('for-each-ref', cwd=repo).out == before
    assert_no_traceback(git('cinnabar', 'reclone', cwd=repo))
    assert rev_parse(repo, BROKEN) == ''
    assert fsck(repo, '--full').returncode == 0
    for node, commit in expected.items():
        assert git('cinnabar', 'hg2git', node, cwd=repo).out.strip() == commit


def misplace_parents(raw):
    """A commit's text with its `parent` lines moved after `committer`:
    `git fsck` accepts it, and git reads it as a root commit."""
    header, _, body = raw.partition(b'\n\n')
    lines = header.split(b'\n')
    moved = [line for line in lines if line.startswith(b'parent ')]
    kept = [line for line in lines if not line.startswith(b'parent ')]
    return b'\n'.join(kept + moved) + b'\n\n' + body


def test_parent_after_committer_is_no_parent(corpus, tmp_path):
    """The head changeset's commit replaced by one with its `parent` line
    after `committer`, every mapping (and the changeset heads) moved to
    it: git sees a root commit, so the changeset id does not come out
    right; read as the commit's parent, it would, and fsck pass."""
    repo = make_clone(corpus, tmp_path)
    parts = MetadataParts(repo)
    old = rev_parse(repo, 'refs/remotes/origin/HEAD')
    assert len(parents(repo, old)) == 1
    _, note, _ = parts.notes('git2hg')[old]
    hg_id = cat(repo, note).split(b'\n')[0].split()[1].decode()
    raw = misplace_parents(git('cat-file', 'commit', old, cwd=repo).stdout)
    new = git('hash-object', '-t', 'commit', '-w', '--stdin', cwd=repo,
              input=raw).out.strip()
    assert git('fsck', '--strict', '--no-dangling', cwd=repo).returncode == 0
    assert parents(repo, new) == []
    move_changeset(parts, hg_id, old, new, note)
    parts.store()
    result = fsck(repo, '--full')
    assert_reports(result, repo, hg_id, new)
    assert 'instead' in result.err, result.describe()


def test_files_meter_counts_both_processes(corpus, tmp_path):
    """In a terminal, `fsck --full`'s `Checking files` meter ends on
    every file revision checked, those the forked helper checked too."""
    repo = make_clone(corpus, tmp_path)
    lines = run_in_terminal(['env', 'CINNABAR_TEST_FSCK_SPLIT=1', 'git',
                             'cinnabar', 'fsck', '--full'], cwd=repo)
    summary = lines[-1][1]
    files = int(re.search(r'(\d+) file revisions', summary).group(1))
    assert files > 1, summary
    last = [line for _, line in lines if line.startswith('Checking files')]
    assert last[-1] == f'Checking files: 100% ({files}/{files}), done.', \
        lines


def hinted_commands(result):
    """The `git cinnabar ...` commands the hint lines of `result` name,
    and those its fatal line says to run (the helper's says it there)."""
    commands = []
    for line in result.err.splitlines():
        if line.startswith('hint: '):
            commands += re.findall(r'`(git cinnabar [^`]*)`', line)
        elif line.startswith('fatal: '):
            commands += re.findall(r'(?:run|or) `(git cinnabar [^`]*)`',
                                   line)
    return [command.split()[2:] for command in commands]


def assert_hints_lead_out(repo, result, tmp_path, what):
    """Every command the hints of `result` name works in `repo` as it is
    (each tried on a copy); the first repairs it: a fetch then works and
    fsck passes."""
    commands = hinted_commands(result)
    assert commands, f'{what}: no hint\n{result.describe()}'
    for number, command in enumerate(commands):
        copy = tmp_path / f'{what}-{number}'
        shutil.copytree(repo, copy, symlinks=True)
        tried = git('cinnabar', *command, cwd=copy, check=False)
        assert tried.returncode == 0, (what, tried.describe())
        if number == 0:
            assert_no_traceback(git('fetch', 'origin', cwd=copy))
            assert fsck(copy).returncode == 0, (what, command)


def damage_note(repo):
    """The git2hg note of the last changeset fetched, changed."""
    parts = MetadataParts(repo)
    commit, (_, note, _) = sorted(parts.notes('git2hg').items())[-1]
    text = cat(repo, note)
    parts.edit_note('git2hg', commit, hash_blob(repo, text + b'\nextra x:y'))
    parts.store()


def damage_metadata_ref(repo):
    """refs/cinnabar/metadata pointing to a tree."""
    git('update-ref', METADATA_REF, rev_parse(repo, 'HEAD^{tree}'),
        cwd=repo)


def damage_parents(repo):
    """A metadata commit with a parent fewer than its parts."""
    current = rev_parse(repo, METADATA_REF)
    shorter = commit_tree(repo, tree_of(repo, current),
                          parents(repo, current)[:4], message(repo, current))
    git('update-ref', METADATA_REF, shorter, cwd=repo)


@pytest.mark.parametrize('damage', [damage_note, damage_metadata_ref,
                                    damage_parents],
                         ids=['note', 'metadata-ref', 'parents'])
def test_every_recovery_hint_leads_out(hg, tmp_path, damage):
    """With a git2hg note damaged in the last fetch (or the metadata ref
    naming a tree), what fsck, a push, `rollback --fsck` (never checked)
    and a fetch with nothing new say to run works there, and the first
    thing each names repairs it."""
    server = make_hg_repo(hg, tmp_path / 'server', {'a': 'a\n'})
    repo = tmp_path / 'clone'
    clone(hg_url(server), repo)
    hg_commit(hg, server, {'b': 'b\n'}, 'second')
    assert_no_traceback(git('fetch', 'origin', cwd=repo))
    git('checkout', '-q', 'origin/branches/default/tip', cwd=repo)
    (repo / 'c').write_text('c\n')
    git('add', 'c', cwd=repo)
    git_commit(repo, 'mine', Author('Pusher', 'p@example.com'),
               '1700000000 +0000')
    damage(repo)
    checked = fsck(repo, '--full')
    assert_failed_for_people(checked, ('is damaged', 'is not a commit'))
    assert_hints_lead_out(repo, checked, tmp_path, 'fsck')
    pushed = git('push', '--dry-run', 'origin',
                 'HEAD:refs/heads/branches/default/tip', cwd=repo,
                 check=False)
    assert_failed_for_people(pushed, 'damaged')
    assert_hints_lead_out(repo, pushed, tmp_path, 'push')
    back = git('cinnabar', 'rollback', '--fsck', cwd=repo, check=False)
    assert_failed_for_people(back, 'no checked metadata')
    assert_hints_lead_out(repo, back, tmp_path, 'rollback')
    fetched = git('fetch', 'origin', cwd=repo, check=False)
    if damage is damage_note:
        assert fetched.returncode == 0, fetched.describe()
        assert 'warning: the cinnabar metadata is damaged' in fetched.err
    else:
        assert_failed_for_people(fetched, 'damaged')
    assert_hints_lead_out(repo, fetched, tmp_path, 'fetch')


def checked_then_fetched(hg, tmp_path):
    """A clone of one changeset (file `a`) that fsck passed, then a fetch
    of a second one (changing `a`, adding `b`): (clone, served hg
    repository, the checked metadata, the changesets' commits)."""
    served = make_hg_repo(hg, tmp_path / 'served', {'a': 'a\n'})
    repo = tmp_path / 'clone'
    clone(hg_url(served), repo, '--no-checkout')
    assert fsck(repo).returncode == 0
    checked = rev_parse(repo, CHECKED)
    hg_commit(hg, served, {'a': 'a again\n', 'b': 'b\n'}, 'second')
    assert_no_traceback(git('fetch', 'origin', cwd=repo))
    tip = rev_parse(repo, 'refs/remotes/origin/HEAD')
    return repo, served, checked, [rev_parse(repo, tip + '^'), tip]


def spoil_file(hg, repo, served, path, rev):
    """The file revision of `path` in changeset `rev` mapped to another
    blob, stored as new metadata: (its hg id, the blob)."""
    manifest = hg('-R', served, 'manifest', '--debug', '-r', rev).out
    [hg_id] = [line.split()[0] for line in manifest.splitlines()
               if line.split()[-1] == path]
    other = hash_blob(repo, b'not ' + path.encode() + b'\n')
    parts = MetadataParts(repo)
    parts.edit_note('hg2git', hg_id, other)
    parts.store()
    return hg_id, other


@pytest.mark.parametrize('how', ['incremental', 'commit'])
def test_partial_check_marks_the_damage(how, hg, corpus, tmp_path):
    """Damage in what a partial check covers (the changesets added since
    the checked metadata, or a commit given) is reported and marked as a
    full check's is: refs/cinnabar/broken is the current metadata, writes
    are refused, refs/cinnabar/checked stays."""
    repo, served, checked, commits = checked_then_fetched(hg, tmp_path)
    hg_id, other = spoil_file(hg, repo, served, 'b', '1')
    result = fsck(repo, *([commits[1]] if how == 'commit' else []))
    assert_reports(result, repo, hg_id, other)
    assert rev_parse(repo, CHECKED) == checked
    assert_writes_refused(repo, corpus)


def test_damage_found_by_a_partial_check_is_not_passed_over(hg, corpus,
                                                            tmp_path):
    """Damage in the first changeset (its revision of `a`, which the
    second changes), found by the check of its commit: the next plain
    fsck checks everything (an incremental one would look at the second
    changeset only, pass, and mark the damaged metadata checked) and
    fails again; the mark and refs/cinnabar/checked stay,
    writes stay refused; `rollback --fsck` goes back to the metadata
    checked before the damage."""
    repo, served, checked, commits = checked_then_fetched(hg, tmp_path)
    hg_id, other = spoil_file(hg, repo, served, 'a', '0')
    damaged = rev_parse(repo, METADATA_REF)
    assert_reports(fsck(repo, commits[0]), repo, hg_id, other)
    result = fsck(repo)
    assert 'checked all the metadata' not in result.err
    assert_reports(result, repo, hg_id, other)
    assert rev_parse(repo, BROKEN) == damaged
    assert rev_parse(repo, CHECKED) == checked
    assert_writes_refused(repo, corpus)
    git('cinnabar', 'rollback', '--fsck', cwd=repo)
    assert rev_parse(repo, METADATA_REF) == checked
