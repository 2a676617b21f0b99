"""List, create or delete Mercurial tags.

usage: git cinnabar tag [-f] [--onto <branch>] [-m <message>] <tag> [<rev>]
       git cinnabar tag -d [--onto <branch>] [-m <message>] <tag>
       git cinnabar tag -l [--format <format>]

Listing (`-l`, or no argument) always works. Creating and deleting are, as with
git-cinnabar's `tag` command, the `tag` experiment: they need `tag`
among `cinnabar.experiments` (`git config cinnabar.experiments tag`).
Pushing git tags is refused: a Mercurial tag is a commit to `.hgtags`,
which this command (or `hg tag`) makes, and which you push.

A Mercurial tag is a line `<changeset id> <name>` in the `.hgtags` file
of a head; the tags of a repository are those of all its heads' files,
as Mercurial combines them (a later line wins, a tag moved or removed on
one head stays so); those of HEAD (or `--onto`'s branch) count too.
Creating or deleting one makes the commit `hg tag` makes (the same
changeset once pushed, for the same author, date and message) on top of
HEAD, or of `--onto <branch>`: `.hgtags` with lines appended, the line
of the tag's current value first when it has one (or the null id when
the tag was removed before), then `<changeset> <name>`, the null id for
a deletion. Its message is `Added tag <name> for changeset <12 digits>`
or `Removed tag <name>` (or `-m`); author and committer are yours.
HEAD's branch then fast-forwards to it, with git's report (`Updating
a..b`, `Fast-forward` and the diffstat), or `--onto`'s branch is set to
it without a checkout. Push it as any commit to make the tag the
server's.

    <rev>           the commit to tag (default HEAD): a git commit, or a
                    Mercurial changeset id, full or abbreviated (any
                    number of digits no other changeset starts with); it
                    must be a changeset the metadata knows
    -f, --force     move a tag that exists (refused without it: "tag
                    '<tag>' already exists")
    -d, --delete    remove a tag
    --onto <branch> commit on that branch (a name under refs/heads/, or
                    a full ref name) instead of HEAD; it must exist and
                    not be checked out in another worktree (the one
                    checked out here fast-forwards, as without --onto)
    -m, --message <message>
                    the commit message
    -l, --list      list the tags of the heads the metadata knows and of
                    HEAD (those made or deleted here count before they
                    are pushed), sorted
    --format <f>    for -l: space-separated among %(tagname),
                    %(objectname) (the commit) and %(hg::objectname)

Tag names Mercurial refuses are refused: `tip`, `.`, `null`, names with
`:`, NUL, CR or LF, integers, and leading or trailing white space.
"""

import os
import subprocess

from cinnabar import config, git, metadata, tags, topological
from cinnabar.cmd.options import changeset_commit, unknown_option, usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import Helper
from cinnabar.ids import NULL_HG, HgId

USAGE = usage_of(__doc__)
FLAGS = {'-f': 'force', '--force': 'force', '-d': 'delete',
         '--delete': 'delete', '-l': 'list', '--list': 'list'}
VALUED = {'--onto': 'onto', '-m': 'message', '--message': 'message',
          '--format': 'format'}
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = tuple(FLAGS) + tuple(
    name + '=' if name.startswith('--') else name for name in VALUED)
FIELDS = ('%(tagname)', '%(objectname)', '%(hg::objectname)')


def parse_args(args):
    """({option: value}, [words])."""
    options, words = {}, []
    arguments = iter(args)
    for arg in arguments:
        name, equals, value = arg.partition('=')
        if arg in FLAGS:
            options[FLAGS[arg]] = True
        elif name in VALUED:
            value = value if equals else next(arguments, None)
            if value is None:
                raise UsageError('%s needs a value' % name, hint=USAGE)
            options[VALUED[name]] = value
        elif arg.startswith('-') and arg != '-':
            raise unknown_option(arg, OPTIONS, USAGE)
        else:
            words.append(arg)
    if not words and not options:
        options['list'] = True      # as `git tag` alone
    if options.get('list'):
        if words or set(options) - {'list', 'format'}:
            raise UsageError('-l takes only --format', hint=USAGE)
    elif not 1 <= len(words) <= (1 if options.get('delete') else 2):
        raise UsageError('give a tag name (and, without -d, what to tag)',
                         hint=USAGE)
    return options, words


def check_name(name):
    """Mercurial's rules for a tag name."""
    if name in ('tip', '.', 'null'):
        raise Abort("'%s' is reserved; it cannot be a tag name" % name)
    for c in (':', '\0', '\n', '\r'):
        if c in name:
            raise Abort('a tag name cannot contain %r' % c)
    if name.isdigit():
        raise Abort('a tag name cannot be an integer')
    if name.strip() != name:
        raise Abort('a tag name cannot start or end with white space')


def all_tags(helper, extra_head):
    """{name: tags.Tag} of the heads the metadata knows and `extra_head`,
    removed tags included (their node is the null id)."""
    heads = [h.git_id for h in helper.heads() if h.git_id is not None]
    if extra_head is not None:
        heads.append(extra_head)
    merged = {}
    for commit, text in tags.read_hgtags_blobs(
            topological.compute(list(dict.fromkeys(heads)))):
        merged = tags.merge_tags(merged, tags.parse_hgtags(text)[0])
    return merged


def resolve_rev(helper, rev):
    """(GitId, HgId) of a git commit or a Mercurial changeset id."""
    with git.CommitResolver() as resolver:
        commit = changeset_commit(helper, resolver, rev)
    if commit is None:
        raise Abort("bad revision '%s'" % rev)
    node = helper.git2hg(commit)
    if node.is_null:
        raise Abort('%s is not the commit of a Mercurial changeset (push '
                    'it first)' % commit)
    return commit, node


REGULAR_MODES = (b'100644', b'100755')
KINDS = {b'040000': 'a directory', b'120000': 'a symbolic link',
         b'160000': 'a submodule'}


def hgtags_entry(head):
    """(mode, blob id) of .hgtags in `head`, or None when it has none.
    As `hg tag`, refuses unless it is a regular file."""
    if head is None:
        return None
    out = git.run(['ls-tree', '--full-tree', '-z', str(head), '--',
                   '.hgtags']).stdout
    if not out:
        return None
    mode, _, oid = out.split(b'\t', 1)[0].split()
    if mode not in REGULAR_MODES:
        raise Abort('.hgtags is %s in %s, not a regular file; cannot tag'
                    % (KINDS.get(mode, 'not a file'), head),
                    hint='make .hgtags a regular file, or tag on another '
                         'branch (--onto)')
    return mode, oid.decode('ascii')


def new_hgtags(entry, lines):
    """The blob id of .hgtags (`entry`, from hgtags_entry) with `lines`
    appended."""
    old = b''
    if entry is not None:
        old = git.run(['cat-file', 'blob', entry[1]]).stdout
    if old and not old.endswith(b'\n'):
        old += b'\n'
    data = old + ''.join(lines).encode('utf-8', 'surrogateescape')
    out = git.run(['hash-object', '-w', '--stdin'], input=data).stdout
    return out.decode('ascii').strip()


def tag_commit(head, mode, blob, message):
    """A commit of HEAD's tree with .hgtags set to `blob` (of `mode`), on
    HEAD."""
    entries = b''
    if head is not None:
        entries = git.run(['ls-tree', '--full-tree', '-z', head]).stdout
    kept = [e for e in entries.split(b'\0')
            if e and e.split(b'\t', 1)[1] != b'.hgtags']
    kept.append(b'%s blob %s\t.hgtags' % (mode, blob.encode('ascii')))
    tree = git.run(['mktree', '-z'],
                   input=b''.join(e + b'\0' for e in kept)).stdout
    # Written whole: the message without a final newline, as
    # git-cinnabar writes it (so both make the same commit).
    text = b'tree %s' % tree.strip()
    if head is not None:
        text += b'\nparent %s' % str(head).encode('ascii')
    for who in ('AUTHOR', 'COMMITTER'):
        ident = git.run(['var', 'GIT_%s_IDENT' % who]).stdout.strip()
        text += b'\n%s %s' % (who.lower().encode('ascii'), ident)
    text += b'\n\n' + message.encode('utf-8', 'surrogateescape')
    out = git.run(['hash-object', '-t', 'commit', '-w', '--stdin'],
                  input=text).stdout
    return out.decode('ascii').strip()


def list_tags(helper, fmt):
    fields = fmt.split(' ')
    if any(f not in FIELDS for f in fields):
        raise Abort('invalid format: %s' % fmt, hint=' '.join(FIELDS))
    found = tags.live_tags(all_tags(helper, metadata.read_ref('HEAD')))
    names = sorted(found)
    commits = helper.hg2git_many([found[n] for n in names])
    for name, commit in zip(names, commits):
        values = {'%(tagname)': name, '%(objectname)': str(commit),
                  '%(hg::objectname)': str(found[name])}
        print(' '.join(values[f] for f in fields))
    return 0


def checked_out_branches():
    """{ref name: worktree path} of the branches checked out in the
    worktrees of the repository (this one's HEAD included). Lines, not
    -z: git before 2.36 (bullseye has 2.30) has no -z there."""
    out = git.run(['worktree', 'list', '--porcelain']).stdout
    found, path = {}, None
    for field in out.decode('utf-8', 'surrogateescape').splitlines():
        if field.startswith('worktree '):
            path = field[len('worktree '):]
        elif field.startswith('branch '):
            found[field[len('branch '):]] = path
    return found


def onto_branch(onto):
    """The ref `--onto <onto>` updates (a branch name, or a full ref
    name), or None when it is the branch checked out here: the tag is then
    made as without --onto. Refuses a branch that does not exist or that
    another worktree has checked out."""
    ref = onto if onto.startswith('refs/') else 'refs/heads/' + onto
    if git.run(['show-ref', '--verify', '-q', ref], check=False).returncode:
        raise Abort("no branch '%s' to tag onto" % onto,
                    hint='create it first (`git branch %s <start>`), or '
                    'tag on HEAD (without --onto)' % onto)
    where = checked_out_branches().get(ref)
    if where is None:
        return ref
    here = git.run(['rev-parse', '--show-toplevel'], check=False).stdout
    if os.path.realpath(where) == os.path.realpath(
            here.decode('utf-8', 'surrogateescape').strip() or '/nowhere'):
        return None
    raise Abort("branch '%s' is checked out at '%s'" % (onto, where),
                hint='tag there, without --onto')


def make_tag(helper, options, words):
    name = words[0]
    onto = options.get('onto')
    onto = onto_branch(onto) if onto else None
    head = metadata.read_ref(onto if onto else 'HEAD')
    entry = hgtags_entry(head)
    known = all_tags(helper, head)
    current = known.get(name)
    if options.get('delete'):
        if current is None or current.node.is_null:
            raise Abort("tag '%s' not found" % name)
        node = NULL_HG
    else:
        if current is not None and not current.node.is_null and \
                not options.get('force'):
            raise Abort("tag '%s' already exists" % name,
                        hint='-f moves it')
        node = resolve_rev(helper, words[1] if len(words) > 1
                           else 'HEAD')[1]
    lines = ['%s %s\n' % (current.node, name)] if current else []
    lines.append('%s %s\n' % (HgId(node), name))
    message = options.get('message') or (
        'Removed tag %s' % name if options.get('delete') else
        'Added tag %s for changeset %s' % (name, str(node)[:12]))
    mode = entry[0] if entry else REGULAR_MODES[0]
    commit = tag_commit(head, mode, new_hgtags(entry, lines), message)
    if onto:
        git.run(['update-ref', '-m', 'git cinnabar tag', onto, commit,
                 str(head)])
        return 0
    # git's own report: "Updating a..b", "Fast-forward" and the diffstat.
    return subprocess.call(['git', 'merge', '--ff-only', commit])


def run(args):
    options, words = parse_args(args)
    if not config.experiment('tag') and not options.get('list'):
        raise Abort('git cinnabar tag is an experiment (listing with -l '
                    'is not)',
                    hint='enable it with `git config cinnabar.experiments '
                         'tag` (with the others you use, comma-separated)')
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    if not options.get('list'):
        check_name(words[0])
    metadata.check_usable(writing=False)
    with Helper.start(git_dir) as helper:
        if options.get('list'):
            return list_tags(helper, options.get('format', '%(tagname)'))
        return make_tag(helper, options, words)
