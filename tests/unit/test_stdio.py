"""The stdio framing of wire protocol v1, against a fake `hg serve --stdio`."""

import sys
import textwrap

import pytest

from cinnabar.errors import Abort
from cinnabar.hg.stdio import StdioTransport, encode_command
from cinnabar.hg.wire import Peer

A = 'a' * 40
B = 'b' * 40

# A server that prints a banner, then answers like Mercurial: `hello`,
# `between`, `heads`, `known` (checking the `*` framing), `batch`, an
# error for `lookup`, and raw bytes until end of input for `getbundle`.
FAKE_SERVER = textwrap.dedent('''
    import sys
    inp, out = sys.stdin.buffer, sys.stdout.buffer

    def arg():
        name, size = inp.readline().split()
        return name, inp.read(int(size))

    def answer(data):
        out.write(b'%d\\n' % len(data) + data)
        out.flush()

    out.write(b'Welcome to the server\\n42 is not a length here\\n')
    while True:
        command = inp.readline()[:-1]
        if not command:
            break
        if command == b'hello':
            answer(b'capabilities: batch known getbundle branchmap\\n')
        elif command == b'between':
            assert arg()[0] == b'pairs'
            answer(b'\\n')
        elif command == b'heads':
            answer(b'%s %s\\n' % (b'a' * 40, b'b' * 40))
        elif command == b'known':
            name, nodes = arg()
            star, count = inp.readline().split()
            assert (name, star, count) == (b'nodes', b'*', b'0')
            answer(b''.join(b'1' if n.startswith(b'a') else b'0'
                            for n in nodes.split()))
        elif command == b'batch':
            name, cmds = arg()
            assert inp.readline() == b'* 0\\n'
            answer(b';'.join(b'r:e' + c.split(b' ')[0]
                             for c in cmds.split(b';')))
        elif command == b'lookup':
            arg()
            sys.stderr.write('abort: no such thing\\n-\\n')
            sys.stderr.flush()
            out.write(b'\\n')
            out.flush()
        elif command == b'getbundle':
            star, count = inp.readline().split()
            args = dict(arg() for _ in range(int(count)))
            rest = inp.read()
            out.write(b'HG20' + args[b'heads'] + b'|' + args[b'common'])
            out.write(b'|after-eof' if rest == b'' else b'|early')
            out.flush()
            break
''')


class FakeHelper:
    def __init__(self):
        self.imported = []

    def import_stream(self, kind, source):
        self.imported.append((kind, source.read()))
        return (1, 2, 3)


@pytest.fixture
def peer():
    transport = StdioTransport([sys.executable, '-c', FAKE_SERVER], 'fake')
    yield Peer(transport)
    transport.close()


def test_encode_command():
    assert encode_command('heads', {}) == b'heads\n'
    assert encode_command('listkeys', {'namespace': 'bookmarks'}) == \
        b'listkeys\nnamespace 9\nbookmarks'
    assert encode_command('known', {'nodes': 'ab'}) == \
        b'known\nnodes 2\nab* 0\n'
    assert encode_command('getbundle', {'heads': 'h', 'common': ''}) == \
        b'getbundle\n* 2\ncommon 0\nheads 1\nh'
    with pytest.raises(ValueError):
        encode_command('heads', {'bogus': 'x'})
    with pytest.raises(ValueError):
        encode_command('frobnicate', {})


def test_handshake_skips_banner(peer):
    assert set(peer.capabilities) == {'batch', 'known', 'getbundle',
                                      'branchmap'}


def test_commands(peer):
    assert peer.heads() == [A, B]
    assert peer.known([A, B, A]) == [True, False, True]
    assert peer.batch([('heads', {}), ('branchmap', {})]) == \
        [b'r=heads', b'r=branchmap']


def test_server_error(peer, capfd):
    with pytest.raises(Abort):
        peer.transport.call('lookup', {'key': 'x'})
    # The connection is still usable after an error answer.
    assert peer.heads() == [A, B]


def test_getbundle_streams_until_eof(peer):
    helper = FakeHelper()
    assert peer.getbundle(helper, [A], [B]) == (1, 2, 3)
    kind, data = helper.imported[0]
    assert kind == 'cg01'
    assert data == b'HG20' + A.encode() + b'|' + B.encode() + b'|after-eof'


def test_server_that_dies():
    with pytest.raises(Abort) as error:
        StdioTransport([sys.executable, '-c', 'import sys; sys.exit(3)'],
                       'dead')
    assert 'exit status 3' in error.value.message


def test_missing_program():
    with pytest.raises(Abort) as error:
        StdioTransport(['/nonexistent/hg'], 'x', missing_hint='install it')
    assert error.value.hint == 'install it'


# A server taking pushes: `unbundle` answers the empty go-ahead (or a
# refusal when the heads are `refuse`), reads the chunks, then answers a
# bundle2 when the heads are hex('force'), else the bundle1 answer;
# `pushkey` answers 1. The bundle2 reply echoes the size of the bundle.
PUSH_SERVER = textwrap.dedent('''
    import struct, sys
    inp, out = sys.stdin.buffer, sys.stdout.buffer

    def arg():
        name, size = inp.readline().split()
        return name, inp.read(int(size))

    def answer(data):
        out.write(b'%d\\n' % len(data) + data)
        out.flush()

    def part(name, params, payload):
        header = (bytes([len(name)]) + name + struct.pack('>I', 0)
                  + bytes([len(params), 0])
                  + b''.join(bytes([len(k), len(v)]) for k, v in params)
                  + b''.join(k + v for k, v in params))
        chunk = struct.pack('>i', len(payload)) + payload if payload else b''
        return (struct.pack('>I', len(header)) + header + chunk
                + struct.pack('>i', 0))

    while True:
        command = inp.readline()[:-1]
        if not command:
            break
        if command == b'hello':
            answer(b'capabilities: unbundle pushkey\\n')
        elif command == b'between':
            arg()
            answer(b'\\n')
        elif command == b'unbundle':
            heads = arg()[1]
            if heads == b'refuse':
                answer(b'unsynced changes')
                continue
            answer(b'')
            data = b''
            while True:
                size = int(inp.readline())
                if not size:
                    break
                data += inp.read(size)
            if heads == b'force'.hex().encode():
                out.write(b'HG20' + struct.pack('>I', 0)
                          + part(b'reply:changegroup', [(b'return', b'1')],
                                 b'')
                          + part(b'output', [], b'%d bytes' % len(data))
                          + struct.pack('>I', 0))
                out.flush()
            elif heads == b'fail':
                answer(b'hook failed')
            else:
                answer(b'')
                answer(b'1')
        elif command == b'pushkey':
            args = dict(arg() for _ in range(4))
            answer(b'1\\n' if args[b'new'] else b'0\\n')
''')


@pytest.fixture
def push_transport():
    transport = StdioTransport([sys.executable, '-c', PUSH_SERVER], 'fake')
    yield transport
    transport.close()


def test_unbundle_bundle2(push_transport, tmp_path):
    bundle = tmp_path / 'bundle'
    bundle.write_bytes(b'x' * 100000)
    parts = push_transport.unbundle({'heads': b'force'.hex()}, bundle, True)
    assert [(p.type, p.params, p.data) for p in parts] == [
        ('reply:changegroup', {'return': '1'}, b''),
        ('output', {}, b'100000 bytes')]
    # The connection goes on after the reply.
    assert push_transport.call('pushkey', {
        'namespace': 'bookmarks', 'key': 'k', 'old': '', 'new': A}) == b'1\n'


def test_unbundle_bundle1(push_transport, tmp_path):
    bundle = tmp_path / 'bundle'
    bundle.write_bytes(b'HG10UN')
    assert push_transport.unbundle({'heads': A}, bundle, False) == \
        (b'1', b'')
    assert push_transport.unbundle({'heads': 'fail'}, bundle, False) == \
        (b'0', b'hook failed')
    assert push_transport.unbundle({'heads': 'refuse'}, bundle, False) == \
        (b'0', b'unsynced changes')
    assert push_transport.call('pushkey', {
        'namespace': 'bookmarks', 'key': 'k', 'old': '', 'new': ''}) == b'0\n'
