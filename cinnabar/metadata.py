"""The cinnabar metadata as refs see it: its commit chain, its format, and
the state refs of `git cinnabar fsck`.

Refs (all under refs/cinnabar/, which is ours; see helper/metadata.h for
the metadata commit itself):

    refs/cinnabar/metadata   the current metadata commit
    refs/cinnabar/checked    the last metadata commit `fsck` found good
    refs/cinnabar/broken     the metadata commit `fsck` found damaged;
                             while it is the current one, nothing
                             writes metadata (it stays through
                             rollbacks, as with git-cinnabar)
    refs/cinnabar/refs/*, refs/cinnabar/hg/*, refs/cinnabar/HEAD
                             what the last fetch imported, read by git
    refs/notes/cinnabar      the git2hg part of the current metadata
                             commit, so that `git log --notes=cinnabar`
                             shows hg ids (moved with the metadata, as
                             git-cinnabar 0.7 does)

git-cinnabar 0.7 gives `checked` and `broken` the same meaning.

The metadata format is the metadata commit's message, its flags:
`files-meta unified-manifests-v2` is the one this version reads and
writes. Metadata of git-cinnabar before 0.5 has other flags (or none),
and before 0.4 no metadata commit at all but refs such as
refs/cinnabar/hg2git (with refs/notes/cinnabar, which alone says nothing
of the version: git-cinnabar 0.7 keeps it too). Flags this version does
not know come from a newer git-cinnabar.
"""


import os

from cinnabar import git
from cinnabar.errors import Abort
from cinnabar.ids import GitId
from cinnabar.record import record

METADATA_REF = 'refs/cinnabar/metadata'
CHECKED_REF = 'refs/cinnabar/checked'
NOTES_REF = 'refs/notes/cinnabar'
BROKEN_REF = 'refs/cinnabar/broken'
FLAGS = 'files-meta unified-manifests-v2'
KNOWN_FLAGS = frozenset(FLAGS.split())
# Refs of git-cinnabar before 0.4, which kept no metadata commit.
LEGACY_REFS = ('refs/cinnabar/hg2git', 'refs/cinnabar/manifest',
               'refs/cinnabar/branches/', 'refs/cinnabar/tip')
# The parts of a metadata commit (its first five parents), in order.
PARTS = ('changesets', 'manifests', 'hg2git', 'git2hg', 'files-meta')
# The author and committer of every metadata commit.
AUTHORSHIP = ('author  <cinnabar@git> 0 +0000\n'
              'committer  <cinnabar@git> 0 +0000\n')

RECLONE_HINT = ('run `git cinnabar clear` and fetch again, or '
                '`git cinnabar reclone`')


def git_out(*args, input=None, check=True, env=None):
    """Standard output of `git args` (bytes) in `env` (default: ours), or
    None when it failed and `check` is false."""
    result = git.run(list(args), check=check, input=input, env=env)
    return None if result.returncode else result.stdout


def read_ref(name):
    """The GitId a ref points to, or None."""
    out = git_out('rev-parse', '--verify', '-q', name + '^{commit}',
                  check=False)
    return GitId(out.decode('ascii').strip()) if out else None


def read_refs(*names, others=None):
    """{name: GitId} of those of the refs `names` that point to a commit
    (directly or through one tag), as read_ref, read by one git process;
    the names of those that point to something else are added to the
    list `others` when given."""
    out = git_out('for-each-ref', '--format=%(refname) %(objecttype) '
                  '%(objectname) %(*objecttype) %(*objectname)', *names)
    found = {}
    for line in out.decode('utf-8', 'surrogateescape').splitlines():
        name, kind, oid, peeled_kind, peeled = line.rsplit(' ', 4)
        if name in names and 'commit' in (kind, peeled_kind):
            found[name] = GitId(oid if kind == 'commit' else peeled)
        elif name in names and others is not None:
            others.append(name)
    return found


def refs_under(*prefixes):
    """[(ref name, GitId)] for the refs under the given prefixes."""
    out = git_out('for-each-ref', '--format=%(objectname) %(refname)',
                  *prefixes)
    pairs = []
    for line in out.decode('utf-8', 'surrogateescape').splitlines():
        oid, _, name = line.partition(' ')
        pairs.append((name, GitId(oid)))
    return pairs


Commit = record('Commit', 'tree parents message')


def read_commit(oid, env=None):
    """A Commit, or None when `oid` is not a commit. As git reads it (and
    helper/raw-commit.c): `tree` first, the parents are the `parent`
    lines directly after it. `env`: as for git_out."""
    out = git_out('cat-file', 'commit', oid, check=False, env=env)
    if out is None:
        return None
    header, _, message = out.partition(b'\n\n')
    lines = header.split(b'\n')
    if not lines[0].startswith(b'tree '):
        return None
    tree, parents = GitId(lines[0][5:]), []
    for line in lines[1:]:
        if not line.startswith(b'parent '):
            break
        parents.append(GitId(line[7:]))
    return Commit(tree, parents, message.decode('utf-8', 'replace'))


def write_commit(tree, parents):
    """Write a metadata commit of format FLAGS with `tree` and `parents`
    (its parts, then the previous metadata commit if any); its GitId."""
    data = 'tree %s\n' % tree
    data += ''.join('parent %s\n' % p for p in parents)
    data += AUTHORSHIP + '\n' + FLAGS
    out = git_out('hash-object', '-t', 'commit', '-w', '--stdin',
                  input=data.encode('ascii'))
    return GitId(out.decode('ascii').strip())


def previous(commit):
    """The metadata commit before `commit` (a Commit), or None."""
    if len(commit.parents) == len(PARTS) + 1:
        return commit.parents[-1]
    return None


def chain(start):
    """[GitId] of the metadata commits from `start` back to the first."""
    result = []
    oid = start
    while oid is not None and oid not in result:
        commit = read_commit(oid)
        if commit is None:
            break
        result.append(oid)
        oid = previous(commit)
    return result


def changeset_heads(metadata_commit, env=None):
    """[GitId] of the changeset head commits a metadata commit records."""
    commit = read_commit(metadata_commit, env)
    if commit is None or not commit.parents:
        return []
    changesets = read_commit(commit.parents[0], env)
    return changesets.parents if changesets else []


def format_problem(metadata_commit, env=None):
    """None when this version reads the metadata commit, else an Abort
    saying what it is and what to run."""
    commit = read_commit(metadata_commit, env)
    if commit is None:
        return Abort('%s is not a commit' % METADATA_REF, hint=RECLONE_HINT)
    unknown = [f for f in commit.message.split()
               if f not in KNOWN_FLAGS | {'unified-manifests'}]
    if unknown:
        return Abort("the cinnabar metadata was written by a newer "
                     "git-cinnabar (unknown flag '%s')" % unknown[0],
                     hint='upgrade git-cinnabar')
    if commit.message != FLAGS:
        return Abort("the cinnabar metadata uses an older format ('%s')"
                     % commit.message, hint='run `git cinnabar upgrade`')
    if len(commit.parents) not in (len(PARTS), len(PARTS) + 1):
        return Abort('the cinnabar metadata commit %s is damaged (it has '
                     '%d parents)' % (metadata_commit, len(commit.parents)),
                     hint=recovery_hint(metadata_commit))
    return None


def recovery_hint(damaged):
    """What to run when the current metadata commit `damaged` is damaged
    (None: refs/cinnabar/metadata names no commit):
    the commands that work from there. `rollback --fsck` goes back to
    refs/cinnabar/checked only when that is an earlier commit of its
    chain; else a plain `rollback` goes back to the previous metadata
    (or to none, from the first); `reclone` always starts over."""
    checked = read_ref(CHECKED_REF)
    if damaged and checked and checked != damaged and \
            checked in chain(damaged):
        return ('run `git cinnabar rollback --fsck` to go back to %s, the '
                'last metadata fsck found good, or `git cinnabar reclone`'
                % checked)
    return ('run `git cinnabar rollback` to go back to the previous metadata '
            '(`git cinnabar rollback --candidates` lists the earlier ones), '
            'or `git cinnabar reclone` to import everything again')


def damage_seen(git_dir):
    """The current metadata commit when `git cinnabar fsck` marked it
    damaged (refs/cinnabar/broken is it), else None. A repository where
    fsck never found damage has no such ref: when neither its loose file
    nor a packed line is there, no git process is run."""
    common = git.common_dir(git_dir)
    if not os.path.exists(os.path.join(common, BROKEN_REF)):
        try:
            with open(os.path.join(common, 'packed-refs'), 'rb') as f:
                packed = f.read()
        except OSError:
            packed = b''
        if (' %s\n' % BROKEN_REF).encode() not in packed:
            return None
    found = read_refs(METADATA_REF, BROKEN_REF)
    broken = found.get(BROKEN_REF)
    return broken if broken and broken == found.get(METADATA_REF) else None


def legacy_refs():
    """Names of refs of git-cinnabar before 0.4 present in the repository."""
    return [name for name, _ in refs_under(*LEGACY_REFS)]


REPLACE_REFS = 'refs/cinnabar/replace/'


def replace_entries(tree):
    """{replaced commit: replacement} of a metadata commit's tree (the
    replace map, helper/replace-map.h): its gitlinks named by a commit
    id, but those replacing a commit with itself."""
    out = git_out('ls-tree', '-z', tree, check=False) or b''
    entries = {}
    for entry in out.split(b'\0'):
        info, _, name = entry.partition(b'\t')
        fields = info.split()
        if len(fields) != 3 or fields[0] != b'160000':
            continue
        try:
            replaced = GitId(name.decode('ascii'))
        except (UnicodeDecodeError, ValueError):
            continue
        replacement = GitId(fields[2].decode('ascii'))
        if replaced != replacement:
            entries[replaced] = replacement
    return entries


def notes_for(metadata_commit):
    """The ref changes that follow a move of the metadata ref to
    `metadata_commit` (None: no metadata): {NOTES_REF: its git2hg part}
    (or a deletion), and refs/cinnabar/replace/<replaced> pointing at the
    replacements of its replace map, the others deleted (as git-cinnabar
    keeps them)."""
    changes = {name: None for name, _ in refs_under(REPLACE_REFS)}
    if metadata_commit is None:
        changes[NOTES_REF] = None
        return changes
    commit = read_commit(metadata_commit)
    git2hg = PARTS.index('git2hg')
    if commit is None or len(commit.parents) <= git2hg:
        return {}
    changes[NOTES_REF] = commit.parents[git2hg]
    for replaced, replacement in replace_entries(commit.tree).items():
        changes[REPLACE_REFS + replaced] = replacement
    return changes


def check_usable(writing=True):
    """Raise an Abort when the metadata cannot be used (or, `writing`,
    written to) by this version, saying what to run; else return the
    metadata commit (GitId, None when there is no metadata)."""
    others = []
    found = read_refs(METADATA_REF, BROKEN_REF, others=others)
    metadata = found.get(METADATA_REF)
    if METADATA_REF in others:
        # Not "no metadata": a fetch would die on it in the helper.
        raise Abort('%s is not a commit' % METADATA_REF, hint=RECLONE_HINT)
    if metadata is None:
        legacy = legacy_refs()
        if legacy:
            raise Abort('this repository has metadata of git-cinnabar '
                        'before 0.4 (%s)' % legacy[0],
                        hint='run `git cinnabar upgrade`')
        return None
    problem = format_problem(metadata)
    if problem:
        raise problem
    broken = found.get(BROKEN_REF)
    if writing and broken == metadata:
        raise Abort('the cinnabar metadata is damaged (`git cinnabar fsck` '
                    'found problems in %s); not writing to it' % broken,
                    hint=recovery_hint(broken))
    return metadata


def update_refs(changes):
    """Apply {ref name: GitId or None (delete)} in one transaction."""
    lines = []
    for name, oid in sorted(changes.items()):
        if oid is None:
            lines.append('delete %s\n' % name)
        else:
            lines.append('update %s %s\n' % (name, oid))
    if lines:
        git_out('update-ref', '--stdin',
                input=''.join(lines).encode('utf-8', 'surrogateescape'))
