/*
 * Plain-C tests of the cam curves (ld_cams.c) alone. Cam 0 is a POINT curve whose law is a
 * dwell at 0 over [0, pi) and a harmonic rise and return of 0.01 over [pi, 2 pi) (a translating
 * follower at offset 0.004 on a pitch radius of 0.04); cam 1 a POLAR circle of radius 0.03
 * with a roller of 0.005; cam 2 a FACE curve of an oscillating flat face on the same law.
 * Checked: the law against its formula; the gap of points on the dwell's circular arc
 * against |p| - R; the gap's gradient and Hessian against central differences of the gap
 * (and of the gradient) at points near each curve; the gradient a unit vector; the support
 * function's h' and h'' against differences of h. Prints one line per check and
 * "N passed, M failed".
 */
#include <math.h>
#include <stdio.h>

#include "ld_cams.h"

#define PI 3.14159265358979323846

static int passed = 0, failed = 0;

static void check(int ok, const char *what, double err)
{
    printf("%s: %s (%.2e)\n", ok ? "ok" : "FAIL", what, err);
    if (ok) passed++; else failed++;
}

/* laws: cams 0 and 2 have the same pieces (a dwell, then 0.005 - 0.005 cos 2t over the
 * second half-turn: up and back, continuous in value and slope); cam 1 the constant 0.03. */
static const int kind[] = {LD_CAM_POINT, LD_CAM_POLAR, LD_CAM_FACE};
static const int first[] = {0, 2, 3, 5};
static const double start[] = {0.0, PI, 0.0, 0.0, PI};
static const double coef[] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0,
    0.005, 0, 0, 0, 0, 0, 0, 0, 0.0, -0.005, 2.0,
    0.03, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0,
    0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0,
    0.005, 0, 0, 0, 0, 0, 0, 0, 0.0, -0.005, 2.0,
};
/* sigma, gamma, radius, lam, kappa, then by kind */
static const double par[] = {
    1.0, 0.2, 0.0, 1.0, 0.0, 0.004, 0.0398, 0.0, 1.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.005, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    1.0, 0.3, 0.0, 0.0, 1.0, 0.01, 0.06, 0.02, 1.2, 0.0, 0.0, 0.0,
};

static double gap(const ld_cams *C, int c, double x, double y, double *grad, double *hess)
{
    double p[2], g, gr[2], h[3], u;
    p[0] = x;
    p[1] = y;
    ld_cam_point_gap(C, c, p, &g, grad ? grad : gr, hess ? hess : h, &u);
    return g;
}

static void point_checks(const ld_cams *C, int c, const char *name)
{
    double eps = 1e-6, err_g = 0.0, err_h = 0.0, unit = 0.0, grad[2], hess[3], gp[2], gm[2];
    double x, y, ang, r;
    int k;
    char what[160];
    for (k = 0; k < 12; k++) {
        ang = 0.1 + 0.5 * k;
        r = 0.042 + 0.002 * sin(3.0 * k);
        x = r * cos(ang);
        y = r * sin(ang);
        gap(C, c, x, y, grad, hess);
        unit = fmax(unit, fabs(hypot(grad[0], grad[1]) - 1.0));
        err_g = fmax(err_g, fabs((gap(C, c, x + eps, y, 0, 0) - gap(C, c, x - eps, y, 0, 0))
                                 / (2 * eps) - grad[0]));
        err_g = fmax(err_g, fabs((gap(C, c, x, y + eps, 0, 0) - gap(C, c, x, y - eps, 0, 0))
                                 / (2 * eps) - grad[1]));
        gap(C, c, x + eps, y, gp, 0);
        gap(C, c, x - eps, y, gm, 0);
        err_h = fmax(err_h, fabs((gp[0] - gm[0]) / (2 * eps) - hess[0]));
        err_h = fmax(err_h, fabs((gp[1] - gm[1]) / (2 * eps) - hess[1]));
        gap(C, c, x, y + eps, gp, 0);
        gap(C, c, x, y - eps, gm, 0);
        err_h = fmax(err_h, fabs((gp[1] - gm[1]) / (2 * eps) - hess[2]));
    }
    snprintf(what, sizeof what, "%s: the gap's gradient is a unit vector", name);
    check(unit < 1e-14, what, unit);
    snprintf(what, sizeof what, "%s: the gradient against differences of the gap", name);
    check(err_g < 1e-8, what, err_g);
    snprintf(what, sizeof what, "%s: the Hessian against differences of the gradient", name);
    check(err_h < 1e-6, what, err_h);
}

int main(void)
{
    ld_cams C;
    double s[3], err, R, g, x, y, h[3], hp[3], hm[3], u, eps = 1e-6, psi;
    int k;
    C.ncam = 3;
    C.kind = kind;
    C.par = par;
    C.first = first;
    C.start = start;
    C.coef = coef;

    /* the law */
    err = 0.0;
    for (k = 0; k < 20; k++) {
        u = 0.31 * k;
        ld_cam_law(&C, 0, u, s);
        u -= 2.0 * PI * floor(u / (2.0 * PI));
        if (u < PI) {
            err = fmax(err, fabs(s[0]) + fabs(s[1]) + fabs(s[2]));
        } else {
            err = fmax(err, fabs(s[0] - (0.005 - 0.005 * cos(2.0 * (u - PI)))));
            err = fmax(err, fabs(s[1] - 0.01 * sin(2.0 * (u - PI))));
            err = fmax(err, fabs(s[2] - 0.02 * cos(2.0 * (u - PI))));
        }
    }
    check(err < 1e-17, "the law against its formula, over turns", err);

    /* On the dwell the pitch curve is the circle through W = (0.004, 0.0398) about the
     * centre: the gap of a point is its distance from the centre minus that radius. Points
     * whose foot lies on the dwell: program angles in (0, pi) are cam-frame angles
     * gamma - u + angle(W) in (0.2 + 1.47 - pi, 0.2 + 1.47). */
    R = hypot(0.004, 0.0398);
    err = 0.0;
    for (k = 0; k < 9; k++) {
        double ang = 0.2 + atan2(0.0398, 0.004) - 0.3 - 0.3 * k;
        x = (R + 0.003 - 0.001 * k) * cos(ang);
        y = (R + 0.003 - 0.001 * k) * sin(ang);
        g = gap(&C, 0, x, y, 0, 0);
        err = fmax(err, fabs(g - (hypot(x, y) - R)));
    }
    check(err < 1e-16, "on the dwell, the gap is the distance from its circle", err);
    /* the polar circle with its roller: |p| - 0.03 - 0.005 */
    err = 0.0;
    for (k = 0; k < 9; k++) {
        x = (0.036 + 0.001 * k) * cos(0.7 * k);
        y = (0.036 + 0.001 * k) * sin(0.7 * k);
        err = fmax(err, fabs(gap(&C, 1, x, y, 0, 0) - (hypot(x, y) - 0.035)));
    }
    check(err < 1e-16, "a polar circle's gap is the distance less both radii", err);

    point_checks(&C, 0, "pitch curve");
    point_checks(&C, 1, "polar circle");

    /* the support function's derivatives against differences of h */
    err = 0.0;
    for (k = 0; k < 16; k++) {
        psi = -3.0 + 0.4 * k;
        if (ld_cam_face_support(&C, 2, psi, h, &u) != 0) {
            err = INFINITY;
            break;
        }
        ld_cam_face_support(&C, 2, psi + eps, hp, &u);
        ld_cam_face_support(&C, 2, psi - eps, hm, &u);
        err = fmax(err, fabs((hp[0] - hm[0]) / (2 * eps) - h[1]));
        err = fmax(err, fabs((hp[1] - hm[1]) / (2 * eps) - h[2]) * 1e-2);
    }
    check(err < 1e-8, "h' and h'' against differences of h and h'", err);

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
