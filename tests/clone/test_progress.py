"""Progress as git shows it, read through a pseudo-terminal from a real
`git clone` of a real `hg serve`.

In a terminal, each phase of an import is one line redrawn in place
(`\\r`), in data order, named, with its count (and percentage when the
total is known, bytes and rate while receiving), ending with `, done.`;
the first line comes at once, the redraws about ten times a second. A
phase whose total is known before it ends counts against it: the
changesets against the server's `nbchanges`, the manifests against the
changesets, the files against the names the changesets list (as hg does).
Nothing with `-q`, nothing when stderr is a pipe, unless `--progress`.
"""

import re
import statistics

import pytest

from lib.checks import assert_no_traceback
from lib.corpus import NGINX
from lib.git import clone, git, hg_url, identity_env, lasting_refs
from lib.proc import in_terminal, run_in_terminal
from lib.push import hg_commit, make_hg_repo

PHASES = ['Receiving changesets', 'Receiving manifests', 'Receiving files',
          'Storing manifests', 'Storing changesets', 'Writing metadata']
METADATA_DONE = 'Writing metadata: 100% (6/6), done.'
PERCENT = r'(?P<percent>\d+)% \((?P<count>\d+)/(?P<total>\d+)\)'
COUNT = r'(?:\d+| *' + PERCENT + ')'
RECEIVING = re.compile(r'Receiving (changesets|manifests|files): ' + COUNT +
                       r', [\d.]+ (bytes|KiB|MiB)'
                       r'( \| [\d.]+ (bytes|KiB|MiB)/s)?(, done\.)?$')
STORING = re.compile(r'(Storing (manifests|changesets)|Writing metadata): +'
                     + PERCENT + r'(, done\.)?$')


def clone_in_terminal(url, dest, *options, first_request=None):
    """`git clone` with its stderr (and stdout) on a pseudo-terminal:
    [(seconds since the start, line)] of what it drew. With
    `first_request` (a list) and the server's access log in
    `first_request[0]`, the seconds since the start when the log first
    grew (the first request answered) are appended."""
    log = first_request[0] if first_request else None
    log_size = log.stat().st_size if log and log.exists() else 0

    def watch(now):
        if log.exists() and log.stat().st_size > log_size:
            first_request.append(now)
            return False
        return True
    return run_in_terminal(['git', 'clone', *options, url, str(dest)],
                           idle=watch if log else None)


def percentages(lines, phase):
    """[(percent, count, total)] of the lines of `phase`, None for a line
    without a percentage."""
    found = []
    for _, line in lines:
        if line.startswith(phase + ':'):
            m = RECEIVING.match(line) or STORING.match(line)
            found.append(m and m.group('percent') and tuple(
                int(m.group(g)) for g in ('percent', 'count', 'total')))
    return found


def test_clone_progress_in_a_terminal(hg, hg_repos, hg_serve, tmp_path):
    repo = hg_repos.get(NGINX)
    server = hg_serve(repo)
    first_request = [server.logdir / 'access.log']
    lines = clone_in_terminal(hg_url(server.url), tmp_path / 'clone',
                              '--no-checkout', first_request=first_request)
    drawn = [(t, line) for t, line in lines
             if line.split(':')[0] in PHASES]
    # With the total the server announces (bundle2's nbchanges), within
    # 0.3 s of the first request (0.5 s allowed: a loaded machine).
    assert len(first_request) == 2 and drawn[0][0] - first_request[1] < 0.5 \
        and drawn[0][1] == 'Receiving changesets:   0% (0/9828), 0 bytes', \
        (first_request, lines[:3])
    assert all(RECEIVING.match(line) or STORING.match(line)
               for _, line in drawn), drawn
    done = [line for _, line in drawn if line.endswith('done.')]
    assert [line.split(':')[0] for line in done] == PHASES
    assert done[0].startswith('Receiving changesets: 100% (9828/9828), ')
    # The manifests counted against the changesets, the last line all of
    # them (as many as hg has).
    manifests = len(hg('-R', repo, 'debugindex', '-m').out.splitlines()) - 1
    assert done[1].startswith(
        f'Receiving manifests: 100% ({manifests}/{manifests}), ') and \
        done[3] == f'Storing manifests: 100% ({manifests}/{manifests}), done.'
    assert done[-2:] == ['Storing changesets: 100% (9828/9828), done.',
                         METADATA_DONE]
    # Every line of a receiving phase with a percentage, consistent with
    # its count and total, counts only growing, the last 100% (N/N); the
    # files counted against more than one name.
    for phase in PHASES[:3]:
        values = percentages(drawn, phase)
        counts = [v and v[1] for v in values]
        assert all(v and v[0] == v[1] * 100 // v[2] and v[1] <= v[2]
                   for v in values) and counts == sorted(counts) and \
            values[-1][0] == 100 and values[-1][1] == values[-1][2] > 1, \
            (phase, values)
    # About ten redraws a second while receiving: each phase's median
    # interval (robust to a late read of the terminal), and no more.
    for phase in PHASES[:3]:
        times = [t for t, line in drawn if line.startswith(phase + ':')]
        if times[-1] - times[0] < 1:
            continue
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert statistics.median(gaps) < 0.115 and \
            len(times) / (times[-1] - times[0]) <= 12, (phase, gaps)


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
        assert done[0].startswith('Receiving changesets: 100% (1/1), ')
        assert done[2].startswith('Receiving files: 100% (1/1), ')
        assert done[-2:] == ['Storing changesets: 100% (1/1), done.',
                             METADATA_DONE]


def test_estimated_totals_end_at_what_came(hg, hg_serve, tmp_path):
    """The files are counted against the names the changesets list; a
    removed file is listed but has no revision to receive: the last line
    says all that came, with the lines before consistent with it."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n', 'b': 'b\n'})
    url = hg_url(hg_serve(repo).url)
    work = tmp_path / 'work'
    assert_no_traceback(clone(url, work, '-q'))
    hg('-R', repo, 'rm', '-q', repo / 'b')
    hg('-R', repo, 'commit', '-q', '-m', 'no b', '-u', 'Hg <hg@example>',
       '-d', '1600000001 0')
    result = git('fetch', '--progress', 'origin', cwd=work)
    assert_no_traceback(result)
    drawn = [line.strip() for line in re.split(r'[\r\n]', result.err)]
    files = [line for line in drawn if line.startswith('Receiving files:')]
    assert files[0] == 'Receiving files:   0% (0/1), 0 bytes', drawn
    assert files[-1].startswith('Receiving files: 100% (0/0), ') and \
        files[-1].endswith(', done.'), drawn


def test_announced_total_is_an_estimate(hg, tmp_path):
    """A bundle's nbchanges is the server's word: a count above it raises
    the total (never more than 100%), one that is not a number is no
    total."""
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n'})
    hg_commit(hg, repo, {'a': 'b\n'}, 'b')
    bundle = tmp_path / 'all.hg'
    hg('-R', repo, 'bundle', '-q', '--all', '-t', 'none-v2', bundle)
    data = bundle.read_bytes()
    seen = []
    for name, value in (('low', b'1'), ('bad', b'x')):
        path = tmp_path / f'{name}.hg'
        path.write_bytes(data.replace(b'nbchanges2', b'nbchanges' + value))
        result = clone(hg_url(path), tmp_path / name, '--progress')
        assert_no_traceback(result)
        seen.append([line.strip() for line in re.split(r'[\r\n]', result.err)
                     if line.startswith('Receiving changesets')])
    assert [[line.split(', ')[0] for line in lines] for lines in seen] == [
        ['Receiving changesets:   0% (0/1)',
         'Receiving changesets: 100% (2/2)'],
        ['Receiving changesets: 0', 'Receiving changesets: 2']], seen


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
    # Its own revisions, imported back, are not "received"; the push
    # knows how many it writes (a changeset, its manifest, a file).
    assert [line for line in drawn if line.endswith(', done.')] == \
        ['Writing revisions: 100% (3/3), done.', METADATA_DONE], drawn

    # Written by two processes (as a big push is): still all counted.
    for name in ('c', 'd', 'e'):
        (work / name).write_text(name + '\n')
    git('add', '.', cwd=work)
    git('commit', '-q', '-m', 'c d e', cwd=work)
    result = git('push', '--progress', 'origin',
                 'HEAD:refs/heads/branches/default/tip', cwd=work,
                 extra_env={'CINNABAR_TEST_PUSH_SPLIT': '2'})
    assert_no_traceback(result)
    drawn = [line.strip() for line in re.split(r'[\r\n]', result.err)]
    assert [line for line in drawn if line.endswith(', done.')] == \
        ['Writing revisions: 100% (5/5), done.', METADATA_DONE], drawn


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


def meters_done(err):
    """The names of the meters drawn to their end, in order."""
    drawn = [line.strip() for line in re.split(r'[\r\n]', err)]
    return [line.split(':')[0] for line in drawn if line.endswith(', done.')]


@pytest.mark.parametrize('stream', [False, True], ids=['normal', 'stream'])
def test_quiet_with_progress_follows_git(stream, hg, hg_serve, tmp_path):
    """git's rule (transport.c), which git's own clone follows (checked
    here on a file:// clone): an explicit --progress shows progress even
    with -q, whichever comes first; -q alone shows none. The same for a
    stream clone (its own meter, then the helper's) as for a normal one,
    on a pipe."""
    source = tmp_path / 'git-source'
    git('init', '-q', source)
    git('commit', '-q', '--allow-empty', '-m', 'x', cwd=source,
        extra_env=identity_env('A', 'a@example.com'))
    for i, options in enumerate((['-q', '--progress'], ['--progress', '-q'])):
        native = git('clone', *options, f'file://{source}',
                     str(tmp_path / f'native-{i}'))
        assert 'objects' in native.err, native.describe()
    repo = make_hg_repo(hg, tmp_path / 'hg', {'a': 'a\n', 'b': 'b\n'})
    url = hg_url(hg_serve(repo).url)
    config = ['-c', f'cinnabar.stream={"always" if stream else "never"}']
    expected = (['Receiving stream'] if stream else []) + PHASES
    for i, options in enumerate((['-q', '--progress'], ['--progress', '-q'],
                                 ['-q'])):
        result = git(*config, 'clone', *options, url, f'clone-{i}',
                     cwd=tmp_path)
        assert_no_traceback(result)
        done = meters_done(result.err)
        if '--progress' in options:
            assert done == expected, (options, result.err)
        else:
            assert done == [], (options, result.err)
        assert 'Receiving a stream clone' not in result.err
