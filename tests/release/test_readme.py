"""The READMEs say what holds.

tests/README.md says what the suite holds and what CI runs: its tables of
test files name every tests/test_*.py and tests/<folder>/test_*.py (unit/
aside) and no other, and its table of CI runs lists the files marked for
the hg63 and py313 runs, which `.ci/run` selects by their markers.

The top README's commands work as written: every command of its code
blocks is run here (against a real `hg serve` on 127.0.0.1) or listed
as not runnable, with the reason.
"""

import re

from lib.checks import assert_no_traceback
from lib.env import ROOT, TESTS
from lib.git import git, git2hg, rev_parse
from lib.push import assert_pushed, hg_commit, make_hg_repo, push
from lib.push import writable_remote

README = TESTS / 'README.md'


def readme_rows(first_column):
    """{first cell: row} of the README's table rows starting with
    `first_column` (a regular expression)."""
    rows = {}
    for line in README.read_text().splitlines():
        match = re.match(r'\| (%s) \|' % first_column, line)
        if match:
            rows[match.group(1)] = line
    return rows


def suite_files():
    """tests/test_*.py and tests/<folder>/test_*.py, but for unit/, which
    the table leaves to the folder's own files."""
    return {path.relative_to(TESTS).as_posix()
            for path in [*TESTS.glob('test_*.py'), *TESTS.glob('*/test_*.py')]
            if path.parent.name != 'unit'}


def test_every_test_file_has_its_row():
    files = {f'`{name}`' for name in suite_files()}
    rows = set(readme_rows(r'`(?:[a-z]+/)?test_[a-z0-9_]+\.py`'))
    assert sorted(files - rows) == [], 'test files without a row'
    assert sorted(rows - files) == [], 'rows naming no test file'


def marked_files(marker):
    """The test files marked `marker` (their pytestmark)."""
    mark = re.compile(r'^pytestmark = .*\bpytest\.mark\.%s\b' % marker,
                      re.M)
    return sorted(name for name in suite_files()
                  if mark.search((TESTS / name).read_text()))


def test_ci_runs_table_lists_what_ci_runs():
    rows = readme_rows('hg63|py313')
    text = (ROOT / '.ci' / 'run').read_text()
    for run, marker in (('hg63', 'hgserver'), ('py313', 'clientpython')):
        assert re.search(r'pytest_args %s\) -m %s ' % (run, marker) + '|'
                         r'pytest_args %s\) -m %s"' % (run, marker), text), \
            f'.ci/run gives its {run} run no "-m {marker}"'
        files_cell = rows[run].split(' | ')[4]
        assert f'marked `{marker}`' in files_cell, run
        listed = re.findall(r'`((?:[a-z]+/)?test_[a-z0-9_]+\.py)`',
                            files_cell)
        assert sorted(listed) == marked_files(marker), run


# The top README's code blocks: every line of them is a command a reader
# may type. Each is run below (as RUNS says, against a real `hg serve` on
# 127.0.0.1), or named in NOT_RUNNABLE with the reason.
RUNS = {
    'git clone hg::https://hg.example.org/repo':
        'over http: hg serve speaks no TLS (https: clone/test_clone_nginx.py)',
    'git clone hg::ssh://user@host/path/to/repo':
        'through the test ssh, which runs hg serve --stdio here',
    'git clone hg::/path/to/local/repo': 'the served repository itself',
    'git clone hg::/path/to/bundle.hg': 'hg bundle --all of it',
    'git fetch': 'after a changeset committed on the server',
    'git push origin HEAD:refs/heads/branches/default/tip':
        'a commit on the fetched tip',
    'git push origin HEAD:refs/heads/bookmarks/feature': 'a new bookmark',
    'git ls-remote hg::https://hg.example.org/repo': 'over http, as clone',
}
NOT_RUNNABLE = {
    'git cinnabar download':
        'needs a release tree (its build_info.py, keys and URL), and '
        'replaces the helper: release/test_dist.py builds one and runs it',
    'GIT_CINNABAR_RELEASE_KEY=<key hex> git cinnabar download --url '
    '<base URL>':
        'replaces the helper next to the launcher: release/test_dist.py runs '
        'it in a checkout of its own, against a release it signs',
}


def readme_commands():
    """The commands of README.md's code blocks (lines indented by four
    spaces after a blank line, or inside ``` fences), without their
    `# ...` comments."""
    commands, block, fenced, blank = [], False, False, True
    for line in (ROOT / 'README.md').read_text().splitlines():
        if line.startswith('```'):
            fenced = not fenced
            continue
        block = fenced or (line.startswith('    ') and (block or blank))
        blank = not line.strip()
        if block and line.strip():
            commands.append(line.split(' #')[0].strip())
    return commands


def test_every_readme_command_is_run_or_excused():
    commands = readme_commands()
    assert commands, 'no code block found in README.md'
    listed = set(RUNS) | set(NOT_RUNNABLE)
    assert sorted(set(commands) - listed) == [], \
        'README commands neither run nor excused'
    assert sorted(listed - set(commands)) == [], \
        'commands listed that the README no longer has'


def test_readme_commands_work(hg, hg_serve, tmp_path, monkeypatch):
    """The README's Use block, command by command."""
    server = make_hg_repo(hg, tmp_path / 'server', {'a': 'a\n'})
    http = writable_remote('http', server, hg_serve, tmp_path,
                           monkeypatch.setenv).url
    ssh = writable_remote('ssh', server, hg_serve, tmp_path,
                          monkeypatch.setenv).url
    bundle = tmp_path / 'all.hg'
    hg('-R', server, 'bundle', '-q', '--all', bundle)
    clones = {'https': http, 'ssh': ssh, 'local': f'hg::{server}',
              'bundle': f'hg::{bundle}'}
    for name, url in clones.items():
        assert_no_traceback(git('clone', '-q', url, tmp_path / name))
        assert (tmp_path / name / 'a').read_text() == 'a\n'
    work = tmp_path / 'https'
    node = hg_commit(hg, server, {'a': 'b\n'}, 'on the server')
    assert_no_traceback(git('fetch', '-q', cwd=work))
    git('merge', '-q', '--ff-only', 'origin/branches/default/tip', cwd=work)
    assert git2hg(work, ['HEAD'])['HEAD'] == node
    (work / 'c').write_text('c\n')
    git('add', 'c', cwd=work)
    git('commit', '-q', '-m', 'from git', cwd=work)
    for ref in ('branches/default/tip', 'bookmarks/feature'):
        assert_pushed(push(work, 'origin', f'HEAD:refs/heads/{ref}'))
    pushed = git2hg(work, ['HEAD'])['HEAD']
    assert hg.bookmarks(server) == {'feature': pushed}
    listed = git('ls-remote', http, cwd=work).out
    assert f'{rev_parse(work, "HEAD")}\trefs/heads/bookmarks/feature' \
        in listed.splitlines()
