"""Rebuilding the metadata and the hg-derived history from the remotes,
keeping the user's refs (`git cinnabar reclone`).

1. The current metadata commit is kept in `refs/cinnabar/reclone-backup`
   for the time of the reclone, and a helper is started on it ("old
   helper"); it reads the metadata at start, so it keeps answering from
   it when the ref goes.
2. `refs/cinnabar/metadata` is removed and a second helper imports all
   the heads of every remote whose URL is `hg::...` into new metadata,
   pending (nothing visible yet). With `cinnabar.graft`, the commits of
   the refs (cinnabar.graft) are the graft candidates: the commits of a
   git mirror fetched into the repository then take the place of those
   of the old metadata (graft.h prefers the commits the conversion would
   not make).
3. For the commits reachable from the refs (all refs but refs/cinnabar/)
   and not from the new changeset heads, parents first:
   - a commit the old metadata maps to a changeset and back (git2hg then
     hg2git give the commit again) is replaced by the new commit of that
     changeset, when there is one (else kept, with a warning);
   - any other commit is local: it is kept when none of its parents
     changed, else written again with the new parents and everything
     else as it was (tree, author, committer, message, encoding); a
     signature, which would no longer match, is dropped.
4. The new metadata is made visible (`finish`), then every ref whose
   commit changed is moved, in one `git update-ref --stdin` transaction
   that checks each ref still has its old value.

When anything fails before the end, `refs/cinnabar/metadata` is put back
to its old value (or removed, when there was none) and no other ref has
moved. Commits of the old history that no remote has any more are kept.
"""

import sys

from cinnabar import discovery, git, graft, hg, metadata
from cinnabar.errors import Abort
from cinnabar.helper import Helper, HelperError
from cinnabar.hg.url import strip_prefix
from cinnabar.ids import GitId, NULL_GIT
from cinnabar.record import record
from cinnabar.refs import FETCH_REFS
from cinnabar.resources import Resources

METADATA_REF = 'refs/cinnabar/metadata'
BACKUP_REF = 'refs/cinnabar/reclone-backup'
BROKEN_REF = 'refs/cinnabar/broken'
# Headers of a commit that are signatures of its old contents.
SIGNATURE_HEADERS = (b'gpgsig', b'gpgsig-sha256', b'mergetag')

Result = record('Result', 'old_metadata new_metadata moved '
                'rewritten kept')
Result.__doc__ = """What a reclone did: the old and new metadata commits
(old may be None), {ref: (old, new)} of the refs moved, the number of
local commits written again, and the commits kept for want of a new
changeset."""


def _hg2git_tree(metadata_commit):
    commit = metadata.read_commit(metadata_commit)
    if commit is None or len(commit.parents) < len(metadata.PARTS):
        return None
    part = metadata.read_commit(
        commit.parents[metadata.PARTS.index('hg2git')])
    return part.tree if part else None


def commits_changed(result):
    """Whether the reclone gave some Mercurial revision another git
    object than the metadata before it did (their hg2git trees differ):
    only then may local branches and tags be on commits of the old
    metadata alone."""
    if result.old_metadata in (None, result.new_metadata):
        return False
    return (_hg2git_tree(result.old_metadata)
            != _hg2git_tree(result.new_metadata))


def hg_remotes():
    """[(remote name, Mercurial URL)] of the remotes with hg:: (or
    hg://) URLs."""
    out = git.run(['config', '--get-regexp', r'^remote\..*\.url$'],
                  check=False).stdout.decode('utf-8', 'surrogateescape')
    remotes = []
    for line in out.splitlines():
        key, _, url = line.partition(' ')
        if url.startswith(('hg::', 'hg://')):
            remotes.append((key[len('remote.'):-len('.url')],
                            strip_prefix(url)))
    return remotes


# The refs `reclone` leaves alone unless given --rebase (git-cinnabar's).
LOCAL_REFS = ('refs/heads/', 'refs/tags/')


def user_refs(rebase=True):
    """{ref: GitId} of the refs outside refs/cinnabar/ (and but for
    refs/notes/cinnabar, which follows the metadata) naming commits;
    without `rebase`, those under LOCAL_REFS neither (symbolic refs, such
    as refs/remotes/origin/HEAD, follow theirs)."""
    out = git.run(['for-each-ref', '--format=%(objectname) %(objecttype) '
                   '%(refname) %(symref)'])
    found = {}
    for line in out.stdout.decode('utf-8', 'surrogateescape').splitlines():
        oid, kind, name, symref = line.split(' ', 3)
        if kind != 'commit' or symref or name.startswith(
                'refs/cinnabar/') or name == metadata.NOTES_REF:
            continue
        if rebase or not name.startswith(LOCAL_REFS):
            found[name] = GitId(oid)
    return found


def _rev_parse(ref):
    result = git.run(['rev-parse', '--verify', '-q', ref], check=False)
    if result.returncode:
        return None
    return GitId(result.stdout.decode('ascii').strip())


def _update_refs(commands):
    """Run `git update-ref --stdin` on the lines, as one transaction."""
    if commands:
        text = ''.join('%s\n' % c for c in ['start'] + commands + ['commit'])
        git.run(['update-ref', '--stdin'],
                input=text.encode('utf-8', 'surrogateescape'))


def rewrite_commit(commit, parents):
    """A commit like `commit` with `parents`, written; its GitId."""
    raw = git.run(['cat-file', 'commit', commit]).stdout
    header, _, message = raw.partition(b'\n\n')
    lines = []
    skipping = False
    for line in header.split(b'\n'):
        if line.startswith(b' ') and skipping:
            continue
        name = line.split(b' ', 1)[0]
        skipping = name in SIGNATURE_HEADERS
        if skipping or name == b'parent':
            continue
        lines.append(line)
        if name == b'tree':
            lines += [b'parent ' + p.encode('ascii') for p in parents]
    data = b'\n'.join(lines) + b'\n\n' + message
    out = git.run(['hash-object', '-t', 'commit', '-w', '--stdin'], input=data)
    return GitId(out.stdout.decode('ascii').strip())


def _old_changesets(old_helper, commits):
    """{commit: HgId} of the commits the old metadata maps to a changeset
    that maps back to them."""
    if old_helper is None or not commits:
        return {}
    hg_ids = old_helper.git2hg_many(commits)
    pairs = [(c, h) for c, h in zip(commits, hg_ids) if not h.is_null]
    back = old_helper.hg2git_many([h for _, h in pairs])
    return {c: h for (c, h), g in zip(pairs, back) if g == c}


def plan_rewrites(old_helper, new_helper, tips):
    """({old commit: new commit}, rewritten count, [kept commits])."""
    new_heads = [h.git_id for h in new_helper.heads() if h.git_id]
    if not tips:
        return {}, 0, []
    walk = git.rev_list_parents(sorted(set(tips.values())), new_heads)
    changesets = _old_changesets(old_helper, [c for c, _ in walk])
    ordered = list(changesets.items())
    new_ids = dict(zip((c for c, _ in ordered),
                       new_helper.hg2git_many([h for _, h in ordered])))
    mapping = {}
    rewritten = 0
    kept = []
    for commit, parents in walk:
        if commit in changesets:
            new = new_ids[commit]
            if new == NULL_GIT:
                kept.append(commit)
                new = commit
            mapping[commit] = new
            continue
        new_parents = [mapping.get(p, p) for p in parents]
        if new_parents == parents:
            mapping[commit] = commit
        else:
            mapping[commit] = rewrite_commit(commit, new_parents)
            rewritten += 1
    return mapping, rewritten, kept


def import_remotes(helper, remotes):
    """Import all the heads of every remote into `helper`'s metadata."""
    for name, url in remotes:
        # As git-cinnabar: the remote's name, on standard output.
        sys.stdout.write('Fetching %s\n' % name)
        sys.stdout.flush()
        with Resources() as resources:
            peer = hg.connect(url, helper)
            resources.callback(peer.close)
            state = peer.state()
            plan = discovery.plan_fetch(peer, helper, state, state.heads)
            if plan is not None:
                peer.getbundle(helper, plan.heads, plan.common)


def _start_old_helper(git_dir, resources):
    try:
        return resources.enter_context(Helper.start(git_dir))
    except HelperError as error:
        sys.stderr.write('warning: the current metadata cannot be read '
                         '(%s); commits are kept as they are unless their '
                         'ids are unchanged\n' % error.message)
        return None


def reclone(git_dir, rebase=False):
    """Do the reclone; returns a Result. Local branches and tags move
    only with `rebase`."""
    remotes = hg_remotes()
    if not remotes:
        raise Abort('there is no Mercurial remote to reclone from',
                    hint='remotes with hg:: URLs are recloned')
    if _rev_parse(BACKUP_REF):
        raise Abort('%s exists: an earlier reclone did not end' % BACKUP_REF,
                    hint='it holds the metadata before that reclone: put '
                         'it back with `git update-ref %s %s` if %s is '
                         'missing, then `git update-ref -d %s`'
                         % (METADATA_REF, BACKUP_REF, METADATA_REF,
                            BACKUP_REF))
    old = _rev_parse(METADATA_REF)
    old_notes = _rev_parse(metadata.NOTES_REF)
    tips = user_refs(rebase)
    with Resources() as resources:
        old_helper = _start_old_helper(git_dir, resources) if old else None
        if old:
            _update_refs(['create %s %s' % (BACKUP_REF, old),
                          'delete %s %s' % (METADATA_REF, old)])
        try:
            with Helper.start(git_dir) as new_helper:
                grafting = graft.prepare(new_helper, None)
                import_remotes(new_helper, remotes)
                if grafting:
                    graft.check(new_helper, _say)
                mapping, rewritten, kept = plan_rewrites(
                    old_helper, new_helper, tips)
                new = new_helper.finish()
            moved = {ref: (tip, mapping[tip]) for ref, tip in tips.items()
                     if mapping.get(tip, tip) != tip}
            _update_refs(['update %s %s %s' % (ref, new_id, old_id)
                          for ref, (old_id, new_id) in sorted(moved.items())])
        except BaseException:
            _restore(old, old_notes)
            raise
    if old:
        _update_refs(['delete %s %s' % (BACKUP_REF, old)])
    # The damage fsck found, if any, went with the old metadata.
    git.delete_refs(FETCH_REFS + (BROKEN_REF,))
    return Result(old, new, moved, rewritten, kept)


def _say(message):
    sys.stderr.write(message + '\n')


def _restore(old, notes):
    """Put refs/cinnabar/metadata and refs/notes/cinnabar back as they were
    before the reclone."""
    current = _rev_parse(METADATA_REF)
    commands = []
    if old:
        commands.append('update %s %s' % (METADATA_REF, old))
        commands.append('delete %s %s' % (BACKUP_REF, old))
    elif current:
        commands.append('delete %s %s' % (METADATA_REF, current))
    if notes:
        commands.append('update %s %s' % (metadata.NOTES_REF, notes))
    else:
        commands.append('delete %s' % metadata.NOTES_REF)
    _update_refs(commands)
