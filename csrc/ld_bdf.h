/*
 * ld_bdf.h -- the integrator: variable-step, variable-order (1..5) BDF for the index-3 DAE
 *
 *     q' = v,    M v' + Phi_q(q, t)^T lam = Q(q, v, t),    Phi(q, t) = 0,
 *
 * with a constant diagonal M, sparse Jacobians reached through an ld_system, and SuiteSparse
 * KLU for the sparse LU; and, for non-stiff problems, an explicit Runge-Kutta method on the
 * index-1 form with projection (options.method; LD_METHOD_AUTO switches between the two).
 * See ld_bdf.c and ld_rk.c for the methods and the choices they make.
 *
 * Life cycle: ld_bdf_create (allocates everything, analyses the pattern once) ->
 * ld_bdf_init (consistent accelerations and multipliers at t0) -> ld_bdf_integrate (as
 * often as wanted, each to a later t_end; allocates nothing except KLU's own memory in the
 * rare full factorisations) -> ld_bdf_free. All state lives in the ld_bdf object: no globals.
 * Events (ld_system.h) stop ld_bdf_integrate at the located event time with LD_BDF_EVENT;
 * calling it again restarts the integration there (the caller may change modes between).
 *
 * The state vector y has n = 2 nq + nc + nz entries: y = (q, v, lam, z), z the system's
 * quadratures (ld_system.h); with forward sensitivities (options.sensitivities, ld_sens.c)
 * 2 nq np more, y = (q, v, lam, z, S), S = (dq/dp_1, dv/dp_1, ..., dq/dp_np, dv/dp_np).
 */
#ifndef LD_BDF_H
#define LD_BDF_H

#include "ld_system.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LD_BDF_MAX_ORDER 5

/* options.method */
enum ld_method {
    LD_METHOD_BDF = 0,      /* the index-3 BDF (stiff and non-stiff problems) */
    LD_METHOD_RK = 1,       /* explicit Runge-Kutta 8(5,3) on the index-1 form (non-stiff) */
    LD_METHOD_AUTO = 2      /* the explicit method, switching to BDF where the problem is
                               stiff or the explicit method fails, and back at restarts */
};

/* Forward sensitivities of the BDF solution to np parameters (ld_sens.c). The parameter
 * derivatives of the residuals are weighted sums over member systems (the model compiled at
 * shifted parameter values): for parameter j, sum over k in start[j] .. start[j + 1] - 1 of
 * weight[k] times member[k]'s Phi(q, t) and M a + Phi_q^T lam - Q(q, v, t). Members have the
 * base system's sizes and Phi_q pattern; their accept hooks (if any) see every accepted
 * state. The arrays must outlive the integrator. */
typedef struct ld_sensitivity {
    int np;                             /* parameters (>= 1) */
    int nmembers;
    const ld_system *const *members;    /* [nmembers] */
    const int *start;                   /* [np + 1] */
    const int *member;                  /* [start[np]] indices into members */
    const double *weight;               /* [start[np]] */
    const double *scale;                /* [np] the parameters' magnitudes |p_j| > 0: the
                                           sensitivities take part in the error test, with
                                           tolerances rtol and atol / |p_j| (as CVODES with
                                           errconS); NULL: they follow the state's steps */
} ld_sensitivity;

typedef struct ld_bdf_options {
    double rtol;            /* relative tolerance (> 0) */
    double atol;            /* absolute tolerance (> 0), same for q and v */
    double h_init;          /* first step; 0 chooses one from the initial acceleration */
    double h_min;           /* smallest step before failing; 0: 1e-14 * max(1, |t|) */
    double h_max;           /* largest step; 0: no limit */
    int max_order;          /* 1..LD_BDF_MAX_ORDER */
    long max_steps;         /* accepted steps of the whole run (over every call and restart);
                               0: no limit */
    int newton_max_iter;    /* Newton iterations per attempt (default 4) */
    double newton_tol;      /* Newton convergence, as a fraction of the position tolerance;
                               0: 1e-3; never below 10 eps / local rtol */
    int project_output;     /* project output velocities onto the velocity constraints (1) */
    int proportional;       /* tolerance proportionality: tighten the local tolerance below
                               2e-6 so that the global error scales with rtol (1, see
                               ld_bdf.c); 0: the local error is tested against rtol, atol */
    volatile int *interrupt;/* polled once per step; non-zero stops the run (may be NULL) */
    double event_tol;       /* events are located to this time (s); 0: 1e-12 max(1, |t|) */
    double regularization;  /* r >= 0: redundant constraints (see ld_bdf.c); 0: none */
    double output_regularization; /* the same for the index-1 solves (initial accelerations,
                               output rows); 0: as regularization */
    int stop_when_full;     /* return LD_BDF_OUTPUT_FULL when the output buffer is full (0:
                               integrate on to t_end without more rows) */
    double (*clock)(void);  /* seconds on a monotonic clock, to time the output rows into
                               stats.output_seconds (NULL: not timed) */
    int method;             /* enum ld_method (LD_METHOD_BDF) */
    int cost_trials;        /* (method auto) try the other method now and then, and keep
                               the one that advances further per unit of work (1; see
                               ld_bdf.c, "Cost trials"); 0: switch on stiffness only */
    int column_ordering;    /* order the iteration matrix for KLU by COLAMD (1) instead of
                               AMD on its symmetric pattern (0, default): for systems whose
                               pivots leave the diagonal (spatial bodies; see ld_bdf.c) */
    const ld_sensitivity *sensitivities; /* forward sensitivities (NULL: none); only with
                               method BDF and no switchable rows */
} ld_bdf_options;

typedef struct ld_bdf_stats {
    long steps;                 /* accepted steps */
    long rejected_error;        /* steps rejected by the error test */
    long rejected_newton;       /* step attempts whose Newton iteration failed */
    long newton_iterations;
    long residual_evaluations;
    long jacobian_evaluations;  /* assemblies of the iteration matrix */
    long factorizations;        /* numeric LU factorisations (refactor + full) */
    long full_factorizations;   /* of which with fresh pivoting (klu_factor) */
    long order_steps[LD_BDF_MAX_ORDER + 1]; /* accepted steps per order (index = order) */
    double local_rtol, local_atol;          /* the tolerances the error test uses */
    double transformed_rtol;    /* the local rtol the transform asks for, before the
                                   round-off floor (local_rtol above it: floored) */
    double max_output_velocity_violation;   /* largest |Phi_q v + Phi_t| of an output row
                                               before its projection */
    double max_output_phi;      /* largest |Phi(q, t)| (max-norm) of an output row */
    double max_output_phi_t;    /* the time of that row */
    double max_output_row_ratio;    /* largest |Phi_i| / (atol sum_j |Phi_q,ij| +
                                       rtol sum_j |Phi_q,ij q_j|) of an output row: each
                                       row against its own terms (a unit vector's row is
                                       of order 1 wherever the body is) */
    double max_output_row_ratio_t;  /* the time of that row */
    long max_output_row;            /* and the row (-1: none yet) */
    long events;                /* events located */
    long restarts;              /* restarts (after events, or asked for) */
    long output_rows;           /* rows written to output buffers */
    double output_seconds;      /* time spent on them (dense output and projection; with
                                   options.clock) */
    long noise_limited;         /* Newton solves accepted at their round-off floor at an
                                   ill-conditioned matrix (singular configurations), and
                                   error estimates found to be the corrector's noise */
    long rk_steps;              /* accepted steps of the explicit method (of steps) */
    long rk_projected_steps;    /* of them, those whose stages took their velocities
                                   projected (near a singular configuration: ld_rk.c) */
    long rhs_evaluations;       /* right-hand sides of the index-1 form (explicit method) */
    long schur_factorizations;  /* LDL^T factorisations of Phi_q M^-1 Phi_q^T */
    long switches_to_bdf;       /* (auto) stretches handed to BDF: stiffness, S too
                                   ill-conditioned for the tolerance, or failure */
    long switches_to_rk;        /* (auto) returns to the explicit method: restarts, and
                                   cost trials */
    long cost_trials;           /* (auto) trials of the other method */
    long trials_kept;           /* of them, those that found it cheaper and kept it */
    double rk_transformed_rtol; /* the explicit method's local rtol before the round-off
                                   floor: rtol / 3 (ld_rk.c, "Error control") */
    long reorderings;           /* iteration matrices re-ordered for their fill (ld_bdf.c) */
    double rk_local_rtol;       /* the explicit method's local tolerances */
    double rk_local_atol;
    long generated_factorizations;  /* of factorizations, by straight-line LU code
                                       (ld_bdf_set_lu_code) */
} ld_bdf_stats;

enum ld_bdf_status {
    LD_BDF_SUCCESS = 0,
    LD_BDF_INTERRUPTED = 1,       /* *interrupt became non-zero; the state is consistent */
    LD_BDF_EVENT = 2,             /* an event function changed sign: the state is at the
                                     event (ld_bdf_get_event); the next ld_bdf_integrate
                                     restarts there (after the caller changed modes) */
    LD_BDF_OUTPUT_FULL = 3,       /* (stop_when_full) the output buffer is full: call again
                                     with the next buffer (t_out, y_out and *n_written = 0
                                     for the times after), which continues where this left */
    LD_BDF_BAD_INPUT = -1,        /* invalid options or sizes */
    LD_BDF_NO_MEMORY = -2,
    LD_BDF_TOO_MUCH_WORK = -3,    /* max_steps reached */
    LD_BDF_STEP_TOO_SMALL = -4,   /* error test kept failing down to h_min */
    LD_BDF_NEWTON_FAILED = -5,    /* Newton kept failing down to h_min */
    LD_BDF_SINGULAR = -6,         /* the iteration matrix is singular (Phi_q lost rank) */
    LD_BDF_NONFINITE = -7,        /* the model returned NaN or Inf and cutting h did not help */
    LD_BDF_CALLBACK = -8,         /* a model callback returned an error status */
    LD_BDF_LINEAR_SOLVER = -9     /* KLU failed for another reason (see failure index) */
};

typedef struct ld_bdf ld_bdf;

void ld_bdf_default_options(ld_bdf_options *opt);
int ld_bdf_create(const ld_system *sys, const ld_bdf_options *opt, ld_bdf **out);
/* z0 [nz]: initial quadratures (NULL: zeros). */
int ld_bdf_init(ld_bdf *w, double t0, const double *q0, const double *v0, const double *z0);
/* Restart from the current state (after a discontinuity in the model, e.g. a controller's
 * new inputs): consistent accelerations and multipliers anew, order 1, a new first step.
 * Counters and tolerances are kept. */
int ld_bdf_restart(ld_bdf *w);
/* The same from a changed state (q, v) at the current time (NULL: keep the current one),
 * e.g. velocities projected onto constraints that became active. */
int ld_bdf_restart_at(ld_bdf *w, const double *q, const double *v);
/* Integrate to t_end exactly. Output times t_out[0..n_out-1] must be non-decreasing; each one
 * in [t, t_end] gets a row of y_out (n_out x n, row-major) from the BDF interpolant (the
 * current state for t_out == t). *n_written counts the rows filled so far (in and out).
 * With options.stop_when_full, a full buffer returns LD_BDF_OUTPUT_FULL, possibly in the
 * middle of a step's rows; the next call takes the following times in a new buffer. */
int ld_bdf_integrate(ld_bdf *w, double t_end, int n_out, const double *t_out, double *y_out,
                     int *n_written);
void ld_bdf_free(ld_bdf *w);
/* With options.sensitivities, after ld_bdf_init: the initial sensitivities s0 [np x 2 nq],
 * per parameter (dq0/dp, dv0/dp); da0/dp (for the history) is solved from the index-1
 * equations differentiated (ld_sens.c). A run with sensitivities restarts (an event) from
 * its current state only (ld_bdf_restart_at with q or v: LD_BDF_BAD_INPUT). */
int ld_bdf_init_sensitivities(ld_bdf *w, const double *s0);

const ld_bdf_stats *ld_bdf_get_stats(const ld_bdf *w);
/* The run's work in the units method auto's cost trials compare (ld_bdf.c, "Cost trials"):
 * right-hand sides, Newton iterations and twice the factorisations. */
long ld_bdf_work_units(const ld_bdf *w);
double ld_bdf_get_time(const ld_bdf *w);
int ld_bdf_get_size(const ld_bdf *w);               /* n = 2 nq + nc + nz (+ 2 nq np) */
void ld_bdf_get_state(const ld_bdf *w, double *y);  /* current (q, v, lam, z) */
/* After a failure: the time and step at which it happened and, for LD_BDF_SINGULAR, the
 * column of the iteration matrix with a zero pivot (< nq: a coordinate; >= nq: the multiplier
 * of constraint row index - nq), else -1. */
void ld_bdf_get_failure(const ld_bdf *w, double *t, double *h, int *index);
/* After LD_BDF_EVENT: the event time and, per event function, +1 / -1 for the ones that
 * changed sign there (rising / falling; within the time tolerance of the first), else 0. */
double ld_bdf_get_event(const ld_bdf *w, int *fired);

/* The explicit method's Schur plan, and its products with Phi_q, as straight-line C
 * (ld_schur_gen.c): writes at most cap bytes of it, NUL-terminated, into buf and returns its
 * length in characters, or -1 where there is no plan (no explicit method, no constraint
 * rows). buf NULL: only the length, or, for cap > 0, a number above cap once the length
 * passes cap (counting stops there: a large plan is not written out to be measured). */
long ld_bdf_schur_source(ld_bdf *w, char *buf, long cap);
/* A lower bound of that source's length, at once (-1 without a plan): a plan that cannot be
 * small enough is turned down without being measured or hashed. */
long ld_bdf_schur_size_bound(ld_bdf *w);
/* The plan's signature (that of its source, ldg_signature()), 0 where there is no plan. */
unsigned long long ld_bdf_schur_signature(ld_bdf *w);
/* The functions compiled from that source, each the same operations in the same order as
 * the plan's loops (LD = [L's entries | D], J = Phi_q's values, m = M^-1):
 *   add    LD += the plan's products of J's entries (ldg_add)
 *   elim   the elimination of LD into S's factors (ldg_elim)
 *   solve  x <- S^-1 x, y [nc] scratch (ldg_solve)
 *   jt     out -= M^-1 Phi_q^T x (ldg_jt)
 *   j, jm  out += Phi_q x, out += Phi_q M^-1 x (ldg_j, ldg_jm)
 * signature: the source's ldg_signature(). */
typedef struct {
    unsigned long long signature;
    void (*add)(const double *J, const double *m, double *LD);
    void (*elim)(double *LD);
    void (*solve)(const double *LD, double *x, double *y);
    void (*jt)(const double *J, const double *m, const double *x, double *out);
    void (*j)(const double *J, const double *x, double *out);
    void (*jm)(const double *J, const double *m, const double *x, double *out);
} ld_schur_code;
/* Put code in the plan's place (NULL: the plan's loops again). LD_BDF_BAD_INPUT, and
 * nothing changed, where its signature is not the plan's or a function is missing. The
 * functions must stay loaded while the workspace lives. */
int ld_bdf_set_schur_code(ld_bdf *w, const ld_schur_code *code);

/* The iteration matrix's pattern (G, and the KKT matrix K in the same slots): ng columns in
 * CSC form (its arrays stay the workspace's), and a 64-bit FNV-1a hash of (ng, nnz, colptr,
 * rowind) as four little-endian bytes each. */
void ld_bdf_g_pattern(const ld_bdf *w, int *ng, const int **colptr, const int **rowind);
unsigned long long ld_bdf_g_signature(const ld_bdf *w);
/* A pivot order for it: rows[k], cols[k] (ng each) the k-th pivot of KLU's fresh
 * factorisation of K = [M Phi_q^T; Phi_q -R] at (t, q) (row scaled as KLU scales; BTF and
 * its column order included). LD_BDF_SINGULAR where K does not factor there. */
int ld_bdf_g_pivot_order(ld_bdf *w, double t, const double *q, int *rows, int *cols);
/* Straight-line LU code for that pattern in one pivot order (written by
 * linkdyn.solve.lu_code): factor equilibrates and factorises the values a (CSC order) into
 * lu (size doubles) and returns the pivot ratio min |u_kk| / max |u_kk| (0 at a zero pivot,
 * NaN for a value that is not finite; sign: det's); solve overwrites x with G^-1 x (w:
 * scratch of ng). */
typedef struct {
    unsigned long long signature;
    int size;
    double (*factor)(const double *a, double *lu, int *sign);
    void (*solve)(const double *lu, double *x, double *w);
} ld_lu_code;
/* Factorise G and K with code (NULL: KLU alone again) while its pivot ratio stays at or
 * above KLU's threshold for keeping old pivots; below, KLU factorises. LD_BDF_BAD_INPUT, and
 * nothing changed, where the signature is not the pattern's or a function is missing;
 * LD_BDF_NO_MEMORY. The functions must stay loaded while the workspace lives. */
int ld_bdf_set_lu_code(ld_bdf *w, const ld_lu_code *code);

#ifdef __cplusplus
}
#endif

#endif /* LD_BDF_H */
