"""Which Mercurial the tests ran with.

The version is also printed in the report header and after the summary
(see conftest.py), so that the CI log says which hg ran.
"""

import re

from lib.env import hg_executable


def test_hg_version_is_recorded(hg, record_property):
    version = hg.version()
    record_property('hg_version', version)
    record_property('hg_executable', hg.exe)
    print(f'tests run with {version} from {hg.exe}')
    match = re.search(r'\(version (\d+)\.(\d+)', version)
    assert match, f'unexpected `hg version` output: {version!r}'
    assert (int(match[1]), int(match[2])) >= (4, 3), version
    assert hg.exe == hg_executable()
