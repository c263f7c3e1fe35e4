# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kinematic sweep of a fully driven model on KLU or straight-line LU code, without the GIL.

At each time: a Taylor predictor from the previous solution (q + v dt + a dt^2 / 2), Newton on
Phi(q, t) = 0 with one numeric refactorisation of Phi_q (the pattern was analysed once) and
further steps on the same factors while they cut the residual tenfold (where the times lie
close, one step on the last solution's factors instead, while it converges); then
Phi_q v = -Phi_t and Phi_q a = gamma with the factors at the solution (equilibrated, below)
and iterative refinement against the Jacobian's values there. The factorisations and solves
are straight-line LU code written for the pattern where linkdyn.solve.lu_code could build it
and its pivots serve (set_lu_code), else KLU's. An estimate of the reciprocal condition number
of Phi_q is recorded at every time: KLU's pivot ratio (klu_rcond) while it exceeds 1e-2, else
the reciprocal of KLU's 1-norm condition estimate (klu_condest); it falls towards zero as the
configuration approaches a singular one. (The pivot ratio alone is not enough: after
refactorisations with old pivots it was measured at 3e-8 on the Jansen linkage where the true
singular-value ratio is 0.018.)
"""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_Import
from libc.float cimport DBL_EPSILON
from libc.math cimport INFINITY, fabs, isfinite
from libc.stdlib cimport free, malloc, realloc

import numpy as np

from linkdyn._interrupt cimport linkdyn_interrupt
from linkdyn._ld_system cimport ld_system

cdef extern from "klu.h":
    ctypedef struct klu_common:
        int status
        int singular_col
        double rcond
        double condest
    ctypedef struct klu_symbolic:
        int *Q                  # column permutation (fixed by the analysis)
    ctypedef struct klu_numeric:
        int *Pnum               # final row permutation
        void *Udiag             # diagonal of U (double for real matrices)
    int KLU_OK
    int klu_defaults(klu_common *c) nogil
    klu_symbolic *klu_analyze(int n, int *Ap, int *Ai, klu_common *c) nogil
    klu_numeric *klu_factor(int *Ap, int *Ai, double *Ax, klu_symbolic *s, klu_common *c) nogil
    int klu_refactor(int *Ap, int *Ai, double *Ax, klu_symbolic *s, klu_numeric *n,
                     klu_common *c) nogil
    int klu_solve(klu_symbolic *s, klu_numeric *n, int ldim, int nrhs, double *B,
                  klu_common *c) nogil
    int klu_rcond(klu_symbolic *s, klu_numeric *n, klu_common *c) nogil
    int klu_condest(int *Ap, double *Ax, klu_symbolic *s, klu_numeric *n, klu_common *c) nogil
    int klu_free_symbolic(klu_symbolic **s, klu_common *c) nogil
    int klu_free_numeric(klu_numeric **n, klu_common *c) nogil

# Sweep status codes (also exported to Python below).
cdef enum:
    OK = 0
    NO_CONVERGENCE = 1
    SINGULAR = 2
    NONFINITE = 3
    INTERRUPTED = 4
    BRANCH = 5

# The solution's factors solve the velocities and accelerations above this condition
# estimate (linkdyn.solve.tracking.SAMPLE_SINGULAR: a sample on a singular configuration).
cdef double SOLUTION_RCOND = 1e-8

STATUS = {OK: "ok", NO_CONVERGENCE: "no convergence", SINGULAR: "singular",
          NONFINITE: "non-finite", INTERRUPTED: "interrupted",
          BRANCH: "branch change"}


cdef linkdyn_interrupt *ctrl_c = <linkdyn_interrupt *> PyCapsule_Import(
    b"linkdyn._kernels.interrupt_api", 0)

# Straight-line LU code for the Jacobian's pattern and one pivot order (linkdyn.solve.lu_code
# writes and compiles it): factor(a, lu, &sign) equilibrates Phi_q's values a (rows, then
# columns, to a largest entry of 1, as _solution_factors does), eliminates in the fixed
# order and returns the pivot ratio min |u_kk| / max |u_kk| (0 at a zero pivot; NaN where a
# value is not finite), sign <- the sign of det Phi_q; solve(lu, x, w) overwrites x with
# Phi_q^-1 x (w: scratch of n).
ctypedef double (*lu_factor_fn)(const double *a, double *lu, int *sign) noexcept nogil
ctypedef void (*lu_solve_fn)(const double *lu, double *x, double *w) noexcept nogil
# residual(a, x, b, r, d): r <- b - Phi_q x, d <- |b| + |Phi_q| |x|, row by row as
# _block_residuals' loop does (the same numbers).
ctypedef void (*lu_residual_fn)(const double *a, const double *x, const double *b, double *r,
                                double *d) noexcept nogil

# The straight-line factors serve Newton while their pivot ratio exceeds NEWTON_PIVOTS (KLU's
# refactorisation keeps its pivots down to the same ratio) and the solution while it exceeds
# FAST_RCOND (the ratio is then the condition estimate, as KLU's is above 1e-2: see
# _condition); below, KLU factorises with fresh pivots and estimates the condition number.
cdef double NEWTON_PIVOTS = 1e-6
cdef double FAST_RCOND = 1e-2
# Positions the sweep waits, after the previous solution's factors failed to converge Newton
# in one step, before it tries them again (see sweep).
cdef int REUSE_WAIT = 32


cdef class KinematicSweep:
    """Workspace of one fully driven model (nq == nc); reusable across sweeps."""

    cdef const ld_system *sys
    cdef object kernels
    cdef klu_common common
    cdef klu_symbolic *sym
    cdef klu_numeric *num         # Newton's factors
    cdef klu_numeric *num_sol     # factors at each solution: the branch's sign, rcond, and
                                  # the solves of v, a (and the parameters' derivatives)
    cdef double *scales           # num_sol's row, then column scales (2 n)
    cdef double *rhs_kept         # -Phi_t, gamma and Phi at the row just solved (3 n), kept
    cdef bint keep_rhs            # where _row_done uses them
    cdef klu_numeric *solve_num   # the factors _refined_solve_block uses (solve_lu's where
    cdef const double *solve_lu   # that is set: straight-line ones),
    cdef const double *solve_rs   # with their row and column scales (NULL: none)
    cdef const double *solve_cs
    cdef double *buf
    cdef double *den              # iterative refinement's backward-error scales (n)
    cdef double berr_floor        # the backward error a residual can resolve
    cdef int den_size
    cdef int *mark
    cdef int *row_ptr             # Phi_q's pattern by rows (the residuals' gathers): each
    cdef int *row_col             # row's entries in column order, their columns and their
    cdef int *row_slot            # places in the column-ordered values
    cdef int perm_sign            # the parities of num_sol's row and the column permutation
    cdef bint perm_stale          # (num_sol freshly factorised since: recount)
    cdef readonly int n, nnz
    cdef readonly long factorizations, iterations
    cdef readonly long solves     # columns solved with solve_num (refinement's included)
    cdef lu_factor_fn lu_factor   # straight-line LU code (NULL: KLU alone; set_lu_code)
    cdef lu_solve_fn lu_solve
    cdef lu_residual_fn lu_residual
    cdef double *lu_newton        # its factors at Newton's iterate, at the last solution and
    cdef double *lu_sol           # a spare for the next solution's, and the solve's scratch
    cdef double *lu_other         # (lu_size each, n doubles)
    cdef double *lu_work
    cdef const double *newton_lu  # the straight-line factors Newton solves with (NULL: num's)
    cdef bint sol_fresh           # lu_sol holds the factors at the last row solved
    cdef readonly long generated_factorizations   # of factorizations, by that code
    cdef readonly int solved      # rows done by the running sweep (read by progress reports)
    cdef public int fail_index

    def __cinit__(self, kernels):
        self.sys = <const ld_system *> PyCapsule_GetPointer(kernels.system_capsule(),
                                                            b"linkdyn.ld_system")
        self.kernels = kernels
        if self.sys.nq != self.sys.nc:
            raise ValueError("kinematic sweep needs as many constraint rows as coordinates")
        self.n = self.sys.nq
        self.nnz = self.sys.phiq_nnz
        klu_defaults(&self.common)
        self.sym = klu_analyze(self.n, <int *> self.sys.phiq_colptr,
                               <int *> self.sys.phiq_rowind, &self.common)
        if self.sym == NULL:
            raise MemoryError("KLU could not analyse the Jacobian pattern")
        self.buf = <double *> malloc((6 * self.n + 2 * self.nnz) * sizeof(double))
        self.mark = <int *> malloc((self.n + 1) * sizeof(int))
        self.den = <double *> malloc((self.n + 1) * sizeof(double))
        self.den_size = self.n + 1
        self.scales = <double *> malloc((2 * self.n + 1) * sizeof(double))
        self.rhs_kept = <double *> malloc((3 * self.n + 1) * sizeof(double))
        if self.buf == NULL or self.mark == NULL or self.den == NULL or self.scales == NULL \
                or self.rhs_kept == NULL:
            raise MemoryError()
        self._row_pattern()
        per_row = np.bincount(np.asarray(<int[:self.nnz]> self.sys.phiq_rowind)
                              if self.nnz else np.zeros(0, dtype=np.intc), minlength=1)
        self.berr_floor = (int(per_row.max()) + 1) * DBL_EPSILON
        self.fail_index = -1
        self.perm_stale = 1

    cdef int _row_pattern(self) except -1:
        """row_ptr, row_col, row_slot: Phi_q's pattern by rows, each row's entries in
        increasing column order, so that a row's sum runs over the same terms in the same
        order as the column-ordered scatter did (the same numbers)."""
        cdef int n = self.n, nnz = self.nnz, k
        self.row_ptr = <int *> malloc((n + 1) * sizeof(int))
        self.row_col = <int *> malloc((nnz + 1) * sizeof(int))
        self.row_slot = <int *> malloc((nnz + 1) * sizeof(int))
        if self.row_ptr == NULL or self.row_col == NULL or self.row_slot == NULL:
            raise MemoryError()
        colptr = np.asarray(<int[:n + 1]> self.sys.phiq_colptr)
        rowind = (np.asarray(<int[:nnz]> self.sys.phiq_rowind) if nnz else
                  np.zeros(0, dtype=np.intc))
        column = np.repeat(np.arange(n, dtype=np.intc), np.diff(colptr))
        order = np.lexsort((column, rowind))        # by row, then column
        ptr = np.concatenate([[0], np.cumsum(np.bincount(rowind, minlength=n))])
        for k in range(n + 1):
            self.row_ptr[k] = ptr[k]
        for k in range(nnz):
            self.row_col[k] = column[order[k]]
            self.row_slot[k] = order[k]
        return 0

    cdef int _reserve(self, int columns) except -1:
        """Room in den for the residual scales of ``columns`` right-hand sides."""
        cdef double *grown
        if columns * self.n + 1 > self.den_size:
            grown = <double *> realloc(self.den, (columns * self.n + 1) * sizeof(double))
            if grown == NULL:
                raise MemoryError()
            self.den, self.den_size = grown, columns * self.n + 1
        return 0

    def __dealloc__(self):
        if self.num != NULL:
            klu_free_numeric(&self.num, &self.common)
        if self.num_sol != NULL:
            klu_free_numeric(&self.num_sol, &self.common)
        if self.sym != NULL:
            klu_free_symbolic(&self.sym, &self.common)
        free(self.buf)
        free(self.den)
        free(self.mark)
        free(self.scales)
        free(self.rhs_kept)
        free(self.row_ptr)
        free(self.row_col)
        free(self.row_slot)
        free(self.lu_newton)
        free(self.lu_sol)
        free(self.lu_other)
        free(self.lu_work)

    def pattern_signature(self):
        """A 64-bit FNV-1a hash of Phi_q's pattern (n, its column pointers and row indices,
        each as four little-endian bytes): straight-line code written for the pattern
        carries it, and set_lu_code refuses code that carries another."""
        cdef unsigned long long h = 14695981039346656037ULL
        cdef int i
        h = _fnv_int(h, self.n)
        h = _fnv_int(h, self.nnz)
        for i in range(self.n + 1):
            h = _fnv_int(h, self.sys.phiq_colptr[i])
        for i in range(self.nnz):
            h = _fnv_int(h, self.sys.phiq_rowind[i])
        return h

    def pattern(self):
        """(n, column pointers, row indices) of Phi_q, as numpy arrays."""
        colptr = np.array(<int[:self.n + 1]> self.sys.phiq_colptr, dtype=np.int64)
        rowind = (np.array(<int[:self.nnz]> self.sys.phiq_rowind, dtype=np.int64)
                  if self.nnz else np.zeros(0, dtype=np.int64))
        return self.n, colptr, rowind

    def pivot_order(self, double t, q):
        """(row order, column order) of KLU's fresh factorisation of the equilibrated Phi_q
        at (t, q): the k-th pivot is the entry of row rows[k] and column cols[k]. None
        where Phi_q does not factor there (or a value is not finite)."""
        cdef const double[::1] qs = np.ascontiguousarray(q, dtype=np.float64)
        cdef double *vals = self.buf + 6 * self.n
        cdef klu_numeric *num = NULL
        cdef int i
        if qs.shape[0] != self.n:
            raise ValueError("pivot_order: q does not match the model")
        self.sys.phi_q(self.sys.user, t, &qs[0], vals)
        for i in range(self.nnz):
            if not isfinite(vals[i]):
                return None
        self._equilibrate(vals, vals + self.nnz)
        num = klu_factor(<int *> self.sys.phiq_colptr, <int *> self.sys.phiq_rowind,
                         vals + self.nnz, self.sym, &self.common)
        if num == NULL:
            return None
        rows = np.array(<int[:self.n]> num.Pnum, dtype=np.int64)
        cols = np.array(<int[:self.n]> self.sym.Q, dtype=np.int64)
        klu_free_numeric(&num, &self.common)
        return rows, cols

    def set_lu_code(self, size_t factor, size_t solve, size_t residual, int size, signature):
        """Use the straight-line LU code at these addresses (linkdyn.solve.lu_code), whose
        factors take ``size`` doubles, for this sweep's factorisations where its pivots
        serve (NEWTON_PIVOTS, FAST_RCOND); refused (False) unless ``signature`` is this
        pattern's."""
        if int(signature) != self.pattern_signature() or factor == 0 or solve == 0 \
                or residual == 0 or size < 2 * self.n:
            return False
        free(self.lu_newton)
        free(self.lu_sol)
        free(self.lu_other)
        free(self.lu_work)
        self.lu_newton = <double *> malloc(size * sizeof(double))
        self.lu_sol = <double *> malloc(size * sizeof(double))
        self.lu_other = <double *> malloc(size * sizeof(double))
        self.lu_work = <double *> malloc((self.n + 1) * sizeof(double))
        if self.lu_newton == NULL or self.lu_sol == NULL or self.lu_other == NULL or \
                self.lu_work == NULL:
            raise MemoryError()
        self.lu_factor = <lu_factor_fn> factor
        self.lu_solve = <lu_solve_fn> solve
        self.lu_residual = <lu_residual_fn> residual
        return True

    def fresh_pivot_ratio(self, double t, q):
        """KLU's pivot ratio (klu_rcond) of a fresh factorisation of the equilibrated Phi_q
        at (t, q): what a pivot order made there gives (0 where it does not factor)."""
        cdef const double[::1] qs = np.ascontiguousarray(q, dtype=np.float64)
        cdef double *vals = self.buf + 6 * self.n
        cdef klu_numeric *num = NULL
        cdef double ratio = 0.0
        cdef int i
        if qs.shape[0] != self.n:
            raise ValueError("fresh_pivot_ratio: q does not match the model")
        self.sys.phi_q(self.sys.user, t, &qs[0], vals)
        for i in range(self.nnz):
            if not isfinite(vals[i]):
                return 0.0
        self._equilibrate(vals, vals + self.nnz)
        num = klu_factor(<int *> self.sys.phiq_colptr, <int *> self.sys.phiq_rowind,
                         vals + self.nnz, self.sym, &self.common)
        if num == NULL:
            return 0.0
        if klu_rcond(self.sym, num, &self.common):
            ratio = self.common.rcond
        klu_free_numeric(&num, &self.common)
        return ratio

    def code_pivot_ratio(self, double t, q):
        """The pivot ratio of the straight-line code's factors of Phi_q at (t, q): how well
        its pivot order serves there (0 without code, or where a value is not finite)."""
        cdef const double[::1] qs = np.ascontiguousarray(q, dtype=np.float64)
        cdef double *vals = self.buf + 6 * self.n
        cdef double ratio
        cdef int sign
        if self.lu_factor == NULL:
            return 0.0
        if qs.shape[0] != self.n:
            raise ValueError("code_pivot_ratio: q does not match the model")
        self.sys.phi_q(self.sys.user, t, &qs[0], vals)
        ratio = self.lu_factor(vals, self.lu_newton, &sign)
        return ratio if ratio > 0.0 else 0.0

    @property
    def lu_kernels(self):
        """"generated" where straight-line LU code is set (set_lu_code), else "klu"."""
        return "generated" if self.lu_factor != NULL else "klu"

    cdef int _factor_newton(self, double *vals) noexcept nogil:
        """Newton's factors of Phi_q's values vals: the straight-line code's while its
        pivots serve (above NEWTON_PIVOTS), else KLU's (_factor_only into num)."""
        cdef int sign
        if self.lu_factor != NULL and \
                self.lu_factor(vals, self.lu_newton, &sign) > NEWTON_PIVOTS:
            self.newton_lu = self.lu_newton
            self.factorizations += 1
            self.generated_factorizations += 1
            return OK
        self.newton_lu = NULL
        return self._factor_only(vals, &self.num)

    cdef void _newton_solve(self, double *x) noexcept nogil:
        """x <- Phi_q^-1 x with Newton's factors."""
        if self.newton_lu != NULL:
            self.lu_solve(self.newton_lu, x, self.lu_work)
        else:
            klu_solve(self.sym, self.num, self.n, 1, x, &self.common)

    cdef void _use_newton_factors(self) noexcept nogil:
        """Solves with Newton's factors from here on."""
        self.solve_lu = self.newton_lu
        self.solve_num, self.solve_rs, self.solve_cs = self.num, NULL, NULL

    cdef int _fast_solution(self, const double *vals, int *det_sign) noexcept nogil:
        """The factors at a solution by the straight-line code where its pivot ratio, then
        the condition estimate (common.rcond), exceeds FAST_RCOND: 1 and det_sign set, the
        solves made with them (solve_lu); else 0 (KLU's factors are wanted)."""
        cdef int sign
        cdef double ratio
        cdef double *spare
        self.sol_fresh = 0
        if self.lu_factor == NULL:
            return 0
        # into the spare: Newton may have solved with lu_sol, the last solution's factors,
        # which a singular sample's solves take as Newton's (_use_newton_factors)
        ratio = self.lu_factor(vals, self.lu_other, &sign)
        if not ratio > FAST_RCOND:
            return 0
        spare = self.lu_sol
        self.lu_sol = self.lu_other
        self.lu_other = spare
        self.sol_fresh = 1
        self.factorizations += 1
        self.generated_factorizations += 1
        self.common.rcond = ratio
        det_sign[0] = sign
        return 1

    cdef int _factor(self, double *vals, klu_numeric **num) noexcept nogil:
        """Factors of vals into *num (a refactorisation with its pivots while their ratio
        stays above 1e-6, else a fresh factorisation); common.rcond <- the condition
        estimate."""
        if self._factor_only(vals, num) != OK:
            return SINGULAR
        return self._condition(vals, num[0])

    cdef int _factor_only(self, double *vals, klu_numeric **num) noexcept nogil:
        """_factor without the condition estimate (common.rcond is then the pivot ratio, or
        stale after a fresh factorisation): for solves that need no estimate."""
        self.factorizations += 1
        if num[0] != NULL:
            if klu_refactor(<int *> self.sys.phiq_colptr, <int *> self.sys.phiq_rowind, vals,
                            self.sym, num[0], &self.common) and self.common.status == KLU_OK:
                klu_rcond(self.sym, num[0], &self.common)
                if self.common.rcond > 1e-6:
                    return OK
            klu_free_numeric(num, &self.common)
        num[0] = klu_factor(<int *> self.sys.phiq_colptr, <int *> self.sys.phiq_rowind, vals,
                            self.sym, &self.common)
        if num == &self.num_sol:    # new pivots (a refactorisation keeps them)
            self.perm_stale = 1
        if num[0] == NULL:
            self.fail_index = self.common.singular_col
            return SINGULAR
        return OK

    cdef int _condition(self, double *vals, klu_numeric *num) noexcept nogil:
        """common.rcond <- an estimate of the reciprocal condition number. Near-singular
        matrices have a small pivot under partial pivoting, so while the pivot ratio stays
        above 1e-2 it is kept as the estimate; below that, 1 / klu_condest (1-norm) replaces
        it (a few solves; the pivot ratio alone is too pessimistic after refactorisations)."""
        klu_rcond(self.sym, num, &self.common)
        if self.common.rcond > 1e-2:
            return 0
        if klu_condest(<int *> self.sys.phiq_colptr, vals, self.sym, num, &self.common):
            self.common.rcond = 1.0 / self.common.condest if self.common.condest > 0 else 0.0
        return 0

    cdef int _solution_factors(self, const double *vals, double *scaled) noexcept nogil:
        """The factors at a solution (num_sol: the branch's sign and the condition estimate)
        of Phi_q with each row, then each column, scaled to a largest entry of 1: the units
        of the rows and coordinates then leave the estimate alone. Unscaled, a linkage
        described in millimetres instead of metres had estimates 1000 times smaller (rows of
        squared distances against rows of unit vectors or a link's basis, columns of points
        against columns of unit vectors; the 1-norm estimate sees both) and false singular
        configurations below the threshold. Positive scales keep det's sign. The scales are
        kept in ``scales`` for the solves with these factors (_use_solution_factors)."""
        self._equilibrate(vals, scaled)
        return self._factor(scaled, &self.num_sol)

    cdef void _equilibrate(self, const double *vals, double *scaled) noexcept nogil:
        """scaled <- Phi_q's values vals with each row, then each column, scaled to a
        largest entry of 1; the scales into ``scales`` (rows, then columns)."""
        cdef const int *cp = self.sys.phiq_colptr
        cdef const int *ri = self.sys.phiq_rowind
        cdef double *row = self.scales
        cdef double *col = self.scales + self.n
        cdef int j, p
        cdef double m
        for j in range(self.n):
            row[j] = 0.0
        for j in range(self.n):
            for p in range(cp[j], cp[j + 1]):
                m = fabs(vals[p])
                row[ri[p]] = m if m > row[ri[p]] else row[ri[p]]
        for j in range(self.n):
            row[j] = 1.0 / row[j] if row[j] > 0.0 else 1.0
        for j in range(self.n):
            m = 0.0
            for p in range(cp[j], cp[j + 1]):
                scaled[p] = vals[p] * row[ri[p]]
                m = fabs(scaled[p]) if fabs(scaled[p]) > m else m
            m = 1.0 / m if m > 0.0 else 1.0
            col[j] = m
            for p in range(cp[j], cp[j + 1]):
                scaled[p] *= m

    cdef void _use_solution_factors(self) noexcept nogil:
        """Solves with num_sol from here on: Phi_q = R^-1 S C^-1 for the equilibrated S
        that num_sol factors, so Phi_q^-1 b = C S^-1 R b."""
        self.solve_num = self.num_sol
        self.solve_lu = NULL
        self.solve_rs = self.scales
        self.solve_cs = self.scales + self.n

    cdef void _solve(self, double *X, int nrhs) noexcept nogil:
        """X (n x nrhs) <- Phi_q^-1 X with the factors solve_num (and its scales)."""
        cdef int i, c, n = self.n
        if self.solve_lu != NULL:
            for c in range(nrhs):
                self.lu_solve(self.solve_lu, &X[c * n], self.lu_work)
            self.solves += nrhs
            return
        if self.solve_rs != NULL:
            for c in range(nrhs):
                for i in range(n):
                    X[c * n + i] *= self.solve_rs[i]
        klu_solve(self.sym, self.solve_num, n, nrhs, X, &self.common)
        self.solves += nrhs
        if self.solve_cs != NULL:
            for c in range(nrhs):
                for i in range(n):
                    X[c * n + i] *= self.solve_cs[i]

    cdef int _parity(self, const int *perm) noexcept nogil:
        """+1 for an even permutation of 0..n-1, -1 for an odd one (from its cycles)."""
        cdef int i, j, length, sign = 1
        for i in range(self.n):
            self.mark[i] = 0
        for i in range(self.n):
            if self.mark[i]:
                continue
            j = i
            length = 0
            while not self.mark[j]:
                self.mark[j] = 1
                j = perm[j]
                length += 1
            if length % 2 == 0:
                sign = -sign
        return sign

    cdef int _det_sign(self) noexcept nogil:
        """Sign of det(Phi_q) from the factors at the solution: R P A Q = L U with L unit lower
        triangular and positive row scales R, so sign det A = sign(prod diag U) times the
        parities of P and Q. Along a branch of positions it stays constant; it flips across a
        limit position (the two branches meeting there) and where the branch itself passes a
        singular configuration. The permutations' parities are counted again only after a
        fresh factorisation (a refactorisation keeps the pivots; Q is the analysis')."""
        cdef const double *d = <const double *> self.num_sol.Udiag
        cdef int i, sign
        if self.perm_stale:
            self.perm_sign = self._parity(self.num_sol.Pnum) * self._parity(self.sym.Q)
            self.perm_stale = 0
        sign = self.perm_sign
        for i in range(self.n):
            if d[i] < 0.0:
                sign = -sign
            elif d[i] == 0.0:
                return 0
        return sign

    cdef int _block_residuals(self, const double *X, const double *B, double *R,
                              double *active, int nrhs, const double *vals) noexcept nogil:
        """The residuals of _refined_solve_block's active columns (a sparse product each, row
        by row: a row's sum and its absolute sum stay in registers, where the column-ordered
        scatter stored both at every entry; one pass over Phi_q for all columns, its inner
        loop over the columns, was 5 to 10% slower), packed into R's leading columns. A
        column whose componentwise
        backward error max_i |r_i| / (|Phi_q| |x| + |b|)_i is within the rounding of its own
        evaluation (a row's sum of m + 1 terms: m + 1 units of round-off, m the most entries
        of a row) is done, active[c] cleared: its residual is noise, and so would be a
        correction. Returns the number of columns still active."""
        cdef int n = self.n, i, c, k, na = 0
        cdef double ax, ri, di
        cdef double *den = self.den
        cdef double *r
        cdef double *d
        cdef const double *x
        cdef const int *rp = self.row_ptr
        cdef const int *rc = self.row_col
        cdef const int *rs = self.row_slot
        for c in range(nrhs):     # a column at a time: one sparse product each
            if active[c] == 0.0:
                continue
            r, d, x = &R[c * n], &den[c * n], &X[c * n]
            if self.lu_residual != NULL:
                self.lu_residual(vals, x, &B[c * n], r, d)
                continue
            for i in range(n):
                ri = B[c * n + i]
                di = fabs(ri)
                for k in range(rp[i], rp[i + 1]):
                    ax = vals[rs[k]] * x[rc[k]]
                    ri -= ax
                    di += fabs(ax)
                r[i] = ri
                d[i] = di
        for c in range(nrhs):
            if active[c] == 0.0:
                continue
            if _backward_error(&R[c * n], &den[c * n], n) <= self.berr_floor:
                active[c] = 0.0
                continue
            if na != c:
                for i in range(n):
                    R[na * n + i] = R[c * n + i]
            na += 1
        return na

    cdef void _refined_solve_block(self, double *X, double *B, double *R, double *active,
                                   int nrhs, const double *vals) noexcept nogil:
        """X (n x nrhs, a column each) <- Phi_q^{-1} X, Phi_q given by vals, with the factors
        solve_num (made at vals, or at a nearby configuration) and iterative refinement, the
        solves of all columns in one call: each column is refined until its backward error
        is within the rounding of its residual or its correction reaches round-off, the
        columns still refining gathered into R. B, R: scratch of n x nrhs each (B may hold
        X's values already); active: nrhs."""
        cdef int i, c, sweep, n = self.n, na = nrhs
        cdef double dx, xm
        cdef double *x
        cdef double *r
        if nrhs <= 0:
            return
        for i in range(n * nrhs):
            B[i] = X[i]
        self._solve(X, nrhs)
        for c in range(nrhs):
            active[c] = 1.0
        for sweep in range(10):
            na = self._block_residuals(X, B, R, active, nrhs, vals)
            if na == 0:
                break
            self._solve(R, na)
            na = 0
            for c in range(nrhs):
                if active[c] == 0.0:
                    continue
                r, x = &R[na * n], &X[c * n]
                dx = 0.0
                xm = 0.0
                for i in range(n):
                    x[i] += r[i]
                    dx = fabs(r[i]) if fabs(r[i]) > dx else dx
                    xm = fabs(x[i]) if fabs(x[i]) > xm else xm
                if dx <= 1e-15 * xm:
                    active[c] = 0.0
                na += 1

    cdef int _row_done(self, int k, double t, const double *q, const double *v,
                       const double *a, const double *vals, const double *kept) noexcept nogil:
        """Called with each row of a sweep once it is solved (vals: Phi_q there, whose
        factors are the solves' current ones; kept: -Phi_t, gamma and Phi there where
        keep_rhs is set); a status other than OK stops the sweep."""
        return OK

    cdef double _roundoff_floor(self, const double *q, const double *vals,
                                double *acc) noexcept nogil:
        """The largest residual Phi(q) rounds to near q: a row is a sum of terms as large as
        |Phi_q| |q| (a squared distance |p1 - p2|^2 - L^2 in coordinates of size s: some
        s^2, above the test tol max(1, |q|) from s of about 10 on), each rounded, so its
        computed value is noise below berr_floor times that. acc: scratch (n)."""
        cdef int n = self.n, j, p
        cdef double m = 0.0
        cdef const int *cp = self.sys.phiq_colptr
        cdef const int *ri = self.sys.phiq_rowind
        for j in range(n):
            acc[j] = 0.0
        for j in range(n):
            for p in range(cp[j], cp[j + 1]):
                acc[ri[p]] += fabs(vals[p] * q[j])
        for j in range(n):
            m = acc[j] if acc[j] > m else m
        return self.berr_floor * m

    def sweep(self, const double[::1] times, q0, double[:, ::1] Q, double[:, ::1] V,
              double[:, ::1] A, double[::1] rcond, signed char[::1] sign, double tol=1e-14,
              int max_iter=20, law_table=None, int sign0=0):
        """Fill rows of Q, V, A, rcond and sign (of det Phi_q) for each time; returns
        (status, rows done). ``law_table`` (len(times), 3 * nlaw) holds the values of
        caller-evaluated laws at each time; they are copied into the kernels' law_values
        before that time is solved. The sweep stops with BRANCH at the first time whose sign
        differs from the previous time's (from ``sign0`` at the first time, unless 0): the
        new positions are on another branch, reached by a jump across a limit position or
        by passing a singular configuration; the caller tells them apart. A row is complete
        (its _row_done too: a sensitivity sweep's derivatives) before it counts as done."""
        cdef double[::1] lv = self.kernels.law_values
        cdef const double[:, ::1] table
        cdef int use_table = law_table is not None
        cdef int nl = lv.shape[0], j
        if use_table:
            table = np.ascontiguousarray(law_table, dtype=np.float64)
            if table.shape[0] != times.shape[0] or table.shape[1] > nl:
                raise ValueError("sweep: law_table has the wrong shape")
            nl = table.shape[1]
        cdef const double[::1] qs = np.ascontiguousarray(q0, dtype=np.float64)
        cdef int n = self.n, nt = times.shape[0], k = 0, it, i, status = OK
        cdef double *q = self.buf
        cdef double *r = self.buf + n
        cdef double *v = self.buf + 2 * n
        cdef double *a = self.buf + 3 * n
        cdef double *rhs = self.buf + 4 * n
        cdef double *tmp = self.buf + 5 * n
        cdef double *vals = self.buf + 6 * n
        cdef double t, dt, rn, rn_prev, scale
        cdef double one                 # the refined solves' flag of their one column
        cdef int factored, fresh, fast, reused, wait = 0, det_sign = 0, prev_sign = sign0
        if qs.shape[0] != n or Q.shape[0] < nt or Q.shape[1] != n or sign.shape[0] < nt:
            raise ValueError("sweep: array sizes do not match the model")
        self.fail_index = -1
        self.solved = 0
        self.sol_fresh = 0
        ctrl_c.enter()   # nothing in the compiled loop below raises: leave() always runs
        with nogil:
            for i in range(n):
                q[i] = qs[i]
            for k in range(nt):
                if ctrl_c.flag[0]:
                    status = INTERRUPTED
                    ctrl_c.reported[0] = 1  # (see _interrupt.h)
                    break
                t = times[k]
                if use_table:
                    for j in range(nl):
                        lv[j] = table[k, j]
                if k > 0:
                    dt = t - times[k - 1]
                    for i in range(n):
                        q[i] += v[i] * dt + 0.5 * a[i] * dt * dt
                factored = 0
                fresh = 0
                rn_prev = 0.0
                # Closely spaced times (a predictor error far below the tolerance) converge
                # in one step on the last solution's factors, without a factorisation of
                # their own: tried while they do (on the crank-rocker from some 30,000
                # positions a turn on: 1.06 factorisations a position instead of 2), else
                # again after REUSE_WAIT positions (at 10,000 a turn: 3% more Newton steps).
                reused = 0
                if wait > 0:
                    wait -= 1
                elif self.sol_fresh:
                    self.newton_lu = self.lu_sol
                    factored = 1
                    reused = 1
                for it in range(max_iter + 1):
                    self.sys.phi(self.sys.user, t, q, r)
                    rn = 0.0
                    scale = 1.0
                    for i in range(n):
                        if not isfinite(r[i]):
                            rn = -1.0
                            break
                        rn = fabs(r[i]) if fabs(r[i]) > rn else rn
                        scale = fabs(q[i]) if fabs(q[i]) > scale else scale
                    if rn < 0.0:
                        status = NONFINITE
                        break
                    if rn <= tol * scale and factored:
                        break
                    # At the residual's round-off (see _roundoff_floor, from the last factors'
                    # values, and only where Newton has stalled): a step on fresh factors no
                    # longer cuts it, and the position is as good as it gets.
                    if fresh and rn > 0.5 * rn_prev and \
                            rn <= self._roundoff_floor(q, vals, rhs):
                        break
                    if it == max_iter:
                        status = NO_CONVERGENCE
                        break
                    # Newton with a fresh factorisation first; after that, steps on the same
                    # factors while they still cut the residual tenfold (modified Newton).
                    fresh = 0
                    if reused and it > 0:   # one step on the last solution's factors: short
                        reused = 0
                        factored = 0
                        wait = REUSE_WAIT
                    if not factored or (not reused and rn > 0.1 * rn_prev):
                        self.sys.phi_q(self.sys.user, t, q, vals)
                        status = self._factor_newton(vals)   # (rcond: num_sol's)
                        if status != OK:
                            break
                        factored = 1
                        fresh = 1
                    rn_prev = rn
                    self.iterations += 1
                    for i in range(n):
                        tmp[i] = r[i]
                    self._newton_solve(tmp)
                    for i in range(n):
                        q[i] -= tmp[i]
                if status != OK:
                    break
                # Factors at the solution: the branch's sign and the condition estimate
                # belong to it, not to an iterate on the way (after a jump across a limit
                # position the predictor lies between the branches). Velocities and
                # accelerations are solved with them too (with Newton's factors, made at the
                # predictor, their refinement took two more solves a position), except at a
                # sample on a singular configuration (below SOLUTION_RCOND), where there
                # are no unique velocities: Newton's factors, off it, give the ones along
                # the branch that the sweep came on, as they always did.
                self.sys.phi_q(self.sys.user, t, q, vals)
                fast = self._fast_solution(vals, &det_sign)
                if not fast:
                    status = self._solution_factors(vals, vals + self.nnz)
                    if status != OK:
                        break
                    det_sign = self._det_sign()
                if det_sign != 0 and prev_sign != 0 and det_sign != prev_sign:
                    status = BRANCH
                    break
                if det_sign != 0:
                    prev_sign = det_sign
                sign[k] = det_sign
                rcond[k] = self.common.rcond
                if fast:
                    self.solve_lu, self.solve_rs, self.solve_cs = self.lu_sol, NULL, NULL
                elif self.common.rcond >= SOLUTION_RCOND:
                    self._use_solution_factors()
                else:
                    self._use_newton_factors()
                self.sys.phi_t(self.sys.user, t, q, rhs)
                for i in range(n):
                    rhs[i] = -rhs[i]
                for i in range(n):
                    v[i] = rhs[i]
                if self.keep_rhs:
                    for i in range(n):
                        self.rhs_kept[i] = rhs[i]
                self._refined_solve_block(v, rhs, tmp, &one, 1, vals)
                self.sys.gamma(self.sys.user, t, q, v, rhs)
                for i in range(n):
                    a[i] = rhs[i]
                if self.keep_rhs:
                    for i in range(n):
                        self.rhs_kept[n + i] = rhs[i]
                        self.rhs_kept[2 * n + i] = r[i]     # Phi at q: Newton's last
                self._refined_solve_block(a, rhs, tmp, &one, 1, vals)
                status = self._row_done(k, t, q, v, a, vals, self.rhs_kept)
                if status != OK:
                    break
                for i in range(n):
                    Q[k, i] = q[i]
                    V[k, i] = v[i]
                    A[k, i] = a[i]
                self.solved = k + 1
        ctrl_c.leave()
        return status, (k if status != OK else nt)



# ---------------------------------------------------------------------------------------------
# Sensitivities of a sweep to design parameters (linkdyn.design.sensitivity): the implicit
# function theorem on the sweep's solution, one factorisation of Phi_q per time serving every
# parameter, with the parameters' derivatives of the residuals as weighted sums of kernels'
# residuals (members compiled at shifted parameter values, or kernels of the derivatives
# themselves). Either in the analysis' own sweep, with its factors at each solution
# (SensitivitySweep.attach), or afterwards at given rows (SensitivitySweep.derivatives).


cdef inline void _jacobian_pair(const ld_system *s, const double *v, const double *a,
                                const double *vals, double *rv, double *ra) noexcept nogil:
    """rv = Phi_q v and ra = Phi_q a, one pass over the Jacobian's values vals (on s's
    pattern)."""
    cdef int i, j, p
    cdef double x, vj, aj
    cdef const int *cp = s.phiq_colptr
    cdef const int *ri = s.phiq_rowind
    for i in range(s.nc):
        rv[i] = 0.0
        ra[i] = 0.0
    for j in range(s.nq):
        vj, aj = v[j], a[j]
        for p in range(cp[j], cp[j + 1]):
            x = vals[p]
            rv[ri[p]] += x * vj
            ra[ri[p]] += x * aj


cdef inline void _pair_from_values(const ld_system *s, double t, const double *q,
                                   const double *v, const double *a, const double *vals,
                                   double *tmp, double *rv, double *ra) noexcept nogil:
    """rv = Phi_q(q, t) v + Phi_t(q, t) and ra = Phi_q(q, t) a - gamma(q, v, t), given the
    Jacobian's values at (q, t) in vals (on s's pattern)."""
    cdef int i
    _jacobian_pair(s, v, a, vals, rv, ra)
    s.phi_t(s.user, t, q, tmp)
    for i in range(s.nc):
        rv[i] += tmp[i]
        tmp[i] = 0.0        # gamma writes the rows of its kernels' families only
    s.gamma(s.user, t, q, v, tmp)
    for i in range(s.nc):
        ra[i] -= tmp[i]


cdef inline void _pair_from_kept(const ld_system *s, const double *v, const double *a,
                                 const double *vals, const double *kept, double *rv,
                                 double *ra) noexcept nogil:
    """_pair_from_values with -Phi_t and gamma already evaluated (kept[:nc], kept[nc:]):
    the same operations on the same numbers."""
    cdef int i
    _jacobian_pair(s, v, a, vals, rv, ra)
    for i in range(s.nc):
        rv[i] -= kept[i]
        ra[i] -= kept[s.nc + i]


cdef inline void _residual_pair(const ld_system *s, double t, const double *q,
                                const double *v, const double *a, double *vals,
                                double *tmp, double *rv, double *ra) noexcept nogil:
    """rv = Phi_q(q, t) v + Phi_t(q, t) and ra = Phi_q(q, t) a - gamma(q, v, t), with one
    evaluation of the Jacobian's values (vals: a buffer of s's nnz)."""
    s.phi_q(s.user, t, q, vals)
    _pair_from_values(s, t, q, v, a, vals, tmp, rv, ra)


cdef inline void _member_residuals(const ld_system *s, double t, const double *q,
                                   const double *v, const double *a, double *vals,
                                   double *tmp, double *r3) noexcept nogil:
    """r3[3 nc] <- [Phi, Phi_q v + Phi_t, Phi_q a - gamma] of member s at the row."""
    s.phi(s.user, t, q, r3)
    _residual_pair(s, t, q, v, a, vals, tmp, r3 + s.nc, r3 + 2 * s.nc)


cdef inline void _restricted_residuals(const ld_system *s, double t, const double *q,
                                       const double *v, const double *a, double *vals,
                                       double *tmp, double *r3, const int *rows, int nrows,
                                       const int *slots, const int *slot_col,
                                       int nslots) noexcept nogil:
    """_member_residuals of a member restricted to some rows (linkdyn.compile.rows), which
    writes only those rows and their Jacobian slots: on them alone. The rest of r3 is
    never written (zero from the start, as every other row's weighted sum is), and the
    products Phi_q v and Phi_q a run over its slots, not the whole pattern (with every row
    zeroed and the whole pattern multiplied, a restricted member cost as much as a whole
    one on the Jansen linkage)."""
    cdef int n = s.nc, i, k, row
    cdef double x
    for i in range(nrows):
        row = rows[i]
        r3[n + row] = 0.0
        r3[2 * n + row] = 0.0
        tmp[row] = 0.0
    for k in range(nslots):         # (the scratch holds other members' values)
        vals[slots[k]] = 0.0
    s.phi(s.user, t, q, r3)
    s.phi_q(s.user, t, q, vals)
    for k in range(nslots):
        row = s.phiq_rowind[slots[k]]
        x = vals[slots[k]]
        r3[n + row] += x * v[slot_col[k]]
        r3[2 * n + row] += x * a[slot_col[k]]
    s.phi_t(s.user, t, q, tmp)
    for i in range(nrows):
        row = rows[i]
        r3[n + row] += tmp[row]
        tmp[row] = 0.0
    s.gamma(s.user, t, q, v, tmp)
    for i in range(nrows):
        row = rows[i]
        r3[2 * n + row] -= tmp[row]


cdef inline unsigned long long _fnv_int(unsigned long long h, int v) noexcept nogil:
    """FNV-1a over v's four little-endian bytes."""
    cdef unsigned int u = <unsigned int> v
    cdef int b
    for b in range(4):
        h = (h ^ ((u >> (8 * b)) & 0xFF)) * 1099511628211ULL
    return h


cdef inline double _backward_error(const double *r, const double *den, int n) noexcept nogil:
    """max_i |r_i| / den_i (0 / 0 counted as 0, r_i / 0 as infinite)."""
    cdef int i
    cdef double berr = 0.0
    for i in range(n):
        if fabs(r[i]) > berr * den[i]:
            berr = fabs(r[i]) / den[i] if den[i] > 0.0 else INFINITY
    return berr


cdef inline double _inf_norm(const double *x, int n) noexcept nogil:
    cdef int i
    cdef double m = 0.0
    for i in range(n):
        m = fabs(x[i]) if fabs(x[i]) > m else m
    return m


# From this many parameters on, the sensitivity sweep of a model affine in q forms rv_q and
# ra_q once a row (a fixed two Jacobians and a residual pair per time column) instead of
# differencing along each parameter's dq (a residual pair and two gammas each).
cdef enum:
    MATRIX_PARAMETERS = 3


cdef inline void _jacobian_times(const ld_system *s, const double *vals, const double *cols,
                                 const int *time_cols, int nt_cols, const double *x,
                                 double alpha, double *out) noexcept nogil:
    """out[nc] += alpha J x, J given by vals on s's pattern (zero in the time columns) and
    by the dense columns ``cols`` (nc x nt_cols, a column each) in the time columns."""
    cdef int i, j, p, nc = s.nc
    cdef double xj
    cdef const int *cp = s.phiq_colptr
    cdef const int *ri = s.phiq_rowind
    for j in range(s.nq):
        xj = alpha * x[j]
        if xj != 0.0:
            for p in range(cp[j], cp[j + 1]):
                out[ri[p]] += vals[p] * xj
    for j in range(nt_cols):
        xj = alpha * x[time_cols[j]]
        if xj != 0.0:
            for i in range(nc):
                out[i] += cols[j * nc + i] * xj


cdef struct deriv_ws:
    # what one row's derivatives need (a DerivativePlan's, pointers into its arrays)
    int p, nm, nt_cols, affine, own, base
    int order                       # the highest time derivative formed: 0 dq, 1 dv, 2 da
    const int *rows                 # (restricted members) the rows they write, or NULL
    int nrows
    const int *slots                # (restricted) their Jacobian slots, and each one's column
    const int *slot_col
    int nslots
    const ld_system **sys           # [nm] the members' systems
    const int *move_start           # [p + 1] (point moves) parameter j: its moves
    const int *move_row             # a move's revolute joint: its first row (x, then y)
    const int *move_body            # the side's planar body (-1: the ground)
    const double *move_d            # [2 per move] the side's local point's derivative
                                    # (times the side's sign): (d xi, d eta)
    const int *start                # [p + 1] parameter j: its terms start[j] .. start[j + 1]
    const int *member_index         # a term's member
    const double *weight            # a term's weight
    const int *time_cols            # [nt_cols] (affine: the columns a time factor multiplies)
    double *mres                    # [3 n nm] every member's residuals at the row
    double *jac                     # the base's Jacobian at the row (standalone rows)
    double *mvals                   # any system's Jacobian values (scratch)
    double *g
    double *z
    double *qp
    double *qm
    double *tmp
    double *rv0                     # the row's own Phi_q v + Phi_t and Phi_q a - gamma
    double *ra0
    double *F                       # n x p blocks, a parameter a column: -Phi_p, then dq
    double *X                       # -(Phi_q v + Phi_t)_{q,p}, then dv
    double *Y                       # -(Phi_q a - gamma)_{q,v,p}, then da
    double *B                       # the right-hand sides being refined
    double *R                       # their residuals (scratch)
    double *active                  # per column: still refining
    double *Rv                      # rv_q, ra_q on the base's pattern (zero in the time
    double *Ra                      # columns)
    double *Cv                      # rv_q, ra_q in the time columns (dense)
    double *Ca
    double *size                    # [p] the largest |Phi_p| met
    double *pt0                     # -Phi_t and gamma at a standalone row (affine in q,
    double *g0                      # from one parameter to MATRIX_PARAMETERS - 1)


cdef inline void _add_moves(const deriv_ws *w, int j, int n, const double *q,
                            const double *v, const double *a) noexcept nogil:
    """Parameter j's point moves (DerivativePlan's notes) added to its columns of w.F,
    w.X, w.Y (Phi_p and its rates' derivatives, before their sign is turned)."""
    cdef int k, r, o
    cdef double dx, dy
    for k in range(w.move_start[j], w.move_start[j + 1]):
        r, dx, dy = j * n + w.move_row[k], w.move_d[2 * k], w.move_d[2 * k + 1]
        if w.move_body[k] < 0:
            w.F[r] += dx
            w.F[r + 1] += dy
            continue
        o = 4 * w.move_body[k] + 2
        w.F[r] += dx * q[o] - dy * q[o + 1]
        w.F[r + 1] += dx * q[o + 1] + dy * q[o]
        w.X[r] += dx * v[o] - dy * v[o + 1]
        w.X[r + 1] += dx * v[o + 1] + dy * v[o]
        w.Y[r] += dx * a[o] - dy * a[o + 1]
        w.Y[r + 1] += dx * a[o + 1] + dy * a[o]


cdef inline void _store_row(const deriv_ws *w, int n, int k, double[:, :, ::1] dQ,
                            double[:, :, ::1] dV, double[:, :, ::1] dA) noexcept nogil:
    """Row k of dQ, dV, dA (rows, n, p) <- the row's derivatives in w.F, w.X, w.Y, up to
    the plan's order (dV, dA unused above it)."""
    cdef int i, j
    for j in range(w.p):
        for i in range(n):
            dQ[k, i, j] = w.F[j * n + i]
    if w.order >= 1:
        for j in range(w.p):
            for i in range(n):
                dV[k, i, j] = w.X[j * n + i]
    if w.order >= 2:
        for j in range(w.p):
            for i in range(n):
                dA[k, i, j] = w.Y[j * n + i]


cdef class DerivativePlan:
    """The terms of p parameters' derivatives of the rows and the work space to form them:
    parameter j's residual derivatives are sum_k weight[k] F(members[member_index[k]]) over
    k in start[j] .. start[j + 1] (F: Phi, Phi_q v + Phi_t and Phi_q a - gamma). ``base``:
    the model's own kernels; a member that is the model (every forward difference) is
    evaluated once a row with the sweep's own system. ``affine_q`` and ``time_cols`` as
    SensitivitySweep.derivatives describes them. ``rows``: None, or the rows that the
    members, restricted to the rows where they differ (linkdyn.compile.rows), write; every
    member then has the model's pattern, and is evaluated on those rows alone (their other
    rows count as zero, which is what every other row's weighted sum is: the weights of a
    difference add up to zero, and those rows are the same in every member). ``moves``:
    None, or (start[p + 1], row, body, d) of parameters that move local points of a planar
    model's revolute joints (linkdyn.design.derivative_sweep._point_moves): parameter j's
    moves are start[j] .. start[j + 1], each a side of the joint whose rows are row,
    row + 1, on planar body ``body`` (-1: the ground), its local point's derivative (times
    the side's sign) d[2 k], d[2 k + 1] = (dxi, deta). Those rows are linear in q and in
    the point (x + xi ux - eta uy, y + xi uy + eta ux on a body; the point itself on the
    ground), so the move adds (dxi ux - deta uy, dxi uy + deta ux) to Phi_p, the same with
    u's rates to (Phi_q v + Phi_t)_p and with its accelerations to (Phi_q a - gamma)_p
    (gamma is zero on these rows); nothing on the ground but (dxi, deta) to Phi_p. They
    add to the members' terms (a plan of moves alone has no members). ``order``: the
    highest time derivative formed, 0 (dq), 1 (and dv) or 2 (and da): each order is one
    more solve a row (the arrays of the orders above it have no columns). ``size[j]``
    gets the largest |Phi_p| met over every row the plan served. A plan belongs to one
    run: its work space is not shared."""

    cdef deriv_ws ws
    cdef const ld_system **sys
    cdef object members, arrays, work, mres
    cdef readonly object size
    cdef readonly int n, p, order

    def __cinit__(self, base, members, start, member_index, weight, int affine_q=0,
                  time_cols=None, rows=None, moves=None, int order=2):
        cdef const ld_system *own = <const ld_system *> PyCapsule_GetPointer(
            base.system_capsule(), b"linkdyn.ld_system")
        cdef int n = own.nq, nm = len(members), m, i, maxnnz = own.phiq_nnz
        cdef int p = len(start) - 1
        self.members = list(members)
        self.sys = <const ld_system **> malloc((nm + 1) * sizeof(void *))
        if self.sys == NULL:
            raise MemoryError()
        self.ws.base = -1
        for m in range(nm):
            self.sys[m] = <const ld_system *> PyCapsule_GetPointer(
                self.members[m].system_capsule(), b"linkdyn.ld_system")
            if self.sys[m].nq != n or self.sys[m].nc != n:
                raise ValueError("a member model has other coordinates or rows")
            maxnnz = self.sys[m].phiq_nnz if self.sys[m].phiq_nnz > maxnnz else maxnnz
            if self.sys[m] == own:
                self.ws.base = m
        if affine_q and time_cols is None:
            raise ValueError("derivatives: affine_q needs time_cols")
        if not 0 <= order <= 2:
            raise ValueError("derivatives: order must be 0, 1 or 2")
        starts = np.ascontiguousarray(start, dtype=np.intc)
        index = np.ascontiguousarray(member_index, dtype=np.intc)
        weights = np.ascontiguousarray(weight, dtype=np.float64)
        cols = np.ascontiguousarray(time_cols if affine_q else [], dtype=np.intc)
        terms = int(starts[p]) if p >= 0 else 0
        if p < 0 or starts[0] != 0 or np.any(np.diff(starts) < 0) or \
                len(index) < terms or len(weights) < terms or \
                np.any(index[:terms] < 0) or np.any(index[:terms] >= nm):
            raise ValueError("derivatives: the parameters' terms do not match the members")
        if np.any(cols < 0) or np.any(cols >= n):
            raise ValueError("derivatives: a time column is out of range")
        self.arrays = (starts, index, weights, cols)
        self.n, self.p = n, p
        cdef int q = max(p, 1), nt_cols = len(cols)
        self.work = np.zeros(5 * maxnnz + 10 * n + 5 * n * q + q + 2 * n * nt_cols)
        self.mres = np.zeros(3 * n * nm + 1)
        self.size = np.zeros(p)
        cdef double[::1] w = self.work
        cdef double[::1] r = self.mres
        cdef double[::1] sz = self.size if p else np.zeros(1)
        cdef int[::1] st = starts
        cdef int[::1] ix = index if len(index) else np.zeros(1, dtype=np.intc)
        cdef double[::1] wt = weights if len(weights) else np.zeros(1)
        cdef int[::1] tc = cols if nt_cols else np.zeros(1, dtype=np.intc)
        self.arrays += (ix, wt, tc, sz)
        self.ws.p, self.ws.nm, self.ws.nt_cols = p, nm, nt_cols
        self.ws.order = self.order = order
        self.ws.affine = affine_q != 0
        if rows is not None:     # the rows and slots the restricted members write
            written = np.unique(np.ascontiguousarray(rows, dtype=np.intc))
            if np.any(written < 0) or np.any(written >= n):
                raise ValueError("derivatives: a restricted row is out of range")
            colptr = np.asarray(<int[:n + 1]> own.phiq_colptr)
            rowind = np.asarray(<int[:max(own.phiq_nnz, 1)]> own.phiq_rowind)[:own.phiq_nnz]
            slot = np.flatnonzero(np.isin(rowind, written)).astype(np.intc)
            column = (np.searchsorted(colptr, slot, side="right") - 1).astype(np.intc)
            written = np.append(written, np.intc(0))     # (never empty)
            slot, column = np.append(slot, np.intc(0)), np.append(column, np.intc(0))
            self.arrays += (written, slot, column)
            self.ws.nrows, self.ws.nslots = len(written) - 1, len(slot) - 1
            self._point_rows(written, slot, column)
        if moves is not None:
            self._moves(moves, p, n, base.body_stride)
        # the row's own rv and ra: a member that is the model, or the time columns of the
        # Jacobians formed once a row
        self.ws.own = self.ws.base >= 0 or (affine_q != 0 and p >= MATRIX_PARAMETERS)
        self.ws.sys = self.sys
        self.ws.start, self.ws.member_index, self.ws.weight = &st[0], &ix[0], &wt[0]
        self.ws.time_cols = &tc[0]
        self.ws.size = &sz[0]
        self.ws.mres = &r[0]
        self.ws.jac = &w[0]
        self.ws.mvals = &w[maxnnz]
        self.ws.Rv = &w[2 * maxnnz]
        self.ws.Ra = &w[3 * maxnnz]
        self.ws.g = &w[5 * maxnnz]
        self.ws.z = self.ws.g + n
        self.ws.qp = self.ws.g + 2 * n
        self.ws.qm = self.ws.g + 3 * n
        self.ws.tmp = self.ws.g + 4 * n
        self.ws.rv0 = self.ws.g + 6 * n
        self.ws.ra0 = self.ws.g + 7 * n
        self.ws.F = self.ws.g + 8 * n
        self.ws.X = self.ws.F + n * q
        self.ws.Y = self.ws.X + n * q
        self.ws.B = self.ws.Y + n * q
        self.ws.R = self.ws.B + n * q
        self.ws.active = self.ws.R + n * q
        self.ws.Cv = self.ws.active + q
        self.ws.Ca = self.ws.Cv + n * nt_cols
        self.ws.pt0 = self.ws.Ca + n * nt_cols
        self.ws.g0 = self.ws.pt0 + n

    cdef void _point_rows(self, int[::1] rows, int[::1] slots, int[::1] cols):
        self.ws.rows, self.ws.slots, self.ws.slot_col = &rows[0], &slots[0], &cols[0]

    cdef int _moves(self, moves, int p, int n, int stride) except -1:
        """The point moves (start, row, body, d) of planar revolute joints' local points;
        see the class notes."""
        start, row, body, d = moves
        start = np.ascontiguousarray(start, dtype=np.intc)
        row = np.ascontiguousarray(row, dtype=np.intc)
        body = np.ascontiguousarray(body, dtype=np.intc)
        d = np.ascontiguousarray(d, dtype=np.float64).reshape(-1)
        k = len(row)
        if stride != 4 or len(start) != p + 1 or start[0] != 0 or start[p] != k or \
                np.any(np.diff(start) < 0) or len(body) != k or len(d) != 2 * k or \
                np.any(row < 0) or np.any(row > n - 2) or np.any(body < -1) or \
                np.any(4 * body + 3 >= n) or not np.all(np.isfinite(d)):
            raise ValueError("derivatives: the point moves do not match the model")
        row, body = np.append(row, np.intc(0)), np.append(body, np.intc(-1))   # (never
        d = np.append(d, [0.0, 0.0])                                            # empty)
        self.arrays += (start, row, body, d)
        cdef int[::1] ms = start
        cdef int[::1] mr = row
        cdef int[::1] mb = body
        cdef double[::1] md = d
        self.ws.move_start, self.ws.move_row = &ms[0], &mr[0]
        self.ws.move_body, self.ws.move_d = &mb[0], &md[0]
        return 0

    def __dealloc__(self):
        free(self.sys)


cdef bint _derivative_arrays_fit(DerivativePlan plan, int n, int rows, double[:, :, ::1] dQ,
                                 double[:, :, ::1] dV, double[:, :, ::1] dA):
    """Whether dQ, dV, dA hold ``rows`` rows of n coordinates and, up to the plan's order,
    its p parameters (none above it)."""
    return plan.n == n and dQ.shape[0] >= rows and dV.shape[0] >= rows and \
        dA.shape[0] >= rows and dQ.shape[1] == n and dV.shape[1] == n and \
        dA.shape[1] == n and dQ.shape[2] == plan.p and \
        dV.shape[2] == (plan.p if plan.order >= 1 else 0) and \
        dA.shape[2] == (plan.p if plan.order >= 2 else 0)


cdef class SensitivitySweep(KinematicSweep):
    """The kinematic sweep's workspace with the parameter derivatives of its solution: in
    its own sweep (``attach`` a plan first) or at given rows (``derivatives``)."""

    cdef DerivativePlan plan            # attached to the sweep (None: plain rows)
    cdef double[:, :, ::1] dQ
    cdef double[:, :, ::1] dV
    cdef double[:, :, ::1] dA

    def attach(self, DerivativePlan plan, double[:, :, ::1] dQ, double[:, :, ::1] dV,
               double[:, :, ::1] dA):
        """Form the plan's derivatives at every row the next sweeps solve, into row k of
        dQ, dV, dA (rows, n, p), with the factors each row's v and a are solved with (None:
        plain sweeps again)."""
        if plan is None:
            self.plan = None
            self.keep_rhs = False
            return
        if not _derivative_arrays_fit(plan, self.n, dQ.shape[0], dQ, dV, dA):
            raise ValueError("attach: array sizes do not match the plan")
        self._reserve(max(plan.p, 1))
        self.plan, self.dQ, self.dV, self.dA = plan, dQ, dV, dA
        self.keep_rhs = True

    cdef int _row_done(self, int k, double t, const double *q, const double *v,
                       const double *a, const double *vals, const double *kept) noexcept nogil:
        if self.plan is None:
            return OK
        self._row_derivatives(&self.plan.ws, t, q, v, a, vals, kept)
        _store_row(&self.plan.ws, self.n, k, self.dQ, self.dV, self.dA)
        return OK

    cdef void _directional_jacobians(self, deriv_ws *w, double t, const double *q,
                                     const double *v, const double *a, const double *vals,
                                     double scale) noexcept nogil:
        """rv_q and ra_q at the row (``derivatives``, affine_q): Rv, Ra on the pattern with
        their time columns zero, Cv, Ca those columns (dense), given the row's own rv and
        ra in rv0, ra0. vals: Phi_q at the row."""
        cdef int n = self.n, nnz = self.sys.phiq_nnz, i, c, k, p
        cdef double s
        cdef const double *x
        cdef double *out
        for c in range(2):
            x, out = (v, w.Rv) if c == 0 else (a, w.Ra)
            s = _inf_norm(x, n)
            if s == 0.0:
                for p in range(nnz):
                    out[p] = 0.0
                continue
            # a move of the coordinates' own scale: the difference of an affine Phi_q is
            # exact, and its rounding relative to Phi_q is least for a large move
            s = scale / s
            for i in range(n):
                w.qp[i] = q[i] + s * x[i]
            self.sys.phi_q(self.sys.user, t, w.qp, out)
            for p in range(nnz):
                out[p] = (out[p] - vals[p]) / s
        for c in range(w.nt_cols):
            k = w.time_cols[c]
            for p in range(self.sys.phiq_colptr[k], self.sys.phiq_colptr[k + 1]):
                w.Rv[p] = 0.0
                w.Ra[p] = 0.0
            for i in range(n):
                w.qp[i] = q[i]
            s = scale
            w.qp[k] += s
            _residual_pair(self.sys, t, w.qp, v, a, w.mvals, w.tmp, w.g, w.z)
            for i in range(n):
                w.Cv[c * n + i] = (w.g[i] - w.rv0[i]) / s
                w.Ca[c * n + i] = (w.z[i] - w.ra0[i]) / s

    cdef void _directional_each(self, deriv_ws *w, double t, const double *q,
                                const double *v, const double *a, const double *vals,
                                double scale, const double *npt0,
                                const double *g0) noexcept nogil:
        """X <- dv (solved) and Y <- the right-hand side of da for every parameter, given
        dq in F, parameter by parameter (``derivatives``). Where rv and ra are affine in q
        (``npt0``: -Phi_t at the row, ``g0``: gamma there; NULL otherwise) their changes
        along each dq are those of Phi_q (vals at the row), of Phi_t and of gamma over a
        move of the coordinates' own scale, exact: only the Jacobian entries that change
        are multiplied (a revolute joint's are constants, their differences exactly zero).
        Otherwise central differences along each dq, exact for these quadratic residuals.
        gamma's v-derivative along each dv is a central difference (gamma is quadratic in
        v). Y is formed only for order 2."""
        cdef int n = self.n, i, j, c, k, r
        cdef double eps, d, vc, ac
        cdef double *dq
        cdef double *dv
        cdef double *X = w.X
        cdef double *Y = w.Y
        cdef const int *cp = self.sys.phiq_colptr
        cdef const int *ri = self.sys.phiq_rowind
        for j in range(w.p):
            dq = &w.F[j * n]
            eps = _inf_norm(dq, n)
            if eps > 0.0 and npt0 != NULL:
                eps = scale / eps
                for i in range(n):
                    w.qp[i] = q[i] + eps * dq[i]
                eps = 1.0 / eps
                self.sys.phi_q(self.sys.user, t, w.qp, w.mvals)
                for c in range(n):
                    vc, ac = v[c] * eps, a[c] * eps
                    for k in range(cp[c], cp[c + 1]):
                        d = w.mvals[k] - vals[k]
                        if d != 0.0:
                            r = j * n + ri[k]
                            X[r] += d * vc
                            Y[r] += d * ac
                self.sys.phi_t(self.sys.user, t, w.qp, w.tmp)
                for i in range(n):
                    X[j * n + i] += (w.tmp[i] + npt0[i]) * eps
                if w.order >= 2:    # gamma's change, for da only
                    for i in range(n):
                        w.g[i] = 0.0
                    self.sys.gamma(self.sys.user, t, w.qp, v, w.g)
                    for i in range(n):
                        Y[j * n + i] -= (w.g[i] - g0[i]) * eps
            elif eps > 0.0:
                eps = 1e-3 * scale / eps
                for i in range(n):
                    w.qp[i] = q[i] + eps * dq[i]
                    w.qm[i] = q[i] - eps * dq[i]
                _residual_pair(self.sys, t, w.qp, v, a, w.mvals, w.tmp, w.g, w.z)
                for i in range(n):
                    X[j * n + i] += w.g[i] / (2.0 * eps)
                    Y[j * n + i] += w.z[i] / (2.0 * eps)
                _residual_pair(self.sys, t, w.qm, v, a, w.mvals, w.tmp, w.g, w.z)
                for i in range(n):
                    X[j * n + i] -= w.g[i] / (2.0 * eps)
                    Y[j * n + i] -= w.z[i] / (2.0 * eps)
            for i in range(n):
                X[j * n + i] = -X[j * n + i]
        self._refined_solve_block(X, w.B, w.R, w.active, w.p, vals)
        if w.order < 2:
            return
        for j in range(w.p):
            dv = &X[j * n]
            eps = _inf_norm(dv, n)
            if eps > 0.0:
                eps = (1.0 + _inf_norm(v, n)) / eps     # (least rounding: a move of v's size)
                for i in range(n):
                    w.qp[i] = v[i] + eps * dv[i]
                    w.qm[i] = v[i] - eps * dv[i]
                self.sys.gamma(self.sys.user, t, q, w.qp, w.g)
                self.sys.gamma(self.sys.user, t, q, w.qm, w.z)
                for i in range(n):
                    Y[j * n + i] -= (w.g[i] - w.z[i]) / (2.0 * eps)
            for i in range(n):
                Y[j * n + i] = -Y[j * n + i]

    cdef void _row_derivatives(self, deriv_ws *w, double t, const double *q, const double *v,
                               const double *a, const double *vals,
                               const double *kept) noexcept nogil:
        """dq, dv, dA of every parameter at the solved row (t, q, v, a) into w.F, w.X,
        w.Y (n x p), with the current solve factors (made at vals = Phi_q there, or at a
        configuration near enough for iterative refinement). kept: -Phi_t and gamma at the
        row, as the analysis' sweep solved v and a with them, and Phi, Newton's last
        residual (NULL: evaluated here)."""
        cdef int n = self.n, p = w.p, i, j, m
        cdef int nt_cols = w.nt_cols
        cdef double eps, scale = 1.0, wk
        cdef double *r3
        cdef double *F = w.F
        cdef double *X = w.X
        cdef double *Y = w.Y
        for i in range(n):
            scale = fabs(q[i]) if fabs(q[i]) > scale else scale
        # the model's own rv and ra (a member's where the model itself is one: every
        # forward difference; the base of the time columns of rv_q and ra_q)
        if w.own and w.order > 0 and kept != NULL:
            _pair_from_kept(self.sys, v, a, vals, kept, w.rv0, w.ra0)
        elif w.own and w.order > 0:
            _pair_from_values(self.sys, t, q, v, a, vals, w.tmp, w.rv0, w.ra0)
        for m in range(w.nm):
            r3 = &w.mres[3 * n * m]
            if w.order == 0 and m != w.base:    # Phi alone (a restricted member's rows)
                w.sys[m].phi(w.sys[m].user, t, q, r3)
            elif m == w.base:
                if kept != NULL:
                    for i in range(n):
                        r3[i] = kept[2 * n + i]
                else:
                    self.sys.phi(self.sys.user, t, q, r3)
                for i in range(n):
                    r3[n + i] = w.rv0[i]
                    r3[2 * n + i] = w.ra0[i]
            elif w.rows != NULL:
                _restricted_residuals(w.sys[m], t, q, v, a, w.mvals, w.tmp, r3, w.rows,
                                      w.nrows, w.slots, w.slot_col, w.nslots)
            else:
                _member_residuals(w.sys[m], t, q, v, a, w.mvals, w.tmp, r3)
        # Phi_p, (Phi_q v + Phi_t)_p, (Phi_q a - gamma)_p: weighted member sums
        for j in range(p):
            for i in range(n):
                F[j * n + i] = 0.0
                X[j * n + i] = 0.0
                Y[j * n + i] = 0.0
            for m in range(w.start[j], w.start[j + 1]):
                wk = w.weight[m]
                r3 = &w.mres[3 * n * w.member_index[m]]
                for i in range(n):
                    F[j * n + i] += wk * r3[i]
                    X[j * n + i] += wk * r3[n + i]
                    Y[j * n + i] += wk * r3[2 * n + i]
            if w.move_start != NULL:
                _add_moves(w, j, n, q, v, a)
            eps = _inf_norm(&F[j * n], n)
            w.size[j] = eps if eps > w.size[j] else w.size[j]
            for i in range(n):
                F[j * n + i] = -F[j * n + i]
        # dq = -Phi_q^-1 Phi_p, every parameter at once
        self._refined_solve_block(F, w.B, w.R, w.active, p, vals)
        if w.order == 0:
            return
        if w.affine and p < MATRIX_PARAMETERS:
            if kept == NULL:        # -Phi_t and gamma at the row, as the sweep has them
                self.sys.phi_t(self.sys.user, t, q, w.pt0)
                for i in range(n):
                    w.pt0[i] = -w.pt0[i]
                    w.g0[i] = 0.0
                self.sys.gamma(self.sys.user, t, q, v, w.g0)
                self._directional_each(w, t, q, v, a, vals, scale, w.pt0, w.g0)
            else:
                self._directional_each(w, t, q, v, a, vals, scale, kept, kept + n)
        elif w.affine:
            self._directional_jacobians(w, t, q, v, a, vals, scale)
            for j in range(p):
                _jacobian_times(self.sys, w.Rv, w.Cv, w.time_cols, nt_cols, &F[j * n], 1.0,
                                &X[j * n])
                _jacobian_times(self.sys, w.Ra, w.Ca, w.time_cols, nt_cols, &F[j * n], 1.0,
                                &Y[j * n])
                for i in range(n):
                    X[j * n + i] = -X[j * n + i]
            self._refined_solve_block(X, w.B, w.R, w.active, p, vals)
            if w.order == 1:
                return
            # ra_v dv = -gamma_v dv = 2 rv_q dv
            for j in range(p):
                _jacobian_times(self.sys, w.Rv, w.Cv, w.time_cols, nt_cols, &X[j * n], 2.0,
                                &Y[j * n])
                for i in range(n):
                    Y[j * n + i] = -Y[j * n + i]
        else:
            self._directional_each(w, t, q, v, a, vals, scale, NULL, NULL)
        if w.order == 2:
            self._refined_solve_block(Y, w.B, w.R, w.active, p, vals)

    def derivatives(self, const double[::1] times, const double[:, ::1] Q,
                    const double[:, ::1] V, const double[:, ::1] A, DerivativePlan plan,
                    double[:, :, ::1] dQ, double[:, :, ::1] dV, double[:, :, ::1] dA):
        """dQ, dV, dA (n, nq, p) at the given solved rows (times, Q, V, A), for the plan's
        parameters, one factorisation of Phi_q a row serving all of them. Each member's
        residuals are evaluated once per row, however many parameters use it (the model
        itself, in every forward difference). The plan's ``affine_q``: rv = Phi_q v + Phi_t
        and ra = Phi_q a - gamma are affine in q (no time factor on a product of two
        coordinates), and its ``time_cols`` list the coordinates that a time factor
        multiplies (the only columns where Phi_t depends on q). Their Jacobians rv_q and ra_q
        are then formed once a row for every parameter (from MATRIX_PARAMETERS on): off
        those columns rv_q = (Phi_q v)_q, which is (Phi_q x)_q v by the symmetry of second
        derivatives, the difference Phi_q(q + s v) - Phi_q(q) over s (exact, Phi_q is affine
        in q), and ra_q likewise with a; their time columns are forward differences of rv and
        ra themselves (exact, both are affine in q). gamma_v = -2 rv_q (gamma = -(Phi_q v)_q
        v - 2 Phi_qt v - Phi_tt), so the parameters' directional terms are products with
        these two matrices. Without, each parameter's are differences along its own dq and
        dv. Restricted members: see DerivativePlan. Returns (status, row): OK, or SINGULAR
        at the row whose Phi_q would not factor, or INTERRUPTED."""
        cdef int n = self.n, nt = times.shape[0], k, i, j, status = OK, row = nt
        cdef deriv_ws *w = &plan.ws
        cdef double t
        if Q.shape[0] < nt or Q.shape[1] != n or V.shape[0] < nt or V.shape[1] != n or \
                A.shape[0] < nt or A.shape[1] != n or \
                not _derivative_arrays_fit(plan, n, nt, dQ, dV, dA):
            raise ValueError("derivatives: array sizes do not match the model")
        self._reserve(max(plan.p, 1))
        ctrl_c.enter()   # nothing below raises: leave() always runs
        with nogil:
            for k in range(nt):
                if ctrl_c.flag[0]:
                    status, row = INTERRUPTED, k
                    ctrl_c.reported[0] = 1  # (see _interrupt.h)
                    break
                t = times[k]
                self.sys.phi_q(self.sys.user, t, &Q[k, 0], w.jac)
                status = self._factor_newton(w.jac)     # (straight-line code where set)
                if status != OK:
                    row = k
                    break
                self._use_newton_factors()
                self._row_derivatives(w, t, &Q[k, 0], &V[k, 0], &A[k, 0], w.jac, NULL)
                _store_row(w, n, k, dQ, dV, dA)
        ctrl_c.leave()
        return status, row
