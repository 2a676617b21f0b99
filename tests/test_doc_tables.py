"""doc/architecture.md's file tables list every file of helper/,
cinnabar/, cinnabar/hg/ and cinnabar/cmd/ and no other: a new file needs
its row, a removed one loses it.

Each directory has its table under a heading naming it (`### \\`helper/\\`,
file by file`); a row's first cell names one or more files, in backquotes,
relative to that directory (`store.c`, `store.h`; `sha1/sha1-mb.c`).
The files are those git knows or would add (tracked, or untracked and not
ignored), so that build products never count."""

import re
import subprocess

from lib.env import ROOT

DOC = ROOT / 'doc' / 'architecture.md'
DIRECTORIES = {
    # directory: whether its subdirectories are in its table too
    'helper': True,
    'cinnabar': False,
    'cinnabar/hg': False,
    'cinnabar/cmd': False,
}


def heading(directory):
    return f'### `{directory}/`, file by file'


def tables():
    """{directory: {file named in a row: line number}} from the doc."""
    found = {}
    current = None
    for number, line in enumerate(DOC.read_text().splitlines(), 1):
        if line.startswith('#'):
            current = next((d for d in DIRECTORIES if line == heading(d)),
                           None)
            if current is not None:
                found[current] = {}
            continue
        if current is None or not line.startswith('| `'):
            continue
        first_cell = line.split(' | ')[0]
        for name in re.findall(r'`([^`]+)`', first_cell):
            found[current][name] = number
    return found


def files(directory, recursive):
    """The files git has or would add under `directory`, relative to it."""
    listed = subprocess.run(
        ['git', 'ls-files', '--cached', '--others', '--exclude-standard',
         '--', f'{directory}/'],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    names = {path[len(directory) + 1:] for path in listed}
    return {name for name in names
            if (ROOT / directory / name).is_file()
            and (recursive or '/' not in name)}


def test_every_file_has_a_row_and_every_row_a_file():
    found = tables()
    problems = []
    for directory, recursive in DIRECTORIES.items():
        if directory not in found:
            problems.append(f'doc/architecture.md has no heading '
                            f'"{heading(directory)}" for {directory}/')
            continue
        rows = found[directory]
        present = files(directory, recursive)
        for name in sorted(present - set(rows)):
            source = name[:-2] + '.c'
            where = (f'add `{name}` to the row of `{source}` (line '
                     f'{rows[source]})' if name.endswith('.h')
                     and source in rows else
                     f'add "| `{name}` | what it is |" to the table')
            problems.append(
                f'{directory}/{name} has no row in doc/architecture.md: '
                f'{where} under "{heading(directory)}"')
        for name in sorted(set(rows) - present):
            problems.append(
                f'doc/architecture.md line {rows[name]}, table under '
                f'"{heading(directory)}", names `{name}`, which is not a '
                f'file of {directory}/: remove it from that row')
    assert problems == [], '\n'.join(problems)
