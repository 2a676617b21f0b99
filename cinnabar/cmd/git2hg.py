"""Convert git commits to the corresponding Mercurial changeset ids.

usage: git cinnabar git2hg [--batch] [--abbrev[=N]] <committish>...

Prints, for each committish (resolved by git, e.g. `HEAD~2`), the
Mercurial changeset id recorded in the metadata, or 40 zeros when the
commit is unknown or the name resolves to no commit.

    --batch        also read committish names from standard input,
                   answering each line
    --abbrev[=N]   print only the first N digits (12 without N)
"""

from cinnabar import git
from cinnabar.cmd.conversion import OPTIONS, run_conversion  # noqa: F401
from cinnabar.cmd.options import usage_of
from cinnabar.ids import NULL_HG

USAGE = usage_of(__doc__)


def run(args):
    with git.CommitResolver() as resolver:
        def convert(helper, text):
            git_id = resolver.resolve(text)
            return NULL_HG if git_id is None else helper.git2hg(git_id)
        return run_conversion(args, USAGE, convert)
