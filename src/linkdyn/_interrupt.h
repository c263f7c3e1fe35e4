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
 * A binding that reports the interruption (a loop that stopped for it, a call that saw the
 * flag when it returned) clears the flag before leave(); leave() hands a Ctrl-C that no one
 * reported, one that came after the loop's last look at the flag, to Python
 * (PyErr_SetInterrupt: a KeyboardInterrupt at Python's next check), where the next enter()
 * would have cleared it: in the walker's storm of events, some ten thousand compiled calls a
 * second, the window before leave() had lost one Ctrl-C in a CI run.
 */
#ifndef LINKDYN_INTERRUPT_H
#define LINKDYN_INTERRUPT_H
#include <signal.h>

typedef struct linkdyn_interrupt {
    volatile int *flag;     /* non-zero after Ctrl-C: the loops poll it */
    void (*enter)(void);    /* with the GIL held */
    void (*leave)(void);    /* with the GIL held */
} linkdyn_interrupt;
#endif /* LINKDYN_INTERRUPT_H */

/* The implementation, in linkdyn._kernels only (it may include this header twice). */
#if defined(LINKDYN_INTERRUPT_IMPLEMENTATION) && !defined(LINKDYN_INTERRUPT_IMPLEMENTED)
#define LINKDYN_INTERRUPT_IMPLEMENTED
static volatile int linkdyn_sigint_flag = 0;
static int linkdyn_sigint_depth = 0;
static void (*linkdyn_sigint_previous)(int) = SIG_DFL;

static void linkdyn_on_sigint(int sig) { (void)sig; linkdyn_sigint_flag = 1; }

static void linkdyn_sigint_enter(void)
{
    if (linkdyn_sigint_depth++ == 0) {
        linkdyn_sigint_flag = 0;
        linkdyn_sigint_previous = signal(SIGINT, linkdyn_on_sigint);
    }
}

static void linkdyn_sigint_leave(void)
{
    if (linkdyn_sigint_depth > 0 && --linkdyn_sigint_depth == 0) {
        if (linkdyn_sigint_previous != SIG_ERR) signal(SIGINT, linkdyn_sigint_previous);
        if (linkdyn_sigint_flag) {      /* a Ctrl-C no binding reported: Python's */
            linkdyn_sigint_flag = 0;
            PyErr_SetInterrupt();
        }
    }
}

static linkdyn_interrupt linkdyn_interrupt_api = {&linkdyn_sigint_flag, linkdyn_sigint_enter,
                                                  linkdyn_sigint_leave};
#endif
