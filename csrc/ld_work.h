/*
 * ld_work.h -- the integrator's workspace (private to the C core).
 *
 * The core is eight modules in layers, highest first; each includes only the headers of the layers below
 * it and calls only into them (tests/test_layout.py checks both):
 *
 *   ld_run.c     the run driver: create, start and restart, the method in force (method
 *                auto's switches and cost trials), output rows, events, interruption;
 *                the public API of ld_bdf.h
 *   ld_schur_gen.c beside it: the explicit method's Schur plan written out as straight-line
 *                C, and that code (compiled outside the core) put in the plan's place
 *   ld_bdf.c     the BDF method on the index-3 form: predictor, Newton corrector, error
 *                test, order and step selection (ld_bdf_method.h)
 *   ld_rk.c      the explicit Runge-Kutta method on the index-1 form, with its Schur
 *                complement (ld_rk.h)
 *   ld_sens.c    forward sensitivities along the BDF's corrector (ld_sens.h)
 *   ld_schur.c   the explicit method's linear solver: the Schur complement
 *                Phi_q M^-1 Phi_q^T and its LDL^T factorisation, planned once (ld_schur.h)
 *   ld_linear.c  the KKT and iteration matrices, their KLU factorisations, and the
 *                Jacobian helpers the methods share (ld_linear.h)
 *   ld_control.c the explicit method's step-size controller (ld_control.h), beside
 *                ld_linear.c in the lowest layer: it calls nothing
 *
 * This header holds what they all read: the workspace struct and a few constants.
 */
#ifndef LD_WORK_H
#define LD_WORK_H

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
/* Rows of the BDF's history D (backward differences up to order max + 2). */
#define LD__NROWS (LD_BDF_MAX_ORDER + 3)

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
    ld_lu_code lu_code;         /* straight-line LU code for the pattern (factor NULL: none) */
    double *lu_x;               /* its factors of Gx, and the solves' scratch (ng) */
    double *lu_work;
    int lu_fast;                /* the current factors of Gx are lu_x's (else num's) */
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

    /* Cost trials (method auto; ld_run.c, "Cost trials"): the last TRIAL_RING accepted
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

/* A failure's status, with the time and step it is reported at. */
static inline int ld__fail(ld_bdf *w, int status, double t, double h)
{
    w->fail_t = t;
    w->fail_h = h;
    return status;
}

#endif /* LD_WORK_H */
