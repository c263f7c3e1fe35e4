# cython: language_level=3, boundscheck=False, wraparound=False
"""Binding of Lemke's method (csrc/ld_lcp.c): the work space is allocated here, per call."""

import numpy as np

cdef extern from "ld_lcp.h":
    long ld_lcp_work_size(int n)
    int ld_lemke(int n, const double *M, const double *q, double *z, double *w,
                 int max_pivots, double pivot_tol, double *work, int *iwork,
                 int *pivots) nogil


def lemke(M, q, int max_pivots=0, double pivot_tol=0.0):
    """(status, z, w, pivots) of LCP(M, q); M (n, n) and q (n,) as float64 arrays."""
    cdef const double[:, ::1] Mv = np.ascontiguousarray(M, dtype=np.float64)
    cdef const double[::1] qv = np.ascontiguousarray(q, dtype=np.float64)
    cdef int n = qv.shape[0], pivots = 0, status
    z = np.zeros(max(n, 1))
    w = np.zeros(max(n, 1))
    work = np.zeros(max(1, ld_lcp_work_size(n)))
    iwork = np.zeros(2 * n + 1, dtype=np.intc)
    cdef double[::1] zv = z, wv = w, workv = work
    cdef int[::1] iv = iwork
    cdef const double *Mp = &Mv[0, 0] if n > 0 else NULL
    cdef const double *qp = &qv[0] if n > 0 else NULL
    with nogil:
        status = ld_lemke(n, Mp, qp, &zv[0], &wv[0], max_pivots, pivot_tol, &workv[0],
                          &iv[0], &pivots)
    return status, z[:n], w[:n], pivots
