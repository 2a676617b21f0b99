"""Errors for people, and how a command reports them.

An expected failure raises `Abort(message, hint)`: it is printed as one
`fatal: <message>` line, then `hint: <hint>` when there is one, and the
command exits with status 1. Anything else is a bug: `run_guarded` prints
one line naming it and says how to see the traceback
(GIT_CINNABAR_TRACEBACK=1), or prints the traceback when asked to.
"""

import os
import sys

TRACEBACK_ENV = 'GIT_CINNABAR_TRACEBACK'


class Abort(Exception):
    """An expected failure, with a message for people and an optional hint."""

    def __init__(self, message, hint=None):
        super().__init__(message)
        self.message = message
        self.hint = hint


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised as Ctrl-C raises KeyboardInterrupt, so
    that every `finally` runs (cinnabar.tmpfiles)."""

    def __init__(self, signo):
        super().__init__(signo)
        self.signo = signo


class SettingError(Abort):
    """A setting has a value we do not understand (not a reason to fall
    back to another way of cloning)."""


def _say(line):
    from cinnabar.redact import say
    say(line)


def report_abort(error):
    _say('fatal: %s' % error.message)
    if error.hint:
        for line in error.hint.splitlines():
            _say('hint: %s' % line)


def _traceback_wanted():
    return os.environ.get(TRACEBACK_ENV, '') not in ('', '0', 'false')


def report_bug(error):
    if _traceback_wanted():
        import traceback  # only here: it costs a fetch's start 10 ms
        traceback.print_exc()
        return
    _say('fatal: unexpected error: %s: %s' % (type(error).__name__, error))
    _say('hint: run again with %s=1 in the environment to see the '
         'traceback' % TRACEBACK_ENV)


def _raise_terminated(signo, frame):
    raise Terminated(signo)


def catch_termination():
    """Raise Terminated on SIGTERM and SIGHUP, unless they are ignored
    (nohup)."""
    try:
        import _signal as signals   # as cinnabar.process: not enum
    except ImportError:
        import signal as signals
    for name in ('SIGTERM', 'SIGHUP'):
        signo = getattr(signals, name, None)
        if signo is not None and (signals.getsignal(signo)
                                  == signals.SIG_DFL):
            signals.signal(signo, _raise_terminated)


def run_guarded(main, argv):
    """Run `main(argv)` and turn what it raises into a message and a status."""
    catch_termination()
    try:
        return main(argv) or 0
    except Abort as error:
        report_abort(error)
        return 1
    except KeyboardInterrupt as error:
        _say('fatal: interrupted')
        return 128 + getattr(error, 'signo', 2)
    except BrokenPipeError:
        # Whoever read our output went away; there is nobody to tell, and
        # Python's own flush at exit must not complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as error:
        report_bug(error)
        return 1
