"""The push oracle: a random history (lib.randhist) pushed with git-cinnabar
to an empty Mercurial repository, in several steps, against the same
history replayed with hg's own commands (lib.hgreplay).  Both repositories
are read by Mercurial (lib.hgdump) and compared changeset by changeset
(the pushed one found through `git cinnabar git2hg`, the replayed one by
revision number):

- parents, manifest id, files list, user, date, branch and other extras;
- the description: ours is the git message (trailing newline kept, as
  git-cinnabar does), hg's the same without it; ours has a `committer`
  extra exactly when the committer is not the author (`<user> <time>
  <offset>`), which `hg commit` cannot make;
- every file revision of every path: id, parents, copy source and the
  commit its linkrev points to;
- phases (all public on the server, as in the exchanged replay) and
  bookmarks (`head-<index>` on the commit of each head pushed as one).

Copies are git's to find, as git-cinnabar 0.7.5 asks (lib.git.git_copies);
the replay tells hg the same (`hg copy --after`).

Changeset ids may differ only by the description and the committer extra,
and they are not compared.  The replayed repository is compared after an
`hg clone --pull` of it, so that both went through hg's exchange.

Used by tests/push/test_push_oracle.py and `make fuzz-push` (`python -m
lib.push_oracle`, run from tests/).
"""

import json
import shutil
import time
from pathlib import Path

from .git import NULL_ID, git, git2hg, git_copies
from .hgreplay import hg_date, hg_user, replay
from .push import BRANCH_TIP, assert_hg_verify, assert_pushed, push
from .randhist import generate, write_git

DUMP_EXTENSION = Path(__file__).with_name('hgdump.py')
TIP = BRANCH_TIP.format('default')


def dump(hg, repo):
    """What Mercurial reads of `repo` (lib.hgdump)."""
    out = hg('--config', f'extensions.hgdump={DUMP_EXTENSION}', '-R', repo,
             'oracledump', timeout=600).stdout
    return json.loads(out)


def step_refspecs(history, ids):
    """For each push step, the refspecs of one `git push -f` of the heads
    of its commits (a head may be a new one on the server): the last one
    to the default branch, the others as bookmarks `head-<index>`."""
    for upto in history.steps:
        *others, last = history.heads(upto)
        yield [f'{ids[last]}:{TIP}'] + [
            f'{ids[h]}:refs/heads/bookmarks/head-{h}' for h in others]


def push_in_steps(history, ids, work, remote='origin'):
    """Push `history` (written as `ids`) to `remote` in its steps."""
    for refspecs in step_refspecs(history, ids):
        assert_pushed(push(work, '-f', remote, *refspecs),
                      f'of {refspecs} (seed {history.seed})')


def commit_copies(history, ids, work):
    """Each commit's copies, as git finds them (lib.git.git_copies) against
    its first parent; none in a merge: `hg commit` records what it is told,
    and the generator's merges rename nothing (a file they take from the
    second parent as it is, which git may pair with a file of the first,
    is that revision, no copy)."""
    return [git_copies(work, ids[c.parents[0]], ids[c.index])
            if len(c.parents) == 1 else {} for c in history.commits]


def _file_revs(data, index_of):
    """{path: {(node, p1, p2, commit index, copy path, copy node)}}."""
    return {path: {(n, p1, p2, index_of.get(link), cpath, cnode)
                   for n, p1, p2, link, cpath, cnode in revs}
            for path, revs in data['filelogs'].items()}


def _manifest_diff(ours, theirs):
    a = {p: (n, f) for p, n, f in ours}
    b = {p: (n, f) for p, n, f in theirs}
    return {p: (a.get(p), b.get(p)) for p in set(a) | set(b)
            if a.get(p) != b.get(p)}


def expected_committer(commit):
    """The `committer` extra git-cinnabar writes, or None."""
    if (commit.committer, commit.committer_date) == (commit.author,
                                                     commit.date):
        return None
    return f'{hg_user(commit.committer)} {hg_date(commit.committer_date)}'


def compare_changeset(commit, ours, theirs, our_index, their_index,
                      our_manifests, their_manifests, inherited):
    """The differences between the pushed (`ours`) and replayed changesets
    of `commit`, as a list of strings.  Manifests are compared by their
    lines; their ids too unless `inherited` (a parent's manifest id
    differs already, and so must this one's)."""
    found = []

    def differ(what, a, b):
        if a != b:
            found.append(f'{what}: pushed {a!r}, hg commit {b!r}')
    differ('parents', [our_index.get(p) for p in ours['parents']],
           [their_index.get(p) for p in theirs['parents']])
    differ('files', ours['files'], theirs['files'])
    differ('user', ours['user'], theirs['user'])
    differ('date', ours['date'], theirs['date'])
    extra = dict(ours['extra'])
    differ('committer extra', extra.pop('committer', None),
           expected_committer(commit))
    differ('extras', extra, theirs['extra'])
    differ('description', ours['desc'], commit.message)
    differ('hg commit description', theirs['desc'],
           commit.message.rstrip('\n'))
    if ours['manifest'] != theirs['manifest']:
        diff = _manifest_diff(our_manifests[ours['manifest']],
                              their_manifests[theirs['manifest']])
        if diff:
            found.append(f'manifest lines (path: (pushed, hg commit)): '
                         f'{diff}')
        elif not inherited:
            found.append(f'manifest {ours["manifest"]} != '
                         f'{theirs["manifest"]} with the same lines')
    return found


def compare(history, ids, ours, theirs, server_nodes):
    """All differences between the pushed repository (dump `ours`) and the
    replayed one (`theirs`), per commit then per file."""
    problems = []
    ours_by_node = {cs['node']: cs for cs in ours['changesets']}
    our_index = {server_nodes[oid]: i for i, oid in enumerate(ids)}
    their_index = {cs['node']: i for i, cs in enumerate(theirs['changesets'])}
    our_index[NULL_ID] = their_index[NULL_ID] = None
    if len(ours['changesets']) != len(history.commits):
        problems.append(f'the server has {len(ours["changesets"])} '
                        f'changesets for {len(history.commits)} commits')
    differs = set()
    for commit, oid, cs in zip(history.commits, ids, theirs['changesets']):
        node = server_nodes[oid]
        if node not in ours_by_node:
            problems.append(f'{commit.describe()}: not on the server')
            continue
        mine = ours_by_node[node]
        if mine['manifest'] != cs['manifest']:
            differs.add(commit.index)
        for p in compare_changeset(commit, mine, cs, our_index, their_index,
                                   ours['manifests'], theirs['manifests'],
                                   differs.intersection(commit.parents)):
            problems.append(f'{commit.describe()}: {p}')
    our_files = _file_revs(ours, our_index)
    their_files = _file_revs(theirs, their_index)
    for path in sorted(set(our_files) | set(their_files)):
        a, b = our_files.get(path, set()), their_files.get(path, set())
        if a != b:
            problems.append(
                f'file {path!r}: revisions (node, p1, p2, commit, copy '
                f'source, copy rev) only pushed: {sorted(a - b)}; '
                f'only hg commit: {sorted(b - a)}')
    return problems


class Outcome:
    def __init__(self, history, problems, seconds):
        self.history = history
        self.problems = problems
        self.seconds = seconds

    def report(self, limit=6):
        lines = [f'seed {self.history.seed}: {len(self.history.commits)} '
                 f'commits pushed in steps {self.history.steps}: '
                 f'{len(self.problems)} differences'
                 f' ({self.seconds:.1f} s)']
        lines += self.problems[:limit]
        if len(self.problems) > limit:
            lines.append(f'... and {len(self.problems) - limit} more')
        return '\n'.join(lines)


def run(hg, seed, commits, steps, workdir):
    """Generate, push, replay and compare one history in `workdir` (new);
    return an Outcome."""
    return check_history(hg, generate(seed, commits, steps), workdir)


def check_history(hg, history, workdir, url_of=None):
    """Push, replay and compare `history` (a randhist.History) in `workdir`
    (new); return an Outcome.  `url_of(repo)`, when given, is the git URL
    to push to the hg repository `repo` through (default: its path)."""
    start = time.monotonic()
    workdir = Path(workdir)
    workdir.mkdir(parents=True)
    work = workdir / 'git'
    git('init', '-q', work)
    ids = write_git(history, work)
    server = workdir / 'pushed'
    hg('init', server)
    url = url_of(server) if url_of else f'hg::{server}'
    git('remote', 'add', 'origin', url, cwd=work)
    push_in_steps(history, ids, work)
    assert_hg_verify(hg, server)
    replay(hg.exe, history, workdir / 'replayed',
           commit_copies(history, ids, work))
    # As the push did, through hg's exchange: hg changes what it stores of
    # some incoming revisions (it swaps the parents of a file revision
    # whose text starts with "\1\n": mercurial/revlogutils/rewrite.py,
    # Mercurial's issue6528), so the replayed history goes through it too.
    hg('clone', '-q', '-U', '--pull', workdir / 'replayed',
       workdir / 'exchanged', timeout=600)
    server_nodes = git2hg(work, ids)
    problems = compare(history, ids, dump(hg, server),
                       dump(hg, workdir / 'exchanged'), server_nodes)
    problems += compare_phases_and_bookmarks(
        hg, history, ids, server, workdir / 'exchanged', server_nodes)
    return Outcome(history, problems, time.monotonic() - start)


def compare_phases_and_bookmarks(hg, history, ids, server, exchanged,
                                 server_nodes):
    """The server's phases (all public, as the exchanged replay's) and
    bookmarks (`head-<index>` at each head push_in_steps named so)."""
    problems = []
    phases = {phase for repo in (server, exchanged) for phase in
              hg('-R', repo, 'log', '-T', '{phase}\n').out.split()}
    if phases != {'public'}:
        problems.append(f'phases pushed and replayed: {phases}')
    expected = {}
    for refspecs in step_refspecs(history, ids):
        for spec in refspecs[1:]:
            oid, ref = spec.split(':')
            expected[ref.rsplit('/', 1)[1]] = server_nodes[oid]
    if hg.bookmarks(server) != expected:
        problems.append(f'bookmarks {hg.bookmarks(server)}, not {expected}')
    return problems


def _parse_seeds(text):
    """`1,4,10-12` -> [1, 4, 10, 11, 12]."""
    seeds = []
    for part in text.split(','):
        first, _, last = part.partition('-')
        seeds += range(int(first), int(last or first) + 1)
    return seeds


def main(argv=None):
    import argparse
    import os
    import tempfile

    from . import env
    from .hg import Hg

    parser = argparse.ArgumentParser(
        prog='python -m lib.push_oracle',
        description='Push random histories with git-cinnabar and compare '
                    'them with what hg commit makes of them.')
    parser.add_argument('--seeds', default='1-20', help='e.g. 1-20,42')
    parser.add_argument('--commits', type=int, default=300)
    parser.add_argument('--steps', type=int, default=4)
    parser.add_argument('--keep', action='store_true',
                        help='keep the repositories of failing seeds')
    parser.add_argument('--helper', help='the git-cinnabar-helper to push '
                        'with (GIT_CINNABAR_HELPER), e.g. another build')
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix='push-oracle-'))
    hg = Hg(env.hg_executable())
    isolated = env.isolated_env(tmp / 'home', hg.exe)
    if args.helper:
        isolated['GIT_CINNABAR_HELPER'] = os.path.abspath(args.helper)
    os.environ.clear()
    os.environ.update(isolated)
    failed = []
    for seed in _parse_seeds(args.seeds):
        outcome = run(hg, seed, args.commits, args.steps, tmp / str(seed))
        print(outcome.report(), flush=True)
        if outcome.problems:
            failed.append(seed)
        elif not args.keep:
            shutil.rmtree(tmp / str(seed))
    print(f'{len(failed)} of {len(_parse_seeds(args.seeds))} seeds differ'
          + (f': {failed}' if failed else ''))
    if not args.keep:
        shutil.rmtree(tmp)
    else:
        print(f'repositories kept in {tmp}')
    return 1 if failed else 0


if __name__ == '__main__':
    raise SystemExit(main())
