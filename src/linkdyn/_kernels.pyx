# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled model: its arrays handed to the kernels in C.

The kernels (``csrc/ld_kernels.c``) evaluate a model from flat arrays (the schema is
``ld_model`` in ``csrc/ld_kernels.h``: body indices, local coordinates, first constraint rows,
the positions ("slots") of Jacobian entries in the fixed CSC patterns) with the signatures of
``csrc/ld_system.h``; the integrator calls them through function pointers with the model as
the user pointer, with no Python. This module checks the compiler's arrays, fills the
schema, keeps the arrays alive, and offers the kernels to Python (the methods of
:class:`Kernels` call the very same functions).
"""

cimport cython
from cpython.pycapsule cimport PyCapsule_New
from libc.math cimport sqrt
from libc.stdlib cimport free, malloc

import numpy as np

from linkdyn.errors import ArgumentError

from linkdyn._ld_system cimport LD_ERR_DOMAIN, LD_OK, ld_eval_q, ld_eval_qv, ld_system
from linkdyn._interrupt cimport linkdyn_interrupt


cdef extern from "ld_cams.h":
    # The curves of cams (csrc/ld_cams.h documents each array).
    ctypedef struct ld_cams:
        int ncam
        const int *kind
        const double *par
        const int *first
        const double *start
        const double *coef
    int LD_CAM_NPAR
    int LD_CAM_NCOEF
    int ld_cam_point_gap(const ld_cams *C, int c, const double *p, double *g, double *grad,
                         double *hess, double *u) noexcept nogil
    int ld_cam_face_support(const ld_cams *C, int c, double psi, double *h,
                            double *u) noexcept nogil


cdef extern from *:
    """
    #define LINKDYN_INTERRUPT_IMPLEMENTATION
    #include "_interrupt.h"
    """
    linkdyn_interrupt linkdyn_interrupt_api

#: The process-wide Ctrl-C handler of the compiled loops (see _interrupt.h).
interrupt_api = PyCapsule_New(<void *> &linkdyn_interrupt_api,
                              b"linkdyn._kernels.interrupt_api", NULL)


cdef extern from "ld_laws.h":
    ctypedef struct ld_laws:
        int nlaw
        const int *kind
        const int *start
        const double *par
        const double *values
    void ld_law_eval(const ld_laws *L, int k, double t, double *f) noexcept nogil


cdef extern from "ld_forces.h":
    ctypedef struct ld_forces:
        int stride
        int nrec
        const int *coord
        const int *body
        const double *geom
        const double *stiffness
        const double *damping
        const int *ref_law
        const double *ref_value
        const int *load_law
        const int *input_mode
        const int *input
        const int *slot_q
        const int *slot_v
        const int *law
        const double *law_par
        const double *law_sense
        const double *geom3
        const int *body_view
        const int *table
        const int *tab_start
        const double *tab_par
        const int *cam
        ld_cams cams
        int nload
        const int *load_body
        const double *load_point
        const int *load_frame
        const int *load_laws
        const int *load_slot_q
        const int *load_kind
        const double *load_axes
        const ld_laws *laws
    ctypedef struct ld_forces_run:
        const double *input
        const int *input_active
        double *angle_ref
        int *fail_record
        const double *impact
        const double *slip
        const double *gate
    int ld_forces_add(const ld_forces *F, const ld_forces_run *run, double t, const double *q,
                      const double *v, double *out) noexcept nogil
    int ld_forces_jacobians(const ld_forces *F, const ld_forces_run *run, double t,
                            const double *q, const double *v, double *fq,
                            double *fv) noexcept nogil
    double ld_forces_potential(const ld_forces *F, const ld_forces_run *run, double t,
                               const double *q) noexcept nogil
    int ld_forces_values(const ld_forces *F, const ld_forces_run *run, double t,
                         const double *q, const double *v, double *out) noexcept nogil
    int ld_forces_rates(const ld_forces *F, const ld_forces_run *run, double t,
                        const double *q, const double *v, double *z) noexcept nogil
    void ld_forces_accept(const ld_forces *F, const ld_forces_run *run,
                          const double *q) noexcept nogil
    double ld_forces_coordinate(const ld_forces *F, const ld_forces_run *run, int r,
                                const double *q) noexcept nogil
    int ld_forces_coordinate_derivs(const ld_forces *F, const ld_forces_run *run, int r,
                                    const double *q, const double *v, int *idx, double *s,
                                    double *g, double *vHv) noexcept nogil
    int ld_forces_coordinate_hessian(const ld_forces *F, const ld_forces_run *run, int r,
                                     const double *q, double *H) noexcept nogil
    int ld_forces_record_force(const ld_forces *F, const ld_forces_run *run, int r, double t,
                               const double *q, const double *v, double *f) noexcept nogil


cdef extern from "ld_angles.h":
    # Rows in the angles of bodies and joints (csrc/ld_angles.h documents each array).
    ctypedef struct ld_angles:
        int nrow
        const int *row
        const double *scale
        const double *offset
        const int *first
        int nangle
        const int *kind
        const double *mult
        const int *var_start
        const int *var
        const int *jslot
        const int *hstart
        const int *hslot
        const int *form_start
        const int *form_a
        const int *form_b
        const double *form_coef
        const int *cam
        ld_cams cams
    int LD_ANGLE_MAXVAR


cdef extern from "ld_kernels.h":
    # The compiled model's arrays (csrc/ld_kernels.h, ld_model, documents each).
    ctypedef struct KernelData "ld_model":
        int nbody
        int nq
        int nc
        const double *mass          # [nq] diagonal mass matrix
        const double *q_applied     # [nq] constant generalised forces (uniform gravity)
        int nunit                   # bodies with a unit-vector row (all but armature rotors)
        const int *unit_body        # [nunit] the body of each unit-vector row
        const int *unit_row         # [nunit] its row
        const int *unit_slot        # [nunit, 2] slots of d/dux, d/duy
        const int *unit_hslot       # [nunit, 2] slots of (ux, ux), (uy, uy) in the Hessian pattern
        # Frame rows of spatial bodies in natural coordinates: per body, the six rows uu, vv, ww,
        # uv, uw, vw (unit and orthogonal principal axes e1, e2, e3 at coordinates frame_base ..
        # + 9), in that order from row frame_row.
        int nframe
        const int *frame_base       # [nframe] coordinate of e1's x
        const int *frame_row        # [nframe] the first of the body's six rows
        const int *frame_slot       # [nframe, 27] Jacobian slots (see FRAME_ENTRIES below)
        const int *frame_hslot      # [nframe, 27] Hessian slots, the same entries
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
        const int *term_tf          # [nterm] 0: g = 1, 1: cos f, 2: sin f, 3: f, 4: f^2
        const int *term_law         # [nterm] driving law index (when term_tf > 0)
        const double *term_coef     # [nterm]
        const int *term_slot        # [nterm, 2] Jacobian slots of d/dq_a, d/dq_b (-1 if none)
        const int *term_hslot       # [nterm, 2] Hessian slots of (a, b), (b, a) (-1 if none)
        # Subsets of the terms, in term order, so that each kernel visits only the terms that
        # can change its output (a spatial joint's rows are all linear terms without a time
        # factor: constant Jacobian entries and no gamma). Each kernel's sums are the same, term
        # for term, as over all terms.
        const double *gen_const     # [ngen_slots] a slot's value when all its terms are linear
                                    #   without a time factor (their sum in term order), else 0
        int nvar_term
        const int *var_term         # terms with a coordinate that write a slot not constant
        int ngam_term
        const int *gam_term         # terms with a nonzero gamma: quadratic or time-dependent
        int ntime_term
        const int *time_term        # terms with a time factor (Phi_t)
        int driver_work             # index in z of the driven rows' work (-1: no time terms)
        int nquad_term
        const int *quad_term        # quadratic terms (the Hessian)
        ld_angles angles            # rows in angles: gear pairs, racks (csrc/ld_angles.h)
        int hess_nnz
        int phiq_nnz
        ld_laws laws                # driving laws (csrc/ld_laws.h); values of kind-2 laws in
                                    #   the law_values array of a RunState (per run)
        ld_forces forces            # force elements (csrc/ld_forces.h)
        ld_forces_run run           # per-run state of the force elements: the model's own
                                    #   (inputs zero, reference angles from the guesses), or a
                                    #   Run's copy
        int fq_nnz
        int fv_nnz
        # Stick rows of a run with friction (linkdyn.friction): row nc + k holds friction record
        # stick_rec[k]'s rolling coordinate at stick_c0[k] while that contact sticks. They live
        # in the run's own ld_system, whose Phi_q and Hessian patterns are the model's merged
        # with theirs: the model's kernels write into scratch arrays that are scattered through
        # base_phiq_map / base_hess_map. nstick = 0 in the model's own data.
        int nstick
        const int *stick_rec        # [nstick]
        const double *stick_c0      # [nstick]
        int stick_width             # the records' local block: 8 planar, 24 spatial
        const int *stick_slot       # [nstick, width] Phi_q slots of the record's block (-1)
        const int *stick_hslot      # [nstick, width^2] Hessian slots (-1)
        const int *base_phiq_map    # [phiq_nnz of the model]
        const int *base_hess_map    # [hess_nnz of the model]
        int phiq_ext_nnz
        int hess_ext_nnz
        double *scratch_phiq
        double *scratch_hess
        # Events of a run (linkdyn.events): 0 marker coordinate c . q_body + c0, 1 a force
        # record's coordinate + c0, 2 a contact record's penetration (gap - s), 3 a sliding
        # contact comes to rest (sigma s' of friction record ev_record; 1 when not sliding),
        # 4 a sticking contact's friction reaches its limit (mu0 F_N - |lam| of stick row
        # ev_body, mu0 = ev_const; 1 when not sticking), 5 a foot passes another along a ground
        # line: t . (p_i - p_j), body i = ev_body, body j = ev_record, local points (xi_i, eta_i,
        # xi_j, eta_j) = ev_coef, t at angle ev_const; 6 its rate (the same with v for q).
        int nev
        const int *ev_kind          # [nev]
        const int *ev_body          # [nev]
        const double *ev_coef       # [nev, 4]
        const int *ev_index         # [nev, 4] kinds 0 and 7: the coordinates of ev_coef
        const double *ev_const      # [nev]
        const int *ev_record        # [nev]
        const int *ev_gate          # [nev] a record: while its gate is on, g = 1 (-1: none)
        const int *row_active       # [nc + nstick] of the run (NULL: all active)

    # The kernels (csrc/ld_kernels.c), with the signatures of ld_system.h.
    int k_phi "ld_model_phi"(void *user, double t, const double *q, double *out) noexcept nogil
    int k_phi_q "ld_model_phi_q"(void *user, double t, const double *q,
                                 double *val) noexcept nogil
    void k_phiq_const "ld_model_phiq_const"(const KernelData *d, int *flag) noexcept nogil
    int k_phi_t "ld_model_phi_t"(void *user, double t, const double *q,
                                 double *out) noexcept nogil
    int k_gamma "ld_model_gamma"(void *user, double t, const double *q, const double *v,
                                 double *out) noexcept nogil
    int k_phi_qq_lam "ld_model_phi_qq_lam"(void *user, double t, const double *q,
                                           const double *lam, double *val) noexcept nogil
    int k_force "ld_model_force"(void *user, double t, const double *q, const double *v,
                                 double *out) noexcept nogil
    int k_force_q "ld_model_force_q"(void *user, double t, const double *q, const double *v,
                                     double *out) noexcept nogil
    int k_force_v "ld_model_force_v"(void *user, double t, const double *q, const double *v,
                                     double *out) noexcept nogil
    int k_aux_rate "ld_model_aux_rate"(void *user, double t, const double *q, const double *v,
                                       const double *lam, double *out) noexcept nogil
    int k_events "ld_model_events"(void *user, double t, const double *q, const double *v,
                                   const double *lam, double *g) noexcept nogil
    int k_accept "ld_model_accept"(void *user, double t, const double *q,
                                   const double *v) noexcept nogil
    int r_phi "ld_model_run_phi"(void *user, double t, const double *q,
                                 double *out) noexcept nogil
    int r_phi_q "ld_model_run_phi_q"(void *user, double t, const double *q,
                                     double *val) noexcept nogil
    int r_phi_t "ld_model_run_phi_t"(void *user, double t, const double *q,
                                     double *out) noexcept nogil
    int r_gamma "ld_model_run_gamma"(void *user, double t, const double *q, const double *v,
                                     double *out) noexcept nogil
    int r_phi_qq_lam "ld_model_run_phi_qq_lam"(void *user, double t, const double *q,
                                               const double *lam, double *val) noexcept nogil


# ---------------------------------------------------------------------------------------------

cdef class RunState


cdef inline const int *_ip(a):
    cdef const int[::1] m = a
    return &m[0] if m.shape[0] > 0 else NULL

cdef inline const double *_dp(a):
    cdef const double[::1] m = a
    return &m[0] if m.shape[0] > 0 else NULL


def term_subsets(a) -> dict:
    """The generic terms' subsets the kernels visit (KernelData, "Subsets of the terms") and
    the constant Jacobian slots' values, from the term arrays of ``a``."""
    ta, tb, tf, coef = a["term_a"], a["term_b"], a["term_tf"], a["term_coef"]
    slots, gen_slot = a["term_slot"].reshape(-1, 2), a["gen_slot"]
    where = np.full(max(int(gen_slot.max(initial=-1)), int(slots.max(initial=-1))) + 1, -1)
    where[gen_slot] = np.arange(len(gen_slot))
    index = np.where(slots >= 0, where[np.maximum(slots, 0)], -1)   # [nterm, 2] gen slots
    if np.any((slots >= 0) & (index < 0)):
        raise ValueError("kernel arrays: a term's Jacobian slot is not among gen_slot")
    fixed = (ta >= 0) & (tb < 0) & (tf == 0)        # linear, no time factor: a constant entry
    const = np.ones(len(gen_slot), dtype=bool)
    moving = index[(ta >= 0) & ~fixed]
    const[moving[moving >= 0]] = False
    values = np.zeros(len(gen_slot))
    own = np.flatnonzero(fixed & const[np.maximum(index[:, 0], 0)])
    np.add.at(values, index[own, 0], coef[own])     # unbuffered, in term order: the kernels'
    varying = (index >= 0) & ~const[np.maximum(index, 0)]                    # own sums
    ints = lambda mask: np.ascontiguousarray(np.flatnonzero(mask), dtype=np.intc)
    return dict(gen_const=values, var_term=ints((ta >= 0) & varying.any(axis=1)),
                gam_term=ints((tb >= 0) | (tf != 0)), time_term=ints(tf != 0),
                quad_term=ints(tb >= 0))


#: The angle rows' arrays (csrc/ld_angles.h), integer ones first.
ANGLE_INT = ("ang_row", "ang_first", "ang_kind", "ang_var_start", "ang_var", "ang_jslot",
             "ang_hstart", "ang_hslot", "ang_form_start", "ang_form_a", "ang_form_b",
             "ang_cam")
ANGLE_DBL = ("ang_scale", "ang_offset", "ang_mult", "ang_form_coef")
#: The cam table (csrc/ld_cams.h) that cam rows and cam records index.
CAM_INT = ("cam_kind", "cam_first")
CAM_DBL = ("cam_par", "cam_start", "cam_coef")


@cython.wraparound(True)
def _cam_table(arrays) -> dict:
    """The cam table of ``arrays`` (none: empty) checked: each cam has pieces, the first at
    0, ascending below 2 pi, and its numbers are finite."""
    a = {name: np.ascontiguousarray(arrays.get(name, ()), dtype=np.intc) for name in CAM_INT}
    a.update({name: np.ascontiguousarray(arrays.get(name, ()), dtype=np.float64)
              for name in CAM_DBL})
    ncam, first, st = a["cam_kind"].shape[0], a["cam_first"], a["cam_start"]
    if ncam == 0 and first.shape[0] <= 1 and st.shape[0] == 0:
        a["cam_first"] = np.zeros(1, dtype=np.intc)
        return a
    fine = (first.shape[0] == ncam + 1 and first[0] == 0 and np.all(np.diff(first) >= 1)
            and st.shape[0] == first[-1] and a["cam_coef"].shape[0] == LD_CAM_NCOEF * first[-1]
            and a["cam_par"].shape[0] == LD_CAM_NPAR * ncam
            and np.all((a["cam_kind"] >= 0) & (a["cam_kind"] <= 3))
            and np.all(np.isfinite(a["cam_par"])) and np.all(np.isfinite(a["cam_coef"])))
    if fine:
        for c in range(ncam):
            piece = st[first[c]:first[c + 1]]
            if piece[0] != 0.0 or np.any(np.diff(piece) <= 0.0) or piece[-1] >= 2.0 * np.pi:
                fine = False
    if not fine:
        raise ValueError("kernel arrays: the cam table (cam_*) is inconsistent "
                         "(csrc/ld_cams.h)")
    return a


@cython.wraparound(True)
def _force_tables(arrays, law) -> dict:
    """The tabulated force laws (rec_table, tab_start, tab_par; csrc/ld_forces.h) checked: a
    table per LD_FORCE_TABLE record and none elsewhere, each m pieces over increasing
    breaks, 6 m + 3 finite numbers."""
    nrec = law.shape[0]
    a = dict(rec_table=np.ascontiguousarray(arrays.get("rec_table", np.full(nrec, -1)),
                                            dtype=np.intc),
             tab_start=np.ascontiguousarray(arrays.get("tab_start", (0,)), dtype=np.intc),
             tab_par=np.ascontiguousarray(arrays.get("tab_par", ()), dtype=np.float64))
    table, start, par = a["rec_table"], a["tab_start"], a["tab_par"]
    ntable = start.shape[0] - 1
    needs = law == 4
    fine = (table.shape[0] == nrec and ntable >= 0 and start[0] == 0
            and start[-1] == par.shape[0] and np.all(np.diff(start) > 0)
            and np.all((table[needs] >= 0) & (table[needs] < ntable))
            and np.all(table[~needs] == -1) and np.all(np.isfinite(par)))
    if fine:
        for k in range(ntable):
            p = par[start[k]:start[k + 1]]
            m = int(p[0]) if p[0] >= 1 and p[0] == int(p[0]) else 0
            if m == 0 or p.shape[0] != 6 * m + 3 or np.any(np.diff(p[1:m + 2]) <= 0.0):
                fine = False
                break
    if not fine:
        raise ValueError("kernel arrays: the force tables (rec_table, tab_start, tab_par) "
                         "are inconsistent (csrc/ld_forces.h)")
    return a


@cython.wraparound(True)
def _cams_fine(kind, cam, cam_kind, cam_kinds, face_kind) -> bool:
    """Whether the entries whose ``kind`` is one of ``cam_kinds`` (angles 2 and 3, records
    4) index the cam table, a face's (``face_kind``) a FACE cam, and all others none (-1)."""
    needs = np.isin(kind, cam_kinds)
    ncam = cam_kind.shape[0]
    if cam.shape[0] != kind.shape[0]:
        return not needs.any() and cam.shape[0] == 0
    if not (np.all((cam[needs] >= 0) & (cam[needs] < ncam)) and np.all(cam[~needs] == -1)):
        return False
    if face_kind is None:
        return True
    face = np.isin(cam_kind[cam[needs]], (2, 3))        # FACE, POLAR_FACE
    return bool(np.array_equal(face, kind[needs] == face_kind))


@cython.wraparound(True)
def _angle_arrays(arrays) -> dict:
    """The angle rows' arrays of ``arrays`` (none: empty), their sizes and every index the
    kernels follow checked against one another and the model's sizes."""
    a = {name: np.ascontiguousarray(arrays.get(name, ()), dtype=np.intc) for name in ANGLE_INT}
    a.update({name: np.ascontiguousarray(arrays.get(name, ()), dtype=np.float64)
              for name in ANGLE_DBL})
    nrow, nangle = a["ang_row"].shape[0], a["ang_kind"].shape[0]
    if nrow == 0 and nangle == 0:
        return a
    first, vs, hs, fs = a["ang_first"], a["ang_var_start"], a["ang_hstart"], a["ang_form_start"]
    m = np.diff(vs) if vs.shape[0] == nangle + 1 else np.zeros(0)
    nq, nc = len(arrays["mass"]), int(arrays["nc"])
    fine = (a["ang_scale"].shape[0] == nrow and a["ang_offset"].shape[0] == nrow
            and first.shape[0] == nrow + 1 and first[0] == 0 and first[-1] == nangle
            and np.all(np.diff(first) >= 1) and a["ang_mult"].shape[0] == nangle
            and np.all((a["ang_kind"] >= 0) & (a["ang_kind"] <= 3))
            and m.shape[0] == nangle and vs[0] == 0 and np.all(m >= 1)
            and np.all(m <= LD_ANGLE_MAXVAR) and vs[-1] == a["ang_var"].shape[0]
            and a["ang_jslot"].shape[0] == vs[-1] and hs.shape[0] == nangle + 1
            and hs[0] == 0 and np.array_equal(np.diff(hs), m * m)
            and a["ang_hslot"].shape[0] == hs[-1] and fs.shape[0] == 2 * nangle + 1
            and fs[0] == 0 and np.all(np.diff(fs) >= 0)
            and fs[-1] == a["ang_form_a"].shape[0] == a["ang_form_b"].shape[0]
            == a["ang_form_coef"].shape[0])
    if fine:
        owner = np.repeat(np.arange(nangle), np.diff(fs).reshape(-1, 2).sum(axis=1))
        fine = (np.all((a["ang_row"] >= 0) & (a["ang_row"] < nc))
                and np.all((a["ang_var"] >= 0) & (a["ang_var"] < nq))
                and np.all((a["ang_jslot"] >= 0) & (a["ang_jslot"] < len(arrays["phiq_rowind"])))
                and np.all((a["ang_hslot"] >= 0)
                           & (a["ang_hslot"] < len(arrays["hess_rowind"])))
                and np.all((a["ang_form_a"] >= -1) & (a["ang_form_a"] < m[owner]))
                and np.all((a["ang_form_b"] >= -1) & (a["ang_form_b"] < m[owner]))
                and np.all((a["ang_form_b"] < 0) | (a["ang_form_a"] >= 0))
                and _cams_fine(a["ang_kind"], a["ang_cam"], arrays["cam_kind"], (2, 3), 3))
    if not fine:
        raise ValueError("kernel arrays: the angle rows' arrays (ang_*) are inconsistent or "
                         "out of range (csrc/ld_angles.h)")
    return a


cdef void _bind_angles(ld_angles *A, dict a):
    A.nrow = a["ang_row"].shape[0]
    A.row = _ip(a["ang_row"])
    A.scale = _dp(a["ang_scale"])
    A.offset = _dp(a["ang_offset"])
    A.first = _ip(a["ang_first"])
    A.nangle = a["ang_kind"].shape[0]
    A.kind = _ip(a["ang_kind"])
    A.mult = _dp(a["ang_mult"])
    A.var_start = _ip(a["ang_var_start"])
    A.var = _ip(a["ang_var"])
    A.jslot = _ip(a["ang_jslot"])
    A.hstart = _ip(a["ang_hstart"])
    A.hslot = _ip(a["ang_hslot"])
    A.form_start = _ip(a["ang_form_start"])
    A.form_a = _ip(a["ang_form_a"])
    A.form_b = _ip(a["ang_form_b"])
    A.form_coef = _dp(a["ang_form_coef"])
    A.cam = _ip(a["ang_cam"])
    _bind_cams(&A.cams, a)


cdef void _bind_cams(ld_cams *C, dict a):
    C.ncam = a["cam_kind"].shape[0]
    C.kind = _ip(a["cam_kind"])
    C.par = _dp(a["cam_par"])
    C.first = _ip(a["cam_first"])
    C.start = _dp(a["cam_start"])
    C.coef = _dp(a["cam_coef"])


cdef class Kernels:
    """Kernels bound to one compiled model's arrays (kept alive here).

    Built by :func:`linkdyn.model.compile_model`; users reach it as ``Model.kernels``.
    All methods take float64 arrays of the model's sizes and release the GIL while computing.
    """

    cdef KernelData data
    cdef ld_system system
    cdef readonly object arrays
    cdef readonly object law_values
    cdef readonly object phiq_const   # [phiq_nnz] 1 where a Phi_q entry never changes
    cdef readonly int nq, nc, phiq_nnz, fq_nnz, fv_nnz, hess_nnz
    cdef readonly int nrec, nload, ninput, nz, driver_work_index
    cdef readonly int body_stride   # coordinates per body: 4 planar, 12 spatial
    cdef RunState _own

    def __init__(self, dict arrays):
        need_int = ("unit_row", "unit_body", "unit_slot", "unit_hslot", "rev_body", "rev_row", "rev_slot",
                    "phiq_colptr", "phiq_rowind", "fq_colptr", "fq_rowind",
                    "fv_colptr", "fv_rowind", "hess_colptr", "hess_rowind",
                    "gen_row", "gen_slot", "term_row", "term_a", "term_b", "term_tf",
                    "term_law", "term_slot", "term_hslot", "law_kind", "law_start",
                    "rec_coord", "rec_body", "rec_ref_law", "rec_load_law", "rec_input_mode",
                    "rec_input", "rec_slot_q", "rec_slot_v", "load_body", "load_frame",
                    "load_laws", "load_slot_q", "rec_law")
        need_dbl = ("mass", "q_applied", "rev_local", "term_coef", "law_par", "rec_geom",
                    "rec_k", "rec_c", "rec_ref_value", "load_point", "angle_ref0",
                    "rec_law_par")
        a = {}
        for name in need_int:
            a[name] = np.ascontiguousarray(arrays[name], dtype=np.intc)
        for name in need_dbl:
            a[name] = np.ascontiguousarray(arrays[name], dtype=np.float64)
        # Frame rows of spatial bodies (none elsewhere), with their bounds checked: the
        # kernels index q and the value arrays with them.
        nframe = len(arrays.get("frame_base", ()))
        for name, per in (("frame_base", 1), ("frame_row", 1), ("frame_slot", 27),
                          ("frame_hslot", 27)):
            a[name] = np.ascontiguousarray(arrays.get(name, np.zeros(0)), dtype=np.intc)
            if a[name].shape[0] != per * nframe:
                raise ValueError(f"kernel arrays: {name} must have {per} entries per body")
        if a["frame_base"].shape[0] and (
                a["frame_base"].min() < 0 or a["frame_base"].max() + 9 > a["mass"].shape[0]
                or a["frame_row"].min() < 0 or a["frame_row"].max() + 6 > int(arrays["nc"])
                or a["frame_slot"].min() < 0
                or a["frame_slot"].max() >= a["phiq_rowind"].shape[0]
                or a["frame_hslot"].min() < 0
                or a["frame_hslot"].max() >= a["hess_rowind"].shape[0]):
            raise ValueError("kernel arrays: a frame row's coordinate, row or slot is out of "
                             "range")
        # The senses of contact records (+1 where absent: every contact pushes s up).
        a["rec_law_sense"] = np.ascontiguousarray(
            arrays.get("rec_law_sense", np.ones(a["rec_coord"].shape[0])), dtype=np.float64)
        if a["rec_law_sense"].shape != a["rec_coord"].shape or \
                not np.all(np.abs(a["rec_law_sense"]) == 1.0):
            raise ValueError("kernel arrays: rec_law_sense must hold +1 or -1 per record")
        # Spatial force records (stride 12): their geometry and the kinds and axes of loads.
        self.body_stride = int(arrays.get("body_stride", 4))
        if self.body_stride not in (4, 12):
            raise ValueError("kernel arrays: body_stride must be 4 or 12")
        if self.body_stride == 12:
            a["load_kind"] = np.ascontiguousarray(arrays["load_kind"], dtype=np.intc)
            a["rec_geom3"] = np.ascontiguousarray(arrays["rec_geom3"], dtype=np.float64)
            a["load_axes"] = np.ascontiguousarray(arrays["load_axes"], dtype=np.float64)
            nrec, nload = a["rec_coord"].shape[0], a["load_body"].shape[0]
            if (a["rec_geom3"].shape[0] != 15 * nrec or a["rec_slot_q"].shape[0] != 576 * nrec
                    or a["rec_slot_v"].shape[0] != 576 * nrec
                    or a["load_slot_q"].shape[0] != 144 * nload
                    or a["load_point"].shape[0] != 3 * nload
                    or a["load_laws"].shape[0] != 3 * nload
                    or a["load_kind"].shape[0] != nload or a["load_axes"].shape[0] != 9 * nload):
                raise ValueError("kernel arrays: spatial force records need 15 geometry "
                                 "entries and 576 slots each, loads 3 points, 3 laws, 9 "
                                 "axes and 144 slots each")
            # Each body's twelve coordinates r, e_1, e_2, e_3 in q (-1: a rod's absent
            # e_2, e_3), which the records and loads read and write q through; without
            # rods there is none, and body b's are 12 b .. 12 b + 11.
            if "body_view" in arrays:
                view = np.asarray(arrays["body_view"], dtype=np.int64).ravel()
                a["body_view"] = np.ascontiguousarray(view, dtype=np.intc)
                nview = view.shape[0] // 12
            else:
                view, nview = np.zeros(0, dtype=np.int64), a["mass"].shape[0] // 12
            if (view.shape[0] % 12 or view.shape[0] and (view.min() < -1 or
                                                          view.max() >= a["mass"].shape[0])
                    or np.any(a["rec_body"] >= nview) or np.any(a["load_body"] >= nview)
                    or np.any(a["load_body"] < 0)):
                raise ValueError("kernel arrays: the 12 coordinates (body_view: or -1) of "
                                 "every body that a force record or load names must be in q")
        a.update(term_subsets(a))
        a.update(_cam_table(arrays))
        a["rec_cam"] = np.ascontiguousarray(
            arrays.get("rec_cam", np.full(a["rec_coord"].shape[0], -1)), dtype=np.intc)
        cam_recs = a["rec_coord"] == 4
        if not _cams_fine(a["rec_coord"], a["rec_cam"], a["cam_kind"], (4,), None) or (
                cam_recs.any() and (self.body_stride != 4 or np.any(
                    a["rec_body"].reshape(-1, 2)[cam_recs] < 0))):
            raise ValueError("kernel arrays: a cam record (rec_coord 4) must join two bodies "
                             "of a planar model and name a cam of the table (rec_cam)")
        a.update(_angle_arrays({**arrays, "cam_kind": a["cam_kind"]}))
        a.update(_force_tables(arrays, a["rec_law"]))
        for arr in a.values():
            arr.flags.writeable = False
        self.arrays = a
        # Bodies own 4 coordinates each; natural-coordinate models (linkdyn.natural) have
        # no bodies and only generic rows.
        nbody = int(arrays.get("nbody", a["mass"].shape[0] // 4))
        self.nq = a["mass"].shape[0]
        self.nc = int(arrays["nc"])
        if nbody < 0 or 4 * nbody > self.nq:
            raise ValueError("kernel arrays: mass must have 4 entries per body")
        if np.any(np.diff(a["term_row"]) < 0):   # k_phi sums each row's run of terms
            raise ValueError("kernel arrays: term_row must be non-decreasing")
        self.phiq_nnz = a["phiq_rowind"].shape[0]
        self.fq_nnz = a["fq_rowind"].shape[0]
        self.fv_nnz = a["fv_rowind"].shape[0]
        self.hess_nnz = a["hess_rowind"].shape[0]

        self.data.nbody = nbody
        self.data.nq = self.nq
        self.data.nc = self.nc
        self.data.mass = _dp(a["mass"])
        self.data.q_applied = _dp(a["q_applied"])
        self.data.nframe = a["frame_row"].shape[0]
        self.data.frame_base = _ip(a["frame_base"])
        self.data.frame_row = _ip(a["frame_row"])
        self.data.frame_slot = _ip(a["frame_slot"])
        self.data.frame_hslot = _ip(a["frame_hslot"])
        self.data.nunit = a["unit_row"].shape[0]
        self.data.unit_body = _ip(a["unit_body"])
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
        self.data.gen_const = _dp(a["gen_const"])
        self.data.nvar_term = a["var_term"].shape[0]
        self.data.var_term = _ip(a["var_term"])
        self.data.ngam_term = a["gam_term"].shape[0]
        self.data.gam_term = _ip(a["gam_term"])
        self.data.ntime_term = a["time_term"].shape[0]
        self.data.time_term = _ip(a["time_term"])
        self.data.nquad_term = a["quad_term"].shape[0]
        self.data.quad_term = _ip(a["quad_term"])
        self.data.hess_nnz = a["hess_rowind"].shape[0]
        self.data.phiq_nnz = self.phiq_nnz
        _bind_angles(&self.data.angles, a)
        self.data.laws.nlaw = a["law_kind"].shape[0]
        self.data.laws.kind = _ip(a["law_kind"])
        self.data.laws.start = _ip(a["law_start"])
        self.data.laws.par = _dp(a["law_par"])
        # Values of caller-evaluated (kind 2) laws live in a RunState (attached below).

        cdef ld_forces *F = &self.data.forces
        F.stride = self.body_stride
        F.nrec = a["rec_coord"].shape[0]
        F.coord = _ip(a["rec_coord"])
        F.body = _ip(a["rec_body"])
        F.geom = _dp(a["rec_geom"])
        F.stiffness = _dp(a["rec_k"])
        F.damping = _dp(a["rec_c"])
        F.ref_law = _ip(a["rec_ref_law"])
        F.ref_value = _dp(a["rec_ref_value"])
        F.load_law = _ip(a["rec_load_law"])
        F.input_mode = _ip(a["rec_input_mode"])
        F.input = _ip(a["rec_input"])
        F.slot_q = _ip(a["rec_slot_q"])
        F.slot_v = _ip(a["rec_slot_v"])
        F.law = _ip(a["rec_law"])
        F.law_par = _dp(a["rec_law_par"])
        F.law_sense = _dp(a["rec_law_sense"])
        F.table = _ip(a["rec_table"])
        F.tab_start = _ip(a["tab_start"])
        F.tab_par = _dp(a["tab_par"])
        F.cam = _ip(a["rec_cam"])
        _bind_cams(&F.cams, a)
        F.geom3 = _dp(a["rec_geom3"]) if "rec_geom3" in a else NULL
        F.body_view = _ip(a["body_view"]) if "body_view" in a else NULL
        F.nload = a["load_body"].shape[0]
        F.load_body = _ip(a["load_body"])
        F.load_point = _dp(a["load_point"])
        F.load_frame = _ip(a["load_frame"])
        F.load_laws = _ip(a["load_laws"])
        F.load_slot_q = _ip(a["load_slot_q"])
        F.load_kind = _ip(a["load_kind"]) if "load_kind" in a else NULL
        F.load_axes = _dp(a["load_axes"]) if "load_axes" in a else NULL
        F.laws = &self.data.laws
        self.nrec = F.nrec
        self.nload = F.nload
        self.ninput = int(np.max(a["rec_input"], initial=-1)) + 1
        self.nz = 2 * F.nrec + F.nload
        # z: the force elements' work (nrec + nload), their tracked coordinates (nrec), then
        # the driven rows' work where rows depend on time
        self.driver_work_index = self.nz if self.data.ntime_term > 0 else -1
        self.data.driver_work = self.driver_work_index
        self.nz += self.driver_work_index >= 0
        # The model's own per-run state: no inputs, reference angles of the guesses, law
        # values zero; runs never write it (the model's ld_system has no accept hook).
        self._own = RunState(self, a["angle_ref0"])
        self._own.attach(&self.data)
        # The model's own law values are never written: caller-evaluated laws (Python
        # functions) get their values in a run's RunState (thread safety).
        self._own.law_values.flags.writeable = False
        self.law_values = self._own.law_values
        self.data.fq_nnz = self.fq_nnz
        self.data.fv_nnz = self.fv_nnz

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
        self.system.force_q = k_force_q
        self.system.force_v = k_force_v
        self.system.phi_qq_lam = k_phi_qq_lam
        self.system.nz = self.nz
        self.system.aux_rate = k_aux_rate
        self.system.accept = NULL
        self.phiq_const = np.zeros(max(1, self.phiq_nnz), dtype=np.intc)
        cdef int[::1] pconst = self.phiq_const
        k_phiq_const(&self.data, &pconst[0])
        self.system.phiq_const = &pconst[0]

    def system_capsule(self):
        """A PyCapsule named ``"linkdyn.ld_system"`` holding a pointer to this model's
        ``ld_system`` (valid while this object lives)."""
        return PyCapsule_New(<void *> &self.system, b"linkdyn.ld_system", NULL)

    # -- argument checks at the Python edge ------------------------------------------------
    cdef _vec(self, x, int n, str what):
        try:
            arr = np.ascontiguousarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise ArgumentError(f"{what} must be an array of {n} numbers, got {x!r}") from None
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ArgumentError(f"{what} must be a 1-D array of length {n}, got shape {arr.shape}")
        return arr

    cdef _out(self, out, int n, str what):
        if out is None:
            return np.empty(n)
        if (not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.ndim != 1
                or out.shape[0] != n or not out.flags.c_contiguous or not out.flags.writeable):
            raise ArgumentError(f"{what} must be a writeable contiguous float64 array of length {n}")
        return out

    def phi(self, q, double t=0.0, out=None, RunState state=None):
        """Constraint residuals Phi(q, t), shape (nc,). These evaluations use the per-run
        state ``state`` (the values of caller-evaluated laws, the branches of angles) or,
        by default, the model's own, which no run writes."""
        cdef KernelData d = self.data
        (state if state is not None else self._own).attach(&d)
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        res = self._out(out, self.nc, "out")
        cdef double[::1] o = res
        with nogil:
            k_phi(&d, t, &qv[0], &o[0])
        return res

    def phi_q_values(self, q, double t=0.0, out=None, RunState state=None):
        """Values of Phi_q in the fixed CSC pattern, shape (phiq_nnz,)."""
        cdef KernelData d = self.data
        (state if state is not None else self._own).attach(&d)
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        res = self._out(out, self.phiq_nnz, "out")
        cdef double[::1] o = res
        with nogil:
            k_phi_q(&d, t, &qv[0], &o[0])
        return res

    def phi_t(self, q, double t=0.0, out=None, RunState state=None):
        """Partial time derivative of Phi, shape (nc,)."""
        cdef KernelData d = self.data
        (state if state is not None else self._own).attach(&d)
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        res = self._out(out, self.nc, "out")
        cdef double[::1] o = res
        with nogil:
            k_phi_t(&d, t, &qv[0], &o[0])
        return res

    def gamma(self, q, v, double t=0.0, out=None, RunState state=None):
        """Right-hand side of Phi_q qdd = gamma, shape (nc,)."""
        cdef KernelData d = self.data
        (state if state is not None else self._own).attach(&d)
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        res = self._out(out, self.nc, "out")
        cdef double[::1] o = res
        with nogil:
            k_gamma(&d, t, &qv[0], &vv[0], &o[0])
        return res

    def force(self, q, v, double t=0.0, out=None, RunState state=None):
        """Generalised applied forces Q(q, v, t), shape (nq,)."""
        cdef KernelData d = self.data
        (state if state is not None else self._own).attach(&d)
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        res = self._out(out, self.nq, "out")
        cdef double[::1] o = res
        cdef int st
        with nogil:
            st = k_force(&d, t, &qv[0], &vv[0], &o[0])
        if st != LD_OK:
            raise ValueError("a spring-damper's two points coincide", d.run.fail_record[0])
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

    def constraint_norms(self, q, v, double t=0.0, RunState state=None):
        """(|Phi(q, t)|, |Phi_q v + Phi_t|), Euclidean norms, computed without the GIL."""
        cdef KernelData d = self.data
        (state if state is not None else self._own).attach(&d)
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
            k_phi(&d, t, &qv[0], phi)
            k_phi_t(&d, t, &qv[0], phid)
            k_phi_q(&d, t, &qv[0], vals)
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

    def potential_energy(self, q, double t=0.0, RunState state=None):
        """Potential energy (J): uniform gravity (zero at q = 0) plus the energy stored in the
        springs at time t, their angles on the branch of ``state`` (default: the model's
        own, the guesses' relative angles)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef double s = 0.0
        cdef int j
        cdef KernelData d = self.data
        (state if state is not None else self._own).attach(&d)
        with nogil:
            for j in range(self.nq):
                s -= self.data.q_applied[j] * qv[j]
            s += ld_forces_potential(&d.forces, &d.run, t, &qv[0])
        return s

    def force_values(self, q, v, double t=0.0, RunState state=None):
        """Force-element values at one state: (records (nrec, 3) of (s, s', f), loads
        (nload, 2) global force), with the branch and inputs of ``state`` (default: the
        model's own)."""
        cdef const double[::1] qv = self._vec(q, self.nq, "q")
        cdef const double[::1] vv = self._vec(v, self.nq, "v")
        cdef int dim = 3 if self.body_stride == 12 else 2
        out = np.zeros(3 * self.nrec + dim * self.nload + 1)
        cdef double[::1] o = out
        cdef KernelData d = self.data
        cdef int st
        (state if state is not None else self._own).attach(&d)
        with nogil:
            st = ld_forces_values(&d.forces, &d.run, t, &qv[0], &vv[0], &o[0])
        if st != LD_OK:   # args: message, the failing record (see Model.force_info)
            raise ValueError("a spring-damper's two points coincide",
                             (state if state is not None else self._own).fail)
        return (out[:3 * self.nrec].reshape(-1, 3),
                out[3 * self.nrec:3 * self.nrec + dim * self.nload].reshape(-1, dim))

    def run_state(self, angle_ref=None):
        """A fresh :class:`RunState` for one run of this model (inputs zero; reference
        angles ``angle_ref`` (nrec,), default those of the guesses)."""
        return RunState(self, self.arrays["angle_ref0"] if angle_ref is None else angle_ref)


cdef class RunState:
    """What one run of a model may change, kept apart from the model: controller inputs
    (``inputs``, and ``active`` for inputs that replace a servo's target), the reference
    angle of each angle record (the branch an angle is taken on, moved after each accepted
    step), and the record that failed. It carries its own ld_system (the model's, with this
    state behind the user pointer and the accept hook set), so runs of one model in several
    threads do not interfere."""

    cdef KernelData data
    cdef ld_system system
    cdef readonly Kernels kernels
    cdef readonly object inputs, active, angle_ref, impact, law_values, slip, gate
    cdef readonly object row_active, stick_c0
    cdef object _events, _stick
    cdef int _fail

    def __init__(self, Kernels kernels, angle_ref):
        self.kernels = kernels
        self.inputs = np.zeros(max(1, kernels.ninput))
        self.active = np.zeros(max(1, kernels.ninput), dtype=np.intc)
        ref = np.array(angle_ref, dtype=np.float64).reshape(-1)
        if ref.shape[0] != kernels.nrec:
            raise ValueError(f"angle_ref must have {kernels.nrec} entries")
        self.angle_ref = np.concatenate([ref, [0.0]])
        self.impact = np.zeros(kernels.nrec + 1)
        self.slip = np.zeros(kernels.nrec + 1)
        self.gate = np.ones(kernels.nrec + 1)
        self.law_values = np.zeros(3 * max(1, kernels.data.laws.nlaw))
        self._fail = -1
        if kernels._own is not None:
            self.data = kernels.data
            self.attach(&self.data)
            self.system = kernels.system
            self.system.user = <void *> &self.data
            self.system.accept = k_accept

    cdef attach(self, KernelData *d):
        cdef double[::1] i = self.inputs
        cdef int[::1] a = self.active
        cdef double[::1] r = self.angle_ref
        cdef double[::1] im = self.impact
        cdef const double[::1] lv = self.law_values
        d.run.impact = &im[0]
        d.laws.values = &lv[0]
        d.run.input = &i[0]
        d.run.input_active = &a[0]
        d.run.angle_ref = &r[0]
        d.run.fail_record = &self._fail
        cdef double[::1] sl = self.slip
        d.run.slip = &sl[0]
        cdef double[::1] ga = self.gate
        d.run.gate = &ga[0]
        cdef int[::1] ra
        if self.row_active is not None:
            ra = self.row_active
            d.row_active = &ra[0]
        d.forces.laws = &d.laws

    def set_events(self, dict ev):
        """Install the run's events (arrays from :func:`linkdyn.events.compile_events`)."""
        if self.kernels._own is None or self is self.kernels._own:
            raise ValueError("events belong to a run, not to the model")
        a = dict(kind=np.ascontiguousarray(ev["kind"], dtype=np.intc),
                 direction=np.ascontiguousarray(ev["direction"], dtype=np.intc),
                 body=np.ascontiguousarray(ev["body"], dtype=np.intc),
                 coef=np.ascontiguousarray(ev["coef"], dtype=np.float64).reshape(-1),
                 const=np.ascontiguousarray(ev["const"], dtype=np.float64),
                 record=np.ascontiguousarray(ev["record"], dtype=np.intc),
                 index=np.ascontiguousarray(ev["index"], dtype=np.intc).reshape(-1),
                 gate=np.ascontiguousarray(ev.get("gate", np.full(len(ev["kind"]), -1)),
                                           dtype=np.intc))
        n = a["kind"].shape[0]
        if any(x.shape[0] != n * (4 if k in ("coef", "index") else 1) for k, x in a.items()):
            raise ValueError("event arrays of inconsistent lengths")
        linear = (a["kind"] == 0) | (a["kind"] == 7)
        idx = a["index"].reshape(n, 4)[linear]
        if idx.size and (idx.min() < 0 or idx.max() >= self.kernels.nq):
            raise ValueError("event arrays: a linear event's coordinate index is out of range")
        self._events = a   # keeps the arrays alive
        self.data.nev = n
        self.data.ev_kind = _ip(a["kind"])
        self.data.ev_body = _ip(a["body"])
        self.data.ev_coef = _dp(a["coef"])
        self.data.ev_index = _ip(a["index"])
        self.data.ev_const = _dp(a["const"])
        self.data.ev_record = _ip(a["record"])
        self.data.ev_gate = _ip(a["gate"])
        self.system.nev = n
        self.system.event_direction = _ip(a["direction"])
        self.system.events = NULL
        if n > 0:
            self.system.events = k_events

    def deactivate_rows(self, rows):
        """Switch the model's constraint rows ``rows`` off in this run: the integrator
        then holds each at lam = 0 and leaves its residual alone (the dependent rows of a
        redundant set, which the others imply; linkdyn.solve.redundant). Call after
        ``enable_stick_rows`` (which makes the switches) and before an integrator is
        created on this run."""
        if self.kernels._own is None or self is self.kernels._own:
            raise ValueError("row switches belong to a run, not to the model")
        k = self.kernels
        idx = np.asarray(rows, dtype=np.intp).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= k.nc):
            raise ValueError("deactivate_rows: a row is out of range")
        if self.row_active is None:
            self.row_active = np.ones(k.nc, dtype=np.intc)
        self.row_active[idx] = 0
        cdef int[::1] ra = self.row_active
        self.data.row_active = &ra[0]
        self.system.row_active = &ra[0]

    def enable_stick_rows(self, dict st):
        """Give this run's system one switchable constraint row per contact with friction
        (arrays from :func:`linkdyn.friction.stick_arrays`): row nc + k holds friction
        record ``stick_rec[k]``'s rolling coordinate at ``stick_c0[k]`` while
        ``row_active[nc + k]`` is set. Call before an integrator is created on this run."""
        if self.kernels._own is None or self is self.kernels._own:
            raise ValueError("stick rows belong to a run, not to the model")
        k = self.kernels
        ints = ("stick_rec", "stick_slot", "stick_hslot", "base_phiq_map", "base_hess_map",
                "phiq_colptr", "phiq_rowind", "hess_colptr", "hess_rowind")
        a = {name: np.ascontiguousarray(st[name], dtype=np.intc) for name in ints}
        ns = a["stick_rec"].shape[0]
        width = 2 * k.body_stride     # a record's local block: two bodies' coordinates
        if (ns == 0 or a["stick_slot"].shape[0] != width * ns or
                a["stick_hslot"].shape[0] != width * width * ns or
                a["base_phiq_map"].shape[0] != k.phiq_nnz or
                a["base_hess_map"].shape[0] != k.hess_nnz or
                a["phiq_colptr"].shape[0] != k.nq + 1 or a["hess_colptr"].shape[0] != k.nq + 1):
            raise ValueError("stick-row arrays of inconsistent sizes")
        a["scratch_phiq"] = np.zeros(max(1, k.phiq_nnz))
        a["scratch_hess"] = np.zeros(max(1, k.hess_nnz))
        self._stick = a
        self.stick_c0 = np.zeros(ns)
        self.row_active = np.ones(k.nc + ns, dtype=np.intc)
        self.row_active[k.nc:] = 0
        cdef double[::1] sp = a["scratch_phiq"]
        cdef double[::1] sh = a["scratch_hess"]
        cdef double[::1] c0 = self.stick_c0
        cdef int[::1] ra = self.row_active
        self.data.nstick = ns
        self.data.stick_width = width
        self.data.stick_rec = _ip(a["stick_rec"])
        self.data.stick_c0 = &c0[0]
        self.data.stick_slot = _ip(a["stick_slot"])
        self.data.stick_hslot = _ip(a["stick_hslot"])
        self.data.base_phiq_map = _ip(a["base_phiq_map"])
        self.data.base_hess_map = _ip(a["base_hess_map"])
        self.data.phiq_ext_nnz = a["phiq_rowind"].shape[0]
        self.data.hess_ext_nnz = a["hess_rowind"].shape[0]
        self.data.scratch_phiq = &sp[0]
        self.data.scratch_hess = &sh[0]
        self.data.row_active = &ra[0]
        self.system.nc = k.nc + ns
        self.system.phiq_nnz = a["phiq_rowind"].shape[0]
        self.system.phiq_colptr = _ip(a["phiq_colptr"])
        self.system.phiq_rowind = _ip(a["phiq_rowind"])
        self.system.hess_nnz = a["hess_rowind"].shape[0]
        self.system.hess_colptr = _ip(a["hess_colptr"])
        self.system.hess_rowind = _ip(a["hess_rowind"])
        self.system.phi = r_phi
        self.system.phi_q = r_phi_q
        self.system.phi_t = r_phi_t
        self.system.gamma = r_gamma
        self.system.phi_qq_lam = r_phi_qq_lam
        self.system.row_active = &ra[0]
        # the model's constant entries where they sit in the merged pattern; stick rows vary
        ext_const = np.zeros(max(1, self.data.phiq_ext_nnz), dtype=np.intc)
        ext_const[a["base_phiq_map"]] = np.asarray(k.phiq_const)[:k.phiq_nnz]
        a["phiq_const"] = ext_const
        cdef int[::1] pconst = ext_const
        self.system.phiq_const = &pconst[0]

    def coordinate_derivs(self, int record, q, v):
        """(s, idx (24,), g (24,), vHv) of force record ``record`` at (q, v) on this run's
        branch: s'' = g . q''[idx] + vHv (idx -1: the ground)."""
        k = self.kernels
        cdef const double[::1] qv = np.ascontiguousarray(q, dtype=np.float64)
        cdef const double[::1] vv = np.ascontiguousarray(v, dtype=np.float64)
        if qv.shape[0] != k.nq or vv.shape[0] != k.nq or not 0 <= record < k.nrec:
            raise ValueError("coordinate_derivs: bad record or state size")
        idx = np.full(24, -1, dtype=np.intc)
        g = np.zeros(24)
        cdef int[::1] iv = idx
        cdef double[::1] gv = g
        cdef double s = 0.0, vhv = 0.0
        cdef int st
        cdef KernelData d = self.data
        self.attach(&d)
        with nogil:
            st = ld_forces_coordinate_derivs(&d.forces, &d.run, record, &qv[0], &vv[0],
                                             &iv[0], &s, &gv[0], &vhv)
        if st != LD_OK:
            raise ValueError(f"force record {record} cannot be evaluated at this state",
                             record)
        return s, idx, g, vhv

    @property
    def fail(self):
        """The record whose evaluation failed last (-1: none)."""
        return self._fail

    def system_capsule(self):
        """A PyCapsule ``"linkdyn.ld_system"`` of this run's system (valid while this object
        lives)."""
        return PyCapsule_New(<void *> &self.system, b"linkdyn.ld_system", NULL)
