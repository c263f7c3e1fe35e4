/*
 * ld_bdf.c -- the BDF method: variable-step, variable-order BDF for the index-3 multibody
 * DAE (private; the run driver, ld_run.c, calls it through ld_bdf_method.h).
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
 *
 * Dense output evaluates the BDF interpolating polynomial of the step just taken (the
 * driver makes output rows consistent: ld_run.c).
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
 */
#include "ld_bdf_method.h"

#include "ld_linear.h"
#include "ld_sens.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_FACTOR 0.2
#define MAX_FACTOR 10.0
#define PROPORTIONAL_EXP 0.25    /* local tolerance = rtol (rtol / PROPORTIONAL_REF)^EXP */
#define PROPORTIONAL_REF 2e-6   /* tolerance below which the local tolerance is tightened */
#define REFRESH_ITERS 3         /* a step that took this many Newton iterations refreshes G */
#define SETTLED 4.0             /* Newton corrections below SETTLED eps max|q| are round-off */
#define ROUNDOFF 32.0           /* ... and, after the first iteration, below this */
#define NOISE_DECAY 0.95       /* per accepted step, of the observed Newton noise */
#define NOISE_STEP_FALL 1e-2   /* step fall over which an unchanged error estimate is noise */
#define NOISE 256.0             /* Newton residue (in eps max|q|) the error estimates must
                                   tolerate */
#define NOISE_LIMIT 1048576.0   /* largest correction (in eps max|q|) of a noise-limited solve */
#define CONDEST_FRACTION 1e-4   /* ... and at most this fraction of KLU's condition estimate */

/* The local tolerances at share times the BDF's own (method auto: "Cost trials"), not below
 * the round-off floor. A requested Newton tolerance is not allowed below the round-off
 * floor 10 eps / rtol_loc (a Newton iteration cannot reach it; every step would fail). */
void ld__bdf_share_tolerances(ld_bdf *w, double share)
{
    w->rtol = fmax(w->rtol_own * share, LD_LOCAL_FLOOR * DBL_EPSILON * fmax(1.0, w->qmax0));
    if (w->rtol > w->rtol_own) w->rtol = w->rtol_own;
    w->atol = w->atol_own * (w->rtol / w->rtol_own);
    w->newton_tol = fmax(w->opt.newton_tol > 0 ? w->opt.newton_tol : 1e-3,
                         10.0 * DBL_EPSILON / w->rtol);
}

/* Local tolerances (the proportionality transform, floored at LD_LOCAL_FLOOR eps max(1, qmax)
 * with qmax the largest |q| at the start) and the Newton tolerance that goes with them. */
void ld__bdf_set_tolerances(ld_bdf *w, double qmax)
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
    ld__bdf_share_tolerances(w, 1.0);
}

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
    if ((st = ld__eval_phi_q(w, t, q)) != LD_OK) return st;
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
    ld__phiq_transpose_times(w, lam, w->res);
    for (i = 0; i < nq; i++)
        w->res[i] = c * s->mass[i] * (w->psi[nq + i] + w->d[nq + i]) +
                    c * c * (w->res[i] - w->force[i]);
    return ld__all_finite(w->res, w->ng) ? LD_OK : LD_ERR_NONFINITE;
}

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
    double dy_norm, dy_norm_old = -1.0, rate, max_corr, condest;
    *status = LD_BDF_SUCCESS;
    for (k = 0; k < maxit; k++) {
        int st = residual(w, t_new, c);
        if (st != LD_OK) {
            *status = st == LD_ERR_NONFINITE ? LD_BDF_NONFINITE : LD_BDF_CALLBACK;
            return 0;
        }
        for (i = 0; i < w->ng; i++) w->res[i] = -w->res[i];
        if (ld__solve_G(w, w->res) != LD_BDF_SUCCESS) { *status = LD_BDF_LINEAR_SOLVER; return 0; }
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
            if (!ld__all_finite(w->y + 2 * nq, w->nc)) { *status = LD_BDF_NONFINITE; return 0; }
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
        ld__condest_G(w, &condest) &&
        max_corr <= w->vel_floor / NOISE * CONDEST_FRACTION * condest) {
        if (k < maxit) apply_correction(w, c);
        if (!ld__all_finite(w->y + 2 * nq, w->nc)) { *status = LD_BDF_NONFINITE; return 0; }
        finish_corrector(w, c);
        if (max_corr > w->noise) w->noise = max_corr;
        w->stats.noise_limited++;
        return 1;
    }
    return 0;
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
    if (ld__eval_phi_q(w, t_new, w->y) != LD_OK) return LD_BDF_CALLBACK;
    st = ld__refresh_G(w, t_new, c);
    /* The Newton iteration starts from the predictor again. */
    memset(w->d, 0, (size_t)w->n * sizeof(double));
    return st;
}

/* The step's end: the step cut to h_max and stretched or cut to land exactly on t_end
 * (D rescaled to match). */
static double step_end(ld_bdf *w, double t_end, double h_min)
{
    if (w->opt.h_max > 0 && w->h > w->opt.h_max) {
        change_D(w, w->order, w->opt.h_max / w->h);
        w->h = w->opt.h_max;
        w->n_equal = 0;
    }
    if (w->t + w->h >= t_end || t_end - (w->t + w->h) < h_min) {
        double hn = t_end - w->t;
        change_D(w, w->order, hn / w->h);
        w->h = hn;
        w->n_equal = 0;
        return t_end;
    }
    return w->t + w->h;
}

/* Predictor y_pred = sum D[0..k]; psi = sum_{j>=1} gamma_j D[j] / gamma_k (q, v, z and S);
 * the error test's scales at the predictor, the Newton floors, and the corrector's start. */
static void predict(ld_bdf *w, int order)
{
    int n = w->n, nq = w->nq, i, k;
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
    memset(w->d, 0, (size_t)n * sizeof(double));
    memcpy(w->y + 2 * nq, w->y_pred + 2 * nq, (size_t)w->nc * sizeof(double));
}

/* The corrector at t_new: Newton with the current iteration matrix (refreshed first when
 * the last step asked for it), and once more with a matrix refreshed at the predictor when
 * a stale one converged too slowly. *converged says whether it did, *newton_status why not
 * (LD_BDF_NONFINITE or LD_BDF_SUCCESS: the step may be retried smaller); the return value
 * is a failure no smaller step can mend (with its time recorded), else LD_BDF_SUCCESS. */
static int correct(ld_bdf *w, double t_new, double c, int *converged, int *newton_status)
{
    int st, refreshed = 0;
    *converged = 0;
    *newton_status = LD_BDF_SUCCESS;
    if (w->refresh_next) {
        /* The last step needed many iterations: a fresh matrix before this one. */
        st = refresh_at_predictor(w, t_new, c);
        if (st != LD_BDF_SUCCESS && st != LD_BDF_NONFINITE) return ld__fail(w, st, t_new, w->h);
        refreshed = 1;
        w->refresh_next = 0;
    }
    *converged = newton(w, t_new, c, refreshed, &st);
    if (!*converged && st == LD_BDF_SUCCESS && !refreshed) {
        /* Slow convergence with a stale matrix: refresh it at the predictor and retry. */
        st = refresh_at_predictor(w, t_new, c);
        if (st != LD_BDF_SUCCESS && st != LD_BDF_NONFINITE) return ld__fail(w, st, t_new, w->h);
        if (st == LD_BDF_SUCCESS) *converged = newton(w, t_new, c, 1, &st);
    }
    *newton_status = st;
    if (!*converged && (st == LD_BDF_CALLBACK || st == LD_BDF_LINEAR_SOLVER))
        return ld__fail(w, st, t_new, w->h);
    return LD_BDF_SUCCESS;
}

/* The error estimate of a converged corrector (of the sensitivities too, when they take
 * part: solved first), with noise recognised (see the top, "Noise in the error
 * estimate"); into *err. */
static int estimate_error(ld_bdf *w, double t_new, double c, int order, double *err)
{
    int i, nq = w->nq, st;
    for (i = 0; i < 2 * nq; i++) {
        double a = fabs(w->y_pred[i]), b = fabs(w->y[i]);
        w->scale[i] = w->atol + w->rtol * (a > b ? a : b);
    }
    if (w->sens_errcon) {
        if ((st = ld__sens_step(w, t_new, c)) != LD_BDF_SUCCESS)
            return ld__fail(w, st, t_new, w->h);
        ld__sens_test_terms(w, order);
    }
    *err = w->err_const[order] * error_norm(w, w->d, order);
    if (*err > 1.0) {
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
            *err = w->err_const[order] * error_norm(w, w->d, order);
        }
    }
    return LD_BDF_SUCCESS;
}

/* Accept the step to t_new: the quadratures, the sensitivities, the differences D updated
 * with d = y_new - y_pred, and the accepted state handed to the model. */
static int accept_step(ld_bdf *w, double t_new, double c, int order)
{
    int n = w->n, nq = w->nq, i, k, st;
    /* Quadratures: the BDF corrector of z' = rate(q, v, t) at the new state is explicit,
     * z = z_pred + c rate - psi_z. */
    if (w->nz) {
        double *z = w->y + w->zoff;
        if (w->sys->aux_rate(w->sys->user, t_new, w->y, w->y + nq,
                             w->nc > 0 ? w->y + 2 * nq : NULL, z) != LD_OK)
            return ld__fail(w, LD_BDF_CALLBACK, t_new, w->h);
        for (i = w->zoff; i < w->soff; i++) w->y[i] = w->y_pred[i] + c * w->y[i] - w->psi[i];
    }
    /* Sensitivities: the corrector's linearisation at the accepted state (ld_sens.c). */
    if (w->np && !w->sens_errcon && (st = ld__sens_step(w, t_new, c)) != LD_BDF_SUCCESS)
        return ld__fail(w, st, t_new, w->h);
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
        return ld__fail(w, LD_BDF_CALLBACK, w->t, w->h);
    if (w->np && ld__sens_accept(w, w->t, w->D, w->D + nq) != LD_BDF_SUCCESS)
        return ld__fail(w, LD_BDF_CALLBACK, w->t, w->h);
    return LD_BDF_SUCCESS;
}

int ld__bdf_step(ld_bdf *w, double t_end, int *accepted)
{
    int order, st, converged, newton_status;
    double t_new, c, err, h_min, safety;
    *accepted = 0;
    h_min = w->opt.h_min > 0 ? w->opt.h_min : 1e-14 * fmax(1.0, fabs(w->t));
    t_new = step_end(w, t_end, h_min);
    if (w->h < h_min && t_new != t_end) return ld__fail(w, LD_BDF_STEP_TOO_SMALL, w->t, w->h);

    order = w->order;
    predict(w, order);
    c = w->h / w->gamma[order];
    if ((st = correct(w, t_new, c, &converged, &newton_status)) != LD_BDF_SUCCESS) return st;
    if (!converged) {
        w->stats.rejected_newton++;
        if (w->h * 0.25 < h_min)
            return ld__fail(w, newton_status == LD_BDF_NONFINITE ? LD_BDF_NONFINITE
                                                                 : LD_BDF_NEWTON_FAILED,
                            w->t, w->h);
        change_D(w, w->order, 0.25);
        w->h *= 0.25;
        w->n_equal = 0;
        return LD_BDF_SUCCESS;
    }

    if ((st = estimate_error(w, t_new, c, order, &err)) != LD_BDF_SUCCESS) return st;
    safety = 0.9 * (2 * w->opt.newton_max_iter + 1) /
             (2 * w->opt.newton_max_iter + w->newton_iters);
    if (err > 1.0) {
        double factor = fmax(MIN_FACTOR, safety * pow(err, -1.0 / (order + 1)));
        w->stats.rejected_error++;
        if (w->h * factor < h_min) return ld__fail(w, LD_BDF_STEP_TOO_SMALL, w->t, w->h);
        change_D(w, order, factor);
        w->h *= factor;
        w->n_equal = 0;
        return LD_BDF_SUCCESS;
    }
    if ((st = accept_step(w, t_new, c, order)) != LD_BDF_SUCCESS) return st;
    *accepted = 1;
    w->tail_order = order;
    w->tail_err = err;
    w->tail_safety = safety;
    return LD_BDF_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* The method's parts the driver calls (ld_bdf_method.h) */

void ld__bdf_setup(ld_bdf *w)
{
    int i;
    w->gamma[0] = 0.0;
    for (i = 1; i <= LD_BDF_MAX_ORDER + 1; i++) w->gamma[i] = w->gamma[i - 1] + 1.0 / i;
    for (i = 0; i <= LD_BDF_MAX_ORDER + 1; i++) w->err_const[i] = 1.0 / (i + 1);
    ld__bdf_set_tolerances(w, 1.0);
}

int ld__bdf_start(ld_bdf *w, double t0, const double *q0, const double *v0)
{
    const ld_system *s = w->sys;
    int i, nq = w->nq, nc = w->nc, st;
    double *rhs = w->res, *a, nrm;
    /* Consistent accelerations and multipliers: [M Phi_q^T; Phi_q 0] [a; lam] = [Q; gamma]. */
    if (s->force(s->user, t0, q0, v0, rhs) != LD_OK ||
        s->gamma(s->user, t0, q0, v0, rhs + nq) != LD_OK)
        return LD_BDF_CALLBACK;
    ld__zero_inactive(w, rhs + nq);
    ld__assemble_K(w, w->out_reg);
    if (!ld__all_finite(w->Gx, w->g_nnz) || !ld__all_finite(rhs, w->ng)) return LD_BDF_NONFINITE;
    w->stats.jacobian_evaluations++;
    if ((st = ld__factor_G(w)) != LD_BDF_SUCCESS) return st;
    if ((st = ld__solve_G(w, rhs)) != LD_BDF_SUCCESS) return st;
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
    return LD_BDF_SUCCESS;
}

void ld__bdf_dense(const ld_bdf *w, double t_eval, double *out)
{
    int j, i, n = w->n;
    double p = 1.0;
    memcpy(out, w->D, (size_t)n * sizeof(double));
    for (j = 0; j < w->order; j++) {
        const double *Dj = w->D + (size_t)(j + 1) * n;
        p *= (t_eval - (w->t - w->h * j)) / (w->h * (1 + j));
        for (i = 0; i < n; i++) out[i] += Dj[i] * p;
    }
}

void ld__bdf_choose_order(ld_bdf *w, int order)
{
    int n = w->n, delta = 0, j;
    double en[3], best = 0.0, factor;
    if (w->n_equal < order + 1) return;
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
