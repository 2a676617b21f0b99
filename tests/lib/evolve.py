"""hg-evolve's topic and evolve extensions for the hg under test.

`make venv` installs hg-evolve 12 in build/venv (Mercurial 7.2 finds it as
`hgext3rd.topic`), and hg-evolve 11.1, the last release for Mercurial older
than 6.7, under build/evolve-hg63, loaded by path by Debian's hg 6.3.
"""

import re

from .env import ROOT, SetupError

EVOLVE_HG63 = ROOT / 'build' / 'evolve-hg63' / 'hgext3rd'


def _hg_version(hg):
    found = re.search(r'\(version (\d+)\.(\d+)', hg.version())
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def extensions(hg):
    """The `[extensions]` lines enabling topic and evolve."""
    if _hg_version(hg) >= (6, 7):
        return '[extensions]\ntopic =\nevolve =\n'
    if not (EVOLVE_HG63 / 'topic').is_dir():
        raise SetupError(f'no hg-evolve for {hg.version()} at {EVOLVE_HG63}:'
                         ' run `make venv`')
    return (f'[extensions]\ntopic = {EVOLVE_HG63 / "topic"}\n'
            f'evolve = {EVOLVE_HG63 / "evolve"}\n')


def enable(hg, repo, config=''):
    """Enable topic and evolve in the hg repository `repo`, as a draft
    (non-publishing) one, with `config` (hgrc text) after; checks that hg
    loads them."""
    hgrc = repo / '.hg' / 'hgrc'
    hgrc.write_text(extensions(hg) + '[phases]\npublish = false\n' + config)
    result = hg('-R', repo, 'topics', check=False)
    if result.returncode != 0 or 'failed to import' in result.err:
        raise SetupError(f'hg cannot load hg-evolve ({hg.version()}): '
                         f'{result.err.strip()}; run `make venv`')
