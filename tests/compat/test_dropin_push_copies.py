"""Which copies pushed changesets record: git-cinnabar 0.7.5's.  Random
git histories without merges (lib.randhist: names beside directories,
file <-> directory swaps, exec bits, symbolic links, empty and binary
files, renames exact and edited, one to two places), pushed in three steps
to an empty hg repository, give commit for commit the changesets
git-cinnabar 0.7.5 made of them (vectors/push-copies.tsv, made by
vectors/make_vectors.py), by default (exact copies: git's `-C -C100%`)
and with `cinnabar.similarity=50` (0.7.5's `similarity=50` experiment).
"""

import pytest

from lib.git import git, git2hg
from lib.push_oracle import push_in_steps
from lib.randhist import write_git
from lib.vectors import (PUSH_COPIES, push_copies_history, push_copies_run,
                         read_tsv)


def pushed_changesets(hg, history, work, similarity):
    git('init', '-q', work)
    ids = write_git(history, work)
    hg('init', work / 'server')
    git('remote', 'add', 'origin', f'hg::{work / "server"}', cwd=work)
    if similarity:
        git('config', 'cinnabar.similarity', str(similarity), cwd=work)
    push_in_steps(history, ids, work)
    nodes = git2hg(work, ids)
    return [nodes[oid] for oid in ids]


@pytest.mark.parametrize('run', PUSH_COPIES,
                         ids=[push_copies_run(*run) for run in PUSH_COPIES])
def test_pushed_copies_are_git_cinnabars(run, hg, tmp_path):
    seed, commits, similarity = run
    key = push_copies_run(*run)
    expected = read_tsv('push-copies.tsv')
    history = push_copies_history(seed, commits)
    nodes = pushed_changesets(hg, history, tmp_path / 'git', similarity)
    differ = [f'{c.describe()}: {node}, git-cinnabar 0.7.5 '
              f'{expected[f"{key}:{c.index}"]}'
              for c, node in zip(history.commits, nodes)
              if node != expected[f'{key}:{c.index}']]
    assert not differ, '\n'.join(differ[:5])
