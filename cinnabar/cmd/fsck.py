"""Check the cinnabar metadata against the git objects.

usage: git cinnabar fsck [--full | --force] [<commit>...]

Computes the Mercurial ids again from the git commits, trees and blobs and
the metadata, checks that the metadata's mappings agree both ways, and
that each changeset's git commit is exactly the one a clone makes of the
changeset (but in a repository that grafted changesets onto existing
commits, see `cinnabar.grafted`).
By default, checks only the changesets added since the last check that
passed (the metadata commit it checked is kept in refs/cinnabar/checked;
without one, or when refs/cinnabar/broken marks the current metadata,
checks everything).

    --full      check every changeset, manifest and file revision, every
                hg2git entry and git2hg note, and the changeset and
                manifest heads
    --force     check again what a check passed already (git-cinnabar's
                spelling; here the same as --full)
    <commit>... check only these changeset commits (with their manifests
                and the file revisions those introduce)

Each problem is reported on its own line, naming the hg id and git
object concerned; the exit status is then 1, and refs/cinnabar/broken is
set to the damaged metadata commit: fetching and pushing refuse to write
to it (a fetch with nothing new, which writes nothing, warns) until `git
cinnabar rollback` (e.g. `rollback --fsck`, back to the last checked
metadata) or `git cinnabar reclone`, or until `fsck --full` passes.
When the check passes (without <commit>), refs/cinnabar/checked is set
to the metadata commit checked.

It also compares each changeset checked with what Mercurial's commit makes
of the same change: the files list (the files added, modified, removed or
whose flags changed) and the parents of the file revisions it introduces.
A difference (a changeset made by a faulty push or another tool) is a
warning, not damage: the metadata holds the server's history as it is,
`hg verify` accepts it, and neither rollback nor reclone would change it.
As with `git fsck`'s warnings, the exit status stays 0.
"""

import sys

from cinnabar import git, metadata
from cinnabar.cmd.options import split_options, usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import Helper, HelperError

# Damage found is the check's result, not a failure to run it: status 1,
# as git-cinnabar 0.7.5 (git fsck's statuses are small too), not 128.
DAMAGE_STATUS = 1

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = ('--full', '--force')


def parse_args(args):
    given, names = split_options(args, OPTIONS, USAGE)
    full = '--full' in given or '--force' in given
    if full and names:
        raise UsageError('--full checks everything; give no commits with it',
                         hint=USAGE)
    return full, names


def resolve(names):
    commits = []
    with git.CommitResolver() as resolver:
        for name in names:
            oid = resolver.resolve(name)
            if oid is None:
                raise Abort('%s is not a commit' % name, hint=USAGE)
            commits.append(oid)
    return commits


def new_commits(current, checked):
    """The changeset commits `current` has that `checked` had not."""
    heads = metadata.changeset_heads(current)
    if not heads:
        return []
    old = metadata.changeset_heads(checked)
    args = [str(h) for h in heads] + ['^%s' % h for h in old]
    out = metadata.git_out('rev-list', '--stdin',
                           input=''.join(a + '\n' for a in args).encode())
    return out.decode('ascii').split()


def plan(full, names, current):
    """(commits to check or None for all, whether a pass marks it checked,
    what is checked, for the messages)."""
    if names:
        return resolve(names), False, 'the given commits'
    checked = metadata.read_ref(metadata.CHECKED_REF)
    # Metadata marked damaged is checked whole: the damage may be in what
    # a check passed already (found by a check of given commits), and only
    # a full pass may clear the mark, or mark it checked.
    if full or checked is None or checked not in metadata.chain(current) \
            or metadata.read_ref(metadata.BROKEN_REF) == current:
        return None, True, 'all the metadata'
    return (new_commits(current, checked), True,
            'the changesets added since %s' % checked)


def refuse_unknown(helper, names, commits):
    """Commits given that are not of a changeset are a usage error, not
    damage."""
    for name, hg_id in zip(names, helper.git2hg_many(commits)):
        if hg_id.is_null:
            raise Abort('%s is not the commit of a Mercurial changeset'
                        % name, hint=USAGE)


def report(problems, unlike):
    for line in problems:
        sys.stderr.write('error: %s\n' % line)
    for line in unlike:
        sys.stderr.write('warning: not what Mercurial records: %s\n' % line)
    sys.stderr.flush()


def unlike_summary(unlike):
    if not unlike:
        return ''
    return ('; %d warning%s: changesets or file revisions Mercurial would '
            'have recorded otherwise (see above; the history on the server '
            'is so, nothing to repair here)'
            % (len(unlike), 's' if len(unlike) > 1 else ''))


def run(args):
    full, names = parse_args(args)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    metadata.check_usable(writing=False)
    current = metadata.read_ref(metadata.METADATA_REF)
    if current is None:
        raise Abort('there is no cinnabar metadata to check',
                    hint='fetch from a Mercurial repository first')
    commits, marks, what = plan(full, names, current)
    if commits == []:
        sys.stderr.write('nothing new to check since %s\n' % current)
        metadata.update_refs({metadata.CHECKED_REF: current})
        return 0
    with Helper.start(git_dir) as helper:
        if names:
            refuse_unknown(helper, names, commits)
        try:
            problems, unlike, counts = helper.fsck(commits)
        except HelperError as error:
            problems, unlike, counts = (
                ['the check stopped: %s' % error.message], [], None)
    report(problems, unlike)
    if problems:
        metadata.update_refs({metadata.BROKEN_REF: current})
        raise Abort('the cinnabar metadata %s is damaged (%d problem%s '
                    'found); refs/cinnabar/broken marks it'
                    % (current, len(problems), 's' if len(problems) > 1
                       else ''), hint=metadata.recovery_hint(current),
                    status=DAMAGE_STATUS)
    sys.stderr.write('checked %s: %d changesets, %d manifests, %d file '
                     'revisions, no problem%s\n'
                     % (what, counts.changesets, counts.manifests,
                        counts.files, unlike_summary(unlike)))
    if marks:
        changes = {metadata.CHECKED_REF: current}
        if commits is None and \
                metadata.read_ref(metadata.BROKEN_REF) == current:
            changes[metadata.BROKEN_REF] = None
        metadata.update_refs(changes)
    return 0
