/*
 * ld_kernels.c -- the compiled model's kernels (see ld_kernels.h): constraint rows, their
 * Jacobian, time derivative, gamma and Hessian term; forces; quadrature rates; events.
 *
 * Compensated sums. The constraint residual Phi(q) is a sum of terms of the size of the
 * coordinates that cancel to zero on the constraint manifold. Summed in double precision it
 * carries rounding errors of eps max|q| that are not of the form Phi_q dq, and near a
 * singular configuration Newton turns them into position noise divided by the smallest
 * singular value of Phi_q (ld_bdf.c, "Singular configurations"). Summed here with the
 * rounding errors carried along (Ogita, Rump and Oishi's Sum2, "Accurate sum and dot
 * product", with exact products by fma), Phi is as accurate as if computed in twice the
 * precision; the Jacobians need no such care.
 *
 * Frame rows of spatial bodies (e = the body's e1, e2, e3: 9 coordinates; rows uu, vv, ww,
 * uv, uw, vw). Jacobian entries, in slot order (compile/spatial.py, FRAME_JACOBIAN): uu's on
 * e1 (2 e1), vv's on e2 (2 e2), ww's on e3 (2 e3), uv's on e1 (e2) then on e2 (e1), uw's on
 * e1 (e3) then on e3 (e1), vw's on e2 (e3) then on e3 (e2), x, y, z each. Hessian entries
 * (FRAME_HESSIAN): 2 lam on (e1_i, e1_i), (e2_i, e2_i), (e3_i, e3_i), then for uv lam on
 * (e1_i, e2_i) and on (e2_i, e1_i), likewise uw (e1, e3) and vw (e2, e3).
 */
#include "ld_kernels.h"

#include <math.h>
#include <stddef.h>

/* ------------------------------------------------------------------------------------------ */
/* Driving laws and time coefficients */

/* A kernel call's last law value: the terms of a driver's row share one law (a crank's
 * driver has a cos and a sin term in each of two rows), so a call evaluates the law, and the
 * cosine and sine of its value, once for all of them instead of once a term (Jansen's
 * kinematic sweep spent 12% of its instructions in sincos and the law). Local to one call,
 * at one t: never stale. */
typedef struct {
    int law;        /* the law whose values f are held (-1: none) */
    int trig;       /* c, s hold cos f[0], sin f[0] */
    double f[3], c, s;
} law_memo;

static inline void law_memo_init(law_memo *w) { w->law = -1; }

/* time_coef of a term with a law's time factor. */
static void law_time_coef(const ld_model *d, int m, double t, double *g, law_memo *w)
{
    int tf = d->term_tf[m];
    const double *f = w->f;
    double c, s;
    if (w->law != d->term_law[m]) {
        ld_law_eval(&d->laws, d->term_law[m], t, w->f);
        w->law = d->term_law[m];
        w->trig = 0;
    }
    if (tf == 3) {
        g[0] = f[0];
        g[1] = f[1];
        g[2] = f[2];
        return;
    }
    if (tf == 4) {   /* f^2: the square of a length (a linear actuator's row) */
        g[0] = f[0] * f[0];
        g[1] = 2.0 * f[0] * f[1];
        g[2] = 2.0 * (f[1] * f[1] + f[0] * f[2]);
        return;
    }
    if (!w->trig) {
        w->c = cos(f[0]);
        w->s = sin(f[0]);
        w->trig = 1;
    }
    c = w->c;
    s = w->s;
    if (tf == 1) {   /* cos f */
        g[0] = c;
        g[1] = -s * f[1];
        g[2] = -c * f[1] * f[1] - s * f[2];
    } else {         /* sin f */
        g[0] = s;
        g[1] = c * f[1];
        g[2] = -s * f[1] * f[1] + c * f[2];
    }
}

/* g[0..2] = g(t), g', g'' of term m. Most terms have no time factor (g = 1): that case is
 * inlined into the kernels' loops (a spatial model's rows are all generic terms). */
static inline void time_coef(const ld_model *d, int m, double t, double *g, law_memo *w)
{
    if (d->term_tf[m] == 0) {
        g[0] = 1.0;
        g[1] = 0.0;
        g[2] = 0.0;
        return;
    }
    law_time_coef(d, m, t, g, w);
}

/* Generic term k's share of dPhi/dt: its coefficient, its time factor's rate and its
 * coordinates' product (Phi_t of the term). */
static inline double time_term_rate(const ld_model *d, int k, double t, const double *q,
                                    law_memo *w)
{
    double g[3], m = 1.0;
    time_coef(d, k, t, g, w);
    if (d->term_a[k] >= 0) {
        m = q[d->term_a[k]];
        if (d->term_b[k] >= 0) m *= q[d->term_b[k]];
    }
    return d->term_coef[k] * g[1] * m;
}

/* ------------------------------------------------------------------------------------------ */
/* Compensated sums (see the top) */

typedef struct {
    double s;   /* running sum */
    double c;   /* accumulated rounding errors */
} acc;

static inline void acc_add(acc *a, double x)
{
    double s = a->s + x;
    double z = s - a->s;
    a->c += (a->s - (s - z)) + (x - z);
    a->s = s;
}

static inline void acc_add_product(acc *a, double x, double y)
{
    double p = x * y;
    a->c += fma(x, y, -p);
    acc_add(a, p);
}

/* ------------------------------------------------------------------------------------------ */
/* Frame rows of spatial bodies (see the top) */

/* The axes of orthogonality row k (uv, uw, vw). */
static inline int frame_p(int k) { return k < 2 ? 0 : 1; }
static inline int frame_q(int k) { return k == 0 ? 1 : 2; }

static inline void frame_phi(const double *e, double *out)
{
    acc a;
    int k, i;
    for (k = 0; k < 3; k++) {
        a.s = -1.0;
        a.c = 0.0;
        for (i = 0; i < 3; i++) acc_add_product(&a, e[3 * k + i], e[3 * k + i]);
        out[k] = a.s + a.c;
    }
    for (k = 0; k < 3; k++) {
        a.s = 0.0;
        a.c = 0.0;
        for (i = 0; i < 3; i++)
            acc_add_product(&a, e[3 * frame_p(k) + i], e[3 * frame_q(k) + i]);
        out[3 + k] = a.s + a.c;
    }
}

static inline void frame_jacobian(const double *e, const int *slot, double *val)
{
    int k, i;
    for (k = 0; k < 3; k++)
        for (i = 0; i < 3; i++) val[slot[3 * k + i]] = 2.0 * e[3 * k + i];
    for (k = 0; k < 3; k++)
        for (i = 0; i < 3; i++) {
            val[slot[9 + 6 * k + i]] = e[3 * frame_q(k) + i];
            val[slot[9 + 6 * k + 3 + i]] = e[3 * frame_p(k) + i];
        }
}

/* gamma = -(Phi_q v)_q v of the six rows, w the axes' rates. */
static inline void frame_gamma(const double *w, double *out)
{
    int k, i;
    double s;
    for (k = 0; k < 3; k++) {
        s = 0.0;
        for (i = 0; i < 3; i++) s += w[3 * k + i] * w[3 * k + i];
        out[k] = -2.0 * s;
    }
    for (k = 0; k < 3; k++) {
        s = 0.0;
        for (i = 0; i < 3; i++) s += w[3 * frame_p(k) + i] * w[3 * frame_q(k) + i];
        out[3 + k] = -2.0 * s;
    }
}

static inline void frame_hessian(const double *lam, const int *hslot, double *val)
{
    int k, i;
    for (k = 0; k < 3; k++)
        for (i = 0; i < 3; i++) val[hslot[3 * k + i]] += 2.0 * lam[k];
    for (k = 0; k < 3; k++)
        for (i = 0; i < 3; i++) {
            val[hslot[9 + 6 * k + i]] += lam[3 + k];
            val[hslot[9 + 6 * k + 3 + i]] += lam[3 + k];
        }
}

/* ------------------------------------------------------------------------------------------ */
/* The model's rows */

/* The revolute rows of planar joint k into out[r], out[r + 1], each a compensated sum. */
static void revolute_phi(const ld_model *d, int k, const double *q, double *out)
{
    int r = d->rev_row[k], s, b;
    double sgn, xi, eta;
    const double *qb;
    acc ax, ay;
    ax.s = 0.0;
    ax.c = 0.0;
    ay.s = 0.0;
    ay.c = 0.0;
    for (s = 0; s < 2; s++) {
        sgn = s == 0 ? 1.0 : -1.0;
        b = d->rev_body[2 * k + s];
        xi = sgn * d->rev_local[4 * k + 2 * s];
        eta = sgn * d->rev_local[4 * k + 2 * s + 1];
        if (b < 0) {
            acc_add(&ax, xi);
            acc_add(&ay, eta);
        } else {
            qb = q + 4 * b;
            acc_add(&ax, sgn * qb[0]);
            acc_add_product(&ax, xi, qb[2]);
            acc_add_product(&ax, -eta, qb[3]);
            acc_add(&ay, sgn * qb[1]);
            acc_add_product(&ay, xi, qb[3]);
            acc_add_product(&ay, eta, qb[2]);
        }
    }
    out[r] = ax.s + ax.c;
    out[r + 1] = ay.s + ay.c;
}

int ld_model_phi(void *user, double t, const double *q, double *out)
{
    const ld_model *d = (const ld_model *)user;
    int i, k;
    const double *qb;
    double g[3], w, m, e;
    acc ax;
    law_memo memo;
    law_memo_init(&memo);
    for (i = 0; i < d->nunit; i++) {
        qb = q + 4 * d->unit_body[i];
        ax.s = -1.0;
        ax.c = 0.0;
        acc_add_product(&ax, qb[2], qb[2]);
        acc_add_product(&ax, qb[3], qb[3]);
        out[d->unit_row[i]] = ax.s + ax.c;
    }
    for (i = 0; i < d->nframe; i++) frame_phi(q + d->frame_base[i], out + d->frame_row[i]);
    for (k = 0; k < d->nrev; k++) revolute_phi(d, k, q, out);
    /* A row's terms are consecutive (compile_rows): each row is one compensated sum. */
    for (k = 0; k < d->ngen_rows; k++) out[d->gen_row[k]] = 0.0;
    ax.s = 0.0;
    ax.c = 0.0;
    for (k = 0; k < d->nterm; k++) {
        time_coef(d, k, t, g, &memo);
        w = d->term_coef[k] * g[0];
        if (d->term_a[k] < 0) {
            acc_add(&ax, w);
        } else if (d->term_b[k] < 0) {
            acc_add_product(&ax, w, q[d->term_a[k]]);
        } else {
            m = q[d->term_a[k]] * q[d->term_b[k]];
            e = fma(q[d->term_a[k]], q[d->term_b[k]], -m);
            acc_add_product(&ax, w, m);
            ax.c += w * e;
        }
        if (k + 1 == d->nterm || d->term_row[k + 1] != d->term_row[k]) {
            out[d->term_row[k]] = ax.s + ax.c;
            ax.s = 0.0;
            ax.c = 0.0;
        }
    }
    if (d->angles.nrow > 0) ld_angles_phi(&d->angles, q, out);
    return LD_OK;
}

int ld_model_phi_q(void *user, double t, const double *q, double *val)
{
    const ld_model *d = (const ld_model *)user;
    int i, j, k, s, b;
    double sgn, xi, eta, g[3], c;
    const int *sl;
    law_memo memo;
    law_memo_init(&memo);
    for (i = 0; i < d->nunit; i++) {
        b = d->unit_body[i];
        val[d->unit_slot[2 * i]] = 2.0 * q[4 * b + 2];
        val[d->unit_slot[2 * i + 1]] = 2.0 * q[4 * b + 3];
    }
    for (i = 0; i < d->nframe; i++)
        frame_jacobian(q + d->frame_base[i], d->frame_slot + 27 * i, val);
    for (k = 0; k < d->nrev; k++)
        for (s = 0; s < 2; s++) {
            if (d->rev_body[2 * k + s] < 0) continue;
            sgn = s == 0 ? 1.0 : -1.0;
            xi = d->rev_local[4 * k + 2 * s];
            eta = d->rev_local[4 * k + 2 * s + 1];
            sl = d->rev_slot + 12 * k + 6 * s;
            val[sl[0]] = sgn;
            val[sl[1]] = sgn * xi;
            val[sl[2]] = -sgn * eta;
            val[sl[3]] = sgn;
            val[sl[4]] = sgn * eta;
            val[sl[5]] = sgn * xi;
        }
    for (j = 0; j < d->ngen_slots; j++) val[d->gen_slot[j]] = d->gen_const[j];
    for (j = 0; j < d->nvar_term; j++) {
        k = d->var_term[j];
        time_coef(d, k, t, g, &memo);
        c = d->term_coef[k] * g[0];
        if (d->term_b[k] < 0) {
            val[d->term_slot[2 * k]] += c;
        } else {   /* a == b gives both slots equal: 2 c q_a, as it should */
            val[d->term_slot[2 * k]] += c * q[d->term_b[k]];
            val[d->term_slot[2 * k + 1]] += c * q[d->term_a[k]];
        }
    }
    if (d->angles.nrow > 0) ld_angles_phi_q(&d->angles, q, val);
    return LD_OK;
}

void ld_model_phiq_const(const ld_model *d, int *flag)
{
    int i, k;
    for (i = 0; i < d->phiq_nnz; i++) flag[i] = 0;
    for (k = 0; k < d->nrev; k++)
        for (i = 0; i < 12; i++)
            if (d->rev_body[2 * k + i / 6] >= 0 && d->rev_slot[12 * k + i] >= 0)
                flag[d->rev_slot[12 * k + i]] = 1;
    for (i = 0; i < d->ngen_slots; i++)
        if (d->gen_slot[i] >= 0) flag[d->gen_slot[i]] = 1;
    for (k = 0; k < d->nterm; k++) {
        if (d->term_a[k] < 0 || (d->term_b[k] < 0 && d->term_tf[k] == 0)) continue;
        for (i = 0; i < 2; i++)
            if (d->term_slot[2 * k + i] >= 0) flag[d->term_slot[2 * k + i]] = 0;
    }
}

int ld_model_phi_t(void *user, double t, const double *q, double *out)
{
    /* Unit-vector and revolute rows do not depend on time; generic rows may. */
    const ld_model *d = (const ld_model *)user;
    int r, j, k;
    law_memo memo;
    law_memo_init(&memo);
    for (r = 0; r < d->nc; r++) out[r] = 0.0;
    for (j = 0; j < d->ntime_term; j++) {
        k = d->time_term[j];
        out[d->term_row[k]] += time_term_rate(d, k, t, q, &memo);
    }
    return LD_OK;
}

int ld_model_gamma(void *user, double t, const double *q, const double *v, double *out)
{
    const ld_model *d = (const ld_model *)user;
    int i, j, k, ub, a, b;
    double g[3], c;
    law_memo memo;
    law_memo_init(&memo);
    for (i = 0; i < d->nunit; i++) {
        ub = 4 * d->unit_body[i];
        out[d->unit_row[i]] = -2.0 * (v[ub + 2] * v[ub + 2] + v[ub + 3] * v[ub + 3]);
    }
    for (i = 0; i < d->nframe; i++) frame_gamma(v + d->frame_base[i], out + d->frame_row[i]);
    /* Revolute rows are linear in q with constant Jacobian: their gamma is zero. */
    for (k = 0; k < d->nrev; k++) {
        out[d->rev_row[k]] = 0.0;
        out[d->rev_row[k] + 1] = 0.0;
    }
    /* Generic rows: gamma = -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt, term by term. */
    for (k = 0; k < d->ngen_rows; k++) out[d->gen_row[k]] = 0.0;
    for (j = 0; j < d->ngam_term; j++) {
        k = d->gam_term[j];
        time_coef(d, k, t, g, &memo);
        c = d->term_coef[k];
        a = d->term_a[k];
        b = d->term_b[k];
        if (a < 0)
            out[d->term_row[k]] -= c * g[2];
        else if (b < 0)
            out[d->term_row[k]] -= c * (2.0 * g[1] * v[a] + g[2] * q[a]);
        else
            out[d->term_row[k]] -= c * (2.0 * g[0] * v[a] * v[b]
                                        + 2.0 * g[1] * (q[b] * v[a] + q[a] * v[b])
                                        + g[2] * q[a] * q[b]);
    }
    if (d->angles.nrow > 0) ld_angles_gamma(&d->angles, q, v, out);
    return LD_OK;
}

int ld_model_phi_qq_lam(void *user, double t, const double *q, const double *lam,
                        double *val)
{
    /* d/dq (Phi_q^T lam): the unit-vector rows contribute 2 lam on (ux, ux) and (uy, uy);
     * revolute rows are linear in q and contribute nothing. */
    const ld_model *d = (const ld_model *)user;
    int i, j, k;
    double l, g[3];
    law_memo memo;
    law_memo_init(&memo);
    for (i = 0; i < d->hess_nnz; i++) val[i] = 0.0;
    for (i = 0; i < d->nunit; i++) {
        l = lam[d->unit_row[i]];
        val[d->unit_hslot[2 * i]] += 2.0 * l;
        val[d->unit_hslot[2 * i + 1]] += 2.0 * l;
    }
    for (i = 0; i < d->nframe; i++)
        frame_hessian(lam + d->frame_row[i], d->frame_hslot + 27 * i, val);
    for (j = 0; j < d->nquad_term; j++) {   /* q_a q_b: coef g lam to (a, b) and (b, a) */
        k = d->quad_term[j];
        time_coef(d, k, t, g, &memo);
        l = d->term_coef[k] * g[0] * lam[d->term_row[k]];
        val[d->term_hslot[2 * k]] += l;
        val[d->term_hslot[2 * k + 1]] += l;
    }
    if (d->angles.nrow > 0) ld_angles_hessian(&d->angles, q, lam, val);
    return LD_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Forces and quadratures */

int ld_model_force(void *user, double t, const double *q, const double *v, double *out)
{
    const ld_model *d = (const ld_model *)user;
    int j;
    for (j = 0; j < d->nq; j++) out[j] = d->q_applied[j];
    return ld_forces_add(&d->forces, &d->run, t, q, v, out);
}

/* Uniform gravity is constant: only the force elements have Q_q and Q_v entries. */
static int force_jacobian(const ld_model *d, double t, const double *q, const double *v,
                          double *out, int nnz, int wrt_v)
{
    int j;
    for (j = 0; j < nnz; j++) out[j] = 0.0;
    if (wrt_v) return ld_forces_jacobians(&d->forces, &d->run, t, q, v, NULL, out);
    return ld_forces_jacobians(&d->forces, &d->run, t, q, v, out, NULL);
}

int ld_model_force_q(void *user, double t, const double *q, const double *v, double *out)
{
    const ld_model *d = (const ld_model *)user;
    return force_jacobian(d, t, q, v, out, d->fq_nnz, 0);
}

int ld_model_force_v(void *user, double t, const double *q, const double *v, double *out)
{
    const ld_model *d = (const ld_model *)user;
    return force_jacobian(d, t, q, v, out, d->fv_nnz, 1);
}

int ld_model_aux_rate(void *user, double t, const double *q, const double *v,
                      const double *lam, double *out)
{
    /* The force elements' power and tracked coordinates, then the power of the driven
     * (rheonomic) rows on the system: -v^T Phi_q^T lam = lam^T Phi_t, since
     * Phi_q v = -Phi_t. */
    const ld_model *d = (const ld_model *)user;
    int st = ld_forces_rates(&d->forces, &d->run, t, q, v, out), j, k;
    double power = 0.0;
    law_memo memo;
    law_memo_init(&memo);
    if (st != LD_OK || d->driver_work < 0) return st;
    for (j = 0; j < d->ntime_term; j++) {
        k = d->time_term[j];
        power += lam[d->term_row[k]] * time_term_rate(d, k, t, q, &memo);
    }
    out[d->driver_work] = power;
    return LD_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Events (kinds: see ld_model's ev_kind) */

/* Kind 3: a sliding contact comes to rest: sigma s' of its friction record (1 when not
 * sliding). */
static int slip_event(const ld_model *d, int i, const double *q, const double *v, double *g)
{
    int r = d->ev_record[i], j, st, idx[24];
    double s, vhv, grad[24];
    *g = 1.0;
    if (d->run.slip == NULL || d->run.slip[r] == 0.0) return LD_OK;
    st = ld_forces_coordinate_derivs(&d->forces, &d->run, r, q, v, idx, &s, grad, &vhv);
    if (st != LD_OK) return st;
    *g = 0.0;
    for (j = 0; j < (d->forces.stride == LD_STRIDE_SPATIAL ? 24 : 8); j++)
        if (idx[j] >= 0) *g += grad[j] * v[idx[j]];
    *g *= d->run.slip[r];
    return LD_OK;
}

/* Kinds 5 and 6: a foot passes another along a ground line, and its rate. */
static double pass_event(const ld_model *d, int i, const double *q, const double *v)
{
    int j;
    double g = 0.0, s;
    const double *qb;
    for (j = 0; j < 2; j++) {
        /* kind 6: the same along-line coordinate's rate (a velocity is linear in v as a
         * position is in q) */
        qb = (d->ev_kind[i] == 5 ? q : v) + 4 * (j == 0 ? d->ev_body[i] : d->ev_record[i]);
        s = (cos(d->ev_const[i]) * (qb[0] + d->ev_coef[4 * i + 2 * j] * qb[2]
                                    - d->ev_coef[4 * i + 2 * j + 1] * qb[3])
             + sin(d->ev_const[i]) * (qb[1] + d->ev_coef[4 * i + 2 * j] * qb[3]
                                      + d->ev_coef[4 * i + 2 * j + 1] * qb[2]));
        g += j == 0 ? s : -s;
    }
    return g;
}

int ld_model_events(void *user, double t, const double *q, const double *v,
                    const double *lam, double *g)
{
    const ld_model *d = (const ld_model *)user;
    int i, j, r, st, kind;
    double fn;
    for (i = 0; i < d->nev; i++) {
        kind = d->ev_kind[i];
        if (d->ev_gate[i] >= 0 && d->run.gate != NULL && d->run.gate[d->ev_gate[i]] != 0.0) {
            g[i] = 1.0;   /* an event of a swinging contact, which does not swing now */
        } else if (kind == 0 || kind == 7) {   /* 7: an arc's end (linear like 0) */
            g[i] = d->ev_const[i];
            for (j = 0; j < 4; j++) g[i] += d->ev_coef[4 * i + j] * q[d->ev_index[4 * i + j]];
        } else if (kind == 3) {
            if ((st = slip_event(d, i, q, v, g + i)) != LD_OK) return st;
        } else if (kind == 5 || kind == 6) {
            g[i] = pass_event(d, i, q, v);
        } else if (kind == 4) {
            g[i] = 1.0;
            if (d->row_active != NULL && d->row_active[d->ev_body[i]]) {
                r = (int)d->forces.law_par[4 * d->ev_record[i] + 1];
                fn = 1.0;   /* a joint's friction: ev_const is its static limit itself */
                st = r >= 0 ? ld_forces_record_force(&d->forces, &d->run, r, t, q, v, &fn)
                            : LD_OK;
                if (st != LD_OK) return st;
                g[i] = d->ev_const[i] * fn - fabs(lam[d->ev_body[i]]);
            }
        } else {
            g[i] = ld_forces_coordinate(&d->forces, &d->run, d->ev_record[i], q);
            if (kind == 2)
                g[i] = (d->forces.law_sense ? d->forces.law_sense[d->ev_record[i]] : 1.0) *
                       (d->forces.law_par[4 * d->ev_record[i] + 3] - g[i]);
            else g[i] += d->ev_const[i];
            if (g[i] != g[i]) return LD_ERR_DOMAIN;
        }
    }
    return LD_OK;
}

int ld_model_accept(void *user, double t, const double *q, const double *v)
{
    const ld_model *d = (const ld_model *)user;
    (void)t;
    (void)v;
    ld_forces_accept(&d->forces, &d->run, q);
    return LD_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* A run's system with stick rows: the model's rows, then one per contact with friction,
 * value s - c0 of its rolling coordinate. */

int ld_model_run_phi(void *user, double t, const double *q, double *out)
{
    const ld_model *d = (const ld_model *)user;
    int k;
    double s;
    ld_model_phi(user, t, q, out);
    for (k = 0; k < d->nstick; k++) {
        s = ld_forces_coordinate(&d->forces, &d->run, d->stick_rec[k], q);
        if (s != s) return LD_ERR_DOMAIN;
        out[d->nc + k] = s - d->stick_c0[k];
    }
    return LD_OK;
}

int ld_model_run_phi_q(void *user, double t, const double *q, double *val)
{
    const ld_model *d = (const ld_model *)user;
    int k, i, st, idx[24], w = d->stick_width;
    double s, vhv, g[24];
    ld_model_phi_q(user, t, q, d->scratch_phiq);
    for (i = 0; i < d->phiq_ext_nnz; i++) val[i] = 0.0;
    for (i = 0; i < d->phiq_nnz; i++) val[d->base_phiq_map[i]] = d->scratch_phiq[i];
    for (k = 0; k < d->nstick; k++) {
        st = ld_forces_coordinate_derivs(&d->forces, &d->run, d->stick_rec[k], q, q, idx, &s,
                                         g, &vhv);
        if (st != LD_OK) return st;
        for (i = 0; i < w; i++)
            if (d->stick_slot[w * k + i] >= 0) val[d->stick_slot[w * k + i]] = g[i];
    }
    return LD_OK;
}

int ld_model_run_phi_t(void *user, double t, const double *q, double *out)
{
    const ld_model *d = (const ld_model *)user;
    int k;
    ld_model_phi_t(user, t, q, out);
    for (k = 0; k < d->nstick; k++) out[d->nc + k] = 0.0;
    return LD_OK;
}

int ld_model_run_gamma(void *user, double t, const double *q, const double *v, double *out)
{
    const ld_model *d = (const ld_model *)user;
    int k, st, idx[24];
    double s, vhv, g[24];
    ld_model_gamma(user, t, q, v, out);
    for (k = 0; k < d->nstick; k++) {
        st = ld_forces_coordinate_derivs(&d->forces, &d->run, d->stick_rec[k], q, v, idx, &s,
                                         g, &vhv);
        if (st != LD_OK) return st;
        out[d->nc + k] = -vhv;
    }
    return LD_OK;
}

int ld_model_run_phi_qq_lam(void *user, double t, const double *q, const double *lam,
                            double *val)
{
    const ld_model *d = (const ld_model *)user;
    int k, i, st, w2 = d->stick_width * d->stick_width;
    double H[576];
    ld_model_phi_qq_lam(user, t, q, lam, d->scratch_hess);
    for (i = 0; i < d->hess_ext_nnz; i++) val[i] = 0.0;
    for (i = 0; i < d->hess_nnz; i++) val[d->base_hess_map[i]] += d->scratch_hess[i];
    for (k = 0; k < d->nstick; k++) {
        if (lam[d->nc + k] == 0.0) continue;
        st = ld_forces_coordinate_hessian(&d->forces, &d->run, d->stick_rec[k], q, H);
        if (st != LD_OK) return st;
        for (i = 0; i < w2; i++)
            if (d->stick_hslot[w2 * k + i] >= 0)
                val[d->stick_hslot[w2 * k + i]] += lam[d->nc + k] * H[i];
    }
    return LD_OK;
}
