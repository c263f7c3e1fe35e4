/*
 * ld_bdf_impl.h -- the integrator's workspace, shared by its two methods (private).
 *
 * ld_bdf.c holds the driver (output rows, events, restarts) and the BDF; ld_rk.c holds the
 * explicit Runge-Kutta method on the index-1 form with its Schur-complement solver. Nothing
 * outside these two files includes this header.
 */
#ifndef LD_BDF_IMPL_H
#define LD_BDF_IMPL_H

#include "ld_bdf.h"

#include <klu.h>

/* Local tolerances stop at LD_LOCAL_FLOOR eps max(1, max|q0|): below, the error estimates
 * would chase rounding errors in the coordinates (both methods). */
#define LD_LOCAL_FLOOR 100.0

/* Private status of the explicit method's start (method auto only): the accelerations are
 * too ill-conditioned for it, the BDF starts instead. Never returned to a caller. */
#define LD__UNSUITED (-100)
/* Accepted steps over which a method's rate of progress is measured (cost trials). */
#define LD__TRIAL_RING 32

struct ld_bdf {
    const ld_system *sys;
    ld_bdf_options opt;
    int nq, nc, n, ng;
    int nz, zoff;               /* quadratures z at y[zoff .. zoff + nz - 1], zoff = 2 nq + nc */
    int np, soff;               /* sensitivities S at y[soff ..], soff = zoff + nz (ld_sens.c) */
    int sens_errcon;            /* they take part in the error test */
    double *sens_work;          /* their scratch (NULL without) */
    int sens_nnz;               /* the most Phi_q entries of the model and its members */
    int initialised;

    double t, h;
    int order, n_equal;
    double rtol, atol;          /* local tolerances (after the proportionality transform) */
    double newton_tol;
    double vel_floor;           /* Newton residue the velocity estimate must tolerate (see top) */
    double settled;             /* Newton corrections below this are round-off */
    double noise;               /* Newton residue observed where the iteration stagnated */
    double efail_h, efail_d;    /* step and max|y_q - y_pred_q| of the first error-test failure
                                   since the order was last chosen (efail_h 0: none) */

    double *D;                  /* NROWS x n backward differences */
    double *Dtmp;               /* (MAX_ORDER + 1) x n scratch for rescaling */
    double *y_pred, *psi, *d, *y, *scale;
    double *res;                /* ng: residual, then Newton correction */
    double *phi, *phiq, *fq, *fv, *hess, *force, *lam_scaled;
    double *phiq_out, *row_sums;    /* track_output_phi's scratch: Phi_q at an output row,
                                       its rows' sums (2 nc) */

    int g_nnz;
    int *Gp, *Gi;
    double *Gx;
    int *map_M, *map_fq, *map_fv, *map_h, *map_J, *map_JT;
    int *map_D;                 /* [nc] diagonal slots of the constraint block (NULL: none) */
    int map_D_wanted;           /* switchable rows or regularisation */
    double *rdiag;              /* [nc] diag(Phi_q M^-1 Phi_q^T) at the last (re)start */
    double out_reg;             /* regularisation of the index-1 solves */

    klu_common common;
    klu_symbolic *sym;
    klu_numeric *num;
    klu_numeric *num_out;       /* [M Phi_q^T; Phi_q 0] at the last output */
    int reordered;              /* the fill check of factor_G has run */
    int nev;                    /* events */
    double *g_old, *g_new, *g_mid;   /* [nev] at the last accepted state, the new, a trial */
    double *g_end;              /* [nev] the new state's values, kept through the search */
    double *y_ev;               /* [n] state at a trial time of the event search */
    int *fired;                 /* [nev] directions of the events that fired */
    double t_event;
    int restart_pending;        /* the state was moved to an event: restart before stepping */
    int tail_pending;           /* an accepted step not finished (finish_step): */
    int tail_order, tail_event; /*   its order, whether an event was located in it, */
    double tail_err, tail_safety, tail_t_stop; /* its error, step safety factor and the
                                   last time of its output rows */
    int newton_iters;           /* iterations of the last Newton solve */
    int refresh_next;           /* refresh the iteration matrix before the next step */

    double gamma[LD_BDF_MAX_ORDER + 2];
    double err_const[LD_BDF_MAX_ORDER + 2];

    /* The explicit method (ld_rk.c): its workspace (NULL when options.method is BDF), which
     * method the current stretch uses, and a switch to BDF that stiffness asked for. */
    struct ld_rk *rk;
    int use_rk;
    int switch_pending;

    /* Cost trials (method auto; ld_bdf.c, "Cost trials"): the last TRIAL_RING accepted
     * steps' times and work counts, the steps since the current method started, the steps
     * each method must run before the other is tried ([0] BDF, [1] the explicit method),
     * and the trial under way: the steps the tried method has taken (0: none), the method
     * it may return to and that method's rate, and where the measured span began. */
    double ring_t[LD__TRIAL_RING];
    long ring_work[LD__TRIAL_RING];
    int ring_n, ring_pos;
    long stretch_steps;
    long stretch_tries;         /* explicit step attempts (accepted or not) since the start */
    long trial_wait[2];
    long long_wait;             /* explicit step attempts in a stretch that ask for a trial */
    int trial_long;             /* the trial under way was asked for by a long stretch */
    int trial_steps, trial_from_rk;
    int rk_refused;             /* the explicit method refused to start (S ill-conditioned) */
    double rtol_own, atol_own;  /* the BDF's own local tolerances (rtol, atol: in force) */
    double qmax0;               /* max |q0| of the start, for the round-off floor */
    double trial_rate_from, trial_t0;
    long trial_work0;

    ld_bdf_stats stats;
    double fail_t, fail_h;
    int fail_index;
};

/* Shared helpers (ld_bdf.c). */
int ld__all_finite(const double *x, int n);
/* perm[k] <- the index of the k-th of n (col[i], row[i]) keys in the order of column, then
 * row (equal keys in index order): two stable counting passes, O(n + ncols + nrows), for the
 * patterns made when a solver is created. Returns LD_BDF_SUCCESS or LD_BDF_NO_MEMORY. */
int ld__sort_keys(int n, const int *col, const int *row, int ncols, int nrows, int *perm);
int ld__eval_phi_q(ld_bdf *w, double t, const double *q);
void ld__zero_inactive(const ld_bdf *w, double *rows);

int ld__refresh_G(ld_bdf *w, double t, double c);
/* Factorise the index-1 matrix [M Phi_q^T; Phi_q -r' D] at (t, q) (phiq evaluated there). */
int ld__factor_K(ld_bdf *w, double t, const double *q);
int ld__solve_G(ld_bdf *w, double *rhs);

/* Forward sensitivities (ld_sens.c). */
int ld__sens_valid(const ld_system *sys, const ld_bdf_options *opt);
int ld__sens_create(ld_bdf *w);
int ld__sens_step(ld_bdf *w, double t, double c);
int ld__sens_accept(ld_bdf *w, double t, const double *q, const double *v);
void ld__sens_test_terms(ld_bdf *w, int k);

/* The explicit method (ld_rk.c). */
int ld__rk_create(ld_bdf *w);
void ld__rk_free(ld_bdf *w);
void ld__rk_set_tolerances(ld_bdf *w, double qmax);
int ld__rk_start(ld_bdf *w);
int ld__rk_step(ld_bdf *w, double t_end, int *accepted);
int ld__rk_dense(ld_bdf *w, double t, double *out);
int ld__rk_consistent(ld_bdf *w, double t, double *y);
int ld__rk_near_stiff(const ld_bdf *w);

#endif /* LD_BDF_IMPL_H */
