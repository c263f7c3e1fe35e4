/*
 * _interrupt.h -- Ctrl-C for the compiled loops of the Cython bindings (not the C core,
 * which sees only an `int *interrupt` it polls).
 *
 * A SIGINT handler is process-wide by nature, so there is one, in linkdyn._kernels, shared
 * by every binding through the capsule "linkdyn._kernels.interrupt_api": enter() before a
 * compiled loop installs the handler when no loop is running (and clears the flag), leave()
 * after it restores the previous handler when the last running loop ends. Both are called
 * with the GIL held, which serialises them; overlapping runs in several threads therefore
 * share one handler and leave Python's in place at the end. Ctrl-C stops every running loop.
 * A binding that reports the interruption to its caller (a loop that stopped for it, a call
 * that saw the flag when it returned) sets *reported; the flag stays set, so that the other
 * running loops stop too. When the last loop leaves, a Ctrl-C that none reported, one that
 * came after every loop's last look at the flag, is handed to Python (PyErr_SetInterrupt: a
 * KeyboardInterrupt at its next check), where the next enter() would have cleared it: in the
 * walker's storm of events, some ten thousand compiled calls a second, the window before
 * leave() had lost one Ctrl-C in a CI run.
 */
#ifndef LINKDYN_INTERRUPT_H
#define LINKDYN_INTERRUPT_H
#include <signal.h>

typedef struct linkdyn_interrupt {
    volatile int *flag;     /* non-zero after Ctrl-C: the loops poll it */
    void (*enter)(void);    /* with the GIL held */
    void (*leave)(void);    /* with the GIL held */
    volatile int *reported; /* set by a binding that reported the Ctrl-C to its caller */
} linkdyn_interrupt;
#endif /* LINKDYN_INTERRUPT_H */

/* The implementation, in linkdyn._kernels only (it may include this header twice). */
#if defined(LINKDYN_INTERRUPT_IMPLEMENTATION) && !defined(LINKDYN_INTERRUPT_IMPLEMENTED)
#define LINKDYN_INTERRUPT_IMPLEMENTED
static volatile int linkdyn_sigint_flag = 0;
static volatile int linkdyn_sigint_reported = 0;
static int linkdyn_sigint_depth = 0;
static void (*linkdyn_sigint_previous)(int) = SIG_DFL;

static void linkdyn_on_sigint(int sig) { (void)sig; linkdyn_sigint_flag = 1; }

static void linkdyn_sigint_enter(void)
{
    if (linkdyn_sigint_depth++ == 0) {
        linkdyn_sigint_flag = linkdyn_sigint_reported = 0;
        linkdyn_sigint_previous = signal(SIGINT, linkdyn_on_sigint);
    }
}

static void linkdyn_sigint_leave(void)
{
    if (linkdyn_sigint_depth > 0 && --linkdyn_sigint_depth == 0) {
        if (linkdyn_sigint_previous != SIG_ERR) signal(SIGINT, linkdyn_sigint_previous);
        if (linkdyn_sigint_flag && !linkdyn_sigint_reported)   /* no binding reported it */
            PyErr_SetInterrupt();
        linkdyn_sigint_flag = linkdyn_sigint_reported = 0;
    }
}

static linkdyn_interrupt linkdyn_interrupt_api = {&linkdyn_sigint_flag, linkdyn_sigint_enter,
                                                  linkdyn_sigint_leave,
                                                  &linkdyn_sigint_reported};
#endif
