# Cython declarations of _interrupt.h (Ctrl-C for compiled loops): the shared handler's API,
# reached through the capsule "linkdyn._kernels.interrupt_api".

cdef extern from "_interrupt.h":
    ctypedef struct linkdyn_interrupt:
        volatile int *flag
        void (*enter)()
        void (*leave)()
        volatile int *reported
