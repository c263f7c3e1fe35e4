/*
 * ld_system.h -- the interface between a compiled linkdyn model and the solvers.
 *
 * A solver sees a model only through this struct: sizes, the constant diagonal mass matrix,
 * the fixed sparsity patterns, and callbacks that take the model's own user pointer.  The
 * Cython kernels (src/linkdyn/_kernels.pyx) fill it for a compiled Model; the C tests fill it
 * by hand (a pendulum written directly in C).  No global state: everything a callback needs
 * is behind `user`.
 *
 * Conventions
 *   q  [nq]  coordinates, v = dq/dt [nq], t time.
 *   Phi(q, t) [nc] constraint residuals; Phi_q [nc x nq] in CSC with the fixed pattern
 *   (phiq_colptr, phiq_rowind); callbacks write only the values, in pattern order.
 *   gamma = Phi_q qdd (right-hand side of the acceleration equations):
 *       gamma = -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt.
 *   Q(q, v, t) [nq] generalised applied forces; Q_q and Q_v [nq x nq] in CSC with their own
 *   fixed patterns (nnz may be zero).
 *   H(q, lam) = d/dq (Phi_q^T lam) [nq x nq], symmetric, in CSC with its own fixed pattern:
 *   the constraints' second derivatives weighted by the multipliers.
 *   z [nz] quadratures integrated along with the state, z' = aux_rate(q, v, lam, t) (work of
 *   force elements and of the driven rows, angles tracked over turns); they never enter the
 *   equations of motion and the step size is not controlled on them. lam [nc] are the
 *   multipliers at that state (the explicit method's index-1 ones at each stage, the BDF's
 *   corrector's at each accepted step; NULL when nc is 0). nz may be zero (then aux_rate
 *   may be NULL).
 *   Events: nev functions g(t, q, v, lam) [nev] whose sign changes the integrator locates
 *   (event_direction[k] = +1: only - to +, -1: only + to -, 0: both; NULL: both). A zero
 *   value has no sign: a crossing is a change between a negative and a positive value.
 *   Switchable rows: with row_active non-NULL (when the solver is created), row i with
 *   row_active[i] == 0 is replaced by lam_i = 0 and its Phi and Phi_q values are ignored
 *   (a constraint that is switched off, e.g. a contact that stops sticking). The flags
 *   belong to the caller's run; they may change only between integration calls, followed
 *   by a restart.
 *   accept (may be NULL) is called with every accepted state (after the initial state, each
 *   accepted step and each restart), so that elements can update per-run state that selects
 *   a branch (the turn of an angle); it must not change the equations' values at that state.
 *
 * Every callback returns LD_OK or a status code; callbacks never allocate and never call
 * back into Python.
 */
#ifndef LD_SYSTEM_H
#define LD_SYSTEM_H

#ifdef __cplusplus
extern "C" {
#endif

enum ld_status {
    LD_OK = 0,
    LD_ERR_NONFINITE = -1,   /* a callback produced NaN or Inf (recoverable: cut the step) */
    LD_ERR_DOMAIN = -2       /* a callback was asked outside its domain (recoverable) */
};

typedef int (*ld_eval_q)(void *user, double t, const double *q, double *out);
typedef int (*ld_eval_qv)(void *user, double t, const double *q, const double *v, double *out);
typedef int (*ld_eval_aux)(void *user, double t, const double *q, const double *v,
                           const double *lam, double *out);

typedef struct ld_system {
    int nq;                     /* number of coordinates */
    int nc;                     /* number of constraint rows */
    const double *mass;         /* [nq] diagonal of the constant mass matrix */

    int phiq_nnz;               /* Phi_q pattern, CSC, nc x nq */
    const int *phiq_colptr;     /* [nq + 1] */
    const int *phiq_rowind;     /* [phiq_nnz] */

    int fq_nnz;                 /* Q_q = dQ/dq pattern, CSC, nq x nq */
    const int *fq_colptr;
    const int *fq_rowind;
    int fv_nnz;                 /* Q_v = dQ/dv pattern, CSC, nq x nq */
    const int *fv_colptr;
    const int *fv_rowind;
    int hess_nnz;               /* H = d(Phi_q^T lam)/dq pattern, CSC, nq x nq */
    const int *hess_colptr;
    const int *hess_rowind;

    void *user;                 /* passed back to every callback */
    ld_eval_q phi;              /* Phi(q, t)            -> out[nc] */
    ld_eval_q phi_q;            /* Phi_q values         -> out[phiq_nnz] */
    ld_eval_q phi_t;            /* dPhi/dt              -> out[nc] */
    ld_eval_qv gamma;           /* gamma(q, v, t)       -> out[nc] */
    ld_eval_qv force;           /* Q(q, v, t)           -> out[nq] */
    ld_eval_qv force_q;         /* Q_q values           -> out[fq_nnz] */
    ld_eval_qv force_v;         /* Q_v values           -> out[fv_nnz] */
    ld_eval_qv phi_qq_lam;      /* H(q, lam) values (v argument = lam[nc]) -> out[hess_nnz] */

    int nz;                     /* number of quadratures */
    ld_eval_aux aux_rate;       /* z'(q, v, lam, t)     -> out[nz] */
    int (*accept)(void *user, double t, const double *q, const double *v);

    const int *row_active;      /* [nc] or NULL: all rows always active (see above) */
    const int *phiq_const;      /* [phiq_nnz] or NULL: 1 where a Phi_q entry never changes
                                 * (in q and t), so that solvers may plan on its value */

    int nev;                    /* number of event functions (0: none) */
    const int *event_direction; /* [nev] +1, -1 or 0 (NULL: 0 for all) */
    int (*events)(void *user, double t, const double *q, const double *v, const double *lam,
                  double *g);   /* g[nev] */
} ld_system;

#ifdef __cplusplus
}
#endif

#endif /* LD_SYSTEM_H */
