"""The wire commands of Peer, over a fake transport."""

from urllib.parse import unquote

import pytest

from cinnabar.errors import Abort
from cinnabar.hg import wire
from cinnabar.hg.bundle2 import Part
from cinnabar.hg.bundlefile import branchmap_from_heads
from cinnabar.hg.pushwire import PushFormat
from cinnabar.helper import Head

A, B = 'a' * 40, 'b' * 40


class FakeTransport(wire.Transport):
    description = 'fake'

    def __init__(self, caps, answers):
        self.caps = caps
        self.answers = answers
        self.calls = []

    def capabilities(self):
        return self.caps

    def call(self, command, args):
        self.calls.append((command, args))
        answer = self.answers[command]
        return answer.pop(0) if isinstance(answer, list) else answer

    def import_stream(self, command, args, kind, helper):
        self.calls.append((command, args, kind))
        return 'counts'


BRANCHMAP = ('default %s\nstable %s' % (A, B)).encode()
HEADS = ('%s %s\n' % (A, B)).encode()
BOOKMARKS = ('book\t%s' % A).encode()


def test_state_in_one_batch():
    batch = b';'.join([BRANCHMAP, HEADS, BOOKMARKS])
    transport = FakeTransport(b'batch branchmap getbundle pushkey',
                              {'batch': batch})
    state = wire.Peer(transport).state()
    assert state.branchmap == [('default', [A]), ('stable', [B])]
    assert state.heads == [A, B]
    assert state.bookmarks == {'book': A}
    assert transport.calls == [('batch', {
        'cmds': 'branchmap ;heads ;listkeys namespace=bookmarks'})]


def test_state_without_batch_or_pushkey():
    transport = FakeTransport(b'branchmap getbundle',
                              {'branchmap': BRANCHMAP, 'heads': HEADS})
    state = wire.Peer(transport).state()
    assert state.bookmarks == {}
    assert [c[0] for c in transport.calls] == ['branchmap', 'heads']


def test_state_without_batch_retries_until_coherent():
    newer = ('%s %s\n' % (A, 'c' * 40)).encode()
    transport = FakeTransport(
        b'branchmap getbundle pushkey',
        {'listkeys': BOOKMARKS, 'branchmap': [BRANCHMAP, BRANCHMAP],
         'heads': [newer, HEADS]})
    state = wire.Peer(transport).state()
    assert state.heads == [A, B]
    assert [c[0] for c in transport.calls] == [
        'listkeys', 'branchmap', 'heads', 'branchmap', 'heads']


def test_required_capabilities():
    with pytest.raises(Abort) as error:
        wire.Peer(FakeTransport(b'branchmap', {})).state()
    assert 'getbundle' in error.value.message


def test_known_chunks_and_fallback(monkeypatch):
    monkeypatch.setattr(wire, 'KNOWN_CHUNK', 2)
    transport = FakeTransport(b'known', {'known': [b'10', b'1']})
    assert wire.Peer(transport).known([A, B, A]) == [True, False, True]
    assert [c[1]['nodes'] for c in transport.calls] == [A + ' ' + B, A]
    assert wire.Peer(FakeTransport(b'', {})).known([A]) == [False]


def test_getbundle_arguments():
    transport = FakeTransport(b'getbundle bundle2=HG20', {})
    assert wire.Peer(transport).getbundle(None, [A], [B]) == 'counts'
    command, args, kind = transport.calls[0]
    assert (command, kind) == ('getbundle', 'bundle')
    assert args['heads'] == A and args['common'] == B
    assert unquote(args['bundlecaps']) == \
        'HG20,bundle2=HG20\nchangegroup=01,02'
    transport = FakeTransport(b'getbundle', {})
    wire.Peer(transport).getbundle(None, [A], [])
    command, args, kind = transport.calls[0]
    assert kind == 'cg01' and 'bundlecaps' not in args


def test_lookup():
    transport = FakeTransport(b'lookup', {'lookup': ('1 %s\n' % A).encode()})
    assert wire.Peer(transport).lookup('tip') == A


def test_bundle_branchmap():
    heads = [Head(A, None, 'default'), Head(B, None, 'stable'),
             Head('c' * 40, None, 'default')]
    assert branchmap_from_heads(heads) == [('default', [A, 'c' * 40]),
                                           ('stable', [B])]


class PushTransport(FakeTransport):
    def unbundle(self, args, path, bundle2):
        self.calls.append(('unbundle', args, path, bundle2))
        return self.answers['unbundle']


def test_unbundle_bundle2():
    reply = [Part('reply:changegroup', {'return': '1'}, False, b''),
             Part('output', {}, False, b'added\n')]
    transport = PushTransport(
        b'unbundle=HG10UN bundle2=HG20%0Achangegroup%3D01%2C02',
        {'unbundle': reply})
    peer = wire.Peer(transport)
    push_format = peer.push_format()
    assert push_format == PushFormat(True, '02')
    result = peer.unbundle('/b', push_format, [A])
    assert result.ok and result.output == b'added\n'
    assert transport.calls == [
        ('unbundle', {'heads': b'force'.hex()}, '/b', True)]


def test_unbundle_bundle1_with_hashed_heads():
    transport = PushTransport(b'unbundle unbundlehash',
                              {'unbundle': (b'0', b'abort: no\n')})
    peer = wire.Peer(transport)
    result = peer.unbundle('/b', peer.push_format(), [A, B])
    assert (result.ok, result.message) == (False, 'abort: no')
    heads = transport.calls[0][1]['heads']
    assert heads.startswith(b'hashed'.hex() + ' ')


def test_pushkey():
    transport = FakeTransport(b'pushkey', {'pushkey': b'1\nout\n'})
    peer = wire.Peer(transport)
    assert peer.pushkey('bookmarks', 'b', '', A) == (True, b'out\n')
    assert transport.calls == [('pushkey', {
        'namespace': 'bookmarks', 'key': 'b', 'old': '', 'new': A})]
    with pytest.raises(Abort):
        wire.Peer(FakeTransport(b'', {})).pushkey('bookmarks', 'b', '', A)
