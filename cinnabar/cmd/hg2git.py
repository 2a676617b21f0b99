"""Convert Mercurial ids to the corresponding git ids.

usage: git cinnabar hg2git [--batch] [--abbrev[=N]] <hg id>...

Prints, for each full Mercurial changeset, manifest or file id, the git
id recorded in the metadata, or 40 zeros when it is unknown.

    --batch        also read ids from standard input, answering each line
    --abbrev[=N]   print only the first N digits (12 without N)
"""

import re

from cinnabar.cmd.conversion import run_conversion
from cinnabar.errors import Abort

USAGE = 'usage: git cinnabar hg2git [--batch] [--abbrev[=N]] <hg id>...'
_HEX = re.compile(r'[0-9a-fA-F]+\Z')


def convert(helper, text):
    if not _HEX.match(text):
        raise Abort('invalid Mercurial id %r' % text)
    if len(text) != 40:
        raise Abort('abbreviated Mercurial ids are not supported: %r' % text,
                    hint='give the full 40-digit id')
    return helper.hg2git(text.lower())


def run(args):
    return run_conversion(args, USAGE, convert)
