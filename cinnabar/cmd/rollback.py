"""Go back to an earlier state of the cinnabar metadata.

usage: git cinnabar rollback [-v] [--candidates] [--fsck] [--force]
                             [<metadata commit>]

Each metadata commit keeps the one before it (its sixth parent): this
sets refs/cinnabar/metadata back to one of those, by default the previous
one, and puts the refs that depend on it back as they were with it
(refs/notes/cinnabar follows the metadata). The first metadata commit
(that of a clone) has no previous one: rolling it back, or giving the
null id (40 zeros), goes back to no metadata at all, as before the first
fetch (as git-cinnabar 0.7 does; `git cinnabar clear` does the same):

- refs/cinnabar/refs/*, refs/cinnabar/hg/* and refs/cinnabar/HEAD (what
  a fetch imported) and the remote-tracking refs of hg remotes (remotes
  whose URL starts with `hg::`): as the fetch that went on from that
  metadata commit found them (saved under the git dir's
  cinnabar/fetch-refs/);
- without such a saved state, the fetch refs whose commit the older
  metadata does not know are deleted, and so are the remote-tracking refs
  of hg remotes, unless their reflog has an older value it knows: they
  are set back to the newest such value;
- refs/cinnabar/checked and refs/cinnabar/broken stay where they are.
  Unlike git-cinnabar, going back past the checked metadata, or from it,
  does not move refs/cinnabar/checked to the metadata commit gone back
  to: fsck checked the metadata of that commit, not what it builds on
  (the next `git cinnabar fsck` then checks everything). Going back to
  the broken one leaves it broken. Damage only stops fetches and pushes
  while refs/cinnabar/broken is the current metadata.

Your own branches and tags are left alone. All refs change in one
transaction. Without metadata (before the first fetch, or after going
back to nothing), `--candidates` lists nothing, the null id changes
nothing, and `rollback` alone says there is nothing to roll back. When
refs/cinnabar/metadata names no commit (damaged: nothing says what came
before it), `rollback` alone goes back to nothing.

    --candidates  list the metadata commits rollback can go to, newest
                  first, marking the current, checked and broken ones
    --fsck        go back to refs/cinnabar/checked, the last metadata
                  `git cinnabar fsck` found good
    --force       allow a metadata commit that is not in the chain of the
                  current one
    -v, --verbose say what changed, on standard error (as git-cinnabar,
                  nothing is printed otherwise)
"""


from cinnabar import git, metadata, snapshots
from cinnabar.cmd.options import VERBOSE, say, split_options, usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.ids import GitId

NULL_ID = '0' * 40

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = ('--candidates', '--fsck', '--force') + VERBOSE


def parse_args(args):
    given, names = split_options(args, OPTIONS, USAGE)
    options = {name: '--' + name in given
               for name in ('candidates', 'fsck', 'force')}
    options['given'] = given
    if len(names) > 1 or (names and options['fsck']):
        raise UsageError('give one metadata commit, or --fsck', hint=USAGE)
    return options, names[0] if names else None


def list_candidates(current):
    checked = metadata.read_ref(metadata.CHECKED_REF)
    broken = metadata.read_ref(metadata.BROKEN_REF)
    for oid in metadata.chain(current):
        marks = [name for name, ref in (('current', current),
                                        ('checked', checked),
                                        ('broken', broken)) if ref == oid]
        print('%s%s' % (oid, ' (%s)' % ', '.join(marks) if marks else ''))
    return 0


def no_checked_hint(options, current):
    """What to run for `--fsck` without refs/cinnabar/checked: fsck,
    which marks the metadata checked when it passes; but when fsck found
    the current metadata damaged, or cannot read it, it would only say so
    again, and a plain rollback goes back past it; for metadata this
    version does not read, what format_problem says to run."""
    problem = current and metadata.format_problem(current)
    if problem:
        return problem.hint
    if options['unreadable'] or current is not None and \
            metadata.read_ref(metadata.BROKEN_REF) == current:
        return metadata.recovery_hint(current)
    return ('run `git cinnabar fsck`, or give a metadata commit (`git '
            'cinnabar rollback --candidates` lists them)')


def choose_target(options, name, current, chain):
    if options['fsck']:
        target = metadata.read_ref(metadata.CHECKED_REF)
        if target is None:
            raise Abort('there is no checked metadata to go back to',
                        hint=no_checked_hint(options, current))
    elif name == NULL_ID:
        return None
    elif name is not None:
        target = metadata.read_ref(name)
        if target is None:
            raise Abort("invalid revision '%s'" % name,
                        hint='give a metadata commit (`git cinnabar '
                        'rollback --candidates` lists them)')
    elif current is None:
        raise Abort('nothing to roll back: there is no cinnabar metadata')
    elif len(chain) < 2:
        return None
    else:
        target = chain[1]
    if target not in chain and not options['force']:
        raise Abort('%s is not in the chain of the current metadata%s'
                    % (target, '' if chain else ' (there is none)'),
                    hint='`git cinnabar rollback --candidates` lists that '
                    'chain; --force goes there anyway')
    commit = metadata.read_commit(target)
    if len(commit.parents) not in (len(metadata.PARTS),
                                   len(metadata.PARTS) + 1):
        raise Abort('%s is not a cinnabar metadata commit' % target,
                    hint='`git cinnabar rollback --candidates` lists them')
    problem = metadata.format_problem(target)
    if problem:
        raise Abort('%s is not metadata this version can use: %s'
                    % (target, problem.message))
    return target


def known_commits(target):
    """The git commits the metadata commit `target` has changesets for."""
    commit = metadata.read_commit(target)
    git2hg = commit.parents[metadata.PARTS.index('git2hg')]
    out = metadata.git_out('ls-tree', '--full-tree', '-r', '--name-only',
                           git2hg)
    return {name.replace('/', '') for name in out.decode('ascii').split()}


def restore(saved, current):
    """Changes turning the refs `current` into `saved` ({name: GitId})."""
    changes = {name: None for name in current if name not in saved}
    changes.update({name: oid for name, oid in saved.items()
                    if current.get(name) != oid})
    return changes


def saved_refs(git_dir, target):
    """The fetch refs and hg remote-tracking refs saved with `target`,
    as ({fetch ref: GitId}, {remote ref: GitId}), or None."""
    saved = snapshots.load(git_dir, target)
    if saved is None:
        return None
    fetch = {n: o for n, o in saved.items()
             if n.startswith(snapshots.FETCH_REFS)}
    return fetch, {n: o for n, o in saved.items() if n not in fetch}


def fetch_refs(saved, known):
    current = dict(metadata.refs_under(*snapshots.FETCH_REFS))
    if saved is not None:
        return restore(saved[0], current)
    return {name: None for name, oid in current.items() if oid not in known}


def reflog(ref):
    """[GitId] a ref pointed to, newest first, from its reflog, as git
    reads it (a log of files or reftable's): the new value of each entry
    (`git reflog show`), then the old value of the oldest one (`<ref>@{N}`
    for N entries), which is a ref's first value when it was made without
    an entry (as a clone makes remote-tracking refs)."""
    result = git.run(['reflog', 'show', '--format=%H', ref, '--'],
                     check=False)
    if result.returncode:
        return []
    values = result.stdout.split()
    oldest = git.run(['rev-parse', '--verify', '-q',
                      '%s@{%d}' % (ref, len(values))], check=False)
    if not oldest.returncode:
        values += oldest.stdout.split()
    return [GitId(oid) for oid in values
            if len(oid) == 40 and oid != b'0' * 40]


def remote_refs(saved, known):
    current = dict(snapshots.remote_tracking_refs())
    if saved is not None:
        return restore(saved[1], current)
    changes = {}
    for name, oid in current.items():
        if oid not in known:
            older = [o for o in reflog(name) if o in known]
            changes[name] = older[0] if older else None
    return changes


def roll_back_to_nothing(git_dir, given):
    """No metadata, as before the first fetch: every ref under
    refs/cinnabar/ and refs/notes/cinnabar deleted, and the remote-tracking
    refs of hg remotes too (their commits are no longer known)."""
    changes = {name: None for name, _ in
               metadata.refs_under('refs/cinnabar/')}
    changes.update(metadata.notes_for(None))
    changes.update(remote_refs(None, set()))
    metadata.update_refs(changes)
    snapshots.forget_all(git_dir)
    say(given, 'cinnabar metadata rolled back to nothing, as before the '
        'first fetch (%d refs deleted)' % len(changes))
    return 0


def run(args):
    options, name = parse_args(args)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    unreadable = []
    current = metadata.read_refs(metadata.METADATA_REF,
                                 others=unreadable).get(metadata.METADATA_REF)
    if options['candidates']:
        return list_candidates(current)
    options['unreadable'] = bool(unreadable)
    if unreadable and name is None and not options['fsck']:
        # refs/cinnabar/metadata names no commit, whose chain would say
        # what came before: as from the first metadata commit, back to
        # none.
        return roll_back_to_nothing(git_dir, options['given'])
    chain = metadata.chain(current)
    target = choose_target(options, name, current, chain)
    if target is None and current is None:
        return 0
    if target is None:
        return roll_back_to_nothing(git_dir, options['given'])
    known = known_commits(target)
    changes = {metadata.METADATA_REF: target}
    changes.update(metadata.notes_for(target))
    saved = saved_refs(git_dir, target)
    changes.update(fetch_refs(saved, known))
    changes.update(remote_refs(saved, known))
    metadata.update_refs(changes)
    say(options['given'], 'cinnabar metadata rolled back to %s (%d other '
        'ref%s updated)' % (target, len(changes) - 1,
                            '' if len(changes) == 2 else 's'))
    return 0
