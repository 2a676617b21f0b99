"""A clone with the trace sent to a file (GIT_CINNABAR_LOG or the
cinnabar.log setting) writes the helper protocol, the remote-helper
protocol and the Mercurial wire protocol to it, on every transport; for
HTTP, the requests and the server's status and headers. Channels can be
chosen as with git-cinnabar (`helper:3,wire:2`)."""

import pytest

from lib.checks import assert_no_traceback
from lib.git import clone, git
from lib.push import hg_commit, make_hg_repo
from lib.sources import make_source


def channels(log):
    """{channel + direction: [texts]} of a trace file."""
    found = {}
    for line in log.read_text().splitlines():
        head, _, text = line.partition(' ')
        found.setdefault(head, []).append(text)
    return found


@pytest.mark.parametrize('transport', ('http', 'ssh', 'local'))
def test_clone_traced_to_file(transport, hg, hg_serve, tmp_path,
                              monkeypatch):
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'x\n'})
    src = make_source(transport, repo, None, hg_serve, tmp_path,
                      monkeypatch.setenv)
    (tmp_path / 'logs').mkdir()
    result = git('clone', src.url, 'work', cwd=tmp_path,
                 extra_env={'GIT_CINNABAR_LOG': 'logs/trace.log'})
    assert_no_traceback(result)
    found = channels(tmp_path / 'logs' / 'trace.log')
    assert 'capabilities' in found['remote-helper<']
    assert any(t.startswith('import ') for t in found['remote-helper<'])
    assert 'finish' in found['helper>']
    assert any(t.startswith('ok ') for t in found['helper<'])
    sent = ' '.join(found['wire>'])
    assert 'getbundle' in sent and ('hello' in sent or 'capabilities' in sent)
    assert found['wire<']
    if transport == 'http':
        assert any(t.startswith('HTTP 200') for t in found['wire<'])
        assert any(t.startswith('content-type: application/mercurial')
                   for t in found['wire<'])
        assert any(t.startswith('GET http://127.0.0.1')
                   for t in found['wire>'])


def test_channels_chosen_in_config(hg, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'repo', {'f': 'x\n'})
    work = tmp_path / 'work'
    clone(f'hg::{repo}', work)
    git('config', 'cinnabar.log', 'wire:4,helper:2,fetch.log', cwd=work)
    hg_commit(hg, repo, {'f': 'y\n'}, 'the server moves on')
    git('fetch', '-q', cwd=work)
    found = channels(work / 'fetch.log')
    assert set(found) <= {'wire>', 'wire<', 'wire:'}
    assert any('getbundle' in t for t in found['wire>'])
