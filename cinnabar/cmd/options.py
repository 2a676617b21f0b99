"""Command lines of `git cinnabar` commands; not a command.

`split_options(args, names, usage)` separates the options a command takes
from its other words:

- each of `names` is an option (`--tags`) given at most once or more
  (the last one counts); a name ending with `=` (`--abbrev=`) may be
  given alone (`--abbrev`, value True) or with a value attached
  (`--abbrev=7`, value '7');
- `--` ends the options: every word after it is a word, even `-x`;
- `-` alone is a word (standard input, for some commands);
- any other word starting with `-` is an error (`unknown_option`): its
  hint is the most similar option (`most_similar`), else `usage`.

`most_similar(word, names)` picks what git's "did you mean" picks
(git's help.c, `help_unknown_cmd`): the names `word` begins, else those
nearest by an edit distance weighing a swap of two neighbours 0, a
substitution 2, an insertion 1 and a deletion 3, when near enough (less
than 6).

Commands print on standard output only what git-cinnabar 0.7 prints
there (scripts read it); a summary of what they did goes to standard
error, and only with `-v` (`VERBOSE`, given to `split_options`; `say`
prints it).

`changeset_commit(helper, resolver, name)` is the commit a revision named
on a command line stands for: a git commit, else a Mercurial changeset id,
full or abbreviated (any number of its 40 digits, as git-cinnabar 0.7.5
takes them; an abbreviation is looked up among changesets only, as `hg
log -r` does).
"""

import re

from cinnabar import redact
from cinnabar.errors import UsageError

VERBOSE = ('-v', '--verbose')
_HG_ID = re.compile(r'[0-9a-fA-F]{1,40}\Z')
# Costs of the edit distance, as git's help.c weighs them, and the
# largest distance still worth suggesting.
SWAP, SUBSTITUTE, INSERT, DELETE = 0, 2, 1, 3
NEAR_ENOUGH = 5


def distance(word, name):
    """The cost of editing `word` into `name` (Damerau-Levenshtein with
    the weights above; rows of the table kept two at a time)."""
    before, previous = None, [i * INSERT for i in range(len(name) + 1)]
    for i, char in enumerate(word, 1):
        row = [i * DELETE]
        for j, other in enumerate(name, 1):
            cost = previous[j - 1] + (0 if char == other else SUBSTITUTE)
            cost = min(cost, previous[j] + DELETE, row[j - 1] + INSERT)
            if (before is not None and j > 1 and char == name[j - 2]
                    and word[i - 2] == other):
                cost = min(cost, before[j - 2] + SWAP)
            row.append(cost)
        before, previous = previous, row
    return previous[-1]


def most_similar(word, names):
    """The names `word` begins, else the nearest ones (see above), or
    [] when none is near enough; in the order of `names`."""
    if not word:
        return []
    begun = [n for n in names if n.startswith(word)]
    if begun:
        return begun if len(begun) < len(names) else []
    costs = {n: distance(word, n) for n in names}
    best = min(costs.values(), default=NEAR_ENOUGH + 1)
    return [n for n in names if costs[n] == best <= NEAR_ENOUGH]


def unknown_option(arg, names, usage):
    """The UsageError for option `arg`, which is none of `names`: it suggests
    the most similar ones (without their `=`), else shows `usage`."""
    name = arg.partition('=')[0]
    if name in names:
        return UsageError('option %s takes no value' % name, hint=usage)
    similar = most_similar(name, [n.rstrip('=') for n in names])
    if similar:
        usage = 'did you mean %s?' % ' or '.join(similar)
    return UsageError('unknown option %s' % arg, hint=usage)


def unexpected(arg, names, usage):
    """The UsageError for `arg` where only options `names` may come."""
    if arg.startswith('-'):
        return unknown_option(arg, names, usage)
    return UsageError('unknown argument %s' % arg, hint=usage)


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
            raise unknown_option(arg, names, usage)
        else:
            words.append(arg)
    return given, words


def changeset_commit(helper, resolver, name):
    """The GitId `name` stands for (see the module's docstring; `resolver`
    is a git.CommitResolver), or None. Raises Abort when an abbreviation
    is ambiguous."""
    commit = resolver.resolve(name)
    if commit is None and _HG_ID.match(name):
        node = helper.hg_prefix(name.lower(), 'changeset')
        if node is not None:
            commit = helper.hg2git(node)
    return None if commit is None or commit.is_null else commit


def usage_of(doc):
    """The usage lines of a command's docstring (its second paragraph),
    what `-h` shows first and the hint of a usage error."""
    return doc.strip().split('\n\n')[1]
