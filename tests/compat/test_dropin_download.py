"""Drop-in for git-cinnabar 0.7 users: clone bundle and cinnabarclone
downloads that cannot start, against a real `hg serve`.

A download is tried again only when its transfer was cut (see
clone/test_clonebundles.py for those); a URL nothing answers (here a port of
127.0.0.1 nothing listens on: connection refused) is one clear line, at
once: the clone falls back to a normal one, `git cinnabar unbundle`
fails saying why.
"""

import socket

from lib.checks import assert_failed_for_people, assert_no_traceback
from lib.git import METADATA_REF, clone, git, hg_url, init, refs
from lib.push import hg_commit, make_hg_repo


def closed_port_url(name):
    """An http URL on 127.0.0.1 whose port nothing listens on."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    return f'http://127.0.0.1:{port}/{name}'


def served_with_clone_bundle(hg, hg_serve, tmp_path, bundle_url):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    hg_commit(hg, repo, {'b': 'b\n'}, 'second')
    with open(repo / '.hg' / 'hgrc', 'a') as f:
        f.write('[extensions]\nclonebundles =\n')
    (repo / '.hg' / 'clonebundles.manifest').write_text(
        bundle_url + ' BUNDLESPEC=none-v2\n')
    return hg_url(hg_serve(repo).url)


def mentions(text, url):
    """The warnings and errors naming `url`."""
    return [line for line in text.splitlines() if url in line
            and line.startswith(('warning: ', 'error: ', 'fatal: '))]


def test_unreachable_clone_bundle_is_one_line(hg, hg_serve, tmp_path):
    bundle_url = closed_port_url('full.hg')
    url = served_with_clone_bundle(hg, hg_serve, tmp_path, bundle_url)
    dest = tmp_path / 'clone'
    result = clone(url, dest, '--no-checkout')
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    assert 'cut' not in result.err and 'resuming' not in result.err
    said = mentions(result.err, bundle_url)
    assert len(said) == 1 and 'cannot download' in said[0], result.err
    assert 'falling back to a normal clone' in result.err
    assert refs(dest, 'refs/remotes/origin/branches/default/tip')


def test_unreachable_cinnabarclone_is_one_line(hg, hg_serve, tmp_path):
    source = closed_port_url('metadata.bundle')
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    url = hg_url(hg_serve(repo).url)
    dest = tmp_path / 'clone'
    result = clone(url, dest, '--no-checkout', '-c',
                   f'cinnabar.clone={source}')
    assert_no_traceback(result)
    assert result.returncode == 0, result.describe()
    assert 'cut' not in result.err
    assert len([line for line in mentions(result.err, source)
                if 'connection refused' in line]) == 1, result.err
    assert refs(dest, 'refs/remotes/origin/branches/default/tip')


def test_unbundle_of_unreachable_url_fails_once(tmp_path):
    bundle_url = closed_port_url('x.hg')
    repo = init(tmp_path / 'repo')
    result = git('cinnabar', 'unbundle', bundle_url, cwd=repo, check=False)
    assert_failed_for_people(result)
    assert 'cut' not in result.err
    assert len(mentions(result.err, bundle_url)) == 1, result.err
    assert METADATA_REF not in refs(repo)
