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

Commands print on standard output only what git-cinnabar 0.7 prints
there (scripts read it); a summary of what they did goes to standard
error, and only with `-v` (`VERBOSE`, given to `split_options`; `say`
prints it).
"""


from cinnabar import redact
from cinnabar.errors import Abort

VERBOSE = ('-v', '--verbose')


def say(given, text):
    """Write `text` and a newline to standard error when `given` (from
    split_options) has -v or --verbose."""
    if any(name in given for name in VERBOSE):
        redact.say(text)


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
