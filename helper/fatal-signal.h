/*
 * Cleaning up when the helper crashes.
 *
 * git's sigchain covers the signals sent to a process (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT, SIGPIPE); a crash raises others: SIGABRT (BUG(),
 * abort()), SIGSEGV (including a stack overflow), SIGBUS, SIGFPE, SIGILL.
 * on_fatal_signal() runs a cleanup function on those, on a stack of its
 * own (a stack overflow leaves none), then gives the signal to the handler
 * that was there before (the default one, which ends the process: the
 * parent still sees the signal; or a sanitizer's, which reports it).
 *
 * The cleanup runs in a signal handler: it may only call async-signal-safe
 * functions (unlink, close), and must not allocate.
 */
#ifndef CINNABAR_FATAL_SIGNAL_H
#define CINNABAR_FATAL_SIGNAL_H

/* Run `cleanup` on a crash; a later call replaces the function. */
void on_fatal_signal(void (*cleanup)(void));

#endif
