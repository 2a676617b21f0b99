/* Cleaning up when the helper crashes: see fatal-signal.h. */
#include "git-compat-util.h"
#include "fatal-signal.h"

static void (*fatal_cleanup)(void);
static const int fatal_signals[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
/* What was there before (SIG_DFL, or a sanitizer's handler). */
static struct sigaction previous[ARRAY_SIZE(fatal_signals)];
/* The handler's own stack, so that a stack overflow can still clean up. */
static char alt_stack[64 * 1024];

static void run_cleanup(int signo, siginfo_t *info, void *context UNUSED)
{
	void (*cleanup)(void) = fatal_cleanup;
	size_t i;

	fatal_cleanup = NULL;
	if (cleanup)
		cleanup();
	for (i = 0; i < ARRAY_SIZE(fatal_signals); i++)
		if (fatal_signals[i] == signo)
			sigaction(signo, &previous[i], NULL);
	/*
	 * A fault (si_code > 0) happens again when the handler returns, and
	 * goes to the previous handler with its real context (a sanitizer
	 * then reports it); a sent signal (kill, raise, abort) is sent again.
	 */
	if (!info || info->si_code <= 0)
		raise(signo);
}

void on_fatal_signal(void (*cleanup)(void))
{
	static int installed;
	struct sigaction sa;
	stack_t ss;
	size_t i;

	fatal_cleanup = cleanup;
	if (installed)
		return;
	installed = 1;
	ss.ss_size = sizeof(alt_stack);
	ss.ss_sp = alt_stack;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL))
		warning_errno("cannot set up a signal stack");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = run_cleanup;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(fatal_signals); i++)
		sigaction(fatal_signals[i], &sa, &previous[i]);
}
