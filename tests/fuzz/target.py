"""One fuzz input through the helper, as `git cinnabar unbundle` drives it.

For each input the helper is started afresh in a scratch git repository
and sent what cinnabar/cmd/unbundle.py sends for a bundle file:

    bundle-heads <file>     (the refs of the bundle)
    import file <file>
    finish                  (the metadata ref is written)
    fsck full               (every stored id recomputed from git objects)
    quit

An answer starting with `error` ends the helper (PROTOCOL.md): the rest is
not read.  Outcome.kind names what was wrong, or is None:

  signal     the helper died by a signal (SIGSEGV, SIGABRT from BUG(), ...)
  asan, ubsan
             a sanitizer report on standard error
  leak       LeakSanitizer's report at exit; it changes nothing else, so
             the outcome is judged on the rest too and the leak is kept
             aside in Outcome.leak
  timeout    no answer within the time limit (a hang or a runaway)
  exit       an error answer with an exit status other than 128, or an
             exit without an answer, or an answer the protocol does not
             have
  leftover   after a refusal, files left in the repository (tmp_pack_*,
             packs, loose objects, refs); after acceptance, tmp_pack_*
  accepted-bad
             the input was imported although some hg id in it does not
             verify (hgcheck), or `fsck full` found problems after it (the
             detail has the first problem)
  fsck       `fsck full` answered an error after an accepted import

One input in some is sent instead as a clone over ssh or http sends a
`getbundle` answer: `import stdin bundle` followed by the data as a block
stream (no `bundle-heads`), then `finish`, `fsck full`.

And a bundle1 input (or a bare changegroup) in some is sent as a bundle1
server answers `getbundle` over HTTP: its changegroup as a zlib stream
(that of an `HG10GZ` bundle as it is), the body of an
`application/mercurial-0.1` answer from a server on 127.0.0.1 that the
helper reads with `http import <url> cg01`, then `finish`, `fsck full`.

The scratch repository is put back to its first state after every input
(files added since are removed), so inputs do not see each other.
"""

import bz2
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import hgcheck

SANITIZER_ENV = {
    'ASAN_OPTIONS': 'detect_leaks=1:abort_on_error=0:exitcode=86:'
                    'allocator_may_return_null=1:detect_stack_use_after_'
                    'return=0:symbolize=1:malloc_context_size=20',
    'UBSAN_OPTIONS': 'print_stacktrace=1:halt_on_error=1:exitcode=87',
    'LSAN_OPTIONS': 'exitcode=%d' % 88,
}

LEAK_EXIT = 88
_FRAME = re.compile(r'#\d+ 0x[0-9a-f]+ in (\S+) (\S+?)(?::\d+)*$', re.M)
_UBSAN = re.compile(r'^(\S+?):\d+:\d+: runtime error: (.*)$', re.M)


class Outcome:
    def __init__(self, kind=None, detail='', answers='', stderr='',
                 accepted=False, error=None):
        self.kind = kind
        self.detail = detail
        self.answers = answers
        self.stderr = stderr
        self.accepted = accepted
        self.error = error  # the helper's error answer, if any
        self.leak = None    # an Outcome of kind 'leak', if there was one

    @property
    def signature(self):
        """What identifies a finding, for deduplication."""
        return '%s: %s' % (self.kind, self.detail)

    def __repr__(self):
        return '<Outcome %s %s>' % (self.kind, self.detail[:80])


# Allocation and string wrappers say nothing about where a bug is.
_WRAPPERS = ('wrapper.c', 'strbuf.c', 'string-list.c', 'usage.c')


def sanitizer_frames(stderr):
    """The first two frames of the report in the helper's or git's code.

    Git's tree is compiled with relative paths (builtin/fast-import.c),
    the helper with absolute ones; the sanitizer's and libc's frames are
    left out, and so are allocation and string wrappers.
    """
    frames = []
    for func, path in _FRAME.findall(stderr):
        ours = '/helper/' in path or '/git-2.' in path or not (
            path.startswith('/') or path.startswith('..') or
            path.startswith('('))
        if ours and os.path.basename(path) not in _WRAPPERS:
            frames.append('%s (%s)' % (func, os.path.basename(path)))
        if len(frames) == 2:
            break
    return ' < '.join(frames)


def sanitizer_report(stderr):
    """(kind, detail) of a sanitizer report on standard error, or None."""
    m = re.search(r'ERROR: AddressSanitizer: ([\w-]+)', stderr)
    if m and m.group(1) == 'stack-overflow':
        # Where it ends in a recursion varies: name the recursing function.
        funcs = [f for f, _ in _FRAME.findall(stderr)[:50]]
        top = max(set(funcs), key=funcs.count) if funcs else '?'
        return 'asan', 'stack-overflow in a recursion of %s' % top
    if m:
        return 'asan', '%s in %s' % (m.group(1), sanitizer_frames(stderr))
    if 'ERROR: LeakSanitizer' in stderr:
        return 'leak', sanitizer_frames(stderr)
    m = _UBSAN.search(stderr)
    if m:
        what = re.sub(r"0x[0-9a-f]+|\d+", 'N', m.group(2))
        return 'ubsan', '%s: %s' % (os.path.basename(m.group(1)), what)
    return None


class ScratchRepo:
    """A git repository that can be put back as it was (but the files
    named in `volatile`, which are neither compared nor removed)."""

    def __init__(self, parent, name='repo', config=(), volatile=()):
        self.path = os.path.join(parent, name)
        self.volatile = volatile  # names of files left out
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM='1',
                   HOME=parent, GIT_CONFIG_GLOBAL=os.devnull)
        subprocess.run(['git', 'init', '-q', self.path], check=True, env=env)
        # fast-import would run `git unpack-objects` for small packs.
        for key, value in (('fastimport.unpackLimit', '0'),) + config:
            subprocess.run(['git', '-C', self.path, 'config', key, value],
                           check=True, env=env)
        self.git_dir = os.path.join(self.path, '.git')
        self.baseline = self.snapshot()

    def snapshot(self):
        files = {}
        for root, dirs, names in os.walk(self.git_dir):
            for name in names:
                if name in self.volatile:
                    continue
                path = os.path.join(root, name)
                st = os.lstat(path)
                files[path] = (st.st_size, st.st_mtime_ns)
        return files

    def changes(self):
        """Relative paths of files added or changed since the start."""
        now = self.snapshot()
        return sorted(os.path.relpath(p, self.git_dir)
                      for p, s in now.items() if self.baseline.get(p) != s)

    def reset(self):
        for rel in self.changes():
            path = os.path.join(self.git_dir, rel)
            if path in self.baseline:
                raise RuntimeError('scratch repository file %s changed; '
                                   'cannot put it back' % rel)
            os.unlink(path)


def _protocol_answers(out):
    """Split the answers; (accepted, error line or None, problem)."""
    lines = out.split('\n')
    pos = 0

    def line():
        nonlocal pos
        if pos >= len(lines):
            return None
        pos += 1
        return lines[pos - 1]

    first = line()
    if first is None or first == '':
        return False, None, 'no answer to bundle-heads'
    if first.startswith('error '):
        return False, first, None
    if not first.isdigit():
        return False, None, 'bad bundle-heads answer'
    for _ in range(int(first)):
        head = line()
        if head is None or len(head.split(' ', 2)) != 3:
            return False, None, 'bad bundle-heads line'
    answer = line()
    if answer is None or answer == '':
        return False, None, 'no answer to import'
    if answer.startswith('error '):
        return False, answer, None
    if not re.match(r'ok \d+ \d+ \d+$', answer):
        return False, None, 'bad import answer'
    answer = line()
    if answer is None or not re.match(r'ok [0-9a-f]{40}$', answer):
        return True, answer, 'bad finish answer'
    while True:
        answer = line()
        if answer is None:
            return True, None, 'no answer to fsck'
        if answer.startswith('error '):
            return True, answer, 'fsck error'
        # unlike-hg lines are warnings (history Mercurial's commit would
        # not make, held faithfully): only problems are findings.
        if answer.startswith(('problem ', 'unlike-hg ')):
            continue
        m = re.match(r'ok \d+ \d+ \d+ (\d+)$', answer)
        if not m:
            return True, None, 'bad fsck answer'
        if m.group(1) != '0':
            return True, None, 'fsck problems'
        return True, None, None


def _only_file_and_directory(data, out):
    """Whether every problem `fsck full` reported is a manifest holding a
    path that is both a file and a directory, and the bundle has one
    (or cannot be read here): known and documented, not a finding."""
    problems = re.findall(r'^problem (.*)$', out, re.M)
    if not problems or not all('both a file and a directory' in p
                               for p in problems):
        return False
    return hgcheck.has_file_and_directory(data) is not False


def sanitized_env(home, leaks, **extra):
    """Our environment for the helper under test, isolated in `home`
    (no git configuration), with the sanitizers' options; LeakSanitizer
    off unless `leaks`."""
    env = dict(os.environ, GIT_CINNABAR_PROGRESS='0',
               GIT_CONFIG_NOSYSTEM='1', HOME=home,
               GIT_CONFIG_GLOBAL=os.devnull, LC_ALL='C', **SANITIZER_ENV,
               **extra)
    if not leaks:
        env['ASAN_OPTIONS'] = env['ASAN_OPTIONS'].replace(
            'detect_leaks=1', 'detect_leaks=0')
    env.pop('GIT_DIR', None)
    return env


def run_helper(helper, cwd, env, script, timeout):
    """The helper fed `script` (its whole standard input), in its own
    session: (exit status, stdout, stderr); the status is None when it did
    not end within `timeout` seconds (it was then killed)."""
    proc = subprocess.Popen([helper], cwd=cwd, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(script, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out, err
    return proc.returncode, out, err


class Target:
    """The helper under test, its scratch repository and its checks."""

    def __init__(self, helper, timeout=20.0, workdir=None, leaks=True):
        self.helper = os.path.abspath(helper)
        self.timeout = timeout
        self.tmp = tempfile.mkdtemp(prefix='cinnabar-fuzz-', dir=workdir)
        # Tree names must compare byte-wise whatever core.ignorecase says
        # (git's default on macOS and Windows): a second repository has it.
        self.repos = {False: ScratchRepo(self.tmp),
                      True: ScratchRepo(self.tmp, 'repo-ignorecase',
                                        (('core.ignorecase', 'true'),))}
        self.repo = self.repos[False]
        self.input_path = os.path.join(self.tmp, 'input.hg')
        # (A proxy from the environment must not get the http inputs.)
        self.env = sanitized_env(self.tmp, leaks, no_proxy='127.0.0.1')
        self._server = None  # the AnswerServer of the http inputs

    def close(self):
        if self._server is not None:
            self._server.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run(self, data, ignorecase=False, stdin=False, http=False):
        with open(self.input_path, 'wb') as f:
            f.write(data)
        self.repo = self.repos[ignorecase]
        try:
            if http:
                outcome = self._run_http(data)
            else:
                outcome = self._run(data, stdin)
        finally:
            self.repo.reset()
        if ignorecase and outcome.kind:
            outcome.detail += ' (core.ignorecase=true)'
        return outcome

    def _run_http(self, data):
        if self._server is None:
            self._server = AnswerServer().start()
        self._server.body = http_body(data)
        script = b'http import %s cg01\n\n0\nfinish\nfsck full\nquit\n' % (
            self._server.url.encode())
        return self._run(data, False, script, 'status 200\n')

    def _script(self, data, stdin):
        p = self.input_path
        if stdin:
            return b'import stdin bundle\n' + blocks(data) + \
                b'finish\nfsck full\nquit\n'
        return ('bundle-heads %s\nimport file %s\nfinish\n'
                'fsck full\nquit\n' % (p, p)).encode()

    def _run(self, data, stdin, script=None, status_line=None):
        """Run the helper on `script` (by default, what `stdin` says);
        `status_line`: the line its answers start with (`http import`)."""
        if script is None:
            script = self._script(data, stdin)
        status, out, err = run_helper(self.helper, self.repo.path, self.env,
                                      script, self.timeout)
        if status is None:
            return Outcome('timeout', 'no answer in %gs' % self.timeout,
                           out.decode('utf-8', 'replace'),
                           err.decode('utf-8', 'replace'))
        out = out.decode('utf-8', 'replace')
        if status_line is not None:
            # The status of `http import`, then its `import` answer.
            if not out.startswith(status_line):
                return Outcome('exit', 'bad http import status',
                               out, err.decode('utf-8', 'replace'))
            out = out[len(status_line):]
        if stdin or status_line is not None:
            out = '0\n' + out  # as if bundle-heads had answered
        return self._judge(data, status, out,
                           err.decode('utf-8', 'replace'))

    def _judge(self, data, status, out, err):
        def outcome(kind, detail):
            return Outcome(kind, detail, out, err, accepted, error)

        accepted, error, problem = _protocol_answers(out)
        report = sanitizer_report(err)
        if report and report[0] != 'leak':
            return outcome(*report)
        if report and status == LEAK_EXIT:
            # LeakSanitizer replaced the exit status: assume the right one.
            status = 128 if error else 0
        result = self._judge_answers(data, status, out, err, accepted,
                                     error, problem)
        if report:
            result.leak = Outcome(*report, out, err, accepted, error)
        return result

    def _judge_answers(self, data, status, out, err, accepted, error,
                       problem):
        def outcome(kind, detail):
            return Outcome(kind, detail, out, err, accepted, error)

        if status < 0:
            try:
                name = signal.Signals(-status).name
            except ValueError:
                name = 'signal %d' % -status
            bug = re.search(r'^BUG: (?:.*/)?([^/]+?): (.*)$', err, re.M)
            return outcome('signal', '%s after %s%s' % (
                name, _phase(out, accepted),
                ' (BUG at %s: %s)' % bug.groups() if bug else ''))
        changes = self.repo.changes()
        leftovers = [c for c in changes if 'tmp_pack_' in c or
                     (error is not None and not accepted)]
        if leftovers:
            return outcome('leftover', '%s after %s' % (
                _normalize_path(leftovers[0]), _phase(out, accepted)))
        if accepted and problem == 'fsck problems' and \
                _only_file_and_directory(data, out):
            problem = None
        if accepted and problem == 'fsck problems':
            first = re.search(r'^problem (.*)$', out, re.M)
            return outcome('accepted-bad', 'fsck full: ' + _normalize(
                first.group(1) if first else '?'))
        if accepted and problem == 'fsck error':
            return outcome('fsck', _normalize(error))
        if problem:
            return outcome('exit', problem)
        if error is not None and status != 128:
            return outcome('exit', 'error answer with exit status %d'
                           % status)
        if error is None and status != 0:
            return outcome('exit', 'exit status %d without an error answer'
                           % status)
        if accepted and hgcheck.bundle_ids_verify(data) is False:
            return outcome('accepted-bad', 'an hg id does not verify')
        return outcome(None, _normalize(error) if error else 'accepted')


def is_bundle1(data):
    """Whether `data` is a bundle1 or a bare changegroup (as far as its
    first bytes tell)."""
    return data[:1] == b'\0' or data[:4] == b'HG10'


def http_body(data):
    """The changegroup of a bundle1 `data` as a bundle1 server's
    getbundle answer: a zlib stream (of the whole of other inputs)."""
    if data[:4] != b'HG10':
        return zlib.compress(data)
    compression, payload = data[4:6], data[6:]
    if compression == b'GZ':
        return payload
    if compression == b'BZ':
        try:
            payload = bz2.decompress(b'BZ' + payload)
        except (OSError, ValueError, EOFError):
            pass
    return zlib.compress(payload)


class _AnswerHandler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        body = self.server.owner.body
        self.send_response(200)
        self.send_header('Content-Type', 'application/mercurial-0.1')
        self.send_header('Content-Length', str(len(body)))
        self.send_header('Connection', 'close')
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass  # the helper stopped reading: its answer says why


class AnswerServer:
    """An HTTP server on 127.0.0.1 answering every request with `body`
    as a bundle1 server answers getbundle."""

    def __init__(self):
        self.body = b''
        self._server = ThreadingHTTPServer(('127.0.0.1', 0), _AnswerHandler)
        self._server.daemon_threads = True
        self._server.owner = self
        self.url = 'http://127.0.0.1:%d/?cmd=getbundle' % (
            self._server.server_address[1])

    def start(self):
        threading.Thread(target=self._server.serve_forever,
                         daemon=True).start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


def blocks(data, size=65536):
    """`data` as a block stream (PROTOCOL.md), ended by an empty block."""
    out = [b'%d\n' % len(data[i:i + size]) + data[i:i + size]
           for i in range(0, len(data), size)]
    return b''.join(out) + b'0\n'


def _phase(out, accepted):
    if accepted:
        return 'import'
    return 'bundle-heads or import'


def _normalize_path(path):
    return re.sub(r'[0-9a-f]{38,40}|tmp_pack_\w+|pack-\w+', '*', path)


def _normalize(message):
    """An error message with its ids and numbers blanked, as a path mark."""
    message = re.sub(r'[0-9a-f]{40}', 'ID', message)
    message = re.sub(r"'[^']*'", "'S'", message)
    return re.sub(r'\d+', 'N', message)[:160]
