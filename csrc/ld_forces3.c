/*
 * ld_forces3.c -- the spatial geometry of the force kernels (see ld_forces.h): the scalar
 * coordinate of a record between two bodies in natural coordinates, with its exact
 * gradient and Hessian, and the point forces and torques of loads.
 *
 * A body's twelve coordinates are r, e_1, e_2, e_3 (centre of mass and principal axes); a
 * body point r + sum_k p_k e_k and a body direction sum_k a_k e_k are linear in them, so
 * every coordinate below is a function of linear maps J (3 x 24 on the record's local
 * block: side 0's twelve coordinates, then side 1's) and its Hessian is built from them.
 */
#include "ld_forces_eval.h"

#include <math.h>
#include <stddef.h>

#include "ld_laws.h"
#include "ld_system.h"

#define NL 24   /* local block side */
#define TWO_PI 6.283185307179586476925286766559

/* The twelve coordinates r, e_1, e_2, e_3 of spatial body b: in q itself without a view
 * (no rods), else gathered into buf (a rod's e_2, e_3 zero). */
static const double *body_coordinates(const ld_forces *F, int b, const double *q,
                                      double *buf)
{
    int j;
    if (!F->body_view) return q + 12 * b;
    for (j = 0; j < 12; j++) {
        int g = F->body_view[12 * b + j];
        buf[j] = g >= 0 ? q[g] : 0.0;
    }
    return buf;
}

/* A point (origin = 1) or direction (origin = 0) with components c on side `side` of record
 * r: its value x[3] and x += J[3 x NL] (accumulated; the caller zeroes J). The ground's
 * are the constant c. */
static void side_map(const ld_forces *F, int r, int side, const double *c, int origin,
                     const double *q, double *x, double *J, double sign)
{
    int b = F->body[2 * r + side], i, k, o = 12 * side;
    double buf[12];
    const double *z;
    if (b < 0) {
        for (i = 0; i < 3; i++) x[i] = c[i];
        return;
    }
    z = body_coordinates(F, b, q, buf);
    for (i = 0; i < 3; i++) {
        x[i] = origin ? z[i] : 0.0;
        for (k = 0; k < 3; k++) x[i] += c[k] * z[3 + 3 * k + i];
        if (origin) J[NL * i + o + i] += sign;
        for (k = 0; k < 3; k++) J[NL * i + o + 3 + 3 * k + i] += sign * c[k];
    }
}

/* g += A^T y + B^T x and H += A^T B + B^T A for the bilinear x . y (x = A q, y = B q). */
static void bilinear(const double *x, const double *A, const double *y, const double *B,
                     double *g, double *H)
{
    int i, j, m;
    for (j = 0; j < NL; j++)
        for (m = 0; m < 3; m++) g[j] += A[NL * m + j] * y[m] + B[NL * m + j] * x[m];
    for (i = 0; i < NL; i++)
        for (j = 0; j < NL; j++) {
            double h = 0.0;
            for (m = 0; m < 3; m++)
                h += A[NL * m + i] * B[NL * m + j] + B[NL * m + i] * A[NL * m + j];
            H[NL * i + j] += h;
        }
}

int ld_forces3_coordinate(const ld_forces *F, const ld_forces_run *run, int r,
                          const double *q, record_eval *e)
{
    const double *geo = F->geom3 + 15 * r;
    int i, j, side;
    e->n = NL;
    for (side = 0; side < 2; side++) {
        int b = F->body[2 * r + side];
        for (j = 0; j < 12; j++)
            e->idx[12 * side + j] = b < 0 ? -1 : ld_forces3_index(F, b, j);
    }
    for (i = 0; i < NL; i++) e->g[i] = 0.0;
    for (i = 0; i < NL * NL; i++) e->H[i] = 0.0;
    e->angle = 0.0;

    if (F->coord[r] == LD_COORD_ANGLE) {
        double a[3], b[3], d[3], Ja[3 * NL] = {0}, Jb[3 * NL] = {0}, Jd[3 * NL] = {0};
        double x, y, rho2, gx[NL] = {0}, gy[NL] = {0}, Hx[NL * NL] = {0}, Hy[NL * NL] = {0};
        double principal, ref;
        side_map(F, r, 0, geo + 6, 0, q, a, Ja, 1.0);
        side_map(F, r, 0, geo + 9, 0, q, b, Jb, 1.0);
        side_map(F, r, 1, geo + 12, 0, q, d, Jd, 1.0);
        x = d[0] * a[0] + d[1] * a[1] + d[2] * a[2];
        y = d[0] * b[0] + d[1] * b[1] + d[2] * b[2];
        rho2 = x * x + y * y;
        if (!(rho2 > 1e-24)) return LD_ERR_DOMAIN;   /* d along the axis: no angle */
        bilinear(d, Jd, a, Ja, gx, Hx);
        bilinear(d, Jd, b, Jb, gy, Hy);
        for (i = 0; i < NL; i++) e->g[i] = (x * gy[i] - y * gx[i]) / rho2;
        for (i = 0; i < NL; i++)
            for (j = 0; j < NL; j++)
                e->H[NL * i + j] = (x * Hy[NL * i + j] - y * Hx[NL * i + j]) / rho2 +
                    ((y * y - x * x) * (gy[i] * gx[j] + gx[i] * gy[j]) +
                     2.0 * x * y * (gx[i] * gx[j] - gy[i] * gy[j])) / (rho2 * rho2);
        principal = atan2(y, x);
        ref = run->angle_ref[r];
        e->angle = ref + remainder(principal - ref, TWO_PI);
        e->s = e->angle;
        return LD_OK;
    } else {
        double p0[3], p1[3], d[3], D[3 * NL] = {0};
        side_map(F, r, 0, geo, 1, q, p0, D, -1.0);
        side_map(F, r, 1, geo + 3, 1, q, p1, D, 1.0);
        for (i = 0; i < 3; i++) d[i] = p1[i] - p0[i];
        if (F->coord[r] == LD_COORD_DISTANCE) {
            double L = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), n[3];
            double scale = 1.0;
            for (i = 0; i < 3; i++) scale += fabs(p0[i]) + fabs(p1[i]);
            if (!(L > 1e-12 * scale)) {
                if (!ld_forces_open_at_zero(F, r)) return LD_ERR_DOMAIN;
                e->s = L;   /* a centred ball: no force, and g = H = 0 */
                return LD_OK;
            }
            for (i = 0; i < 3; i++) n[i] = d[i] / L;
            e->s = L;
            for (j = 0; j < NL; j++)
                e->g[j] = n[0] * D[j] + n[1] * D[NL + j] + n[2] * D[2 * NL + j];
            /* H = D^T (I - n n^T) D / L */
            for (i = 0; i < NL; i++) {
                double P[3];
                int m;
                for (m = 0; m < 3; m++)
                    P[m] = (D[NL * m + i] - n[m] * e->g[i]) / L;
                for (j = 0; j < NL; j++)
                    e->H[NL * i + j] = P[0] * D[j] + P[1] * D[NL + j] + P[2] * D[2 * NL + j];
            }
        } else {   /* SLIDE: s = a . d, a a direction of side 0 */
            double a[3], Ja[3 * NL] = {0};
            side_map(F, r, 0, geo + 6, 0, q, a, Ja, 1.0);
            e->s = a[0] * d[0] + a[1] * d[1] + a[2] * d[2];
            bilinear(a, Ja, d, D, e->g, e->H);
        }
        return LD_OK;
    }
}

/* [x]_cross added with weight w into the 3 x 3 block (row-major, leading dimension ld). */
static void add_cross(double *B, int ld, const double *x, double w)
{
    B[1] -= w * x[2];  B[2] += w * x[1];
    B[ld] += w * x[2]; B[ld + 2] -= w * x[0];
    B[2 * ld] -= w * x[1]; B[2 * ld + 1] += w * x[0];
}

void ld_forces3_load(const ld_forces *F, int l, double t, const double *q, double *Ql,
                     double *G, double *fq)
{
    const double *p = F->load_point + 3 * l;
    int torque = F->load_kind && F->load_kind[l] == LD_LOAD_TORQUE, body = F->load_frame[l];
    double c[3], lf[3], B[144], buf[12];
    const double *qb = body_coordinates(F, F->load_body[l], q, buf);
    int i, j, k;
    for (k = 0; k < 3; k++) {
        lf[k] = 0.0;
        if (F->load_laws[3 * l + k] >= 0) {
            double val[3];
            ld_law_eval(F->laws, F->load_laws[3 * l + k], t, val);
            lf[k] = val[0];
        }
    }
    for (k = 0; k < 3; k++) {   /* c: components along the principal axes (body frame) */
        const double *T = F->load_axes + 9 * l + 3 * k;
        c[k] = body && F->load_axes ? T[0] * lf[0] + T[1] * lf[1] + T[2] * lf[2] : lf[k];
    }
    for (i = 0; i < 3; i++) {
        G[i] = body ? c[0] * qb[3 + i] + c[1] * qb[6 + i] + c[2] * qb[9 + i] : c[i];
        Ql[i] = torque ? 0.0 : G[i];
    }
    for (k = 0; k < 3; k++) {
        const double *ek = qb + 3 + 3 * k;
        for (i = 0; i < 3; i++)
            Ql[3 + 3 * k + i] = torque
                ? 0.5 * (G[(i + 1) % 3] * ek[(i + 2) % 3] - G[(i + 2) % 3] * ek[(i + 1) % 3])
                : p[k] * G[i];
    }
    if (!fq || (!torque && !body)) return;   /* a global force is constant in q */
    for (i = 0; i < 144; i++) B[i] = 0.0;
    if (!torque) {   /* dG/de_j = c_j I: rows r (weight 1) and e_k (weight p_k) */
        for (j = 0; j < 3; j++)
            for (i = 0; i < 3; i++) {
                B[12 * i + 3 + 3 * j + i] += c[j];
                for (k = 0; k < 3; k++) B[12 * (3 + 3 * k + i) + 3 + 3 * j + i] += p[k] * c[j];
            }
    } else {
        /* Q_e_k = G x e_k / 2: d/de_k = [G]x / 2, and for a body-frame torque (G = sum_j c_j
         * e_j) d/de_j = -c_j [e_k]x / 2, which with j = k cancels the c_k e_k part of G. */
        for (k = 0; k < 3; k++) {
            double *Bk = B + 12 * (3 + 3 * k) + 3;
            add_cross(Bk + 3 * k, 12, G, 0.5);
            if (!body) continue;
            for (j = 0; j < 3; j++) add_cross(Bk + 3 * j, 12, qb + 3 + 3 * k, -0.5 * c[j]);
        }
    }
    for (i = 0; i < 144; i++) {
        int s = F->load_slot_q[144 * l + i];
        if (s >= 0) fq[s] += B[i];
    }
}
