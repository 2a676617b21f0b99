"""Help where git looks for it: the manual pages and the completions.

tools/manpages.py makes man/man1/git-cinnabar.1, man/man1/git-remote-hg.1,
completion/* and the README's tables of settings and commands from the
command table and config.SETTINGS; the tree holds what it makes (checked
here), groff renders the pages without a
warning, every command, option and setting is in them, `git cinnabar
--help` shows the page from a source checkout (man finds `man/` next to
a directory of PATH), git's own bash completion completes `git cinnabar`
through our `_git_cinnabar`, and `make install` installs all of it where
man and bash-completion look (`make uninstall` removes it).
"""

import os
import re
import sys

import pytest

import lib.env as test_env
from lib.proc import run

ROOT = test_env.ROOT
sys.path.insert(0, str(ROOT))

from cinnabar import config  # noqa: E402
from cinnabar.cmd import COMMANDS, command  # noqa: E402

PAGES = {'git-cinnabar': ROOT / 'man/man1/git-cinnabar.1',
         'git-remote-hg': ROOT / 'man/man1/git-remote-hg.1'}
GIT_COMPLETION = '/usr/share/bash-completion/completions/git'


def man_env(**extra):
    """The environment with man reading no MANPATH and paging nothing."""
    env = {k: v for k, v in os.environ.items() if k != 'MANPATH'}
    env.update(MANPAGER='cat', PAGER='cat', MANWIDTH='100', **extra)
    return env


def rendered(page):
    result = run(['man', '-l', page], env=man_env())
    return result.out


def test_generated_files_are_those_in_the_tree():
    result = run([sys.executable, ROOT / 'tools/manpages.py', '--check'],
                 check=False)
    assert result.returncode == 0, result.describe()


def test_readme_is_short_and_tables_list_everything():
    lines = (ROOT / 'README.md').read_text().splitlines()
    assert len(lines) <= 250
    for setting in config.SETTINGS:
        assert any(line.startswith('| `cinnabar.%s` |' % setting.name)
                   for line in lines), setting.name
    for entry in COMMANDS:
        assert any(line.startswith('| `%s` |' % entry.name)
                   for line in lines), entry.name


@pytest.mark.parametrize('name', sorted(PAGES))
def test_page_renders_without_warnings(name):
    result = run(['groff', '-man', '-ww', '-z', PAGES[name]], check=False)
    assert (result.returncode, result.err) == (0, ''), result.describe()
    text = rendered(PAGES[name])
    assert text.startswith(name.upper() + '(1)'), text[:200]
    # No roff escape left over, no `code` quote unconverted.
    assert not re.search(r'\\[fe&(-]', text) and '`' not in text


def section(text, name, following):
    """The text of the man page's subsection `name`."""
    start = text.index('\n   %s\n' % name)
    end = text.find('\n   %s\n' % following, start) if following else -1
    return text[start:end]


def test_every_command_and_option_is_in_the_page():
    text = rendered(PAGES['git-cinnabar'])
    names = [c.name for c in COMMANDS]
    for name, following in zip(names, names[1:] + [None]):
        module = command(name)
        part = section(text, name, following)
        assert module.__doc__.strip().splitlines()[0].replace('`', '') in part
        assert 'usage: git cinnabar %s' % name in part
        for option in module.OPTIONS:
            assert re.search(r'(^|[\s(\[,`])%s\b' % re.escape(
                option.rstrip('=')), part, re.M), (name, option)


def test_every_setting_is_in_the_page():
    text = rendered(PAGES['git-remote-hg'])
    for setting in config.SETTINGS:
        assert '\n       cinnabar.%s (%s)\n' % (
            setting.name, setting.values) in text, setting.name
        if setting.env:
            assert config.env_name(setting.name) in text


def settings_read():
    """Every setting name the code reads: config.lookup('<name>'),
    git.config('cinnabar.<name>') in Python, cinnabar.<name> in C."""
    found = set()
    patterns = {'.py': (r"config\.lookup\('([a-z-]+)'",
                        r"git\.config\('cinnabar\.([a-z-]+)'\)",
                        r"^SETTING = '([a-z-]+)'"),
                '.c': (r'"cinnabar\.([a-z-]+)"',)}
    for path in list((ROOT / 'cinnabar').rglob('*.py')) + list(
            (ROOT / 'helper').glob('*.c')):
        text = path.read_text()
        for pattern in patterns[path.suffix]:
            found.update(re.findall(pattern, text, re.M))
    return found


def test_settings_read_by_the_code_are_defined():
    read = settings_read()
    assert {'refs', 'check', 'log', 'graft', 'similarity'} <= read
    assert read == {s.name for s in config.SETTINGS}


def test_settings_the_helper_reads_are_marked():
    """The settings helper/*.c reads from git's configuration are those
    config.SETTINGS marks `helper`, and it takes GIT_CINNABAR_<NAME> for
    those of them with `env`, for no other setting."""
    config_reads, env_reads = set(), set()
    for path in (ROOT / 'helper').glob('*.c'):
        text = path.read_text()
        config_reads.update(re.findall(
            r'(?:git|repo)_config_get_[a-z_]+\((?:the_repository,\s*)?'
            r'"cinnabar\.([a-z-]+)"', text))
        env_reads.update(re.findall(r'getenv\("(GIT_CINNABAR_[A-Z_]+)"\)',
                                    text))
    marked = [s for s in config.SETTINGS if s.helper]
    assert config_reads == {s.name for s in marked}
    names = {config.env_name(s.name): s for s in config.SETTINGS}
    assert {n for n in env_reads if n in names} == \
        {config.env_name(s.name) for s in marked if s.env}
    assert not any(s.per_remote for s in marked)


def test_lookup_refuses_a_setting_not_defined():
    with pytest.raises(KeyError, match='cinnabar.nope is not in'):
        config.lookup('nope')


@pytest.mark.parametrize('topic, title', [('cinnabar', 'GIT-CINNABAR(1)'),
                                          ('remote-hg', 'GIT-REMOTE-HG(1)')])
def test_help_from_a_source_checkout_shows_the_page(topic, title, tmp_path):
    """git turns `git cinnabar --help` into `man git-cinnabar`; man finds
    the checkout's man/ because the checkout is on PATH."""
    args = ['git', 'cinnabar', '--help'] if topic == 'cinnabar' \
        else ['git', 'help', 'remote-hg']
    result = run(args, cwd=tmp_path, env=man_env())
    assert result.out.startswith(title), result.describe()
    assert 'No manual entry' not in result.err


def complete(line, extra_path=None):
    """What git's bash completion offers at the end of `line`, with our
    completion sourced."""
    script = r'''
source "$1"
source "$2"
COMP_LINE="$3"; COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<< "$COMP_LINE"
case "$COMP_LINE" in *" ") COMP_WORDS+=("") ;; esac
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__git_wrap__git_main
printf '%s\n' "${COMPREPLY[@]}"
'''
    result = run(['bash', '-c', script, 'complete', GIT_COMPLETION,
                  ROOT / 'completion/git-cinnabar.bash', line])
    return [word.strip() for word in result.out.splitlines()]


def test_bash_completes_commands_and_options():
    assert complete('git cinnabar f') == ['fetch', 'fsck']
    assert complete('git cinnabar self') == ['self-update']
    assert complete('git cinnabar fetch --t') == ['--tags']
    assert complete('git cinnabar tag --') == [
        '--force', '--delete', '--list', '--onto=', '--message=',
        '--format=', '--help']
    assert complete('git cinnabar self-update --u') == ['--url=']
    assert complete('git cinnabar fsck --full --') == [
        '--full', '--force', '--help']


def test_make_install_and_uninstall(tmp_path):
    prefix = tmp_path / 'prefix'
    make = ['make', '-s', '-C', ROOT, '-o', 'helper', 'prefix=%s' % prefix]
    run(make + ['install'])
    installed = {
        'share/man/man1/git-cinnabar.1': PAGES['git-cinnabar'],
        'share/man/man1/git-remote-hg.1': PAGES['git-remote-hg'],
        'share/bash-completion/completions/git-cinnabar':
            ROOT / 'completion/git-cinnabar.bash',
        'share/zsh/site-functions/_git-cinnabar':
            ROOT / 'completion/_git-cinnabar'}
    for path, source in installed.items():
        assert (prefix / path).read_bytes() == source.read_bytes(), path
    # man finds the page from the installed bin/ on PATH (bin/../share/man).
    env = man_env(PATH='%s:/usr/bin:/bin' % (prefix / 'bin'))
    found = run(['man', '-w', 'git-cinnabar'], env=env, cwd=tmp_path)
    assert found.out.strip() == str(prefix / 'share/man/man1/git-cinnabar.1')
    run(make + ['uninstall'])
    assert [p for p in installed if (prefix / p).exists()] == []


def zsh_offers(*words):
    """What _git-cinnabar offers for `words` (zsh's _git calls it with the
    words from `cinnabar` on), zsh's offering functions printing their
    candidates instead."""
    script = r'''
_describe() { print -l -- ${(P)${@[-1]}} }
compadd() { shift; print -l -- "$@" }
_files() { print '<files>' }
eval "_git-cinnabar() { $(<$1) }"
shift
words=("$@"); CURRENT=$#; PREFIX=${@[-1]}
_git-cinnabar
'''
    result = run(['zsh', '-f', '-c', script, 'zsh',
                  ROOT / 'completion/_git-cinnabar', 'cinnabar'] + list(words))
    return result.out.splitlines()


def test_zsh_completes_commands_and_options():
    assert zsh_offers('')[:2] == [
        'bundle:Write a Mercurial bundle of git commits.',
        'clear:Remove all the cinnabar metadata from this repository.']
    assert len(zsh_offers('f')) == len(COMMANDS)
    assert zsh_offers('fsck', '--') == ['--full', '--force', '--help']
    assert zsh_offers('fsck', 'x') == ['<files>']
