"""Checks around hostile input: whatever the input, the helper fails with
a message, never a signal, and leaves no temporary pack behind."""

from pathlib import Path

from .checks import stopped_after_import
from .git import git

SIGNAL_WORDS = ('Aborted', 'Segmentation', 'killed by signal', 'BUG:',
                'core dumped')


def fake_ssh(tmp_path, script):
    """The environment making git run the shell `script` as its ssh
    command (GIT_SSH_COMMAND; the script gets ssh's arguments)."""
    fake = tmp_path / 'fake-ssh'
    fake.write_text('#!/bin/sh\n' + script)
    fake.chmod(0o755)
    return {'GIT_SSH_COMMAND': str(fake)}


def assert_no_signal_death(result):
    """The command ended by itself (an exit code, not a signal), and no
    helper it ran died of a signal or a BUG(). A `git fetch` or `git
    clone` whose import failed is ended by SIGINT, after our one fatal
    line, by git-remote-hg itself (cinnabar.remote, stop_git): that one
    signal is an exit of its own."""
    assert result.returncode >= 0 or stopped_after_import(result), \
        result.describe()
    for word in SIGNAL_WORDS:
        assert word not in result.err, result.describe()


def leftover_packs(repo):
    """Temporary files fast-import may leave in objects/pack."""
    out = git('rev-parse', '--git-path', 'objects/pack', cwd=repo).out
    pack_dir = Path(repo) / out.strip()
    if not pack_dir.is_dir():
        return []
    return sorted(p.name for p in pack_dir.iterdir()
                  if p.name.startswith(('tmp_pack_', 'tmp_idx_')))


def assert_no_leftovers(repo):
    left = leftover_packs(repo)
    assert not left, f'temporary packs left behind: {left}'


def assert_git_fsck_strict(repo):
    """`git fsck --strict` finds no error (warnings about git-cinnabar's
    own metadata trees, which hold gitlinks to blobs, are not errors)."""
    result = git('fsck', '--strict', '--no-dangling', cwd=repo,
                 check=False)
    errors = [line for line in result.err.splitlines()
              if line.startswith(('error', 'fatal'))]
    assert result.returncode == 0 and not errors, result.describe()
