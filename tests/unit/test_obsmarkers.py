"""Obsolescence markers (cinnabar.hg.obsmarkers), read back by Mercurial's
own decoder (the venv's mercurial package: an oracle that is not ours)."""

import pytest

from cinnabar.errors import Abort
from cinnabar.hg import obsmarkers
from cinnabar.ids import HgId

obsolete = pytest.importorskip('mercurial.obsolete')

OLD, NEW, P1 = (HgId(c * 40) for c in 'abc')


def decode(payload):
    version, markers = obsolete._readmarkers(payload)
    return version, list(markers)


def test_rewrite_and_prune_read_by_mercurial():
    rewrite = obsmarkers.Marker(OLD, (NEW,), None, (1700000000, -3600),
                                {'user': 'Me <me@example.com>',
                                 'operation': 'amend'})
    prune = obsmarkers.Marker(NEW, (), (P1,), (1700000100, 0),
                              {'user': 'Me'})
    version, markers = decode(obsmarkers.encode_part([rewrite, prune]))
    assert version == 1
    assert markers == [
        (bytes.fromhex(OLD), (bytes.fromhex(NEW),), 0,
         ((b'operation', b'amend'), (b'user', b'Me <me@example.com>')),
         (1700000000.0, -3600), None),
        (bytes.fromhex(NEW), (), 0, ((b'user', b'Me'),),
         (1700000100.0, 0), (bytes.fromhex(P1),)),
    ]


def test_metadata_too_long():
    marker = obsmarkers.Marker(OLD, (), None, (0, 0), {'user': 'x' * 256})
    with pytest.raises(Abort):
        obsmarkers.encode_marker(marker)
