"""Print the raw Mercurial data of a changeset, manifest or file revision.

usage: git cinnabar data -c <changeset> | -m <manifest> | <file revision>

Prints, byte for byte, the revision's text as Mercurial stores it, which
is what `hg debugdata -c <changeset>`, `hg debugdata -m <manifest>` and
`hg debugdata <path> <file revision>` print: a file revision's text
starts with its copy metadata (between two "\\x01\\n" lines) when it has
some. The id is a full Mercurial id or an abbreviation of at least 4 hex
digits naming one revision of that kind only.

    -c <changeset>   a changeset
    -m <manifest>    a manifest
"""

import re
import sys

from cinnabar import git
from cinnabar.cmd.options import usage_of
from cinnabar.errors import Abort, UsageError
from cinnabar.helper import Helper

USAGE = usage_of(__doc__)
MIN_DIGITS = 4
_HEX = re.compile(r'[0-9a-fA-F]{%d,40}\Z' % MIN_DIGITS)
KIND_OPTIONS = {'-c': 'changeset', '-m': 'manifest'}
# Every option, for completion and "did you mean" (tools/manpages.py);
# a long one taking a value ends with `=`.
OPTIONS = tuple(KIND_OPTIONS)


def parse_args(args):
    """(kind, hex id) from the command line."""
    if args[:1] == ['--']:
        args = args[1:]
    if len(args) == 2 and args[0] in KIND_OPTIONS:
        kind, text = KIND_OPTIONS[args[0]], args[1]
    elif len(args) == 1 and not args[0].startswith('-'):
        kind, text = 'file', args[0]
    elif not args:
        raise UsageError('no revision given', hint=USAGE)
    else:
        raise UsageError('unexpected arguments: %s' % ' '.join(args),
                         hint=USAGE)
    if not _HEX.match(text):
        raise Abort('invalid Mercurial id %r' % text,
                    hint='give %d to 40 hex digits' % MIN_DIGITS)
    return kind, text.lower()


def _not_found(kind, text, answer):
    if answer.status == 'ambiguous':
        return Abort('%s is ambiguous: it starts the ids of %s %ss'
                     % (text, answer.detail, kind),
                     hint='give more digits')
    if answer.status == 'other':
        option = {v: k for k, v in KIND_OPTIONS.items()}.get(answer.detail)
        how = ('`git cinnabar data %s %s`' % (option, text) if option
               else '`git cinnabar data %s`' % text)
        return Abort('%s is not a known %s but a %s' % (text, kind,
                                                        answer.detail),
                     hint='to see it, run %s' % how)
    return Abort('unknown %s %s' % (kind, text))


def run(args):
    kind, text = parse_args(args)
    git_dir = git.git_dir()
    if git_dir is None:
        raise Abort('not in a git repository')
    with Helper.start(git_dir) as helper:
        answer = helper.data(kind, text)
    if answer.status != 'ok':
        raise _not_found(kind, text, answer)
    sys.stdout.buffer.write(answer.text)
    sys.stdout.buffer.flush()
    return 0
