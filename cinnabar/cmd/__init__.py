"""`git cinnabar <command>`: the command table and the dispatch.

`COMMANDS` lists every command, as git's `commands[]` does: its name,
the module of this package that implements it, whether it writes and
whether it works outside a repository (see Command). The module's
docstring is the command's `--help` (its first line is the summary in
the command list) and its `run(args)` does the work and returns the exit
status. Modules not in the table (shared code: `options`, `conversion`)
are not commands. Adding a command means adding its module and its line here.
"""

import importlib
import sys

from cinnabar import VERSION
from cinnabar.errors import USAGE_STATUS, run_guarded
from cinnabar.record import record

Command = record('Command', 'name module writes outside')
Command.__doc__ = """A command: `name` as typed after `git cinnabar`,
`module`, the name of its module in this package, `writes` (it may write
the metadata or git-cinnabar's refs: it holds the repository's lock,
cinnabar.repolock, while it runs) and `outside` (it needs no
repository: it installs git-cinnabar; every other command works on a
repository's metadata, which a repository of SHA-256 objects cannot
hold, cinnabar.git.require_sha1)."""

COMMANDS = (
    Command('bundle', 'bundle', writes=True, outside=False),
    Command('clear', 'clear', writes=True, outside=False),
    Command('data', 'data', writes=False, outside=False),
    Command('download', 'download', writes=False, outside=True),
    Command('fetch', 'fetch', writes=True, outside=False),
    Command('fsck', 'fsck', writes=True, outside=False),
    Command('git2hg', 'git2hg', writes=False, outside=False),
    Command('hg2git', 'hg2git', writes=False, outside=False),
    Command('reclone', 'reclone', writes=True, outside=False),
    Command('rollback', 'rollback', writes=True, outside=False),
    Command('self-update', 'self_update', writes=False, outside=True),
    Command('strip', 'strip', writes=True, outside=False),
    Command('tag', 'tag', writes=True, outside=False),
    Command('unbundle', 'unbundle', writes=True, outside=False),
    Command('upgrade', 'upgrade', writes=True, outside=False),
)
_BY_NAME = {c.name: c for c in COMMANDS}


def _load(entry):
    return importlib.import_module('%s.%s' % (__name__, entry.module))


def commands():
    """{command name: module} for every command of the table."""
    return {entry.name: _load(entry) for entry in COMMANDS}


def command(name):
    """The module of command `name`, or None; imports only that module
    (importing them all is most of a short command's start-up)."""
    entry = _BY_NAME.get(name)
    return _load(entry) if entry else None


def usage(table):
    lines = ['usage: git cinnabar [--version] <command> [<args>]', '',
             'commands:']
    for name, module in sorted(table.items()):
        summary = module.__doc__.strip().splitlines()[0]
        lines.append('   %-12s %s' % (name, summary))
    lines += ['', 'Run `git cinnabar <command> --help` for a command\'s help.']
    return '\n'.join(lines)


def version_text():
    """What `git cinnabar --version` prints: our version, then the
    helper's (see cinnabar.helper_version)."""
    from cinnabar import helper_version
    return 'git-cinnabar %s (python %s)\n%s' % (
        VERSION, sys.version.split()[0], helper_version.describe(VERSION))


def unknown_command(word):
    """What git says of `git <typo>` (help.c, `help_unknown_cmd`), for
    `git cinnabar <typo>`: the most similar commands, if any; status 1."""
    from cinnabar.cmd.options import most_similar
    lines = ["git cinnabar: '%s' is not a git cinnabar command. "
             "See 'git cinnabar --help'." % word]
    similar = most_similar(word, [c.name for c in COMMANDS])
    if similar:
        lines += ['', 'The most similar command%s' % (
            ' is' if len(similar) == 1 else 's are')]
        lines += ['\t' + name for name in similar]
    sys.stderr.write('\n'.join(lines) + '\n')
    return 1


def dispatch(argv):
    if not argv:
        # As `git` alone: the usage on standard output, status 1.
        print(usage(commands()))
        return 1
    if argv[0] in ('-h', '--help') or argv == ['help']:
        print(usage(commands()))
        return 0
    if argv[0] in ('-V', '--version'):
        print(version_text())
        return 0
    if argv[0] == 'help' and len(argv) > 1:
        argv = [argv[1], '--help']
    if argv[0].startswith('-'):
        from cinnabar.cmd.options import unknown_option
        raise unknown_option(argv[0], ('--version', '--help'),
                             'usage: git cinnabar [--version] <command> '
                             '[<args>]')
    module = command(argv[0])
    if module is None:
        return unknown_command(argv[0])
    if '-h' in argv[1:] or '--help' in argv[1:]:
        print(module.__doc__.strip())
        # `git <command> -h` exits 129, as after a usage error; --help
        # (git's manual page) succeeds.
        return 0 if '--help' in argv[1:] else USAGE_STATUS
    entry = _BY_NAME[argv[0]]
    if entry.outside:
        return module.run(argv[1:])
    from cinnabar import git
    git_dir = git.git_dir()
    git.require_sha1(git_dir)
    if not entry.writes:
        return module.run(argv[1:])
    from cinnabar import repolock
    with repolock.held(git_dir):
        return module.run(argv[1:])


def main(argv=None):
    return run_guarded(dispatch, sys.argv[1:] if argv is None else argv)
