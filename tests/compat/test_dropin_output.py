"""Drop-in for git-cinnabar 0.7 users' scripts: what `git cinnabar`
commands print on standard output, against a real `hg serve`.

git-cinnabar prints nothing on stdout for `fetch <remote> <id>` (git's
`From` lines go to stderr), `rollback` and `clear`, and only
`Fetching <remote>` for `reclone` (plus its note when local branches may
need moving); our summaries come only with `-v`, on stderr.
"""

from lib.checks import assert_no_traceback
from lib.git import clone, git, hg_url, refs
from lib.push import hg_commit, make_hg_repo


def run(work, *args):
    result = git('cinnabar', *args, cwd=work)
    assert_no_traceback(result)
    return result


def test_commands_print_what_git_cinnabar_prints(hg, hg_serve, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    side = hg_commit(hg, repo, {'s': 's\n'}, 'side', branch='side')
    hg('-R', repo, 'commit', '-q', '--close-branch', '-m', 'close',
       '-u', 'U <u@x>', '-d', '1600000000 0')
    closed = hg('-R', repo, 'log', '-r', '.', '-T', '{node}').out
    hg('-R', repo, 'update', '-q', 'default')
    hg_commit(hg, repo, {'b': 'b\n'}, 'second')
    server = hg_serve(repo)
    work = tmp_path / 'work'
    clone(hg_url(server.url), work, '-q')

    fetched = run(work, 'fetch', 'origin', closed)
    assert fetched.out == ''
    assert f'hg/revs/{closed} -> FETCH_HEAD' in fetched.err
    commit = git('rev-parse', 'FETCH_HEAD', cwd=work).out.strip()
    assert git('cinnabar', 'git2hg', commit, cwd=work).out.strip() == closed

    # -v: the mapping on stderr, still nothing on stdout.
    verbose = run(work, 'fetch', '-v', 'origin', side)
    side_commit = git('cinnabar', 'hg2git', side, cwd=work).out.strip()
    assert verbose.out == ''
    assert f'{side} {side_commit}' in verbose.err.splitlines()

    before = refs(work, 'refs/cinnabar/metadata')
    rolled = run(work, 'rollback')
    assert rolled.out == '' and rolled.err == ''
    assert refs(work, 'refs/cinnabar/metadata') != before

    recloned = run(work, 'reclone')
    assert recloned.out == 'Fetching origin\n'

    cleared = run(work, 'clear')
    assert cleared.out == '' and cleared.err == ''
    assert refs(work, 'refs/cinnabar/') == {}

    assert_no_traceback(git('fetch', '-q', 'origin', cwd=work))
    loud = run(work, 'rollback', '-v')
    assert loud.out == '' and 'rolled back to nothing' in loud.err
    assert_no_traceback(git('fetch', '-q', 'origin', cwd=work))
    loud = run(work, 'clear', '-v')
    assert loud.out == '' and 'cinnabar refs' in loud.err

    # Rolling back to the null id is `clear` (git-cinnabar's own clear).
    assert_no_traceback(git('fetch', '-q', 'origin', cwd=work))
    nothing = run(work, 'rollback', '0' * 40)
    assert nothing.out == '' and nothing.err == ''
    assert refs(work, 'refs/cinnabar/') == {}


def test_quiet_means_quiet(hg, hg_serve, tmp_path):
    """-q: no server output on an accepted push, no tags advice, no
    fetch.prune advice; without -q, all three are there."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    hg('-R', repo, 'tag', '-u', 'U <u@x>', '-d', '1600000000 0', 'v1')
    server = hg_serve(repo)
    quiet, loud = tmp_path / 'quiet', tmp_path / 'loud'
    result = clone(hg_url(server.url), quiet, '-q')
    assert result.err == ''
    result = clone(hg_url(server.url), loud)
    assert 'Run the following command to update tags:' in result.err
    assert 'It is recommended that you set "remote.origin.prune"' \
        in result.err

    tip = 'refs/heads/branches/default/tip'
    for work, flags in ((quiet, ['-q']), (loud, [])):
        git('fetch', '-q', 'origin', cwd=work)
        git('reset', '-q', '--hard', 'origin/branches/default/tip', cwd=work)
        (work / work.name).write_text('x\n')
        git('add', work.name, cwd=work)
        git('commit', '-q', '-m', work.name, cwd=work)
        result = git('push', *flags, 'origin', f'HEAD:{tip}', cwd=work)
        assert_no_traceback(result)
        assert result.returncode == 0, result.err
        if flags:
            assert result.err == ''
        else:
            assert 'remote: added 1 changesets' in result.err
