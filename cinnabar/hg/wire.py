"""A Mercurial server, seen through wire protocol version 1.

`Peer` writes every command once; a `Transport` only moves bytes: the
stdio one (`stdio.StdioTransport`, for ssh and local repositories) and the
HTTP one (`httptransport.HttpTransport`). The formats are described in
`cinnabar.hg.wireformat`.
"""


from cinnabar.errors import Abort
from cinnabar.hg import wireformat
from cinnabar.ids import HgId
from cinnabar.record import record

# How many nodes one `known` command asks about.
KNOWN_CHUNK = 200

RemoteState = record('RemoteState',
                     'branchmap heads bookmarks topics',
                     defaults=((),))
RemoteState.__doc__ = """What a server has: `branchmap` is [(branch,
[HgId...]), ...] in the server's order, `heads` the topological heads,
`bookmarks` {name: HgId} and `topics` [((branch, topic), [HgId...]), ...]
the heads of the draft topics of a server with hg-evolve's topic
extension (see `wireformat.split_topics`)."""


class Transport:
    """How bytes go to a server and come back. Subclasses implement:

    `capabilities()`: the server's capabilities string (bytes).
    `call(command, args)`: run a command answering a string; `args` maps
    argument names to str or bytes values; returns the answer (bytes).
    `import_stream(command, args, kind, helper)`: run a command answering
    a stream (getbundle) and have the helper import the answer as `kind`
    (`bundle` or `cg01`, see helper.import_stream); returns ImportCounts.
    `read_stream(command, args, consume)`: run a command answering a
    stream and return `consume(read)`, where `read(size)` reads the
    answer (decompressed; fewer bytes only at its end). Over stdio, no
    command can follow on the connection.
    `save_stream(command, args, out)`: the same, but write the answer (as
    helper.import_stream would read it) to the binary file `out`.
    `unbundle(args, path, bundle2)`: run `unbundle` sending the bundle
    file at `path`; returns the parts of the server's bundle2 reply
    (`bundle2.Part`s) when `bundle2` is set, else (integer, output) as
    bytes (for a refusal, (b'0', message)).
    `close()`: end the connection.
    """

    description = None

    def capabilities(self):
        raise NotImplementedError

    def call(self, command, args):
        raise NotImplementedError

    def import_stream(self, command, args, kind, helper):
        raise NotImplementedError

    def read_stream(self, command, args, consume):
        raise NotImplementedError

    def save_stream(self, command, args, out):
        raise NotImplementedError

    def unbundle(self, args, path, bundle2):
        raise NotImplementedError

    def close(self):
        pass


class Peer:
    """The commands of a Mercurial server, on top of a Transport."""

    def __init__(self, transport):
        self.transport = transport
        self.capabilities = wireformat.parse_capabilities(
            transport.capabilities())

    @property
    def description(self):
        return self.transport.description

    def capable(self, name):
        """The capability's value (b'' when bare), or None when absent."""
        return self.capabilities.get(name)

    def require(self, name):
        if self.capable(name) is None:
            raise Abort('the Mercurial server at %s lacks the "%s" capability'
                        % (self.transport.description, name),
                        hint='the server may be too old (Mercurial 1.9 or '
                             'newer is needed)')

    def close(self):
        self.transport.close()

    def _call(self, command, **args):
        return self.transport.call(command, args)

    def batch(self, calls):
        """Run [(command, {args}), ...]; one round trip when the server can
        batch. Returns the answers (bytes) in order."""
        if self.capable('batch') is None or len(calls) < 2:
            return [self.transport.call(c, a) for c, a in calls]
        answer = self._call('batch', cmds=wireformat.encode_batch(calls))
        return wireformat.decode_batch(answer, len(calls))

    def state(self):
        """The server's branchmap, heads and bookmarks, as one RemoteState."""
        self.require('getbundle')
        self.require('branchmap')
        self._check_manifests()
        bookmarks_call = ('listkeys', {'namespace': 'bookmarks'})
        has_bookmarks = self.capable('pushkey') is not None
        if self.capable('batch') is not None:
            calls = [(self._branchmap_command(), {}),
                     (self._heads_command(), {})]
            calls += [bookmarks_call] if has_bookmarks else []
            answers = self.batch(calls)
            bookmarks = answers[2] if has_bookmarks else b''
            return self._state(wireformat.decode_branchmap(answers[0]),
                               wireformat.decode_nodes(answers[1]),
                               wireformat.decode_bookmarks(bookmarks))
        # Without batch, read bookmarks first (so that they don't point to
        # changesets newer than the heads), then branchmap and heads until
        # both agree, in case the repository changed in between.
        bookmarks = self.bookmarks() if has_bookmarks else {}
        for _ in range(5):
            branchmap = wireformat.decode_branchmap(
                self._call(self._branchmap_command()))
            heads = self.heads()
            branch_heads = {h for _, hs in branchmap for h in hs}
            if set(heads) <= branch_heads:
                break
        return self._state(branchmap, heads, bookmarks)

    def _check_manifests(self):
        """Refuse a repository whose manifests we cannot read, before
        anything is fetched or pushed (see wireformat.manifests_problem)."""
        problem = wireformat.manifests_problem(self.capabilities)
        if problem:
            raise Abort('the Mercurial repository at %s %s, which '
                        'git-cinnabar does not support'
                        % (self.transport.description, problem),
                        hint='git-cinnabar reads flat manifests only (as '
                             'git-cinnabar 0.7.5); use hg for this one')

    def _branchmap_command(self):
        """`branchmaptns` on a server whose topic extension has topic
        namespaces (its `topics-namespaces` capability), else
        `branchmap`."""
        if self.capable('topics-namespaces') is not None:
            return 'branchmaptns'
        return 'branchmap'

    def _heads_command(self):
        """`_exttopics_heads` on a server whose topic extension hides the
        changesets of topics from `heads` (its
        `experimental.topic.server-gate-topic-changesets`, as on Heptapod;
        `unbundle`'s check of the heads sees them), else `heads`."""
        if self.capable('_exttopics_heads') is not None:
            return '_exttopics_heads'
        return 'heads'

    def _state(self, branchmap, heads, bookmarks):
        if self.capable('topics-namespaces') is not None:
            branchmap, topics = wireformat.split_topics(branchmap, 'fqbn')
        elif self.capable('topics') is not None:
            branchmap, topics = wireformat.split_topics(branchmap, 'colon')
        else:
            topics = []
        return RemoteState(branchmap, heads, bookmarks, topics)

    def heads(self):
        return wireformat.decode_nodes(self._call(self._heads_command()))

    def branchmap(self):
        return wireformat.decode_branchmap(self._call('branchmap'))

    def listkeys(self, namespace):
        return wireformat.decode_listkeys(
            self._call('listkeys', namespace=namespace))

    def bookmarks(self):
        return wireformat.decode_bookmarks(
            self._call('listkeys', namespace='bookmarks'))

    def phases(self):
        return self.listkeys('phases')

    def lookup(self, key):
        self.require('lookup')
        return wireformat.decode_lookup(self._call('lookup', key=key), key)

    def known(self, nodes):
        """For each HgId, whether the server has it. Asked KNOWN_CHUNK
        nodes at a time: over HTTP the arguments travel in headers, and
        servers limit how many a request may have."""
        nodes = [HgId(n) for n in nodes]
        if self.capable('known') is None:
            return [False] * len(nodes)
        result = []
        for start in range(0, len(nodes), KNOWN_CHUNK):
            chunk = nodes[start:start + KNOWN_CHUNK]
            answer = self._call('known',
                                nodes=wireformat.encode_nodes(chunk))
            result.extend(wireformat.decode_known(answer, len(chunk)))
        return result

    def getbundle(self, helper, heads, common):
        """Have the helper import what `heads` have that `common` lack."""
        self.require('getbundle')
        args = {'heads': wireformat.encode_nodes(heads),
                'common': wireformat.encode_nodes(common)}
        kind = 'cg01'
        if self.capable('bundle2') is not None:
            args['bundlecaps'] = wireformat.getbundle_bundlecaps()
            kind = 'bundle'
        return self.transport.import_stream('getbundle', args, kind, helper)

    def save_bundle(self, heads, common, out):
        """Write what `heads` have that `common` lack, as the server sends
        it, to the binary file `out` without importing it: a bundle2, or
        for a server without bundle2 its bare changegroup after a bundle1
        `HG10UN` header (so that `hg unbundle` reads either)."""
        self.require('getbundle')
        args = {'heads': wireformat.encode_nodes(heads),
                'common': wireformat.encode_nodes(common)}
        if self.capable('bundle2') is not None:
            args['bundlecaps'] = wireformat.getbundle_bundlecaps()
        else:
            out.write(b'HG10UN')
        self.transport.save_stream('getbundle', args, out)

    # Clone seeds (cinnabar.clonebundles, cinnabar.cinnabarclone,
    # cinnabar.streamclone).

    def stream_clone(self, spool):
        """Receive a stream v2 (or v3-exp) clone (see
        cinnabar.hg.streamreader) into `spool`; returns the bundle2 part's
        type."""
        from cinnabar.hg import streamreader
        return self.transport.read_stream(
            'getbundle', streamreader.stream_clone_args(),
            lambda read: streamreader.receive_bundle(read, spool))

    def stream_out(self, spool):
        """Receive a legacy stream (v1) clone into `spool`."""
        from cinnabar.hg import streamreader
        return self.transport.read_stream(
            'stream_out', {},
            lambda read: streamreader.receive_stream_out(read, spool))

    def clonebundles_manifest(self):
        """The server's clone bundles manifest (bytes): the
        `clonebundles_manifest` command when the server has it (Mercurial
        6.6 and newer), else `clonebundles`."""
        if self.capable('clonebundles_manifest') is not None:
            return self._call('clonebundles_manifest')
        return self._call('clonebundles')

    def cinnabarclone_manifest(self):
        """The answer (bytes) of the `cinnabarclone` command of our
        server extension (hg/cinnabarclone.py)."""
        return self._call('cinnabarclone')

    # Pushing.

    def push_format(self):
        """How this server takes pushes (a pushwire.PushFormat)."""
        from cinnabar.hg import pushwire
        return pushwire.push_format(self.capabilities,
                                    self.transport.description)

    def unbundle(self, path, push_format, server_heads):
        """Send the bundle file at `path`, written in `push_format` on the
        basis of `server_heads`; returns a pushwire.UnbundleResult."""
        from cinnabar.hg import pushwire
        heads = pushwire.heads_argument(
            push_format, server_heads,
            hashed=self.capable('unbundlehash') is not None)
        answer = self.transport.unbundle({'heads': heads}, path,
                                         push_format.bundle2)
        if push_format.bundle2:
            return pushwire.bundle2_result(answer)
        return pushwire.bundle1_result(*answer)

    def pushkey(self, namespace, key, old, new):
        """Set a pushkey value; returns (success, server output)."""
        from cinnabar.hg import pushwire
        self.require('pushkey')
        return pushwire.decode_pushkey(self._call(
            'pushkey', namespace=namespace, key=key, old=old, new=new))
