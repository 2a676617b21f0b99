"""tests/README.md says what the suite holds and what CI runs: its table
of test files names every tests/test_*.py and no other, and its table of
CI runs lists the files `.ci/run` gives the hg63 and py313 runs."""

import re

from lib.env import ROOT, TESTS

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


def test_every_test_file_has_its_row():
    files = {f'`{path.name}`' for path in TESTS.glob('test_*.py')}
    rows = set(readme_rows(r'`test_[a-z0-9_]+\.py`'))
    assert sorted(files - rows) == [], 'test files without a row'
    assert sorted(rows - files) == [], 'rows naming no test file'


def ci_run_files(variable):
    text = (ROOT / '.ci' / 'run').read_text()
    match = re.search(r'^%s="([^"]*)"$' % variable, text, re.M)
    assert match, f'.ci/run sets no {variable}'
    return [name.removeprefix('tests/') for name in match.group(1).split()]


def test_ci_runs_table_lists_what_ci_runs():
    rows = readme_rows('hg63|py313')
    for run, variable in (('hg63', 'hg63_tests'), ('py313', 'py313_tests')):
        files_cell = rows[run].split(' | ')[4]
        listed = re.findall(r'`(test_[a-z0-9_]+\.py)`', files_cell)
        assert listed == ci_run_files(variable), run
