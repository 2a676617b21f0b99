"""Expected values made with another tool (git-cinnabar 0.7.5), kept in
tests/vectors/ with the script that made them (make_vectors.py, see its
README): tests compare with them, never with a second run of our code."""

from .env import ROOT
from .randhist import generate

VECTORS = ROOT / 'tests' / 'vectors'


def read_tsv(name):
    """{first field: second field} of the tab-separated lines of `name`
    (lines starting with `#` are comments)."""
    pairs = {}
    for line in (VECTORS / name).read_text().splitlines():
        if line and not line.startswith('#'):
            key, value = line.split('\t')
            pairs[key] = value
    return pairs


# push-copies.tsv: (seed, commits, similarity or None) of the random
# histories git-cinnabar 0.7.5 pushed, in PUSH_COPY_STEPS steps.
PUSH_COPIES = ((1, 40, None), (2, 40, None), (3, 40, None), (4, 40, 50))
PUSH_COPY_STEPS = 3


def push_copies_run(seed, commits, similarity):
    """The key of a PUSH_COPIES history in push-copies.tsv."""
    return f'{seed}-{commits}-{similarity or "none"}'


def push_copies_history(seed, commits):
    """A PUSH_COPIES history: no merges, no content starting with `\\1\\n`
    (see lib.randhist.generate)."""
    return generate(seed, commits, PUSH_COPY_STEPS, merges=False, meta=False)
