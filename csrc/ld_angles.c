/*
 * ld_angles.c -- the angle rows of ld_angles.h.
 *
 * Every angle is an outer function f = F(C, S) of its two forms (kind 1: F = S, C empty).
 * With a = grad S, b = grad C and F's partial derivatives F_C, F_S, F_CC, F_CS, F_SS,
 *
 *     grad f = F_C b + F_S a
 *     hess f = F_C hess C + F_S hess S + F_CC b b^T + F_CS (a b^T + b a^T) + F_SS a a^T
 *     f''    = F_C C'' + F_S S'' + F_CC C'^2 + 2 F_CS C' S' + F_SS S'^2
 *
 * along a velocity v (S' = a . v, S'' = v^T hess S v, C's alike). For atan2(S, C), with
 * rho = S^2 + C^2: F_S = C / rho, F_C = -S / rho, F_SS = -2 S C / rho^2 = -F_CC,
 * F_CS = (S^2 - C^2) / rho^2. A cam's gap (kind 2) takes its derivatives from ld_cams.c; a
 * cam's -h(psi(C, S)) (kind 3) those of h and of psi = atan2(S, C) by the chain rule. S and
 * C are sums of products of at most two coordinates, so hess S is the constant sum of its
 * quadratic terms.
 */
#include "ld_angles.h"

#include <math.h>

/* 2 pi to double precision (C99 has no M_PI) */
#define TWO_PI 6.283185307179586

typedef struct {
    int m;                      /* the angle's coordinates */
    double S, C;
    double f, fc, fs, fcc, fcs, fss;    /* F and its derivatives */
    double a[LD_ANGLE_MAXVAR];  /* grad S */
    double b[LD_ANGLE_MAXVAR];  /* grad C (kinds 0, 2, 3) */
} angle_state;

/* Value and gradient of the form of terms lo .. hi - 1 at the angle's coordinates x. */
static double form_eval(const ld_angles *A, int lo, int hi, const double *x, double *grad,
                        int m)
{
    int t, i, ia, ib;
    double s = 0.0, c;
    for (i = 0; i < m; i++) grad[i] = 0.0;
    for (t = lo; t < hi; t++) {
        ia = A->form_a[t];
        ib = A->form_b[t];
        c = A->form_coef[t];
        if (ia < 0) {
            s += c;
        } else if (ib < 0) {
            s += c * x[ia];
            grad[ia] += c;
        } else {
            s += c * x[ia] * x[ib];
            grad[ia] += c * x[ib];
            grad[ib] += c * x[ia];
        }
    }
    return s;
}

/* v^T hess v of the form of terms lo .. hi - 1 (its quadratic terms) */
static double form_second(const ld_angles *A, int lo, int hi, const double *w)
{
    int t;
    double s = 0.0;
    for (t = lo; t < hi; t++)
        if (A->form_a[t] >= 0 && A->form_b[t] >= 0)
            s += 2.0 * A->form_coef[t] * w[A->form_a[t]] * w[A->form_b[t]];
    return s;
}

static void gather(const ld_angles *A, int k, const double *q, double *x)
{
    int i, v0 = A->var_start[k], m = A->var_start[k + 1] - v0;
    for (i = 0; i < m; i++) x[i] = q[A->var[v0 + i]];
}

/* F = atan2(S, C) and its derivatives into st */
static void outer_atan2(angle_state *st)
{
    double S = st->S, C = st->C, rho = S * S + C * C;
    st->f = atan2(S, C);
    st->fs = C / rho;
    st->fc = -S / rho;
    st->fss = -2.0 * S * C / (rho * rho);
    st->fcc = -st->fss;
    st->fcs = (S * S - C * C) / (rho * rho);
}

/* The forms, their gradients and the outer function of angle k at q; returns f. */
static double angle_eval(const ld_angles *A, int k, const double *q, angle_state *st)
{
    double x[LD_ANGLE_MAXVAR], p[2], grad[2], hess[3], h[3], u;
    const int *fs = A->form_start + 2 * k;
    st->m = A->var_start[k + 1] - A->var_start[k];
    gather(A, k, q, x);
    st->S = form_eval(A, fs[0], fs[1], x, st->a, st->m);
    st->fc = st->fcc = st->fcs = st->fss = 0.0;
    if (A->kind[k] == 1) {
        st->C = 0.0;
        st->f = st->S;
        st->fs = 1.0;
        return st->f;
    }
    st->C = form_eval(A, fs[1], fs[2], x, st->b, st->m);
    switch (A->kind[k]) {
    case 2:
        p[0] = st->C;
        p[1] = st->S;
        ld_cam_point_gap(&A->cams, A->cam[k], p, &st->f, grad, hess, &u);
        st->fc = grad[0];
        st->fs = grad[1];
        st->fcc = hess[0];
        st->fcs = hess[1];
        st->fss = hess[2];
        break;
    case 3: {
        double pc, ps, pcc, pcs, pss;
        outer_atan2(st);
        pc = st->fc, ps = st->fs, pcc = st->fcc, pcs = st->fcs, pss = st->fss;
        ld_cam_face_support(&A->cams, A->cam[k], st->f, h, &u);
        st->f = -h[0];
        st->fc = -h[1] * pc;
        st->fs = -h[1] * ps;
        st->fcc = -h[2] * pc * pc - h[1] * pcc;
        st->fcs = -h[2] * pc * ps - h[1] * pcs;
        st->fss = -h[2] * ps * ps - h[1] * pss;
        break;
    }
    default:
        outer_atan2(st);
    }
    return st->f;
}

/* Whether row r is wrapped: it has a kind-0 angle */
static int wrapped(const ld_angles *A, int r)
{
    int k;
    for (k = A->first[r]; k < A->first[r + 1]; k++)
        if (A->kind[k] == 0) return 1;
    return 0;
}

void ld_angles_phi(const ld_angles *A, const double *q, double *out)
{
    int r, k;
    double sum, f;
    angle_state st;
    if (A->nrow == 0) return;
    for (r = 0; r < A->nrow; r++) {
        sum = -A->offset[r];
        for (k = A->first[r]; k < A->first[r + 1]; k++) {
            f = A->mult[k] * angle_eval(A, k, q, &st);
            /* each kind-0 term reduced on its own: its multiple of 2 pi is exact there */
            sum += A->kind[k] == 0 ? remainder(f, TWO_PI) : f;
        }
        out[A->row[r]] = A->scale[r] * (wrapped(A, r) ? remainder(sum, TWO_PI) : sum);
    }
}

void ld_angles_phi_q(const ld_angles *A, const double *q, double *val)
{
    int r, k, i, v0;
    double w;
    angle_state st;
    if (A->nrow == 0) return;
    for (i = 0; i < A->var_start[A->nangle]; i++) val[A->jslot[i]] = 0.0;
    for (r = 0; r < A->nrow; r++)
        for (k = A->first[r]; k < A->first[r + 1]; k++) {
            angle_eval(A, k, q, &st);
            v0 = A->var_start[k];
            w = A->scale[r] * A->mult[k];
            if (A->kind[k] == 1) {
                for (i = 0; i < st.m; i++) val[A->jslot[v0 + i]] += w * st.a[i];
            } else {
                for (i = 0; i < st.m; i++)
                    val[A->jslot[v0 + i]] += w * (st.fc * st.b[i] + st.fs * st.a[i]);
            }
        }
}

void ld_angles_gamma(const ld_angles *A, const double *q, const double *v, double *out)
{
    int r, k, i;
    double w[LD_ANGLE_MAXVAR], sd, cd, sdd, cdd, fdd, sum;
    const int *fs;
    angle_state st;
    if (A->nrow == 0) return;
    for (r = 0; r < A->nrow; r++) {
        sum = 0.0;
        for (k = A->first[r]; k < A->first[r + 1]; k++) {
            angle_eval(A, k, q, &st);
            gather(A, k, v, w);
            fs = A->form_start + 2 * k;
            sd = 0.0;
            for (i = 0; i < st.m; i++) sd += st.a[i] * w[i];
            sdd = form_second(A, fs[0], fs[1], w);
            if (A->kind[k] == 1) {
                fdd = sdd;
            } else {
                cd = 0.0;
                for (i = 0; i < st.m; i++) cd += st.b[i] * w[i];
                cdd = form_second(A, fs[1], fs[2], w);
                fdd = st.fc * cdd + st.fs * sdd + st.fcc * cd * cd + 2.0 * st.fcs * cd * sd
                      + st.fss * sd * sd;
            }
            sum += A->mult[k] * fdd;
        }
        out[A->row[r]] = -A->scale[r] * sum;
    }
}

/* val[hslot] += w * (coef on (a, b) and (b, a)) of the quadratic terms lo .. hi - 1 */
static void form_hessian(const ld_angles *A, int k, int lo, int hi, double w, double *val)
{
    int t, ia, ib, m = A->var_start[k + 1] - A->var_start[k];
    const int *hs = A->hslot + A->hstart[k];
    for (t = lo; t < hi; t++) {
        ia = A->form_a[t];
        ib = A->form_b[t];
        if (ia < 0 || ib < 0) continue;
        val[hs[ia * m + ib]] += w * A->form_coef[t];
        val[hs[ib * m + ia]] += w * A->form_coef[t];
    }
}

void ld_angles_hessian(const ld_angles *A, const double *q, const double *lam, double *val)
{
    int r, k, i, j, m;
    double w, h;
    const int *fs, *hs;
    angle_state st;
    if (A->nrow == 0) return;
    for (r = 0; r < A->nrow; r++) {
        if (lam[A->row[r]] == 0.0) continue;
        for (k = A->first[r]; k < A->first[r + 1]; k++) {
            w = lam[A->row[r]] * A->scale[r] * A->mult[k];
            angle_eval(A, k, q, &st);
            fs = A->form_start + 2 * k;
            if (A->kind[k] == 1) {
                form_hessian(A, k, fs[0], fs[1], w, val);
                continue;
            }
            form_hessian(A, k, fs[0], fs[1], w * st.fs, val);
            form_hessian(A, k, fs[1], fs[2], w * st.fc, val);
            m = st.m;
            hs = A->hslot + A->hstart[k];
            for (i = 0; i < m; i++)
                for (j = 0; j < m; j++) {
                    h = st.fcc * st.b[i] * st.b[j] + st.fcs * (st.a[i] * st.b[j]
                                                               + st.b[i] * st.a[j])
                        + st.fss * st.a[i] * st.a[j];
                    if (h != 0.0) val[hs[i * m + j]] += w * h;
                }
        }
    }
}
