"""What the id-conversion commands (hg2git, git2hg) share; not a command.

Both take `[--batch] [--abbrev[=N]] <id>...`: they print one converted id
a line for each argument, then, with --batch, for each whitespace-separated
word of each line of standard input, flushing after each line. --abbrev
alone shows 12 digits; --abbrev=N shows N (1 to 40).
"""

import sys

from cinnabar import git
from cinnabar.cmd.options import split_options
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import Helper
from cinnabar.record import record

OPTIONS = ('--batch', '--abbrev=')

DEFAULT_ABBREV = 12

Options = record('Options', 'batch abbrev items')


def _parse_abbrev(text, usage):
    if not text.isdigit() or not 1 <= int(text) <= 40:
        raise UsageError('invalid --abbrev value %r (1 to 40)' % text,
                         hint=usage)
    return int(text)


def parse_args(args, usage):
    """Options from the command line (`usage` is the hint for errors)."""
    given, items = split_options(args, OPTIONS, usage)
    batch = '--batch' in given
    abbrev = given.get('--abbrev', 40)
    if abbrev is True:
        abbrev = DEFAULT_ABBREV
    elif isinstance(abbrev, str):
        abbrev = _parse_abbrev(abbrev, usage)
    if not items and not batch:
        raise UsageError('nothing to convert', hint=usage)
    return Options(batch, abbrev, items)


def run_conversion(args, usage, convert):
    """Run a conversion command; `convert(helper, text)` returns an id."""
    options = parse_args(args, usage)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    with Helper.start(git_dir) as helper:
        for item in options.items:
            print(convert(helper, item)[:options.abbrev])
        sys.stdout.flush()
        if options.batch:
            for line in sys.stdin:
                for item in line.split():
                    print(convert(helper, item)[:options.abbrev])
                sys.stdout.flush()
    return 0
