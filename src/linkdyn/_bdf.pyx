# cython: language_level=3, boundscheck=False, wraparound=False
"""Binding of the C integrator (csrc/ld_bdf.c: the BDF and the driver; csrc/ld_rk.c: the
explicit method). The model is handed over as the
``ld_system`` capsule of its kernels; the step loop runs in C without the GIL. Ctrl-C sets a
flag that the C loop polls once per step, so a long run stops cleanly with what it computed."""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_Import
from libc.stdlib cimport free, malloc

import numpy as np

from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from linkdyn._interrupt cimport linkdyn_interrupt
from linkdyn._ld_system cimport ld_system

cdef extern from "ld_bdf.h":
    int LD_BDF_MAX_ORDER
    ctypedef struct ld_sensitivity:
        int np
        int nmembers
        const ld_system *const *members
        const int *start
        const int *member
        const double *weight
        const double *scale
    ctypedef struct ld_bdf_options:
        double rtol
        double atol
        double h_init
        double h_min
        double h_max
        int max_order
        long max_steps
        int newton_max_iter
        double newton_tol
        int project_output
        int proportional
        volatile int *interrupt
        double event_tol
        double regularization
        double output_regularization
        int stop_when_full
        double (*clock)() noexcept nogil
        int method
        int column_ordering
        int cost_trials
        const ld_sensitivity *sensitivities
    ctypedef struct ld_bdf_stats:
        long steps
        long rejected_error
        long rejected_newton
        long newton_iterations
        long residual_evaluations
        long jacobian_evaluations
        long factorizations
        long full_factorizations
        long order_steps[6]
        double local_rtol
        double local_atol
        double transformed_rtol
        double max_output_velocity_violation
        double max_output_phi
        double max_output_phi_t
        double max_output_row_ratio
        double max_output_row_ratio_t
        long max_output_row
        long events
        long restarts
        long noise_limited
        long output_rows
        double output_seconds
        long rk_steps
        long rk_projected_steps
        long rhs_evaluations
        long schur_factorizations
        long switches_to_bdf
        long switches_to_rk
        long cost_trials
        long trials_kept
        long reorderings
        double rk_transformed_rtol
        double rk_local_rtol
        double rk_local_atol
        long generated_factorizations
    ctypedef struct ld_bdf:
        pass
    void ld_bdf_default_options(ld_bdf_options *opt)
    int ld_bdf_create(const ld_system *sys, const ld_bdf_options *opt, ld_bdf **out)
    int ld_bdf_init(ld_bdf *w, double t0, const double *q0, const double *v0,
                    const double *z0) nogil
    int ld_bdf_restart(ld_bdf *w) nogil
    int ld_bdf_restart_at(ld_bdf *w, const double *q, const double *v) nogil
    int ld_bdf_integrate(ld_bdf *w, double t_end, int n_out, const double *t_out,
                         double *y_out, int *n_written) nogil
    void ld_bdf_free(ld_bdf *w)
    int ld_bdf_init_sensitivities(ld_bdf *w, const double *s0) nogil
    const ld_bdf_stats *ld_bdf_get_stats(const ld_bdf *w)
    long ld_bdf_work_units(const ld_bdf *w)
    double ld_bdf_get_time(const ld_bdf *w)
    int ld_bdf_get_size(const ld_bdf *w)
    void ld_bdf_get_state(const ld_bdf *w, double *y)
    void ld_bdf_get_failure(const ld_bdf *w, double *t, double *h, int *index)
    double ld_bdf_get_event(const ld_bdf *w, int *fired)
    long ld_bdf_schur_source(ld_bdf *w, char *buf, long cap)
    unsigned long long ld_bdf_schur_signature(ld_bdf *w)
    long ld_bdf_schur_size_bound(ld_bdf *w)
    ctypedef struct ld_schur_code:
        unsigned long long signature
        void (*add)(const double *, const double *, double *) noexcept
        void (*elim)(double *) noexcept
        void (*solve)(const double *, double *, double *) noexcept
        void (*jt)(const double *, const double *, const double *, double *) noexcept
        void (*j)(const double *, const double *, double *) noexcept
        void (*jm)(const double *, const double *, const double *, double *) noexcept
    int ld_bdf_set_schur_code(ld_bdf *w, const ld_schur_code *code)
    void ld_bdf_g_pattern(const ld_bdf *w, int *ng, const int **colptr, const int **rowind)
    unsigned long long ld_bdf_g_signature(const ld_bdf *w)
    int ld_bdf_g_pivot_order(ld_bdf *w, double t, const double *q, int *rows, int *cols)
    ctypedef struct ld_lu_code:
        unsigned long long signature
        int size
        double (*factor)(const double *, double *, int *) noexcept
        void (*solve)(const double *, double *, double *) noexcept
    int ld_bdf_set_lu_code(ld_bdf *w, const ld_lu_code *code)

cdef linkdyn_interrupt *ctrl_c = <linkdyn_interrupt *> PyCapsule_Import(
    b"linkdyn._kernels.interrupt_api", 0)

#: Integration methods (options.method), by name.
METHODS = {"bdf": 0, "rk": 1, "auto": 2}

#: Status codes of ld_bdf_integrate, by name.
STATUS = {0: "success", 1: "interrupted", 2: "event", -1: "bad input", -2: "out of memory",
          -3: "too much work", -4: "step size too small", -5: "Newton iteration failed",
          -6: "singular iteration matrix", -7: "non-finite values", -8: "model callback failed",
          -9: "linear solver failed", 3: "output buffer full"}


cdef double monotonic_seconds() noexcept nogil:
    """The integrator's output clock (C99 has no monotonic clock; POSIX does)."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef class BDFIntegrator:
    """One integration of one model: owns the C workspace (created and freed here).
    ``run`` is the run's :class:`linkdyn._kernels.RunState` (its ld_system)."""

    cdef ld_bdf *w
    cdef object run
    cdef ld_sensitivity sens
    cdef const ld_system **members
    cdef object sens_arrays
    cdef readonly int n, nq, nc, nz, nev, np
    cdef object schur_library       # the loaded straight-line Schur code (kept alive)
    #: "generated" once straight-line Schur code is in the plan's place, else "plan"
    cdef readonly str schur_kernels
    cdef object lu_library          # the loaded straight-line LU code of G (kept alive)
    cdef readonly str lu_kernels
    #: True once Ctrl-C was seen during a call (the run stops at its next chance)
    cdef public bint interrupted
    #: Ctrl-C came before the first call (while Python prepared the run): the next call
    #: stops at its first look at the flag, with what it has, as for one pressed during it
    cdef public bint stop_requested

    def __cinit__(self, run, double rtol, double atol, double h_init=0.0,
                  double h_min=0.0, double h_max=0.0, int max_order=5, long max_steps=0,
                  int newton_max_iter=4, double newton_tol=0.0, bint project_output=True,
                  bint proportional=True, double event_tol=0.0,
                  double regularization=0.0, double output_regularization=0.0,
                  bint stop_when_full=False, str method="auto", bint column_ordering=False,
                  sensitivities=None, bint cost_trials=True):
        cdef ld_bdf_options opt
        cdef const ld_system *sys = <const ld_system *> PyCapsule_GetPointer(
            run.system_capsule(), b"linkdyn.ld_system")
        cdef const int[::1] start, member
        cdef const double[::1] weight, scale
        cdef int k
        self.run = run  # keeps the arrays behind the ld_system alive
        ld_bdf_default_options(&opt)
        opt.rtol = rtol
        opt.atol = atol
        opt.h_init = h_init
        opt.h_min = h_min
        opt.h_max = h_max
        opt.max_order = max_order
        opt.max_steps = max_steps
        opt.newton_max_iter = newton_max_iter
        opt.newton_tol = newton_tol
        opt.project_output = project_output
        opt.proportional = proportional
        opt.event_tol = event_tol
        opt.regularization = regularization
        opt.output_regularization = output_regularization
        opt.interrupt = ctrl_c.flag
        opt.stop_when_full = stop_when_full
        opt.clock = monotonic_seconds
        opt.method = METHODS[method]
        opt.column_ordering = column_ordering
        opt.cost_trials = cost_trials
        opt.sensitivities = NULL
        if sensitivities is not None:
            # (member run states, start [np + 1], member, weight, scale or None): ld_bdf.h
            runs, start_a, member_a, weight_a, scale_a = sensitivities
            start_a = np.ascontiguousarray(start_a, dtype=np.intc)
            member_a = np.ascontiguousarray(member_a, dtype=np.intc)
            weight_a = np.ascontiguousarray(weight_a, dtype=np.float64)
            if (start_a.shape[0] < 2 or member_a.shape[0] != start_a[-1] or
                    weight_a.shape[0] != start_a[-1] or len(runs) == 0 or
                    member_a.shape[0] == 0):
                raise ValueError("inconsistent sensitivity arrays")
            if scale_a is not None:
                scale_a = np.ascontiguousarray(scale_a, dtype=np.float64)
                if scale_a.shape[0] != start_a.shape[0] - 1:
                    raise ValueError("inconsistent sensitivity arrays")
            self.sens_arrays = (tuple(runs), start_a, member_a, weight_a, scale_a)
            self.members = <const ld_system **> malloc(len(runs) * sizeof(void *))
            if self.members == NULL:
                raise MemoryError("linkdyn: cannot allocate the sensitivities' members")
            for k in range(len(runs)):
                self.members[k] = <const ld_system *> PyCapsule_GetPointer(
                    runs[k].system_capsule(), b"linkdyn.ld_system")
            start, member, weight = start_a, member_a, weight_a
            self.sens.np = start_a.shape[0] - 1
            self.sens.nmembers = len(runs)
            self.sens.members = self.members
            self.sens.start = &start[0]
            self.sens.member = &member[0]
            self.sens.weight = &weight[0]
            self.sens.scale = NULL
            if scale_a is not None:
                scale = scale_a
                self.sens.scale = &scale[0]
            opt.sensitivities = &self.sens
        status = ld_bdf_create(sys, &opt, &self.w)
        if status == -2:
            raise MemoryError("linkdyn: cannot allocate the integrator's workspace")
        if status != 0:
            raise ValueError("invalid integrator options")
        self.nq = sys.nq
        self.nc = sys.nc
        self.nz = sys.nz
        self.nev = sys.nev
        self.n = ld_bdf_get_size(self.w)
        self.np = self.sens.np if sensitivities is not None else 0
        self.schur_kernels = "plan"
        self.lu_kernels = "klu"

    def schur_source(self, long limit=0):
        """The explicit method's Schur plan as straight-line C (csrc/ld_schur_gen.c), or
        None where there is none (no explicit method, no constraint rows); with limit > 0,
        "" where it is longer than limit characters (not written out)."""
        cdef long n = ld_bdf_schur_source(self.w, NULL, limit)
        cdef bytearray buf
        if n < 0:
            return None
        if limit > 0 and n > limit:
            return ""
        buf = bytearray(n + 1)
        ld_bdf_schur_source(self.w, buf, n + 1)
        return bytes(buf[:n]).decode("ascii")

    def schur_size_bound(self):
        """A lower bound of schur_source's length, at once; -1 where there is no plan."""
        return ld_bdf_schur_size_bound(self.w)

    def schur_signature(self):
        """The signature of the explicit method's Schur plan, 0 where there is none."""
        return ld_bdf_schur_signature(self.w)

    def set_schur_code(self, library, unsigned long long signature, addresses):
        """Put the functions at ``addresses`` (add, elim, solve, jt, j, jm: compiled from
        schur_source and loaded in ``library``, which is kept alive with the integrator) in
        the plan's place; False (nothing changed) where signature is not the plan's."""
        cdef ld_schur_code code
        cdef size_t add, elim, solve, jt, j, jm
        add, elim, solve, jt, j, jm = addresses
        code.signature = signature
        code.add = <void (*)(const double *, const double *, double *) noexcept> add
        code.elim = <void (*)(double *) noexcept> elim
        code.solve = <void (*)(const double *, double *, double *) noexcept> solve
        code.jt = <void (*)(const double *, const double *, const double *,
                            double *) noexcept> jt
        code.j = <void (*)(const double *, const double *, double *) noexcept> j
        code.jm = <void (*)(const double *, const double *, const double *,
                            double *) noexcept> jm
        if ld_bdf_set_schur_code(self.w, &code) != 0:
            return False
        self.schur_library = library
        self.schur_kernels = "generated"
        return True

    def pattern(self):
        """(n, column pointers, row indices) of the iteration matrix G (and K), as numpy
        arrays."""
        cdef int ng
        cdef const int *cp
        cdef const int *ri
        ld_bdf_g_pattern(self.w, &ng, &cp, &ri)
        colptr = np.array(<int[:ng + 1]> cp, dtype=np.int64)
        nnz = int(colptr[ng])
        rowind = (np.array(<int[:nnz]> ri, dtype=np.int64) if nnz
                  else np.zeros(0, dtype=np.int64))
        return ng, colptr, rowind

    def pattern_signature(self):
        """G's pattern's 64-bit signature (ld_bdf_g_signature)."""
        return ld_bdf_g_signature(self.w)

    def pivot_order(self, double t, q):
        """(rows, cols) of KLU's fresh factorisation of K at (t, q), or None where K does
        not factor there."""
        cdef const double[::1] qs = np.ascontiguousarray(q, dtype=np.float64)
        cdef int ng
        cdef const int *cp
        cdef const int *ri
        ld_bdf_g_pattern(self.w, &ng, &cp, &ri)
        if qs.shape[0] != self.nq:
            raise ValueError("pivot_order: q does not match the model")
        rows = np.zeros(max(ng, 1), dtype=np.intc)
        cols = np.zeros(max(ng, 1), dtype=np.intc)
        cdef int[::1] r = rows
        cdef int[::1] c = cols
        if ld_bdf_g_pivot_order(self.w, t, &qs[0], &r[0], &c[0]) != 0:
            return None
        return rows[:ng].astype(np.int64), cols[:ng].astype(np.int64)

    def set_lu_code(self, library, size_t factor, size_t solve, int size, signature):
        """Factorise G and K with the straight-line LU code at these addresses (loaded in
        ``library``, kept alive with the integrator) where its pivots serve; False
        (nothing changed) where signature is not the pattern's."""
        cdef ld_lu_code code
        code.signature = int(signature)
        code.size = size
        code.factor = <double (*)(const double *, double *, int *) noexcept> factor
        code.solve = <void (*)(const double *, double *, double *) noexcept> solve
        st = ld_bdf_set_lu_code(self.w, &code)
        if st == -2:
            raise MemoryError()
        if st != 0:
            return False
        self.lu_library = library
        self.lu_kernels = "generated"
        return True

    def __dealloc__(self):
        ld_bdf_free(self.w)
        free(self.members)

    def init_sensitivities(self, s0):
        """The initial sensitivities (np, 2, nq): dq0/dp, dv0/dp per parameter, after init
        (da0/dp is solved in C); returns the status code."""
        cdef const double[::1] s = np.ascontiguousarray(s0, dtype=np.float64).reshape(-1)
        if self.np == 0 or s.shape[0] != 2 * self.nq * self.np:
            raise ValueError(f"s0 must have shape ({self.np}, 2, {self.nq})")
        with nogil:
            status = ld_bdf_init_sensitivities(self.w, &s[0])
        return status

    def init(self, double t0, q0, v0, z0=None):
        """Consistent accelerations and multipliers at t0, quadratures from z0 (default
        zeros); returns the status code."""
        cdef const double[::1] q = np.ascontiguousarray(q0, dtype=np.float64)
        cdef const double[::1] v = np.ascontiguousarray(v0, dtype=np.float64)
        cdef const double[::1] z = np.ascontiguousarray(
            np.zeros(max(1, self.nz)) if z0 is None else z0, dtype=np.float64)
        if q.shape[0] != self.nq or v.shape[0] != self.nq:
            raise ValueError(f"q0 and v0 must have length {self.nq}")
        if z0 is not None and z.shape[0] != self.nz:
            raise ValueError(f"z0 must have length {self.nz}")
        with nogil:
            status = ld_bdf_init(self.w, t0, &q[0], &v[0], &z[0])
        return status

    def restart(self):
        """Restart from the current state (after a discontinuity); returns the status."""
        with nogil:
            status = ld_bdf_restart(self.w)
        return status

    def restart_at(self, q, v):
        """Restart from the state (q, v) at the current time (velocities projected onto
        constraints that became active); returns the status."""
        cdef const double[::1] qq = np.ascontiguousarray(q, dtype=np.float64)
        cdef const double[::1] vv = np.ascontiguousarray(v, dtype=np.float64)
        if qq.shape[0] != self.nq or vv.shape[0] != self.nq:
            raise ValueError(f"q and v must have length {self.nq}")
        with nogil:
            status = ld_bdf_restart_at(self.w, &qq[0], &vv[0])
        return status

    def integrate(self, double t_end, const double[::1] t_out, double[:, ::1] y_out,
                  int n_written):
        """Integrate to t_end, filling rows of y_out at the times t_out from row n_written
        on. Returns (status, n_written). With stop_when_full, status 3 says y_out is full:
        call again with the times after and a new buffer (n_written = 0)."""
        cdef int nw = n_written
        cdef int n_out = t_out.shape[0]
        cdef int status
        if y_out.shape[0] != n_out or y_out.shape[1] != self.n:
            raise ValueError("y_out has the wrong shape")
        cdef const double *tp = &t_out[0] if n_out > 0 else NULL
        cdef double *yp = &y_out[0, 0] if n_out > 0 else NULL
        ctrl_c.enter()
        if self.stop_requested:
            ctrl_c.flag[0] = 1
            self.stop_requested = False
        try:
            with nogil:
                status = ld_bdf_integrate(self.w, t_end, n_out, tp, yp, &nw)
            # Ctrl-C during a call that ended for another reason (an event, a full buffer)
            # is kept here, and reported (see _interrupt.h).
            if ctrl_c.flag[0]:
                self.interrupted = True
                ctrl_c.reported[0] = 1
        finally:
            ctrl_c.leave()
        return status, nw

    @property
    def t(self):
        return ld_bdf_get_time(self.w)

    def state(self):
        y = np.empty(self.n)
        cdef double[::1] yv = y
        ld_bdf_get_state(self.w, &yv[0])
        return y

    def failure(self):
        """(t, h, index) of the last failure; see ld_bdf_get_failure."""
        cdef double t, h
        cdef int index
        ld_bdf_get_failure(self.w, &t, &h, &index)
        return t, h, index

    def event(self):
        """(t, fired) of the last event: fired[k] = +1 / -1 for the functions that changed
        sign there (rising / falling), else 0."""
        fired = np.zeros(max(1, self.nev), dtype=np.intc)
        cdef int[::1] f = fired
        t = ld_bdf_get_event(self.w, &f[0])
        return t, fired[:self.nev]

    def stats(self):
        cdef const ld_bdf_stats *s = ld_bdf_get_stats(self.w)
        return dict(steps=s.steps, rejected_steps=s.rejected_error + s.rejected_newton,
                    rejected_error_test=s.rejected_error,
                    rejected_newton=s.rejected_newton,
                    newton_iterations=s.newton_iterations,
                    residual_evaluations=s.residual_evaluations,
                    jacobian_evaluations=s.jacobian_evaluations,
                    factorizations=s.factorizations,
                    full_factorizations=s.full_factorizations,
                    steps_per_order=[s.order_steps[k] for k in range(1, 6)],
                    max_output_velocity_violation=s.max_output_velocity_violation,
                    max_output_phi=s.max_output_phi, max_output_phi_t=s.max_output_phi_t,
                    max_output_row_ratio=s.max_output_row_ratio,
                    max_output_row_ratio_t=s.max_output_row_ratio_t,
                    max_output_row=s.max_output_row,
                    schur_kernels=self.schur_kernels, lu_kernels=self.lu_kernels,
                    generated_factorizations=s.generated_factorizations,
                    events=s.events, restarts=s.restarts, noise_limited=s.noise_limited,
                    output_rows=s.output_rows, output_seconds=s.output_seconds,
                    local_rtol=s.local_rtol, local_atol=s.local_atol,
                    transformed_rtol=s.transformed_rtol, rk_steps=s.rk_steps,
                    rk_projected_steps=s.rk_projected_steps,
                    bdf_steps=s.steps - s.rk_steps, rhs_evaluations=s.rhs_evaluations,
                    schur_factorizations=s.schur_factorizations,
                    switches_to_bdf=s.switches_to_bdf, switches_to_rk=s.switches_to_rk,
                    cost_trials=s.cost_trials, trials_kept=s.trials_kept,
                    work_units=ld_bdf_work_units(self.w),
                    reorderings=s.reorderings,
                    rk_transformed_rtol=s.rk_transformed_rtol, rk_local_rtol=s.rk_local_rtol,
                    rk_local_atol=s.rk_local_atol)
