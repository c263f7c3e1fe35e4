/*
 * ld_angles.c -- the angle rows of ld_angles.h.
 *
 * One angle f = atan2(S, C) with rho = S^2 + C^2, a = grad S, b = grad C:
 *
 *     grad f = (C a - S b) / rho
 *     hess f = (C hess S - S hess C) / rho
 *              + ((S^2 - C^2)(a b^T + b a^T) - 2 S C (a a^T - b b^T)) / rho^2
 *
 * (the second line is the symmetric form of d/dq of the first); along a velocity v, with
 * S' = a.v, S'' = v^T hess S v (and C's alike),
 *
 *     f'' = (C S'' - S C'') / rho + 2 ((S^2 - C^2) S' C' - S C (S'^2 - C'^2)) / rho^2.
 *
 * A kind-1 angle f = S has grad a, hess hess S and f'' = S''. S and C are sums of products of
 * at most two coordinates, so hess S is the constant sum of its quadratic terms.
 */
#include "ld_angles.h"

#include <math.h>

/* 2 pi to double precision (C99 has no M_PI) */
#define TWO_PI 6.283185307179586

typedef struct {
    int m;                      /* the angle's coordinates */
    double S, C, rho;
    double a[LD_ANGLE_MAXVAR];  /* grad S */
    double b[LD_ANGLE_MAXVAR];  /* grad C (kind 0) */
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

/* S, C and their gradients of angle k at q; returns its value f. */
static double angle_eval(const ld_angles *A, int k, const double *q, angle_state *st)
{
    double x[LD_ANGLE_MAXVAR];
    const int *fs = A->form_start + 2 * k;
    st->m = A->var_start[k + 1] - A->var_start[k];
    gather(A, k, q, x);
    st->S = form_eval(A, fs[0], fs[1], x, st->a, st->m);
    if (A->kind[k] == 1) {
        st->C = 0.0;
        st->rho = 1.0;
        return st->S;
    }
    st->C = form_eval(A, fs[1], fs[2], x, st->b, st->m);
    st->rho = st->S * st->S + st->C * st->C;
    return atan2(st->S, st->C);
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
        out[A->row[r]] = A->scale[r] * remainder(sum, TWO_PI);
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
                    val[A->jslot[v0 + i]] += w * (st.C * st.a[i] - st.S * st.b[i]) / st.rho;
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
                fdd = (st.C * sdd - st.S * cdd) / st.rho
                      + 2.0 * ((st.S * st.S - st.C * st.C) * sd * cd
                               - st.S * st.C * (sd * sd - cd * cd)) / (st.rho * st.rho);
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
    double w, p, s2, sc, h;
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
            form_hessian(A, k, fs[0], fs[1], w * st.C / st.rho, val);
            form_hessian(A, k, fs[1], fs[2], -w * st.S / st.rho, val);
            m = st.m;
            hs = A->hslot + A->hstart[k];
            p = w / (st.rho * st.rho);
            s2 = st.S * st.S - st.C * st.C;
            sc = 2.0 * st.S * st.C;
            for (i = 0; i < m; i++)
                for (j = 0; j < m; j++) {
                    h = s2 * (st.a[i] * st.b[j] + st.b[i] * st.a[j])
                        - sc * (st.a[i] * st.a[j] - st.b[i] * st.b[j]);
                    if (h != 0.0) val[hs[i * m + j]] += p * h;
                }
        }
    }
}
