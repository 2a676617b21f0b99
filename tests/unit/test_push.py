"""Push planning and checks (cinnabar.push), against a fake git history,
a fake helper and a fake server.

The history used by most tests (git commits; `hg:` what the metadata
maps them to):

    R ── A ── C        R, A: on the server (default), A is its head
          \\
           D ── E      D: a local commit; E: a local commit
    S                  S: a local root
    T                  T: from Mercurial, on branch `stable`, a child of A
"""

import collections

import pytest

from cinnabar import push as push_module
from cinnabar.errors import Abort
from cinnabar.helper import Head, HelperError
from cinnabar.hg.pushwire import PushFormat, UnbundleResult
from cinnabar.hg.wire import RemoteState
from cinnabar.ids import GitId, HgId, NULL_GIT, NULL_HG
from cinnabar.refs import STYLES


def gid(name):
    return GitId(name.encode().hex().ljust(40, '0'))


def hid(name):
    return HgId(name.encode().hex().ljust(40, 'f'))


PARENTS = {'R': [], 'A': ['R'], 'C': ['A'], 'D': ['R'], 'E': ['D'],
           'S': [], 'T': ['A']}
NAMES = {gid(n): n for n in PARENTS}


class FakeGit:
    def __init__(self):
        self.parents = {gid(n): [gid(p) for p in ps]
                        for n, ps in PARENTS.items()}

    def ancestors(self, commits):
        seen, todo = set(), list(commits)
        while todo:
            commit = todo.pop()
            if commit not in seen:
                seen.add(commit)
                todo.extend(self.parents[commit])
        return seen

    def rev_list_parents(self, include, exclude):
        wanted = self.ancestors(include) - self.ancestors(exclude)
        ordered, done = [], set()
        while len(ordered) < len(wanted):
            for commit in sorted(wanted - done):
                if all(p in done or p not in wanted
                       for p in self.parents[commit]):
                    ordered.append((commit, self.parents[commit]))
                    done.add(commit)
        return ordered

    def is_ancestor(self, ancestor, descendant):
        return ancestor in self.ancestors([descendant])


class FakeResolver:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass

    def resolve(self, name):
        return gid(name) if name in PARENTS else None


class FakeHelper:
    def __init__(self, fake_git):
        self.git = fake_git
        self.metadata = {gid(n): hid(n) for n in 'RAT'}
        self.branches = {hid('R'): 'default', hid('A'): 'default',
                         hid('T'): 'stable'}
        self.pending = {}
        self.log = []
        self.alive = True

    def _all(self):
        return {**self.metadata, **self.pending}

    def hg2git(self, hg_id):
        return self.hg2git_many([hg_id])[0]

    def hg2git_many(self, hg_ids):
        reverse = {h: g for g, h in self._all().items()}
        return [reverse.get(h, NULL_GIT) for h in hg_ids]

    def git2hg(self, git_id):
        return self._all().get(git_id, NULL_HG)

    def git2hg_many(self, git_ids):
        return [self.git2hg(g) for g in git_ids]

    def is_ancestor(self, ancestor, descendant):
        return self.git.is_ancestor(ancestor, descendant)

    def is_ancestor_many(self, pairs):
        return [self.git.is_ancestor(a, d) for a, d in pairs]

    def heads(self):
        return [Head(hid('A'), gid('A'), 'default'),
                Head(hid('T'), gid('T'), 'stable')]

    def changegroup(self, version, path, commits, branches=None):
        self.log.append(('changegroup', [NAMES[c] for c in commits]))
        for commit in commits:
            self.pending.setdefault(commit, hid(NAMES[commit]))
            parents = self.git.parents[commit]
            self.branches.setdefault(
                self.pending[commit],
                self.branches[self._all()[parents[0]]] if parents
                else 'default')
        with open(path, 'wb') as out:
            out.write(b'changegroup %s' % version.encode())
        self._bundled = list(commits)
        return {c: self._all()[c] for c in commits}

    def bundle_heads(self, path):
        with open(path, 'rb') as bundle:
            assert b'changegroup 02' in bundle.read()
        heads = []
        for commit in self._bundled:
            hg_id = self._all()[commit]
            branch = self.branches[hg_id]
            children = [c for c in self._bundled
                        if commit in self.git.parents[c]
                        and self.branches[self._all()[c]] == branch]
            if not children:
                heads.append(Head(hg_id, None, branch))
        return heads

    def abort(self):
        self.log.append('abort')
        self.pending = {}

    def finish(self):
        self.log.append('finish')
        self.metadata.update(self.pending)
        self.pending = {}


class FakePeer:
    def __init__(self, known, result=None):
        self.server = set(known)
        self.result = result or UnbundleResult(True, None, None, b'', False)
        self.sent = []
        self.pushkeys = []
        self.pushkey_answer = (True, b'')
        self.description = 'fake'

    def capable(self, name):
        return b'' if name == 'unbundle' else None

    def known(self, nodes):
        return [n in self.server for n in nodes]

    def push_format(self):
        return PushFormat(True, '02')

    def unbundle(self, path, push_format, heads):
        with open(path, 'rb') as bundle:
            self.sent.append((bundle.read()[:4], list(heads)))
        return self.result

    def pushkey(self, namespace, key, old, new):
        self.pushkeys.append((namespace, key, old, new))
        return self.pushkey_answer

    def listkeys(self, namespace):
        assert namespace == 'phases'
        return {'publishing': 'True'}


World = collections.namedtuple('World', 'peer helper state')


def world(branchmap=None, bookmarks=None, result=None):
    if branchmap is None:
        branchmap = [('default', [hid('A')])]
    heads = [h for _, hs in branchmap for h in hs]
    known = {hid('R'), hid('A')} | set(heads)
    state = RemoteState(branchmap, heads, bookmarks or {})
    fake_git = FakeGit()
    return World(FakePeer(known, result), FakeHelper(fake_git), state)


@pytest.fixture(autouse=True)
def fake_git(monkeypatch):
    fake = FakeGit()
    monkeypatch.setattr(push_module.git, 'CommitResolver', FakeResolver)
    monkeypatch.setattr(push_module.git, 'rev_list_parents',
                        fake.rev_list_parents)
    # The metadata's root changeset, R, is on the server.
    monkeypatch.setattr(push_module.git, 'root_commits',
                        lambda rev: [gid('R')])


TIP = 'refs/heads/branches/default/tip'


def run(w, *lines, force=False, dry_run=False):
    specs = [push_module.parse_push(line) for line in lines]
    pusher = push_module.Pusher(w.peer, w.helper, w.state, STYLES,
                                force=force, dry_run=dry_run)
    return dict(pusher.push(specs))


def test_parse_push():
    assert push_module.parse_push('+HEAD:refs/heads/x') == \
        push_module.PushSpec('HEAD', 'refs/heads/x', True)
    assert push_module.parse_push(':refs/heads/x') == \
        push_module.PushSpec('', 'refs/heads/x', False)
    for bad in ('refs/heads/x', 'a:', '+'):
        with pytest.raises(Abort):
            push_module.parse_push(bad)


def test_fast_forward():
    w = world()
    assert run(w, 'C:' + TIP) == {TIP: None}
    assert w.helper.log == [('changegroup', ['C']), 'finish']
    assert w.peer.sent == [(b'HG20', [hid('A')])]
    assert w.helper.metadata[gid('C')] == hid('C')


def test_dry_run_sends_and_keeps_nothing():
    w = world()
    assert run(w, 'C:' + TIP, dry_run=True) == {TIP: None}
    assert w.helper.log == [('changegroup', ['C']), 'abort']
    assert w.peer.sent == []


def test_new_head_is_refused_unless_forced():
    w = world()
    result = run(w, 'E:' + TIP)
    assert 'new head on branch default' in result[TIP]
    assert 'git push -f' in result[TIP]
    assert w.helper.log == [('changegroup', ['D', 'E']), 'abort']
    assert w.peer.sent == []
    w = world()
    assert run(w, '+E:' + TIP) == {TIP: None}
    assert w.helper.log == [('changegroup', ['D', 'E']), 'finish']
    w = world()
    assert run(w, 'E:' + TIP, force=True) == {TIP: None}


def test_replacing_one_of_two_heads_is_fine():
    w = world(branchmap=[('default', [hid('A'), hid('R')])])
    w.peer.server.add(hid('R'))
    assert run(w, 'E:' + TIP) == {TIP: None}


def test_unknown_server_head_means_fetch_first():
    w = world(branchmap=[('default', [hid('A'), hid('X')])])
    result = run(w, 'C:' + TIP)
    assert 'fetch first' in result[TIP]
    assert w.peer.sent == []


def test_new_root_is_refused_unless_forced():
    w = world()
    result = run(w, 'S:refs/heads/bookmarks/s')
    assert 'new root' in result['refs/heads/bookmarks/s']
    assert w.helper.log == []
    w = world()
    assert run(w, '+S:refs/heads/bookmarks/s') == {
        'refs/heads/bookmarks/s': None}


def test_empty_server_takes_anything():
    w = world(branchmap=[])
    w.peer.server = set()
    assert run(w, 'E:' + TIP) == {TIP: None}
    assert w.helper.log == [('changegroup', ['R', 'D', 'E']), 'finish']
    assert w.peer.sent == [(b'HG20', [])]


def test_only_the_ref_adding_a_head_is_refused():
    w = world()
    result = run(w, 'C:' + TIP, 'E:refs/heads/branches/default/' + hid('A'))
    assert result[TIP] is None
    assert 'new head' in result['refs/heads/branches/default/' + hid('A')]
    assert w.helper.log == [('changegroup', ['C', 'D', 'E']), 'abort',
                            ('changegroup', ['C']), 'finish']


def test_commit_on_another_branch_is_refused():
    w = world()
    ref = 'refs/heads/branches/stable/tip'
    result = run(w, 'C:' + ref)
    assert 'on branch default, not stable' in result[ref]
    assert TIP in result[ref]
    assert w.peer.sent == []


def test_refused_ref_is_left_out_and_the_others_go():
    w = world()
    other = 'refs/heads/branches/stable/tip'
    result = run(w, 'C:' + TIP, 'S:' + other)
    assert result[TIP] is None
    assert 'new root' in result[other]
    w = world()
    result = run(w, 'C:' + TIP, 'E:refs/heads/branches/nope/tip')
    assert result[TIP] is None
    assert 'not nope' in result['refs/heads/branches/nope/tip']
    assert w.helper.log == [('changegroup', ['C', 'D', 'E']), 'abort',
                            ('changegroup', ['C']), 'finish']


def test_new_branch_needs_force():
    """A new named branch is refused unless forced, as `hg push` wants
    --new-branch, even pushed to the ref that names it."""
    w = world()
    result = run(w, 'T:refs/heads/bookmarks/t')
    assert 'new branch stable' in result['refs/heads/bookmarks/t']
    w = world()
    ref = 'refs/heads/branches/stable/tip'
    assert 'new branch stable' in run(w, 'T:' + ref)[ref]
    assert w.peer.sent == []
    w = world()
    assert run(w, 'T:' + ref, force=True) == {ref: None}
    assert w.helper.log == [('changegroup', ['T']), 'finish']


def test_new_bookmark():
    w = world()
    ref = 'refs/heads/bookmarks/feature'
    assert run(w, 'E:' + ref) == {ref: None}
    # A head carrying a bookmark we push is no new head to complain about.
    assert w.peer.sent
    assert w.peer.pushkeys == [('bookmarks', 'feature', '', hid('E'))]


def test_bookmark_on_a_changeset_the_server_has():
    w = world(bookmarks={'feature': hid('R')})
    ref = 'refs/heads/bookmarks/feature'
    assert run(w, 'A:' + ref) == {ref: None}
    assert w.peer.sent == [] and w.helper.log == []
    assert w.peer.pushkeys == [('bookmarks', 'feature', hid('R'), hid('A'))]


def test_bookmark_move_must_fast_forward():
    ref = 'refs/heads/bookmarks/feature'
    w = world(bookmarks={'feature': hid('A')})
    result = run(w, 'E:' + ref)
    assert 'not a fast-forward' in result[ref]
    assert w.peer.pushkeys == [] and w.peer.sent == []
    w = world(bookmarks={'feature': hid('X')})
    assert 'fetch first' in run(w, 'E:' + ref)[ref]
    w = world(bookmarks={'feature': hid('A')})
    assert run(w, '+E:' + ref) == {ref: None}
    assert w.peer.pushkeys == [('bookmarks', 'feature', hid('A'), hid('E'))]


def test_bookmark_refused_by_server():
    w = world()
    w.peer.pushkey_answer = (False, b'')
    ref = 'refs/heads/bookmarks/feature'
    assert 'refused to set bookmark feature' in run(w, 'A:' + ref)[ref]


def test_server_refusal():
    w = world(result=UnbundleResult(False, 'hook failed', 'ask', b'', False))
    result = run(w, 'C:' + TIP)
    assert result[TIP] == 'the server refused the push: hook failed (ask)'
    assert w.helper.log == [('changegroup', ['C']), 'abort']


def test_server_refusal_without_a_reason():
    w = world(result=UnbundleResult(False, None, None, b'hook\n', False))
    assert run(w, 'C:' + TIP)[TIP] == 'the server refused the push'


def test_race():
    w = world(result=UnbundleResult(False, 'x', None, b'', True))
    assert run(w, 'C:' + TIP)[TIP] == push_module.RACED


def test_deletion_and_unknown_refs():
    # A ref outside the layout (refs/heads/master) is not refused before
    # sending: its commits go with the push
    # (tests/compat/test_dropin_push_refs.py).
    w = world()
    other = 'refs/heads/branches/other/tip'
    result = run(w, ':' + TIP, 'nope:' + other)
    assert 'cannot delete' in result[TIP]
    assert 'not a commit' in result[other]
    assert w.helper.log == [] and w.peer.sent == []


def test_branch_ref_without_anything_to_push():
    w = world()
    assert run(w, 'A:' + TIP) == {TIP: None}
    result = run(w, 'R:' + TIP)
    assert 'not a head of branch default' in result[TIP]
    assert w.peer.sent == []


def test_helper_failure_refuses_the_refs():
    w = world()

    def fail(*args):
        raise Abort('cannot represent commit')
    w.helper.changegroup = fail
    assert run(w, 'C:' + TIP) == {TIP: 'cannot represent commit'}
    assert w.helper.log == ['abort']


def test_helper_that_died_keeps_nothing():
    w = world()

    def fail(*args):
        raise HelperError('git-cinnabar-helper exited with status 128')
    w.helper.changegroup = w.helper.abort = fail
    assert 'status 128' in run(w, 'C:' + TIP)[TIP]
    assert w.peer.sent == []


def test_server_without_unbundle():
    w = world()
    w.peer.capable = lambda name: None
    with pytest.raises(Abort) as error:
        run(w, 'C:' + TIP)
    assert 'does not take pushes' in error.value.message


def test_unrelated_history_is_refused_even_forced(monkeypatch):
    """Pushing history none of which comes from a server that is not
    empty, from a repository whose metadata is of another (or no)
    repository: refused, -f or not (git-cinnabar refuses too)."""
    monkeypatch.setattr(push_module.git, 'root_commits', lambda rev: [])
    for spec in ('S:', '+S:'):
        w = world()
        result = run(w, spec + 'refs/heads/bookmarks/s')
        assert 'without fetching' in result['refs/heads/bookmarks/s']
        assert w.helper.log == [] and w.peer.sent == []


def test_bookmark_deletion():
    w = world(bookmarks={'x': hid('A')})
    ref = 'refs/heads/bookmarks/x'
    assert run(w, ':' + ref) == {ref: None}
    assert w.peer.pushkeys == [('bookmarks', 'x', hid('A'), '')]
    assert w.helper.log == [] and w.peer.sent == []
    w = world()
    assert 'no bookmark x' in run(w, ':' + ref)[ref]
    assert w.peer.pushkeys == []
