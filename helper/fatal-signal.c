/* Cleaning up when the helper crashes: see fatal-signal.h. */
#include "git-compat-util.h"
#include "fatal-signal.h"

static void (*fatal_cleanup)(void);
static const int fatal_signals[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };

static void run_cleanup(int signo)
{
	void (*cleanup)(void) = fatal_cleanup;
	fatal_cleanup = NULL;
	if (cleanup)
		cleanup();
	/* The handler was reset (SA_RESETHAND): this ends the process. */
	raise(signo);
}

void on_fatal_signal(void (*cleanup)(void))
{
	static int installed;
	static char *alt_stack;
	struct sigaction sa;
	stack_t ss;
	size_t i;

	fatal_cleanup = cleanup;
	if (installed)
		return;
	installed = 1;
	ss.ss_size = 64 * 1024;
	alt_stack = xmalloc(ss.ss_size);
	ss.ss_sp = alt_stack;
	ss.ss_flags = 0;
	if (sigaltstack(&ss, NULL))
		warning_errno("cannot set up a signal stack");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = run_cleanup;
	sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(fatal_signals); i++)
		sigaction(fatal_signals[i], &sa, NULL);
}
