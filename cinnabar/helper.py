"""The one client of git-cinnabar-helper, the C program that owns the
metadata and writes git objects.

The helper speaks the line protocol of helper/PROTOCOL.md (version
`PROTOCOL`, the one source of that number: helper/main.c's
PROTOCOL_VERSION and PROTOCOL.md repeat it, as
tests/unit/test_protocol_version.py checks) on its standard input and
output. Every byte we send goes through `Helper._send` and every byte we
read through `Helper._receive`, both traced when GIT_CINNABAR_TRACE is
set (see `cinnabar.trace`).

Where the helper is found, first found wins: the GIT_CINNABAR_HELPER
environment variable; `git-cinnabar-helper` next to the launcher that runs
us (after resolving symlinks), at the top of this source tree or in its
build/ directory; the PATH.
"""

import os
import sys

from cinnabar import git, process
from cinnabar.errors import Abort
from cinnabar.ids import GitId, HgId
from cinnabar.record import record
from cinnabar.trace import Tracer

PROTOCOL = 12
HELPER_NAME = 'git-cinnabar-helper'
REBUILD_HINT = ('run `git cinnabar download` for a prebuilt one, or build '
                'it with `make` at the top of the git-cinnabar source tree')
# The request lines of `http` that name a file for the helper: their
# values are paths, framed as command words.
PATH_HEADERS = ('X-Cinnabar-Body-File', 'X-Cinnabar-Output-File')
# The size of the blocks we send, and how many one-line requests we
# write before reading their answers.
BLOCK_SIZE = 65536
PIPELINE_DEPTH = 256

ImportCounts = record('ImportCounts',
                      'changesets manifests files')
Head = record('Head', 'hg_id git_id branch')
FsckCounts = record('FsckCounts',
                    'changesets manifests files problems')
HgData = record('HgData', 'status detail text')
HgData.__doc__ = """The answer to `data`: `status` is `ok` (`detail` is
then the full HgId, `text` the raw revision), `unknown`, `ambiguous`
(`detail`: how many revisions match) or `other` (`detail`: the kind of
revision the id names instead)."""


class HelperError(Abort):
    """The helper answered `error ...` or went away."""


def needed(git_dir, scheme):
    """Whether a remote session for a URL of `scheme` needs the helper:
    in a git repository (`git_dir`), for the metadata; for HTTP(S)
    anywhere, for its libcurl."""
    return bool(git_dir) or scheme in ('http', 'https')


def _candidate_dirs():
    launcher = os.path.realpath(sys.argv[0]) if sys.argv[0] else None
    if launcher:
        yield os.path.dirname(launcher)
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    yield top
    yield os.path.join(top, 'build')


def find_helper():
    """The path of the helper executable, or None."""
    named = os.environ.get('GIT_CINNABAR_HELPER')
    if named:
        return named
    for directory in _candidate_dirs():
        path = os.path.join(directory, HELPER_NAME)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    import shutil  # the last resort: not loaded when found beside us
    return shutil.which(HELPER_NAME)


def _parse_counts(answer):
    fields = answer.split()
    if len(fields) != 4 or fields[0] != 'ok':
        raise HelperError('unexpected answer from %s: %r'
                          % (HELPER_NAME, answer))
    return ImportCounts(*(int(f) for f in fields[1:]))


def _parse_git_id(text):
    return None if text == '?' else GitId(text)


# The bytes a command word may hold as they are: printable ASCII but the
# quote and the backslash. Quoted, every other byte but those and the space
# is an octal escape (three digits, as git's unquote_c_style reads them).
_PLAIN = bytes(range(0x21, 0x7f)).replace(b'"', b'').replace(b'\\', b'')
_QUOTED = [bytes([b]) if b in _PLAIN or b == 0x20 else b'\\%03o' % b
           for b in range(256)]
_QUOTED[ord('"')] = b'\\"'
_QUOTED[ord('\\')] = b'\\\\'


def command_word(word):
    """`word` (str, surrogate escapes standing for bytes, or bytes) as a
    word of a command line (helper/PROTOCOL.md, Framing): as it is when it
    is only plain bytes, else C-quoted, so that spaces, line ends, quotes,
    backslashes and any other byte travel unambiguously. A NUL byte cannot
    (no path, URL or name holds one): ValueError."""
    if isinstance(word, str):
        word = word.encode('utf-8', 'surrogateescape')
    if word and not word.translate(None, _PLAIN):
        return word
    if b'\0' in word:
        raise ValueError('a helper command word cannot hold a NUL byte: %r'
                         % word)
    return b'"' + b''.join(_QUOTED[b] for b in word) + b'"'


def _branch_field(value):
    """The `changegroup` line field for a branch name or (branch, topic):
    `<branch>` or `<branch><TAB><topic>` (bytes)."""
    branch, topic = value if isinstance(value, tuple) else (value, None)
    if not branch or any(c in branch for c in '\t\n'):
        raise ValueError('invalid branch name %r' % branch)
    field = branch
    if topic is not None:
        if not topic or any(c in topic for c in '\t\n'):
            raise ValueError('invalid topic name %r' % topic)
        field += '\t' + topic
    return field.encode('utf-8', 'surrogateescape')


class BlockReader:
    """Reads a block stream the helper is sending, as a file-like object.

    The stream must be read to its end (`read()` or `drain()`) before the
    next command is sent; `Helper` drains a forgotten one itself.
    """

    def __init__(self, helper):
        self._helper = helper
        self._left = 0
        self.done = False

    def _next_block(self):
        size = int(self._helper._receive())
        if size == 0:
            self.done = True
        self._left = size

    def read(self, size=-1):
        """Read up to `size` bytes (all that is left when negative)."""
        chunks = []
        wanted = size
        while not self.done and wanted != 0:
            if not self._left:
                self._next_block()
                continue
            count = self._left if wanted < 0 else min(wanted, self._left)
            data = self._helper._receive(count)
            self._left -= count
            if wanted > 0:
                wanted -= count
            chunks.append(data)
        return b''.join(chunks)

    def drain(self):
        while not self.done:
            self.read(BLOCK_SIZE)


GraftStats = record('GraftStats',
                    'candidates grafted not_grafted replaced replace_map')
GraftStats.__doc__ = """Of the grafts since the helper started: the
candidates, the changesets recorded onto one, those that got a commit of
their own without one, and those whose commit of their own replaces one;
then the number of entries of the replace map (helper/replace-map.h)."""
HttpResponse = record('HttpResponse', 'status headers body')


class Helper:
    """A running helper. Use `Helper.start()`, as a context manager: leaving
    the `with` block on an exception drops unfinished work (`abort`)."""

    def __init__(self, process, version):
        self._process = process
        self._trace = Tracer('helper')
        self._stream = None
        self._capabilities = None
        self.version = version
        self.alive = True
        self._failure = None

    @classmethod
    def start(cls, git_dir, env=None):
        """Start the helper for the repository at `git_dir` (None outside a
        repository: then only `http` is of use), in the environment `env`
        (default: ours)."""
        return cls.spawn(git_dir, env).ready()

    @classmethod
    def spawn(cls, git_dir, env=None):
        """Start the helper as `start` does, without waiting for it: it
        loads (libraries, git's configuration, the metadata ref) while we
        do something else. Call `ready()` before the first command."""
        path = find_helper()
        if path is None:
            raise Abort('cannot find %s' % HELPER_NAME, hint=REBUILD_HINT)
        env = dict(os.environ if env is None else env)
        # GnuTLS comes with libcurl's dependencies (LDAP) and sets itself
        # up when loaded, unused: a millisecond of every start (the helper
        # drops the variable at once, see its main.c).
        env.setdefault('GNUTLS_NO_IMPLICIT_INIT', '1')
        if git_dir is not None:
            env['GIT_DIR'] = git_dir
        try:
            child = process.Process([path], env=env)
        except OSError as error:
            raise Abort('cannot run %s: %s' % (path, error.strerror),
                        hint=REBUILD_HINT)
        return cls(child, None)

    def ready(self):
        """This helper, once its version is checked (see `spawn`). A
        handshake that failed fails again the same way: the first may be
        the configuration's read (cinnabar.git), which goes on without
        the helper, and the session must still say why it cannot."""
        if self.version is None:
            if self._failure is not None:
                raise self._failure
            try:
                self.version = self._handshake()
            except Abort as failure:
                self._failure = failure
                raise
        return self

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None and self.alive:
            try:
                self.abort()
            except (HelperError, OSError):
                pass
        self.close()

    # The one send and the one receive function.

    def _send(self, data):
        self._trace.sent(data)
        try:
            self._process.stdin.write(data)
        except (BrokenPipeError, ValueError):
            self._died()

    def _flush(self):
        try:
            self._process.stdin.flush()
        except (BrokenPipeError, ValueError):
            self._died()

    def _receive(self, size=None):
        """Read one line (without its LF) or, given a size, that many bytes."""
        stdout = self._process.stdout
        self._flush()
        if size is None:
            data = stdout.readline()
            if not data.endswith(b'\n'):
                self._died()
            data = data[:-1]
        else:
            data = stdout.read(size)
            if len(data) != size:
                self._died()
        self._trace.received(data)
        return data

    # Framing on top of them.

    def _died(self):
        self.alive = False
        try:
            # Its output ended: it is exiting, give it a moment to be done.
            code = self._process.wait(timeout=5)
        except process.TimeoutExpired:
            code = None
        if code is not None:
            # A helper that failed at start said why before we could
            # write to it (the write then broke the pipe): say it too.
            last = self._process.stdout.read().splitlines()
            last = last[-1].decode('utf-8', 'replace') if last else ''
            if last.startswith('error '):
                raise HelperError(last[6:])
        if code is None:
            how = 'stopped answering'
        elif code < 0:
            how = 'was killed by signal %d' % -code
        else:
            how = 'exited with status %d' % code
        raise HelperError('%s %s' % (HELPER_NAME, how))

    def _command(self, *words):
        """Send a command line: `words` are str (surrogate escapes
        standing for bytes, as os.fsdecode makes them) or bytes, each
        framed by command_word."""
        if self._stream is not None:
            self._stream.drain()
            self._stream = None
        if not self.alive:
            raise HelperError('%s is not running' % HELPER_NAME)
        self._send(b' '.join(command_word(w) for w in words) + b'\n')

    def _answer(self):
        """Read a one-line answer; an `error` answer raises HelperError."""
        line = self._receive().decode('utf-8', 'surrogateescape')
        if line.startswith('error ') or line == 'error':
            raise HelperError(line[6:] or 'unknown error in %s' % HELPER_NAME)
        return line

    def _answer_after_exit(self):
        """Like _answer, for commands after whose error the helper exits."""
        try:
            return self._answer()
        except HelperError:
            self.alive = False
            raise

    def _send_blocks(self, source):
        if source is None:
            source = ()
        elif isinstance(source, (bytes, bytearray)):
            source = (source,)
        elif hasattr(source, 'read'):
            read = getattr(source, 'read1', source.read)
            source = iter(lambda: read(BLOCK_SIZE), b'')
        for chunk in source:
            if chunk:
                self._send(b'%d\n' % len(chunk))
                self._send(bytes(chunk))
        self._send(b'0\n')

    def _handshake(self):
        self._command('version')
        answer = self._receive().decode('utf-8', 'replace')
        if answer.startswith('error '):
            raise HelperError('%s: %s' % (HELPER_NAME, answer[6:]))
        fields = answer.split()
        if len(fields) < 2 or fields[0] != 'version':
            raise Abort('%s does not speak protocol %d' % (HELPER_NAME,
                                                           PROTOCOL),
                        hint=REBUILD_HINT)
        if fields[1] != str(PROTOCOL):
            raise Abort('%s speaks protocol %s, this git-cinnabar needs %d'
                        % (HELPER_NAME, fields[1], PROTOCOL),
                        hint=REBUILD_HINT)
        return fields[2] if len(fields) > 2 else 'unknown'

    def _read_heads(self):
        count = int(self._answer())
        heads = []
        for _ in range(count):
            line = self._receive().decode('utf-8', 'surrogateescape')
            hg_id, git_id, branch = line.split(' ', 2)
            heads.append(Head(HgId(hg_id), _parse_git_id(git_id), branch))
        return heads

    # Commands, in the order of PROTOCOL.md.

    def config_list(self):
        """git's configuration as `git config --list -z` writes it, as the
        helper read it when it started (`config`)."""
        self._command('config')
        if self._answer() != 'ok':
            raise HelperError('unexpected answer to config')
        return BlockReader(self).read()

    def capabilities(self):
        """The helper's capabilities (asked once), as a set of words."""
        if self._capabilities is None:
            self._command('capabilities')
            words = self._answer().split()
            if not words or words[0] != 'capabilities':
                raise HelperError('unexpected answer to capabilities')
            self._capabilities = frozenset(words[1:])
        return self._capabilities

    def hg2git(self, hg_id):
        """The GitId recorded for an HgId (NULL_GIT when unknown)."""
        self._command('hg2git', HgId(hg_id))
        return GitId(self._answer())

    def hg_prefix(self, prefix, kind=None):
        """The one HgId known to the metadata that starts with `prefix`
        (1 to 40 lowercase hex digits), of `kind` ('changeset', 'manifest'
        or 'file') when given; None when there is none; raises Abort when
        there are several."""
        self._command('hg-prefix', prefix, *([kind] if kind else []))
        fields = self._answer().split()
        if fields[0] == '0':
            return None
        if fields[0] == '1' and len(fields) == 2:
            return HgId(fields[1])
        raise Abort('the Mercurial id prefix %s is ambiguous' % prefix,
                    hint='give more digits')

    def _pipelined(self, command, ids, answer_type):
        """`command <id>` for each id (`command <words...>` for a tuple),
        up to PIPELINE_DEPTH requests ahead of their answers; returns the
        answers in order, as answer_type."""
        result = []
        for start in range(0, len(ids), PIPELINE_DEPTH):
            batch = ids[start:start + PIPELINE_DEPTH]
            for one in batch:
                self._command(command,
                              *(one if isinstance(one, tuple) else (one,)))
            result.extend(answer_type(self._answer()) for _ in batch)
        return result

    def hg2git_many(self, hg_ids):
        """hg2git for many ids, pipelined; returns a list in the same order."""
        return self._pipelined('hg2git', [HgId(h) for h in hg_ids], GitId)

    def git2hg(self, git_id):
        """The HgId of a git commit (NULL_HG when unknown)."""
        self._command('git2hg', GitId(git_id))
        return HgId(self._answer())

    def git2hg_many(self, git_ids):
        """git2hg for many commits, pipelined; a list in the same order."""
        return self._pipelined('git2hg', [GitId(g) for g in git_ids], HgId)

    def is_ancestor_many(self, pairs):
        """For each (ancestor, descendant) pair of git commits, whether
        the first is the second or one of its ancestors (`git merge-base
        --is-ancestor`), pipelined; a list in the same order.  Raises
        Abort when a commit of the history is missing (a shallow clone)."""
        answers = self._pipelined(
            'is-ancestor', [(GitId(a), GitId(d)) for a, d in pairs], str)
        if 'missing' in answers:
            raise git.history_failure(
                'a commit of the history walked is missing from the '
                'repository (git fsck says which)')
        if not set(answers) <= {'0', '1'}:
            raise HelperError('unexpected answer to is-ancestor')
        return [a == '1' for a in answers]

    def is_ancestor(self, ancestor, descendant):
        """is_ancestor_many for one pair."""
        return self.is_ancestor_many([(ancestor, descendant)])[0]

    def heads(self):
        """The recorded changeset branch heads, as `Head` tuples."""
        self._command('heads')
        return self._read_heads()

    def heads_with_children(self):
        """The recorded heads that a changeset imported since the helper
        started has for parent (on another branch), as `Head` tuples."""
        self._command('heads-with-children')
        return self._read_heads()

    def bundle_heads(self, path):
        """The heads of a bundle file; git_id is None when not imported."""
        self._command('bundle-heads', os.fsdecode(path))
        return self._read_heads()

    def import_file(self, path):
        self._command('import', 'file', os.fsdecode(path))
        return _parse_counts(self._answer_after_exit())

    def import_revlogs(self, path):
        """Import the revlogs of a stream clone spooled in the directory
        at `path` (cinnabar.hg.streamreader.Spool)."""
        self._command('import', 'revlogs', os.fsdecode(path))
        return _parse_counts(self._answer_after_exit())

    def import_stream(self, kind, source):
        """Import `source` (bytes, an iterable of chunks or a binary file)
        as `kind`: `bundle`, `cg01`, `cg02` or `cg03`."""
        if kind not in ('bundle', 'cg01', 'cg02', 'cg03'):
            raise ValueError('unknown import kind %r' % kind)
        self._command('import', 'stdin', kind)
        self._send_blocks(source)
        return _parse_counts(self._answer_after_exit())

    def _http_request(self, mode, url, headers, body, *kind):
        self._command('http', mode, url, *kind)
        for name, value in headers:
            if name in PATH_HEADERS:
                line = name.encode('ascii') + b': ' + command_word(value)
            elif '\n' in name or '\n' in value:
                raise ValueError('invalid HTTP header %r' % name)
            else:
                line = ('%s: %s' % (name, value)).encode('latin-1')
            self._send(line + b'\n')
        self._send(b'\n')
        self._send_blocks(body)

    def _http_status(self):
        line = self._answer_after_exit()
        if not line.startswith('status '):
            raise HelperError('unexpected answer to http: %r' % line)
        return int(line[len('status '):])

    def http_fetch(self, url, headers=(), body=None, before_answer=None):
        """Run an HTTP request through the helper (`http fetch`).

        `headers` is a list of (name, value) pairs; `body` is None, bytes,
        chunks or a binary file (a body makes the request a POST). Returns
        an HttpResponse whose headers map lower-case names to values and
        whose body is a BlockReader, to read before the next command. HTTP
        errors are answers (a status), and so is a request that got no
        answer (status 0, its X-Cinnabar-Failure header saying why).
        `before_answer()` is called once the request is sent, before the
        answer is read: it reads the named pipe the request's output file
        is, as the helper writes the body there."""
        self._http_request('fetch', url, headers, body)
        if before_answer is not None:
            self._flush()
            before_answer()
        status = self._http_status()
        response_headers = {}
        while True:
            line = self._receive().decode('latin-1')
            if not line:
                break
            name, _, value = line.partition(':')
            response_headers[name.strip().lower()] = value.strip()
        self._stream = BlockReader(self)
        return HttpResponse(status, response_headers, self._stream)

    def open_pipe(self, path):
        """The named pipe at `path` (an `http fetch` output file) opened
        for reading once the helper has opened it to write; None when the
        helper answered or ended first. (A blocking open would wait
        forever for a helper that died before it.)"""
        import select
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(self._process.stdout.fileno(), select.POLLIN)
        while True:
            ready = dict(poller.poll())
            if fd in ready:   # its first bytes, or its end
                os.set_blocking(fd, True)
                return open(fd, 'rb')
            if ready:
                os.close(fd)
                return None

    def http_import(self, url, headers=(), body=None, kind='bundle'):
        """Run an HTTP request whose answer is a Mercurial wire answer
        holding a bundle (`kind`: `bundle`, or `cg01` for a bundle1
        server's bare changegroup), and import it (`http import`). Returns
        (status, ImportCounts); failures, including a status other than
        200, raise HelperError (the helper has then exited)."""
        self._http_request('import', url, headers, body, kind)
        status = self._http_status()
        try:
            return status, _parse_counts(self._answer_after_exit())
        except HelperError as error:
            if status != 200:
                error.message = 'HTTP error %d: %s' % (status, error.message)
                error.args = (error.message,)
            raise

    def changegroup(self, version, path, commits, branches=None):
        """Write a bare changegroup of `version` (`01` or `02`) for the git
        `commits` (parents first) to the file at `path`, recording their
        changesets pending `finish`; `branches` ({GitId: branch name, or
        (branch name, topic)}) gives new changesets another branch than
        their first parent's, and a topic (hg-evolve's `topic` extra).
        Returns {GitId: HgId}."""
        if version not in ('01', '02'):
            raise ValueError('unknown changegroup version %r' % version)
        commits = [GitId(c) for c in commits]
        branches = branches or {}
        self._command('changegroup', version, os.fsdecode(path),
                      str(len(commits)))
        for commit in commits:
            line = commit.encode('ascii')
            if commit in branches:
                line += b' ' + _branch_field(branches[commit])
            self._send(line + b'\n')
        answer = self._answer_after_exit().split()
        if len(answer) != 2 or answer[0] != 'ok' or (
                answer[1] != str(len(commits))):
            raise HelperError('unexpected answer to changegroup: %r'
                              % ' '.join(answer))
        result = {}
        for _ in commits:
            line = self._receive().decode('ascii', 'replace')
            git_id, _, hg_id = line.partition(' ')
            result[GitId(git_id)] = HgId(hg_id)
        if set(result) != set(commits):
            raise HelperError('the answer to changegroup does not match '
                              'the commits asked for')
        return result

    def graft(self, commits):
        """Give the helper the commits changesets may be grafted onto
        (see helper/graft.h); returns how many it took."""
        commits = [GitId(c) for c in commits]
        self._command('graft', str(len(commits)))
        for commit in commits:
            self._send(commit.encode('ascii') + b'\n')
        answer = self._answer().split()
        if len(answer) != 2 or answer[0] != 'ok':
            raise HelperError('unexpected answer to graft: %r'
                              % ' '.join(answer))
        return int(answer[1])

    def graft_stats(self):
        """GraftStats since the helper started."""
        self._command('graft-stats')
        answer = self._answer().split()
        if len(answer) != 6 or answer[0] != 'ok':
            raise HelperError('unexpected answer to graft-stats: %r'
                              % ' '.join(answer))
        return GraftStats(*(int(a) for a in answer[1:]))

    def finish(self):
        """Make the imported data visible; returns the metadata commit."""
        self._command('finish')
        answer = self._answer_after_exit()
        if not answer.startswith('ok '):
            raise HelperError('unexpected answer to finish: %r' % answer)
        return GitId(answer[3:])

    def abort(self):
        self._command('abort')
        self._answer()

    def set_progress(self, enabled):
        """Show progress on stderr during imports, or not."""
        self._command('progress', 'on' if enabled else 'off')
        answer = self._answer()
        if answer != 'ok':
            raise HelperError('unexpected answer to progress: %r' % answer)

    # Checking the metadata (git cinnabar fsck).

    def use_metadata(self, commit):
        """Read the metadata of the metadata commit `commit` from now on,
        not the ref's (until `abort`)."""
        self._command('metadata', GitId(commit))
        answer = self._answer_after_exit()
        if answer != 'ok':
            raise HelperError('unexpected answer to metadata: %r' % answer)

    def fsck(self, commits=None, received=False, grafts=()):
        """Check all the metadata, or only the given changeset commits.
        `received`: all of it, with the id checks of cinnabar.check;
        `grafts` then lists the commits that may stand for a changeset
        without being what an import makes of it.
        Returns ([problem message], [unlike-hg message], FsckCounts):
        problems are damage; unlike-hg messages name changesets and file
        revisions that are not what Mercurial's commit makes of the same
        change (the metadata holds them faithfully)."""
        if received:
            self._fsck_command('received', grafts)
        elif commits is None:
            self._command('fsck', 'full')
        else:
            self._fsck_command('commits', commits)
        problems, unlike = [], []
        while True:
            line = self._answer_after_exit()
            if line.startswith('problem '):
                problems.append(line[len('problem '):])
                continue
            if line.startswith('unlike-hg '):
                unlike.append(line[len('unlike-hg '):])
                continue
            fields = line.split()
            if len(fields) != 5 or fields[0] != 'ok':
                raise HelperError('unexpected answer to fsck: %r' % line)
            return problems, unlike, FsckCounts(*(int(f) for f in fields[1:]))

    def _fsck_command(self, mode, commits):
        """`fsck <mode> <count>` and the commits, or `fsck <mode>`."""
        commits = [GitId(c) for c in commits]
        if mode == 'received' and not commits:
            self._command('fsck', mode)
            return
        self._command('fsck', mode, str(len(commits)))
        self._send(b''.join(c.encode('ascii') + b'\n' for c in commits))

    # For `git cinnabar data` and `git cinnabar bundle`.

    def data(self, kind, hex_id):
        """The raw Mercurial text of the stored revision of `kind`
        (`changeset`, `manifest` or `file`) whose id is or starts with
        `hex_id` (4 to 40 lower-case hex digits), as HgData."""
        if kind not in ('changeset', 'manifest', 'file'):
            raise ValueError('unknown revision kind %r' % kind)
        self._command('data', kind, hex_id)
        status, _, detail = self._answer().partition(' ')
        if status not in ('ok', 'unknown', 'ambiguous', 'other'):
            raise HelperError('unexpected answer to data: %r' % status)
        text = b''
        if status == 'ok':
            detail = HgId(detail)
            text = BlockReader(self).read()
        return HgData(status, detail, text)

    def compress(self, engine, source, dest):
        """Append the file `source`, compressed with `engine` (`none`,
        `zlib`, `bzip2`, `zstd`), to the file `dest`; returns the number
        of bytes appended."""
        self._command('compress', engine, os.fsdecode(source),
                      os.fsdecode(dest))
        answer = self._answer_after_exit().split()
        if len(answer) != 2 or answer[0] != 'ok':
            raise HelperError('unexpected answer to compress: %r'
                              % ' '.join(answer))
        return int(answer[1])

    def close(self):
        """End the helper (work not finished is dropped) and wait for it."""
        self.alive = False
        try:
            self._process.stdin.close()
        except BrokenPipeError:
            pass
        self._process.stdout.close()
        self._process.wait()
