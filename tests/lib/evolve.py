"""hg-evolve's topic and evolve extensions for the hg under test.

`make venv` installs hg-evolve 12 in build/venv (Mercurial 7.2 finds it as
`hgext3rd.topic`), and hg-evolve 11.1, the last release for Mercurial older
than 6.7, under build/evolve-hg63, loaded by path by Debian's hg 6.3.

It also installs hg-evolve 10.5 under build/evolve-notns: the last release
whose topic extension has no topic namespaces, so no `branchmaptns`
command nor `topics-namespaces` capability (its `branchmap` names topics
`<branch>:<topic>`). It runs on Debian's hg 6.3 (`without_namespaces`).
"""

import re
from pathlib import Path

from .env import ROOT, SetupError
from .hg import Hg

BUILD = ROOT / 'build'
EVOLVE_HG63 = BUILD / 'evolve-hg63' / 'hgext3rd'
EVOLVE_NOTNS = BUILD / 'evolve-notns' / 'hgext3rd'
DEBIAN_HG = Path('/usr/bin/hg')


def _hg_version(hg):
    found = re.search(r'\(version (\d+)\.(\d+)', hg.version())
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def _by_path(hg, where):
    if not (where / 'topic').is_dir():
        raise SetupError(f'no hg-evolve for {hg.version()} at {where}:'
                         ' run `make venv`')
    return (f'[extensions]\ntopic = {where / "topic"}\n'
            f'evolve = {where / "evolve"}\n')


def extensions(hg, namespaces=True):
    """The `[extensions]` lines enabling topic and evolve; without
    `namespaces`, the hg-evolve release without topic namespaces."""
    if not namespaces:
        return _by_path(hg, EVOLVE_NOTNS)
    if _hg_version(hg) >= (6, 7):
        return '[extensions]\ntopic =\nevolve =\n'
    return _by_path(hg, EVOLVE_HG63)


def without_namespaces():
    """The Hg (Debian's 6.3) that runs hg-evolve 10.5, the release without
    topic namespaces (`enable(..., namespaces=False)`)."""
    if not DEBIAN_HG.exists():
        raise SetupError(f'no {DEBIAN_HG} to run hg-evolve 10.5 (topics '
                         'without namespaces): apt-get install mercurial')
    return Hg(DEBIAN_HG)


def enable(hg, repo, config='', namespaces=True):
    """Enable topic and evolve in the hg repository `repo`, as a draft
    (non-publishing) one, with `config` (hgrc text) after; checks that hg
    loads them."""
    hgrc = repo / '.hg' / 'hgrc'
    hgrc.write_text(extensions(hg, namespaces)
                    + '[phases]\npublish = false\n' + config)
    result = hg('-R', repo, 'topics', check=False)
    if result.returncode != 0 or 'failed to import' in result.err:
        raise SetupError(f'hg cannot load hg-evolve ({hg.version()}): '
                         f'{result.err.strip()}; run `make venv`')
