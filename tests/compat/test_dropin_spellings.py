"""Drop-in for git-cinnabar 0.7 users: their spellings, against a real
`hg serve`.

- `git clone hg://127.0.0.1:<port>.http/` (git-cinnabar's hg:// URLs)
  gives the refs `hg::http://127.0.0.1:<port>/` gives;
- `GIT_CINNABAR_LOG='raw-wire:debug>file'` (git-cinnabar's syntax)
  traces the wire protocol to that file;
- after a fetch from a named remote, git-cinnabar's recommendation to set
  `fetch.prune`, unless it is set or the fetch prunes (`git fetch
  --prune`, `-p`);
- `git cinnabar fsck --force` checks again what was checked.
(`reclone --rebase`: cmd/test_cmd_reclone.py; `self-update --branch/--exact`:
cmd/test_cmd_self_update.py; the hg:// rules: unit/test_url.py.)
"""

from lib.checks import assert_no_traceback
from lib.git import git, refs
from lib.push import hg_commit, make_hg_repo

PRUNE_HINT = ('It is recommended that you set "remote.origin.prune" or '
              '"fetch.prune" to "true".')


def test_git_cinnabar_spellings(hg, hg_serve, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    server = hg_serve(repo)
    plain = tmp_path / 'plain'
    git('clone', '-q', f'hg::{server.url}', str(plain))

    work = tmp_path / 'work'
    url = f'hg://127.0.0.1:{server.port}.http/'
    result = git('clone', url, str(work),
                 extra_env={'GIT_CINNABAR_LOG': 'raw-wire:debug>trace.log'},
                 cwd=tmp_path)
    assert_no_traceback(result)
    assert refs(work, 'refs/remotes/') == refs(plain, 'refs/remotes/')
    trace = (tmp_path / 'trace.log').read_text()
    assert 'wire' in trace and 'capabilities' in trace
    assert 'helper>' not in trace
    assert PRUNE_HINT in result.err

    git('config', 'fetch.prune', 'true', cwd=work)
    result = git('fetch', 'origin', cwd=work)
    assert PRUNE_HINT not in result.err

    assert 'checked all the metadata' in git('cinnabar', 'fsck',
                                             cwd=work).err
    assert 'checked all the metadata' not in git('cinnabar', 'fsck',
                                                 cwd=work).err
    assert 'checked all the metadata' in git('cinnabar', 'fsck', '--force',
                                             cwd=work).err


def test_no_prune_advice_while_pruning(hg, hg_serve, tmp_path):
    """`git fetch --prune` (or `-p`) prunes: no advice to make it prune;
    a plain fetch of new changesets still gets it."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    server = hg_serve(repo)
    work = tmp_path / 'work'
    git('clone', '-q', f'hg::{server.url}', str(work))
    for number, args in enumerate((['--prune'], ['-p'], [])):
        hg_commit(hg, repo, {'a': f'{number}\n'}, f'change {number}')
        result = git('fetch', *args, 'origin', cwd=work)
        assert_no_traceback(result)
        assert 'branches/default/tip' in result.err, result.describe()
        assert (PRUNE_HINT in result.err) == (not args), result.describe()
