#!/usr/bin/env python3
"""Make the manual pages and the shell completions from their one source.

usage: tools/manpages.py [--check]

Writes, from the command table (cinnabar/cmd/__init__.py: each command's
module docstring and OPTIONS) and the settings (cinnabar/config.py,
SETTINGS):

    man/man1/git-cinnabar.1        every command and its options
    man/man1/git-remote-hg.1       URLs, refs layout, every cinnabar.* setting
    completion/git-cinnabar.bash   `_git_cinnabar`, for git's bash completion
    completion/_git-cinnabar       the same for zsh
    README.md                      its tables of settings and of commands,
                                   between their `<!-- ... -->` markers

The files are kept in the tree (a source checkout reads them: man finds
`man/` next to a directory of PATH) and tests/test_manpages.py fails
when they differ from what this makes; run it after changing a command's
help, its options or a setting. With --check, only says which differ.

Pages use man(7) macros only. A docstring is read as paragraphs: a
`usage:` paragraph, an indented one (an option table) and a list of
`- ` items keep their lines; other paragraphs are filled; `text` in
backquotes is bold.
"""

import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TOP)

from cinnabar import VERSION, config  # noqa: E402
from cinnabar.cmd import COMMANDS, command  # noqa: E402

DATE = '2026-11-28'
_CODE = re.compile(r'`([^`]+)`')


def escape(text):
    """Roff text: backslashes and hyphens escaped, `code` in bold."""
    text = text.replace('\\', '\\e').replace('-', '\\-')
    return _CODE.sub(lambda m: '\\fB%s\\fR' % m.group(1), text)


def line(text):
    """One roff text line: a leading `.` or `'` would be a request."""
    return guard(escape(text))


def guard(text):
    return '\\&' + text if text[:1] in ('.', "'") else text


def kept(lines):
    """Lines kept as they are (a `code` span may cross them)."""
    text = escape('\n'.join(text.rstrip() for text in lines))
    return [guard(text) for text in text.splitlines()]


def paragraphs(text):
    """The docstring's paragraphs, each a list of lines."""
    return [p.splitlines() for p in re.split(r'\n\s*\n', text.strip())]


def paragraph(lines):
    """Roff lines for one paragraph of a docstring."""
    if lines[0].startswith('- '):
        return bullets(lines)
    if lines[0].startswith((' ', 'usage:')):
        return ['.PP', '.nf'] + kept(lines) + ['.fi']
    return ['.PP', filled(lines)]


def filled(lines):
    """Lines to fill, as one roff line (a `code` span may cross them)."""
    return line(' '.join(text.strip() for text in lines))


def bullets(lines):
    items = []
    for text in lines:
        if text.startswith('- '):
            items.append([text[2:]])
        else:
            items[-1].append(text)
    out = []
    for item in items:
        out += ['.IP \\(bu 2', filled(item)]
    return out


def header(name, summary):
    return ['.\\" Made by tools/manpages.py; do not edit.',
            '.TH %s 1 %s "git-cinnabar %s" "Git Manual"'
            % (name.upper(), DATE, VERSION),
            '.nh', '.SH NAME', '%s \\- %s' % (name, escape(summary))]


def section(title, text):
    out = ['.SH ' + title]
    for lines in paragraphs(text):
        out += paragraph(lines)
    return out


def command_section(entry):
    """A command's subsection: its name, then its docstring."""
    doc = command(entry.name).__doc__.strip().splitlines()
    out = ['.SS ' + escape(entry.name), line(doc[0])]
    for lines in paragraphs('\n'.join(doc[1:])):
        out += paragraph(lines)
    return out


CINNABAR_INTRO = """\
`git cinnabar` looks after the bridge between a git repository and the
Mercurial repositories it fetches from and pushes to with `hg::` URLs
(see git-remote-hg(1)): it converts ids, checks, rolls back or rebuilds
the metadata, imports and writes Mercurial bundles, and installs
prebuilt helpers and releases.

`git cinnabar help <command>` and `git cinnabar <command> --help` print
a command's help; `git cinnabar --version` prints the version of the
Python side and of the helper."""

CINNABAR_SYNOPSIS = """\
usage: git cinnabar [--version] <command> [<args>]
       git cinnabar help [<command>]"""


def cinnabar_page():
    out = header('git-cinnabar', 'Mercurial metadata tool for git-cinnabar')
    out += ['.SH SYNOPSIS', '.nf'] + kept(CINNABAR_SYNOPSIS.splitlines())
    out += ['.fi'] + section('DESCRIPTION', CINNABAR_INTRO)
    out += ['.SH COMMANDS']
    for entry in COMMANDS:
        out += command_section(entry)
    out += section('SEE ALSO', 'git-remote-hg(1), git(1)')
    return out


REMOTE_SYNOPSIS = """\
git clone hg::<url> [<directory>]
git fetch | pull | push <remote> ...
git remote add <remote> hg::<url>"""

REMOTE_INTRO = """\
git runs `git-remote-hg <remote> <url>` for a remote whose URL starts
with `hg::`, so that `git clone`, `git fetch`, `git pull`, `git push`
and `git ls-remote` work with Mercurial repositories. Every Mercurial
changeset becomes one git commit, the same one git-cinnabar 0.7 makes,
and back; the metadata that maps them is kept in refs/cinnabar/metadata
and refs/notes/cinnabar."""

URLS = """\
`hg::https://host/path`, `hg::http://host/path`: Mercurial over HTTP(S),
through libcurl with git's `http.*` settings and credential helpers.

`hg::ssh://user@host/path`: `hg serve --stdio` on the server, run by
ssh (`GIT_SSH_COMMAND`, `GIT_SSH`, `core.sshCommand`).

`hg::/path`, `hg::file:///path`, `hg::relative/path`: a local
repository (needs Mercurial), or a bundle file (clone only).

`hg://<host>[:<port>][.<scheme>]/<path>`: git-cinnabar's other spelling,
scheme `https` by default (`hg://host:8080.http/repo`,
`hg://:file/abs/path`)."""

REFS = """\
With the default layout (`cinnabar.refs` unset or `all`):

    refs/heads/branches/<branch>/tip       a named branch's tip
    refs/heads/branches/<branch>/<hg id>   its other heads
    refs/heads/bookmarks/<name>            a bookmark
    refs/heads/topics/<branch>/<topic>/tip a draft topic (hg-evolve)
    HEAD                                   the `@` bookmark, else the
                                           `default` branch's tip

`%` and space in names are written `%25` and `%20`. A push names the
same refs: `git push origin HEAD:refs/heads/branches/default/tip`
pushes to the `default` branch, `HEAD:refs/heads/bookmarks/<name>`
moves or creates a bookmark, `HEAD:refs/heads/topics/<branch>/<topic>`
pushes draft changesets of that topic.
A new head, root or branch, and a bookmark moved backwards, need `-f`.

Mercurial tags are not fetched by `git fetch`: `git cinnabar fetch
--tags` makes them git tags."""

SETTINGS_INTRO = """\
Each setting `cinnabar.<name>` is a git configuration variable; where
said, `remote.<remote>.cinnabar-<name>` sets it for one remote, and the
environment variable `GIT_CINNABAR_<NAME>` (upper case, `-` as `_`)
wins over both."""

ENVIRONMENT = """\
`GIT_CINNABAR_LOG`: as `cinnabar.log`.

`GIT_CINNABAR_TRACE`: `1` or `2` traces everything to standard error,
an absolute path to that file.

`GIT_CINNABAR_TRACEBACK=1`: print the traceback of an unexpected error."""


def setting_item(entry):
    where = []
    if entry.per_remote:
        where.append('`remote.<remote>.cinnabar-%s`' % entry.name)
    if entry.env:
        where.append('`%s`' % config.env_name(entry.name))
    text = entry.text
    if where:
        text += ' Also: %s.' % ', '.join(where)
    term = '\\fBcinnabar.%s\\fR (%s)' % (
        escape(entry.name), escape(entry.values))
    return ['.TP', term, line(text)]


def remote_page():
    out = header('git-remote-hg', 'git remote helper for Mercurial '
                 'repositories')
    out += ['.SH SYNOPSIS', '.nf'] + kept(REMOTE_SYNOPSIS.splitlines())
    out += ['.fi'] + section('DESCRIPTION', REMOTE_INTRO)
    out += section('URLS', URLS) + section('REFS', REFS)
    out += section('SETTINGS', SETTINGS_INTRO)
    for entry in config.SETTINGS:
        out += setting_item(entry)
    out += section('ENVIRONMENT', ENVIRONMENT)
    out += section('SEE ALSO', 'git-cinnabar(1), git-remote-helpers(7), '
                   'git-config(1)')
    return out


def options(entry, valued=True):
    """The command's options, those taking a value ending with `=` (as
    git's completion offers them) unless not `valued`."""
    names = command(entry.name).OPTIONS
    return ' '.join(n if valued else n.rstrip('=') for n in names)


def bash_completion():
    names = ' '.join(c.name for c in COMMANDS)
    cases = ['\t%s) __gitcomp "%s --help" ;;' % (c.name, options(c))
             for c in COMMANDS]
    return [
        '# bash completion of `git cinnabar`, for git\'s (git calls',
        '# _git_cinnabar). Made by tools/manpages.py; do not edit.',
        '_git_cinnabar ()',
        '{',
        '\tlocal subcommands="%s"' % names,
        '\tlocal subcommand="$(__git_find_on_cmdline "$subcommands")"',
        '\tif [ -z "$subcommand" ]; then',
        '\t\tcase "$cur" in',
        '\t\t-*) __gitcomp "--version --help" ;;',
        '\t\t*) __gitcomp "$subcommands help" ;;',
        '\t\tesac',
        '\t\treturn',
        '\tfi',
        '\tcase "$cur" in',
        '\t-*) ;;',
        '\t*) return ;;',
        '\tesac',
        '\tcase "$subcommand" in',
    ] + cases + ['\tesac', '}',
                 '# `git-cinnabar <TAB>` too, with git\'s completion loaded.',
                 'if declare -f __git_complete >/dev/null; then',
                 '\t__git_complete git-cinnabar _git_cinnabar', 'fi']


def zsh_completion():
    lines = ['#compdef git-cinnabar',
             '# zsh completion of `git cinnabar` (zsh\'s _git calls',
             '# _git-cinnabar). Made by tools/manpages.py; do not edit.',
             'local -a commands', 'commands=(']
    for entry in COMMANDS:
        summary = command(entry.name).__doc__.strip().splitlines()[0]
        lines.append("\t'%s:%s'" % (entry.name,
                                    summary.replace("'", "'\\''")))
    lines += [')', 'if (( CURRENT == 2 )); then',
              "\t_describe -t commands 'git cinnabar command' commands",
              '\treturn', 'fi', 'local -a options', 'case $words[2] in']
    for entry in COMMANDS:
        names = options(entry, valued=False)
        lines.append('%s) options=(%s) ;;' % (entry.name, names))
    return lines + ['esac', 'if [[ $PREFIX == -* ]]; then',
                    '\tcompadd -- $options --help', 'else', '\t_files', 'fi']


def cell(text):
    return text.replace('|', '\\|')


def settings_table():
    rows = ['| setting | values | per remote, environment | what it does |',
            '|---|---|---|---|']
    for entry in config.SETTINGS:
        marks = ', '.join(m for m, given in (('remote', entry.per_remote),
                                             ('env', entry.env)) if given)
        rows.append('| `cinnabar.%s` | %s | %s | %s |' % (
            entry.name, cell(entry.values), marks or '-', cell(entry.text)))
    return rows


def commands_table():
    rows = ['| command | what it does |', '|---|---|']
    for entry in COMMANDS:
        summary = command(entry.name).__doc__.strip().splitlines()[0]
        rows.append('| `%s` | %s |' % (entry.name, cell(summary)))
    return rows


README_TABLES = {'settings': settings_table, 'commands': commands_table}


def readme():
    """README.md with its tables made again between their markers
    (`<!-- settings: ... -->` to `<!-- end of settings -->`)."""
    with open(os.path.join(TOP, 'README.md')) as f:
        text = f.read()
    for name, make in README_TABLES.items():
        start = re.search(r'<!-- %s: [^\n]*-->\n' % name, text)
        end = text.index('<!-- end of %s -->' % name, start.end())
        table = '\n'.join(make()) + '\n'
        text = text[:start.end()] + table + text[end:]
    return text.splitlines()


OUTPUTS = {
    'man/man1/git-cinnabar.1': cinnabar_page,
    'man/man1/git-remote-hg.1': remote_page,
    'completion/git-cinnabar.bash': bash_completion,
    'completion/_git-cinnabar': zsh_completion,
    'README.md': readme,
}


def made():
    """{path under the top directory: its text}."""
    return {path: '\n'.join(make()) + '\n' for path, make in OUTPUTS.items()}


def differing():
    """The paths whose file differs from what made() makes."""
    stale = []
    for path, text in made().items():
        try:
            with open(os.path.join(TOP, path)) as f:
                if f.read() == text:
                    continue
        except FileNotFoundError:
            pass
        stale.append(path)
    return stale


def main(args):
    if args == ['--check']:
        stale = differing()
        for path in stale:
            print('%s is out of date: run tools/manpages.py' % path)
        return 1 if stale else 0
    for path, text in made().items():
        os.makedirs(os.path.dirname(os.path.join(TOP, path)), exist_ok=True)
        with open(os.path.join(TOP, path), 'w') as f:
            f.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
