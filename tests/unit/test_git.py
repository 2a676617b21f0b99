"""The plain git commands of cinnabar.git that pushes use, on a small
repository made with git itself."""

import os
import subprocess

import pytest

from cinnabar import git


def run(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME='a', GIT_AUTHOR_EMAIL='a@x',
               GIT_COMMITTER_NAME='a', GIT_COMMITTER_EMAIL='a@x',
               GIT_CONFIG_NOSYSTEM='1', HOME=str(repo))
    return subprocess.run(['git', *args], cwd=repo, env=env, check=True,
                          stdout=subprocess.PIPE).stdout.decode().strip()


@pytest.fixture
def history(tmp_path, monkeypatch):
    """root ── left ── merge
         └──── right ──┘"""
    run(tmp_path, 'init', '-q')
    commits = {}
    for name, parents in (('root', []), ('left', ['root']),
                          ('right', ['root'])):
        tree = run(tmp_path, 'write-tree')
        args = sum((['-p', commits[p]] for p in parents), [])
        commits[name] = run(tmp_path, 'commit-tree', tree, '-m', name, *args)
    tree = run(tmp_path, 'write-tree')
    commits['merge'] = run(tmp_path, 'commit-tree', tree, '-m', 'merge',
                           '-p', commits['left'], '-p', commits['right'])
    monkeypatch.chdir(tmp_path)
    return commits


def test_rev_list_parents(history):
    walk = git.rev_list_parents([history['merge']], [history['left']])
    assert walk == [(history['right'], [history['root']]),
                    (history['merge'], [history['left'], history['right']])]
    walk = git.rev_list_parents([history['merge']], [])
    order = [c for c, _ in walk]
    assert order[0] == history['root'] and order[-1] == history['merge']
    assert dict(walk)[history['root']] == []
    assert git.rev_list_parents([history['left']], [history['merge']]) == []
