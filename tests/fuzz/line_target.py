"""The line target: the helper's reading of its command lines
(helper/PROTOCOL.md, Framing: C-quoted words), fed random scripts.

A script is a few command lines the helper must answer exactly (harmless
commands whose words are framed in random ways: plain when they can be,
quoted with named or octal escapes even where nothing needs it), then one
last line, one of:

  echo       an unknown command name of random bytes, quoted: the helper
             must answer `error unknown helper command '<those bytes>'`
             (line breaks shown as spaces, cut at 4095 bytes), which shows
             it unquoted the word right;
  bad        a line the framing refuses (a truncated quote, a bad or short
             escape, `\\000`, a NUL byte, text after a closing quote, an
             empty word, too many words): `error helper command line ...`;
  huge       a word of 1 to 4 MB, quoted or not, as an argument;
  mutated    one of the above or a harmless line, its bytes after the
             command name flipped, cut, duplicated: `error ...` or work.

The command name is never made by chance: it is written as it is, and an
echo never unquotes to a command's name, so that no script can run a
command that writes (compress, changegroup, http, finish).

What counts as a finding: a sanitizer report (leaks apart, as elsewhere);
death by a signal; no end within the timeout; an exit status other than 0
or 128; an exit 128 whose last answer is not `error ...`; an answer other
than the one expected (`misread`). A finding is saved as it is (scripts
are small), as `<out>/line-<kind>-<hash>/input.txt` (Script.encode: the
lines, then the answers expected), and replayed with `fuzz.py --line
--replay FILE...`.
"""

import os
import shutil
import tempfile

from target import (LEAK_EXIT, Outcome, ScratchRepo, run_helper,
                    sanitized_env, sanitizer_report)

# Harmless commands and their answer in an empty repository (no metadata).
NULL = b'0' * 40
HARMLESS = [
    ([b'progress', b'on'], b'ok'),
    ([b'progress', b'off'], b'ok'),
    ([b'hg2git', b'ab' * 20], NULL),
    ([b'git2hg', b'cd' * 20], NULL),
    ([b'hg-prefix', b'abc'], b'0'),
    ([b'hg-prefix', b'abc', b'manifest'], b'0'),
    ([b'heads'], b'0'),
    ([b'data', b'changeset', b'abcd'], b'unknown'),
    ([b'graft-stats'], b'ok 0 0 0 0 0'),
    ([b'abort'], b'ok'),
]
COMMANDS = (b'version', b'capabilities', b'config', b'hg2git', b'git2hg',
            b'hg-prefix', b'heads', b'bundle-heads', b'import', b'http',
            b'progress', b'changegroup', b'graft', b'graft-stats', b'finish',
            b'abort', b'fsck', b'metadata', b'data', b'compress',
            b'test-sha1', b'quit')
PLAIN = frozenset(range(0x21, 0x7f)) - {ord('"'), ord('\\')}
NAMED = {7: b'a', 8: b'b', 12: b'f', 10: b'n', 13: b'r', 9: b't', 11: b'v',
         ord('\\'): b'\\', ord('"'): b'"'}
BAD_LINES = [
    b'progress "on', b'progress "o\\qn"', b'progress "o\\15"',
    b'progress "o\\000n"', b'progress o\0n', b'progress "on"x',
    b'progress  on', b'progress on ', b'progress ' + b'on ' * 8,
    b'progress "\\', b'progress "\\3', b'progress "\\38"', b'"\\400"',
    b'hg2git "' + b'ab' * 20, b'data changeset "\\"',
]
MESSAGE_MAX = 4095   # the helper's die routine formats into 4096 bytes


def quote(rng, word, force=False):
    """`word` framed as the helper reads it, in one of the ways it may be:
    as it is (when it can be), or quoted, each byte that may be left as it
    is left so or escaped at random."""
    if word and not force and all(b in PLAIN for b in word) and \
            rng.random() < 0.5:
        return word
    out = [b'"']
    for b in word:
        if b in PLAIN or b == 0x20:
            if rng.random() < 0.9:
                out.append(bytes([b]))
                continue
        elif b in NAMED and rng.random() < 0.6:
            out.append(b'\\' + NAMED[b])
            continue
        if b in NAMED and b in (ord('\\'), ord('"')):
            out.append(b'\\' + NAMED[b])
        else:
            out.append(b'\\%03o' % b)
    out.append(b'"')
    return b''.join(out)


def random_word(rng, size=None):
    size = rng.choice((1, 2, 5, 20, 200)) if size is None else size
    alphabet = rng.choice((bytes(range(1, 256)), b' \n\t"\\ab\xff-',
                           b'\\"0123nrx '))
    return bytes(rng.choice(alphabet) for _ in range(size))


def mutated(rng, line):
    """`line` with bytes after its first word changed."""
    head, sep, rest = line.partition(b' ')
    rest = bytearray(rest or b'x')
    for _ in range(rng.choice((1, 2, 4))):
        pos = rng.randrange(len(rest) + 1)
        choice = rng.random()
        if choice < 0.4 and rest:
            rest[min(pos, len(rest) - 1)] = rng.choice(b'"\\ \0\n0x7\xff')
        elif choice < 0.6:
            rest[pos:pos] = rng.choice((b'"', b'\\', b' ', b'\\0', b'""'))
        elif choice < 0.8:
            del rest[pos:]
        else:
            rest[pos:pos] = rest[:pos]
    # A line break would start another command: keep it one line.
    return head + b' ' + bytes(rest).replace(b'\n', b'\\n')


class Script:
    """A script: `lines`, the answers expected to the first ones
    (`expected`), and what is expected of the last (`last`: `echo`
    with its answer, `error` or `any`)."""

    def __init__(self, lines, expected, last, last_answer=None):
        self.lines, self.expected = lines, expected
        self.last, self.last_answer = last, last_answer

    @property
    def data(self):
        return b''.join(line + b'\n' for line in self.lines)

    def encode(self):
        """As saved (findings, regressions/line-*.txt): the command
        lines, then `#= <answer>` for each answer expected (an echo's
        too), and `#error` when the last must be a framing error."""
        expected = self.expected + (
            [self.last_answer] if self.last == 'echo' else [])
        return self.data + b''.join(b'#= ' + a + b'\n' for a in expected) \
            + (b'#error\n' if self.last == 'error' else b'')

    @classmethod
    def decode(cls, data):
        lines, expected, last = [], [], 'any'
        for line in data.split(b'\n')[:-1]:
            if line.startswith(b'#= '):
                expected.append(line[3:])
            elif line == b'#error':
                last = 'error'
            else:
                lines.append(line)
        return cls(lines, expected, last)


def random_script(rng):
    lines, expected = [], []
    for _ in range(rng.choice((0, 1, 2, 4))):
        words, answer = rng.choice(HARMLESS)
        lines.append(b' '.join(quote(rng, w) for w in words))
        expected.append(answer)
    choice = rng.random()
    if choice < 0.3:
        while True:
            name = random_word(rng).replace(b'\0', b'')
            if name and name not in COMMANDS:
                break
        lines.append(quote(rng, name, force=True) + rng.choice(
            (b'', b' ' + quote(rng, random_word(rng), force=True))))
        message = (b"unknown helper command '%s'" % name)[:MESSAGE_MAX]
        return Script(lines, expected, 'echo',
                      b'error ' + message.replace(b'\n', b' '))
    if choice < 0.55:
        lines.append(rng.choice(BAD_LINES))
        return Script(lines, expected, 'error')
    if choice < 0.65:
        # A quoted piece repeated: quoting 4 MB byte by byte takes seconds.
        piece = quote(rng, random_word(rng, 64).replace(b'\0', b'') or b'x')
        quoted = piece.startswith(b'"')
        if quoted:
            piece = piece[1:-1]
        word = piece * ((rng.choice((1, 2, 4)) << 20) // len(piece))
        if quoted:
            word = b'"' + word + b'"'
        command = rng.choice((b'hg-prefix', b'bundle-heads', b'data file',
                              b'hg2git'))
        lines.append(command + b' ' + word)
        return Script(lines, expected, 'any')
    source = rng.choice(BAD_LINES + [
        b' '.join(quote(rng, w, force=True) for w in rng.choice(HARMLESS)[0])
        for _ in range(3)])
    if source.startswith(b'"'):
        source = b'progress ' + source
    lines.append(mutated(rng, source))
    return Script(lines, expected, 'any')


class LineTarget:
    """The helper under test, fed scripts in a scratch repository."""

    def __init__(self, helper, timeout=20.0, leaks=True):
        self.helper = os.path.abspath(helper)
        self.timeout = timeout
        self.tmp = tempfile.mkdtemp(prefix='cinnabar-fuzz-lines-')
        self.repo = ScratchRepo(self.tmp)
        self.env = sanitized_env(self.tmp, leaks)

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run(self, script):
        """The Outcome of a Script, or of bytes (a replayed one)."""
        if isinstance(script, bytes):
            script = Script.decode(script)
        try:
            return self._run(script)
        finally:
            self.repo.reset()

    def _run(self, script):
        status, out, err = run_helper(self.helper, self.repo.path, self.env,
                                      script.data, self.timeout)
        if status is None:
            return self._outcome('timeout', 'no answer in %gs' % self.timeout,
                                 out, err)
        return self._judge(script, status, out, err)

    @staticmethod
    def _outcome(kind, detail, out, err):
        return Outcome(kind, detail, out.decode('utf-8', 'replace')[-20000:],
                       err.decode('utf-8', 'replace'))

    def _judge(self, script, status, out, err):
        report = sanitizer_report(err.decode('utf-8', 'replace'))
        if report and report[0] != 'leak':
            return self._outcome(*report, out, err)
        answers = out.split(b'\n')[:-1]
        if report and status == LEAK_EXIT:
            status = 128 if answers and answers[-1].startswith(
                b'error ') else 0
        result = self._judge_answers(script, status, answers, out, err)
        if report:
            result.leak = self._outcome(*report, out, err)
        return result

    def _judge_answers(self, script, status, answers, out, err):
        def outcome(kind, detail):
            return self._outcome(kind, detail, out, err)

        if status < 0:
            return outcome('crash', 'signal %d' % -status)
        if status not in (0, 128):
            return outcome('exit', 'status %d' % status)
        last = answers[-1] if answers else b''
        if status == 128 and not last.startswith(b'error '):
            return outcome('no-error', 'exit 128 without an error answer')
        if answers[:len(script.expected)] != script.expected:
            return outcome('misread', 'the answers of harmless lines')
        if script.last == 'echo' and (status != 128 or
                                      last != script.last_answer):
            return outcome('misread', 'an unknown command name')
        if script.last == 'error' and (
                status != 128 or
                not last.startswith(b'error helper command line ')):
            return outcome('misread', 'a line the framing refuses')
        # For the pool of answers seen: numbers and ids blanked.
        shape = last.decode('utf-8', 'replace')[:60]
        return Outcome(None, '%s %s' % (script.last, shape), '', '',
                       accepted=status == 0)
