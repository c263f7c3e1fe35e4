/*
 * Plain-C tests of the angle rows (ld_angles.c) alone: two planar bodies (q = x, y, ux, uy
 * of each) with two rows, as the compiler writes them for gear pairs. Row 0 is an external
 * pair on the ground, (m/2) wrap(z1 atan2(uy1, ux1) + z2 atan2(uy2, ux2) - c); row 1 a
 * pair on a carrier (body 0): 3 times body 1's angle from body 0's, atan2(u0 x u1, u0 . u1),
 * plus a rack-like form 2 (x1 / 2 + x0 y1 / 4). The slots are dense indices (row * 8 +
 * column, i * 8 + j), so the kernels' values are the dense Jacobian and Hessian. Checked:
 * Phi against atan2 by hand and its wrap over a full turn, Phi_q against finite differences
 * of Phi, gamma against the rate of Phi_q v along v, the Hessian term against finite
 * differences of Phi_q^T lam. Prints one line per check and "N passed, M failed".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ld_angles.h"

#define NQ 8
#define PI 3.14159265358979323846

static int passed = 0, failed = 0;

static void check(int ok, const char *what, double err)
{
    printf("%s: %s (%.2e)\n", ok ? "ok" : "FAIL", what, err);
    if (ok) passed++; else failed++;
}

/* Angles: 0 (row 0) z1 = 20 turns of body 0; 1 (row 0) z2 = 50 turns of body 1; 2 (row 1)
 * 3 turns of body 1 from body 0; 3 (row 1) the form 2 (x1 / 2 + x0 y1 / 4), kind 1. */
static const int row[] = {0, 1};
static const double scale[] = {0.001, 0.004};
static const int first[] = {0, 2, 4};
static const int kind[] = {0, 0, 0, 1};
static const double mult[] = {20.0, 50.0, 3.0, 2.0};
static const int var_start[] = {0, 2, 4, 8, 11};
static const int var[] = {2, 3, 6, 7, 2, 3, 6, 7, 0, 4, 5};
/* S then C of each angle, terms as (a, b) local indices */
static const int form_start[] = {0, 1, 2, 3, 4, 6, 8, 11, 11};
static const int form_a[] = {1, 0, 1, 0, 0, 1, 0, 1, 1, 0, -1};
static const int form_b[] = {-1, -1, -1, -1, 3, 2, 2, 3, -1, 2, -1};
static const double form_coef[] = {1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 0.5, 0.25, 0.1};

static int jslot[11], hstart[5], hslot[4 + 4 + 16 + 9];

static ld_angles rows(const double *offset)
{
    ld_angles A;
    int k, i, j, r, n = 0;
    memset(&A, 0, sizeof A);
    for (k = 0; k < 4; k++) {
        r = k < 2 ? 0 : 1;
        hstart[k] = n;
        for (i = var_start[k]; i < var_start[k + 1]; i++) {
            jslot[i] = r * NQ + var[i];
            for (j = var_start[k]; j < var_start[k + 1]; j++) hslot[n++] = var[i] * NQ + var[j];
        }
    }
    hstart[4] = n;
    A.nrow = 2;
    A.row = row;
    A.scale = scale;
    A.offset = offset;
    A.first = first;
    A.nangle = 4;
    A.kind = kind;
    A.mult = mult;
    A.var_start = var_start;
    A.var = var;
    A.jslot = jslot;
    A.hstart = hstart;
    A.hslot = hslot;
    A.form_start = form_start;
    A.form_a = form_a;
    A.form_b = form_b;
    A.form_coef = form_coef;
    return A;
}

/* qp, qm <- q with coordinate j moved by +h, -h */
static void shifted(const double *q, int j, double h, double *qp, double *qm)
{
    memcpy(qp, q, sizeof(double) * NQ);
    memcpy(qm, q, sizeof(double) * NQ);
    qp[j] += h;
    qm[j] -= h;
}

static void jacobian(const ld_angles *A, const double *q, double *J)
{
    memset(J, 0, sizeof(double) * 2 * NQ);
    ld_angles_phi_q(A, q, J);
}

int main(void)
{
    double q[NQ] = {0.3, -0.2, 0.8, 0.55, 0.1, 0.4, -0.35, 0.9};
    double v[NQ] = {0.7, -1.1, 0.4, 0.9, -0.6, 0.2, 1.3, -0.5};
    double lam[2] = {0.9, -1.7}, offset[2] = {0.0, 0.0};
    double phi[2], p1[2], p2[2], J[2 * NQ], Jp[2 * NQ], Jm[2 * NQ], g[2], H[NQ * NQ];
    double qp[NQ], qm[NQ], err, t, c, s, h = 1e-6, want;
    int i, j, r;
    ld_angles A = rows(offset);

    /* Phi by hand (offsets zero) */
    ld_angles_phi(&A, q, phi);
    t = 20.0 * atan2(q[3], q[2]) + 50.0 * atan2(q[7], q[6]);
    want = 0.001 * remainder(t, 2.0 * PI);
    err = fabs(phi[0] - want);
    t = 3.0 * atan2(q[2] * q[7] - q[3] * q[6], q[2] * q[6] + q[3] * q[7])
        + 2.0 * (0.5 * q[4] + 0.25 * q[0] * q[5] + 0.1);
    err = fmax(err, fabs(phi[1] - 0.004 * remainder(t, 2.0 * PI)));
    check(err < 1e-15, "Phi as atan2 by hand, wrapped", err);

    /* A whole turn of body 0 changes neither row (its multipliers are whole numbers) */
    memcpy(qp, q, sizeof q);
    c = cos(2.0 * PI / 3.0);
    s = sin(2.0 * PI / 3.0);
    for (r = 0; r < 3; r++) {     /* three thirds of a turn */
        double ux = qp[2], uy = qp[3];
        qp[2] = c * ux - s * uy;
        qp[3] = s * ux + c * uy;
    }
    ld_angles_phi(&A, qp, p1);
    err = fmax(fabs(p1[0] - phi[0]), fabs(p1[1] - phi[1]));
    check(err < 1e-15, "a full turn of a gear leaves its rows", err);

    /* Phi_q against central differences of Phi */
    jacobian(&A, q, J);
    err = 0.0;
    for (j = 0; j < NQ; j++) {
        shifted(q, j, h, qp, qm);
        ld_angles_phi(&A, qp, p1);
        ld_angles_phi(&A, qm, p2);
        for (r = 0; r < 2; r++)
            err = fmax(err, fabs((p1[r] - p2[r]) / (2 * h) - J[r * NQ + j]));
    }
    check(err < 1e-9, "Phi_q against differences of Phi", err);

    /* gamma = -(Phi_q v)_q v */
    ld_angles_gamma(&A, q, v, g);
    for (i = 0; i < NQ; i++) {
        qp[i] = q[i] + h * v[i];
        qm[i] = q[i] - h * v[i];
    }
    jacobian(&A, qp, Jp);
    jacobian(&A, qm, Jm);
    err = 0.0;
    for (r = 0; r < 2; r++) {
        double rate = 0.0;
        for (j = 0; j < NQ; j++) rate += (Jp[r * NQ + j] - Jm[r * NQ + j]) / (2 * h) * v[j];
        err = fmax(err, fabs(g[r] + rate));
    }
    check(err < 1e-8, "gamma against the rate of Phi_q v", err);

    /* the Hessian term against differences of Phi_q^T lam */
    memset(H, 0, sizeof H);
    ld_angles_hessian(&A, q, lam, H);
    err = 0.0;
    for (j = 0; j < NQ; j++) {
        shifted(q, j, h, qp, qm);
        jacobian(&A, qp, Jp);
        jacobian(&A, qm, Jm);
        for (i = 0; i < NQ; i++) {
            double d = 0.0;
            for (r = 0; r < 2; r++) d += lam[r] * (Jp[r * NQ + i] - Jm[r * NQ + i]) / (2 * h);
            err = fmax(err, fabs(d - H[i * NQ + j]));
        }
    }
    check(err < 1e-8, "Hessian term against differences of Phi_q^T lam", err);

    /* an offset moves the row's zero: Phi = 0 at q with the offsets of q */
    offset[0] = 20.0 * atan2(q[3], q[2]) + 50.0 * atan2(q[7], q[6]);
    offset[1] = 0.0;
    ld_angles_phi(&A, q, p1);
    check(fabs(p1[0]) < 1e-15, "the offset is the row's zero", fabs(p1[0]));

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
