"""Errors for people, and how a command reports them.

An expected failure raises `Abort(message, hint)`: it is printed as one
`fatal: <message>` line, then `hint: <hint>` when there is one, and the
command exits with status 128, as git's `die()` does (or the Abort's
`status`). A command line that makes no sense raises `UsageError(message,
usage)`: the same lines, the usage as the hint, and status 129, as git's
`usage_with_options()`. A system error the machine, not the program, is
to blame for (a disk full or failing, a read-only file system:
`DEVICE_ERRNOS`) is said in one `fatal:` line too (`device_abort`).
Anything else is a bug: `run_guarded` prints one
line naming it and says how to see the traceback
(GIT_CINNABAR_TRACEBACK=1), or prints the traceback when asked to;
status 128 too. Ctrl-C (and SIGTERM, SIGHUP) ends it quietly, by the
signal, once the cleanups have run, as git's own commands end.
"""

import errno
import os
import sys
import time

from cinnabar.process import signals

TRACEBACK_ENV = 'GIT_CINNABAR_TRACEBACK'
# git's exit statuses: die() and usage errors.
FATAL_STATUS = 128
USAGE_STATUS = 129


class Abort(Exception):
    """An expected failure, with a message for people and an optional hint."""

    status = FATAL_STATUS

    def __init__(self, message, hint=None, status=None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if status is not None:
            self.status = status


# The errors of a write the device refused: said as they are, not as bugs.
DEVICE_ERRNOS = frozenset((errno.EIO, errno.ENOSPC, errno.EDQUOT,
                           errno.EROFS, errno.EFBIG))


def device_abort(error):
    """The Abort saying an OSError of DEVICE_ERRNOS, or None."""
    if not isinstance(error, OSError) or error.errno not in DEVICE_ERRNOS:
        return None
    where = ' (%s)' % error.filename if error.filename else ''
    return Abort('cannot write%s: %s' % (where, os.strerror(error.errno)))


def report_failure(error):
    """Say `error` (an Abort, a device error or a bug); its exit
    status."""
    if not isinstance(error, Abort):
        error = device_abort(error) or error
    if isinstance(error, Abort):
        report_abort(error)
        return error.status
    report_bug(error)
    return FATAL_STATUS


class UsageError(Abort):
    """A command line that makes no sense; the hint is the usage."""

    status = USAGE_STATUS


# What a write that fails for want of room or of a working disk raises:
# the machine's state, not a bug.
WRITE_ERRNOS = frozenset(getattr(errno, name) for name in (
    'ENOSPC', 'EDQUOT', 'EIO', 'EFBIG', 'EROFS') if hasattr(errno, name))


def describe_os_error(error, path=None):
    """One line for an OSError of a write: to which file (its own, else
    `path`), and why."""
    why = error.strerror or str(error)
    path = error.filename or path
    if path is None:
        return why
    return "cannot write '%s': %s" % (path, why)


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
    try:
        say(line)
    except OSError:
        pass    # stderr itself fails: there is nobody to tell


def report_abort(error):
    _say('fatal: %s' % error.message)
    if error.hint:
        for line in error.hint.splitlines():
            _say('hint: %s' % line)


def _traceback_wanted():
    return os.environ.get(TRACEBACK_ENV, '') not in ('', '0', 'false')


def report_bug(error):
    if _traceback_wanted():
        import traceback  # only here: it would slow every start
        traceback.print_exc()
        return
    _say('fatal: unexpected error: %s: %s' % (type(error).__name__, error))
    _say('hint: run again with %s=1 in the environment to see the '
         'traceback' % TRACEBACK_ENV)


_caught = []    # the signals catch_termination() handles
_first_at = None    # when the first of them came (time.monotonic())
# Within this many seconds of the first, another is the same one again.
ECHO_SECONDS = 1.0


def _after_first(signo, frame):
    """Another signal while the first one's cleanups run: within
    ECHO_SECONDS, its echo, ignored; later, someone insisting (a second
    Ctrl-C), who gets what git gives: the end, now."""
    if time.monotonic() - _first_at <= ECHO_SECONDS:
        return
    signals.signal(signo, signals.SIG_DFL)
    os.kill(os.getpid(), signo)


def _stop(signo, frame):
    """The first of the signals ends the command; its echo must not cut
    short the cleanups it runs (`finally`, `with`): a terminal's Ctrl-C
    reaches the whole process group, and the `git remote-hg` that runs
    git-remote-hg then sends us the same signal again. Not SIG_IGN, which
    the processes a cleanup starts would inherit."""
    global _first_at
    _first_at = time.monotonic()
    for caught in _caught:
        signals.signal(caught, _after_first)
    if signo == signals.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signo)


def catch_termination():
    """Raise KeyboardInterrupt on SIGINT, Terminated on SIGTERM and
    SIGHUP, once (see _stop), unless they are ignored (nohup) or handled
    otherwise. Returns {signal: its handler before}."""
    before = {}
    for name in ('SIGINT', 'SIGTERM', 'SIGHUP'):
        signo = getattr(signals, name, None)
        if signo is None:
            continue
        handler = signals.getsignal(signo)
        if handler in (signals.SIG_DFL, signals.default_int_handler):
            before[signo] = handler
            signals.signal(signo, _stop)
    _caught[:] = before
    return before


def _restore(handlers):
    for signo, handler in handlers.items():
        signals.signal(signo, handler)
    _caught.clear()


def run_guarded(main, argv):
    """Run `main(argv)` and turn what it raises into a message and a status.

    A signal (Ctrl-C, SIGTERM, SIGHUP) ends the command as it ends git's
    own: quietly (the terminal's user asked for it, and git, which got
    the same Ctrl-C, may have given the shell its prompt back already),
    once the cleanups have run, by the same signal again, with its
    default action, so that our parent sees what killed us."""
    handlers = catch_termination()
    try:
        status, signo = _run(main, argv)
    finally:
        _restore(handlers)
    if signo is not None:
        _die_of(signo)
    return status


def _die_of(signo):
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    signals.signal(signo, signals.SIG_DFL)
    os.kill(os.getpid(), signo)
    # Not reached but where the signal is blocked.
    sys.exit(128 + signo)


def _run(main, argv):
    """(exit status, the signal that ended the command or None)."""
    try:
        return main(argv) or 0, None
    except Abort as error:
        report_abort(error)
        return error.status, None
    except KeyboardInterrupt as error:
        signo = getattr(error, 'signo', signals.SIGINT)
        return 128 + signo, signo
    except BrokenPipeError:
        # Whoever read our output went away; there is nobody to tell, and
        # Python's own flush at exit must not complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141, None
    except OSError as error:
        if error.errno not in WRITE_ERRNOS:
            report_bug(error)
        else:
            _say('fatal: %s' % describe_os_error(error))
        return FATAL_STATUS, None
    except Exception as error:
        return report_failure(error), None
