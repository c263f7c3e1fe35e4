/*
 * ld_rk.c -- the integrator's explicit method for non-stiff mechanisms: Runge-Kutta 8(5,3)
 * of Dormand and Prince on the index-1 form, with projection onto the constraints.
 *
 * Method
 * ------
 * The state is y = (q, v, z) and its derivative (v, a, z'): the accelerations a and the
 * multipliers lam solve the index-1 equations
 *
 *     M a + Phi_q^T lam = Q,     Phi_q a = gamma,
 *
 * by the Schur complement: S lam = Phi_q M^-1 Q - gamma with S = Phi_q M^-1 Phi_q^T, then
 * a = M^-1 (Q - Phi_q^T lam). With M diagonal, S has a fixed sparsity pattern (rows that
 * share a coordinate), known when the integrator is created: its entries are accumulated
 * through a precomputed list of products, AMD orders it once, and SuiteSparse's LDL
 * analyses it once and factorises it at every right-hand side (up-looking, no pivoting: S is
 * symmetric positive definite while Phi_q has full row rank; ld_schur.c). On the Jansen
 * linkage (43
 * rows) a right-hand side costs about a microsecond, where a KLU refactorisation of the
 * KKT matrix alone costs several. Switched-off rows (ld_system.row_active) become lam_i = 0
 * (unit rows of S); regularisation (redundant constraints) adds r diag(S at the start), the
 * Schur complement of the BDF's regularised K.
 *
 * The pair: the 12-stage method of order 8 with error estimators of orders 5 and 3 and a
 * dense output of order 7 from 3 more stages, as published by Hairer, Norsett and Wanner
 * ("Solving Ordinary Differential Equations I", 2nd ed., section II.10, the code DOP853);
 * the coefficients below are that method's. The last stage is evaluated at the new state,
 * so it is the next step's first (12 right-hand sides a step); the 3 dense-output stages are
 * evaluated only for steps that write output rows or locate an event.
 *
 * Error control. Positions and velocities are each tested against atol + rtol |y| in the
 * weighted max-norm (as the BDF does), velocities in their own right: an index-1 method has
 * no order reduction in v, so a contact's onset keeps its velocity error proportional to the
 * tolerance. The two estimators are combined as the DOP853 code does (the order-5 estimate,
 * damped where the order-3 estimate is much larger). The step size is chosen by a PI
 * controller that aims at a hundredth of the test's limit (ld_control.c); it grows by at
 * most 6 and shrinks by at most 1/3 per step, never right after a rejection. The local
 * tolerances are a third of the requested ones. That costs 3^(1/8), some 15%, more steps at a given
 * tolerance but nothing at a given accuracy (benchmarks/test_bench_methods.py), and it keeps
 * the global error of IFToMM A02, which grows by some 900 m per relative error of its
 * energy, within 584 rtol instead of 1,789 (N = 2 and 40, rtol 1e-4 to 1e-12;
 * tests/test_accuracy.py).
 *
 * Projection. The index-1 form lets Phi and Phi_q v + Phi_t drift by the local errors. After
 * every accepted step the positions are projected onto Phi = 0 (one mass-weighted Newton
 * step with the factorisation of the last stage, which sits at the new time) and the
 * velocities onto the velocity constraints at the projected positions (exact: they are
 * linear in v); the derivative at the projected state is the next step's first stage.
 * Projection keeps the order of the method (Hairer, Lubich and Wanner, "Geometric Numerical
 * Integration", section IV.4) and, unlike Baumgarte stabilisation, needs no parameters.
 *
 * Stiffness. After each accepted step, h times the ratio |f(y1) - f(y_s)| / |y1 - y_s| of
 * the last stage y_s and the new state y1 (both at the new time) estimates h |lambda| of the
 * problem's largest eigenvalue along the step, as in DOP853: the method is unstable beyond
 * about 6. Fifteen such steps with no six quiet ones between them ask the driver (method
 * auto) to continue with the BDF; the driver comes back to this method at the next restart.
 *
 * Conditioning. S's relative pivots D_k / S_kk bound its condition number from below, and
 * the accelerations lose eps / min_k (D_k / S_kk) of relative precision to it. Where that
 * exceeds the tolerance (a body of tiny inertia held by heavy ones: IFToMM A01's lumped mass
 * of 1e-12 kg m^2 makes it 1e-4), the step control would chase rounding errors with steps
 * that shrink like the tolerance: method auto starts the BDF instead, whose index-3
 * iteration matrix is well conditioned there, and during a run such steps count as stiff.
 * Near a singular configuration (pivot ratio below 1e-3) the index-1 multipliers grow like
 * the inverse distance, and a stage whose velocities are off their constraints by the local
 * error gets accelerations off by that over the distance: at tight tolerances the step
 * shrank towards the singular point and stalled (IFToMM A02 at rtol 1e-11). There the
 * stages' accelerations are taken at their velocities projected onto the velocity
 * constraints (one more solve with the stage's factorisation); A02 then crosses its singular
 * configurations at every tolerance. The choice is made per step, never per stage: a step
 * projects in all its stages when it starts below that pivot ratio, or when one of its
 * stages comes below it (the step then starts over, projecting), and stops projecting at the
 * first step that starts above 1e-2. Those two limits are for a model whose S is well
 * conditioned away from singular configurations; a long chain (the ratio falls like the
 * inverse of its length: 2.5e-4 for a planar chain of a thousand bars) or a model of very
 * unequal masses (IFToMM A05's governor, 6.5e-7) is regular below them. The limits are
 * therefore taken relative to the largest pivot ratio met so far at the run's starts and
 * accepted states, p_ref, as 1e-3 and 1e-2 times min(1, p_ref / 5e-2): unchanged for
 * p_ref >= 5e-2 (A02 starts at 0.096), below it a fall by 50 from p_ref to project and a
 * return to within 5 of it to stop (with the limits at p_ref / 10 and p_ref, a chain
 * whose ratio only grows kept projecting until it passed its best). Projecting on the
 * regular chain bought nothing: the same steps and errors, at a third more time (1.8
 * against 1.3 us per bar and step for a thousand bars). Both right-hand sides agree on
 * consistent states, but
 * not off them, where the stages are: a step whose stages switched between them integrated
 * a right-hand side with a jump, which the error estimate does not see. That cost A02's
 * crossings a relative energy error of up to 4 rtol each, and A02 magnifies it by some
 * 900 m: its global error was up to 5,100 rtol, and 117 to 544 rtol since (N = 40, rtol
 * 1e-4 to 1e-12, tests/test_accuracy.py). Projecting in every stage of every step would do
 * as well, at a quarter to a third more time on the Jansen linkage, which never comes near a
 * singular configuration. The velocity error test also tolerates h times the accelerations'
 * round-off (acceleration_noise), so that rounding errors do not cut steps.
 */
#include "ld_rk.h"

#include "ld_control.h"
#include "ld_linear.h"
#include "ld_schur.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_STAGES 12
#define N_EXTENDED 16
#define STIFF_LIMIT 6.1         /* h |lambda| beyond the method's stability */
#define STIFF_STEPS 15          /* steps beyond it that call the problem stiff */
#define QUIET_STEPS 6           /* steps within it that reset the count */
#define TRIAL_LIMIT 0.67        /* h |lambda| that makes the BDF worth a trial soon */
#define NEAR_SINGULAR 1e-3      /* below this pivot ratio of S, stage velocities projected */
#define CLEAR_SINGULAR 1e-2     /* above it at a step's start, they are no longer */
#define REFERENCE_PIVOT 5e-2    /* below this best pivot ratio, both limits scale with it */
#define LOCAL_SHARE (1.0 / 3.0) /* the local tolerances' share of the requested ones */
#define ACC_NOISE 64.0          /* round-off of an acceleration, in eps (|Q| + |Phi_q^T||lam|) / m */
static const double RK_C[16] = {0.0, 0.05260015195876773, 0.0789002279381516, 0.1183503419072274, 0.2816496580927726, 0.3333333333333333, 0.25, 0.3076923076923077, 0.6512820512820513, 0.6, 0.8571428571428571, 1.0, 1.0, 0.1, 0.2, 0.7777777777777778};
/* RK_A[s][j]: stage s from stages j < s (rows 12: the solution, 13..15: dense output) */
static const double RK_A[16][16] = {
    {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.05260015195876773, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.0197250569845379, 0.0591751709536137, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.02958758547680685, 0.0, 0.08876275643042054, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.2413651341592667, 0.0, -0.8845494793282861, 0.924834003261792, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.037037037037037035, 0.0, 0.0, 0.17082860872947386, 0.12546768756682242, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.037109375, 0.0, 0.0, 0.17025221101954405, 0.06021653898045596, -0.017578125, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.03709200011850479, 0.0, 0.0, 0.17038392571223998, 0.10726203044637328, -0.015319437748624402, 0.008273789163814023, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.6241109587160757, 0.0, 0.0, -3.3608926294469414, -0.868219346841726, 27.59209969944671, 20.154067550477894, -43.48988418106996, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.47766253643826434, 0.0, 0.0, -2.4881146199716677, -0.590290826836843, 21.230051448181193, 15.279233632882423, -33.28821096898486, -0.020331201708508627, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {-0.9371424300859873, 0.0, 0.0, 5.186372428844064, 1.0914373489967295, -8.149787010746927, -18.52006565999696, 22.739487099350505, 2.4936055526796523, -3.0467644718982196, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
    {2.273310147516538, 0.0, 0.0, -10.53449546673725, -2.0008720582248625, -17.9589318631188, 27.94888452941996, -2.8589982771350235, -8.87285693353063, 12.360567175794303, 0.6433927460157636, 0.0, 0.0, 0.0, 0.0, 0.0},
    {0.054293734116568765, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, 0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259, 0.0, 0.0, 0.0, 0.0},
    {0.056167502283047954, 0.0, 0.0, 0.0, 0.0, 0.0, 0.25350021021662483, -0.2462390374708025, -0.12419142326381637, 0.15329179827876568, 0.00820105229563469, 0.007567897660545699, -0.008298, 0.0, 0.0, 0.0},
    {0.03183464816350214, 0.0, 0.0, 0.0, 0.0, 0.028300909672366776, 0.053541988307438566, -0.05492374857139099, 0.0, 0.0, -0.00010834732869724932, 0.0003825710908356584, -0.00034046500868740456, 0.1413124436746325, 0.0, 0.0},
    {-0.42889630158379194, 0.0, 0.0, 0.0, 0.0, -4.697621415361164, 7.683421196062599, 4.06898981839711, 0.3567271874552811, 0.0, 0.0, 0.0, -0.0013990241651590145, 2.9475147891527724, -9.15095847217987, 0.0},
};
static const double RK_E3[12] = {-0.18980075407240762, 0.0, 0.0, 0.0, 0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585, -0.4226823213237919, -0.1521609496625161, 0.20136540080403034, 0.02265179219836082};
static const double RK_E5[12] = {0.01312004499419488, 0.0, 0.0, 0.0, 0.0, -1.2251564463762044, -0.4957589496572502, 1.6643771824549864, -0.35032884874997366, 0.3341791187130175, 0.08192320648511571, -0.022355307863886294};
static const double RK_D[4][16] = {
    {-8.428938276109013, 0.0, 0.0, 0.0, 0.0, 0.5667149535193777, -3.0689499459498917, 2.38466765651207, 2.117034582445028, -0.871391583777973, 2.2404374302607883, 0.6315787787694688, -0.08899033645133331, 18.148505520854727, -9.194632392478356, -4.436036387594894},
    {10.427508642579134, 0.0, 0.0, 0.0, 0.0, 242.28349177525817, 165.20045171727028, -374.5467547226902, -22.113666853125306, 7.733432668472264, -30.674084731089398, -9.332130526430229, 15.697238121770845, -31.139403219565178, -9.35292435884448, 35.81684148639408},
    {19.985053242002433, 0.0, 0.0, 0.0, 0.0, -387.0373087493518, -189.17813819516758, 527.8081592054236, -11.57390253995963, 6.8812326946963, -1.0006050966910838, 0.7777137798053443, -2.778205752353508, -60.19669523126412, 84.32040550667716, 11.99229113618279},
    {-25.69393346270375, 0.0, 0.0, 0.0, 0.0, -154.18974869023643, -231.5293791760455, 357.6391179106141, 93.40532418362432, -37.45832313645163, 104.0996495089623, 29.8402934266605, -43.53345659001114, 96.32455395918828, -39.17726167561544, -149.72683625798564},
};

struct ld_rk {
    int m;                      /* ODE size 2 nq + nz: y = (q, v, z) */
    double rtol, atol;          /* local tolerances */
    double *K;                  /* [N_EXTENDED][m] stage derivatives; K[12] = f at the new
                                   state, the next step's K[0] */
    double *y0, *y1, *ys;       /* [m] step start, new state, trial stage state */
    double *ylast;              /* [m] the last stage's state (at t + h), for stiffness */
    double *rcont;              /* [7][m] dense-output coefficients of the last step */
    double *lam0, *lam1;        /* [nc] multipliers at the start and the end of the step */
    double *lam_stage;          /* [nc] of the last right-hand side */
    double *F, *rhs;            /* [nq] forces, [max(nq, nc)] scratch */
    double *gam;                /* [nc] gamma */
    double t0, hs;              /* the last step: start and length */
    int dense_ready;            /* rcont holds the last step's interpolant */
    int advance_pending;        /* K[12], y1 become K[0], y0 before the next step */
    int stiff_count, quiet_count;
    int near_count, calm_count; /* steps beyond TRIAL_LIMIT, and within it since */
    ld_control ctl;             /* the step-size controller (ld_control.c) */
    double *anoise;             /* [nq] round-off of the accelerations at the step start */
    double *vstage;             /* [nq] a stage's projected velocities */
    int project_stages;         /* this step's stages take their velocities projected
                                   (see the top, "Conditioning"); set at its start */
    int near_hit;               /* a stage met S nearer singular than near_limit */
    double pivot_ref;           /* the largest pivot ratio of S at the run's starts and
                                   accepted states */
    double near_limit, clear_limit; /* NEAR_SINGULAR, CLEAR_SINGULAR scaled to pivot_ref */
    double start_pivot;         /* pivot ratio of S at the step's start (the last state) */

    double *minv;               /* [nq] */
    struct ld_schur schur;      /* S = Phi_q M^-1 Phi_q^T and its factorisation (ld_schur.c) */
};

/* ------------------------------------------------------------------------------------------ */
/* Products with Phi_q, and the Schur complement at a state (ld_schur.c) */

/* out[j] -= M^-1 (Phi_q^T x)[j] for j < nq. */
static void minus_minv_jt(const ld_bdf *w, const double *x, double *out)
{
    const ld_system *s = w->sys;
    const double *J = w->phiq;
    int j, p;
    if (w->rk->schur.gen.jt) {
        w->rk->schur.gen.jt(J, w->rk->minv, x, out);
        return;
    }
    for (j = 0; j < w->nq; j++) {
        double acc = 0.0;
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            acc += J[p] * x[s->phiq_rowind[p]];
        out[j] -= acc * w->rk->minv[j];
    }
}

/* out[i] += (Phi_q x)[i], x of length nq (scaled by M^-1 when minv is set). */
static void add_j_times(const ld_bdf *w, const double *x, const double *minv, double *out)
{
    const ld_system *s = w->sys;
    const double *J = w->phiq;
    int j, p;
    if (w->rk->schur.gen.j) {
        if (minv) w->rk->schur.gen.jm(J, minv, x, out);
        else w->rk->schur.gen.j(J, x, out);
        return;
    }
    for (j = 0; j < w->nq; j++) {
        double xj = minv ? x[j] * minv[j] : x[j];
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            out[s->phiq_rowind[p]] += J[p] * xj;
    }
}

/* Phi_q at (t, q) into w->phiq and the factorisation of S there. */
static int schur_at(ld_bdf *w, double t, const double *q)
{
    if (ld__eval_phi_q(w, t, q) != LD_OK) return LD_BDF_CALLBACK;
    if (!ld__all_finite(w->phiq, w->sys->phiq_nnz)) return LD_BDF_NONFINITE;
    return ld__schur_factor(w, &w->rk->schur);
}

/* One simplified Newton step (mass-weighted) of q towards Phi(q, t) = 0 with the current
 * factorisation of S; *worst gets max|Phi| before the step. */
static int position_step(ld_bdf *w, double t, double *q, double *worst)
{
    struct ld_rk *r = w->rk;
    double *x = r->rhs;
    int i;
    if (w->sys->phi(w->sys->user, t, q, x) != LD_OK) return LD_BDF_CALLBACK;
    ld__zero_inactive(w, x);
    *worst = 0.0;
    for (i = 0; i < w->nc; i++) *worst = fmax(*worst, fabs(x[i]));
    ld__schur_solve(&r->schur, x);
    minus_minv_jt(w, x, q);
    return LD_BDF_SUCCESS;
}

/* v projected onto Phi_q v + Phi_t = 0 (mass-weighted; exact, the constraint is linear in v)
 * with S factorised at q; *violation gets |Phi_q v + Phi_t| before the projection. */
static int velocity_projection(ld_bdf *w, double t, const double *q, double *v,
                               double *violation)
{
    struct ld_rk *r = w->rk;
    double *x = r->rhs, rn = 0.0;
    int i;
    if (w->sys->phi_t(w->sys->user, t, q, x) != LD_OK) return LD_BDF_CALLBACK;
    add_j_times(w, v, NULL, x);
    ld__zero_inactive(w, x);
    for (i = 0; i < w->nc; i++) rn += x[i] * x[i];
    *violation = sqrt(rn);
    ld__schur_solve(&r->schur, x);
    minus_minv_jt(w, x, v);
    return LD_BDF_SUCCESS;
}

/* The index-1 multipliers at (t, q, v) into lam, S factorised at q: S lam = Phi_q M^-1 Q -
 * gamma; the forces Q are left in r->F. */
static int multipliers(ld_bdf *w, double t, const double *q, const double *v, double *lam)
{
    const ld_system *s = w->sys;
    struct ld_rk *r = w->rk;
    int i;
    if (s->force(s->user, t, q, v, r->F) != LD_OK) return LD_BDF_CALLBACK;
    if (w->nc == 0) return LD_BDF_SUCCESS;
    if (s->gamma(s->user, t, q, v, r->gam) != LD_OK) return LD_BDF_CALLBACK;
    for (i = 0; i < w->nc; i++) lam[i] = -r->gam[i];
    add_j_times(w, r->F, r->minv, lam);
    ld__zero_inactive(w, lam);
    ld__schur_solve(&r->schur, lam);
    return LD_BDF_SUCCESS;
}

/* Accelerations (into f + nq), multipliers (r->lam_stage) and quadrature rates (f + 2 nq)
 * at (t, q, v), with S already factorised at q; f[0..nq) = v. */
static int accelerations(ld_bdf *w, double t, const double *q, const double *v, double *f)
{
    const ld_system *s = w->sys;
    struct ld_rk *r = w->rk;
    int i, st, nq = w->nq, nc = w->nc;
    double *a = f + nq, *lam = r->lam_stage;
    if ((st = multipliers(w, t, q, v, lam)) != LD_BDF_SUCCESS) return st;
    memcpy(f, v, (size_t)nq * sizeof(double));
    for (i = 0; i < nq; i++) a[i] = r->F[i] * r->minv[i];
    if (nc > 0) minus_minv_jt(w, lam, a);
    if (w->nz && s->aux_rate(s->user, t, q, v, nc > 0 ? lam : NULL, f + 2 * nq) != LD_OK)
        return LD_BDF_CALLBACK;
    w->stats.rhs_evaluations++;
    return ld__all_finite(f, r->m) ? LD_BDF_SUCCESS : LD_BDF_NONFINITE;
}

/* The round-off the accelerations of the last right-hand side carry: a = M^-1 (Q - Phi_q^T lam)
 * is computed to about eps (|Q| + |Phi_q^T| |lam| / p) / m per coordinate, where p =
 * min_k D_k / S_kk bounds the loss to S's conditioning (lam is accurate to about eps / p).
 * It is large where a body's inertia is tiny against its reactions (a lumped mass given
 * 1e-12 kg m^2) and near a singular configuration. The velocity error test tolerates h
 * times it (step_error); without that the step shrank in proportion to the tolerance on
 * such a model, chasing rounding errors, and stalled next to a singular configuration. */
static void acceleration_noise(ld_bdf *w)
{
    const ld_system *s = w->sys;
    struct ld_rk *r = w->rk;
    int j, p;
    double loss = w->nc > 0 ? 1.0 / r->schur.pivot_ratio : 1.0;
    for (j = 0; j < w->nq; j++) {
        double acc = 0.0;
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            acc += fabs(w->phiq[p] * r->lam_stage[s->phiq_rowind[p]]);
        r->anoise[j] = ACC_NOISE * DBL_EPSILON * (fabs(r->F[j]) + loss * acc) * r->minv[j];
    }
}

/* Whether the accelerations of the last right-hand side lose more than the tolerance to the
 * conditioning of S: eps / min_k (D_k / S_kk) > rtol (see the top, "Conditioning"). */
static int ill_conditioned(const ld_bdf *w)
{
    return w->nc > 0 && DBL_EPSILON > w->rk->rtol * w->rk->schur.pivot_ratio;
}

/* The right-hand side f(t, y) of the index-1 form. Near a singular configuration it is taken
 * at the stage's velocities projected onto its velocity constraints (see the top,
 * "Conditioning"). */
static int rhs(ld_bdf *w, double t, const double *y, double *f)
{
    struct ld_rk *r = w->rk;
    int st = schur_at(w, t, y);
    double violation;
    if (st != LD_BDF_SUCCESS) return st;
    if (w->nc > 0 && !r->project_stages && r->schur.pivot_ratio < r->near_limit) r->near_hit = 1;
    if (w->nc > 0 && r->project_stages) {
        memcpy(r->vstage, y + w->nq, (size_t)w->nq * sizeof(double));
        if ((st = velocity_projection(w, t, y, r->vstage, &violation)) != LD_BDF_SUCCESS)
            return st;
        return accelerations(w, t, y, r->vstage, f);
    }
    return accelerations(w, t, y, y + w->nq, f);
}

/* ------------------------------------------------------------------------------------------ */
/* Workspace */

int ld__rk_create(ld_bdf *w)
{
    struct ld_rk *r = (struct ld_rk *)calloc(1, sizeof(struct ld_rk));
    int nq = w->nq, nc = w->nc, m = 2 * w->nq + w->nz, big = nq > nc ? nq : nc, i;
    w->rk = r;
    if (!r) return LD_BDF_NO_MEMORY;
    r->m = m;
    r->K = (double *)calloc((size_t)N_EXTENDED * (size_t)m, sizeof(double));
    r->y0 = (double *)calloc((size_t)(4 * m), sizeof(double));
    r->rcont = (double *)calloc((size_t)(7 * m), sizeof(double));
    r->lam0 = (double *)calloc((size_t)(3 * nc + 1), sizeof(double));
    r->F = (double *)calloc((size_t)(2 * nq + big + nc + 1), sizeof(double));
    r->vstage = (double *)calloc((size_t)(nq + 1), sizeof(double));
    if (!r->vstage || !r->K || !r->y0 || !r->rcont || !r->lam0 || !r->F)
        return LD_BDF_NO_MEMORY;
    r->y1 = r->y0 + m;
    r->ys = r->y1 + m;
    r->ylast = r->ys + m;
    r->lam1 = r->lam0 + nc;
    r->lam_stage = r->lam1 + nc;
    r->rhs = r->F + nq;
    r->gam = r->rhs + big;
    r->anoise = r->gam + nc;
    r->minv = (double *)malloc((size_t)(nq + 1) * sizeof(double));
    if (!r->minv) return LD_BDF_NO_MEMORY;
    for (i = 0; i < nq; i++) {
        if (!(w->sys->mass[i] > 0)) return LD_BDF_BAD_INPUT;
        r->minv[i] = 1.0 / w->sys->mass[i];
    }
    return ld__schur_create(w, &r->schur, r->minv);
}

struct ld_schur *ld__rk_schur(ld_bdf *w)
{
    return w->rk ? &w->rk->schur : NULL;
}

void ld__rk_free(ld_bdf *w)
{
    struct ld_rk *r = w->rk;
    if (!r) return;
    free(r->K); free(r->y0); free(r->rcont); free(r->lam0); free(r->F); free(r->vstage);
    ld__schur_free(&r->schur);
    free(r->minv);
    free(r);
    w->rk = NULL;
}

/* The explicit method's local tolerances: the requested ones, floored (as the BDF's) where
 * round-off in the coordinates would rule the error estimate. */
void ld__rk_set_tolerances(ld_bdf *w, double qmax)
{
    struct ld_rk *r = w->rk;
    double floor = LD_LOCAL_FLOOR * DBL_EPSILON * fmax(1.0, qmax);
    if (!r) return;
    w->stats.rk_transformed_rtol = w->opt.rtol * LOCAL_SHARE;
    r->rtol = fmax(w->opt.rtol * LOCAL_SHARE, floor);
    r->atol = w->opt.atol * (r->rtol / w->opt.rtol);
    w->stats.rk_local_rtol = r->rtol;
    w->stats.rk_local_atol = r->atol;
}

/* y (length m) <-> the driver's state (q, v, lam, z) */
static void pack(const ld_bdf *w, const double *state, double *y)
{
    memcpy(y, state, (size_t)(2 * w->nq) * sizeof(double));
    if (w->nz) memcpy(y + 2 * w->nq, state + w->zoff, (size_t)w->nz * sizeof(double));
}

static void unpack(const ld_bdf *w, const double *y, const double *lam, double *state)
{
    memcpy(state, y, (size_t)(2 * w->nq) * sizeof(double));
    if (w->nc) memcpy(state + 2 * w->nq, lam, (size_t)w->nc * sizeof(double));
    if (w->nz) memcpy(state + w->zoff, y + 2 * w->nq, (size_t)w->nz * sizeof(double));
}

/* RMS norm of x / (atol + rtol |y|) over positions and velocities. */
static double rms(const ld_bdf *w, const double *x, const double *y)
{
    const struct ld_rk *r = w->rk;
    int i, n2 = 2 * w->nq;
    double acc = 0.0;
    for (i = 0; i < n2; i++) {
        double e = x[i] / (r->atol + r->rtol * fabs(y[i]));
        acc += e * e;
    }
    return sqrt(acc / n2);
}

/* The limits of a singular configuration, relative to the largest pivot ratio of S met so
 * far at the run's starts and accepted states (see the top, "Conditioning"). */
static void reference_pivot(struct ld_rk *r, double ratio)
{
    double scale;
    r->pivot_ref = fmax(r->pivot_ref, ratio);
    scale = fmin(1.0, r->pivot_ref / REFERENCE_PIVOT);
    r->near_limit = NEAR_SINGULAR * scale;
    r->clear_limit = CLEAR_SINGULAR * scale;
}

/* Start (or restart) from the driver's state D[0] at w->t: the first stage (accelerations
 * and multipliers, the latter into D[0]), and a first step as in DOP853's initial step
 * choice (one explicit Euler step measures the second derivative), at a restart no longer
 * than the step the method that ran up to it would have taken next (w->h): the choice
 * sees the derivatives at the restart's state only, and at a contact's onset the force
 * that builds up is not in them (the walker rejected the first step of every restart, up
 * to ten times, and a third of all its steps). */
int ld__rk_start(ld_bdf *w)
{
    struct ld_rk *r = w->rk;
    int i, nq = w->nq, m = r->m, st;
    double *f0 = r->K, *f1 = r->K + m, h, dnf, dny, der2, der12, h1, h_next = w->h;
    pack(w, w->D, r->y0);
    r->project_stages = r->near_hit = 0;
    if ((st = rhs(w, w->t, r->y0, f0)) != LD_BDF_SUCCESS) return st;
    r->start_pivot = r->schur.pivot_ratio;
    if (w->nc > 0) {
        reference_pivot(r, r->schur.pivot_ratio);
        r->near_hit = r->schur.pivot_ratio < r->near_limit;
    }
    if (r->near_hit) {
        r->project_stages = 1;
        if ((st = rhs(w, w->t, r->y0, f0)) != LD_BDF_SUCCESS) return st;
    }
    acceleration_noise(w);
    if (w->opt.method == LD_METHOD_AUTO && ill_conditioned(w)) return LD__UNSUITED;
    memcpy(r->lam1, r->lam_stage, (size_t)w->nc * sizeof(double));
    memcpy(w->D + 2 * nq, r->lam_stage, (size_t)w->nc * sizeof(double));
    r->dense_ready = 0;
    r->advance_pending = 0;
    r->hs = 0.0;
    r->stiff_count = r->quiet_count = 0;
    r->near_count = r->calm_count = 0;
    ld__control_reset(&r->ctl);
    if (w->opt.h_init > 0) {
        h = w->opt.h_init;
    } else {
        dnf = rms(w, f0, r->y0);
        dny = rms(w, r->y0, r->y0);
        h = (dnf <= 1e-5 || dny <= 1e-5) ? 1e-6 : 0.01 * dny / dnf;
        if (w->opt.h_max > 0) h = fmin(h, w->opt.h_max);
        for (i = 0; i < m; i++) r->ys[i] = r->y0[i] + h * f0[i];
        if ((st = rhs(w, w->t + h, r->ys, f1)) != LD_BDF_SUCCESS) return st;
        for (i = 0; i < m; i++) f1[i] -= f0[i];
        der2 = rms(w, f1, r->y0) / h;
        der12 = fmax(der2, dnf);
        h1 = der12 <= 1e-15 ? fmax(1e-6, h * 1e-3) : pow(0.01 / der12, 1.0 / 8.0);
        h = fmin(100.0 * h, h1);
        if (h_next > 0) h = fmin(h, h_next);
    }
    if (w->opt.h_max > 0) h = fmin(h, w->opt.h_max);
    w->h = h;
    return LD_BDF_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* The step */

/* ys <- y0 + h sum_{j < s} A[s][j] K[j] */
static void stage_state(struct ld_rk *r, int s, double h)
{
    int j, i, m = r->m;
    memcpy(r->ys, r->y0, (size_t)m * sizeof(double));
    for (j = 0; j < s; j++) {
        double a = h * RK_A[s][j];
        const double *Kj = r->K + (size_t)j * m;
        if (a == 0.0) continue;
        for (i = 0; i < m; i++) r->ys[i] += a * Kj[i];
    }
}

/* Weighted max-norm error of the step (positions and velocities), the order-5 estimate
 * damped where the order-3 one is much larger (DOP853's combination). */
static double step_error(const ld_bdf *w, double h)
{
    const struct ld_rk *r = w->rk;
    int i, j, n2 = 2 * w->nq, m = r->m;
    double e5 = 0.0, e3 = 0.0, den;
    for (i = 0; i < n2; i++) {
        double a = 0.0, b = 0.0, sk;
        for (j = 0; j < N_STAGES; j++) {
            double k = r->K[(size_t)j * m + i];
            a += RK_E5[j] * k;
            b += RK_E3[j] * k;
        }
        sk = r->atol + r->rtol * fmax(fabs(r->y0[i]), fabs(r->y1[i]));
        if (i >= w->nq) sk += h * r->anoise[i - w->nq];
        a = fabs(a) / sk;
        b = fabs(b) / sk;
        if (a > e5) e5 = a;
        if (b > e3) e3 = b;
    }
    den = e5 * e5 + 0.01 * e3 * e3;
    return den > 0 ? fabs(h) * e5 * e5 / sqrt(den) : 0.0;
}

/* Project the new state y1 onto Phi = 0 and Phi_q v + Phi_t = 0 (see the top), and evaluate
 * its derivative into K[12] and its multipliers into lam1. */
static int project(ld_bdf *w, double t1)
{
    struct ld_rk *r = w->rk;
    int st, nq = w->nq, nc = w->nc;
    double *q = r->y1, *v = r->y1 + nq, worst, violation;
    if (nc > 0) {
        /* positions: one Newton step with the last stage's factorisation (at t1);
         * velocities at the projected positions */
        if ((st = position_step(w, t1, q, &worst)) != LD_BDF_SUCCESS ||
            (st = schur_at(w, t1, q)) != LD_BDF_SUCCESS ||
            (st = velocity_projection(w, t1, q, v, &violation)) != LD_BDF_SUCCESS)
            return st;
        r->start_pivot = r->schur.pivot_ratio;
    }
    st = accelerations(w, t1, q, v, r->K + (size_t)12 * r->m);
    if (st == LD_BDF_SUCCESS) {
        memcpy(r->lam1, r->lam_stage, (size_t)nc * sizeof(double));
        acceleration_noise(w);
    }

    return st;
}

/* The stiffness test after an accepted step (see the top); 1 when the problem has been
 * stiff, or S too ill-conditioned for the tolerance, for STIFF_STEPS steps. */
static int stiffness(ld_bdf *w, double h)
{
    struct ld_rk *r = w->rk;
    int i, m = r->m, n2 = 2 * w->nq;
    const double *f1 = r->K + (size_t)12 * m, *fs = r->K + (size_t)11 * m;
    double num = 0.0, den = 0.0, hl;
    for (i = 0; i < n2; i++) {
        double a = f1[i] - fs[i], b = r->y1[i] - r->ylast[i];
        num += a * a;
        den += b * b;
    }
    hl = den > 0 ? h * sqrt(num / den) : 0.0;
    if (hl > TRIAL_LIMIT) {
        r->calm_count = 0;
        r->near_count++;
    } else if (++r->calm_count >= QUIET_STEPS) {
        r->near_count = 0;
    }
    if (ill_conditioned(w) || hl > STIFF_LIMIT) {
        r->quiet_count = 0;
        if (++r->stiff_count >= STIFF_STEPS) return 1;
    } else if (++r->quiet_count >= QUIET_STEPS) {
        r->stiff_count = 0;
    }
    return 0;
}

/* Whether the steps have been near the method's stability limit (h |lambda| beyond
 * TRIAL_LIMIT, a ninth of it, on STIFF_STEPS steps with no QUIET_STEPS calm ones between):
 * method auto then tries the BDF without waiting (ld_run.c, "Cost trials"). The limit was
 * a sixth while the step control aimed at errors near a quarter of the limit; aiming at a
 * hundredth (ld_control.c) shortens the steps by (0.04)^(1/8) = 0.67, and the limit with
 * them, so that the same problems ask for a trial (IFToMM A05's governor: h |lambda| 0.85 to
 * 0.92 at rtol 1e-8, Jansen's linkage below 0.33). */
int ld__rk_near_stiff(const ld_bdf *w)
{
    return w->rk->near_count >= STIFF_STEPS;
}

/* Before the next step: the new state's derivative becomes the first stage, the new state
 * the start. Called by the driver when the step's rows and events are done. */
static void advance(struct ld_rk *r)
{
    memcpy(r->K, r->K + (size_t)12 * r->m, (size_t)r->m * sizeof(double));
    memcpy(r->y0, r->y1, (size_t)r->m * sizeof(double));
}

/* One attempt at a step from w->t with step w->h (shortened to land on t_end). On
 * acceptance: w->t, the driver's state D[0] and the next step size are updated and
 * *accepted is 1; on rejection w->h is reduced. */
int ld__rk_step(ld_bdf *w, double t_end, int *accepted)
{
    struct ld_rk *r = w->rk;
    int s, st, m = r->m;
    double h = w->h, t = w->t, t1, err, fac, h_min, h_free = 0.0;
    *accepted = 0;
    if (r->advance_pending) {
        advance(r);
        r->advance_pending = 0;
    }
    h_min = w->opt.h_min > 0 ? w->opt.h_min : 1e-14 * fmax(1.0, fabs(t));
    if (w->opt.h_max > 0 && h > w->opt.h_max) h = w->opt.h_max;
    if (t + h >= t_end || t_end - (t + h) < h_min) {
        /* Land on t_end; a step cut short for that does not shrink the next one. */
        h_free = h;
        h = t_end - t;
    }
    t1 = (h == t_end - t) ? t_end : t + h;
    if (h < h_min && t1 != t_end) return LD_BDF_STEP_TOO_SMALL;

    /* The stages' right-hand side, the same for the whole step (see the top,
     * "Conditioning"): with projected velocities from a start near a singular configuration
     * until one clear of it; a stage that comes near one restarts the step with them. */
    if (w->nc > 0) {
        if (r->start_pivot < r->near_limit) r->project_stages = 1;
        else if (r->start_pivot > r->clear_limit) r->project_stages = 0;
    }
    r->near_hit = 0;
    /* Stages 2..12; K[0] is the derivative at y0 (consistent: either right-hand side). */
    for (s = 1; s < N_STAGES; s++) {
        stage_state(r, s, h);
        st = rhs(w, t + RK_C[s] * h, r->ys, r->K + (size_t)s * m);
        if (st == LD_BDF_SUCCESS && r->near_hit) {
            r->project_stages = 1;
            r->near_hit = 0;
            s = 0;
            continue;
        }
        if (st == LD_BDF_NONFINITE || st == LD_BDF_SINGULAR) {
            /* Outside the model's domain or at a singular configuration: a shorter step. */
            w->stats.rejected_error++;
            ld__control_failed(&r->ctl);
            if (h * 0.25 < h_min) return st;
            w->h = h * 0.25;
            return LD_BDF_SUCCESS;
        }
        if (st != LD_BDF_SUCCESS) return st;
    }
    memcpy(r->ylast, r->ys, (size_t)m * sizeof(double));
    stage_state(r, 12, h);
    memcpy(r->y1, r->ys, (size_t)m * sizeof(double));

    err = step_error(w, h);
    if (!(err <= 1.0)) {
        w->stats.rejected_error++;
        fac = ld__control_rejected(&r->ctl, err);
        if (h * fac < h_min) return LD_BDF_STEP_TOO_SMALL;
        w->h = h * fac;
        return LD_BDF_SUCCESS;
    }
    st = project(w, t1);
    if (st != LD_BDF_SUCCESS) {
        if (st == LD_BDF_CALLBACK || h * 0.25 < h_min) return st;
        w->stats.rejected_error++;
        ld__control_failed(&r->ctl);
        w->h = h * 0.25;
        return LD_BDF_SUCCESS;
    }
    /* Accept. */
    fac = ld__control_accepted(&r->ctl, err);
    r->t0 = t;
    r->hs = h;
    r->dense_ready = 0;
    memcpy(r->lam0, w->D + 2 * w->nq, (size_t)w->nc * sizeof(double));
    /* y0 keeps the step's start for the dense output; the new state goes to D[0]. */
    unpack(w, r->y1, r->lam1, w->D);
    w->t = t1;
    w->h = h * fac;
    if (h_free > h && fac >= 1.0) w->h = fmax(w->h, h_free);
    if (w->opt.h_max > 0 && w->h > w->opt.h_max) w->h = w->opt.h_max;
    w->stats.rk_steps++;
    if (r->project_stages) w->stats.rk_projected_steps++;
    if (w->nc > 0) reference_pivot(r, r->start_pivot);
    r->advance_pending = 1;
    *accepted = 1;
    if (stiffness(w, h) && w->opt.method == LD_METHOD_AUTO) w->switch_pending = 1;

    return LD_BDF_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Dense output */

static int make_dense(ld_bdf *w)
{
    struct ld_rk *r = w->rk;
    int s, i, j, st, m = r->m;
    double h = r->hs, *F = r->rcont;
    for (s = 13; s < N_EXTENDED; s++) {
        stage_state(r, s, h);
        st = rhs(w, r->t0 + RK_C[s] * h, r->ys, r->K + (size_t)s * m);
        if (st != LD_BDF_SUCCESS) return st;
    }
    for (i = 0; i < m; i++) {
        double dy = r->y1[i] - r->y0[i];
        F[i] = dy;
        F[m + i] = h * r->K[i] - dy;
        F[2 * m + i] = 2.0 * dy - h * (r->K[(size_t)12 * m + i] + r->K[i]);
    }
    for (j = 0; j < 4; j++) {
        double *Fj = F + (size_t)(3 + j) * m;
        memset(Fj, 0, (size_t)m * sizeof(double));
        for (s = 0; s < N_EXTENDED; s++) {
            double d = h * RK_D[j][s];
            const double *Ks = r->K + (size_t)s * m;
            if (d == 0.0) continue;
            for (i = 0; i < m; i++) Fj[i] += d * Ks[i];
        }
    }
    r->dense_ready = 1;
    return LD_BDF_SUCCESS;
}

/* The last step's interpolant at t (order 7) into out = (q, v, lam, z); the multipliers
 * are interpolated linearly (output rows solve them afresh). */
int ld__rk_dense(ld_bdf *w, double t, double *out)
{
    struct ld_rk *r = w->rk;
    int i, j, m = r->m, nq = w->nq, st;
    double x, *u = r->ys;
    if (r->hs <= 0 || t == w->t) {
        memcpy(out, w->D, (size_t)w->n * sizeof(double));
        return LD_BDF_SUCCESS;
    }
    if (!r->dense_ready && (st = make_dense(w)) != LD_BDF_SUCCESS) return st;
    x = (t - r->t0) / r->hs;
    /* u = F0 + (1-x)(F1 + x(F2 + (1-x)(F3 + x(F4 + (1-x)(F5 + x F6))))), y0 + x u */
    for (i = 0; i < m; i++) {
        double acc = r->rcont[(size_t)6 * m + i];
        for (j = 5; j >= 0; j--)
            acc = r->rcont[(size_t)j * m + i] + ((j % 2 == 1) ? x : 1.0 - x) * acc;
        u[i] = r->y0[i] + x * acc;
    }
    for (i = 0; i < w->nc; i++)
        out[2 * nq + i] = r->lam0[i] + x * (r->lam1[i] - r->lam0[i]);
    memcpy(out, u, (size_t)(2 * nq) * sizeof(double));
    if (w->nz) memcpy(out + w->zoff, u + 2 * nq, (size_t)w->nz * sizeof(double));
    return LD_BDF_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */
/* Consistent output rows */

/* The output row y = (q, v, lam) made consistent as the driver's consistent_output does
 * (velocity projected onto the velocity constraints, mass-weighted; multipliers from the
 * index-1 equations), with the Schur complement instead of the KKT matrix; and, since the
 * explicit method's interpolant is not on Phi = 0 (the BDF's corrector puts its rows there),
 * positions projected first. Returns
 * LD_BDF_SINGULAR where S cannot be factorised (the driver then uses the KKT matrix). */
int ld__rk_consistent(ld_bdf *w, double t, double *y)
{
    int i, it, st, nq = w->nq;
    double *q = y, *v = y + nq, qmax = 0.0, floor, worst, violation;
    if (w->nc == 0) return LD_BDF_SUCCESS;
    if ((st = schur_at(w, t, q)) != LD_BDF_SUCCESS) return st;
    /* Positions: the interpolant leaves the constraints by its error; a few simplified
     * Newton steps bring the row back (the last one, taken below the round-off floor, moves
     * q by round-off only), then S at the projected positions. */
    for (i = 0; i < nq; i++) qmax = fmax(qmax, fabs(q[i]));
    floor = 64.0 * DBL_EPSILON * fmax(1.0, qmax);
    for (it = 0; it < 4; it++) {
        if ((st = position_step(w, t, q, &worst)) != LD_BDF_SUCCESS) return st;
        if (!(worst > floor)) break;
    }
    if ((st = schur_at(w, t, q)) != LD_BDF_SUCCESS ||
        (st = velocity_projection(w, t, q, v, &violation)) != LD_BDF_SUCCESS ||
        (st = multipliers(w, t, q, v, y + 2 * nq)) != LD_BDF_SUCCESS)
        return st;
    if (violation > w->stats.max_output_velocity_violation)
        w->stats.max_output_velocity_violation = violation;
    return ld__all_finite(y, w->n) ? LD_BDF_SUCCESS : LD_BDF_NONFINITE;
}
