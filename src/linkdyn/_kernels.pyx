# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled kernels of a planar model in fully Cartesian coordinates.

Per body i the coordinates are q[4i:4i+4] = (x, y, ux, uy). Each element type is a group of
flat arrays (body indices, local coordinates, first constraint row, the positions ("slots") of
its Jacobian entries in the fixed CSC pattern). The kernels are ``nogil`` C functions with the
signatures of ``csrc/ld_system.h``: the integrator calls them through function pointers with
this module's data as the user pointer, and the Python methods below call the very same
functions. Nothing here allocates or looks anything up by name.
"""

from cpython.pycapsule cimport PyCapsule_New
from libc.math cimport cos, sin, sqrt
from libc.stdlib cimport free, malloc

import numpy as np

from linkdyn._ld_system cimport LD_OK, ld_eval_q, ld_eval_qv, ld_system


cdef struct KernelData:
    int nbody
    int nq
    int nc
    const double *mass          # [nq] diagonal mass matrix
    const double *q_applied     # [nq] constant generalised forces (uniform gravity)
    const int *unit_row         # [nbody] row of each body's unit-vector constraint
    const int *unit_slot        # [nbody, 2] slots of d/dux, d/duy
    const int *unit_hslot       # [nbody, 2] slots of (ux, ux), (uy, uy) in the Hessian pattern
    int nrev
    const int *rev_body         # [nrev, 2] body of each side, -1 for the ground
    const double *rev_local     # [nrev, 4] (xi, eta) of each side; ground side: global (x, y)
    const int *rev_row          # [nrev] first of the joint's two rows
    const int *rev_slot         # [nrev, 12] slots, side 1 then side 2; each side: row x
                                #   (d/dx, d/dux, d/duy), row y (d/dy, d/dux, d/duy)
    # Generic rows: sums of terms coef * g(t) * m(q), m = q_a q_b (quadratic), q_a (linear)
    # or 1 (constant); g(t) = 1, cos f(t), sin f(t) or f(t) for a driving law f.
    int ngen_rows
    const int *gen_row          # [ngen_rows] the rows (residuals zeroed, then accumulated)
    int ngen_slots
    const int *gen_slot         # [ngen_slots] their Jacobian slots
    int nterm
    const int *term_row         # [nterm]
    const int *term_a           # [nterm] first coordinate, -1 for a constant term
    const int *term_b           # [nterm] second coordinate, -1 for a linear term
    const int *term_tf          # [nterm] 0: g = 1, 1: cos f, 2: sin f, 3: f
    const int *term_law         # [nterm] driving law index (when term_tf > 0)
    const double *term_coef     # [nterm]
    const int *term_slot        # [nterm, 2] Jacobian slots of d/dq_a, d/dq_b (-1 if none)
    const int *term_hslot       # [nterm, 2] Hessian slots of (a, b), (b, a) (-1 if none)
    int hess_nnz
    const int *law_kind         # [nlaw] 0: polynomial, 1: harmonic a + b sin(w t + phi),
                                #   2: values (f, f', f'') read from law_values
    double *law_values          # [nlaw, 3] written by the caller for kind-2 laws
    const int *law_start        # [nlaw + 1] offsets into law_par
    const double *law_par       # polynomial: c0, c1, ...; harmonic: a, b, w, phi


# ---------------------------------------------------------------------------------------------
# Driving laws and time coefficients

cdef inline void law_eval(const KernelData *d, int k, double t, double *f) noexcept nogil:
    """f[0..2] = value, first and second time derivative of driving law k."""
    cdef const double *p = d.law_par + d.law_start[k]
    cdef int n = d.law_start[k + 1] - d.law_start[k]
    cdef int i
    cdef double w, arg
    if d.law_kind[k] == 2:
        f[0] = d.law_values[3 * k]
        f[1] = d.law_values[3 * k + 1]
        f[2] = d.law_values[3 * k + 2]
        return
    if d.law_kind[k] == 1:
        w = p[2]
        arg = w * t + p[3]
        f[0] = p[0] + p[1] * sin(arg)
        f[1] = p[1] * w * cos(arg)
        f[2] = -p[1] * w * w * sin(arg)
        return
    f[0] = 0.0
    f[1] = 0.0
    f[2] = 0.0
    for i in range(n - 1, -1, -1):   # Horner for the value and both derivatives
        f[2] = f[2] * t + 2.0 * f[1]
        f[1] = f[1] * t + f[0]
        f[0] = f[0] * t + p[i]


cdef inline void time_coef(const KernelData *d, int m, double t, double *g) noexcept nogil:
    """g[0..2] = g(t), g', g'' of term m."""
    cdef int tf = d.term_tf[m]
    cdef double f[3]
    cdef double c, s
    if tf == 0:
        g[0] = 1.0
        g[1] = 0.0
        g[2] = 0.0
        return
    law_eval(d, d.term_law[m], t, f)
    if tf == 3:
        g[0] = f[0]
        g[1] = f[1]
        g[2] = f[2]
        return
    c = cos(f[0])
    s = sin(f[0])
    if tf == 1:   # cos f
        g[0] = c
        g[1] = -s * f[1]
        g[2] = -c * f[1] * f[1] - s * f[2]
    else:         # sin f
        g[0] = s
        g[1] = c * f[1]
        g[2] = -s * f[1] * f[1] + c * f[2]


# ---------------------------------------------------------------------------------------------
# Kernels (C signatures of ld_system.h)

cdef int k_phi(void *user, double t, const double *q, double *out) noexcept nogil:
    cdef KernelData *d = <KernelData *> user
    cdef int i, k, s, b, r
    cdef double sgn, xi, eta, px, py
    cdef const double *qb
    for i in range(d.nbody):
        qb = q + 4 * i
        out[d.unit_row[i]] = qb[2] * qb[2] + qb[3] * qb[3] - 1.0
    for k in range(d.nrev):
        r = d.rev_row[k]
        px = 0.0
        py = 0.0
        for s in range(2):
            sgn = 1.0 if s == 0 else -1.0
            b = d.rev_body[2 * k + s]
            xi = d.rev_local[4 * k + 2 * s]
            eta = d.rev_local[4 * k + 2 * s + 1]
            if b < 0:
                px += sgn * xi
                py += sgn * eta
            else:
                qb = q + 4 * b
                px += sgn * (qb[0] + xi * qb[2] - eta * qb[3])
                py += sgn * (qb[1] + xi * qb[3] + eta * qb[2])
        out[r] = px
        out[r + 1] = py
    cdef double g[3]
    cdef double m
    for k in range(d.ngen_rows):
        out[d.gen_row[k]] = 0.0
    for k in range(d.nterm):
        time_coef(d, k, t, g)
        m = 1.0
        if d.term_a[k] >= 0:
            m = q[d.term_a[k]]
            if d.term_b[k] >= 0:
                m *= q[d.term_b[k]]
        out[d.term_row[k]] += d.term_coef[k] * g[0] * m
    return LD_OK


cdef int k_phi_q(void *user, double t, const double *q, double *val) noexcept nogil:
    cdef KernelData *d = <KernelData *> user
    cdef int i, k, s
    cdef double sgn, xi, eta
    cdef const int *sl
    for i in range(d.nbody):
        val[d.unit_slot[2 * i]] = 2.0 * q[4 * i + 2]
        val[d.unit_slot[2 * i + 1]] = 2.0 * q[4 * i + 3]
    for k in range(d.nrev):
        for s in range(2):
            if d.rev_body[2 * k + s] < 0:
                continue
            sgn = 1.0 if s == 0 else -1.0
            xi = d.rev_local[4 * k + 2 * s]
            eta = d.rev_local[4 * k + 2 * s + 1]
            sl = d.rev_slot + 12 * k + 6 * s
            val[sl[0]] = sgn
            val[sl[1]] = sgn * xi
            val[sl[2]] = -sgn * eta
            val[sl[3]] = sgn
            val[sl[4]] = sgn * eta
            val[sl[5]] = sgn * xi
    cdef double g[3]
    cdef double c
    for k in range(d.ngen_slots):
        val[d.gen_slot[k]] = 0.0
    for k in range(d.nterm):
        if d.term_a[k] < 0:
            continue
        time_coef(d, k, t, g)
        c = d.term_coef[k] * g[0]
        if d.term_b[k] < 0:
            val[d.term_slot[2 * k]] += c
        else:   # a == b gives both slots equal: 2 c q_a, as it should
            val[d.term_slot[2 * k]] += c * q[d.term_b[k]]
            val[d.term_slot[2 * k + 1]] += c * q[d.term_a[k]]
    return LD_OK


cdef int k_phi_t(void *user, double t, const double *q, double *out) noexcept nogil:
    # Unit-vector and revolute rows do not depend on time; generic rows may.
    cdef KernelData *d = <KernelData *> user
    cdef int r, k
    cdef double g[3]
    cdef double m
    for r in range(d.nc):
        out[r] = 0.0
    for k in range(d.nterm):
        if d.term_tf[k] == 0:
            continue
        time_coef(d, k, t, g)
        m = 1.0
        if d.term_a[k] >= 0:
            m = q[d.term_a[k]]
            if d.term_b[k] >= 0:
                m *= q[d.term_b[k]]
        out[d.term_row[k]] += d.term_coef[k] * g[1] * m
    return LD_OK


cdef int k_gamma(void *user, double t, const double *q, const double *v,
                 double *out) noexcept nogil:
    cdef KernelData *d = <KernelData *> user
    cdef int i, k
    for i in range(d.nbody):
        out[d.unit_row[i]] = -2.0 * (v[4 * i + 2] * v[4 * i + 2] + v[4 * i + 3] * v[4 * i + 3])
    # Revolute rows are linear in q with constant Jacobian: their gamma is zero.
    for k in range(d.nrev):
        out[d.rev_row[k]] = 0.0
        out[d.rev_row[k] + 1] = 0.0
    # Generic rows: gamma = -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt, term by term.
    cdef double g[3]
    cdef double c
    cdef int a, b
    for k in range(d.ngen_rows):
        out[d.gen_row[k]] = 0.0
    for k in range(d.nterm):
        time_coef(d, k, t, g)
        c = d.term_coef[k]
        a = d.term_a[k]
        b = d.term_b[k]
        if a < 0:
            out[d.term_row[k]] -= c * g[2]
        elif b < 0:
            out[d.term_row[k]] -= c * (2.0 * g[1] * v[a] + g[2] * q[a])
        else:
            out[d.term_row[k]] -= c * (2.0 * g[0] * v[a] * v[b]
                                       + 2.0 * g[1] * (q[b] * v[a] + q[a] * v[b])
                                       + g[2] * q[a] * q[b])
    return LD_OK


cdef int k_phi_qq_lam(void *user, double t, const double *q, const double *lam,
                      double *val) noexcept nogil:
    # d/dq (Phi_q^T lam): the unit-vector rows contribute 2 lam on (ux, ux) and (uy, uy);
    # revolute rows are linear in q and contribute nothing.
    cdef KernelData *d = <KernelData *> user
    cdef int i, k
    cdef double l, g[3]
    for i in range(d.hess_nnz):
        val[i] = 0.0
    for i in range(d.nbody):
        l = lam[d.unit_row[i]]
        val[d.unit_hslot[2 * i]] += 2.0 * l
        val[d.unit_hslot[2 * i + 1]] += 2.0 * l
    for k in range(d.nterm):   # q_a q_b contributes coef g lam to (a, b) and (b, a)
        if d.term_b[k] < 0:
            continue
        time_coef(d, k, t, g)
        l = d.term_coef[k] * g[0] * lam[d.term_row[k]]
        val[d.term_hslot[2 * k]] += l
        val[d.term_hslot[2 * k + 1]] += l
    return LD_OK


cdef int k_force(void *user, double t, const double *q, const double *v,
                 double *out) noexcept nogil:
    cdef KernelData *d = <KernelData *> user
    cdef int j
    for j in range(d.nq):
        out[j] = d.q_applied[j]
    return LD_OK


cdef int k_force_deriv(void *user, double t, const double *q, const double *v,
                       double *out) noexcept nogil:
    # Uniform gravity is constant: Q_q and Q_v have empty patterns, nothing to write.
    return LD_OK


# ---------------------------------------------------------------------------------------------

cdef inline const int *_ip(a):
    cdef const int[::1] m = a
    return &m[0] if m.shape[0] > 0 else NULL

cdef inline const double *_dp(a):
    cdef const double[::1] m = a
    return &m[0] if m.shape[0] > 0 else NULL


cdef class Kernels:
    """Kernels bound to one compiled model's arrays (kept alive here).

    Built by :func:`linkdyn.model.compile_model`; users reach it as ``Model.kernels``.
    All methods take float64 arrays of the model's sizes and release the GIL while computing.
    """

    cdef KernelData data
    cdef ld_system system
    cdef readonly object arrays
    cdef readonly object law_values
    cdef readonly int nq, nc, phiq_nnz, fq_nnz, fv_nnz, hess_nnz

    def __init__(self, dict arrays):
        need_int = ("unit_row", "unit_slot", "unit_hslot", "rev_body", "rev_row", "rev_slot",
                    "phiq_colptr", "phiq_rowind", "fq_colptr", "fq_rowind",
                    "fv_colptr", "fv_rowind", "hess_colptr", "hess_rowind",
                    "gen_row", "gen_slot", "term_row", "term_a", "term_b", "term_tf",
                    "term_law", "term_slot", "term_hslot", "law_kind", "law_start")
        need_dbl = ("mass", "q_applied", "rev_local", "term_coef", "law_par")
        a = {}
        for name in need_int:
            a[name] = np.ascontiguousarray(arrays[name], dtype=np.intc)
        for name in need_dbl:
            a[name] = np.ascontiguousarray(arrays[name], dtype=np.float64)
        for arr in a.values():
            arr.flags.writeable = False
        self.arrays = a
        nbody = a["unit_row"].shape[0]
        self.nq = a["mass"].shape[0]
        self.nc = int(arrays["nc"])
        if self.nq != 4 * nbody:
            raise ValueError("kernel arrays: mass must have 4 entries per body")
        self.phiq_nnz = a["phiq_rowind"].shape[0]
        self.fq_nnz = a["fq_rowind"].shape[0]
        self.fv_nnz = a["fv_rowind"].shape[0]
        self.hess_nnz = a["hess_rowind"].shape[0]

        self.data.nbody = nbody
        self.data.nq = self.nq
        self.data.nc = self.nc
        self.data.mass = _dp(a["mass"])
        self.data.q_applied = _dp(a["q_applied"])
        self.data.unit_row = _ip(a["unit_row"])
        self.data.unit_slot = _ip(a["unit_slot"])
        self.data.unit_hslot = _ip(a["unit_hslot"])
        self.data.nrev = a["rev_row"].shape[0]
        self.data.rev_body = _ip(a["rev_body"])
        self.data.rev_local = _dp(a["rev_local"])
        self.data.rev_row = _ip(a["rev_row"])
        self.data.rev_slot = _ip(a["rev_slot"])
        self.data.ngen_rows = a["gen_row"].shape[0]
        self.data.gen_row = _ip(a["gen_row"])
        self.data.ngen_slots = a["gen_slot"].shape[0]
        self.data.gen_slot = _ip(a["gen_slot"])
        self.data.nterm = a["term_row"].shape[0]
        self.data.term_row = _ip(a["term_row"])
        self.data.term_a = _ip(a["term_a"])
        self.data.term_b = _ip(a["term_b"])
        self.data.term_tf = _ip(a["term_tf"])
        self.data.term_law = _ip(a["term_law"])
        self.data.term_coef = _dp(a["term_coef"])
        self.data.term_slot = _ip(a["term_slot"])
        self.data.term_hslot = _ip(a["term_hslot"])
        self.data.hess_nnz = a["hess_rowind"].shape[0]
        self.data.law_kind = _ip(a["law_kind"])
        self.data.law_start = _ip(a["law_start"])
        self.data.law_par = _dp(a["law_par"])
        # Values of caller-evaluated (kind 2) laws: the one writeable array here.
        self.law_values = np.zeros(3 * max(1, a["law_kind"].shape[0]))
        cdef double[::1] lv = self.law_values
        self.data.law_values = &lv[0]

        self.system.nq = self.nq
        self.system.nc = self.nc
        self.system.mass = self.data.mass
        self.system.phiq_nnz = self.phiq_nnz
        self.system.phiq_colptr = _ip(a["phiq_colptr"])
        self.system.phiq_rowind = _ip(a["phiq_rowind"])
        self.system.fq_nnz = self.fq_nnz
        self.system.fq_colptr = _ip(a["fq_colptr"])
        self.system.fq_rowind = _ip(a["fq_rowind"])
        self.system.fv_nnz = self.fv_nnz
        self.system.fv_colptr = _ip(a["fv_colptr"])
        self.system.fv_rowind = _ip(a["fv_rowind"])
        self.system.hess_nnz = self.hess_nnz
        self.system.hess_colptr = _ip(a["hess_colptr"])
        self.system.hess_rowind = _ip(a["hess_rowind"])
        self.system.user = <void *> &self.data
        self.system.phi = k_phi
        self.system.phi_q = k_phi_q
        self.system.phi_t = k_phi_t
        self.system.gamma = k_gamma
        self.system.force = k_force
        self.system.force_q = k_force_deriv
        self.system.force_v = k_force_deriv
        self.system.phi_qq_lam = k_phi_qq_lam

    def system_capsule(self):
        """A PyCapsule named ``"linkdyn.ld_system"`` holding a pointer to this model's
        ``ld_system`` (valid while this object lives)."""
        return PyCapsule_New(<void *> &self.system, b"linkdyn.ld_system", NULL)

    # -- argument checks at the Python edge ------------------------------------------------
    cdef _vec(self, x, int n, str what):
        arr = np.ascontiguousarray(x, dtype=np.float64)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(f"{what} must be a 1-D array of length {n}, got shape {arr.shape}")
        return arr

    cdef _out(self, out, int n, str what):
        if out is None:
            return np.empty(n)
        if (not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.ndim != 1
                or out.shape[0] != n or not out.flags.c_contiguous or not out.flags.writeable):
            raise ValueError(f"{what} must be a writeable contiguous float64 array of length {n}")
        return out

    def phi(self, q, double t=0.0, out=None):
        """Constraint residuals Phi(q, t), shape (nc,)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        res = self._out(out, self.nc, "out")
        cdef double[::1] o = res
        with nogil:
            k_phi(&self.data, t, &qv[0], &o[0])
        return res

    def phi_q_values(self, q, double t=0.0, out=None):
        """Values of Phi_q in the fixed CSC pattern, shape (phiq_nnz,)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        res = self._out(out, self.phiq_nnz, "out")
        cdef double[::1] o = res
        with nogil:
            k_phi_q(&self.data, t, &qv[0], &o[0])
        return res

    def phi_t(self, q, double t=0.0, out=None):
        """Partial time derivative of Phi, shape (nc,)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        res = self._out(out, self.nc, "out")
        cdef double[::1] o = res
        with nogil:
            k_phi_t(&self.data, t, &qv[0], &o[0])
        return res

    def gamma(self, q, v, double t=0.0, out=None):
        """Right-hand side of Phi_q qdd = gamma, shape (nc,)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        res = self._out(out, self.nc, "out")
        cdef double[::1] o = res
        with nogil:
            k_gamma(&self.data, t, &qv[0], &vv[0], &o[0])
        return res

    def force(self, q, v, double t=0.0, out=None):
        """Generalised applied forces Q(q, v, t), shape (nq,)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        res = self._out(out, self.nq, "out")
        cdef double[::1] o = res
        with nogil:
            k_force(&self.data, t, &qv[0], &vv[0], &o[0])
        return res

    cdef _force_deriv(self, ld_eval_qv fn, int nnz, q, v, double t, out):
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        res = self._out(out, nnz, "out")
        cdef double[::1] o = res
        cdef double *optr = &o[0] if nnz > 0 else NULL
        with nogil:
            fn(&self.data, t, &qv[0], &vv[0], optr)
        return res

    def force_q_values(self, q, v, double t=0.0, out=None):
        """Values of dQ/dq in its fixed CSC pattern, shape (fq_nnz,)."""
        return self._force_deriv(self.system.force_q, self.fq_nnz, q, v, t, out)

    def force_v_values(self, q, v, double t=0.0, out=None):
        """Values of dQ/dv in its fixed CSC pattern, shape (fv_nnz,)."""
        return self._force_deriv(self.system.force_v, self.fv_nnz, q, v, t, out)

    def phi_qq_lam_values(self, q, lam, double t=0.0, out=None):
        """Values of d/dq (Phi_q^T lam) in its fixed CSC pattern, shape (hess_nnz,)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] lv = self._vec(lam, self.nc, "lam")
        res = self._out(out, self.hess_nnz, "out")
        cdef double[::1] o = res
        with nogil:
            k_phi_qq_lam(&self.data, t, &qv[0], &lv[0], &o[0])
        return res

    def assemble(self, q, v, double t, double[::1] phi, double[::1] phiq_values,
                 double[::1] gamma):
        """Phi, the values of Phi_q and gamma in one call, written into the given arrays
        (the hot-path entry point used by the benchmarks; sizes are checked)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        if (phi.shape[0] != self.nc or gamma.shape[0] != self.nc
                or phiq_values.shape[0] != self.phiq_nnz):
            raise ValueError("assemble: output arrays have the wrong lengths")
        with nogil:
            k_phi(&self.data, t, &qv[0], &phi[0])
            k_phi_q(&self.data, t, &qv[0], &phiq_values[0])
            k_gamma(&self.data, t, &qv[0], &vv[0], &gamma[0])

    def constraint_norms(self, q, v, double t=0.0):
        """(|Phi(q, t)|, |Phi_q v + Phi_t|), Euclidean norms, computed without the GIL."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        cdef double *buf = <double *> malloc((2 * self.nc + self.phiq_nnz + 1) * sizeof(double))
        cdef double *phi
        cdef double *phid
        cdef double *vals
        cdef double a = 0.0, b = 0.0
        cdef int j, p
        if buf == NULL:
            raise MemoryError()
        phi, phid, vals = buf, buf + self.nc, buf + 2 * self.nc
        with nogil:
            k_phi(&self.data, t, &qv[0], phi)
            k_phi_t(&self.data, t, &qv[0], phid)
            k_phi_q(&self.data, t, &qv[0], vals)
            for j in range(self.nq):
                for p in range(self.system.phiq_colptr[j], self.system.phiq_colptr[j + 1]):
                    phid[self.system.phiq_rowind[p]] += vals[p] * vv[j]
            for j in range(self.nc):
                a += phi[j] * phi[j]
                b += phid[j] * phid[j]
        free(buf)
        return sqrt(a), sqrt(b)

    def kinetic_energy(self, v):
        """T = v^T M v / 2 (J)."""
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        cdef double s = 0.0
        cdef int j
        with nogil:
            for j in range(self.nq):
                s += self.data.mass[j] * vv[j] * vv[j]
        return 0.5 * s

    def potential_energy(self, q):
        """Potential of the conservative applied forces (uniform gravity), zero at q = 0 (J)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef double s = 0.0
        cdef int j
        with nogil:
            for j in range(self.nq):
                s -= self.data.q_applied[j] * qv[j]
        return s
