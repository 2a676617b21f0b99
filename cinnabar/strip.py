"""Removing changesets from the metadata (`git cinnabar strip`).

The changesets of the given commits and of all their descendants known
to the metadata are forgotten, as git-cinnabar's `strip` experiment does:
their hg2git entries (hg id -> commit) and git2hg notes (commit ->
changeset) go, the changeset branch heads are those of what is left, and
a new metadata commit records it, chained to the current one (so that
`git cinnabar rollback` undoes it). Manifests and files stay, as in
git-cinnabar. The git commits themselves, and refs to them, stay: the
next fetch of those changesets imports them again (the same commits).

The new parts are written with git plumbing in a temporary index (see
helper/metadata.h for the layout of the metadata commit).
"""

import os
import subprocess
import tempfile

from cinnabar import git, metadata
from cinnabar.errors import Abort
from cinnabar.helper import Head
from cinnabar.ids import GitId

AUTHORSHIP = (b'author  <cinnabar@git> 0 +0000\n'
              b'committer  <cinnabar@git> 0 +0000\n')


def stripped_commits(heads, bottoms):
    """The commits of `bottoms` and of their descendants that `heads`
    (the changeset head commits) lead to."""
    if not heads:
        return set()
    args = ['rev-list', '--ancestry-path', '--stdin']
    names = [str(h) for h in heads] + ['^%s' % b for b in bottoms]
    out = git.history(args, input=''.join(n + '\n' for n in names).encode())
    return set(GitId(c) for c in out.stdout.decode('ascii').split()) | \
        set(bottoms)


def _git(args, input=None, env=None):
    result = subprocess.run(['git'] + args, input=input, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode:
        raise Abort('git %s failed: %s' % (args[0], result.stderr.decode(
            'utf-8', 'replace').strip()))
    return result.stdout


def _write_commit(tree, parents, message):
    data = b'tree %s\n' % str(tree).encode()
    data += b''.join(b'parent %s\n' % str(p).encode() for p in parents)
    data += AUTHORSHIP + b'\n' + message
    out = _git(['hash-object', '-t', 'commit', '-w', '--stdin'], input=data)
    return GitId(out.decode('ascii').strip())


def without_notes(notes_commit, keys):
    """A notes commit like `notes_commit` without the entries of `keys`
    (40-hex strings), whatever their fanout."""
    tree = metadata.read_commit(notes_commit).tree
    listed = _git(['ls-tree', '--full-tree', '-r', '-z', '--name-only',
                   str(tree)])
    paths = [p for p in listed.split(b'\0')
             if p and p.replace(b'/', b'').decode('ascii') in keys]
    if not paths:
        return notes_commit
    with tempfile.TemporaryDirectory(prefix='cinnabar-strip-') as tmp:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(tmp, 'index'))
        _git(['read-tree', str(tree)], env=env)
        # Mode 0 removes a path; --index-info paths are from the top, not
        # from the current directory as --stdin's are.
        _git(['update-index', '-z', '--index-info'],
             input=b''.join(b'0 %s\t%s\0' % (b'0' * 40, p) for p in paths),
             env=env)
        new_tree = _git(['write-tree'], env=env).decode('ascii').strip()
    return _write_commit(new_tree, [], b'')


class Stripper:
    """Strips from the metadata `current` (a metadata commit) with
    `helper` (a running cinnabar.helper.Helper) reading it."""

    def __init__(self, helper, current):
        self.helper = helper
        self.current = current
        self.commit = metadata.read_commit(current)
        self.parts = dict(zip(metadata.PARTS, self.commit.parents))
        self._branches = {}

    def _branch(self, commit, hg_id):
        """The branch of a changeset, from its stored text."""
        if commit not in self._branches:
            text = self.helper.data('changeset', str(hg_id)).text
            header = text.split(b'\n\n', 1)[0].split(b'\n')
            fields = header[2].split(b' ', 2) if len(header) > 2 else []
            branch = b'default'
            if len(fields) == 3:
                for item in fields[2].split(b'\0'):
                    key, _, value = item.partition(b':')
                    if key == b'branch':
                        branch = value
            self._branches[commit] = branch.decode('utf-8',
                                                   'surrogateescape')
        return self._branches[commit]

    def new_heads(self, old_heads, stripped):
        """[(HgId, commit, branch)]: the old heads left, then the parents of
        stripped commits left that no child left on their branch follows."""
        heads = [h for h in old_heads if h.git_id not in stripped]
        walk = git.rev_list_with_parents(
            [str(h.git_id) for h in old_heads])
        left = {c: p for c, p in walk if c not in stripped}
        candidates = {p for c, parents in walk if c in stripped
                      for p in parents if p in left}
        children = {}
        for commit, parents in left.items():
            for parent in parents:
                if parent in candidates:
                    children.setdefault(parent, []).append(commit)
        known = {h.git_id for h in heads}
        for commit in sorted(candidates - known):
            hg_id = self.helper.git2hg(commit)
            branch = self._branch(commit, hg_id)
            if not any(self._branch(c, self.helper.git2hg(c)) == branch
                       for c in children.get(commit, [])):
                heads.append(Head(hg_id, commit, branch))
        return [(h.hg_id, h.git_id, h.branch) for h in heads]

    def strip(self, bottoms):
        """Write the new metadata commit; returns it and the number of
        changesets stripped."""
        old_heads = self.helper.heads()
        stripped = stripped_commits([h.git_id for h in old_heads], bottoms)
        hg_ids = self.helper.git2hg_many(sorted(stripped))
        stripped = {c for c, h in zip(sorted(stripped), hg_ids)
                    if not h.is_null}
        heads = self.new_heads(old_heads, stripped)
        gone = {str(h) for h in hg_ids if not h.is_null}
        changesets = _write_commit(
            metadata.read_commit(self.parts['changesets']).tree,
            [g for _, g, _ in heads],
            '\n'.join('%s %s' % (h, b) for h, _, b in heads).encode(
                'utf-8', 'surrogateescape'))
        parents = [changesets, self.parts['manifests'],
                   without_notes(self.parts['hg2git'], gone),
                   without_notes(self.parts['git2hg'],
                                 {str(c) for c in stripped}),
                   self.parts['files-meta'], self.current]
        new = _write_commit(self.commit.tree, parents,
                            self.commit.message.encode('utf-8'))
        return new, len(gone)
