"""Choosing heads and common nodes for getbundle."""

from cinnabar import discovery
from cinnabar.helper import Head
from cinnabar.hg.wire import RemoteState
from cinnabar.ids import GitId, HgId, NULL_GIT

A, B, C, D, E = (HgId(c * 40) for c in 'abcde')
KNOWN = GitId('f' * 40)


class FakeHelper:
    def __init__(self, known, heads):
        self._known = known
        self._heads = heads

    def hg2git_many(self, hg_ids):
        return [KNOWN if h in self._known else NULL_GIT for h in hg_ids]

    def heads(self):
        return self._heads


class FakePeer:
    def __init__(self, has):
        self.has = has
        self.asked = []

    def known(self, nodes):
        self.asked.append(list(nodes))
        return [n in self.has for n in nodes]


def test_nothing_missing():
    helper = FakeHelper({A, B}, [])
    state = RemoteState([('default', [A, B])], [B], {})
    assert discovery.plan_fetch(FakePeer(set()), helper, state, [A, B]) \
        is None


def test_heads_to_ask():
    assert discovery.heads_to_ask([A, B, C], [B, C]) == [B, C]
    assert discovery.heads_to_ask([A], [B, C]) == [A]
    assert discovery.heads_to_ask([A], []) == [A]


def test_plan():
    ours = [Head(A, KNOWN, 'default'), Head(B, KNOWN, 'stable'),
            Head(C, KNOWN, 'elsewhere'), Head(A, KNOWN, 'default')]
    helper = FakeHelper({A, B, C}, ours)
    peer = FakePeer({A})
    state = RemoteState([('default', [D]), ('stable', [B, E])], [D, E], {})
    plan = discovery.plan_fetch(peer, helper, state, [D, D, B])
    assert plan.heads == [D]
    # Only our heads of the server's branches are asked about, once each.
    assert peer.asked == [[A, B]]
    assert plan.common == [A]


def test_plan_uses_topological_heads_when_they_cover_the_wanted():
    helper = FakeHelper(set(), [])
    state = RemoteState([('default', [D]), ('stable', [E])], [E], {})
    plan = discovery.plan_fetch(FakePeer(set()), helper, state, [D, E])
    assert plan.heads == [E]
    assert plan.common == []
