"""`git cinnabar <command>`: finding the commands and dispatching to them.

Each command is a module of this package named after it (`-` in a
command's name is `_` in its module's): its docstring is its `--help` (the
first line is the summary in the command list) and its `run(args)` does
the work and returns the exit status. Modules without `run` (shared code,
such as `conversion`) are not commands. Adding a command means adding its
module; nothing else lists them.
"""

import importlib
import pkgutil
import sys

from cinnabar import VERSION
from cinnabar.errors import Abort, run_guarded


def commands():
    """{command name: module} for every command module of this package."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module('%s.%s' % (__name__, info.name))
        if callable(getattr(module, 'run', None)) and module.__doc__:
            found[info.name.replace('_', '-')] = module
    return found


def command(name):
    """The module of command `name`, or None; imports only that module
    (importing them all is most of a short command's start-up)."""
    module_name = name.replace('-', '_')
    if name != module_name.replace('_', '-') or module_name not in {
            info.name for info in pkgutil.iter_modules(__path__)}:
        return None
    module = importlib.import_module('%s.%s' % (__name__, module_name))
    if callable(getattr(module, 'run', None)) and module.__doc__:
        return module
    return None


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


def dispatch(argv):
    if not argv:
        sys.stderr.write(usage(commands()) + '\n')
        return 1
    if argv[0] in ('-h', '--help', 'help'):
        print(usage(commands()))
        return 0
    if argv[0] in ('-V', '--version'):
        print(version_text())
        return 0
    module = command(argv[0])
    if module is None:
        raise Abort('%r is not a git cinnabar command' % argv[0],
                    hint='run `git cinnabar --help` for the list')
    if '-h' in argv[1:] or '--help' in argv[1:]:
        print(module.__doc__.strip())
        return 0
    return module.run(argv[1:])


def main(argv=None):
    return run_guarded(dispatch, sys.argv[1:] if argv is None else argv)
