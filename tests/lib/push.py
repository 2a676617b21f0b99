"""Pushing through git-cinnabar, and what the push tests look at.

- `writable_remote`: a git URL, over http, ssh or a local path, of an hg
  repository the test owns (the server side of a push);
- `make_hg_repo` / `hg_commit`: small hg repositories made with hg;
  `clone_with_a_change`: one of them served, cloned, a commit to push;
- `Author`, `git_commit`: git commits with chosen authors, committers and
  dates (with their time zones);
- `changeset`, `file_flags`: what hg says of one changeset (parents,
  user, date, branch, files, status, copies; file flags);
- `ServerState`, `nothing_changes`: everything a push can change on the
  server (changesets, phases, heads, bookmarks), to compare before and
  after, with the clone's refs under refs/cinnabar and refs/remotes;
- `push`, `assert_pushed`, `assert_refused`: running `git push` and
  checking its outcome for people (exit code, message, no traceback);
- `assert_fresh_clone_matches`, `assert_fetch_imports_nothing`,
  `assert_hg_verify`: the checks after a successful push.
"""

import collections
import contextlib
from pathlib import Path

from .checks import assert_no_traceback
from .git import NULL_ID, clone, git, git2hg, hg2git, refs, rev_parse
from .sources import make_source

PUSH_TIMEOUT = 600
BRANCH_TIP = 'refs/heads/branches/{}/tip'
CINNABAR_REFS = 'refs/cinnabar'

Author = collections.namedtuple('Author', 'name email')
Author.__doc__ = 'A git identity; `hg_user` is how hg must show it.'
Author.hg_user = property(lambda self: f'{self.name} <{self.email}>')


def writable_remote(transport, repo, hg_serve, logdir, setenv):
    """The git URL of the hg repository `repo` over `transport` (`http`,
    `ssh` or `local`), from which pushes go to `repo` itself.  Returns
    the lib.sources.Source (its `url`, `assert_used`)."""
    if transport not in ('http', 'ssh', 'local'):
        raise ValueError(f'cannot push over {transport}')
    return make_source(transport, repo, None, hg_serve, logdir, setenv)


def hg_commit(hg, repo, files, message, user='Hg Author <hg@example.com>',
              date='1600000000 0', branch=None):
    """Write `files` ({path: text}) in the hg working copy of `repo` and
    commit them (after `hg branch` when `branch` is given); returns the
    new changeset id."""
    repo = Path(repo)
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    if branch:
        hg('-R', repo, 'branch', '-q', '-f', branch)
    hg('-R', repo, 'commit', '-q', '-A', '-m', message, '-u', user,
       '-d', date, cwd=repo)
    return hg('-R', repo, 'log', '-r', '.', '-T', '{node}').out


def make_hg_repo(hg, repo, files, message='initial import'):
    """A new hg repository at `repo` with one changeset of `files`."""
    hg('init', repo)
    hg_commit(hg, repo, files, message)
    return Path(repo)


def clone_with_a_change(hg, hg_serve, tmp_path, setenv, transport='http'):
    """An hg repository of one changeset (`server`, over `transport`),
    its clone `work` with one new commit changing `file`, by `Pusher` at
    1700000000 +0000: (server, work, commit)."""
    server = make_hg_repo(hg, Path(tmp_path) / 'server', {'file': 'base\n'})
    src = writable_remote(transport, server, hg_serve, tmp_path, setenv)
    work = Path(tmp_path) / 'work'
    clone(src.url, work)
    (work / 'file').write_text('changed\n')
    git('add', 'file', cwd=work)
    commit = git_commit(work, 'change', Author('Pusher', 'p@example.com'),
                        '1700000000 +0000')
    return server, work, commit


def git_commit(repo, message, author, date, committer=None,
               committer_date=None, options=()):
    """`git commit` in `repo` as `author` at `date` (git's raw format,
    `<seconds> <+hhmm>`), committed by `committer` (default: the author)
    at `committer_date` (default: `date`); returns the commit id."""
    committer = committer or author
    env = {
        'GIT_AUTHOR_NAME': author.name,
        'GIT_AUTHOR_EMAIL': author.email,
        'GIT_AUTHOR_DATE': date,
        'GIT_COMMITTER_NAME': committer.name,
        'GIT_COMMITTER_EMAIL': committer.email,
        'GIT_COMMITTER_DATE': committer_date or date,
    }
    git('commit', '-q', '-m', message, *options, cwd=repo, extra_env=env)
    return rev_parse(repo, 'HEAD')


def hg_date(git_date):
    """hg's `{date|hgdate}` of a git raw date: the offset is in seconds,
    west of UTC."""
    seconds, zone = git_date.split()
    sign = -1 if zone[0] == '-' else 1
    offset = sign * (int(zone[1:3]) * 3600 + int(zone[3:5]) * 60)
    return f'{seconds} {-offset}'


CHANGESET_TEMPLATE = (
    '{node}\\n{p1node}\\n{p2node}\\n{author}\\n{date|hgdate}\\n{branch}\\n'
    '{join(files, "\\t")}\\n'
    '{join(file_copies % "{name}\\0{source}", "\\t")}\\n')
Changeset = collections.namedtuple(
    'Changeset', 'node parents user date branch files adds dels mods copies')
Changeset.__doc__ = """`files` is the changeset's list of files (what
`hg log --debug` shows as files, files+ and files-); `adds`, `dels` and
`mods` are `hg status --change` (against the first parent)."""


def changeset(hg, repo, rev):
    """What hg says of the changeset `rev` of `repo`."""
    out = hg('-R', repo, 'log', '-r', rev, '-T', CHANGESET_TEMPLATE).out
    node, p1, p2, user, date, branch, files, copies = out.split('\n')[:8]

    def names(field):
        return set(field.split('\t')) - {''}
    status = collections.defaultdict(set)
    out = hg('-R', repo, 'status', '--change', rev).out
    for line in out.splitlines():
        status[line[0]].add(line[2:])
    return Changeset(
        node, [p for p in (p1, p2) if p != NULL_ID], user, date, branch,
        names(files), status['A'], status['R'], status['M'],
        dict(pair.split('\0') for pair in names(copies)))


class ServerState:
    """What a push could change in the hg repository `repo`: changesets
    (with their phases), open heads with their branches, bookmarks."""

    def __init__(self, hg, repo):
        self.changesets = sorted(hg('-R', repo, 'log', '-T',
                                    '{node} {phase}\n').out.splitlines())
        self.heads = sorted(hg.heads(repo))
        self.bookmarks = hg.bookmarks(repo)

    def __eq__(self, other):
        return vars(self) == vars(other)

    def __repr__(self):
        return (f'<changesets {self.changesets}, heads {self.heads}, '
                f'bookmarks {self.bookmarks}>')


def push(repo, *args, **kwargs):
    """`git push args...` in `repo`, not checked; returns the Result."""
    kwargs.setdefault('timeout', PUSH_TIMEOUT)
    return git('push', *args, cwd=repo, check=False, **kwargs)


def assert_pushed(result, where=''):
    """The push worked (`where` says which, in the failure message)."""
    assert result.returncode == 0, (f'the push failed {where}\n'
                                    + result.describe())
    assert_no_traceback(result)


def rejection_lines(result):
    """The lines of git's report on rejected refs."""
    return [line for line in result.err.splitlines()
            if line.lstrip().startswith('!')]


def assert_refused(result, *words):
    """The push failed, without a traceback, git reported a ref as
    rejected, and the messages name each of `words` (each an alternative
    of words, given as a tuple, or a single word), case insensitively."""
    assert result.returncode != 0, ('the push did not fail\n'
                                    + result.describe())
    assert_no_traceback(result)
    assert rejection_lines(result), ('git reported no rejected ref\n'
                                     + result.describe())
    text = result.err.lower()
    for word in words:
        choices = word if isinstance(word, tuple) else (word,)
        assert any(c.lower() in text for c in choices), (
            f'the messages do not say {" or ".join(map(repr, choices))}\n'
            + result.describe())


@contextlib.contextmanager
def nothing_changes(hg, server, repo):
    """Around a push that must fail: the hg repository `server` and the
    refs of the clone `repo` (git-cinnabar's own under refs/cinnabar, and
    the remote-tracking refs) are the same after as before."""
    state = ServerState(hg, server)
    ours = refs(repo, CINNABAR_REFS, 'refs/remotes')
    yield
    after = ServerState(hg, server)
    assert after == state, f'the server changed: {state} -> {after}'
    changed = refs(repo, CINNABAR_REFS, 'refs/remotes')
    assert changed == ours, (
        f'refs under refs/cinnabar or refs/remotes changed: {ours} -> '
        f'{changed}')


def assert_hg_verify(hg, repo):
    result = hg('-R', repo, 'verify', check=False, timeout=PUSH_TIMEOUT)
    text = result.out + result.err
    assert result.returncode == 0 and 'warning' not in text.lower(), (
        'hg verify is not clean\n' + result.describe())


def assert_fresh_clone_matches(url, dest, repo, hg_nodes):
    """A fresh clone of `url` at `dest` maps each changeset of `hg_nodes`
    to the same git commit as the clone `repo` (which pushed them), and
    its remote refs are those of `repo`, at the same commits."""
    assert_no_traceback(clone(url, dest, '--no-checkout'))
    ours = hg2git(repo, hg_nodes)
    assert NULL_ID not in ours.values(), ours
    theirs = hg2git(dest, hg_nodes)
    differ = {h: (ours[h], theirs[h]) for h in hg_nodes
              if ours[h] != theirs[h]}
    assert not differ, ('a fresh clone gives other commits '
                        '(hg id: (pushed, fresh clone)): ' + repr(differ))
    remote = {name[len('refs/remotes/origin/'):]: oid
              for name, oid in refs(repo, 'refs/remotes/origin').items()}
    fresh = {name[len('refs/remotes/origin/'):]: oid
             for name, oid in refs(dest, 'refs/remotes/origin').items()}
    assert fresh == remote, 'the fresh clone has other remote refs'


def assert_fetch_imports_nothing(repo, *args, moves=None):
    """`git fetch [args]` right after a push imports nothing: no ref
    changes at all (the metadata, the remote refs, git-cinnabar's own),
    but those of `moves` ({ref: commit}), which may only move to the
    commit given (already in `repo`: the refs of a branch whose tip moved
    through a bookmark push, for instance); those of them under
    refs/remotes/ must be there after the fetch."""
    before = refs(repo)
    result = git('fetch', *args, cwd=repo, timeout=PUSH_TIMEOUT)
    assert_no_traceback(result)
    after = refs(repo)
    changed = {name: (before.get(name), after.get(name))
               for name in set(before) | set(after)
               if before.get(name) != after.get(name)}
    moves = moves or {}
    unexpected = {name: change for name, change in changed.items()
                  if moves.get(name) != change[1]}
    assert not unexpected, ('git fetch after the push changed refs '
                            '(name: (before, after)): ' + repr(unexpected))
    wrong = {name: after.get(name) for name, commit in moves.items()
             if name.startswith('refs/remotes/')
             and after.get(name) != commit}
    assert not wrong, f'after git fetch, refs are not at {moves}: {wrong}'


def pushed_nodes(repo, commits):
    """{git commit: hg changeset} of `commits` from the metadata of `repo`;
    every one must be mapped."""
    mapping = git2hg(repo, commits)
    unmapped = [c for c, h in mapping.items() if h == NULL_ID]
    assert not unmapped, f'pushed commits not in the metadata: {unmapped}'
    return mapping
