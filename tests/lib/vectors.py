"""Expected values made with another tool (git-cinnabar 0.7.5), kept in
tests/vectors/ with the script that made them (make_vectors.py, see its
README): tests compare with them, never with a second run of our code."""

from .env import ROOT

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
