"""A bounded crash sweep of a fetch (tests/lib/crashsweep.py): a clone of
part of a history fetching the rest, killed (SIGKILL) at some of its
write-like system calls, and with EIO and ENOSPC at a few more, spread
over the run (the same points every time). Each point must leave a
consistent repository that the next fetch completes, no file or lock
behind, and, after EIO or ENOSPC, one error line and every ref as before.
`make crash-sweep` runs every point, and a push too."""

import pytest

from lib import crashsweep

pytestmark = pytest.mark.skipif(
    not crashsweep.strace_works(),
    reason='strace is missing or cannot trace here (.ci/install-deps '
           'installs it)')

KILL_POINTS = 12
ERROR_POINTS = 3


@pytest.fixture(scope='module')
def sweep(hg, tmp_path_factory):
    import os
    scenario = crashsweep.FetchScenario(hg, early=20, later=100)
    with crashsweep.Sweep(scenario, tmp_path_factory.mktemp('sweep'),
                          dict(os.environ)) as sweep:
        yield sweep


def describe(points):
    return '\n'.join('%s at %d (exit %s): %s' % (
        p.fault, p.point, p.exit, p.problems) for p in points)


def spread(sweep, count, offset):
    """`count` points spread over the run from `1 + offset` (the faults
    do not all land on the same calls)."""
    return crashsweep.sample(sweep.points, count, first=1 + offset)


@pytest.mark.parametrize('fault,count,offset', [
    ('KILL', KILL_POINTS, 0), ('EIO', ERROR_POINTS, 0),
    ('ENOSPC', ERROR_POINTS, 7)])
def test_faulted_fetch_stays_consistent(sweep, fault, count, offset):
    points = [sweep.run_point(fault, n) for n in spread(sweep, count, offset)]
    bad = [p for p in points if crashsweep.inconsistent(p)]
    assert not bad, describe(bad)
