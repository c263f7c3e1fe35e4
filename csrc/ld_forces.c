/*
 * ld_forces.c -- force elements: see ld_forces.h for the model and the conventions.
 *
 * Each actuator record is evaluated on its local block of at most 8 coordinates (the two
 * sides' x, y, ux, uy): the coordinate s, its gradient g = ds/dq and Hessian H, then
 *   Q = f g,   Q_q = f H + g (df/dq)^T with df/dq = -k g - c H v,   Q_v = -c g g^T.
 * These are the exact derivatives, so the integrator's iteration matrix stays exact and a
 * stiff element costs no extra Newton iterations.
 */
#include "ld_forces_eval.h"

#include <math.h>
#include <stddef.h>

#include "ld_system.h"

#define TWO_PI 6.283185307179586476925286766559

static int spatial(const ld_forces *F)
{
    return F->stride == LD_STRIDE_SPATIAL;
}

/* Point of side `side` of record r: position and A = d point / d (x, y, ux, uy). */
static void side_point(const ld_forces *F, int r, int side, const double *q, double *p,
                       double *A)
{
    int b = F->body[2 * r + side];
    double xi = F->geom[6 * r + 2 * side], eta = F->geom[6 * r + 2 * side + 1];
    if (b < 0) {
        p[0] = xi;
        p[1] = eta;
        A[0] = A[1] = A[2] = A[3] = A[4] = A[5] = A[6] = A[7] = 0.0;
        return;
    }
    q += 4 * b;
    p[0] = q[0] + xi * q[2] - eta * q[3];
    p[1] = q[1] + xi * q[3] + eta * q[2];
    A[0] = 1.0; A[1] = 0.0; A[2] = xi;  A[3] = -eta;
    A[4] = 0.0; A[5] = 1.0; A[6] = eta; A[7] = xi;
}

/* Gradient and Hessian (4 x 4 block at ux, uy) of angle(u) = atan2(uy, ux). */
static int angle_derivs(const double *u, double sign, double *g2, double *h3)
{
    double r2 = u[0] * u[0] + u[1] * u[1], r4;
    if (!(r2 > 0.0)) return LD_ERR_DOMAIN;
    r4 = r2 * r2;
    g2[0] = -sign * u[1] / r2;
    g2[1] = sign * u[0] / r2;
    h3[0] = sign * 2.0 * u[0] * u[1] / r4;                 /* (ux, ux) */
    h3[1] = sign * (u[1] * u[1] - u[0] * u[0]) / r4;       /* (ux, uy) = (uy, ux) */
    h3[2] = -sign * 2.0 * u[0] * u[1] / r4;                /* (uy, uy) */
    return LD_OK;
}

/* Adds an angle's gradient g (at ux, uy) and Hessian h (xx, xy, yy) to side block o. */
static void add_angle(record_eval *e, int o, const double *g, const double *h)
{
    e->g[o] += g[0];
    e->g[o + 1] += g[1];
    e->H[o * 8 + o] += h[0];
    e->H[o * 8 + o + 1] += h[1];
    e->H[(o + 1) * 8 + o] += h[1];
    e->H[(o + 1) * 8 + o + 1] += h[2];
}

/* Adds weight * (relative angle of the two sides) to e->g and e->H; returns the angle on
 * the branch nearest to run->angle_ref[r] (continuous over turns). */
static int angle_part(const ld_forces *F, const ld_forces_run *run, int r, const double *q,
                      double weight, record_eval *e, double *angle)
{
    double u1[2] = {1.0, 0.0}, u2[2] = {1.0, 0.0}, g[2], h[3], ref, principal;
    int side;
    if (F->body[2 * r] >= 0) { u1[0] = q[e->idx[2]]; u1[1] = q[e->idx[3]]; }
    if (F->body[2 * r + 1] >= 0) { u2[0] = q[e->idx[6]]; u2[1] = q[e->idx[7]]; }
    for (side = 0; side < 2; side++) {
        int o = 4 * side + 2;
        if (F->body[2 * r + side] < 0) continue;
        if (angle_derivs(side ? u2 : u1, side ? weight : -weight, g, h) != LD_OK)
            return LD_ERR_DOMAIN;
        add_angle(e, o, g, h);
    }
    principal = atan2(u1[0] * u2[1] - u1[1] * u2[0], u1[0] * u2[0] + u1[1] * u2[1]);
    ref = run->angle_ref[r];
    *angle = ref + remainder(principal - ref, TWO_PI);
    return LD_OK;
}

/* e->g += w1 g1 + w2 g2 and e->H += w1 H1 + w2 H2 + h11 g1 g1^T + h12 (g1 g2^T + g2 g1^T)
 * + h22 g2 g2^T: an outer function of two forms (value-free: the caller sets e->s) */
static void add_outer(record_eval *e, const double *w, const double *h, const double *g1,
                      const double *g2, const double *H1, const double *H2)
{
    int i, j;
    for (i = 0; i < 8; i++) {
        e->g[i] += w[0] * g1[i] + w[1] * g2[i];
        for (j = 0; j < 8; j++)
            e->H[8 * i + j] += w[0] * H1[8 * i + j] + w[1] * H2[8 * i + j]
                               + h[0] * g1[i] * g1[j] + h[1] * (g1[i] * g2[j] + g2[i] * g1[j])
                               + h[2] * g2[i] * g2[j];
    }
}

/* The forms x = a . b and y = a x b of two vectors linear in the local coordinates (a[k],
 * b[k] their values, Da, Db their 2 x 8 derivatives): gradients gx, gy and Hessians. */
static void dot_cross(const double *a, const double *Da, const double *b, const double *Db,
                      double *gx, double *gy, double *Hx, double *Hy)
{
    int i, j;
    for (i = 0; i < 8; i++) {
        gx[i] = a[0] * Db[i] + a[1] * Db[8 + i] + b[0] * Da[i] + b[1] * Da[8 + i];
        gy[i] = a[0] * Db[8 + i] - a[1] * Db[i] + b[1] * Da[i] - b[0] * Da[8 + i];
    }
    for (i = 0; i < 8; i++)
        for (j = 0; j < 8; j++) {
            Hx[8 * i + j] = Da[i] * Db[j] + Db[i] * Da[j] + Da[8 + i] * Db[8 + j]
                            + Db[8 + i] * Da[8 + j];
            Hy[8 * i + j] = Da[i] * Db[8 + j] + Db[8 + i] * Da[j] - Da[8 + i] * Db[j]
                            - Db[i] * Da[8 + j];
        }
}

/* CAM: s, g and H from d = r2 - r1 (D its derivative) and the cam's u1. */
static int cam_coordinate(const ld_forces *F, int r, const double *q, const double *p1,
                          const double *p2, const double *D, record_eval *e)
{
    double u[2], Du[16], d[2], gx[8], gy[8], Hx[64], Hy[64], w[2], h[3], pt[2], gr[2];
    double hs[3], g, psi, rho, S, C, nu_x = F->geom[6 * r + 4], nu_y = F->geom[6 * r + 5];
    int i, c = F->cam[r];
    for (i = 0; i < 16; i++) Du[i] = 0.0;
    u[0] = q[e->idx[2]];
    u[1] = q[e->idx[3]];
    Du[2] = 1.0;
    Du[8 + 3] = 1.0;
    d[0] = p2[0] - p1[0];
    d[1] = p2[1] - p1[1];
    if (F->cams.kind[c] == LD_CAM_POINT || F->cams.kind[c] == LD_CAM_POLAR) {
        dot_cross(u, Du, d, D, gx, gy, Hx, Hy);
        pt[0] = u[0] * d[0] + u[1] * d[1];
        pt[1] = u[0] * d[1] - u[1] * d[0];
        if (ld_cam_point_gap(&F->cams, c, pt, &g, gr, hs, NULL) != 0) return LD_ERR_DOMAIN;
        e->s = g;
        add_outer(e, gr, hs, gx, gy, Hx, Hy);
        return LD_OK;
    } else {
        double n[2], Dn[16], gd[8], Hd[64], gdum[8], Hdum[64];
        double one[2] = {1.0, 0.0}, zero[3] = {0.0, 0.0, 0.0};
        for (i = 0; i < 16; i++) Dn[i] = 0.0;
        n[0] = nu_x * q[e->idx[6]] - nu_y * q[e->idx[7]];
        n[1] = nu_x * q[e->idx[7]] + nu_y * q[e->idx[6]];
        Dn[6] = nu_x;
        Dn[7] = -nu_y;
        Dn[8 + 6] = nu_y;
        Dn[8 + 7] = nu_x;
        /* the face's distance n . d */
        dot_cross(n, Dn, d, D, gd, gdum, Hd, Hdum);
        add_outer(e, one, zero, gd, gdum, Hd, Hdum);
        /* its normal's angle psi = atan2(u x n, u . n) in the cam's frame */
        dot_cross(u, Du, n, Dn, gx, gy, Hx, Hy);
        C = u[0] * n[0] + u[1] * n[1];
        S = u[0] * n[1] - u[1] * n[0];
        rho = S * S + C * C;
        psi = atan2(S, C);
        if (!(rho > 0.0) || ld_cam_face_support(&F->cams, c, psi, h, NULL) != 0)
            return LD_ERR_DOMAIN;
        e->s = n[0] * d[0] + n[1] * d[1] - h[0];
        /* -h(psi(C, S)): psi_C = -S / rho, psi_S = C / rho */
        {
            double pc = -S / rho, ps = C / rho, pss = -2.0 * S * C / (rho * rho);
            double pcc = -pss, pcs = (S * S - C * C) / (rho * rho);
            w[0] = -h[1] * pc;
            w[1] = -h[1] * ps;
            hs[0] = -h[2] * pc * pc - h[1] * pcc;
            hs[1] = -h[2] * pc * ps - h[1] * pcs;
            hs[2] = -h[2] * ps * ps - h[1] * pss;
            add_outer(e, w, hs, gx, gy, Hx, Hy);
        }
        return LD_OK;
    }
}

/* MESH: s = (m / 2) wrap(n1 angle(u1) + n2 angle(u2) - c), geom = n1, n2, c, m / 2 */
static int mesh_coordinate(const ld_forces *F, int r, const double *q, record_eval *e)
{
    const double *gm = F->geom + 6 * r;
    double sum = -gm[2], g[2], h[3], u[2];
    int side, o;
    for (side = 0; side < 2; side++) {
        if (F->body[2 * r + side] < 0) continue;
        o = 4 * side + 2;
        u[0] = q[e->idx[o]];
        u[1] = q[e->idx[o + 1]];
        if (angle_derivs(u, gm[3] * gm[side], g, h) != LD_OK) return LD_ERR_DOMAIN;
        sum += gm[side] * atan2(u[1], u[0]);
        add_angle(e, o, g, h);
    }
    e->s = gm[3] * remainder(sum, TWO_PI);
    return LD_OK;
}

static int eval_coordinate(const ld_forces *F, const ld_forces_run *run, int r,
                           const double *q, record_eval *e)
{
    int i, j, side;
    double D[16], A[8], p1[2], p2[2];   /* D: 2 x 8, d(r2 - r1)/dq */
    if (spatial(F)) return ld_forces3_coordinate(F, run, r, q, e);
    e->n = 8;
    for (side = 0; side < 2; side++) {
        int b = F->body[2 * r + side];
        for (j = 0; j < 4; j++) e->idx[4 * side + j] = b < 0 ? -1 : 4 * b + j;
    }
    for (i = 0; i < 8; i++) e->g[i] = 0.0;
    for (i = 0; i < 64; i++) e->H[i] = 0.0;
    e->angle = 0.0;

    if (F->coord[r] == LD_COORD_MESH) return mesh_coordinate(F, r, q, e);
    if (F->coord[r] == LD_COORD_ANGLE) {
        if (angle_part(F, run, r, q, 1.0, e, &e->angle) != LD_OK) return LD_ERR_DOMAIN;
        e->s = e->angle;
        return LD_OK;
    }
    if (F->coord[r] == LD_COORD_ROLL &&
        angle_part(F, run, r, q, F->law_par[4 * r + 2], e, &e->angle) != LD_OK)
        return LD_ERR_DOMAIN;

    side_point(F, r, 0, q, p1, A);
    for (i = 0; i < 2; i++)
        for (j = 0; j < 4; j++) D[8 * i + j] = -A[4 * i + j];
    side_point(F, r, 1, q, p2, A);
    for (i = 0; i < 2; i++)
        for (j = 0; j < 4; j++) D[8 * i + 4 + j] = A[4 * i + j];

    if (F->coord[r] == LD_COORD_CAM) return cam_coordinate(F, r, q, p1, p2, D, e);
    if (F->coord[r] == LD_COORD_DISTANCE) {
        double d0 = p2[0] - p1[0], d1 = p2[1] - p1[1], L = hypot(d0, d1), ex, ey;
        double scale = 1.0 + fabs(p1[0]) + fabs(p1[1]) + fabs(p2[0]) + fabs(p2[1]);
        if (!(L > 1e-12 * scale)) {
            if (!ld_forces_open_at_zero(F, r)) return LD_ERR_DOMAIN;
            e->s = L;   /* a centred journal: no force, and g = H = 0 */
            return LD_OK;
        }
        ex = d0 / L;
        ey = d1 / L;
        e->s = L;
        for (i = 0; i < 8; i++) e->g[i] = ex * D[i] + ey * D[8 + i];
        /* H = D^T (I - e e^T) D / L */
        for (i = 0; i < 8; i++) {
            double pi0 = ((1.0 - ex * ex) * D[i] - ex * ey * D[8 + i]) / L;
            double pi1 = (-ex * ey * D[i] + (1.0 - ey * ey) * D[8 + i]) / L;
            for (j = 0; j < 8; j++) e->H[8 * i + j] = pi0 * D[j] + pi1 * D[8 + j];
        }
        return LD_OK;
    } else {   /* SLIDE (and ROLL's slide part): s = a . d, a = R u1 (ground: the fixed axis) */
        double ca = F->geom[6 * r + 4], sa = F->geom[6 * r + 5], a[2], d[2], E[16];
        for (i = 0; i < 16; i++) E[i] = 0.0;
        if (F->body[2 * r] >= 0) {
            double ux = q[e->idx[2]], uy = q[e->idx[3]];
            a[0] = ca * ux - sa * uy;
            a[1] = sa * ux + ca * uy;
            E[2] = ca; E[3] = -sa; E[8 + 2] = sa; E[8 + 3] = ca;
        } else {
            a[0] = ca;
            a[1] = sa;
        }
        d[0] = p2[0] - p1[0];
        d[1] = p2[1] - p1[1];
        /* ROLL: plus rho times the relative angle (already in g and H). */
        e->s = a[0] * d[0] + a[1] * d[1] +
               (F->coord[r] == LD_COORD_ROLL ? F->law_par[4 * r + 2] * e->angle : 0.0);
        for (i = 0; i < 8; i++)
            e->g[i] += a[0] * D[i] + a[1] * D[8 + i] + d[0] * E[i] + d[1] * E[8 + i];
        for (i = 0; i < 8; i++)
            for (j = 0; j < 8; j++)
                e->H[8 * i + j] += E[i] * D[j] + E[8 + i] * D[8 + j] + D[i] * E[j] +
                                   D[8 + i] * E[8 + j];
        return LD_OK;
    }
}

/* Reference r(t) and its rate: a servo's held target input, a law, or a constant. */
static void reference(const ld_forces *F, const ld_forces_run *run, int r, double t,
                      double *ref, double *rate)
{
    int in = F->input[r];
    double lf[3];
    if (F->input_mode[r] == LD_INPUT_TARGET && in >= 0 && run->input_active[in]) {
        *ref = run->input[in];
        *rate = 0.0;
    } else if (F->ref_law[r] >= 0) {
        ld_law_eval(F->laws, F->ref_law[r], t, lf);
        *ref = lf[0];
        *rate = lf[1];
    } else {
        *ref = F->ref_value[r];
        *rate = 0.0;
    }
}

/* Tabulated force curve p (ld_forces.h) at deflection x: T, dT/dx and its integral from 0. */
static void table_eval(const double *p, double x, double *T, double *dT, double *V)
{
    int m = (int)p[0], lo = 0, hi = m, i;
    const double *br = p + 1, *c, *E = p + 1 + (m + 1) + 4 * m;
    double h, out = 0.0, Te, dTe;
    if (x < br[0] || x > br[m]) {            /* along the end tangent */
        i = x < br[0] ? 0 : m - 1;
        c = br + (m + 1) + 4 * i;
        h = x < br[0] ? 0.0 : br[m] - br[m - 1];
        Te = c[0] + h * (c[1] + h * (c[2] + h * c[3]));
        dTe = c[1] + h * (2.0 * c[2] + 3.0 * h * c[3]);
        out = E[i] + h * (c[0] + h * (c[1] / 2.0 + h * (c[2] / 3.0 + h * c[3] / 4.0)));
        h = x - (x < br[0] ? br[0] : br[m]);
        *T = Te + dTe * h;
        *dT = dTe;
        *V = out + Te * h + 0.5 * dTe * h * h - E[m];
        return;
    }
    while (hi - lo > 1) {                    /* br[lo] <= x, and x < br[hi] or hi = m */
        int mid = (lo + hi) / 2;
        if (br[mid] <= x) lo = mid; else hi = mid;
    }
    c = br + (m + 1) + 4 * lo;
    h = x - br[lo];
    *T = c[0] + h * (c[1] + h * (c[2] + h * c[3]));
    *dT = c[1] + h * (2.0 * c[2] + 3.0 * h * c[3]);
    *V = E[lo] + h * (c[0] + h * (c[1] / 2.0 + h * (c[2] / 3.0 + h * c[3] / 4.0))) - E[m];
}

/* The force along s and its partial derivatives: linear, tabulated, or a one-sided contact
 * law. */
static void force_law(const ld_forces *F, const ld_forces_run *run, int r, record_eval *e)
{
    int law = F->law ? F->law[r] : LD_FORCE_LINEAR;
    if (law == LD_FORCE_TABLE) {
        double T, dT, V, c = F->damping[r];
        table_eval(F->tab_par + F->tab_start[F->table[r]], e->s - e->r, &T, &dT, &V);
        e->f = -T - c * (e->sd - e->rd);
        e->fs = -dT;
        e->fsd = -c;
        e->f_el = -T;
        e->V = V;
        e->dVdt = -T * e->rd;
    } else if (law == LD_FORCE_LINEAR) {
        double k = F->stiffness[r], c = F->damping[r];
        e->f = -k * (e->s - e->r) - c * (e->sd - e->rd);
        e->fs = -k;
        e->fsd = -c;
        e->f_el = -k * (e->s - e->r);
        e->V = 0.5 * k * (e->s - e->r) * (e->s - e->r);
        e->dVdt = -k * (e->s - e->r) * e->rd;
    } else {
        const double *p = F->law_par + 4 * r;
        double sense = ld_forces_sense(F, r);
        double K = p[0], n = p[1], delta = sense * (p[3] - e->s), rate = -sense * e->sd;
        double c, base, damp;
        e->f = e->fs = e->fsd = e->f_el = e->V = e->dVdt = 0.0;
        if (!(delta > 0.0) || (run->gate && run->gate[r] != 1.0)) return;
        if (law == LD_FORCE_HERTZ) {
            c = p[2];
        } else {
            double v0 = run->impact ? run->impact[r] : 0.0;
            c = v0 > 0.0 ? 0.75 * (1.0 - p[2] * p[2]) / v0 : 0.0;
        }
        base = K * pow(delta, n);
        damp = 1.0 + c * rate;
        e->V = base * delta / (n + 1.0);
        if (damp <= 0.0) {   /* clamped: the contact would pull */
            e->f_el = sense * base;
            return;
        }
        e->f = sense * base * damp;
        e->f_el = sense * base;
        /* d/ds = -sense d/d delta, d/ds' = -sense d/d delta', times the sense of f. */
        e->fs = -K * n * pow(delta, n - 1.0) * damp;
        e->fsd = -base * c;
    }
}

/* Coordinate, rate, reference and force of record r. A friction record's force is
 * -mu sigma F_N with F_N the force of its normal record, evaluated into *normal (which must
 * be given for friction records that slip: sigma != 0; normal->f = 0 otherwise). */
static int eval_record(const ld_forces *F, const ld_forces_run *run, int r, double t,
                       const double *q, const double *v, record_eval *e, record_eval *normal)
{
    int i, in = F->input[r];
    double lf[3];
    if (eval_coordinate(F, run, r, q, e) != LD_OK) {
        if (run->fail_record) *run->fail_record = r;
        return LD_ERR_DOMAIN;
    }
    e->sd = 0.0;
    for (i = 0; i < e->n; i++)
        if (e->idx[i] >= 0) e->sd += e->g[i] * v[e->idx[i]];
    reference(F, run, r, t, &e->r, &e->rd);
    if (F->law && F->law[r] == LD_FORCE_FRICTION) {
        const double *p = F->law_par + 4 * r;
        double sigma = run->slip ? run->slip[r] : 0.0;
        e->f = e->fs = e->fsd = e->f_el = e->V = e->dVdt = 0.0;
        normal->f = normal->fs = normal->fsd = 0.0;
        if (sigma != 0.0 && p[1] < 0.0) {   /* a joint's: its own limit, with Stribeck */
            double bump = p[2] > 0.0 ? p[3] * exp(-(e->sd / p[2]) * (e->sd / p[2])) : 0.0;
            e->f = -sigma * (p[0] + bump);
            e->fsd = p[2] > 0.0 ? 2.0 * sigma * bump * e->sd / (p[2] * p[2]) : 0.0;
        } else if (sigma != 0.0) {
            if (eval_record(F, run, (int)p[1], t, q, v, normal, NULL) != LD_OK)
                return LD_ERR_DOMAIN;
            e->f = -p[0] * sigma * normal->f;
        }
    } else {
        force_law(F, run, r, e);
    }
    if (F->load_law[r] >= 0) {
        ld_law_eval(F->laws, F->load_law[r], t, lf);
        e->f += lf[0];
    }
    if (F->input_mode[r] == LD_INPUT_ADD && in >= 0) e->f += run->input[in];
    return LD_OK;
}

/* Load l: global force and the point's Jacobian block. */
static void eval_load(const ld_forces *F, int l, double t, const double *q, double *Fg,
                      double *Fl)
{
    const double *u = q + 4 * F->load_body[l] + 2;
    double lf[3];
    int c;
    for (c = 0; c < 2; c++) {
        Fl[c] = 0.0;
        if (F->load_laws[2 * l + c] >= 0) {
            ld_law_eval(F->laws, F->load_laws[2 * l + c], t, lf);
            Fl[c] = lf[0];
        }
    }
    if (F->load_frame[l]) {   /* body frame: F = Fxi u + Feta perp(u) */
        Fg[0] = Fl[0] * u[0] - Fl[1] * u[1];
        Fg[1] = Fl[0] * u[1] + Fl[1] * u[0];
    } else {
        Fg[0] = Fl[0];
        Fg[1] = Fl[1];
    }
}

int ld_forces_add(const ld_forces *F, const ld_forces_run *run, double t, const double *q,
                  const double *v, double *out)
{
    int r, l, i;
    record_eval e, normal;
    for (r = 0; r < F->nrec; r++) {
        if (eval_record(F, run, r, t, q, v, &e, &normal) != LD_OK) return LD_ERR_DOMAIN;
        for (i = 0; i < e.n; i++)
            if (e.idx[i] >= 0) out[e.idx[i]] += e.f * e.g[i];
    }
    if (spatial(F)) {
        for (l = 0; l < F->nload; l++) {
            double Ql[12], G[3];
            ld_forces3_load(F, l, t, q, Ql, G, NULL);
            for (i = 0; i < 12; i++) {
                int g = ld_forces3_index(F, F->load_body[l], i);
                if (g >= 0) out[g] += Ql[i];    /* (-1: a rod's absent axes) */
            }
        }
        return LD_OK;
    }
    for (l = 0; l < F->nload; l++) {
        double Fg[2], Fl[2], xi = F->load_point[2 * l], eta = F->load_point[2 * l + 1];
        double *o = out + 4 * F->load_body[l];
        eval_load(F, l, t, q, Fg, Fl);
        o[0] += Fg[0];
        o[1] += Fg[1];
        o[2] += xi * Fg[0] + eta * Fg[1];
        o[3] += -eta * Fg[0] + xi * Fg[1];
    }
    return LD_OK;
}

int ld_forces_jacobians(const ld_forces *F, const ld_forces_run *run, double t,
                        const double *q, const double *v, double *fq, double *fv)
{
    int r, l, i, j;
    record_eval e, nrm;
    for (r = 0; r < F->nrec; r++) {
        int n, block = spatial(F) ? LD_REC_MAX * LD_REC_MAX : LD_REC_BLOCK;
        const int *sq = F->slot_q + block * r, *sv = F->slot_v + block * r;
        double dfdq[LD_REC_MAX], dfdv[LD_REC_MAX], Hv[LD_REC_MAX];
        const record_eval *src = &e;   /* whose coordinate f depends on */
        double scale = 1.0;
        if (eval_record(F, run, r, t, q, v, &e, &nrm) != LD_OK) return LD_ERR_DOMAIN;
        if (F->law && F->law[r] == LD_FORCE_FRICTION) {
            /* f = -mu sigma F_N(s_N, s_N'): the derivatives are the normal record's, scaled;
             * both records act on the same two bodies, so their local blocks coincide. */
            double sigma = run->slip ? run->slip[r] : 0.0;
            /* else f = 0 and so are its derivatives (e.fs = e.fsd = 0); a joint's friction
             * (no normal record) depends on its own rate only, in e.fsd */
            if (sigma != 0.0 && F->law_par[4 * r + 1] >= 0.0) {
                src = &nrm;
                scale = -F->law_par[4 * r] * sigma;
            }
        }
        n = e.n;
        for (i = 0; i < n; i++) {
            Hv[i] = 0.0;
            for (j = 0; j < n; j++)
                if (src->idx[j] >= 0) Hv[i] += src->H[n * i + j] * v[src->idx[j]];
        }
        for (j = 0; j < n; j++) {
            dfdq[j] = scale * (src->fs * src->g[j] + src->fsd * Hv[j]);
            dfdv[j] = scale * src->fsd * src->g[j];
        }
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++) {
                int p = n * i + j;
                if (fq && sq[p] >= 0) fq[sq[p]] += e.f * e.H[p] + e.g[i] * dfdq[j];
                if (fv && sv[p] >= 0) fv[sv[p]] += e.g[i] * dfdv[j];
            }
    }
    if (fq && spatial(F))
        for (l = 0; l < F->nload; l++) {
            double Ql[12], G[3];
            ld_forces3_load(F, l, t, q, Ql, G, fq);
        }
    else if (fq)
        for (l = 0; l < F->nload; l++) {
            /* Body-frame loads depend on u: Q = A^T F(u), dF/dux = (Fxi, Feta),
             * dF/duy = (-Feta, Fxi). Global loads are constant in q (no entries). */
            const int *sq = F->load_slot_q + LD_LOAD_BLOCK * l;
            double Fg[2], Fl[2], A[8], dF[4];
            double xi = F->load_point[2 * l], eta = F->load_point[2 * l + 1];
            if (!F->load_frame[l]) continue;
            eval_load(F, l, t, q, Fg, Fl);
            A[0] = 1.0; A[1] = 0.0; A[2] = xi;  A[3] = -eta;
            A[4] = 0.0; A[5] = 1.0; A[6] = eta; A[7] = xi;
            dF[0] = Fl[0]; dF[1] = -Fl[1];   /* row x: d/dux, d/duy */
            dF[2] = Fl[1]; dF[3] = Fl[0];    /* row y */
            for (i = 0; i < 4; i++)
                for (j = 2; j < 4; j++) {
                    int p = 4 * i + j;
                    if (sq[p] >= 0) fq[sq[p]] += A[i] * dF[j - 2] + A[4 + i] * dF[2 + j - 2];
                }
        }
    return LD_OK;
}

double ld_forces_potential(const ld_forces *F, const ld_forces_run *run, double t,
                           const double *q)
{
    int r;
    double V = 0.0;
    record_eval e;
    for (r = 0; r < F->nrec; r++) {
        if (F->stiffness[r] == 0.0 &&
            (!F->law || F->law[r] == LD_FORCE_LINEAR || F->law[r] == LD_FORCE_FRICTION))
            continue;
        if (eval_coordinate(F, run, r, q, &e) != LD_OK) return NAN;
        reference(F, run, r, t, &e.r, &e.rd);
        e.sd = 0.0;   /* the stored energy does not depend on the rate */
        force_law(F, run, r, &e);
        V += e.V;
    }
    return V;
}

int ld_forces_values(const ld_forces *F, const ld_forces_run *run, double t, const double *q,
                     const double *v, double *out)
{
    int r, l;
    record_eval e, normal;
    for (r = 0; r < F->nrec; r++) {
        if (eval_record(F, run, r, t, q, v, &e, &normal) != LD_OK) return LD_ERR_DOMAIN;
        out[3 * r] = e.s;
        out[3 * r + 1] = e.sd;
        out[3 * r + 2] = e.f;
    }
    for (l = 0; l < F->nload; l++) {
        double Fl[2], Ql[12];
        if (spatial(F))
            ld_forces3_load(F, l, t, q, Ql, out + 3 * F->nrec + 3 * l, NULL);
        else
            eval_load(F, l, t, q, out + 3 * F->nrec + 2 * l, Fl);
    }
    return LD_OK;
}

int ld_forces_rates(const ld_forces *F, const ld_forces_run *run, double t, const double *q,
                    const double *v, double *z)
{
    int r, l;
    record_eval e, normal;
    for (r = 0; r < F->nrec; r++) {
        if (eval_record(F, run, r, t, q, v, &e, &normal) != LD_OK) return LD_ERR_DOMAIN;
        /* Everything in f but its conservative part does work; a moving reference adds the
         * explicit time derivative of the stored energy. */
        z[r] = (e.f - e.f_el) * e.sd + e.dVdt;
        z[F->nrec + F->nload + r] = e.sd;
    }
    for (l = 0; l < F->nload; l++) {
        if (spatial(F)) {   /* the power of a spatial load is Q . v on its body */
            double Ql[12], G[3];
            int i;
            ld_forces3_load(F, l, t, q, Ql, G, NULL);
            z[F->nrec + l] = 0.0;
            for (i = 0; i < 12; i++) {
                int g = ld_forces3_index(F, F->load_body[l], i);
                if (g >= 0) z[F->nrec + l] += Ql[i] * v[g];
            }
        } else {
            double Fg[2], Fl[2], xi = F->load_point[2 * l], eta = F->load_point[2 * l + 1];
            const double *vb = v + 4 * F->load_body[l];
            eval_load(F, l, t, q, Fg, Fl);
            z[F->nrec + l] = Fg[0] * (vb[0] + xi * vb[2] - eta * vb[3]) +
                             Fg[1] * (vb[1] + xi * vb[3] + eta * vb[2]);
        }
    }
    return LD_OK;
}

double ld_forces_coordinate(const ld_forces *F, const ld_forces_run *run, int r,
                            const double *q)
{
    record_eval e;
    return eval_coordinate(F, run, r, q, &e) == LD_OK ? e.s : NAN;
}

void ld_forces_accept(const ld_forces *F, const ld_forces_run *run, const double *q)
{
    int r;
    record_eval e;
    for (r = 0; r < F->nrec; r++)
        if ((F->coord[r] == LD_COORD_ANGLE || F->coord[r] == LD_COORD_ROLL) &&
            eval_coordinate(F, run, r, q, &e) == LD_OK)
            run->angle_ref[r] = e.angle;
}

int ld_forces_coordinate_derivs(const ld_forces *F, const ld_forces_run *run, int r,
                                const double *q, const double *v, int *idx, double *s,
                                double *g, double *vHv)
{
    record_eval e;
    int i, j;
    if (eval_coordinate(F, run, r, q, &e) != LD_OK) return LD_ERR_DOMAIN;
    *s = e.s;
    *vHv = 0.0;
    for (i = 0; i < e.n; i++) {
        idx[i] = e.idx[i];
        g[i] = e.g[i];
        if (e.idx[i] < 0) continue;
        for (j = 0; j < e.n; j++)
            if (e.idx[j] >= 0) *vHv += v[e.idx[i]] * e.H[e.n * i + j] * v[e.idx[j]];
    }
    return LD_OK;
}

int ld_forces_coordinate_hessian(const ld_forces *F, const ld_forces_run *run, int r,
                                 const double *q, double *H)
{
    record_eval e;
    int i;
    if (eval_coordinate(F, run, r, q, &e) != LD_OK) return LD_ERR_DOMAIN;
    for (i = 0; i < e.n * e.n; i++) H[i] = e.H[i];
    return LD_OK;
}

int ld_forces_record_force(const ld_forces *F, const ld_forces_run *run, int r, double t,
                           const double *q, const double *v, double *f)
{
    record_eval e, normal;
    if (eval_record(F, run, r, t, q, v, &e, &normal) != LD_OK) return LD_ERR_DOMAIN;
    *f = e.f;
    return LD_OK;
}
