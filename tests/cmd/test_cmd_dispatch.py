"""`git cinnabar` itself: `help`, `-h`, `--help`, no argument, an unknown
command, and each command's `--help`, through git as a user runs it.

The list printed is the command table (cinnabar/cmd/__init__.py): every
command of the table, with the first line of its module's docstring, and
nothing else (the shared modules `options` and `conversion` are not
commands). No argument prints the same list and fails, as `git` alone
does (on standard output, status 1); an unknown name fails as `git
<typo>` does, with the most similar commands.

Exit statuses are git's: a usage error 129 with the usage `-h` shows as
its hint (`-h` itself exits 129, as `git tag -h`), any other `fatal:`
128, in `git cinnabar` and in git-remote-hg.
"""

import pytest

from cinnabar import cmd
from lib.checks import assert_failed_for_people
from lib.env import ROOT
from lib.git import git
from lib.proc import run

# The names of the command table, in the order the list shows them.
COMMANDS = sorted(entry.name for entry in cmd.COMMANDS)


def listed(text):
    """The command names of the `commands:` list of a usage text."""
    lines = text.splitlines()
    start = lines.index('commands:') + 1
    names = []
    for line in lines[start:]:
        if not line.startswith('   '):
            break
        names.append(line.split()[0])
    return names


@pytest.mark.parametrize('args', [
    ('git', 'cinnabar', 'help'),
    ('git', 'cinnabar', '-h'),
    # git turns `git cinnabar --help` into `git help cinnabar` (a manual
    # page): the launcher itself gets --help when run directly.
    ('git-cinnabar', '--help'),
])
def test_help_lists_every_command(args, tmp_path):
    result = run(args, cwd=tmp_path)
    assert result.out.startswith('usage: git cinnabar'), result.describe()
    assert listed(result.out) == list(COMMANDS)
    assert 'Run `git cinnabar <command> --help`' in result.out
    summary = {line.split()[0]: line.split(None, 1)[1]
               for line in result.out.splitlines()
               if line.startswith('   ')}
    assert summary['data'] == ('Print the raw Mercurial data of a '
                               'changeset, manifest or file revision.')
    assert summary['self-update'] == ('Update this git-cinnabar '
                                      'installation to the latest release.')


def test_no_argument_prints_usage_and_fails(tmp_path):
    result = git('cinnabar', cwd=tmp_path, check=False)
    assert result.returncode == 1, result.describe()
    assert result.err == ''
    assert listed(result.out) == list(COMMANDS)


@pytest.mark.parametrize('name, similar', [
    ('nope', []), ('conversion', []), ('options', []), ('__init__', []),
    ('cmd', []),
    ('self_update', ['self-update']),       # a substitution
    ('fsk', ['fsck']),                      # an insertion, as git fsk
    ('upgarde', ['upgrade']),               # a swap
    ('f', ['fetch', 'fsck']),               # prefixes
])
def test_unknown_command_says_what_git_says(name, similar, tmp_path):
    """git's own words for `git <typo>` (help.c), then the most similar
    commands, if any."""
    result = git('cinnabar', name, cwd=tmp_path, check=False)
    assert result.returncode == 1, result.describe()
    assert result.out == ''
    expected = [f"git cinnabar: '{name}' is not a git cinnabar command. "
                "See 'git cinnabar --help'."]
    if similar:
        expected += ['', 'The most similar command'
                     + (' is' if len(similar) == 1 else 's are')]
        expected += ['\t' + n for n in similar]
    assert result.err.splitlines() == expected


def test_mistyped_option_gets_did_you_mean(tmp_path):
    result = git('cinnabar', 'fetch', '--tgs', cwd=tmp_path, check=False)
    assert_failed_for_people(result, 'unknown option --tgs')
    assert result.err.splitlines() == ['fatal: unknown option --tgs',
                                       'hint: did you mean --tags?']


@pytest.mark.parametrize('word, hint', [
    ('--verison', 'did you mean --version?'),
    ('--nope', 'usage: git cinnabar [--version] <command> [<args>]')])
def test_unknown_option_before_the_command(word, hint, tmp_path):
    result = git('cinnabar', word, cwd=tmp_path, check=False)
    assert_failed_for_people(result, 'unknown option ' + word)
    assert result.err.splitlines() == ['fatal: unknown option ' + word,
                                       'hint: ' + hint]


def test_help_command_shows_a_command_help(tmp_path):
    result = git('cinnabar', 'help', 'fsck', cwd=tmp_path)
    assert result.out.startswith('Check the cinnabar metadata'), \
        result.describe()
    assert 'usage: git cinnabar fsck' in result.out


@pytest.mark.parametrize('name', COMMANDS)
def test_command_help(name, tmp_path):
    """`<command> --help` prints its usage, outside any repository (no
    command runs)."""
    result = git('cinnabar', name, '--help', cwd=tmp_path)
    assert f'usage: git cinnabar {name}' in result.out, result.describe()
    assert result.err == ''


def usage_lines(text):
    """The usage lines at the start of a command's help."""
    return text.split('\n\n')[1].splitlines()


@pytest.mark.parametrize('name', COMMANDS)
def test_usage_error_exits_129_with_the_usage_of_h(name, tmp_path):
    """A usage error, as `git tag --nope`: status 129, and the usage
    lines `-h` prints (which also exits 129) as its hint."""
    shown = git('cinnabar', name, '-h', cwd=tmp_path, check=False)
    assert shown.returncode == 129, shown.describe()
    assert shown.err == ''
    result = git('cinnabar', name, '--zzzzzzzzzz', cwd=tmp_path,
                 check=False)
    assert_failed_for_people(result)
    assert result.returncode == 129, result.describe()
    hints = [line[len('hint: '):] for line in result.err.splitlines()
             if line.startswith('hint: ')]
    assert hints == usage_lines(shown.out), result.describe()


def test_fatal_exits_128(tmp_path):
    """A command that cannot run (not in a repository) dies as git's
    die() does, and so does git-remote-hg given a wrong command line."""
    result = git('cinnabar', 'fsck', cwd=tmp_path, check=False)
    assert_failed_for_people(result, 'not in a git repository')
    assert result.returncode == 128, result.describe()
    result = run([ROOT / 'git-remote-hg'], cwd=tmp_path, check=False)
    assert_failed_for_people(result, 'usage: git-remote-hg')
    assert result.returncode == 128, result.describe()
