"""Bring cinnabar metadata of another format to the one this version uses.

usage: git cinnabar upgrade

This version reads and writes the metadata of git-cinnabar 0.5 to 0.7
(the metadata commit refs/cinnabar/metadata with the format flags
`files-meta unified-manifests-v2` in its message). What upgrade finds,
and does:

- that format: nothing to do;
- that format with its flags written differently (another order, other
  spacing): the metadata commit is written again with the flags as this
  version writes them (same parts, same previous metadata);
- refs of git-cinnabar before 0.4 left over next to current metadata
  (refs/cinnabar/hg2git, refs/cinnabar/manifest, refs/cinnabar/branches/*,
  refs/cinnabar/tip): they are removed;
- metadata of git-cinnabar before 0.5 (flags without
  `unified-manifests-v2`, or no metadata commit but the refs above;
  refs/notes/cinnabar alone says nothing, as git-cinnabar 0.7 and this
  version keep it next to the metadata): its manifests are stored in
  another layout that cannot be converted without the Mercurial data:
  run `git cinnabar clear` and fetch again, or `git cinnabar reclone`;
- flags this version does not know: a newer git-cinnabar wrote it;
  upgrade git-cinnabar.

Other commands refuse metadata of another format, saying what to run.
"""

from cinnabar import git, metadata
from cinnabar.cmd.options import usage_of
from cinnabar.errors import Abort, UsageError

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = ()
CANNOT = ('cannot be upgraded in place: its manifests must be imported '
          'again from the Mercurial repository')


def upgrade_flags(current):
    """Upgrade the metadata commit's flags when that is all it needs;
    returns what was done, or raises."""
    commit = metadata.read_commit(current)
    flags = commit.message.split()
    problem = metadata.format_problem(current)
    if problem is None:
        return None
    if 'newer' in problem.message:
        raise problem
    if set(flags) != metadata.KNOWN_FLAGS or len(flags) != 2:
        raise Abort("the cinnabar metadata is of git-cinnabar before 0.5 "
                    "(flags '%s'); it %s" % (commit.message.strip(), CANNOT),
                    hint=metadata.RECLONE_HINT)
    if len(commit.parents) not in (5, 6):
        raise problem
    new = metadata.write_commit(commit.tree, commit.parents)
    metadata.update_refs({metadata.METADATA_REF: new})
    return "rewrote the metadata flags ('%s' -> '%s')" % (
        commit.message, metadata.FLAGS)


def run(args):
    if args:
        raise UsageError('upgrade takes no argument', hint=USAGE)
    if git.git_dir() is None:
        raise Abort('not in a git repository')
    current = metadata.read_ref(metadata.METADATA_REF)
    legacy = metadata.legacy_refs()
    if current is None:
        if legacy:
            raise Abort('this repository has metadata of git-cinnabar '
                        'before 0.4 (%s); it %s' % (legacy[0], CANNOT),
                        hint=metadata.RECLONE_HINT)
        print('there is no cinnabar metadata to upgrade')
        return 0
    done = [upgrade_flags(current)]
    if legacy:
        metadata.update_refs({name: None for name in legacy})
        done.append('removed refs of git-cinnabar before 0.4: %s'
                    % ', '.join(legacy))
    done = [d for d in done if d]
    print('\n'.join(done) if done else
          'the cinnabar metadata is already in the current format')
    return 0
