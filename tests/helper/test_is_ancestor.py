"""The helper's `is-ancestor` (helper/PROTOCOL.md), which pushes ask
instead of running `git merge-base --is-ancestor` once a question: on
random histories with merges, every pair of commits answered as git's own
`rev-list` says (the commits it lists from one are its ancestors); across
a shallow clone's cut, as `git --shallow-file ''` says; `missing` for what
is not a commit of the repository, an error for bad arguments."""

import random

import pytest

from lib.env import helper_under_test
from lib.git import git, identity_env
from lib.proc import run

ZERO = '0' * 40


def make_history(repo, seed, count):
    """`count` commits made by git fast-import, each with zero (a few
    roots), one or two earlier commits as parents; their ids in order."""
    rng = random.Random(seed)
    git('init', '-q', repo)
    stream = []
    for n in range(count):
        mark = n + 1
        stream.append(f'commit refs/heads/c{n}\nmark :{mark}\n'
                      f'committer T <t@x> {1700000000 + n} +0000\n'
                      f'data 2\n{n % 10}\n')
        if n and rng.random() > 0.05:
            parents = rng.sample(range(1, mark), min(n, rng.choice((1, 1, 2))))
            stream.append(f'from :{parents[0]}\n')
            stream.extend(f'merge :{p}\n' for p in parents[1:])
        stream.append(f'M 644 inline f\ndata 2\n{n % 7}\n\n')
    git('fast-import', '--quiet', cwd=repo,
        input=''.join(stream).encode(), extra_env=identity_env('T', 't@x'))
    return [git('rev-parse', f'refs/heads/c{n}', cwd=repo).out.strip()
            for n in range(count)]


def ask(repo, pairs):
    """The helper's answers to `is-ancestor` for each pair, in one run."""
    script = ''.join(f'is-ancestor {a} {d}\n' for a, d in pairs)
    result = run([helper_under_test()], cwd=repo, input=script.encode())
    return result.out.split('\n')[:-1]


def ancestors(repo, commit, *options):
    return set(git(*options, 'rev-list', commit, cwd=repo).out.split())


@pytest.mark.parametrize('seed', range(3))
def test_answers_are_git_rev_list(seed, tmp_path):
    commits = make_history(tmp_path, seed, 40)
    truth = {d: ancestors(tmp_path, d) for d in commits}
    pairs = [(a, d) for d in commits for a in commits]
    answers = ask(tmp_path, pairs)
    assert len(answers) == len(pairs)
    wrong = [(a, d, got) for (a, d), got in zip(pairs, answers)
             if got != ('1' if a in truth[d] else '0')]
    assert not wrong, wrong[:5]
    # Not a test of nothing: both answers come up, merges included.
    assert {'0', '1'} <= set(answers)


def test_shallow_file_is_ignored(tmp_path):
    commits = make_history(tmp_path, 7, 12)
    tip, cut = commits[-1], commits[-1]
    # The shallow file makes `cut` a root for git's commands; the helper
    # walks past it, as the push's `git --shallow-file ''` does.
    (tmp_path / '.git' / 'shallow').write_text(cut + '\n')
    whole = ancestors(tmp_path, tip, '--shallow-file', '')
    assert ancestors(tmp_path, tip) == {tip}
    assert len(whole) > 1
    older = sorted(whole - {tip})
    assert ask(tmp_path, [(a, tip) for a in older]) == ['1'] * len(older)


def test_missing_and_non_commits(tmp_path):
    commits = make_history(tmp_path, 1, 3)
    tree = git('rev-parse', commits[0] + '^{tree}', cwd=tmp_path).out.strip()
    assert ask(tmp_path, [('f' * 40, commits[0]), (commits[0], 'f' * 40),
                          (tree, commits[1]), (commits[0], commits[0])]) \
        == ['missing', 'missing', 'missing', '1']


@pytest.mark.parametrize('line', [
    'is-ancestor', f'is-ancestor {ZERO}', f'is-ancestor {ZERO} 1234',
    f'is-ancestor {ZERO} {ZERO} {ZERO}', f'is-ancestor {ZERO}0 {ZERO}'])
def test_bad_arguments(line, tmp_path):
    make_history(tmp_path, 0, 1)
    result = run([helper_under_test()], cwd=tmp_path,
                 input=(line + '\n').encode(), check=False)
    assert result.returncode != 0
    assert result.out.startswith(
        'error is-ancestor needs two 40-digit git ids')
