"""Assertions shared by the end-to-end tests."""

import hashlib
import signal

from . import git
from .git import NULL_ID

SHOWN = 10


def _show(items):
    items = list(items)
    shown = '\n  '.join(str(i) for i in items[:SHOWN])
    more = f'\n  ... and {len(items) - SHOWN} more' if len(items) > SHOWN \
        else ''
    return f'\n  {shown}{more}'


def assert_expected_ids(repo, expected, server_nodes=None):
    """The clone at `repo` converted every changeset of `expected`.

    `expected` is {hg changeset id: git commit id}.  Each hg id must map
    (hg2git) to exactly its git id, that commit must exist and be reachable
    from the repository's refs (other than git-cinnabar's own), and git2hg
    must map it back.  With `server_nodes` (what the server has), every
    expected changeset must be among them: the test served the whole
    bundle.
    """
    if server_nodes is not None:
        absent = set(expected) - set(server_nodes)
        assert not absent, ('expected changesets the server does not have:'
                            + _show(sorted(absent)))
    mapped = git.hg2git(repo, expected)
    wrong = [(h, mapped[h], g) for h, g in sorted(expected.items())
             if mapped[h] != g]
    assert not wrong, ('hg2git gives the wrong git commit '
                       '(hg id, got, expected):' + _show(wrong))
    types = git.object_types(repo, expected.values())
    not_commits = [(g, t) for g, t in sorted(types.items()) if t != 'commit']
    assert not not_commits, 'expected commits are not commits:' + _show(
        not_commits)
    reachable = git.rev_list(repo, '--exclude=refs/cinnabar/*',
                             '--exclude=refs/notes/*', '--all')
    unreachable = sorted(set(expected.values()) - reachable)
    assert not unreachable, ('commits not reachable from any ref:'
                             + _show(unreachable))
    back = git.git2hg(repo, expected.values())
    wrong = [(g, back[g], h) for h, g in sorted(expected.items())
             if back[g] != h]
    assert not wrong, ('git2hg does not map back (git id, got, expected):'
                       + _show(wrong))
    assert_command_line_forms(repo, *min(expected.items()))


def assert_command_line_forms(repo, hg_id, git_id):
    """`git cinnabar hg2git <id>` and `git2hg <id>`, without --batch."""
    out = git.git('cinnabar', 'hg2git', hg_id, cwd=repo).out
    assert out.split() == [git_id]
    out = git.git('cinnabar', 'git2hg', git_id, cwd=repo).out
    assert out.split() == [hg_id]


def imported(repo, hg_ids):
    """The subset of `hg_ids` the metadata of `repo` knows."""
    mapped = git.hg2git(repo, hg_ids)
    return {h for h, g in mapped.items() if g != NULL_ID}


def assert_no_traceback(result):
    assert 'Traceback' not in result.err, result.describe()


def error_lines(result):
    """The `fatal: ...` and `error: ...` lines of stderr, in order."""
    return [line for line in result.err.splitlines()
            if line.startswith(('fatal: ', 'error: ')) and line[7:].strip()]


def stopped_after_import(result):
    """Whether `result`, a `git fetch` or `git clone`, is one git-remote-hg
    ended by SIGINT after its import failed and its one fatal line
    (cinnabar.remote, stop_git): the status of such a failure."""
    lines = error_lines(result)
    return result.returncode == -signal.SIGINT and len(lines) == 1 and \
        lines[0].startswith('fatal: ')


def assert_died_as_git_dies(result):
    """Failed with git's die() status (128), or as a failed import ends
    (stopped_after_import)."""
    assert result.returncode == 128 or stopped_after_import(result), \
        result.describe()


def assert_failed_for_people(result, expected=None):
    """A failure: non-zero exit and a one-line error, no traceback.

    With `expected` (a string, or a tuple of strings any of which will
    do), one of the `fatal:`/`error:` lines must contain it: the failure
    is the one the test meant, not any failure. Returns that line (the
    first error line without `expected`).
    """
    assert result.returncode != 0, 'expected a failure\n' + result.describe()
    assert_no_traceback(result)
    lines = error_lines(result)
    assert lines, 'no fatal:/error: line\n' + result.describe()
    if expected is None:
        return lines[0]
    wanted = (expected,) if isinstance(expected, str) else tuple(expected)
    said = [line for line in lines if any(w in line for w in wanted)]
    assert said, (f'no error line says {" or ".join(map(repr, wanted))}\n'
                  + result.describe())
    return said[0]


def file_digests(directory, ignore=()):
    """{relative path: sha256} of every file under `directory` but those
    with a name, or under a directory, in `ignore`: to check that a
    command left a tree exactly as it was."""
    ignore = set(ignore)
    return {str(path.relative_to(directory)): hashlib.sha256(
        path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob('*'))
        if path.is_file()
        and not ignore & set(path.relative_to(directory).parts)}
