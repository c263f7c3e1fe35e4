/*
 * _interrupt.h -- Ctrl-C for the compiled loops of the Cython bindings (not the C core,
 * which sees only an `int *interrupt` it polls). A SIGINT handler is process-wide by nature;
 * each binding module that includes this gets its own flag.
 */
#ifndef LINKDYN_INTERRUPT_H
#define LINKDYN_INTERRUPT_H
#include <signal.h>

typedef void (*linkdyn_sighandler)(int);
static volatile int linkdyn_sigint_flag = 0;

static void linkdyn_on_sigint(int sig) { (void)sig; linkdyn_sigint_flag = 1; }

/* Install the handler for the duration of a loop; returns the previous one. */
static linkdyn_sighandler linkdyn_install_sigint(void)
{
    linkdyn_sigint_flag = 0;
    return signal(SIGINT, linkdyn_on_sigint);
}

static void linkdyn_restore_sigint(linkdyn_sighandler old)
{
    if (old != SIG_ERR) signal(SIGINT, old);
}
#endif
