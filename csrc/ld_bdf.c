/*
 * ld_bdf.c -- variable-step, variable-order BDF for the index-3 multibody DAE, with KLU.
 *
 * Method
 * ------
 * Backward differentiation formulas in the quasi-constant-step form of Shampine & Reichelt
 * (the form of MATLAB's ode15s and SciPy's BDF, here with kappa = 0, i.e. plain BDF): the
 * history is kept as the backward differences D[0..k+2] of y = (q, v, lam); a step change
 * rescales D, so the formula always sees equal steps. With the predictor y_p = sum D[0..k]
 * and psi = sum_{j=1..k} gamma_j D[j] / gamma_k, the corrector d = y - y_p satisfies
 * y' = (psi + d) / c with c = h / gamma_k.
 *
 * Newton. Velocities are eliminated: v = (psi_q + d_q) / c, v' = (psi_v + d_v) / c, and the
 * unknowns are d_q and mu = c^2 lam. The equations of motion are multiplied by c^2:
 *
 *     r1 = c M (psi_v + d_v) + c^2 (Phi_q^T lam - Q) = 0,     r2 = Phi(q, t) = 0,
 *
 * so the iteration matrix is
 *
 *     G = [ M - c^2 Q_q - c Q_v + H(q, mu)    Phi_q^T ]
 *         [ Phi_q                             0       ]
 *
 * whose condition number stays bounded as h -> 0 (the scaling of constraint rows and
 * multipliers by powers of the step used in the multibody literature). G depends on c only
 * through small terms, so one factorisation serves many steps of different size: it is
 * refreshed when the Newton iteration fails to converge (then the step is retried), and
 * before the next step when an accepted step needed REFRESH_ITERS (3) iterations or more.
 * The second rule trades a refactorisation (about two Newton iterations' cost) for fewer
 * iterations: on the Jansen benchmark at 1e-10 it cut them from 2.9 to 2.2 per step and the
 * time by 10%. KLU analyses the fixed pattern
 * once, refactors with the same pivot order after that, and factorises afresh (new pivots)
 * when the reciprocal pivot ratio drops below eps^(2/3) (as SUNDIALS' KLU module does).
 *
 * Error control. The local error estimate is d / (k + 1) per component, tested in the weighted
 * max-norm (as LSODA does; an RMS norm over many coordinates lets single coordinates carry
 * several times the tolerance, which accumulates into phase error in a conservative system).
 * Positions are tested against atol + rtol |q|. Velocities are index-2 variables of the
 * index-3 system: their estimate is one order lower and, for small steps, dominated by the
 * Newton residue in q divided by c, so testing them against their own tolerance makes the
 * step collapse (measured: it does). They are tested instead through the position error they
 * cause in the corrector, c_k e_v with c_k = h / gamma_k (q = q_pred + c_k (v - v_pred) to
 * leading order), against the same coordinate's position tolerance: consistent in order and
 * units. Multipliers are excluded (algebraic, they carry no error forward).
 *
 * Round-off floor. A Newton residue r in q enters the history, and the order-k predictor
 * amplifies it by up to 2^k; in the velocity estimate it is divided by c as well. The error
 * estimates therefore tolerate a residue (times 2^k / (k + 1)): in the position test the
 * larger of SETTLED eps max|q| and the residue at which the Newton iteration was last seen to
 * stagnate (decaying by NOISE_DECAY per step); in the velocity test at least NOISE eps max|q|.
 * Newton corrections below SETTLED eps max|q| count as converged, and so do corrections below
 * ROUNDOFF (32) eps max|q| from the second iteration on: round-off does not contract, and a
 * rolling disk 14 m down an incline (coordinates of 14 m, a 1e7 N/m^1.5 contact) saw its
 * iterations end at 5 to 16 eps max|q| with rates of 0.25 to 0.5, every one refused, the step
 * cut to 1e-14 s and the run failed (tests/test_friction.py). An iteration that
 * stagnates (rate >= 0.5) below NOISE eps max|q| has reached the model's round-off floor and
 * is accepted (cutting the step would not lower it; large models such as a 200-bar chain
 * reach it above SETTLED). Without these floors the step collapsed on round-off at local
 * tolerances near 1e-13 (measured on the Jansen linkage, a driven bar and a 200-bar chain).
 *
 * Noise in the error estimate. Near the round-off floor (local tolerances of a few 1e-14) and
 * next to singular configurations the corrector can land a fixed distance of some 1e-13
 * from the predictor whatever the step: a rounding error of the residual moved along the
 * direction Phi_q nearly loses. The test then fails at every step size: on the driven
 * Jansen linkage at rtol 1e-12 (t = 0.9357 s, the difference alternating in sign between
 * accepted and failed attempts) the step fell to 1e-14 s and the run failed; on IFToMM A02
 * at rtol 10^-11.5 the same happened at t = 4.600 s, failures in a row, in a trial that
 * had reached that crossing with another history of orders. Truncation error falls like
 * h^(k+1), so when an attempt fails with max|y_q - y_pred_q| at least half of what the
 * first failure since the order was last chosen had, at a hundredth of its step or less,
 * that difference is noise: it becomes the Newton noise the error estimates tolerate
 * (decaying as above), and the test is taken again. stats.noise_limited counts these too.
 *
 * Tolerance proportionality. Controlling the error per step makes the global error of an
 * order-k method scale like tol^(k/(k+1)), not like tol: on the Jansen benchmark the error
 * fell only 32-fold from rtol 1e-10 to 1e-12 (about tol^0.75-0.8). As RADAU5 does (Hairer &
 * Wanner transform its tolerances for the same reason), the user's tolerances are
 * transformed: below 2e-6 the local tolerances are rtol_loc = rtol (rtol / 2e-6)^(1/4), atol
 * scaled by the same factor, so that a global error going like rtol_loc^0.8 goes like rtol
 * (order 5 alone would give the exponent 1/5; the measured 0.75-0.8 asks for 1/4). They are
 * never below LD_LOCAL_FLOOR (100) eps max(1, max|q0|): Newton corrections carry round-off
 * relative to the largest coordinate, and below this floor the order selection of a 200-bar
 * chain (max|q0| = 14) was ruled by round-off in the higher differences and stalled at order
 * 1-2. The reference 2e-6 and the exponent were chosen on the Jansen benchmark, whose largest
 * marker error over time varies by a factor of up to 6 with round-off changes of the initial
 * state (CHOLMOD or SuperLU in consistent_state); they leave a margin of about 2 on the
 * issue's 1e-6 m at rtol 1e-10 and 1e-8 m at 1e-12 in both cases (measured 3.6e-7 and
 * 4.3e-7; 1.5e-9 and 4.6e-9). Above 2e-6 the transform is not needed: the steps' errors
 * already add up in proportion there. Measured over rtol 1e-4 ... 1e-12 in half decades
 * (tests/test_accuracy.py), the fitted slope of log(global error) against log(rtol) is 1.05
 * (A01), 0.97 (A02) and 1.06 (Jansen) with the transform as it is, 0.87/0.79/0.84 without it,
 * and 1.07/1.10/1.05 with it extended above 2e-6, which loosens the local tolerance there and
 * makes the errors at 1e-4 up to 8 times larger. The local tolerances are reported in the
 * statistics; options.proportional = 0 turns the transform off.
 * Newton converges when the predicted remaining correction is below newton_tol times the
 * position tolerance (RMS norm), newton_tol = 1e-3 unless set, never below 10 eps / rtol_loc:
 * well below the error test, and above the round-off floor that tight tolerances reach.
 * Order and step selection follow the same scheme as SciPy's BDF: after k + 1 steps of
 * equal size, the orders k - 1, k, k + 1 are compared by their error estimates.
 *
 * Dense output evaluates the BDF interpolating polynomial of the step just taken. The index-3
 * solution meets the velocity constraints only to O(tol / h), and its multipliers carry the
 * Newton residue divided by c^2. With project_output set, each output row is made consistent
 * with K = [M Phi_q^T; Phi_q 0] factorised at the output position (a second KLU numeric
 * object, refactored per output): the velocity is projected onto Phi_q v + Phi_t = 0
 * (mass-weighted) and the multipliers are solved from the index-1 equations
 * K (a, lam) = (Q, gamma). The largest velocity violation before projection is kept in the
 * statistics.
 *
 * Singular configurations. Where Phi_q loses rank for an instant (the N-four-bar of the
 * IFToMM benchmarks with all bars on the ground line), the multipliers grow like
 * 1/(t - t_c) and the iteration matrix becomes ill-conditioned (KLU condition estimates of
 * 1e6 to 1e7 on A02). A rounding error e in the constraint residual then moves q by about
 * e / sigma along the direction Phi_q nearly loses (sigma its smallest singular value, which
 * goes to zero at t_c): residuals summed in plain double precision made the Newton
 * corrections stagnate at 1e-13 to 2e-10 m, above what tolerances below 1e-11 ask, and A02
 * failed at its first crossing. The model's kernels therefore evaluate Phi as compensated
 * sums (src/linkdyn/_kernels.pyx): a residual accurate to the rounding of q itself moves q
 * by that rounding only, and A02 (N = 2 and 40) goes through its twenty crossings at every
 * tolerance down to 1e-12 (at most two noise-limited solves per run, measured from 1e-4 to
 * 1e-12; below, and a fallback there). For kernels
 * without compensated residuals (the friction rows of a run, rolling coordinates), a Newton
 * solve that fails with a freshly factorised matrix is accepted as
 * noise-limited when its last correction is at most NOISE_LIMIT eps max|q| (2^20) and at
 * most CONDEST_FRACTION (1e-4) times eps max|q| times KLU's condition estimate (computed
 * only then): the noise is recorded as the Newton noise the error estimates tolerate, and
 * the error test still decides. The condition estimate confines this to ill-conditioned
 * matrices: on the Jansen linkage and the other well-conditioned tests it never triggers.
 * stats.noise_limited counts these solves.
 *
 * Redundant constraints. With options.regularization = r > 0 every active row i gets the
 * compliance R_i = r diag(Phi_q M^-1 Phi_q^T)_i (fixed at each start or restart): the
 * corrector solves Phi - R mu = 0 (mu = c^2 lam) and the iteration matrix has -R in its
 * constraint block, so G stays regular when rows are redundant, and the multipliers of a
 * redundant set are the least-norm ones in the metric R (Tikhonov). The constraint is then
 * met to R c^2 |lam|: with r = 1e-12 (what simulate uses) below round-off for any step a
 * tolerance allows. The index-1 solves (initial accelerations and multipliers, output rows)
 * use output_regularization instead: there the rows of a redundant set disagree by the
 * position error, which the regularisation divides, so a larger value (1e-8) trades a bias
 * of that relative size for less amplification. r = 0 (the default) leaves every system as
 * it was.
 *
 * Events. After each accepted step the event functions are evaluated at the new state; a
 * change of sign from the last accepted state (in a direction the function asks for) is
 * located on the step's interpolant by the Illinois variant of regula falsi (as IDA does),
 * to event_tol, on the earliest crossing of all functions. The located time is the right end
 * of the final bracket, so the functions that fired have already changed sign there and do
 * not fire again at the restart. Output rows up to the event are written; the state is moved
 * to the event (the interpolant's (q, v, lam) there) and the integration restarts from it at
 * the next call (order 1, consistent accelerations), since the model's mode may change.
 * A crossing seen on the new state is confirmed on its consistent state (the velocity
 * projected and the multipliers solved from the index-1 equations, as for output rows), and
 * the locator's trial states are made consistent alike: the BDF's own multipliers carry the
 * Newton residue divided by c^2, and a friction limit tested on them fired false slip events
 * whenever the steps were small (tests/test_friction.py).
 */
#include "ld_bdf_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NROWS (LD_BDF_MAX_ORDER + 3)
#define MIN_FACTOR 0.2
#define MAX_FACTOR 10.0
#define PROPORTIONAL_EXP 0.25    /* local tolerance = rtol (rtol / PROPORTIONAL_REF)^EXP */
#define PROPORTIONAL_REF 2e-6   /* tolerance below which the local tolerance is tightened */
#define RCOND_MIN 3.67e-11      /* eps^(2/3): below it, factorise with fresh pivots */
#define REFRESH_ITERS 3         /* a step that took this many Newton iterations refreshes G */
#define SETTLED 4.0             /* Newton corrections below SETTLED eps max|q| are round-off */
#define ROUNDOFF 32.0           /* ... and, after the first iteration, below this */
#define NOISE_DECAY 0.95       /* per accepted step, of the observed Newton noise */
#define NOISE_STEP_FALL 1e-2   /* step fall over which an unchanged error estimate is noise */
#define NOISE 256.0             /* Newton residue (in eps max|q|) the error estimates must tolerate */
#define NOISE_LIMIT 1048576.0   /* largest correction (in eps max|q|) of a noise-limited solve */
#define CONDEST_FRACTION 1e-4   /* ... and at most this fraction of KLU's condition estimate */



/* ------------------------------------------------------------------------------------------ */

void ld_bdf_default_options(ld_bdf_options *o)
{
    o->rtol = 1e-6;
    o->atol = 1e-6;
    o->h_init = 0.0;
    o->h_min = 0.0;
    o->h_max = 0.0;
    o->max_order = LD_BDF_MAX_ORDER;
    o->max_steps = 0;
    o->newton_max_iter = 4;
    o->newton_tol = 0.0;
    o->project_output = 1;
    o->proportional = 1;
    o->interrupt = NULL;
    o->event_tol = 0.0;
    o->regularization = 0.0;
    o->output_regularization = 0.0;
    o->stop_when_full = 0;
    o->clock = NULL;
    o->method = LD_METHOD_BDF;
    o->column_ordering = 0;
    o->cost_trials = 1;
    o->sensitivities = NULL;
}

/* Largest iteration matrix analysed with KLU's block triangular form (see ld_bdf_create). */
#define BTF_MAX_SIZE 10000
#define FILL_LIMIT 4.0          /* fill of a factorisation over its ordering's estimate that
                                   calls for another ordering (see factor_G) */
#define TRIAL_WAIT 256          /* BDF steps before the explicit method is tried (doubling
                                   after each trial the BDF wins; see "Cost trials") */
#define LONG_STRETCH 4096       /* explicit step attempts in a stretch that ask for a trial of the BDF
                                   whatever their stiffness test says (doubling after each
                                   trial the explicit method wins; see "Cost trials") */
#define TRIAL_WARMUP 20         /* steps of the tried method before its rate is measured */
#define TRIAL_SPAN 30           /* steps over which it is measured */
#define TRIAL_MARGIN 1.25       /* how much faster the tried method must be to be kept */
#define AUTO_BDF_SHARE 0.01     /* local tolerances of the BDF that a trial brought in, as a
                                   share of its own (see "Cost trials") */
#define EVENT_SAMPLES 4         /* explicit steps: event functions at 3 interior points too */

typedef struct { int col, row, src; } entry;

int ld__sort_keys(int n, const int *col, const int *row, int ncols, int nrows, int *perm)
{
    int *count = (int *)calloc((size_t)((ncols > nrows ? ncols : nrows) + 1), sizeof(int));
    int *tmp = (int *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    int i, k;
    if (!count || !tmp) { free(count); free(tmp); return LD_BDF_NO_MEMORY; }
    /* by row first, then stably by column: the order of column, then row */
    for (i = 0; i < n; i++) count[row[i] + 1]++;
    for (k = 0; k < nrows; k++) count[k + 1] += count[k];
    for (i = 0; i < n; i++) tmp[count[row[i]]++] = i;
    for (k = 0; k <= ncols; k++) count[k] = 0;
    for (i = 0; i < n; i++) count[col[i] + 1]++;
    for (k = 0; k < ncols; k++) count[k + 1] += count[k];
    for (i = 0; i < n; i++) perm[count[col[tmp[i]]]++] = tmp[i];
    free(count);
    free(tmp);
    return LD_BDF_SUCCESS;
}

/* Fixed CSC pattern of G and the map from every source entry to its slot in Gx. */
static int build_pattern(ld_bdf *w)
{
    const ld_system *s = w->sys;
    int nq = w->nq, total = nq + s->fq_nnz + s->fv_nnz + s->hess_nnz + 2 * s->phiq_nnz +
                            (w->map_D_wanted ? w->nc : 0);
    entry *e = (entry *)malloc((size_t)(total > 0 ? total : 1) * sizeof(entry));
    int *slot_of = (int *)malloc((size_t)(total > 0 ? total : 1) * sizeof(int));
    int k = 0, j, p, i, *order;
    if (!e || !slot_of) { free(e); free(slot_of); return LD_BDF_NO_MEMORY; }
    for (i = 0; i < nq; i++) { e[k].col = i; e[k].row = i; e[k].src = k; k++; }
#define ADD_CSC(colptr, rowind, ncols, coloff, rowoff)                                   \
    for (j = 0; j < (ncols); j++)                                                        \
        for (p = (colptr)[j]; p < (colptr)[j + 1]; p++) {                                \
            e[k].col = j + (coloff); e[k].row = (rowind)[p] + (rowoff); e[k].src = k; k++; \
        }
    ADD_CSC(s->fq_colptr, s->fq_rowind, nq, 0, 0)
    ADD_CSC(s->fv_colptr, s->fv_rowind, nq, 0, 0)
    ADD_CSC(s->hess_colptr, s->hess_rowind, nq, 0, 0)
    ADD_CSC(s->phiq_colptr, s->phiq_rowind, nq, 0, nq)   /* Phi_q: rows nq.., cols 0.. */
#undef ADD_CSC
    /* Phi_q^T: entry (c, j) of Phi_q goes to row j, column nq + c; keep source order. */
    for (j = 0; j < nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++) {
            e[k].col = nq + s->phiq_rowind[p]; e[k].row = j; e[k].src = k; k++;
        }
    /* Diagonal entries of the constraint block: they replace an inactive row by lam_i = 0
     * and carry the regularisation of active rows. */
    if (w->map_D_wanted)
        for (i = 0; i < w->nc; i++) {
            e[k].col = nq + i; e[k].row = nq + i; e[k].src = k; k++;
        }
    /* The entries in the order of column, then row: the CSC pattern with its duplicates. */
    order = (int *)malloc((size_t)(3 * total + 1) * sizeof(int));
    if (!order) { free(e); free(slot_of); return LD_BDF_NO_MEMORY; }
    for (k = 0; k < total; k++) { order[total + k] = e[k].col; order[2 * total + k] = e[k].row; }
    if (ld__sort_keys(total, order + total, order + 2 * total, w->ng, w->ng, order) !=
        LD_BDF_SUCCESS) {
        free(order); free(e); free(slot_of); return LD_BDF_NO_MEMORY;
    }

    w->Gp = (int *)calloc((size_t)w->ng + 1, sizeof(int));
    w->Gi = (int *)malloc((size_t)(total > 0 ? total : 1) * sizeof(int));
    if (!w->Gp || !w->Gi) { free(order); free(e); free(slot_of); return LD_BDF_NO_MEMORY; }
    w->g_nnz = 0;
    for (i = 0; i < total; i++) {
        const entry *x = e + order[i], *prev = i > 0 ? e + order[i - 1] : NULL;
        if (!prev || x->col != prev->col || x->row != prev->row) {
            w->Gi[w->g_nnz] = x->row;
            w->Gp[x->col + 1]++;
            w->g_nnz++;
        }
        slot_of[x->src] = w->g_nnz - 1;
    }
    free(order);
    for (j = 0; j < w->ng; j++) w->Gp[j + 1] += w->Gp[j];
    w->Gx = (double *)calloc((size_t)(w->g_nnz > 0 ? w->g_nnz : 1), sizeof(double));
    w->map_M = slot_of;
    w->map_fq = slot_of + nq;
    w->map_fv = w->map_fq + s->fq_nnz;
    w->map_h = w->map_fv + s->fv_nnz;
    w->map_J = w->map_h + s->hess_nnz;
    w->map_JT = w->map_J + s->phiq_nnz;
    w->map_D = w->map_D_wanted ? w->map_JT + s->phiq_nnz : NULL;
    free(e);
    return w->Gx ? LD_BDF_SUCCESS : LD_BDF_NO_MEMORY;
}

/* The local tolerances at share times the BDF's own (method auto: "Cost trials"), not below
 * the round-off floor. A requested Newton tolerance is not allowed below the round-off
 * floor 10 eps / rtol_loc (a Newton iteration cannot reach it; every step would fail). */
static void share_tolerances(ld_bdf *w, double share)
{
    w->rtol = fmax(w->rtol_own * share, LD_LOCAL_FLOOR * DBL_EPSILON * fmax(1.0, w->qmax0));
    if (w->rtol > w->rtol_own) w->rtol = w->rtol_own;
    w->atol = w->atol_own * (w->rtol / w->rtol_own);
    w->newton_tol = fmax(w->opt.newton_tol > 0 ? w->opt.newton_tol : 1e-3,
                         10.0 * DBL_EPSILON / w->rtol);
}

/* Local tolerances (the proportionality transform, floored at LD_LOCAL_FLOOR eps max(1, qmax)
 * with qmax the largest |q| at the start) and the Newton tolerance that goes with them. */
static void set_tolerances(ld_bdf *w, double qmax)
{
    const ld_bdf_options *opt = &w->opt;
    if (opt->proportional && opt->rtol < PROPORTIONAL_REF) {
        double f = pow(opt->rtol / PROPORTIONAL_REF, PROPORTIONAL_EXP);
        w->stats.transformed_rtol = opt->rtol * f;
        w->rtol = fmax(opt->rtol * f, LD_LOCAL_FLOOR * DBL_EPSILON * fmax(1.0, qmax));
        w->atol = opt->atol * (w->rtol / opt->rtol);
    } else {
        w->rtol = opt->rtol;
        w->atol = opt->atol;
        w->stats.transformed_rtol = opt->rtol;
    }
    w->stats.local_rtol = w->rtol;
    w->stats.local_atol = w->atol;
    w->rtol_own = w->rtol;
    w->atol_own = w->atol;
    w->qmax0 = qmax;
    share_tolerances(w, 1.0);
}

int ld_bdf_create(const ld_system *sys, const ld_bdf_options *opt, ld_bdf **out)
{
    ld_bdf *w;
    int i, st;
    size_t n;
    *out = NULL;
    if (!sys || !opt || sys->nq <= 0 || sys->nc < 0 || sys->nz < 0 ||
        (sys->nz > 0 && !sys->aux_rate) || !(opt->rtol > 0) || !(opt->atol > 0) ||
        opt->max_order < 1 || opt->max_order > LD_BDF_MAX_ORDER || opt->newton_max_iter < 1 ||
        opt->h_init < 0 || opt->h_min < 0 || opt->h_max < 0 || opt->newton_tol < 0 ||
        !(opt->event_tol >= 0) || !(opt->regularization >= 0) ||
        !(opt->output_regularization >= 0) || sys->nev < 0 || (sys->nev > 0 && !sys->events) ||
        opt->method < LD_METHOD_BDF || opt->method > LD_METHOD_AUTO ||
        (opt->sensitivities && !ld__sens_valid(sys, opt)))
        return LD_BDF_BAD_INPUT;
    w = (ld_bdf *)calloc(1, sizeof(ld_bdf));
    if (!w) return LD_BDF_NO_MEMORY;
    w->sys = sys;
    w->opt = *opt;
    w->stats.max_output_row = -1;
    w->nq = sys->nq;
    w->nc = sys->nc;
    w->nz = sys->nz > 0 ? sys->nz : 0;
    w->zoff = 2 * sys->nq + sys->nc;
    w->soff = w->zoff + w->nz;
    w->np = opt->sensitivities ? opt->sensitivities->np : 0;
    w->sens_errcon = w->np && opt->sensitivities->scale != NULL;
    w->n = w->soff + 2 * w->nq * w->np;
    w->ng = sys->nq + sys->nc;
    n = (size_t)w->n;
    w->D = (double *)calloc(NROWS * n, sizeof(double));
    w->Dtmp = (double *)calloc((LD_BDF_MAX_ORDER + 1) * n, sizeof(double));
    w->y_pred = (double *)calloc(n, sizeof(double));
    w->psi = (double *)calloc(n, sizeof(double));
    w->d = (double *)calloc(n, sizeof(double));
    w->y = (double *)calloc(n, sizeof(double));
    w->scale = (double *)calloc(n, sizeof(double));
    w->res = (double *)calloc((size_t)w->ng, sizeof(double));
    w->phi = (double *)calloc((size_t)(w->nc > 0 ? w->nc : 1), sizeof(double));
    w->lam_scaled = (double *)calloc((size_t)(w->nc > 0 ? w->nc : 1), sizeof(double));
    w->phiq = (double *)calloc((size_t)(sys->phiq_nnz > 0 ? sys->phiq_nnz : 1), sizeof(double));
    w->phiq_out = (double *)calloc((size_t)(sys->phiq_nnz > 0 ? sys->phiq_nnz : 1),
                                   sizeof(double));
    w->row_sums = (double *)calloc((size_t)(w->nc > 0 ? 2 * w->nc : 1), sizeof(double));
    w->fq = (double *)calloc((size_t)(sys->fq_nnz > 0 ? sys->fq_nnz : 1), sizeof(double));
    w->fv = (double *)calloc((size_t)(sys->fv_nnz > 0 ? sys->fv_nnz : 1), sizeof(double));
    w->hess = (double *)calloc((size_t)(sys->hess_nnz > 0 ? sys->hess_nnz : 1), sizeof(double));
    w->force = (double *)calloc((size_t)w->nq, sizeof(double));
    w->nev = sys->nev;
    w->g_old = (double *)calloc((size_t)(4 * w->nev + 1), sizeof(double));
    w->g_new = w->g_old + w->nev;
    w->g_mid = w->g_new + w->nev;
    w->g_end = w->g_mid + w->nev;
    w->y_ev = (double *)calloc(n, sizeof(double));
    w->fired = (int *)calloc((size_t)(w->nev + 1), sizeof(int));
    if (!w->D || !w->Dtmp || !w->y_pred || !w->psi || !w->d || !w->y || !w->scale || !w->res ||
        !w->phi || !w->lam_scaled || !w->phiq || !w->phiq_out || !w->row_sums || !w->fq || !w->fv || !w->hess || !w->force ||
        !w->g_old || !w->y_ev || !w->fired) {
        ld_bdf_free(w);
        return LD_BDF_NO_MEMORY;
    }
    w->map_D_wanted = sys->row_active != NULL || opt->regularization > 0;
    w->out_reg = opt->output_regularization > 0 ? opt->output_regularization
                                                 : opt->regularization;
    w->rdiag = (double *)calloc((size_t)(w->nc > 0 ? w->nc : 1), sizeof(double));
    if (!w->rdiag) { ld_bdf_free(w); return LD_BDF_NO_MEMORY; }
    st = build_pattern(w);
    if (st == LD_BDF_SUCCESS && w->np) st = ld__sens_create(w);
    if (st == LD_BDF_SUCCESS && opt->method != LD_METHOD_BDF) st = ld__rk_create(w);
    if (st != LD_BDF_SUCCESS) { ld_bdf_free(w); return st; }

    w->gamma[0] = 0.0;
    for (i = 1; i <= LD_BDF_MAX_ORDER + 1; i++) w->gamma[i] = w->gamma[i - 1] + 1.0 / i;
    for (i = 0; i <= LD_BDF_MAX_ORDER + 1; i++) w->err_const[i] = 1.0 / (i + 1);
    set_tolerances(w, 1.0);

    klu_defaults(&w->common);
    /* KLU's block triangular form starts with a maximum transversal, whose cost on these
     * KKT matrices grows like n^2 with the loops of a mechanism (1.5 s of analysis for an
     * N-four-bar of 4,000 windows, n = 36,000) and which finds one block anyway: a closed
     * loop couples everything. Without it AMD orders the symmetric pattern with half the
     * fill. Small systems keep it: their analysis is instant and their pivot order is the one
     * the accuracy tests were measured with (at 1e-12, round-off differs by up to 2x). */
    if (w->ng > BTF_MAX_SIZE) w->common.btf = 0;
    if (opt->column_ordering) {
        w->common.ordering = 1;
        w->reordered = 1;
    }
    /* The iteration matrix is analysed when first factorised (symbolic()): a run that the
     * explicit method finishes never pays for it. */
    w->fail_index = -1;
    *out = w;
    return LD_BDF_SUCCESS;
}

/* KLU's analysis of the iteration matrix's pattern, made once, when first needed. */
static int symbolic(ld_bdf *w)
{
    if (w->sym) return LD_BDF_SUCCESS;
    w->sym = klu_analyze(w->ng, w->Gp, w->Gi, &w->common);
    return w->sym ? LD_BDF_SUCCESS : LD_BDF_NO_MEMORY;
}

void ld_bdf_free(ld_bdf *w)
{
    if (!w) return;
    ld__rk_free(w);
    free(w->sens_work);
    if (w->num) klu_free_numeric(&w->num, &w->common);
    if (w->num_out) klu_free_numeric(&w->num_out, &w->common);
    if (w->sym) klu_free_symbolic(&w->sym, &w->common);
    free(w->D); free(w->Dtmp); free(w->y_pred); free(w->psi); free(w->d); free(w->y);
    free(w->scale); free(w->rdiag); free(w->res); free(w->phi); free(w->lam_scaled);
    free(w->phiq); free(w->phiq_out); free(w->row_sums);
    free(w->fq); free(w->fv); free(w->hess); free(w->force);
    free(w->g_old); free(w->y_ev); free(w->fired);
    free(w->Gp); free(w->Gi); free(w->Gx); free(w->map_M);
    free(w);
}

const ld_bdf_stats *ld_bdf_get_stats(const ld_bdf *w) { return &w->stats; }
double ld_bdf_get_time(const ld_bdf *w) { return w->t; }
int ld_bdf_get_size(const ld_bdf *w) { return w->n; }
void ld_bdf_get_state(const ld_bdf *w, double *y)
{
    memcpy(y, w->D, (size_t)w->n * sizeof(double));
}
void ld_bdf_get_failure(const ld_bdf *w, double *t, double *h, int *index)
{
    *t = w->fail_t; *h = w->fail_h; *index = w->fail_index;
}
double ld_bdf_get_event(const ld_bdf *w, int *fired)
{
    if (fired) memcpy(fired, w->fired, (size_t)w->nev * sizeof(int));
    return w->t_event;
}

/* ------------------------------------------------------------------------------------------ */
/* Linear algebra */

static int all_finite(const double *x, int n)
{
    /* Branch-free: inf * 0 and nan * 0 are nan, so the sums are 0 exactly when all are
     * finite (four of them, independent, for the pipeline). */
    int i;
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    for (i = 0; i + 3 < n; i += 4) {
        a0 += x[i] * 0.0;
        a1 += x[i + 1] * 0.0;
        a2 += x[i + 2] * 0.0;
        a3 += x[i + 3] * 0.0;
    }
    for (; i < n; i++) a0 += x[i] * 0.0;
    return a0 + a1 + a2 + a3 == 0.0;
}

/* Gx <- K = [M Phi_q^T; Phi_q -r diag(rdiag)] at the current phiq values (the index-1
 * matrix; r = 0 without regularisation). */
static void assemble_K(ld_bdf *w, double r)
{
    const ld_system *s = w->sys;
    int i;
    memset(w->Gx, 0, (size_t)w->g_nnz * sizeof(double));
    for (i = 0; i < w->nq; i++) w->Gx[w->map_M[i]] += s->mass[i];
    for (i = 0; i < s->phiq_nnz; i++) {
        w->Gx[w->map_J[i]] += w->phiq[i];
        w->Gx[w->map_JT[i]] += w->phiq[i];
    }
    if (w->map_D)
        for (i = 0; i < w->nc; i++)
            w->Gx[w->map_D[i]] = (s->row_active && !s->row_active[i]) ? 1.0 : -r * w->rdiag[i];
}

/* The rows' scale for the regularisation, diag(Phi_q M^-1 Phi_q^T), from the phiq values
 * (at the start or a restart; kept fixed in between, so that the corrector's equations do
 * not depend on when the iteration matrix was refreshed). */
static void set_regularization(ld_bdf *w)
{
    const ld_system *s = w->sys;
    int i, j, p;
    for (i = 0; i < w->nc; i++) w->rdiag[i] = 0.0;
    if (w->opt.regularization <= 0) return;
    for (j = 0; j < w->nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            w->rdiag[s->phiq_rowind[p]] += w->phiq[p] * w->phiq[p] / s->mass[j];
}

/* Phi_q values at q into w->phiq, the entries of inactive rows zeroed. */
static int eval_phi_q(ld_bdf *w, double t, const double *q)
{
    const ld_system *s = w->sys;
    int p, st = s->phi_q(s->user, t, q, w->phiq);
    if (st == LD_OK && s->row_active)
        for (p = 0; p < s->phiq_nnz; p++)
            if (!s->row_active[s->phiq_rowind[p]]) w->phiq[p] = 0.0;
    return st;
}

/* Right-hand sides of inactive rows: zero (their multipliers are zero). */
static void zero_inactive(const ld_bdf *w, double *rows)
{
    int i;
    if (w->sys->row_active)
        for (i = 0; i < w->nc; i++)
            if (!w->sys->row_active[i]) rows[i] = 0.0;
}

/* Gx <- G: K plus the force and constraint-curvature terms at step constant c. */
static void assemble_G(ld_bdf *w, double c)
{
    const ld_system *s = w->sys;
    int i;
    assemble_K(w, w->opt.regularization);
    for (i = 0; i < s->fq_nnz; i++) w->Gx[w->map_fq[i]] -= c * c * w->fq[i];
    for (i = 0; i < s->fv_nnz; i++) w->Gx[w->map_fv[i]] -= c * w->fv[i];
    for (i = 0; i < s->hess_nnz; i++) w->Gx[w->map_h[i]] += w->hess[i];
}

/* Numeric factorisation of Gx: refactor with the old pivots when possible, afresh when the
 * pivots have become poor or none exist yet. */
/* Once per integrator, when the first full factorisation filled far beyond what AMD's
 * ordering of the symmetric pattern promised: KLU's threshold pivoting has left the
 * diagonal, as in the iteration matrix of spatial bodies, whose direction coordinates carry
 * second moments tiny against their rows' Jacobian entries (a chain of 1,000 spatial bars:
 * 0.36 s for one factorisation, growing like n^2). COLAMD orders the columns for the pivots
 * partial pivoting takes; its factorisation replaces AMD's where it is sparser (that chain:
 * 0.05 s). Models whose factorisations fill as promised never get here. */
static void reorder(ld_bdf *w)
{
    klu_symbolic *sym;
    klu_numeric *num = NULL;
    w->reordered = 1;
    w->common.ordering = 1;
    sym = klu_analyze(w->ng, w->Gp, w->Gi, &w->common);
    if (sym) num = klu_factor(w->Gp, w->Gi, w->Gx, sym, &w->common);
    if (num && num->lnz + num->unz < w->num->lnz + w->num->unz) {
        w->stats.reorderings++;
        klu_free_numeric(&w->num, &w->common);
        if (w->num_out) klu_free_numeric(&w->num_out, &w->common);   /* of the old order */
        klu_free_symbolic(&w->sym, &w->common);
        w->sym = sym;
        w->num = num;
        return;
    }
    if (num) klu_free_numeric(&num, &w->common);
    if (sym) klu_free_symbolic(&sym, &w->common);
    w->common.status = KLU_OK;
}

static int factor_G(ld_bdf *w)
{
    if (symbolic(w) != LD_BDF_SUCCESS) return LD_BDF_NO_MEMORY;
    w->stats.factorizations++;
    if (w->num) {
        if (klu_refactor(w->Gp, w->Gi, w->Gx, w->sym, w->num, &w->common) &&
            w->common.status == KLU_OK && klu_rcond(w->sym, w->num, &w->common) &&
            w->common.rcond >= RCOND_MIN)
            return LD_BDF_SUCCESS;
        klu_free_numeric(&w->num, &w->common);
    }
    w->stats.full_factorizations++;
    w->num = klu_factor(w->Gp, w->Gi, w->Gx, w->sym, &w->common);
    if (!w->num) {
        w->fail_index = w->common.singular_col < w->ng ? w->common.singular_col : -1;
        if (w->common.status == KLU_SINGULAR) return LD_BDF_SINGULAR;
        if (w->common.status == KLU_OUT_OF_MEMORY) return LD_BDF_NO_MEMORY;
        return LD_BDF_LINEAR_SOLVER;
    }
    if (!w->reordered && w->num->lnz + w->num->unz > FILL_LIMIT * (w->sym->lnz + w->sym->unz))
        reorder(w);
    if (klu_rcond(w->sym, w->num, &w->common) && w->common.rcond < DBL_EPSILON) {
        w->fail_index = -1;
        return LD_BDF_SINGULAR;
    }
    return LD_BDF_SUCCESS;
}

static int solve_G(ld_bdf *w, double *rhs)
{
    return klu_solve(w->sym, w->num, w->ng, 1, rhs, &w->common) ? LD_BDF_SUCCESS
                                                                 : LD_BDF_LINEAR_SOLVER;
}

/* out[j] = sum_c Phi_q[c, j] lam[c] */
static void phiq_transpose_times(const ld_bdf *w, const double *lam, double *out)
{
    const ld_system *s = w->sys;
    int j, p;
    for (j = 0; j < w->nq; j++) {
        double acc = 0.0;
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            acc += w->phiq[p] * lam[s->phiq_rowind[p]];
        out[j] = acc;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Backward differences */

/* R[i][j] = prod_{l=0..i} M[l][j] with M[0][j] = 1, M[i][j] = (i - 1 - factor j) / i. */
static void compute_R(int order, double factor, double *R)
{
    int i, j, m = order + 1;
    for (j = 0; j < m; j++) R[j] = 1.0;
    for (i = 1; i < m; i++)
        for (j = 0; j < m; j++)
            R[i * m + j] = R[(i - 1) * m + j] * (j == 0 ? 0.0 : (i - 1 - factor * j) / i);
}

/* Rescale D[0..order] for a step changed by `factor` (D <- (R U)^T D). */
static void change_D(ld_bdf *w, int order, double factor)
{
    double R[(LD_BDF_MAX_ORDER + 1) * (LD_BDF_MAX_ORDER + 1)];
    double U[(LD_BDF_MAX_ORDER + 1) * (LD_BDF_MAX_ORDER + 1)];
    double RU[(LD_BDF_MAX_ORDER + 1) * (LD_BDF_MAX_ORDER + 1)];
    int m = order + 1, i, j, l, n = w->n;
    compute_R(order, factor, R);
    compute_R(order, 1.0, U);
    for (i = 0; i < m; i++)
        for (j = 0; j < m; j++) {
            double acc = 0.0;
            for (l = 0; l < m; l++) acc += R[i * m + l] * U[l * m + j];
            RU[i * m + j] = acc;
        }
    memcpy(w->Dtmp, w->D, (size_t)m * (size_t)n * sizeof(double));
    for (i = 0; i < m; i++) {
        double *Di = w->D + (size_t)i * n;
        memset(Di, 0, (size_t)n * sizeof(double));
        for (l = 0; l < m; l++) {
            double a = RU[l * m + i];
            const double *Dl = w->Dtmp + (size_t)l * n;
            int k;
            if (a == 0.0) continue;
            for (k = 0; k < n; k++) Di[k] += a * Dl[k];
        }
    }
}

/* Weighted max-norm of a (q, v) pair of error estimates for a formula of order k: a position
 * error against its tolerance; a velocity error through the position error it causes in the
 * corrector, c_k e_v with c_k = h / gamma_k, against the same tolerance widened by the
 * velocity estimate's round-off floor. */
static double error_norm(const ld_bdf *w, const double *x, int k)
{
    int i, nq = w->nq;
    double m = 0.0, ck = w->h / w->gamma[k];
    double amp = (double)(1 << k) / (k + 1);
    double floor_q = (w->noise > w->settled ? w->noise : w->settled) * amp;
    double floor_v = (w->noise > w->vel_floor ? w->noise : w->vel_floor) * amp;
    for (i = 0; i < nq; i++) {
        double a = fabs(x[i]) / (w->scale[i] + floor_q);
        double b = ck * fabs(x[nq + i]) / (w->scale[i] + floor_v);
        if (a > m) m = a;
        if (b > m) m = b;
    }
    /* Sensitivities taking part (ld_sens.c): the same test on their own scales. */
    if (w->sens_errcon)
        for (i = w->soff; i < w->n; i += 2 * nq) {
            int j;
            for (j = 0; j < nq; j++) {
                double a = fabs(x[i + j]) / w->scale[i + j];
                double b = ck * fabs(x[i + nq + j]) / w->scale[i + j];
                if (a > m) m = a;
                if (b > m) m = b;
            }
        }
    return m;
}

/* ------------------------------------------------------------------------------------------ */
/* Model evaluation at the Newton iterate */

/* q, v and d_v from d_q: v = (psi_q + d_q) / c is the BDF derivative of q. */
static void finish_corrector(ld_bdf *w, double c)
{
    int i, nq = w->nq;
    for (i = 0; i < nq; i++) {
        w->y[i] = w->y_pred[i] + w->d[i];
        w->y[nq + i] = (w->psi[i] + w->d[i]) / c;
        w->d[nq + i] = w->y[nq + i] - w->y_pred[nq + i];
    }
}

/* From d_q and the multipliers in y, fill q, v (in y) and the scaled residual res. */
static int residual(ld_bdf *w, double t, double c)
{
    const ld_system *s = w->sys;
    int i, nq = w->nq, st;
    double *q = w->y, *v = w->y + nq, *lam = w->y + 2 * nq;
    finish_corrector(w, c);
    w->stats.residual_evaluations++;
    if ((st = eval_phi_q(w, t, q)) != LD_OK) return st;
    if ((st = s->force(s->user, t, q, v, w->force)) != LD_OK) return st;
    if ((st = s->phi(s->user, t, q, w->res + nq)) != LD_OK) return st;
    if (s->row_active)   /* inactive row i: mu_i = c^2 lam_i = 0 */
        for (i = 0; i < w->nc; i++)
            if (!s->row_active[i]) w->res[nq + i] = c * c * lam[i];
    if (w->opt.regularization > 0) {   /* Phi - R mu (see the top) */
        double rc2 = w->opt.regularization * c * c;
        for (i = 0; i < w->nc; i++)
            if (!(s->row_active && !s->row_active[i]))
                w->res[nq + i] -= rc2 * w->rdiag[i] * lam[i];
    }
    phiq_transpose_times(w, lam, w->res);
    for (i = 0; i < nq; i++)
        w->res[i] = c * s->mass[i] * (w->psi[nq + i] + w->d[nq + i]) +
                    c * c * (w->res[i] - w->force[i]);
    return all_finite(w->res, w->ng) ? LD_OK : LD_ERR_NONFINITE;
}

/* Assemble and factorise G at the current iterate (phiq and y are current). */
static int refresh_G(ld_bdf *w, double t, double c)
{
    const ld_system *s = w->sys;
    int i, st;
    const double *q = w->y, *v = w->y + w->nq, *lam = w->y + 2 * w->nq;
    w->stats.jacobian_evaluations++;
    for (i = 0; i < w->nc; i++) w->lam_scaled[i] = c * c * lam[i];
    if (s->fq_nnz && (st = s->force_q(s->user, t, q, v, w->fq)) != LD_OK) return LD_BDF_CALLBACK;
    if (s->fv_nnz && (st = s->force_v(s->user, t, q, v, w->fv)) != LD_OK) return LD_BDF_CALLBACK;
    if (s->hess_nnz && (st = s->phi_qq_lam(s->user, t, q, w->lam_scaled, w->hess)) != LD_OK)
        return LD_BDF_CALLBACK;
    assemble_G(w, c);
    if (!all_finite(w->Gx, w->g_nnz)) return LD_BDF_NONFINITE;
    return factor_G(w);
}

/* ------------------------------------------------------------------------------------------ */

/* The end of a start: the accepted initial state and its event values. */
static int started(ld_bdf *w, double t0, const double *q0, const double *v0)
{
    const ld_system *s = w->sys;
    if (s->accept && s->accept(s->user, t0, q0, v0) != LD_OK) return LD_BDF_CALLBACK;
    if (w->nev && s->events(s->user, t0, q0, v0, w->D + 2 * w->nq, w->g_old) != LD_OK)
        return LD_BDF_CALLBACK;
    w->restart_pending = 0;
    w->tail_pending = 0;
    w->switch_pending = 0;
    w->ring_n = w->ring_pos = 0;
    w->stretch_steps = w->stretch_tries = 0;
    w->initialised = 1;
    return LD_BDF_SUCCESS;
}

/* Whether a start uses the explicit method: method rk, and method auto unless redundant
 * constraints are allowed (regularisation): the explicit method's accelerations would carry
 * the regularisation's bias, which the BDF's corrector does not (ld_bdf.c, "Redundant
 * constraints"). */
static int explicit_first(const ld_bdf *w)
{
    if (w->opt.method == LD_METHOD_RK) return 1;
    return w->opt.method == LD_METHOD_AUTO && !(w->opt.regularization > 0);
}

/* Start (or restart) the integration at t0 from (q0, v0, z0): consistent accelerations and
 * multipliers, order 1, a first step from the acceleration. q0, v0, z0 must not point into
 * the history D. */
static int start(ld_bdf *w, double t0, const double *q0, const double *v0, const double *z0)
{
    const ld_system *s = w->sys;
    int i, nq = w->nq, nc = w->nc, st;
    double *rhs = w->res, *a, nrm;
    memset(w->D, 0, (size_t)NROWS * (size_t)w->n * sizeof(double));
    memcpy(w->D, q0, (size_t)nq * sizeof(double));
    memcpy(w->D + nq, v0, (size_t)nq * sizeof(double));
    if (w->nz && z0) memcpy(w->D + w->zoff, z0, (size_t)w->nz * sizeof(double));
    w->t = t0;
    w->refresh_next = 0;
    w->fail_t = t0;
    w->fail_h = 0.0;

    if (eval_phi_q(w, t0, q0) != LD_OK) return LD_BDF_CALLBACK;
    set_regularization(w);
    if (w->use_rk) {
        /* The explicit method solves its first stage (accelerations, multipliers) itself.
         * Where it cannot (Phi_q singular there) or should not (S too ill-conditioned for
         * the tolerance, LD__UNSUITED), auto starts the BDF instead. */
        st = ld__rk_start(w);
        if (st == LD_BDF_SUCCESS) return started(w, t0, q0, v0);
        if (st == LD_BDF_CALLBACK || st == LD_BDF_NO_MEMORY || w->opt.method != LD_METHOD_AUTO)
            return st;
        w->use_rk = 0;
        w->rk_refused = 1;
        w->stats.switches_to_bdf++;
        if (eval_phi_q(w, t0, q0) != LD_OK) return LD_BDF_CALLBACK;
    }

    /* Consistent accelerations and multipliers: [M Phi_q^T; Phi_q 0] [a; lam] = [Q; gamma]. */
    if (s->force(s->user, t0, q0, v0, rhs) != LD_OK ||
        s->gamma(s->user, t0, q0, v0, rhs + nq) != LD_OK)
        return LD_BDF_CALLBACK;
    zero_inactive(w, rhs + nq);
    assemble_K(w, w->out_reg);
    if (!all_finite(w->Gx, w->g_nnz) || !all_finite(rhs, w->ng)) return LD_BDF_NONFINITE;
    w->stats.jacobian_evaluations++;
    if ((st = factor_G(w)) != LD_BDF_SUCCESS) return st;
    if ((st = solve_G(w, rhs)) != LD_BDF_SUCCESS) return st;
    a = rhs;
    memcpy(w->D + 2 * nq, rhs + nq, (size_t)nc * sizeof(double));   /* lam0 */

    /* First step: order-1 error 0.5 h^2 |q''| of about a tenth of the tolerance. */
    for (i = 0; i < w->n; i++) w->scale[i] = w->atol + w->rtol * fabs(w->D[i]);
    nrm = 0.0;
    for (i = 0; i < nq; i++) nrm += (a[i] / w->scale[i]) * (a[i] / w->scale[i]);
    nrm = sqrt(nrm / nq);
    w->h = w->opt.h_init > 0 ? w->opt.h_init : (nrm > 0 ? 0.3 * sqrt(2.0 / nrm) : 1e-3);
    if (w->opt.h_max > 0 && w->h > w->opt.h_max) w->h = w->opt.h_max;
    w->order = 1;
    w->n_equal = 0;
    w->efail_h = 0.0;
    for (i = 0; i < nq; i++) {
        w->D[w->n + i] = w->h * v0[i];
        w->D[w->n + nq + i] = w->h * a[i];
    }
    if (w->nz) {
        double *zr = w->D + w->n + w->zoff;
        if (s->aux_rate(s->user, t0, q0, v0, nc > 0 ? w->D + 2 * nq : NULL, zr) != LD_OK)
            return LD_BDF_CALLBACK;
        for (i = 0; i < w->nz; i++) zr[i] *= w->h;
    }
    return started(w, t0, q0, v0);
}

int ld_bdf_init(ld_bdf *w, double t0, const double *q0, const double *v0, const double *z0)
{
    int i, nq = w->nq;
    double nrm = 0.0;
    w->initialised = 0;
    if (!isfinite(t0) || !all_finite(q0, nq) || !all_finite(v0, nq) ||
        (z0 && !all_finite(z0, w->nz)))
        return LD_BDF_BAD_INPUT;
    for (i = 0; i < nq; i++) nrm = fmax(nrm, fabs(q0[i]));
    set_tolerances(w, nrm);
    ld__rk_set_tolerances(w, nrm);
    w->use_rk = explicit_first(w);
    w->trial_wait[0] = TRIAL_WAIT;
    w->trial_wait[1] = LD__TRIAL_RING;
    w->long_wait = LONG_STRETCH;
    w->trial_steps = 0;
    w->rk_refused = 0;
    w->h = 0.0;                 /* no step to go on from (a restart's first step, ld_rk.c) */
    return start(w, t0, q0, v0, z0);
}

int ld_bdf_restart(ld_bdf *w)
{
    return ld_bdf_restart_at(w, NULL, NULL);
}

int ld_bdf_restart_at(ld_bdf *w, const double *q, const double *v)
{
    int nq = w->nq, st;
    if (!w->initialised) return LD_BDF_BAD_INPUT;
    if ((q && !all_finite(q, nq)) || (v && !all_finite(v, nq))) return LD_BDF_BAD_INPUT;
    /* A moved state would make the sensitivities jump (ld_sens.c). */
    if (w->np && (q || v)) return LD_BDF_BAD_INPUT;
    w->initialised = 0;
    w->stats.restarts++;
    w->trial_steps = 0;         /* a trial under way ends without a verdict */
    share_tolerances(w, 1.0);
    memcpy(w->y, w->D, (size_t)w->n * sizeof(double));
    if (q) memcpy(w->y, q, (size_t)nq * sizeof(double));
    if (v) memcpy(w->y + nq, v, (size_t)nq * sizeof(double));
    /* With method auto every restart (an event, a new mode) tries the explicit method. */
    if (explicit_first(w) && !w->use_rk) {
        w->use_rk = 1;
        w->stats.switches_to_rk++;
    }
    st = start(w, w->t, w->y, w->y + nq, w->y + w->zoff);
    /* The sensitivities go on from the restart's state (its history anew, as the state's). */
    if (st == LD_BDF_SUCCESS && w->np) st = ld_bdf_init_sensitivities(w, w->y + w->soff);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * Cost trials (method auto, options.cost_trials)
 *
 * Stiffness is not always plain to the explicit method's test: IFToMM A05's dampers keep
 * its steps at some 5/6 of its stability limit, and a flexible arm's at a fifth to a half
 * of it, yet the BDF is 40 and 3 times cheaper there. So method auto measures. A method's
 * rate is the time it advanced per unit of work over its last LD__TRIAL_RING accepted
 * steps; a unit is a right-hand side of the explicit method, a Newton iteration of the BDF,
 * or half a BDF factorisation (measured on models of 8 to 4,000 coordinates, each costs the
 * same within some 40%). The explicit method asks for a trial of the BDF when its steps
 * have come near its stability limit (ld__rk_near_stiff: h |lambda| beyond a sixth of it);
 * the BDF, after TRIAL_WAIT steps, for a trial of the explicit method. The tried method
 * starts from the current state. After TRIAL_WARMUP steps (the BDF starts at order 1 with
 * a short step: its order and step settle) its rate over TRIAL_SPAN more steps is compared
 * with the first method's: the tried method runs on when it is TRIAL_MARGIN times faster;
 * else the first method takes over again from there and waits twice as long before the
 * next trial. Near-stiff steps call for the BDF, and so does a stretch of LONG_STRETCH
 * explicit step attempts, accepted or not (doubling after each such trial the explicit method wins): a stiff
 * spring whose fast oscillation is excited by a few 1e-13 rad keeps the explicit steps at
 * the accuracy that oscillation asks for, well inside the stability limit (a flexible arm
 * with joints of 1e14 N m/rad: h |lambda| 0.02 to 0.7, 2e-9 s steps, five million of them
 * for 0.01 s), where the BDF, which damps it, takes 39 steps; Jansen's 10 s benchmark
 * takes 1,796 explicit steps at rtol 1e-10 and meets no such trial. At a given tolerance
 * the BDF's global error is 25 to 500 times the explicit method's (Jansen, IFToMM A01 and A02;
 * tests/test_accuracy.py), so the BDF that a trial brings in runs at AUTO_BDF_SHARE of its
 * local tolerances (not below the round-off floor): a run keeps the accuracy the explicit
 * method would give it, whichever method ends up running. A switch for stiffness proper
 * (ld_rk.c) and a restart bring back the BDF's own tolerances. Work is counted, not timed, so a run
 * takes the same steps on every machine. A restart (an event) ends a trial without a
 * verdict and returns to the explicit method, as before. No trial goes back to an explicit
 * method that refused to start in this run (S too ill-conditioned for the tolerance).
 * ------------------------------------------------------------------------------------------ */

long ld_bdf_work_units(const ld_bdf *w)
{
    return w->stats.rhs_evaluations + w->stats.newton_iterations + 2 * w->stats.factorizations;
}

/* After an accepted step: its time and the work so far into the ring. */
static void note_step(ld_bdf *w)
{
    w->ring_t[w->ring_pos] = w->t;
    w->ring_work[w->ring_pos] = ld_bdf_work_units(w);
    w->ring_pos = (w->ring_pos + 1) % LD__TRIAL_RING;
    if (w->ring_n < LD__TRIAL_RING) w->ring_n++;
    w->stretch_steps++;
    if (w->trial_steps > 0) w->trial_steps++;
}

/* Time advanced per unit of work over the ring (which must be full). */
static double ring_rate(const ld_bdf *w)
{
    int oldest = w->ring_pos, newest = (w->ring_pos + LD__TRIAL_RING - 1) % LD__TRIAL_RING;
    long work = w->ring_work[newest] - w->ring_work[oldest];
    return (w->ring_t[newest] - w->ring_t[oldest]) / (double)(work > 0 ? work : 1);
}

/* (Method auto) continue from the current state, the last accepted one made consistent by
 * the start, with the explicit method (to_rk) or the BDF: stiffness, a failure of the
 * explicit method, or a cost trial. The start falls back to the BDF where the explicit
 * method cannot start (S too ill-conditioned for the tolerance). */
static int switch_method(ld_bdf *w, int to_rk, double share)
{
    share_tolerances(w, share);
    w->use_rk = to_rk;
    if (to_rk) w->stats.switches_to_rk++;
    else w->stats.switches_to_bdf++;
    memcpy(w->y, w->D, (size_t)w->n * sizeof(double));
    return start(w, w->t, w->y, w->y + w->nq, w->y + w->zoff);
}

/* Before a step: start, measure or decide a trial (see above). */
static int cost_trial(ld_bdf *w)
{
    int st, from_rk;
    long work;
    if (w->trial_steps == 0) {
        if (w->ring_n < LD__TRIAL_RING || w->stretch_steps < w->trial_wait[w->use_rk] ||
            (w->use_rk && !ld__rk_near_stiff(w) && w->stretch_tries < w->long_wait))
            return LD_BDF_SUCCESS;
        if (!w->use_rk && (!explicit_first(w) || w->rk_refused)) return LD_BDF_SUCCESS;
        w->trial_from_rk = w->use_rk;
        w->trial_long = w->use_rk && !ld__rk_near_stiff(w);
        w->trial_rate_from = ring_rate(w);
        w->stats.cost_trials++;
        if ((st = switch_method(w, !w->use_rk, AUTO_BDF_SHARE)) != LD_BDF_SUCCESS) return st;
        /* (the explicit method may refuse to start: the BDF went on, and stays) */
        w->trial_steps = w->use_rk != w->trial_from_rk;
        return LD_BDF_SUCCESS;
    }
    if (w->trial_steps == TRIAL_WARMUP + 1) {
        w->trial_t0 = w->t;
        w->trial_work0 = ld_bdf_work_units(w);
        return LD_BDF_SUCCESS;
    }
    if (w->trial_steps < TRIAL_WARMUP + TRIAL_SPAN + 1) return LD_BDF_SUCCESS;
    from_rk = w->trial_from_rk;
    w->trial_steps = 0;
    work = ld_bdf_work_units(w) - w->trial_work0;
    if ((w->t - w->trial_t0) / (double)(work > 0 ? work : 1) > TRIAL_MARGIN * w->trial_rate_from) {
        w->stats.trials_kept++;
        w->trial_wait[from_rk] = from_rk ? LD__TRIAL_RING : TRIAL_WAIT;
        return LD_BDF_SUCCESS;
    }
    w->trial_wait[from_rk] *= 2;
    if (w->trial_long) w->long_wait *= 2;
    return switch_method(w, from_rk, AUTO_BDF_SHARE);
}

/* Shared with ld_rk.c */
int ld__all_finite(const double *x, int n) { return all_finite(x, n); }
int ld__refresh_G(ld_bdf *w, double t, double c) { return refresh_G(w, t, c); }
int ld__factor_K(ld_bdf *w, double t, const double *q)
{
    if (eval_phi_q(w, t, q) != LD_OK) return LD_BDF_CALLBACK;
    assemble_K(w, w->out_reg);
    if (!all_finite(w->Gx, w->g_nnz)) return LD_BDF_NONFINITE;
    return factor_G(w);
}
int ld__solve_G(ld_bdf *w, double *rhs) { return solve_G(w, rhs); }
int ld__eval_phi_q(ld_bdf *w, double t, const double *q) { return eval_phi_q(w, t, q); }
void ld__zero_inactive(const ld_bdf *w, double *rows) { zero_inactive(w, rows); }

/* Add the Newton correction in res to d_q and to the multipliers (res holds mu = c^2 lam). */
static void apply_correction(ld_bdf *w, double c)
{
    int i, nq = w->nq;
    for (i = 0; i < nq; i++) w->d[i] += w->res[i];
    for (i = 0; i < w->nc; i++) w->y[2 * nq + i] += w->res[nq + i] / (c * c);
}

/* One Newton solve of the corrector at t_new; returns 1 when converged. */
static int newton(ld_bdf *w, double t_new, double c, int fresh, int *status)
{
    int k, i, nq = w->nq, maxit = w->opt.newton_max_iter, settled;
    double dy_norm, dy_norm_old = -1.0, rate, max_corr;
    *status = LD_BDF_SUCCESS;
    for (k = 0; k < maxit; k++) {
        int st = residual(w, t_new, c);
        if (st != LD_OK) {
            *status = st == LD_ERR_NONFINITE ? LD_BDF_NONFINITE : LD_BDF_CALLBACK;
            return 0;
        }
        for (i = 0; i < w->ng; i++) w->res[i] = -w->res[i];
        if (solve_G(w, w->res) != LD_BDF_SUCCESS) { *status = LD_BDF_LINEAR_SOLVER; return 0; }
        w->stats.newton_iterations++;
        w->newton_iters = k + 1;
        dy_norm = 0.0;
        max_corr = 0.0;
        for (i = 0; i < nq; i++) {
            double r = w->res[i] / w->scale[i], a = fabs(w->res[i]);
            dy_norm += r * r;
            if (a > max_corr) max_corr = a;
        }
        /* Every correction at round-off level (of the coordinate vector); from the second
         * iteration on, a few ulps more (ROUNDOFF): round-off corrections do not contract. */
        settled = max_corr <= (k > 0 ? ROUNDOFF / SETTLED : 1.0) * w->settled;
        dy_norm = sqrt(dy_norm / nq);
        if (!isfinite(dy_norm)) { *status = LD_BDF_NONFINITE; return 0; }
        /* The contraction rate is measured within this solve (a rate carried over from
         * earlier steps would hide a matrix gone stale as the mechanism moves). */
        rate = dy_norm_old > 0 ? dy_norm / dy_norm_old : -1.0;
        /* At very tight tolerances corrections reach noise level before the rate test can
         * tell, and their ratio is noise: a correction at round-off, or one already below
         * the Newton tolerance while the rate says "no contraction", has settled. */
        if (dy_norm_old > 0 && rate >= 1.0 && dy_norm <= w->newton_tol) settled = 1;
        /* Stagnation below the residue the error estimates tolerate (NOISE eps max|q|): the
         * iteration has reached the round-off floor of the model (large or ill-conditioned
         * models reach it above SETTLED); cutting the step would not lower it. */
        if (dy_norm_old > 0 && rate >= 0.5 && max_corr <= w->vel_floor) {
            settled = 1;
            if (max_corr > w->noise) w->noise = max_corr;
        }
        settled = settled && k > 0;
        if (!settled && dy_norm_old > 0) {
            /* Predicted size of the correction after the remaining iterations. */
            double left = dy_norm / (1.0 - rate);
            int j;
            for (j = k; j < maxit; j++) left *= rate;
            if (rate >= 1.0 || left > w->newton_tol) break;
        }
        apply_correction(w, c);
        if (settled || dy_norm == 0.0 ||
            (rate >= 0 && rate / (1.0 - rate) * dy_norm < w->newton_tol)) {
            /* The multiplier corrections were not in dy_norm: check them once. */
            if (!all_finite(w->y + 2 * nq, w->nc)) { *status = LD_BDF_NONFINITE; return 0; }
            finish_corrector(w, c);
            return 1;
        }
        dy_norm_old = dy_norm;
    }
    /* Not converged. With a fresh matrix that is ill-conditioned enough to explain them,
     * corrections this small are round-off amplified by the matrix (a singular
     * configuration): accept the iterate and let the error estimates tolerate the noise
     * (see "Singular configurations" at the top). eps max|q| = vel_floor / NOISE. */
    if (fresh && k >= 1 && max_corr <= w->vel_floor / NOISE * NOISE_LIMIT &&
        klu_condest(w->Gp, w->Gx, w->sym, w->num, &w->common) &&
        max_corr <= w->vel_floor / NOISE * CONDEST_FRACTION * w->common.condest) {
        if (k < maxit) apply_correction(w, c);
        if (!all_finite(w->y + 2 * nq, w->nc)) { *status = LD_BDF_NONFINITE; return 0; }
        finish_corrector(w, c);
        if (max_corr > w->noise) w->noise = max_corr;
        w->stats.noise_limited++;
        return 1;
    }
    return 0;
}

/* Make an output row y = (q, v, lam) consistent: with K = [M Phi_q^T; Phi_q 0] at q, the
 * velocity is projected onto Phi_q v + Phi_t = 0 (mass-weighted, one solve: the constraint is
 * linear in v), and the multipliers are solved from the index-1 equations
 * K (a, lam) = (Q, gamma) at the projected state. The BDF's own multipliers carry the
 * Newton residue divided by c^2; these carry only the error of (q, v). */
static int consistent_output(ld_bdf *w, double t, double *y)
{
    const ld_system *s = w->sys;
    int i, j, p, nq = w->nq, nc = w->nc;
    double *q = y, *v = y + nq, *rhs = w->res, rn = 0.0;
    if (w->use_rk) {
        /* The explicit method's Schur complement; the KKT matrix where S is singular. */
        int st = ld__rk_consistent(w, t, y);
        if (st != LD_BDF_SINGULAR) return st;
    }
    if (eval_phi_q(w, t, q) != LD_OK || s->phi_t(s->user, t, q, w->phi) != LD_OK)
        return LD_BDF_CALLBACK;
    zero_inactive(w, w->phi);
    assemble_K(w, w->out_reg);
    if (!all_finite(w->Gx, w->g_nnz)) return LD_BDF_NONFINITE;
    if (symbolic(w) != LD_BDF_SUCCESS) return LD_BDF_NO_MEMORY;
    if (!(w->num_out && klu_refactor(w->Gp, w->Gi, w->Gx, w->sym, w->num_out, &w->common) &&
          klu_rcond(w->sym, w->num_out, &w->common) && w->common.rcond >= RCOND_MIN)) {
        if (w->num_out) klu_free_numeric(&w->num_out, &w->common);
        w->num_out = klu_factor(w->Gp, w->Gi, w->Gx, w->sym, &w->common);
        if (!w->num_out) {
            w->fail_index = w->common.singular_col < w->ng ? w->common.singular_col : -1;
            return w->common.status == KLU_SINGULAR ? LD_BDF_SINGULAR : LD_BDF_LINEAR_SOLVER;
        }
    }
    /* Velocity: K (dv, mu) = (0, -(Phi_q v + Phi_t)). */
    for (i = 0; i < nc; i++) rhs[nq + i] = w->phi[i];
    for (j = 0; j < nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            rhs[nq + s->phiq_rowind[p]] += w->phiq[p] * v[j];
    for (i = 0; i < nc; i++) { rn += rhs[nq + i] * rhs[nq + i]; rhs[nq + i] = -rhs[nq + i]; }
    if (sqrt(rn) > w->stats.max_output_velocity_violation)
        w->stats.max_output_velocity_violation = sqrt(rn);
    for (i = 0; i < nq; i++) rhs[i] = 0.0;
    if (!klu_solve(w->sym, w->num_out, w->ng, 1, rhs, &w->common)) return LD_BDF_LINEAR_SOLVER;
    for (i = 0; i < nq; i++) v[i] += rhs[i];
    /* Multipliers: K (a, lam) = (Q, gamma). */
    if (s->force(s->user, t, q, v, rhs) != LD_OK || s->gamma(s->user, t, q, v, rhs + nq) != LD_OK)
        return LD_BDF_CALLBACK;
    zero_inactive(w, rhs + nq);
    if (!klu_solve(w->sym, w->num_out, w->ng, 1, rhs, &w->common)) return LD_BDF_LINEAR_SOLVER;
    memcpy(y + 2 * nq, rhs + nq, (size_t)nc * sizeof(double));
    return all_finite(y, w->n) ? LD_BDF_SUCCESS : LD_BDF_NONFINITE;
}

/* The constraint residual of an output row, kept as the largest over the run (max-norm;
 * NaN counts as the largest): what the caller checks the run's promise against. Also each
 * row against its own terms: |Phi_i| / (atol sum_j |Phi_q,ij| + rtol sum_j |Phi_q,ij q_j|),
 * the violation that errors of atol + rtol |q_j| in the coordinates would make. The norm
 * alone scales with the largest coordinate and excused a unit vector's row, which is of
 * order 1 wherever the body is (a body 1e16 m out ended with |u|^2 - 1 = 2.4). Uses the
 * scratch row w->phi (free outside consistent_output), w->phiq_out and w->row_sums. */
static int track_output_phi(ld_bdf *w, double t, const double *y)
{
    const ld_system *s = w->sys;
    int i, j, p;
    double worst = 0.0, ratio = 0.0, *sums = w->row_sums;
    long row = -1;
    if (w->nc == 0) return LD_BDF_SUCCESS;
    if (s->phi(s->user, t, y, w->phi) != LD_OK) return LD_BDF_CALLBACK;
    zero_inactive(w, w->phi);
    for (i = 0; i < w->nc; i++) {
        double a = fabs(w->phi[i]);
        if (!(a <= worst)) worst = a;
    }
    if (!(worst <= w->stats.max_output_phi)) {
        w->stats.max_output_phi = worst;
        w->stats.max_output_phi_t = t;
    }
    /* Each row's scale: sums[i] = sum_j |Phi_q,ij|, sums[nc + i] = sum_j |Phi_q,ij q_j|. */
    if (s->phi_q(s->user, t, y, w->phiq_out) != LD_OK) return LD_BDF_CALLBACK;
    memset(sums, 0, (size_t)(2 * w->nc) * sizeof(double));
    for (j = 0; j < w->nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++) {
            double a = fabs(w->phiq_out[p]);
            sums[s->phiq_rowind[p]] += a;
            sums[w->nc + s->phiq_rowind[p]] += a * fabs(y[j]);
        }
    for (i = 0; i < w->nc; i++) {
        double den = w->opt.atol * sums[i] + w->opt.rtol * sums[w->nc + i], r;
        if (w->phi[i] == 0.0) continue;
        r = fabs(w->phi[i]) / (den > 0.0 ? den : DBL_MIN);
        if (!(r <= ratio)) { ratio = r; row = i; }
    }
    if (row >= 0 && !(ratio <= w->stats.max_output_row_ratio)) {
        w->stats.max_output_row_ratio = ratio;
        w->stats.max_output_row_ratio_t = t;
        w->stats.max_output_row = row;
    }
    return LD_BDF_SUCCESS;
}

/* The current step's interpolant at t_eval (the explicit method's, or the BDF polynomial). */
static int dense_output(ld_bdf *w, double t_eval, double *out)
{
    int j, i, n = w->n;
    double p = 1.0;
    if (w->use_rk) return ld__rk_dense(w, t_eval, out);
    memcpy(out, w->D, (size_t)n * sizeof(double));
    for (j = 0; j < w->order; j++) {
        const double *Dj = w->D + (size_t)(j + 1) * n;
        p *= (t_eval - (w->t - w->h * j)) / (w->h * (1 + j));
        for (i = 0; i < n; i++) out[i] += Dj[i] * p;
    }
    return LD_BDF_SUCCESS;
}

static int fail(ld_bdf *w, int status, double t, double h)
{
    w->fail_t = t;
    w->fail_h = h;
    return status;
}

/* Assemble and factorise the iteration matrix at the predictor of the step to t_new. */
static int refresh_at_predictor(ld_bdf *w, double t_new, double c)
{
    int i, nq = w->nq, st;
    memcpy(w->y + 2 * nq, w->y_pred + 2 * nq, (size_t)w->nc * sizeof(double));
    for (i = 0; i < nq; i++) {
        w->y[i] = w->y_pred[i];
        w->y[nq + i] = w->psi[i] / c;
    }
    if (eval_phi_q(w, t_new, w->y) != LD_OK) return LD_BDF_CALLBACK;
    st = refresh_G(w, t_new, c);
    /* The Newton iteration starts from the predictor again. */
    memset(w->d, 0, (size_t)w->n * sizeof(double));
    return st;
}

/* Sign change of event k from a to b that the function asks for: +1 rising, -1 falling. */
static int crossing(const ld_bdf *w, int k, double a, double b)
{
    int dir = w->sys->event_direction ? w->sys->event_direction[k] : 0;
    if (a < 0 && b > 0 && dir >= 0) return 1;
    if (a > 0 && b < 0 && dir <= 0) return -1;
    return 0;
}

static int events_at(ld_bdf *w, double t, const double *y, double *g)
{
    const ld_system *s = w->sys;
    return s->events(s->user, t, y, y + w->nq, y + 2 * w->nq, g) == LD_OK ? LD_BDF_SUCCESS
                                                                           : LD_BDF_CALLBACK;
}

/* y_ev <- y, or the current step's interpolant at t when y is NULL. */
static int event_state(ld_bdf *w, double t, const double *y)
{
    if (!y) return dense_output(w, t, w->y_ev);
    memcpy(w->y_ev, y, (size_t)w->n * sizeof(double));
    return LD_BDF_SUCCESS;
}

/* The event functions at the consistent state of y (NULL: the interpolant at t), made in
 * y_ev: velocity projected, multipliers from the index-1 equations (see consistent_output).
 * Where that state cannot be formed (K singular), the raw state's values: y_ev is made
 * afresh, since consistent_output may have changed part of it before it failed. */
static int events_consistent(ld_bdf *w, double t, const double *y, double *g)
{
    double worst = w->stats.max_output_velocity_violation;   /* not an output row */
    int st;
    if ((st = event_state(w, t, y)) != LD_BDF_SUCCESS) return st;
    st = consistent_output(w, t, w->y_ev);
    w->stats.max_output_velocity_violation = worst;
    if (st == LD_BDF_CALLBACK) return st;
    if (st != LD_BDF_SUCCESS && (st = event_state(w, t, y)) != LD_BDF_SUCCESS) return st;
    return events_at(w, t, w->y_ev, g);
}

static int any_crossing(const ld_bdf *w, const double *g_old, const double *g_new)
{
    int k;
    for (k = 0; k < w->nev; k++)
        if (crossing(w, k, g_old[k], g_new[k])) return 1;
    return 0;
}

/* (Explicit steps, whose ends may lie far apart) a crossing inside the step that its ends do
 * not show: an event function that changes sign and back within it (a contact's slip
 * velocity through zero and back: the walker's gait III missed a stop this way). The
 * functions are sampled on the step's interpolant at EVENT_SAMPLES - 1 interior points; on
 * a crossing between two samples, g_old and g_new become their values and *t_lo, *t_hi
 * their times, and 1 is returned. */
static int interior_crossing(ld_bdf *w, double *t_lo, double *t_hi, int *status)
{
    int j;
    double t0 = *t_lo, h = *t_hi - *t_lo;
    *status = LD_BDF_SUCCESS;
    for (j = 1; j < EVENT_SAMPLES; j++) {
        double ts = t0 + h * j / EVENT_SAMPLES;
        if ((*status = dense_output(w, ts, w->y_ev)) != LD_BDF_SUCCESS ||
            (*status = events_at(w, ts, w->y_ev, w->g_mid)) != LD_BDF_SUCCESS)
            return 0;
        if (any_crossing(w, w->g_old, w->g_mid)) {
            memcpy(w->g_new, w->g_mid, (size_t)w->nev * sizeof(double));
            *t_hi = ts;
            return 1;
        }
        memcpy(w->g_old, w->g_mid, (size_t)w->nev * sizeof(double));
        *t_lo = ts;
    }
    return 0;
}

/* Locate the earliest crossing in (t_lo, t_hi] (g_old at t_lo, g_new at t_hi, the current
 * step's interpolant in between): Illinois regula falsi on the leading event, bisection when
 * it stalls. Sets t_event, fired[], and returns 1 when an event fired. */
static int locate_event(ld_bdf *w, double t_lo, double t_hi, int *status)
{
    int k, lead = -1, side = 0, it;
    double frac_best = 2.0, tol;
    double *g_lo = w->g_old, *g_hi = w->g_new;
    *status = LD_BDF_SUCCESS;
    for (k = 0; k < w->nev; k++)
        if (crossing(w, k, g_lo[k], g_hi[k])) {
            double frac = g_lo[k] / (g_lo[k] - g_hi[k]);   /* linear estimate in (0, 1) */
            if (frac < frac_best) { frac_best = frac; lead = k; }
        }
    if (lead < 0) return 0;
    memcpy(w->g_end, g_hi, (size_t)w->nev * sizeof(double));
    tol = w->opt.event_tol > 0 ? w->opt.event_tol : 1e-12 * fmax(1.0, fabs(w->t));
    /* g_lo and g_hi live in g_old and g_new; g_mid is the trial. Keep copies of the ends. */
    for (it = 0; t_hi - t_lo > tol && it < 200; it++) {
        double a = g_lo[lead], b = g_hi[lead], tm;
        /* Illinois: the end that stayed in the last iteration counts half, which keeps
         * regula falsi from creeping up on the root from one side. */
        if (side == 1) a *= 0.5;
        if (side == -1) b *= 0.5;
        tm = t_hi - (t_hi - t_lo) * b / (b - a);
        /* Keep the trial well inside the bracket (bisect if regula falsi crawls). */
        if (!(tm > t_lo + 0.1 * tol && tm < t_hi - 0.1 * tol) || it % 4 == 3)
            tm = 0.5 * (t_lo + t_hi);
        if ((*status = events_consistent(w, tm, NULL, w->g_mid)) != LD_BDF_SUCCESS)
            return 0;
        /* A crossing in (t_lo, tm] (the trial value zero or past the sign of t_lo) of an
         * event that crosses over the step: of all, the earliest wins. */
        {
            int found = -1;
            double best = 2.0;
            for (k = 0; k < w->nev; k++)
                if (crossing(w, k, g_lo[k], w->g_end[k]) && w->g_mid[k] * g_lo[k] <= 0.0) {
                    double frac = g_lo[k] / (g_lo[k] - w->g_mid[k]);
                    if (frac < best) { best = frac; found = k; }
                }
            if (found >= 0) {
                memcpy(g_hi, w->g_mid, (size_t)w->nev * sizeof(double));
                t_hi = tm;
                lead = found;
                side = 1;
            } else {
                memcpy(g_lo, w->g_mid, (size_t)w->nev * sizeof(double));
                t_lo = tm;
                side = -1;
            }
        }
    }
    /* g_old moved along with t_lo: the functions that fired are those that cross over the
     * step and have changed sign (or reached zero) within the final bracket. */
    w->t_event = t_hi;
    for (k = 0; k < w->nev; k++)
        w->fired[k] = g_hi[k] * g_lo[k] <= 0.0 ? crossing(w, k, g_lo[k], w->g_end[k]) : 0;
    return 1;
}

/* The rest of an accepted step: its output rows (up to the event, if one was located in it),
 * the move to the event, or the order and step size of the next step. Kept apart so that a
 * run can return with a full output buffer in the middle of a step's rows (stop_when_full)
 * and resume here with the next buffer: the rows and the next step come out the same as
 * without the stop. */
static int finish_step(ld_bdf *w, int n_out, const double *t_out, double *y_out,
                       int *n_written)
{
    int st, n = w->n, order = w->tail_order;
    while (*n_written < n_out && t_out[*n_written] <= w->tail_t_stop) {
        double *row = y_out + (size_t)(*n_written) * n;
        double c0 = w->opt.clock ? w->opt.clock() : 0.0;
        st = dense_output(w, t_out[*n_written], row);
        if (st == LD_BDF_SUCCESS && w->opt.project_output)
            st = consistent_output(w, t_out[*n_written], row);
        if (st == LD_BDF_SUCCESS) st = track_output_phi(w, t_out[*n_written], row);
        if (w->opt.clock) w->stats.output_seconds += w->opt.clock() - c0;
        if (st != LD_BDF_SUCCESS) return fail(w, st, w->t, w->h);
        (*n_written)++;
        w->stats.output_rows++;
    }
    if (w->opt.stop_when_full && n_out > 0 && *n_written == n_out) return LD_BDF_OUTPUT_FULL;
    w->tail_pending = 0;
    if (w->tail_event) {
        /* Move the state to the event; the next call restarts there. */
        if ((st = dense_output(w, w->t_event, w->y_ev)) != LD_BDF_SUCCESS)
            return fail(w, st, w->t, w->h);
        /* The explicit method's interpolant is off the constraints by its error: the restart
         * starts from the consistent state there. */
        if (w->use_rk && (st = consistent_output(w, w->t_event, w->y_ev)) != LD_BDF_SUCCESS)
            return fail(w, st, w->t, w->h);
        memcpy(w->D, w->y_ev, (size_t)n * sizeof(double));
        w->t = w->t_event;
        w->restart_pending = 1;
        w->stats.events++;
        return LD_BDF_EVENT;
    }
    /* Order and step size for the next step (the explicit method chose its step). */
    if (!w->use_rk && w->n_equal >= order + 1) {
        double en[3], best = 0.0, factor;
        int delta = 0, j;
        en[0] = order > 1
                    ? w->err_const[order - 1] * error_norm(w, w->D + (size_t)order * n, order - 1)
                    : INFINITY;
        en[1] = w->tail_err;
        en[2] = order < w->opt.max_order
                    ? w->err_const[order + 1] *
                          error_norm(w, w->D + (size_t)(order + 2) * n, order + 1)
                    : INFINITY;
        for (j = 0; j < 3; j++) {
            double f = en[j] == 0.0 ? MAX_FACTOR
                                    : (isinf(en[j]) ? 0.0 : pow(en[j], -1.0 / (order + j)));
            if (f > best) { best = f; delta = j - 1; }
        }
        w->order = order + delta;
        factor = fmin(MAX_FACTOR, w->tail_safety * best);
        if (w->opt.h_max > 0) factor = fmin(factor, w->opt.h_max / w->h);
        change_D(w, w->order, factor);
        w->h *= factor;
        w->n_equal = 0;
        w->efail_h = 0.0;
    }
    return LD_BDF_SUCCESS;
}

/* One BDF step attempt from w->t (landing on t_end). On acceptance the history D holds the
 * new step and *accepted is 1; a rejected attempt has changed the step size (and the caller
 * tries again); other outcomes are failures (status, with the failure's time and step). */
static int bdf_step(ld_bdf *w, double t_end, int *accepted)
{
    int n = w->n, nq = w->nq, i, k, order, st;
    double t_new, c, err, h_min, safety;
    int converged, refreshed;
    *accepted = 0;
    h_min = w->opt.h_min > 0 ? w->opt.h_min : 1e-14 * fmax(1.0, fabs(w->t));
    if (w->opt.h_max > 0 && w->h > w->opt.h_max) {
        change_D(w, w->order, w->opt.h_max / w->h);
        w->h = w->opt.h_max;
        w->n_equal = 0;
    }
    /* Land exactly on t_end. */
    if (w->t + w->h >= t_end || t_end - (w->t + w->h) < h_min) {
        double hn = t_end - w->t;
        change_D(w, w->order, hn / w->h);
        w->h = hn;
        w->n_equal = 0;
        t_new = t_end;
    } else {
        t_new = w->t + w->h;
    }
    if (w->h < h_min && t_new != t_end) return fail(w, LD_BDF_STEP_TOO_SMALL, w->t, w->h);

    order = w->order;
    /* Predictor y_pred = sum D[0..k]; psi = sum_{j>=1} gamma_j D[j] / gamma_k (q, v). */
    memcpy(w->y_pred, w->D, (size_t)n * sizeof(double));
    memset(w->psi, 0, (size_t)(2 * nq) * sizeof(double));   /* q, v, z and S only: */
    if (n > w->zoff) memset(w->psi + w->zoff, 0, (size_t)(n - w->zoff) * sizeof(double));
    for (k = 1; k <= order; k++) {
        const double *Dk = w->D + (size_t)k * n;
        const double gk = w->gamma[k] / w->gamma[order];
        for (i = 0; i < n; i++) w->y_pred[i] += Dk[i];
        for (i = 0; i < 2 * nq; i++) w->psi[i] += gk * Dk[i];
        for (i = w->zoff; i < n; i++) w->psi[i] += gk * Dk[i];
    }
    w->vel_floor = 0.0;
    for (i = 0; i < 2 * nq; i++) {
        double a = fabs(w->y_pred[i]);
        w->scale[i] = w->atol + w->rtol * a;
        if (i < nq && a > w->vel_floor) w->vel_floor = a;
    }
    w->settled = w->vel_floor * SETTLED * DBL_EPSILON;
    w->vel_floor *= NOISE * DBL_EPSILON;
    c = w->h / w->gamma[order];
    memset(w->d, 0, (size_t)n * sizeof(double));
    memcpy(w->y + 2 * nq, w->y_pred + 2 * nq, (size_t)w->nc * sizeof(double));

    refreshed = 0;
    if (w->refresh_next) {
        /* The last step needed many iterations: a fresh matrix before this one. */
        st = refresh_at_predictor(w, t_new, c);
        if (st != LD_BDF_SUCCESS && st != LD_BDF_NONFINITE) return fail(w, st, t_new, w->h);
        refreshed = 1;
        w->refresh_next = 0;
    }
    converged = newton(w, t_new, c, refreshed, &st);
    if (!converged && st == LD_BDF_SUCCESS && !refreshed) {
        /* Slow convergence with a stale matrix: refresh it at the predictor and retry. */
        st = refresh_at_predictor(w, t_new, c);
        if (st != LD_BDF_SUCCESS && st != LD_BDF_NONFINITE) return fail(w, st, t_new, w->h);
        if (st == LD_BDF_SUCCESS) converged = newton(w, t_new, c, 1, &st);
    }
    if (!converged) {
        if (st == LD_BDF_CALLBACK || st == LD_BDF_LINEAR_SOLVER)
            return fail(w, st, t_new, w->h);
        w->stats.rejected_newton++;
        if (w->h * 0.25 < h_min)
            return fail(w, st == LD_BDF_NONFINITE ? LD_BDF_NONFINITE : LD_BDF_NEWTON_FAILED,
                        w->t, w->h);
        change_D(w, w->order, 0.25);
        w->h *= 0.25;
        w->n_equal = 0;
        return LD_BDF_SUCCESS;
    }

    /* Error test (of the sensitivities too, when they take part: solved first). */
    for (i = 0; i < 2 * nq; i++) {
        double a = fabs(w->y_pred[i]), b = fabs(w->y[i]);
        w->scale[i] = w->atol + w->rtol * (a > b ? a : b);
    }
    if (w->sens_errcon) {
        if ((st = ld__sens_step(w, t_new, c)) != LD_BDF_SUCCESS)
            return fail(w, st, t_new, w->h);
        ld__sens_test_terms(w, order);
    }
    err = w->err_const[order] * error_norm(w, w->d, order);
    safety = 0.9 * (2 * w->opt.newton_max_iter + 1) /
             (2 * w->opt.newton_max_iter + w->newton_iters);
    if (err > 1.0) {
        /* An estimate that has not fallen while the step fell a hundredfold is the
         * corrector's noise (see the top, "Noise in the error estimate"). */
        double dn = 0.0;
        for (i = 0; i < nq; i++) dn = fmax(dn, fabs(w->d[i]));
        if (w->efail_h == 0.0) {
            w->efail_h = w->h;
            w->efail_d = dn;
        } else if (w->h <= NOISE_STEP_FALL * w->efail_h && dn >= 0.5 * w->efail_d) {
            if (dn > w->noise) w->noise = dn;
            w->stats.noise_limited++;
            w->efail_h = 0.0;
            err = w->err_const[order] * error_norm(w, w->d, order);
        }
    }
    if (err > 1.0) {
        double factor = fmax(MIN_FACTOR, safety * pow(err, -1.0 / (order + 1)));
        w->stats.rejected_error++;
        if (w->h * factor < h_min) return fail(w, LD_BDF_STEP_TOO_SMALL, w->t, w->h);
        change_D(w, order, factor);
        w->h *= factor;
        w->n_equal = 0;
        return LD_BDF_SUCCESS;
    }

    /* Accept. Quadratures: the BDF corrector of z' = rate(q, v, t) at the new state is
     * explicit, z = z_pred + c rate - psi_z. */
    if (w->nz) {
        double *z = w->y + w->zoff;
        if (w->sys->aux_rate(w->sys->user, t_new, w->y, w->y + nq,
                             w->nc > 0 ? w->y + 2 * nq : NULL, z) != LD_OK)
            return fail(w, LD_BDF_CALLBACK, t_new, w->h);
        for (i = w->zoff; i < w->soff; i++) w->y[i] = w->y_pred[i] + c * w->y[i] - w->psi[i];
    }
    /* Sensitivities: the corrector's linearisation at the accepted state (ld_sens.c). */
    if (w->np && !w->sens_errcon && (st = ld__sens_step(w, t_new, c)) != LD_BDF_SUCCESS)
        return fail(w, st, t_new, w->h);
    /* Update the differences with d = y_new - y_pred. */
    if (w->newton_iters >= REFRESH_ITERS) w->refresh_next = 1;
    w->stats.steps++;
    w->noise *= NOISE_DECAY;
    w->stats.order_steps[order]++;
    w->t = t_new;
    for (i = 2 * nq; i < n; i++) w->d[i] = w->y[i] - w->y_pred[i];
    for (i = 0; i < n; i++) {
        w->D[(size_t)(order + 2) * n + i] = w->d[i] - w->D[(size_t)(order + 1) * n + i];
        w->D[(size_t)(order + 1) * n + i] = w->d[i];
    }
    for (k = order; k >= 0; k--)
        for (i = 0; i < n; i++) w->D[(size_t)k * n + i] += w->D[(size_t)(k + 1) * n + i];
    w->n_equal++;
    if (w->sys->accept && w->sys->accept(w->sys->user, w->t, w->D, w->D + nq) != LD_OK)
        return fail(w, LD_BDF_CALLBACK, w->t, w->h);
    if (w->np && ld__sens_accept(w, w->t, w->D, w->D + nq) != LD_BDF_SUCCESS)
        return fail(w, LD_BDF_CALLBACK, w->t, w->h);
    *accepted = 1;
    w->tail_order = order;
    w->tail_err = err;
    w->tail_safety = safety;
    return LD_BDF_SUCCESS;
}

int ld_bdf_integrate(ld_bdf *w, double t_end, int n_out, const double *t_out, double *y_out,
                     int *n_written)
{
    int n = w->n, st;
    if (!w->initialised || !(t_end >= w->t) || n_out < 0 || *n_written < 0 || *n_written > n_out)
        return LD_BDF_BAD_INPUT;
    /* A step whose rows filled the last buffer (stop_when_full): its remaining rows first. */
    if (w->tail_pending &&
        (st = finish_step(w, n_out, t_out, y_out, n_written)) != LD_BDF_SUCCESS)
        return st;
    if (w->restart_pending && (st = ld_bdf_restart(w)) != LD_BDF_SUCCESS)
        return fail(w, st, w->t, w->h);
    /* Outputs at the current time. */
    while (*n_written < n_out && t_out[*n_written] <= w->t) {
        memcpy(y_out + (size_t)(*n_written) * n, w->D, (size_t)n * sizeof(double));
        if ((st = track_output_phi(w, w->t, w->D)) != LD_BDF_SUCCESS)
            return fail(w, st, w->t, w->h);
        (*n_written)++;
        w->stats.output_rows++;
    }
    while (w->t < t_end) {
        double t_prev = w->t;
        int accepted;
        if (w->opt.interrupt && *w->opt.interrupt) return LD_BDF_INTERRUPTED;
        /* The budget is the run's, not the call's: a run restarted at every event (a
           chattering contact) still ends. */
        if (w->opt.max_steps > 0 && w->stats.steps >= w->opt.max_steps)
            return fail(w, LD_BDF_TOO_MUCH_WORK, w->t, w->h);
        if (w->switch_pending) {
            w->trial_steps = 0;     /* stiffness decides: no trial to judge */
            if ((st = switch_method(w, 0, 1.0)) != LD_BDF_SUCCESS)
                return fail(w, st, w->t, w->h);
        } else if (w->opt.method == LD_METHOD_AUTO && w->opt.cost_trials && !w->np &&
                   (st = cost_trial(w)) != LD_BDF_SUCCESS) {
            return fail(w, st, w->t, w->h);
        }
        if (w->use_rk) {
            st = ld__rk_step(w, t_end, &accepted);
            if (st != LD_BDF_SUCCESS) {
                /* The explicit method cannot go on (a singular configuration, a step too
                 * small): with method auto the BDF takes over from the last state. */
                if (w->opt.method == LD_METHOD_AUTO && st != LD_BDF_CALLBACK &&
                    st != LD_BDF_NO_MEMORY) {
                    w->switch_pending = 1;
                    continue;
                }
                return fail(w, st, w->t, w->h);
            }
            w->stretch_tries++;
            if (accepted) {
                w->stats.steps++;
                if (w->sys->accept &&
                    w->sys->accept(w->sys->user, w->t, w->D, w->D + w->nq) != LD_OK)
                    return fail(w, LD_BDF_CALLBACK, w->t, w->h);
            }
        } else if ((st = bdf_step(w, t_end, &accepted)) != LD_BDF_SUCCESS) {
            return st;
        }
        if (!accepted) continue;
        note_step(w);

        w->tail_pending = 1;
        w->tail_event = 0;
        w->tail_t_stop = w->t;
        if (w->nev) {
            double t_lo = t_prev, t_hi = w->t;
            if (events_at(w, w->t, w->D, w->g_new) != LD_BDF_SUCCESS ||
                (any_crossing(w, w->g_old, w->g_new) &&
                 events_consistent(w, w->t, w->D, w->g_new) != LD_BDF_SUCCESS))
                return fail(w, LD_BDF_CALLBACK, w->t, w->h);
            if (w->use_rk && !any_crossing(w, w->g_old, w->g_new)) {
                interior_crossing(w, &t_lo, &t_hi, &st);
                if (st != LD_BDF_SUCCESS) return fail(w, st, w->t, w->h);
            }
            w->tail_event = locate_event(w, t_lo, t_hi, &st);
            if (st != LD_BDF_SUCCESS) return fail(w, st, w->t, w->h);
            if (w->tail_event) w->tail_t_stop = w->t_event;
            else memcpy(w->g_old, w->g_new, (size_t)w->nev * sizeof(double));
        }
        if ((st = finish_step(w, n_out, t_out, y_out, n_written)) != LD_BDF_SUCCESS) return st;
    }
    return LD_BDF_SUCCESS;
}
