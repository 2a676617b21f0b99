"""Command lines of `git cinnabar` commands; not a command.

`split_options(args, names, usage)` separates the options a command takes
from its other words:

- each of `names` is an option (`--tags`) given at most once or more
  (the last one counts); a name ending with `=` (`--abbrev=`) may be
  given alone (`--abbrev`, value True) or with a value attached
  (`--abbrev=7`, value '7');
- `--` ends the options: every word after it is a word, even `-x`;
- `-` alone is a word (standard input, for some commands);
- any other word starting with `-` is an error, with `usage` as hint.
"""

from cinnabar.errors import Abort


def split_options(args, names, usage):
    """({option name without `=`: True or its value}, [other words])."""
    plain = {n for n in names if not n.endswith('=')}
    valued = {n[:-1] for n in names if n.endswith('=')}
    given, words = {}, []
    arguments = iter(args)
    for arg in arguments:
        name, equals, value = arg.partition('=')
        if arg == '--':
            words.extend(arguments)
        elif arg in plain or arg in valued:
            given[arg] = True
        elif equals and name in valued:
            given[name] = value
        elif arg.startswith('-') and arg != '-':
            raise Abort('unknown option %s' % arg, hint=usage)
        else:
            words.append(arg)
    return given, words
