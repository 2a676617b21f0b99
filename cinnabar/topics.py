"""Replacing the changesets of a topic (hg-evolve) on a force push.

When `git push -f` replaces a draft topic's head by a commit that does
not descend from it (after `git commit --amend` or `git rebase`), the
server's changesets of the topic that the new history leaves out are the
`old` ones: the commits reachable from the topic's heads on the server,
not from the pushed commit nor from the server's heads of the branch,
that are drafts carrying the topic. Each is paired with the new commit
that replaces it, as `git range-diff` would: same patch (`git patch-id
--stable`), else same subject (first message line), else, when as many
are left on each side, in the order of the history (the order git
rewrote them); old ones left over were dropped: pruned (a marker
without successor). The pairs become obsolescence markers
(`cinnabar.hg.obsmarkers`) sent with the changesets, so that the server
hides the old ones and the topic keeps one head. They record what
hg-evolve's commands record: the `operation` (`amend` when the parents
stayed, as `hg amend`; `rebase` when they changed, as `hg rebase`;
`prune`, as `hg prune`), the `user` and the effect flags (`ef1`).
"""

import re
import subprocess
import time

from cinnabar import git
from cinnabar.hg.obsmarkers import Marker
from cinnabar.record import record

# Where the extras are in a changeset's text: the third line is
# `<time> <tz>[ <extras>]`, the extras `key:value` pairs separated by
# NUL, with `\\`, `\n`, `\r` and NUL escaped as `\\\\`, `\\n`, `\\r`, `\\0`.
_UNESCAPE = {'\\\\': '\\', '\\n': '\n', '\\r': '\r', '\\0': '\0'}


def _unescape(text):
    out, i = [], 0
    while i < len(text):
        pair = text[i:i + 2]
        if pair in _UNESCAPE:
            out.append(_UNESCAPE[pair])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return ''.join(out)


def changeset_extras(text):
    """{key: value} of the extras of a changeset's raw text (bytes)."""
    lines = text.split(b'\n', 3)
    if len(lines) < 3:
        return {}
    fields = lines[2].decode('utf-8', 'surrogateescape').split(' ', 2)
    if len(fields) < 3:
        return {}
    extras = {}
    for item in fields[2].split('\0'):
        key, _, value = _unescape(item).partition(':')
        extras[key] = value
    return extras


def _drafts(walk, draft_roots):
    """The commits of `walk` ([(commit, [parents])], parents first) that
    are drafts: a draft root (`draft_roots`, commits) or a descendant of
    one (phases only go down the history). A parent outside the walk is
    a draft when one of the roots is among its ancestors (one `git
    rev-list` of its history; the walk's boundary has few)."""
    in_walk = {c for c, _ in walk}
    outside = {}
    drafts = set()

    def is_draft(parent):
        if parent in in_walk:
            return parent in drafts
        if parent not in outside:
            history = git.history(['rev-list', parent]).stdout.decode()
            outside[parent] = bool(draft_roots & set(history.split()))
        return outside[parent]

    for commit, parents in walk:
        if commit in draft_roots or any(is_draft(p) for p in parents):
            drafts.add(commit)
    return drafts


def old_changesets(helper, old_heads, new_commit, keep, draft_roots, topic):
    """[(commit, HgId, [parent commits])] of the topic's changesets that
    the push of `new_commit` replaces, parents first: reachable from
    `old_heads` (GitIds), not from `new_commit` or `keep` (the branch's
    server heads), drafts on the server (`draft_roots`: the commits of
    its draft roots), with `topic`."""
    walk = git.rev_list_parents(old_heads, [new_commit, *keep])
    drafts = _drafts(walk, set(draft_roots)) if draft_roots else set()
    hg_ids = helper.git2hg_many([c for c, _ in walk])
    old = []
    for (commit, parents), hg_id in zip(walk, hg_ids):
        if hg_id.is_null or commit not in drafts:
            continue
        extras = changeset_extras(helper.data('changeset', hg_id).text)
        if extras.get('topic') == topic:
            old.append((commit, hg_id, parents))
    return old


def published_changesets(helper, starts, new_commit, draft_roots, topic):
    """[(commit, HgId)] of the public changesets carrying `topic` that the
    push of `new_commit` leaves out of its history: found from `starts`
    (the topic's and its branch's server heads) down the parents, through
    the changesets with `topic`. Published since we fetched, when the new
    commits rewrite them: hg-evolve would mark a public changeset
    obsolete (phase-divergence); we never do."""
    seen, todo, found = set(), list(starts), []
    while todo:
        commit = todo.pop()
        if commit in seen or helper.is_ancestor(commit, new_commit):
            continue
        seen.add(commit)
        hg_id = helper.git2hg(commit)
        if hg_id.is_null or changeset_extras(
                helper.data('changeset', hg_id).text).get('topic') != topic:
            continue
        if not any(helper.is_ancestor_many(
                [(r, commit) for r in draft_roots])):
            found.append((commit, hg_id))
        parents = git.history(['rev-list', '--parents', '-n1', commit])
        todo.extend(parents.stdout.decode('ascii').split()[1:])
    return found


def _patch_ids(commits):
    """{commit: patch id} (`git patch-id --stable`; merges and empty
    commits have none)."""
    if not commits:
        return {}
    show = subprocess.run(
        ['git', 'diff-tree', '--stdin', '-p', '--root', '--no-renames'],
        input=''.join(c + '\n' for c in commits).encode(),
        stdout=subprocess.PIPE, check=True)
    ids = subprocess.run(['git', 'patch-id', '--stable'], input=show.stdout,
                         stdout=subprocess.PIPE, check=True)
    result = {}
    for line in ids.stdout.decode('ascii').splitlines():
        patch_id, commit = line.split()
        result[commit] = patch_id
    return result


def _subjects(commits):
    if not commits:
        return {}
    out = git.run(['log', '--no-walk=unsorted', '--format=%H %s', *commits])
    pairs = (line.split(' ', 1) for line in
             out.stdout.decode('utf-8', 'replace').splitlines())
    return {p[0]: p[1] if len(p) > 1 else '' for p in pairs}


def _pair_by(key_of, old, new, pairs):
    """Pair the `old` and `new` commits with the same key (each key
    used once), removing them from the lists."""
    by_key = {}
    for commit in new:
        key = key_of.get(commit)
        if key is not None:
            by_key.setdefault(key, []).append(commit)
    for commit in list(old):
        matches = by_key.get(key_of.get(commit))
        if matches:
            successor = matches.pop(0)
            pairs[commit] = successor
            old.remove(commit)
            new.remove(successor)


def pair(old, new):
    """{old commit: new commit or None (pruned)}: `old` and `new` are
    commits, parents first."""
    old, new, pairs = list(old), list(new), {}
    _pair_by(_patch_ids(old + new), old, new, pairs)
    _pair_by(_subjects(old + new), old, new, pairs)
    if len(old) == len(new):
        pairs.update(zip(old, new))
        old = []
    pairs.update((c, None) for c in old)
    return pairs


# What a rewrite changed, as Mercurial records it in a marker's `ef1`
# metadata (its "effect flags", `mercurial/obsutil.py`): bits of the
# differences between the old changeset and its successor.
DESCRIPTION, META, PARENTS, DIFF, USER, DATE, BRANCH = \
    1, 2, 4, 8, 16, 32, 64
# Extras that are not "meta" for the effect flags.
_NOT_META = re.compile(r'branch$|source$|.*[-_]source$')

Rewritten = record('Rewritten', 'hg_id parents text diff')
Rewritten.__doc__ = """One side of a rewrite: the changeset's HgId, its
parents' HgIds, its raw text (bytes), and its diff (`diff_lines`)."""


def _fields(text):
    """(user, date, {extras}, description) of a changeset's raw text."""
    head, _, description = text.partition(b'\n\n')
    lines = head.split(b'\n')
    date = lines[2].split(b' ', 2)[:2] if len(lines) > 2 else []
    return (lines[1] if len(lines) > 1 else b'', date,
            changeset_extras(text), description)


def effect_flags(old, new):
    """hg's effect flags for the rewrite of `old` into `new` (Rewritten)."""
    old_user, old_date, old_extras, old_desc = _fields(old.text)
    new_user, new_date, new_extras, new_desc = _fields(new.text)
    meta = [{k: v for k, v in extras.items() if not _NOT_META.match(k)}
            for extras in (old_extras, new_extras)]
    changed = ((DESCRIPTION, old_desc != new_desc),
               (USER, old_user != new_user), (DATE, old_date != new_date),
               (BRANCH, old_extras.get('branch', 'default')
                != new_extras.get('branch', 'default')),
               (PARENTS, list(old.parents) != list(new.parents)),
               (META, meta[0] != meta[1]), (DIFF, old.diff != new.diff))
    return sum(bit for bit, differs in changed if differs)


def diff_lines(commit):
    """The diff `commit` brings (against its first parent), as hg compares
    two for the effect flags: one line of context, hunk headers and blob
    ids left out (they change when only the parent changed)."""
    out = git.run(['diff-tree', '-p', '-U1', '--no-renames', '--root',
                   '--diff-merges=first-parent', '--no-commit-id', commit])
    return [line for line in out.stdout.split(b'\n')
            if not line.startswith((b'@@', b'index '))]


def rewrite_metadata(old, new, user):
    """The metadata of the marker for `old` rewritten into `new`
    (Rewritten, None when pruned), as hg-evolve writes them: `user`,
    `operation` (`amend` when the parents stayed, `rebase` when they
    changed, `prune`) and `ef1`."""
    if new is None:
        return {'user': user, 'operation': 'prune', 'ef1': '0'}
    operation = 'amend' if list(old.parents) == list(new.parents) \
        else 'rebase'
    return {'user': user, 'operation': operation,
            'ef1': str(effect_flags(old, new))}


def markers(pairs, describe, user, now=None):
    """The Markers for `pairs` ({old commit: new commit or None}), with
    `describe` giving the Rewritten of a commit, `user` (who rewrote)."""
    seconds = int(time.time() if now is None else now)
    offset = time.altzone if time.localtime(seconds).tm_isdst \
        else time.timezone
    result = []
    for old, new in pairs.items():
        before = describe(old)
        after = describe(new) if new is not None else None
        successors = (after.hg_id,) if after is not None else ()
        result.append(Marker(
            before.hg_id, successors,
            None if successors else before.parents, (seconds, offset),
            rewrite_metadata(before, after, user)))
    return sorted(result, key=lambda m: m.precursor)
