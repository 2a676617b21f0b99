"""The helper protocol's version has one source, `PROTOCOL` of
cinnabar/helper.py: helper/main.c's PROTOCOL_VERSION, which the helper
answers to `version`, and helper/PROTOCOL.md (its heading and the last
entry of its list of versions) must say the same."""

import os
import re

from cinnabar.helper import PROTOCOL

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def read(path):
    with open(os.path.join(TOP, path), encoding='utf-8') as f:
        return f.read()


def test_main_c_defines_it():
    found = re.findall(r'^#define PROTOCOL_VERSION (\d+)$',
                       read('helper/main.c'), re.M)
    assert found == [str(PROTOCOL)]


def test_protocol_md_heading():
    heading = read('helper/PROTOCOL.md').splitlines()[0]
    assert heading == '# git-cinnabar-helper protocol, version %d' % PROTOCOL


def test_protocol_md_lists_it_last():
    text = read('helper/PROTOCOL.md')
    versions = text.split('\n## Versions\n', 1)[1].split('\n## ', 1)[0]
    listed = [int(n) for n in re.findall(r'^- (\d+): ', versions, re.M)]
    assert listed == list(range(1, PROTOCOL + 1))
