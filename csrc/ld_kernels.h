/*
 * ld_kernels.h -- the compiled model: its arrays (the schema the compiler fills, see
 * src/linkdyn/_kernels.pyx, Kernels) and the kernels that evaluate it, with the signatures
 * of ld_system.h. A model in these arrays plus the integrator runs with no Python.
 *
 * Per planar body i the coordinates are q[4i:4i+4] = (x, y, ux, uy); spatial bodies in
 * natural coordinates have their point and axes at frame_base. Each element type is a group
 * of flat arrays (body indices, local coordinates, first constraint row, the positions
 * ("slots") of its Jacobian entries in the fixed CSC patterns). The kernels take the model
 * as their user pointer; nothing in them allocates or looks anything up by name.
 */
#ifndef LD_KERNELS_H
#define LD_KERNELS_H

#include "ld_angles.h"
#include "ld_forces.h"
#include "ld_laws.h"
#include "ld_system.h"

typedef struct ld_model {
    int nbody;
    int nq;
    int nc;
    const double *mass;         /* [nq] diagonal mass matrix */
    const double *q_applied;    /* [nq] constant generalised forces (uniform gravity) */
    int nunit;                  /* bodies with a unit-vector row (all but armature rotors) */
    const int *unit_body;       /* [nunit] the body of each unit-vector row */
    const int *unit_row;        /* [nunit] its row */
    const int *unit_slot;       /* [nunit, 2] slots of d/dux, d/duy */
    const int *unit_hslot;      /* [nunit, 2] slots of (ux, ux), (uy, uy) in the Hessian pattern */
    /* Frame rows of spatial bodies in natural coordinates: per body, the six rows uu, vv, ww,
     * uv, uw, vw (unit and orthogonal principal axes e1, e2, e3 at coordinates frame_base ..
     * + 9), in that order from row frame_row. */
    int nframe;
    const int *frame_base;      /* [nframe] coordinate of e1's x */
    const int *frame_row;       /* [nframe] the first of the body's six rows */
    const int *frame_slot;      /* [nframe, 27] Jacobian slots (ld_kernels.c, "Frame rows") */
    const int *frame_hslot;     /* [nframe, 27] Hessian slots, the same entries */
    int nrev;
    const int *rev_body;        /* [nrev, 2] body of each side, -1 for the ground */
    const double *rev_local;    /* [nrev, 4] (xi, eta) of each side; ground side: global (x, y) */
    const int *rev_row;         /* [nrev] first of the joint's two rows */
    const int *rev_slot;        /* [nrev, 12] slots, side 1 then side 2; each side: row x
                                     (d/dx, d/dux, d/duy), row y (d/dy, d/dux, d/duy) */
    /* Generic rows: sums of terms coef * g(t) * m(q), m = q_a q_b (quadratic), q_a (linear)
     * or 1 (constant); g(t) = 1, cos f(t), sin f(t) or f(t) for a driving law f. */
    int ngen_rows;
    const int *gen_row;         /* [ngen_rows] the rows (residuals zeroed, then accumulated) */
    int ngen_slots;
    const int *gen_slot;        /* [ngen_slots] their Jacobian slots */
    int nterm;
    const int *term_row;        /* [nterm] */
    const int *term_a;          /* [nterm] first coordinate, -1 for a constant term */
    const int *term_b;          /* [nterm] second coordinate, -1 for a linear term */
    const int *term_tf;         /* [nterm] 0: g = 1, 1: cos f, 2: sin f, 3: f, 4: f^2 */
    const int *term_law;        /* [nterm] driving law index (when term_tf > 0) */
    const double *term_coef;    /* [nterm] */
    const int *term_slot;       /* [nterm, 2] Jacobian slots of d/dq_a, d/dq_b (-1 if none) */
    const int *term_hslot;      /* [nterm, 2] Hessian slots of (a, b), (b, a) (-1 if none) */
    /* Subsets of the terms, in term order, so that each kernel visits only the terms that
     * can change its output (a spatial joint's rows are all linear terms without a time
     * factor: constant Jacobian entries and no gamma). Each kernel's sums are the same, term
     * for term, as over all terms. */
    const double *gen_const;    /* [ngen_slots] a slot's value when all its terms are linear
                                     without a time factor (their sum in term order), else 0 */
    int nvar_term;
    const int *var_term;        /* terms with a coordinate that write a slot not constant */
    int ngam_term;
    const int *gam_term;        /* terms with a nonzero gamma: quadratic or time-dependent */
    int ntime_term;
    const int *time_term;       /* terms with a time factor (Phi_t) */
    int driver_work;            /* index in z of the driven rows' work (-1: no time terms) */
    int nquad_term;
    const int *quad_term;       /* quadratic terms (the Hessian) */
    ld_angles angles;           /* rows in angles: gear pairs, racks (csrc/ld_angles.h) */
    int hess_nnz;
    int phiq_nnz;
    ld_laws laws;               /* driving laws (csrc/ld_laws.h); values of kind-2 laws in
                                     the law_values array of a RunState (per run) */
    ld_forces forces;           /* force elements (csrc/ld_forces.h) */
    ld_forces_run run;          /* per-run state of the force elements: the model's own
                                     (inputs zero, reference angles from the guesses), or a
                                     Run's copy */
    int fq_nnz;
    int fv_nnz;
    /* Stick rows of a run with friction (linkdyn.friction): row nc + k holds friction record
     * stick_rec[k]'s rolling coordinate at stick_c0[k] while that contact sticks. They live
     * in the run's own ld_system, whose Phi_q and Hessian patterns are the model's merged
     * with theirs: the model's kernels write into scratch arrays that are scattered through
     * base_phiq_map / base_hess_map. nstick = 0 in the model's own data. */
    int nstick;
    const int *stick_rec;       /* [nstick] */
    const double *stick_c0;     /* [nstick] */
    int stick_width;            /* the records' local block: 8 planar, 24 spatial */
    const int *stick_slot;      /* [nstick, width] Phi_q slots of the record's local block
                                   (-1) */
    const int *stick_hslot;     /* [nstick, width^2] Hessian slots (-1) */
    const int *base_phiq_map;   /* [phiq_nnz of the model] */
    const int *base_hess_map;   /* [hess_nnz of the model] */
    int phiq_ext_nnz;
    int hess_ext_nnz;
    double *scratch_phiq;
    double *scratch_hess;
    /* Events of a run (linkdyn.events): 0 marker coordinate c . q_body + c0, 1 a force
     * record's coordinate + c0, 2 a contact record's penetration (sense (gap - s)), 3 a
     * sliding contact comes to rest (sigma s' of friction record ev_record; 1 when not
     * sliding), 4 a sticking contact's friction reaches its limit (mu0 F_N - |lam| of stick
     * row ev_body, mu0 = ev_const; F_N = 1 for a joint's friction, which has no normal
     * record; 1 when not sticking), 5 a foot passes another along a ground
     * line: t . (p_i - p_j), body i = ev_body, body j = ev_record, local points (xi_i, eta_i,
     * xi_j, eta_j) = ev_coef, t at angle ev_const; 6 its rate (the same with v for q). */
    int nev;
    const int *ev_kind;         /* [nev] */
    const int *ev_body;         /* [nev] */
    const double *ev_coef;      /* [nev, 4] */
    const int *ev_index;        /* [nev, 4] kinds 0 and 7: the coordinates of ev_coef */
    const double *ev_const;     /* [nev] */
    const int *ev_record;       /* [nev] */
    const int *ev_gate;         /* [nev] a record: while its gate is on, g = 1 (-1: none) */
    const int *row_active;      /* [nc + nstick] of the run (NULL: all active) */
} ld_model;

/* The model's rows (user: an ld_model) */
int ld_model_phi(void *user, double t, const double *q, double *out);
int ld_model_phi_q(void *user, double t, const double *q, double *val);
int ld_model_phi_t(void *user, double t, const double *q, double *out);
int ld_model_gamma(void *user, double t, const double *q, const double *v, double *out);
int ld_model_phi_qq_lam(void *user, double t, const double *q, const double *lam,
                        double *val);
/* flag[phiq_nnz] <- 1 where the model's Phi_q entry never changes (revolute rows, and
 * generic rows' entries written only by linear terms without a time factor), else 0. */
void ld_model_phiq_const(const ld_model *d, int *flag);
/* Forces: uniform gravity and the force elements (ld_forces.c), their Jacobians, and the
 * quadratures' rates (the force elements' and the driven rows' power). */
int ld_model_force(void *user, double t, const double *q, const double *v, double *out);
int ld_model_force_q(void *user, double t, const double *q, const double *v, double *out);
int ld_model_force_v(void *user, double t, const double *q, const double *v, double *out);
int ld_model_aux_rate(void *user, double t, const double *q, const double *v,
                      const double *lam, double *out);
/* Events and the accepted-step hook of a run */
int ld_model_events(void *user, double t, const double *q, const double *v,
                    const double *lam, double *g);
int ld_model_accept(void *user, double t, const double *q, const double *v);
/* A run's system with stick rows: the model's rows, then one per sticking contact
 * (nstick > 0; the patterns are the model's merged with theirs) */
int ld_model_run_phi(void *user, double t, const double *q, double *out);
int ld_model_run_phi_q(void *user, double t, const double *q, double *val);
int ld_model_run_phi_t(void *user, double t, const double *q, double *out);
int ld_model_run_gamma(void *user, double t, const double *q, const double *v, double *out);
int ld_model_run_phi_qq_lam(void *user, double t, const double *q, const double *lam,
                            double *val);

#endif /* LD_KERNELS_H */
