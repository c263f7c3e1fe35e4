/*
 * ld_cams.c -- the cam curves of ld_cams.h.
 */
#include "ld_cams.h"

#include <math.h>

#define TWO_PI 6.283185307179586
#define MAX_ITER 50
/* Newton's step below which the next one is at round-off (the methods converge
 * quadratically) */
#define STEP_DONE 1e-10

void ld_cam_law(const ld_cams *C, int c, double u, double *s)
{
    int lo = C->first[c], hi = C->first[c + 1] - 1, mid, j;
    double t, tp, w, sn, cs;
    const double *k;
    u -= TWO_PI * floor(u / TWO_PI);
    while (lo < hi) {                       /* the last piece starting at or before u */
        mid = (lo + hi + 1) / 2;
        if (C->start[mid] <= u) lo = mid; else hi = mid - 1;
    }
    k = C->coef + LD_CAM_NCOEF * lo;
    t = u - C->start[lo];
    s[0] = s[1] = s[2] = 0.0;
    tp = 1.0;                               /* t^j, from j = 0 */
    for (j = 0; j < 8; j++) {
        s[0] += k[j] * tp;
        if (j + 1 < 8) s[1] += (j + 1) * k[j + 1] * tp;
        if (j + 2 < 8) s[2] += (j + 2) * (j + 1) * k[j + 2] * tp;
        tp *= t;
    }
    w = k[10];
    if (w != 0.0) {
        sn = sin(w * t);
        cs = cos(w * t);
        s[0] += k[8] * sn + k[9] * cs;
        s[1] += w * (k[8] * cs - k[9] * sn);
        s[2] -= w * w * (k[8] * sn + k[9] * cs);
    }
}

/* Q, Q', Q'' of a POINT or POLAR curve at u */
static void point_curve(const ld_cams *C, int c, double u, double *q0, double *q1,
                        double *q2)
{
    const double *p = C->par + LD_CAM_NPAR * c;
    double s[3], e[2], w0[2], w1[2], w2[2], ang, cs, sn, sigma, lam, kap, L;
    ld_cam_law(C, c, u, s);
    if (C->kind[c] == LD_CAM_POLAR || C->kind[c] == LD_CAM_POLAR_FACE) {
        e[0] = cos(u);
        e[1] = sin(u);
        q0[0] = s[0] * e[0];
        q0[1] = s[0] * e[1];
        q1[0] = s[1] * e[0] - s[0] * e[1];
        q1[1] = s[1] * e[1] + s[0] * e[0];
        q2[0] = (s[2] - s[0]) * e[0] - 2.0 * s[1] * e[1];
        q2[1] = (s[2] - s[0]) * e[1] + 2.0 * s[1] * e[0];
        return;
    }
    sigma = p[0];
    lam = p[3];
    kap = p[4];
    L = p[9];
    ang = p[10] + kap * s[0];
    e[0] = cos(ang);
    e[1] = sin(ang);
    /* W, W', W'' with J e = (-e_y, e_x) */
    w0[0] = p[5] + lam * s[0] * p[7] + L * e[0];
    w0[1] = p[6] + lam * s[0] * p[8] + L * e[1];
    w1[0] = lam * s[1] * p[7] - L * kap * s[1] * e[1];
    w1[1] = lam * s[1] * p[8] + L * kap * s[1] * e[0];
    w2[0] = lam * s[2] * p[7] + L * (-kap * s[2] * e[1] - kap * kap * s[1] * s[1] * e[0]);
    w2[1] = lam * s[2] * p[8] + L * (kap * s[2] * e[0] - kap * kap * s[1] * s[1] * e[1]);
    /* Q = R W, Q' = R (W' - sigma J W), Q'' = R (W'' - 2 sigma J W' - W), R = R(gamma - sigma u) */
    ang = p[1] - sigma * u;
    cs = cos(ang);
    sn = sin(ang);
    {
        double a[2], b[2];
        a[0] = w1[0] + sigma * w0[1];
        a[1] = w1[1] - sigma * w0[0];
        b[0] = w2[0] + 2.0 * sigma * w1[1] - w0[0];
        b[1] = w2[1] - 2.0 * sigma * w1[0] - w0[1];
        q0[0] = cs * w0[0] - sn * w0[1];
        q0[1] = sn * w0[0] + cs * w0[1];
        q1[0] = cs * a[0] - sn * a[1];
        q1[1] = sn * a[0] + cs * a[1];
        q2[0] = cs * b[0] - sn * b[1];
        q2[1] = sn * b[0] + cs * b[1];
    }
}

int ld_cam_point_gap(const ld_cams *C, int c, const double *p, double *g, double *grad,
                     double *hess, double *u_out)
{
    const double *par = C->par + LD_CAM_NPAR * c;
    double q0[2], q1[2], q2[2], r[2], u = 0.0, phi, d, rate, D, Dp, du, speed, t[2], n[2];
    double turning, curv;
    int it, done = 0;
    phi = atan2(p[1], p[0]);
    if (C->kind[c] == LD_CAM_POLAR) {
        u = phi;
    } else {
        /* the curve's point at p's polar angle, roughly: Newton's method on the angle */
        for (it = 0; it < MAX_ITER; it++) {
            point_curve(C, c, u, q0, q1, q2);
            d = remainder(atan2(q0[1], q0[0]) - phi, TWO_PI);
            if (fabs(d) < 1e-3) break;
            rate = (q0[0] * q1[1] - q0[1] * q1[0]) / (q0[0] * q0[0] + q0[1] * q0[1]);
            if (fabs(rate) < 0.1) rate = rate < 0.0 ? -0.1 : 0.1;
            u -= d / rate;
        }
    }
    /* the foot of the perpendicular */
    for (it = 0; it < MAX_ITER && !done; it++) {
        point_curve(C, c, u, q0, q1, q2);
        r[0] = q0[0] - p[0];
        r[1] = q0[1] - p[1];
        D = q1[0] * r[0] + q1[1] * r[1];
        Dp = q2[0] * r[0] + q2[1] * r[1] + q1[0] * q1[0] + q1[1] * q1[1];
        if (!(Dp > 0.0)) Dp = q1[0] * q1[0] + q1[1] * q1[1];   /* Gauss-Newton */
        du = -D / Dp;
        u += du;
        done = fabs(du) < STEP_DONE;
    }
    if (!done || !isfinite(u)) {
        *g = NAN;
        return 1;
    }
    point_curve(C, c, u, q0, q1, q2);
    speed = sqrt(q1[0] * q1[0] + q1[1] * q1[1]);
    t[0] = q1[0] / speed;
    t[1] = q1[1] / speed;
    turning = q0[0] * q1[1] - q0[1] * q1[0] >= 0.0 ? 1.0 : -1.0;
    n[0] = turning * t[1];
    n[1] = -turning * t[0];
    r[0] = p[0] - q0[0];
    r[1] = p[1] - q0[1];
    *g = n[0] * r[0] + n[1] * r[1] - par[2];
    grad[0] = n[0];
    grad[1] = n[1];
    Dp = speed * speed - (q2[0] * r[0] + q2[1] * r[1]);
    curv = -(q2[0] * n[0] + q2[1] * n[1]) / Dp;
    hess[0] = curv * t[0] * t[0];
    hess[1] = curv * t[0] * t[1];
    hess[2] = curv * t[1] * t[1];
    if (u_out) *u_out = u;
    return 0;
}

/* The support of a measured convex surface at normal angle psi (LD_CAM_POLAR_FACE). */
static int polar_support(const ld_cams *C, int c, double psi, double *h, double *u_out)
{
    double q0[2], q1[2], q2[2], u = psi, du, speed, rate, ang, n[2], t[2];
    int it, done = 0;
    for (it = 0; it < MAX_ITER && !done; it++) {
        point_curve(C, c, u, q0, q1, q2);
        speed = q1[0] * q1[0] + q1[1] * q1[1];
        rate = (q1[0] * q2[1] - q1[1] * q2[0]) / speed;      /* Psi' */
        ang = atan2(-q1[0], q1[1]);                           /* the outward normal's */
        if (!(rate > 0.0)) break;                             /* not convex here */
        du = -remainder(ang - psi, TWO_PI) / rate;
        u += du;
        done = fabs(du) < STEP_DONE;
    }
    if (!done || !isfinite(u)) {
        h[0] = h[1] = h[2] = NAN;
        return 1;
    }
    point_curve(C, c, u, q0, q1, q2);
    speed = sqrt(q1[0] * q1[0] + q1[1] * q1[1]);
    rate = (q1[0] * q2[1] - q1[1] * q2[0]) / (speed * speed);
    n[0] = q1[1] / speed;
    n[1] = -q1[0] / speed;
    t[0] = -n[1];
    t[1] = n[0];
    h[0] = n[0] * q0[0] + n[1] * q0[1];
    h[1] = t[0] * q0[0] + t[1] * q0[1];
    h[2] = speed / rate - h[0];
    if (u_out) *u_out = u;
    return 0;
}

int ld_cam_face_support(const ld_cams *C, int c, double psi, double *h, double *u_out)
{
    const double *p = C->par + LD_CAM_NPAR * c;
    double sigma = p[0], gamma = p[1], lam = p[3], kap = p[4];
    double s[3], u, phi, res, dpsi, du, ae, aj, H1, H2;
    int it, done = 0;
    if (C->kind[c] == LD_CAM_POLAR_FACE) return polar_support(C, c, psi, h, u_out);
    u = sigma * remainder(gamma + p[8] - psi, TWO_PI);
    for (it = 0; it < MAX_ITER && !done; it++) {
        ld_cam_law(C, c, u, s);
        res = remainder(gamma + p[8] + kap * s[0] - sigma * u - psi, TWO_PI);
        dpsi = kap * s[1] - sigma;
        du = -res / dpsi;
        u += du;
        done = fabs(du) < STEP_DONE;
    }
    if (!done || !isfinite(u)) {
        h[0] = h[1] = h[2] = NAN;
        return 1;
    }
    ld_cam_law(C, c, u, s);
    phi = p[8] + kap * s[0];
    ae = p[6] * cos(phi) + p[7] * sin(phi);
    aj = -p[6] * sin(phi) + p[7] * cos(phi);
    dpsi = kap * s[1] - sigma;
    H1 = lam * s[1] + kap * s[1] * aj;
    H2 = lam * s[2] + kap * s[2] * aj - kap * kap * s[1] * s[1] * ae;
    h[0] = p[5] + lam * s[0] + ae;
    h[1] = H1 / dpsi;
    h[2] = (H2 * dpsi - H1 * kap * s[2]) / (dpsi * dpsi * dpsi);
    if (u_out) *u_out = u;
    return 0;
}
