# Cython declarations of _interrupt.h (Ctrl-C for compiled loops).

cdef extern from "_interrupt.h":
    volatile int linkdyn_sigint_flag
    ctypedef void (*linkdyn_sighandler)(int)
    linkdyn_sighandler linkdyn_install_sigint() nogil
    void linkdyn_restore_sigint(linkdyn_sighandler old) nogil
