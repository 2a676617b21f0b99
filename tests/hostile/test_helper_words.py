"""Paths travel to the helper as they are, whatever bytes they hold
(helper/PROTOCOL.md, Framing: a word with a space, a line break, a quote,
a backslash or a byte outside printable ASCII is C-quoted).

For every name of lib.oddpaths (spaces, line breaks, quotes, backslashes
that look like escapes, bytes that are not UTF-8, a leading dash), end
to end: `git clone hg::<bundle file>` in such a directory, `git cinnabar
unbundle` of it, `git cinnabar bundle` to a file there, and a push to a
real `hg serve` with TMPDIR (where the push's changegroup is spooled)
such a directory.  Each gives what the same command gives with a plain
path, and the decoy written where the path would end if the line were
cut at its first space or line break is neither read nor written.

The helper's own reading of bad lines (truncated quotes, bad escapes,
NUL bytes, too many words) is fuzzed (tests/fuzz/, `line` inputs) and
checked here once for each kind: one `error` line, exit status 128.
"""

import os
import shutil
import subprocess

import pytest

from lib import env as test_env
from lib.checks import assert_expected_ids, assert_no_traceback
from lib.git import clone, git, hg2git, hg_url, init, rev_parse
from lib.oddpaths import NAMES, odd_dir, plant_decoy
from lib.push import (BRANCH_TIP, assert_hg_verify, assert_pushed,
                      clone_with_a_change, push)

BUNDLE = 'remote.hg'
DECOY_BUNDLE = 'issue4438-r1.hg'


def odd_bundle(corpus, tmp_path, name):
    """BUNDLE copied into the odd directory `name`, and a decoy bundle
    (another repository's) where its path would be cut."""
    path = odd_dir(tmp_path, name) / 'x.hg'
    shutil.copy(corpus.bundle(BUNDLE), path)
    decoy_data = corpus.bundle(DECOY_BUNDLE).read_bytes()
    return path, plant_decoy(path, decoy_data), decoy_data


@pytest.mark.parametrize('name', NAMES)
def test_clone_from_a_bundle_at_an_odd_path(name, corpus, tmp_path):
    path, decoy, decoy_data = odd_bundle(corpus, tmp_path, name)
    dest = tmp_path / 'clone'
    result = clone(hg_url(path), dest, '--no-checkout', check=False)
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    assert_expected_ids(dest, corpus.expected(BUNDLE))
    count = git('rev-list', '--count', '--exclude=refs/cinnabar/*',
                '--exclude=refs/notes/*', '--all', cwd=dest).out.strip()
    assert int(count) == len(corpus.expected(BUNDLE)), 'decoy imported'
    assert decoy.read_bytes() == decoy_data


@pytest.mark.parametrize('name', NAMES)
def test_unbundle_from_an_odd_path(name, corpus, tmp_path):
    path, decoy, decoy_data = odd_bundle(corpus, tmp_path, name)
    repo = init(tmp_path / 'repo')
    result = git('cinnabar', 'unbundle', path, cwd=repo, check=False)
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    assert result.out.startswith('imported 9 changesets'), result.describe()
    expected = corpus.expected(BUNDLE)
    assert hg2git(repo, expected) == expected
    assert decoy.read_bytes() == decoy_data


@pytest.mark.parametrize('name', NAMES)
def test_bundle_to_an_odd_path(name, hg, hg_repos, git_clones, tmp_path):
    repo = git_clones.copy(BUNDLE, tmp_path / 'repo')
    out = odd_dir(tmp_path, name) / 'out.hg'
    decoy = plant_decoy(out)
    result = git('cinnabar', 'bundle', '-t', 'gzip-v2', out, '--', '--all',
                 cwd=repo, check=False)
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    assert decoy.read_bytes() == b'not the file the command was given\n'
    # Nothing but the bundle was left in its directory.
    assert os.listdir(out.parent) == ['out.hg']
    target = tmp_path / 'target'
    hg('init', target)
    hg('-R', target, 'unbundle', '-q', out)
    original = hg_repos.get(BUNDLE)
    assert sorted(hg.nodes(target)) == sorted(hg.nodes(original))
    assert_hg_verify(hg, target)


@pytest.mark.parametrize('name', NAMES)
def test_push_with_an_odd_tmpdir(name, hg, hg_serve, monkeypatch,
                                 tmp_path):
    server, work, commit = clone_with_a_change(hg, hg_serve, tmp_path,
                                               monkeypatch.setenv)
    tmpdir = odd_dir(tmp_path, name)
    decoy = plant_decoy(tmpdir / 'cinnabar-push-x')
    result = push(work, 'origin', f'HEAD:{BRANCH_TIP.format("default")}',
                  extra_env={'TMPDIR': str(tmpdir)})
    assert_pushed(result)
    assert decoy.read_bytes() == b'not the file the command was given\n'
    assert os.listdir(tmpdir) == []
    assert len(hg.nodes(server)) == 2
    tip = hg('-R', server, 'log', '-r', 'tip', '-T', '{desc}').out
    assert tip == 'change'
    assert rev_parse(work, 'refs/remotes/origin/branches/default/tip') == \
        commit
    assert_hg_verify(hg, server)


BAD_LINES = {
    'truncated quote': b'progress "on\n',
    'bad escape': b'progress "o\\qn"\n',
    'short octal escape': b'progress "o\\15"\n',
    'escaped NUL': b'progress "o\\000n"\n',
    'NUL byte': b'progress o\0n\n',
    'text after a quote': b'progress "on"x\n',
    'empty word': b'progress  on\n',
    'too many words': b'progress on on on on on on on on\n',
}


@pytest.mark.parametrize('line', BAD_LINES.values(), ids=BAD_LINES)
def test_bad_lines_are_errors(line, tmp_path):
    # `progress` works outside a repository: no repository needed.
    quoted = subprocess.run([test_env.helper_under_test()],
                            input=b'progress "o\\156"\n' + line,
                            capture_output=True, cwd=tmp_path, timeout=60)
    answers = quoted.stdout.splitlines()
    assert answers[0] == b'ok', quoted
    assert len(answers) == 2 and answers[1].startswith(b'error helper '), \
        quoted
    assert quoted.returncode == 128, quoted
