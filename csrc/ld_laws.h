/*
 * ld_laws.h -- driving laws f(t) with exact first and second derivatives, evaluated inside
 * the compiled kernels (constraint drivers, force elements).
 *
 * A model's laws are flat arrays: law k has kind kind[k] and the parameters
 * par[start[k] .. start[k+1]-1].
 *
 *   LD_LAW_POLYNOMIAL  c0, c1, ...           f = c0 + c1 t + c2 t^2 + ...
 *   LD_LAW_HARMONIC    a, b, w, phi          f = a + b sin(w t + phi)
 *   LD_LAW_VALUES      (none)                (f, f', f'') read from values[3k..3k+2], written
 *                                            by the caller per time (Python functions)
 *   LD_LAW_CUBIC       m, x[0..m], then per interval i < m the coefficients
 *                      a_i, b_i, c_i, d_i    f = a + b s + c s^2 + d s^3, s = t - x[i],
 *                                            on [x[i], x[i+1]]; before x[0] and after x[m]
 *                                            the end value is held (f' = f'' = 0)
 *
 * Header-only (static inline): no state, no allocation.
 */
#ifndef LD_LAWS_H
#define LD_LAWS_H

#include <math.h>

enum { LD_LAW_POLYNOMIAL = 0, LD_LAW_HARMONIC = 1, LD_LAW_VALUES = 2, LD_LAW_CUBIC = 3 };

typedef struct ld_laws {
    int nlaw;
    const int *kind;        /* [nlaw] */
    const int *start;       /* [nlaw + 1] offsets into par */
    const double *par;
    const double *values;   /* [nlaw, 3] for LD_LAW_VALUES (may be NULL otherwise) */
} ld_laws;

/* Piecewise cubic: binary search for the interval holding t. */
static inline void ld_law_cubic(const double *p, double t, double *f)
{
    int m = (int)p[0], lo = 0, hi, i;
    const double *x = p + 1, *c;
    double s;
    if (t < x[0] || t > x[m]) {
        i = t < x[0] ? 0 : m - 1;
        s = t < x[0] ? 0.0 : x[m] - x[m - 1];
        c = x + (m + 1) + 4 * i;
        f[0] = c[0] + s * (c[1] + s * (c[2] + s * c[3]));
        f[1] = 0.0;
        f[2] = 0.0;
        return;
    }
    hi = m;
    while (hi - lo > 1) {   /* x[lo] <= t, and t < x[hi] or hi = m */
        int mid = (lo + hi) / 2;
        if (x[mid] <= t) lo = mid; else hi = mid;
    }
    c = x + (m + 1) + 4 * lo;
    s = t - x[lo];
    f[0] = c[0] + s * (c[1] + s * (c[2] + s * c[3]));
    f[1] = c[1] + s * (2.0 * c[2] + 3.0 * s * c[3]);
    f[2] = 2.0 * c[2] + 6.0 * s * c[3];
}

/* f[0..2] = value, first and second time derivative of law k at time t. */
static inline void ld_law_eval(const ld_laws *L, int k, double t, double *f)
{
    const double *p = L->par + L->start[k];
    int n = L->start[k + 1] - L->start[k], i;
    switch (L->kind[k]) {
    case LD_LAW_VALUES:
        f[0] = L->values[3 * k];
        f[1] = L->values[3 * k + 1];
        f[2] = L->values[3 * k + 2];
        return;
    case LD_LAW_HARMONIC: {
        double w = p[2], arg = w * t + p[3];
        f[0] = p[0] + p[1] * sin(arg);
        f[1] = p[1] * w * cos(arg);
        f[2] = -p[1] * w * w * sin(arg);
        return;
    }
    case LD_LAW_CUBIC:
        ld_law_cubic(p, t, f);
        return;
    default:   /* polynomial: Horner for the value and both derivatives */
        f[0] = f[1] = f[2] = 0.0;
        for (i = n - 1; i >= 0; i--) {
            f[2] = f[2] * t + 2.0 * f[1];
            f[1] = f[1] * t + f[0];
            f[0] = f[0] * t + p[i];
        }
    }
}

#endif /* LD_LAWS_H */
