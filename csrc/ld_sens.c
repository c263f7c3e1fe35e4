/*
 * ld_sens.c -- forward sensitivities of the BDF solution (the staggered direct method).
 *
 * For parameters p_1 .. p_np the state y carries S = (s_j, u_j), s_j = dq/dp_j and
 * u_j = dv/dp_j, after (q, v, lam, z). They share the BDF's history D, its predictor, its
 * rescaling at step and order changes and its interpolant. With ld_sensitivity.scale they
 * take part in the error test (as CVODES and IDAS with errconS): s_j and u_j are tested like
 * q and v, against rtol |s| + atol / |p_j| (the scaled sensitivity |p_j| s_j is a length like
 * q); then each step attempt solves them before its test. Without, they follow the state's
 * steps and are solved once the step is accepted: cheaper, but their error is then whatever
 * those steps give (in a stiff contact, far above the tolerance).
 *
 * The corrector. At step constant c = h / gamma_k the BDF sets q = q_pred + d,
 * v = (psi_q + d) / c, a = (psi_v + v - v_pred) / c and solves, for d and mu = c^2 lam,
 *
 *     c^2 (M a + Phi_q^T lam - Q(q, v, t)) = 0,    Phi(q, t) - r c^2 R lam = 0.
 *
 * Differentiated with respect to p_j along the same formula (s = s_pred + x,
 * u = (psi_s + x) / c, du/dt = (psi_u + u - u_pred) / c), this is linear in (x, c^2 dlam/dp):
 *
 *     G [x; c^2 dlam/dp] = -[c M (psi_u - u_pred) + M psi_s + H(c^2 lam) s_pred
 *                             - c^2 Q_q s_pred - c Q_v psi_s + c^2 f_p;
 *                            Phi_q s_pred + Phi_p],
 *
 * with G = [M + H(c^2 lam) - c^2 Q_q - c Q_v, Phi_q^T; Phi_q, -r R] the Newton iteration
 * matrix evaluated and factorised afresh at the step's converged state (one factorisation
 * per step attempt serves every parameter), f_p = d(M a + Phi_q^T lam - Q)/dp and Phi_p at fixed (q, v, a,
 * lam, t). These two come from the member systems (ld_bdf.h, ld_sensitivity): the caller
 * chooses members and weights so that their weighted sum is the derivative (a central
 * difference, exact where p enters affinely, or an extrapolation). The result is the exact
 * derivative of the discrete solution for the state's step sequence (up to the state's own
 * Newton residue and rounding), which is a consistent approximation of the derivative of the
 * true solution: both converge as the tolerance does.
 *
 * Refreshing G at every accepted step changes the state's Newton iterations (faster
 * convergence), so a run with sensitivities agrees with one without to the Newton tolerance,
 * not bit for bit.
 *
 * Events and restarts. At an event at t_e(p) the sensitivities jump by (f+ - f-) dt_e/dp, f
 * the state's derivative just after and just before: they are continuous where the equations
 * are (a compliant contact's onset and separation, an event that changes nothing). A restart
 * from the current state keeps them, and solves da/dp anew with the index-1 equations (as
 * the start does). Restarts from a moved state (a velocity projected by a contact that
 * sticks) and switchable rows are refused: there the sensitivities would jump; so is any
 * discontinuity that the caller brings about between calls (the caller's responsibility).
 */
#include "ld_sens.h"

#include "ld_linear.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The round-off of a sensitivity solve, in eps max|s| (the state's Newton noise, NOISE in
 * ld_bdf.c, is the same multiple of eps max|q|). */
#define NOISE_S 256.0

/* Scratch layout in w->sens_work: acc [nq], fp [nq], mf [nq], pp [nc], mphi [nc],
 * mjac [sens_nnz] (every step); then, for the start, qp, qm, vp, vm [nq each], gp, gm [nc
 * each], vals [sens_nnz], sa [nq], su [2 nq]. sens_nnz is the most Phi_q entries of the
 * model and its members: a member's pattern may have entries the model's lacks (a
 * coefficient that is zero in the model, such as a body point's zero coordinate, is left
 * out of its pattern), and each member's values are used in its own pattern. */

int ld__sens_valid(const ld_system *sys, const ld_bdf_options *opt)
{
    const ld_sensitivity *se = opt->sensitivities;
    int j, k, p;
    if (se->np < 1 || se->nmembers < 1 || !se->members || !se->start || !se->member ||
        !se->weight || opt->method != LD_METHOD_BDF || sys->row_active ||
        se->start[0] != 0)
        return 0;
    if (se->scale)
        for (j = 0; j < se->np; j++)
            if (!(se->scale[j] > 0.0) || !isfinite(se->scale[j])) return 0;
    for (j = 0; j < se->np; j++)
        if (se->start[j + 1] < se->start[j]) return 0;
    for (k = 0; k < se->start[se->np]; k++)
        if (se->member[k] < 0 || se->member[k] >= se->nmembers) return 0;
    for (k = 0; k < se->nmembers; k++) {
        const ld_system *m = se->members[k];
        if (!m || m->nq != sys->nq || m->nc != sys->nc || !m->phi || !m->phi_q || !m->force ||
            !m->phiq_colptr || !m->phiq_rowind || m->phiq_colptr[0] != 0 ||
            m->phiq_colptr[m->nq] != m->phiq_nnz)
            return 0;
        for (j = 0; j < m->nq; j++)
            if (m->phiq_colptr[j + 1] < m->phiq_colptr[j]) return 0;
        for (p = 0; p < m->phiq_nnz; p++)
            if (m->phiq_rowind[p] < 0 || m->phiq_rowind[p] >= m->nc) return 0;
    }
    return 1;
}

int ld__sens_create(ld_bdf *w)
{
    const ld_sensitivity *se = w->opt.sensitivities;
    size_t nq = (size_t)w->nq, nc = (size_t)w->nc, nnz;
    int k;
    w->sens_nnz = w->sys->phiq_nnz;
    for (k = 0; k < se->nmembers; k++)
        if (se->members[k]->phiq_nnz > w->sens_nnz) w->sens_nnz = se->members[k]->phiq_nnz;
    nnz = (size_t)w->sens_nnz;
    w->sens_work = (double *)calloc(10 * nq + 4 * nc + 2 * nnz + 1, sizeof(double));
    return w->sens_work ? LD_BDF_SUCCESS : LD_BDF_NO_MEMORY;
}

/* out[nc] = Phi_q x from Jacobian values vals in the system's pattern. */
static void jac_times(const ld_system *s, const double *vals, const double *x, double *out)
{
    int j, p;
    for (j = 0; j < s->nc; j++) out[j] = 0.0;
    for (j = 0; j < s->nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            out[s->phiq_rowind[p]] += vals[p] * x[j];
}

/* out[nc] += (Phi_q(qp) - Phi_q(qm)) x / (2 eps) of the model (vals, tmp: scratch of its
 * nnz and nc): a central difference along qp - qm = 2 eps s, exact (Phi_q is affine in q). */
static int jac_difference(const ld_system *s, double t, const double *qp, const double *qm,
                          double eps, const double *x, double *vals, double *tmp,
                          double *out)
{
    int i;
    if (s->phi_q(s->user, t, qp, vals) != LD_OK) return LD_BDF_CALLBACK;
    jac_times(s, vals, x, tmp);
    for (i = 0; i < s->nc; i++) out[i] += tmp[i] / (2.0 * eps);
    if (s->phi_q(s->user, t, qm, vals) != LD_OK) return LD_BDF_CALLBACK;
    jac_times(s, vals, x, tmp);
    for (i = 0; i < s->nc; i++) out[i] -= tmp[i] / (2.0 * eps);
    return LD_BDF_SUCCESS;
}

static int parameter_terms(ld_bdf *w, int j, double t);
static void csc_axpy(int nq, const int *colptr, const int *rowind, const double *vals,
                     double alpha, const double *x, double *out);

/* The initial acceleration's derivative da0/dp of parameter j into sa, from the index-1
 * equations M a + Phi_q^T lam = Q, Phi_q a = gamma differentiated along (s, u) = (dq0/dp,
 * dv0/dp):
 *
 *     [M Phi_q^T; Phi_q -r' D] (da, dlam) = (Q_q s + Q_v u - H(lam) s - f_p,
 *                                           gamma_q s + gamma_v u - (Phi_q)_q[s] a
 *                                           + gamma_p - (Phi_q)_p a).
 *
 * linkdyn's constraints are at most quadratic in the coordinates, so gamma is at most
 * quadratic in (q, v) jointly and Phi_q affine in q: the directional derivatives are central
 * differences, exact up to rounding, over a move of the state's own size. The p-terms are
 * the members' weighted sums. K must be factorised at q0 and w->y hold (q0, v0, lam0), the
 * scratch's acc a0, the force Jacobians and H(lam0) be current. */
static int initial_acceleration(ld_bdf *w, int j, double t, const double *s, const double *u,
                                double *sa)
{
    const ld_system *m0 = w->sys;
    const ld_sensitivity *se = w->opt.sensitivities;
    int nq = w->nq, nc = w->nc, i, k, st;
    const double *q = w->y, *v = w->y + nq;
    double *acc = w->sens_work, *fp = acc + nq;
    double *qp = acc + 3 * nq + 2 * nc + w->sens_nnz, *qm = qp + nq, *vp = qm + nq,
           *vm = vp + nq, *gp = vm + nq, *gm = gp + nc, *vals = gm + nc, *rhs = w->res;
    double smax = 0.0, umax = 0.0, qmax = 1.0, vmax = 1.0, eps, ratio;
    if ((st = parameter_terms(w, j, t)) != LD_BDF_SUCCESS) return st;
    for (i = 0; i < nq; i++) {
        smax = fmax(smax, fabs(s[i])); umax = fmax(umax, fabs(u[i]));
        qmax = fmax(qmax, fabs(q[i])); vmax = fmax(vmax, fabs(v[i]));
    }
    ratio = fmax(smax / qmax, umax / vmax);
    eps = ratio > 0.0 ? 1.0 / ratio : 0.0;
    /* top: Q_q s + Q_v u - H(lam) s - f_p */
    for (i = 0; i < nq; i++) rhs[i] = -fp[i];
    if (m0->fq_nnz) csc_axpy(nq, m0->fq_colptr, m0->fq_rowind, w->fq, 1.0, s, rhs);
    if (m0->fv_nnz) csc_axpy(nq, m0->fv_colptr, m0->fv_rowind, w->fv, 1.0, u, rhs);
    if (m0->hess_nnz) csc_axpy(nq, m0->hess_colptr, m0->hess_rowind, w->hess, -1.0, s, rhs);
    /* bottom: the directional terms, then the members' gamma_p - (Phi_q)_p a */
    for (i = 0; i < nc; i++) rhs[nq + i] = 0.0;
    if (eps > 0.0) {
        for (i = 0; i < nq; i++) {
            qp[i] = q[i] + eps * s[i]; qm[i] = q[i] - eps * s[i];
            vp[i] = v[i] + eps * u[i]; vm[i] = v[i] - eps * u[i];
        }
        if (m0->gamma(m0->user, t, qp, vp, gp) != LD_OK ||
            m0->gamma(m0->user, t, qm, vm, gm) != LD_OK)
            return LD_BDF_CALLBACK;
        for (i = 0; i < nc; i++) rhs[nq + i] += (gp[i] - gm[i]) / (2.0 * eps);
        /* minus (Phi_q)_q[s] a: the difference along -s */
        if ((st = jac_difference(m0, t, qm, qp, eps, acc, vals, gp, rhs + nq)) !=
            LD_BDF_SUCCESS)
            return st;
    }
    for (k = se->start[j]; k < se->start[j + 1]; k++) {
        const ld_system *m = se->members[se->member[k]];
        double wk = se->weight[k];
        if (m->gamma(m->user, t, q, v, gp) != LD_OK || m->phi_q(m->user, t, q, vals) != LD_OK)
            return LD_BDF_CALLBACK;
        jac_times(m, vals, acc, gm);
        for (i = 0; i < nc; i++) rhs[nq + i] += wk * (gp[i] - gm[i]);
    }
    if ((st = ld__solve_G(w, rhs)) != LD_BDF_SUCCESS) return st;
    memcpy(sa, rhs, (size_t)nq * sizeof(double));
    return ld__all_finite(sa, nq) ? LD_BDF_SUCCESS : LD_BDF_NONFINITE;
}

/* Make (s, u) = (dq0/dp_j, dv0/dp_j) satisfy the differentiated constraints exactly,
 *
 *     Phi_q s + Phi_p = 0,    Phi_q u + (Phi_q v + Phi_t)_q s + (Phi_q v + Phi_t)_p = 0,
 *
 * by mass-weighted corrections (one solve each with K factorised at q0, as the state's
 * projection): given by differences of assembled starts, they hold only to the differences'
 * error, and the corrector, which enforces them, would turn that into a jump of the first
 * step that no step size makes pass the error test. The directional term is a central
 * difference, exact (Phi_q v + Phi_t is affine in q). */
static int project_start(ld_bdf *w, int j, double t, double *s, double *u)
{
    const ld_system *m0 = w->sys;
    const ld_sensitivity *se = w->opt.sensitivities;
    int nq = w->nq, nc = w->nc, i, k, st;
    const double *q = w->y, *v = w->y + nq;
    double *qp = w->sens_work + 3 * nq + 2 * nc + w->sens_nnz, *qm = qp + nq;
    double *gp = qm + 3 * nq, *gm = gp + nc, *vals = gm + nc, *rhs = w->res;
    double smax = 0.0, qmax = 1.0, eps;
    /* positions */
    jac_times(m0, w->phiq, s, rhs + nq);
    for (k = se->start[j]; k < se->start[j + 1]; k++) {
        const ld_system *m = se->members[se->member[k]];
        if (m->phi(m->user, t, q, gp) != LD_OK) return LD_BDF_CALLBACK;
        for (i = 0; i < nc; i++) rhs[nq + i] += se->weight[k] * gp[i];
    }
    for (i = 0; i < nq; i++) rhs[i] = 0.0;
    for (i = 0; i < nc; i++) rhs[nq + i] = -rhs[nq + i];
    if ((st = ld__solve_G(w, rhs)) != LD_BDF_SUCCESS) return st;
    for (i = 0; i < nq; i++) s[i] += rhs[i];
    /* velocities */
    for (i = 0; i < nq; i++) { smax = fmax(smax, fabs(s[i])); qmax = fmax(qmax, fabs(q[i])); }
    eps = smax > 0.0 ? qmax / smax : 0.0;
    jac_times(m0, w->phiq, u, rhs + nq);
    if (eps > 0.0) {
        for (i = 0; i < nq; i++) { qp[i] = q[i] + eps * s[i]; qm[i] = q[i] - eps * s[i]; }
        /* (Phi_q v + Phi_t)_q s: Phi_q's part, then Phi_t's */
        if ((st = jac_difference(m0, t, qp, qm, eps, v, vals, gp, rhs + nq)) !=
            LD_BDF_SUCCESS)
            return st;
        if (m0->phi_t(m0->user, t, qp, gp) != LD_OK || m0->phi_t(m0->user, t, qm, gm) != LD_OK)
            return LD_BDF_CALLBACK;
        for (i = 0; i < nc; i++) rhs[nq + i] += (gp[i] - gm[i]) / (2.0 * eps);
    }
    for (k = se->start[j]; k < se->start[j + 1]; k++) {
        const ld_system *m = se->members[se->member[k]];
        if (m->phi_q(m->user, t, q, vals) != LD_OK) return LD_BDF_CALLBACK;
        jac_times(m, vals, v, gp);
        if (m->phi_t(m->user, t, q, gm) != LD_OK) return LD_BDF_CALLBACK;
        for (i = 0; i < nc; i++) rhs[nq + i] += se->weight[k] * (gp[i] + gm[i]);
    }
    for (i = 0; i < nq; i++) rhs[i] = 0.0;
    for (i = 0; i < nc; i++) rhs[nq + i] = -rhs[nq + i];
    if ((st = ld__solve_G(w, rhs)) != LD_BDF_SUCCESS) return st;
    for (i = 0; i < nq; i++) u[i] += rhs[i];
    return ld__all_finite(s, nq) && ld__all_finite(u, nq) ? LD_BDF_SUCCESS : LD_BDF_NONFINITE;
}

int ld_bdf_init_sensitivities(ld_bdf *w, const double *s0)
{
    const ld_system *m0 = w->sys;
    int j, i, st, nq = w->nq, nc = w->nc;
    double t = w->t, *sa;
    if (!w->np || !w->initialised || !s0 || !ld__all_finite(s0, 2 * nq * w->np))
        return LD_BDF_BAD_INPUT;
    /* The state (q0, v0, lam0), a0 from the first step's history, and the Jacobians there. */
    memcpy(w->y, w->D, (size_t)(2 * nq + nc) * sizeof(double));
    for (i = 0; i < nq; i++) w->sens_work[i] = w->D[w->n + nq + i] / w->h;
    if ((m0->fq_nnz && m0->force_q(m0->user, t, w->y, w->y + nq, w->fq) != LD_OK) ||
        (m0->fv_nnz && m0->force_v(m0->user, t, w->y, w->y + nq, w->fv) != LD_OK) ||
        (m0->hess_nnz && m0->phi_qq_lam(m0->user, t, w->y, w->y + 2 * nq, w->hess) != LD_OK))
        return LD_BDF_CALLBACK;
    if ((st = ld__factor_K(w, t, w->y)) != LD_BDF_SUCCESS) return st;
    sa = w->sens_work + 3 * nq + 2 * nc + w->sens_nnz + 4 * nq + 2 * nc + w->sens_nnz;
    for (j = 0; j < w->np; j++) {
        double *sj = sa + nq;
        double *d0 = w->D + w->soff + (size_t)2 * nq * j, *d1 = d0 + w->n;
        memcpy(sj, s0 + (size_t)2 * nq * j, (size_t)(2 * nq) * sizeof(double));
        if ((st = project_start(w, j, t, sj, sj + nq)) != LD_BDF_SUCCESS ||
            (st = initial_acceleration(w, j, t, sj, sj + nq, sa)) != LD_BDF_SUCCESS)
            return st;
        for (i = 0; i < nq; i++) {
            d0[i] = sj[i];
            d0[nq + i] = sj[nq + i];
            d1[i] = w->h * sj[nq + i];
            d1[nq + i] = w->h * sa[i];
        }
    }
    return LD_BDF_SUCCESS;
}

/* out += alpha A x for an nq x nq CSC matrix (pattern colptr/rowind, values vals). */
static void csc_axpy(int nq, const int *colptr, const int *rowind, const double *vals,
                     double alpha, const double *x, double *out)
{
    int j, p;
    for (j = 0; j < nq; j++) {
        double xj = alpha * x[j];
        if (xj == 0.0) continue;
        for (p = colptr[j]; p < colptr[j + 1]; p++) out[rowind[p]] += vals[p] * xj;
    }
}

/* f_p and Phi_p of parameter j at the accepted state (weighted sums over its members). */
static int parameter_terms(ld_bdf *w, int j, double t)
{
    const ld_sensitivity *se = w->opt.sensitivities;
    int nq = w->nq, nc = w->nc, k, i, c, p;
    const double *q = w->y, *v = w->y + nq, *lam = w->y + 2 * nq;
    double *acc = w->sens_work, *fp = acc + nq, *mf = fp + nq, *pp = mf + nq;
    double *mphi = pp + nc, *mjac = mphi + nc;
    memset(fp, 0, (size_t)nq * sizeof(double));
    memset(pp, 0, (size_t)nc * sizeof(double));
    for (k = se->start[j]; k < se->start[j + 1]; k++) {
        const ld_system *m = se->members[se->member[k]];
        double wk = se->weight[k];
        if (m->phi(m->user, t, q, mphi) != LD_OK || m->phi_q(m->user, t, q, mjac) != LD_OK ||
            m->force(m->user, t, q, v, mf) != LD_OK)
            return LD_BDF_CALLBACK;
        for (i = 0; i < nc; i++) pp[i] += wk * mphi[i];
        for (c = 0; c < nq; c++) {
            double acc_c = m->mass[c] * acc[c] - mf[c];
            for (p = m->phiq_colptr[c]; p < m->phiq_colptr[c + 1]; p++)
                acc_c += mjac[p] * lam[m->phiq_rowind[p]];
            fp[c] += wk * acc_c;
        }
    }
    return LD_BDF_SUCCESS;
}

/* For the error test of a step of order k: the sensitivities' differences d = y - y_pred
 * and their scales, rtol |s| + atol / |p_j| plus the round-off of their linear solves,
 * NOISE_S eps max|s_j| (times the growth 2^k / (k + 1) of noise in the differences, as the
 * state's Newton noise is taken): below it the error test would chase rounding errors. */
void ld__sens_test_terms(ld_bdf *w, int k)
{
    const ld_sensitivity *se = w->opt.sensitivities;
    int j, i, nq = w->nq;
    double amp = (double)(1 << k) / (k + 1);
    for (j = 0; j < w->np; j++) {
        size_t off = (size_t)w->soff + (size_t)2 * nq * j;
        double smax = 0.0, floor_s, atol = w->atol / se->scale[j];
        for (i = 0; i < nq; i++) smax = fmax(smax, fabs(w->y[off + i]));
        floor_s = NOISE_S * DBL_EPSILON * smax * amp;
        for (i = 0; i < 2 * nq; i++) {
            double a = fabs(w->y_pred[off + i]), b = fabs(w->y[off + i]);
            w->scale[off + i] = atol + w->rtol * (a > b ? a : b) + floor_s;
            w->d[off + i] = w->y[off + i] - w->y_pred[off + i];
        }
    }
}

int ld__sens_step(ld_bdf *w, double t, double c)
{
    const ld_system *s = w->sys;
    int nq = w->nq, nc = w->nc, j, i, st;
    double *acc = w->sens_work, *fp = acc + nq, *pp = fp + 2 * nq, *rhs = w->res;
    if (ld__eval_phi_q(w, t, w->y) != LD_OK) return LD_BDF_CALLBACK;
    if ((st = ld__refresh_G(w, t, c)) != LD_BDF_SUCCESS) return st;
    for (i = 0; i < nq; i++) acc[i] = (w->psi[nq + i] + w->d[nq + i]) / c;
    for (j = 0; j < w->np; j++) {
        size_t off = (size_t)w->soff + (size_t)2 * nq * j;
        double *sq = w->y + off, *sv = sq + nq;
        const double *sp = w->y_pred + off, *up = sp + nq;
        const double *ps = w->psi + off, *pu = ps + nq;
        if ((st = parameter_terms(w, j, t)) != LD_BDF_SUCCESS) return st;
        for (i = 0; i < nq; i++)
            rhs[i] = c * s->mass[i] * (pu[i] - up[i]) + s->mass[i] * ps[i] + c * c * fp[i];
        if (s->hess_nnz)
            csc_axpy(nq, s->hess_colptr, s->hess_rowind, w->hess, 1.0, sp, rhs);
        if (s->fq_nnz)
            csc_axpy(nq, s->fq_colptr, s->fq_rowind, w->fq, -c * c, sp, rhs);
        if (s->fv_nnz)
            csc_axpy(nq, s->fv_colptr, s->fv_rowind, w->fv, -c, ps, rhs);
        jac_times(s, w->phiq, sp, rhs + nq);
        for (i = 0; i < nc; i++) rhs[nq + i] += pp[i];
        for (i = 0; i < w->ng; i++) rhs[i] = -rhs[i];
        if ((st = ld__solve_G(w, rhs)) != LD_BDF_SUCCESS) return st;
        for (i = 0; i < nq; i++) {
            sq[i] = sp[i] + rhs[i];
            sv[i] = (ps[i] + rhs[i]) / c;
        }
        if (!ld__all_finite(sq, 2 * nq)) return LD_BDF_NONFINITE;
    }
    return LD_BDF_SUCCESS;
}

/* The members track the branch of their angles along the accepted states, as the model's
 * own run state does (ld_system.h, accept): called with each accepted state only (a step
 * attempt that the error test rejects must not move them). */
int ld__sens_accept(ld_bdf *w, double t, const double *q, const double *v)
{
    const ld_sensitivity *se = w->opt.sensitivities;
    int k;
    for (k = 0; k < se->nmembers; k++) {
        const ld_system *m = se->members[k];
        if (m->accept && m->accept(m->user, t, q, v) != LD_OK) return LD_BDF_CALLBACK;
    }
    return LD_BDF_SUCCESS;
}
