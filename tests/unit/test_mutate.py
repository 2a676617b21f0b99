"""tools/mutate on a tree of two files: mutants are applied to a scratch
copy only, put back after their tests (and on Ctrl-C), and their results
recorded. Nothing is built: the tree's list has no build command."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / 'tools' / 'mutate'

LIB = 'def answer():\n    return 42  # the answer\n'
TEST = '''import sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import lib


def test_answer():
    if Path(__file__).with_name('slow').exists():
        time.sleep(60)
    assert lib.answer() == 42
'''
LIST = '''# a comment
timeout = 60

[wrong-answer]
file = lib.py
what = the answer is off by one
tests = tests/test_lib.py -k "answer or other"
original <<<
    return 42
>>>
mutant <<<
    return 41
>>>

[comment-only]
file = lib.py
what = a comment changed, which no test can see
tests = tests/test_lib.py ; tests/test_lib.py -k answer
original <<<
# the answer
>>>
mutant <<<
# an answer
>>>

[setup-fails]
file = lib.py
what = tests whose fixture fails, which say nothing of the mutant
tests = tests/test_setup.py
original <<<
# the answer
>>>
mutant <<<
# one answer
>>>

[not-in-the-file]
file = lib.py
what = a snippet the file does not have
tests = tests/test_lib.py
original <<<
    return 43
>>>
mutant <<<
    return 44
>>>
'''


SETUP_FAILS = '''import pytest


@pytest.fixture
def broken():
    raise RuntimeError('no corpus here')


def test_with_it(broken):
    pass
'''


def make_tree(path, slow=False):
    (path / 'tests').mkdir(parents=True)
    (path / 'lib.py').write_text(LIB)
    (path / 'tests' / 'test_lib.py').write_text(TEST)
    (path / 'tests' / 'test_setup.py').write_text(SETUP_FAILS)
    if slow:
        (path / 'tests' / 'slow').write_text('')
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM='1', HOME=str(path.parent))
    for command in (['init', '-q'], ['add', '.']):
        subprocess.run(['git'] + command, cwd=path, env=env, check=True)
    return path


def snapshot(path):
    return {str(p.relative_to(path)): p.read_bytes()
            for p in sorted(path.rglob('*'))
            if p.is_file() and '.git' not in p.parts}


def mutate(tree, *args):
    return [sys.executable, str(TOOL), '--root', str(tree), '--python',
            sys.executable] + list(args)


def test_results_recorded_and_tree_unchanged(tmp_path):
    tree = make_tree(tmp_path / 'tree')
    (tmp_path / 'mutants.txt').write_text(LIST)
    before = snapshot(tree)
    result = subprocess.run(
        mutate(tree, '--scratch', str(tmp_path / 'scratch'), '--json',
               str(tmp_path / 'out.json'), str(tmp_path / 'mutants.txt')),
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert snapshot(tree) == before
    copy = tmp_path / 'scratch' / 'tree'
    assert (copy / 'lib.py').read_text() == LIB
    got = json.loads((tmp_path / 'out.json').read_text())
    assert {m['name']: m['status'] for m in got['mutants']} == {
        'wrong-answer': 'killed', 'comment-only': 'survived',
        'setup-fails': 'error', 'not-in-the-file': 'error'}
    assert got['score']['killed'] == 1 and got['score']['built'] == 2
    assert got['score']['survived'] == ['comment-only']
    assert 'score: 1/2 killed' in result.stdout


def test_interrupted_run_puts_the_file_back(tmp_path):
    tree = make_tree(tmp_path / 'tree', slow=True)
    (tmp_path / 'mutants.txt').write_text(LIST)
    before = snapshot(tree)
    scratch = tmp_path / 'scratch'
    process = subprocess.Popen(
        mutate(tree, '--scratch', str(scratch), '--only', 'wrong-answer',
               str(tmp_path / 'mutants.txt')),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    copy = scratch / 'tree' / 'lib.py'
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if copy.is_file() and 'return 41' in copy.read_text():
            break
        time.sleep(0.05)
    else:
        process.kill()
        raise AssertionError('the mutant was never applied')
    time.sleep(0.5)  # into the tests' run
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert 'interrupted' in err
    assert copy.read_text() == LIB
    assert snapshot(tree) == before


def test_list_names_a_snippet_not_found(tmp_path):
    tree = make_tree(tmp_path / 'tree')
    (tmp_path / 'mutants.txt').write_text(LIST)
    result = subprocess.run(mutate(tree, '--list',
                                   str(tmp_path / 'mutants.txt')),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert 'not-in-the-file: lib.py' in result.stdout
    assert 'the original is 0 times in the file' in result.stdout


def test_the_project_lists_match_the_sources():
    """Every mutant of tests/mutants/ finds its original once in its file,
    and every test file it names is there: a change to the code or the
    tests that leaves a mutant behind fails here, not at the next `make
    mutate`."""
    root = TOOL.parents[1]
    lists = sorted((root / 'tests' / 'mutants').glob('*.txt'))
    result = subprocess.run([sys.executable, str(TOOL), '--root', str(root),
                             '--list', *map(str, lists)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    named = set()
    for path in lists:
        for line in path.read_text().splitlines():
            if line.startswith('tests = '):
                named.update(word.split('::')[0] for word in line.split()
                             if word.startswith('tests/'))
    assert sorted(n for n in named if not (root / n).is_file()) == []
