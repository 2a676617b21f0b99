"""One stream bundle through `git cinnabar unbundle`, the ASan helper
under it (the stream fuzz target).

Stream bundles (packed1, bundle2 `stream2`: streamfmt.py) are read by the
Python side, then imported by the helper; the command line is what is
fuzzed, so the target does not depend on how the two share the work.
For each input, in a scratch repository put back afterwards:

    git cinnabar unbundle <input>          (GIT_CINNABAR_HELPER: the ASan one)
    git cinnabar fsck --full               (when it was accepted)

Outcome.kind (target.py) names what was wrong, or is None:

  asan, ubsan, leak
             a sanitizer report on standard error (a leak is kept aside in
             Outcome.leak, and the rest judged too)
  signal     the helper died (`... was killed by signal`, `exited with`)
  traceback  a Python traceback
  timeout    no end within the time limit
  exit       an exit status other than 0, 128 (a refusal, git's die())
             or, from fsck, 1 (damage found)
  messages   a refusal without exactly one `fatal:`/`error:` line
  leftover   after a refusal, any file added or changed in the git
             directory (but the lock file, which every command rewrites);
             after acceptance, a `tmp_pack_*` or a stream spool
  accepted-bad
             accepted, and `git cinnabar fsck --full` is not clean
  refused-valid
             a seed (a stream bundle made by hg) refused
  slow       `git cinnabar unbundle` took more CPU time (its processes'
             user and system time) than CPU_BASE and CPU_PER_MB for each
             MB of the input: work that grows faster than the input
             (delta chains rebuilt from their start were quadratic)
"""

import os
import re
import resource
import signal
import subprocess
import tempfile
import shutil

from target import (Outcome, ScratchRepo, _normalize, sanitized_env,
                    sanitizer_report)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
VOLATILE = ('cinnabar.lock',)
# The CPU seconds `git cinnabar unbundle` of an input may take: well above
# what a seed takes (the ASan helper, git and Python starting), also with
# thousands of changesets deltaed against r-2, each built from the text
# kept; well below what following such chains back to their start takes.
CPU_BASE = 4.0
CPU_PER_MB = 2.0
_DIED = re.compile(r'git-cinnabar-helper (was killed by signal \d+|exited '
                   r'with status \d+|stopped answering)')


def error_lines(err):
    return [line for line in err.splitlines()
            if line.startswith(('fatal: ', 'error: '))]


class StreamTarget:
    def __init__(self, helper, timeout=60.0, workdir=None, leaks=True):
        self.helper = os.path.abspath(helper)
        self.timeout = timeout
        self.tmp = tempfile.mkdtemp(prefix='cinnabar-fuzz-stream-',
                                    dir=workdir)
        self.repo = ScratchRepo(self.tmp, volatile=VOLATILE)
        self.input_path = os.path.join(self.tmp, 'input.hg')
        self.env = sanitized_env(self.tmp, leaks,
                                 GIT_CINNABAR_HELPER=self.helper,
                                 GIT_CINNABAR_TRACEBACK='1')

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run(self, data):
        with open(self.input_path, 'wb') as f:
            f.write(data)
        try:
            return self._run(CPU_BASE + CPU_PER_MB * len(data) / (1 << 20))
        finally:
            self.repo.reset()

    def _cinnabar(self, *args):
        """(status or None on timeout, stdout, stderr) of `git cinnabar
        args`; self.cpu: the CPU seconds it took."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.Popen(
            [os.path.join(TOP, 'git-cinnabar'), *args], cwd=self.repo.path,
            env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=self.timeout)
            status = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            status = None
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = sum(getattr(after, f) - getattr(before, f)
                       for f in ('ru_utime', 'ru_stime'))
        return status, out.decode('utf-8', 'replace'), \
            err.decode('utf-8', 'replace')

    def _run(self, budget):
        status, out, err = self._cinnabar('unbundle', self.input_path)
        result = self._judge(status, out, err)
        if result.kind is None and self.cpu > budget:
            result = Outcome('slow', 'unbundle over its CPU budget', out,
                             err + '\nCPU: %.1f s, budget %.1f s\n' % (
                                 self.cpu, budget), result.accepted)
        if result.kind is None and result.accepted:
            status, out, err = self._cinnabar('fsck', '--full')
            checked = self._judge(status, out, err, fsck=True)
            if checked.kind is not None or checked.error is not None:
                leak = checked.leak or result.leak
                result = checked if checked.kind is not None else Outcome(
                    'accepted-bad', 'fsck --full: ' + checked.detail,
                    out, err, True)
                result.leak = leak
        return result

    def _judge(self, status, out, err, fsck=False):
        def outcome(kind, detail, accepted=False, error=None):
            return Outcome(kind, detail, out, err, accepted, error)

        if status is None:
            return outcome('timeout', 'no end in %gs' % self.timeout)
        report = sanitizer_report(err)
        if report and report[0] != 'leak':
            return outcome(*report)
        result = self._judge_rest(status, out, err, fsck, outcome)
        if report:
            result.leak = outcome(*report)
        return result

    def _judge_rest(self, status, out, err, fsck, outcome):
        if 'Traceback (most recent call last)' in err:
            last = err.strip().splitlines()[-1]
            return outcome('traceback', last.split(':')[0])
        died = _DIED.search(err)
        if died:
            return outcome('signal', re.sub(r'\d+', 'N', died.group(1)))
        if status not in ((0, 1, 128) if fsck else (0, 128)):
            return outcome('exit', 'status %d' % status)
        errors = error_lines(err)
        changes = self.repo.changes()
        if status != 0:
            if len(errors) != 1:
                return outcome('messages', '%d error lines' % len(errors))
            if changes and not fsck:
                return outcome('leftover', _normalize(changes[0]))
            return outcome(None, _normalize(errors[0]), error=errors[0])
        left = [c for c in changes if 'tmp_pack_' in c or 'hg-stream' in c]
        if left:
            return outcome('leftover', _normalize(left[0]))
        return outcome(None, 'accepted', accepted=True)
