"""Progress as git shows it, read through a pseudo-terminal from a real
`git clone` of a real `hg serve`.

In a terminal, each phase of an import is one line redrawn in place
(`\\r`), in data order, named, with its count (and percentage when the
total is known, bytes and rate while receiving), ending with `, done.`;
the first line comes at once, the redraws several times a second. Nothing
with `-q`, nothing when stderr is a pipe, unless `--progress`.
"""

import re

from lib.checks import assert_no_traceback
from lib.corpus import NGINX
from lib.git import clone, git, hg_url, lasting_refs
from lib.proc import in_terminal, run_in_terminal
from lib.push import make_hg_repo

PHASES = ['Receiving changesets', 'Receiving manifests', 'Receiving files',
          'Storing manifests', 'Storing changesets', 'Writing metadata']
METADATA_DONE = 'Writing metadata: 100% (6/6), done.'
RECEIVING = re.compile(r'Receiving (changesets|manifests|files): \d+, '
                       r'[\d.]+ (bytes|KiB|MiB)( \| [\d.]+ (bytes|KiB|MiB)/s)?'
                       r'(, done\.)?$')
STORING = re.compile(r'(Storing (manifests|changesets)|Writing metadata): +'
                     r'\d+% \((\d+)/(\d+)\)'
                     r'(, done\.)?$')


def clone_in_terminal(url, dest, *options):
    """`git clone` with its stderr (and stdout) on a pseudo-terminal:
    [(seconds since the start, line)] of what it drew."""
    return run_in_terminal(['git', 'clone', *options, url, str(dest)])


def test_clone_progress_in_a_terminal(hg_repos, hg_serve, tmp_path):
    server = hg_serve(hg_repos.get(NGINX))
    lines = clone_in_terminal(hg_url(server.url), tmp_path / 'clone',
                              '--no-checkout')
    drawn = [(t, line) for t, line in lines
             if line.split(':')[0] in PHASES]
    assert drawn[0][1] == 'Receiving changesets: 0, 0 bytes'
    assert drawn[0][0] < 2, lines[:3]
    assert all(RECEIVING.match(line) or STORING.match(line)
               for _, line in drawn), drawn
    done = [line for _, line in drawn if line.endswith('done.')]
    assert [line.split(':')[0] for line in done] == PHASES
    assert done[-2:] == ['Storing changesets: 100% (9828/9828), done.',
                         METADATA_DONE]
    # Several redraws a second, not more than about ten, while receiving.
    receiving = [t for t, line in drawn if line.startswith('Receiving')]
    rate = len(receiving) / (receiving[-1] - receiving[0])
    assert 4 <= rate <= 12, rate


def test_progress_only_for_people(hg, hg_serve, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    url = hg_url(hg_serve(repo).url)
    quiet = clone_in_terminal(url, tmp_path / 'quiet', '-q')
    assert [line for _, line in quiet
            if line.split(':')[0] in PHASES] == []

    piped = clone(url, tmp_path / 'piped')
    assert_no_traceback(piped)
    assert 'Receiving' not in piped.err and 'Storing' not in piped.err

    # Over HTTP, and from a local repository (hg serve --stdio, as ssh).
    for name, source in (('http', url), ('local', hg_url(repo))):
        forced = clone(source, tmp_path / name, '--progress')
        assert_no_traceback(forced)
        drawn = [line.strip() for line in re.split(r'[\r\n]', forced.err)]
        done = [line for line in drawn if line.endswith(', done.')]
        assert [line.split(':')[0] for line in done] == PHASES, drawn
        assert all(RECEIVING.match(line) for line in done[:3])
        assert done[0].startswith('Receiving changesets: 1, ')
        assert done[2].startswith('Receiving files: 1, ')
        assert done[-2:] == ['Storing changesets: 100% (1/1), done.',
                             METADATA_DONE]


def test_stream_clone_progress(hg, hg_serve, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n', 'b': 'b\n'})
    url = hg_url(hg_serve(repo).url)
    result = git('-c', 'cinnabar.stream=always', 'clone', '--progress',
                 url, 'clone', cwd=tmp_path)
    assert_no_traceback(result)
    drawn = [line.strip() for line in re.split(r'[\r\n]', result.err)]
    done = [line for line in drawn if line.endswith(', done.')]
    assert done[0].split(':')[0] == 'Receiving stream', drawn
    assert re.fullmatch(r'Receiving stream: 100% \((\d+)/\1\), '
                        r'\d+ bytes \| [\d.]+ (bytes|KiB|MiB)/s, done\.',
                        done[0]), done[0]
    assert [line.split(':')[0] for line in done[1:]] == PHASES


def test_push_progress(hg, hg_serve, tmp_path):
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    url = hg_url(hg_serve(repo).url)
    work = tmp_path / 'work'
    assert_no_traceback(clone(url, work, '-q'))
    (work / 'b').write_text('b\n')
    git('add', 'b', cwd=work)
    git('commit', '-q', '-m', 'b', cwd=work)
    result = git('push', '--progress', 'origin',
                 'HEAD:refs/heads/branches/default/tip', cwd=work)
    assert_no_traceback(result)
    drawn = [line.strip() for line in re.split(r'[\r\n]', result.err)]
    # Its own revisions, imported back, are not "received".
    assert [line for line in drawn if line.endswith(', done.')] == \
        ['Writing revisions: 3, done.', METADATA_DONE], drawn


# What the terminal's Ctrl-C does: SIGINT to the whole foreground process
# group (git, git-remote-hg, the helper, fast-import), here sent by the
# helper when it reaches the files (CINNABAR_TEST_DIE_AT).
CTRL_C = {'CINNABAR_TEST_DIE_AT': 'files', 'CINNABAR_TEST_DIE_SIGNAL': '2',
          'CINNABAR_TEST_DIE_GROUP': '1'}


def assert_quiet_interrupt(proc, lines):
    """Ended by SIGINT as git ends, with nothing printed after it, not
    even once git has gone (the shell would have its prompt back)."""
    assert proc.returncode in (-2, 130), (proc.returncode, lines[-5:])
    said = [line for _, line in lines
            if line.startswith(('fatal:', 'error:', 'Traceback'))]
    assert said == [], lines[-5:]


def test_ctrl_c_during_clone(hg_repos, hg_serve, tmp_path):
    server = hg_serve(hg_repos.get('hgweb+obs.hg'))
    proc, lines = in_terminal(['git', 'clone', '--no-checkout',
                               hg_url(server.url), 'clone'],
                              cwd=tmp_path, extra_env=CTRL_C)
    assert_quiet_interrupt(proc, lines)
    assert not (tmp_path / 'clone').exists()


def test_ctrl_c_during_fetch(hg, hg_repos, hg_serve, tmp_path):
    served = hg_repos.copy('hgweb+obs.hg', tmp_path / 'served', rev=1)
    server = hg_serve(served)
    repo = tmp_path / 'clone'
    clone(hg_url(server.url), repo, '--no-checkout')
    hg('-R', served, 'pull', '-q', hg_repos.get('hgweb+obs.hg'))
    before = lasting_refs(repo)
    proc, lines = in_terminal(['git', 'fetch', 'origin'], cwd=repo,
                              extra_env=CTRL_C)
    assert_quiet_interrupt(proc, lines)
    assert lasting_refs(repo) == before
    assert not list((repo / '.git' / 'objects' / 'pack').glob('tmp_*'))
