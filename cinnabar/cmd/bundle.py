"""Write a Mercurial bundle of git commits.

usage: git cinnabar bundle [--version 1|2] [-t <bundlespec>] <file>
                           [--] <rev-list arguments>...

Writes to <file> a bundle, which `hg unbundle` reads, holding the
changesets of the commits `git rev-list <rev-list arguments>` lists
(e.g. `--all`, which leaves out git-cinnabar's own refs, `master`,
`master ^v1.0`, `v1.0..master`). Each parent of those commits must be
among them or be known to come from Mercurial.
Commits that came from Mercurial give back their changesets exactly;
other commits are converted as `git push` would convert them. Nothing
is recorded: the metadata and the refs are left as they are.

    -t, --type <bundlespec>   the bundle's type, as for `hg bundle -t`:
                              none-v1, gzip-v1, bzip2-v1, none-v2,
                              gzip-v2, bzip2-v2 or zstd-v2; a compression
                              alone (none, gzip, bzip2, zstd) or a
                              version alone (v1, v2) is accepted too
    --version 1|2             the bundle's version when the type does
                              not say it (default 2, as hg bundle)

Without either, the bundle is bzip2-v2, as `hg bundle` makes it.
"""

import os
import sys
import tempfile

from cinnabar import git
from cinnabar.cmd.options import unknown_option, usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import Helper
from cinnabar.hg import bundlewriter

USAGE = usage_of(__doc__)
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = ('-t', '--type=', '--version=')


def _option_value(name, arguments):
    value = next(arguments, None)
    if value is None:
        raise UsageError('option %s needs a value' % name, hint=USAGE)
    return value


def parse_args(args):
    """(BundleSpec, path, rev-list arguments) from the command line.
    Options come before the file; after it, everything (but a first
    `--`) is for `git rev-list`."""
    version = spec = None
    arguments = iter(args)
    path = None
    for arg in arguments:
        name, equals, value = arg.partition('=')
        if arg in ('-t', '--type', '--version'):
            value = _option_value(arg, arguments)
        elif name in ('--type', '--version') and equals:
            arg = name
        elif arg.startswith('-t') and len(arg) > 2:
            arg, value = '-t', arg[2:]
        elif arg == '--':
            path = next(arguments, None)
            break
        elif arg.startswith('-') and arg != '-':
            raise unknown_option(arg, OPTIONS, USAGE)
        else:
            path = arg
            break
        if arg == '--version':
            if value not in ('1', '2'):
                raise UsageError('invalid --version %r (1 or 2)' % value,
                                 hint=USAGE)
            version = 'v' + value
        else:
            spec = value
    if not path:
        raise UsageError('no bundle file given', hint=USAGE)
    revs = list(arguments)
    if revs[:1] == ['--']:
        revs = revs[1:]
    if not revs:
        raise UsageError('no commits given', hint=USAGE)
    return bundlewriter.parse_bundlespec(spec, version), path, revs


def parents_first(commits):
    """The commits of [(commit, parents)] in an order where the parents
    among them come before their children, keeping the given order where
    it already is one."""
    parents_of = dict(commits)
    done = set()
    ordered = []
    for commit, _ in commits:
        stack = [commit]
        while stack:
            top = stack[-1]
            if top in done:
                stack.pop()
                continue
            waiting = [p for p in parents_of[top]
                       if p in parents_of and p not in done]
            if waiting:
                stack.extend(reversed(waiting))
                continue
            done.add(top)
            ordered.append(top)
            stack.pop()
    return ordered


def check_outside_parents(helper, commits):
    """Abort unless every parent outside `commits` came from Mercurial."""
    inside = {commit for commit, _ in commits}
    outside = sorted({p for _, parents in commits for p in parents
                      if p not in inside})
    for parent, hg_id in zip(outside, helper.git2hg_many(outside)):
        if hg_id.is_null:
            child = next(c for c, parents in commits if parent in parents)
            raise Abort('commit %s has a parent, %s, that is neither in the '
                        'bundle nor known to come from Mercurial'
                        % (child, parent),
                        hint='widen the range to include it')


def make_changegroup(helper, spec, commits, path):
    """Write the changegroup of `commits` to `path`; nothing is kept."""
    try:
        helper.changegroup(bundlewriter.changegroup_version(spec), path,
                           commits)
    finally:
        if helper.alive:
            helper.abort()


def run(args):
    spec, path, revs = parse_args(args)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    # `--all` (or `--glob`...) must not bring in the metadata's commits
    # (refs/notes/cinnabar is the git2hg notes part of the metadata).
    listed = git.rev_list_with_parents(
        ['--exclude=refs/cinnabar/*', '--exclude=refs/notes/cinnabar']
        + revs)
    if not listed:
        raise Abort('no commits to bundle: `git rev-list %s` lists none'
                    % ' '.join(revs))
    commits = parents_first(listed)
    with tempfile.TemporaryDirectory(prefix='cinnabar-bundle-') as tmp, \
            Helper.start(git_dir) as helper:
        check_outside_parents(helper, listed)
        changegroup = os.path.join(tmp, 'changegroup')
        make_changegroup(helper, spec, commits, changegroup)
        bundlewriter.write_bundle(helper, spec, changegroup, len(commits),
                                  path)
    sys.stderr.write('%d changeset%s written to %s (%s-%s)\n'
                     % ((len(commits), '' if len(commits) == 1 else 's',
                         path) + tuple(spec)))
    return 0
