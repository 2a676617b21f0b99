"""Unit tests of the Python side's parsers and protocol code.

They need neither hg nor the helper: servers, helpers and git are played by
small fakes. The repository top is put on sys.path so that `cinnabar`
imports without installing anything.
"""

import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
if TOP not in sys.path:
    sys.path.insert(0, TOP)
