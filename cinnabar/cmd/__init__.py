"""`git cinnabar <command>`: the table of commands and the dispatcher.

Each command is a module of this package: its docstring is its `--help`
(the first line is the summary in the command list) and its `run(args)`
does the work and returns the exit status. Adding a command means adding
its module and one line to COMMANDS.
"""

import sys

from cinnabar import VERSION
from cinnabar.cmd import git2hg, hg2git
from cinnabar.errors import Abort, run_guarded

COMMANDS = {
    'git2hg': git2hg,
    'hg2git': hg2git,
}


def usage():
    lines = ['usage: git cinnabar [--version] <command> [<args>]', '',
             'commands:']
    for name, module in sorted(COMMANDS.items()):
        summary = module.__doc__.strip().splitlines()[0]
        lines.append('   %-10s %s' % (name, summary))
    lines += ['', 'Run `git cinnabar <command> --help` for a command\'s help.']
    return '\n'.join(lines)


def dispatch(argv):
    if not argv:
        sys.stderr.write(usage() + '\n')
        return 1
    if argv[0] in ('-h', '--help', 'help'):
        print(usage())
        return 0
    if argv[0] in ('-V', '--version'):
        print('git-cinnabar %s' % VERSION)
        return 0
    module = COMMANDS.get(argv[0])
    if module is None:
        raise Abort('%r is not a git cinnabar command' % argv[0],
                    hint='run `git cinnabar --help` for the list')
    if '-h' in argv[1:] or '--help' in argv[1:]:
        print(module.__doc__.strip())
        return 0
    return module.run(argv[1:])


def main(argv=None):
    return run_guarded(dispatch, sys.argv[1:] if argv is None else argv)
