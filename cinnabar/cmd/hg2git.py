"""Convert Mercurial ids to the corresponding git ids.

usage: git cinnabar hg2git [--batch] [--abbrev[=N]] <hg id>...

Prints, for each Mercurial changeset, manifest or file id, the git id
recorded in the metadata, or 40 zeros when it is unknown. An id may be
abbreviated to any number of its digits, as with git-cinnabar 0.7.5,
when no other known id starts with the same digits (an abbreviation
several ids share is refused).

    --batch        also read ids from standard input, answering each line
    --abbrev[=N]   print only the first N digits (12 without N)
"""

import re

from cinnabar.cmd.conversion import OPTIONS, run_conversion  # noqa: F401
from cinnabar.cmd.options import usage_of
from cinnabar.errors import Abort
from cinnabar.ids import NULL_GIT

USAGE = usage_of(__doc__)
_HEX = re.compile(r'[0-9a-fA-F]+\Z')


def convert(helper, text):
    if not _HEX.match(text):
        raise Abort('invalid Mercurial id %r' % text)
    text = text.lower()
    if len(text) == 40:
        return helper.hg2git(text)
    if len(text) > 40:
        raise Abort('Mercurial id %r is too long' % text,
                    hint='Mercurial ids have 40 hex digits')
    found = helper.hg_prefix(text)
    return NULL_GIT if found is None else helper.hg2git(found)


def run(args):
    return run_conversion(args, USAGE, convert)
