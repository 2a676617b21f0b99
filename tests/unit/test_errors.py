"""How failures reach people."""

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cinnabar.errors import Abort, run_guarded


def fails_with(error):
    def main(argv):
        raise error
    return main


def test_abort_with_hint(capsys):
    assert run_guarded(fails_with(Abort('it broke', hint='fix it')), []) == 128
    assert capsys.readouterr().err == 'fatal: it broke\nhint: fix it\n'


def test_bug_says_how_to_see_the_traceback(capsys, monkeypatch):
    monkeypatch.delenv('GIT_CINNABAR_TRACEBACK', raising=False)
    assert run_guarded(fails_with(KeyError('x')), []) == 128
    err = capsys.readouterr().err.splitlines()
    assert err == ["fatal: unexpected error: KeyError: 'x'",
                   'hint: run again with GIT_CINNABAR_TRACEBACK=1 in the '
                   'environment to see the traceback']


def test_traceback_on_request(capsys, monkeypatch):
    monkeypatch.setenv('GIT_CINNABAR_TRACEBACK', '1')
    assert run_guarded(fails_with(KeyError('x')), []) == 128
    assert 'Traceback' in capsys.readouterr().err


def test_success():
    assert run_guarded(lambda argv: None, []) == 0
    assert run_guarded(lambda argv: 3, []) == 3


SIGNALLED_TWICE = '''
import os, sys, time
from cinnabar.errors import run_guarded

def main(argv):
    signo, after = int(argv[0]), float(argv[1])
    try:
        os.kill(os.getpid(), signo)
        time.sleep(5)
    finally:
        # A cleanup that takes `after` seconds, then the same signal
        # again: at once, what git's `git remote-hg` sends its child when
        # the terminal's reached the whole group; later, someone
        # insisting.
        time.sleep(after)
        os.kill(os.getpid(), signo)
        time.sleep(0.2 if after < 1 else 5)
        print('cleaned up', flush=True)

sys.exit(run_guarded(main, sys.argv[1:]))
'''


def signalled_twice(signo, after):
    return subprocess.run(
        [sys.executable, '-S', '-c', SIGNALLED_TWICE, str(int(signo)),
         str(after)],
        capture_output=True, text=True, timeout=60,
        cwd=Path(__file__).resolve().parents[2])


@pytest.mark.parametrize('signo', [signal.SIGINT, signal.SIGTERM,
                                   signal.SIGHUP])
def test_second_signal_does_not_cut_the_cleanup_short(signo):
    """The first signal ends the command; the same signal again, while
    `finally` blocks run, does not interrupt them (a tmp_pack was left
    when it did); then the command ends as git's do, quietly, by the
    first signal."""
    proc = signalled_twice(signo, 0)
    assert proc.stdout == 'cleaned up\n', proc.stderr
    assert proc.stderr == ''
    assert proc.returncode == -signo


@pytest.mark.parametrize('signo', [signal.SIGINT, signal.SIGTERM])
def test_a_signal_again_later_ends_the_cleanup(signo):
    """Past its echo, a second signal ends the process as git's own
    commands end on a second Ctrl-C: by the signal."""
    proc = signalled_twice(signo, 1.5)
    assert proc.stdout == ''
    assert proc.returncode == -signo


def test_handlers_restored_after_the_command():
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    before = {s: signal.getsignal(s) for s in signals}
    assert run_guarded(lambda argv: None, []) == 0
    assert {s: signal.getsignal(s) for s in before} == before
