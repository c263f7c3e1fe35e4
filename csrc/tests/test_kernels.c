/*
 * Plain-C tests of the compiled model's kernels (ld_kernels.c) and of a run with no Python:
 * a bar of length 1 pinned at one end, written as the compiler writes a model (an ld_model
 * of flat arrays), once with a revolute joint's rows and once hung on a massless rod of
 * length 1/2 (a distance row, as generic quadratic terms: a double pendulum). The kernels
 * are checked against finite differences (Phi_q, gamma, the Hessian term), and the
 * integrator, driven by them alone, against the large-amplitude period of the pendulum and
 * the double pendulum's energy.
 * Prints one line per check and "N passed, M failed"; exits non-zero on any failure.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ld_bdf.h"
#include "ld_kernels.h"

#define PI 3.14159265358979323846
#define HALF 0.5    /* the pin's distance from the centre */
#define ROD 0.5     /* the rod's length (model 2) */
#define G 9.81

static int passed = 0, failed = 0;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (ok) passed++; else failed++;
}

/* q = (x, y, ux, uy). Phi_q patterns (CSC, columns x, y, ux, uy):
 * model 1, rows 0 unit, 1-2 pin: x {1}, y {2}, ux {0, 1, 2}, uy {0, 1, 2};
 * model 2, rows 0 unit, 1 rod:   x {1}, y {1}, ux {0, 1}, uy {0, 1}. */
static const int colptr1[] = {0, 1, 2, 5, 8};
static const int rowind1[] = {1, 2, 0, 1, 2, 0, 1, 2};
static const int colptr2[] = {0, 1, 2, 4, 6};
static const int rowind2[] = {1, 1, 0, 1, 0, 1};
/* Hessian patterns: model 1 (ux, ux), (uy, uy); model 2 the rod's quadratic form too:
 * columns x {x, ux}, y {y, uy}, ux {x, ux}, uy {y, uy}. */
static const int hcolptr1[] = {0, 0, 0, 1, 2};
static const int hrowind1[] = {2, 3};
static const int hcolptr2[] = {0, 2, 4, 6, 8};
static const int hrowind2[] = {0, 2, 1, 3, 0, 2, 1, 3};
static const int zcolptr[] = {0, 0, 0, 0, 0};

static const double mass[4] = {2.0, 2.0, 2.0 / 12.0, 2.0 / 12.0};
static const double gravity[4] = {0.0, -2.0 * G, 0.0, 0.0};

/* Model 1: the unit row and a revolute joint of the bar's end (-1/2, 0) to the origin. */
static const int unit_body[] = {0}, unit_row[] = {0};
static const int unit_slot1[] = {2, 5}, unit_hslot1[] = {0, 1};
static const int rev_body[] = {0, -1}, rev_row[] = {1};
static const double rev_local[] = {-HALF, 0.0, 0.0, 0.0};
/* side 1: row x (d/dx, d/dux, d/duy), row y (d/dy, d/dux, d/duy); the ground side unused */
static const int rev_slot[] = {0, 3, 6, 1, 4, 7, -1, -1, -1, -1, -1, -1};

/* Model 2: the rod's row |r - u/2|^2 - ROD^2 as terms coef q_a q_b (row 1):
 * x x - x ux + ux ux / 4 + y y - y uy + uy uy / 4 - ROD^2. Phi_q slots of model 2: x 0,
 * y 1, ux (row 0) 2, ux (row 1) 3, uy (row 0) 4, uy (row 1) 5; Hessian slots: (x, x) 0,
 * (ux, x) 1, (y, y) 2, (uy, y) 3, (x, ux) 4, (ux, ux) 5, (y, uy) 6, (uy, uy) 7. */
static const int unit_slot2[] = {2, 4}, unit_hslot2[] = {5, 7};
static const int term_row[] = {1, 1, 1, 1, 1, 1, 1};
static const int term_a[] = {0, 0, 2, 1, 1, 3, -1};
static const int term_b[] = {0, 2, 2, 1, 3, 3, -1};
static const int term_tf[] = {0, 0, 0, 0, 0, 0, 0};
static const int term_law[] = {-1, -1, -1, -1, -1, -1, -1};
static const double term_coef[] = {1.0, -1.0, 0.25, 1.0, -1.0, 0.25, -ROD * ROD};
static const int term_slot[] = {0, 0, 0, 3, 3, 3, 1, 1, 1, 5, 5, 5, -1, -1};
static const int term_hslot[] = {0, 0, 4, 1, 5, 5, 2, 2, 6, 3, 7, 7, -1, -1};
static const int gen_row[] = {1}, gen_slot[] = {0, 3, 1, 5};
static const double gen_const[] = {0.0, 0.0, 0.0, 0.0};
static const int all_terms[] = {0, 1, 2, 3, 4, 5}, no_terms[] = {0};

static void base_model(ld_model *d)
{
    memset(d, 0, sizeof *d);
    d->nbody = 1;
    d->nq = 4;
    d->mass = mass;
    d->q_applied = gravity;
    d->nunit = 1;
    d->unit_body = unit_body;
    d->unit_row = unit_row;
    d->driver_work = -1;
}

static void revolute_model(ld_model *d)
{
    base_model(d);
    d->nc = 3;
    d->unit_slot = unit_slot1;
    d->unit_hslot = unit_hslot1;
    d->nrev = 1;
    d->rev_body = rev_body;
    d->rev_local = rev_local;
    d->rev_row = rev_row;
    d->rev_slot = rev_slot;
    d->phiq_nnz = 8;
    d->hess_nnz = 2;
}

static void rod_model(ld_model *d)
{
    base_model(d);
    d->nc = 2;
    d->unit_slot = unit_slot2;
    d->unit_hslot = unit_hslot2;
    d->ngen_rows = 1;
    d->gen_row = gen_row;
    d->ngen_slots = 4;
    d->gen_slot = gen_slot;
    d->gen_const = gen_const;
    d->nterm = 7;
    d->term_row = term_row;
    d->term_a = term_a;
    d->term_b = term_b;
    d->term_tf = term_tf;
    d->term_law = term_law;
    d->term_coef = term_coef;
    d->term_slot = term_slot;
    d->term_hslot = term_hslot;
    d->nvar_term = 6;
    d->var_term = all_terms;
    d->ngam_term = 6;
    d->gam_term = all_terms;
    d->ntime_term = 0;
    d->time_term = no_terms;
    d->nquad_term = 6;
    d->quad_term = all_terms;
    d->phiq_nnz = 6;
    d->hess_nnz = 8;
}

static ld_system system_of(ld_model *d, const int *colptr, const int *rowind,
                           const int *hcolptr, const int *hrowind)
{
    ld_system s;
    memset(&s, 0, sizeof s);
    s.nq = d->nq;
    s.nc = d->nc;
    s.mass = d->mass;
    s.phiq_nnz = d->phiq_nnz;
    s.phiq_colptr = colptr;
    s.phiq_rowind = rowind;
    s.fq_colptr = zcolptr;
    s.fv_colptr = zcolptr;
    s.hess_nnz = d->hess_nnz;
    s.hess_colptr = hcolptr;
    s.hess_rowind = hrowind;
    s.user = d;
    s.phi = ld_model_phi;
    s.phi_q = ld_model_phi_q;
    s.phi_t = ld_model_phi_t;
    s.gamma = ld_model_gamma;
    s.force = ld_model_force;
    s.force_q = ld_model_force_q;
    s.force_v = ld_model_force_v;
    s.phi_qq_lam = ld_model_phi_qq_lam;
    return s;
}

/* Dense Phi_q (3 x 4) from the CSC values. */
static void dense(const ld_system *s, const double *val, double J[3][4])
{
    int j, p;
    memset(J, 0, sizeof(double) * 12);
    for (j = 0; j < 4; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            J[s->phiq_rowind[p]][j] = val[p];
}

/* The kernels against central differences at a state off the constraints. */
static void check_derivatives(ld_system *s, const char *name)
{
    const double q[4] = {0.31, -0.42, 0.6, -0.7}, v[4] = {0.9, -0.3, 1.1, 0.8};
    const double lam[3] = {0.7, -1.3, 0.4};
    double val[8], J[3][4], Jp[3][4], Jm[3][4], qp[4], qm[4], pp[3], pm[3], gam[3];
    double H[8], Hd[4][4], err_j = 0.0, err_g = 0.0, err_h = 0.0, h = 1e-6, hg = 1e-4;
    char what[160];
    int i, j, k, p, nc = s->nc;
    s->phi_q(s->user, 0.0, q, val);
    dense(s, val, J);
    for (j = 0; j < 4; j++) {
        memcpy(qp, q, sizeof qp);
        memcpy(qm, q, sizeof qm);
        qp[j] += h;
        qm[j] -= h;
        s->phi(s->user, 0.0, qp, pp);
        s->phi(s->user, 0.0, qm, pm);
        for (i = 0; i < nc; i++) err_j = fmax(err_j, fabs((pp[i] - pm[i]) / (2 * h) - J[i][j]));
    }
    snprintf(what, sizeof what, "%s: Phi_q against differences of Phi (%.1e)", name, err_j);
    check(err_j < 1e-8, what);
    /* gamma = -(Phi_q v)_q v: the second difference of Phi along v, exact for these
     * quadratic rows but for rounding (eps / hg^2, hg = 1e-4: 2e-8) */
    s->gamma(s->user, 0.0, q, v, gam);
    for (k = 0; k < 4; k++) { qp[k] = q[k] + hg * v[k]; qm[k] = q[k] - hg * v[k]; }
    s->phi(s->user, 0.0, qp, pp);
    s->phi(s->user, 0.0, qm, pm);
    {
        double p0[3];
        s->phi(s->user, 0.0, q, p0);
        for (i = 0; i < nc; i++)
            err_g = fmax(err_g, fabs(-(pp[i] - 2 * p0[i] + pm[i]) / (hg * hg) - gam[i]));
    }
    snprintf(what, sizeof what, "%s: gamma against the second difference of Phi (%.1e)", name,
             err_g);
    check(err_g < 1e-6, what);
    /* H = d(Phi_q^T lam)/dq against differences of Phi_q^T lam */
    s->phi_qq_lam(s->user, 0.0, q, lam, H);
    memset(Hd, 0, sizeof Hd);
    for (j = 0; j < 4; j++)
        for (p = s->hess_colptr[j]; p < s->hess_colptr[j + 1]; p++)
            Hd[s->hess_rowind[p]][j] = H[p];
    for (j = 0; j < 4; j++) {
        memcpy(qp, q, sizeof qp);
        memcpy(qm, q, sizeof qm);
        qp[j] += h;
        qm[j] -= h;
        s->phi_q(s->user, 0.0, qp, val);
        dense(s, val, Jp);
        s->phi_q(s->user, 0.0, qm, val);
        dense(s, val, Jm);
        for (k = 0; k < 4; k++) {
            double d = 0.0;
            for (i = 0; i < nc; i++) d += (Jp[i][k] - Jm[i][k]) / (2 * h) * lam[i];
            err_h = fmax(err_h, fabs(d - Hd[k][j]));
        }
    }
    snprintf(what, sizeof what, "%s: Hessian term against differences of Phi_q^T lam (%.1e)",
             name, err_h);
    check(err_h < 1e-8, what);
}

/* Complete elliptic integral of the first kind K(m), m = k^2, by the AGM. */
static double ellipk(double m)
{
    double a = 1.0, b = sqrt(1.0 - m);
    while (fabs(a - b) > 1e-16 * a) { double an = 0.5 * (a + b); b = sqrt(a * b); a = an; }
    return PI / (2.0 * a);
}

/* Released at rest from theta0 off the vertical, in line with the pivot at the origin (the
 * bar's centre at distance arm). Returns the run's output rows at 0 and t_end in y. */
static int run(ld_system *s, double arm, int method, double t_end, double *y, int *n)
{
    ld_bdf_options opt;
    ld_bdf *w = NULL;
    double theta0 = 2.0, q[4], v[4] = {0, 0, 0, 0}, tout[2];
    int nw = 0, st;
    q[2] = sin(theta0);
    q[3] = -cos(theta0);
    q[0] = arm * q[2];
    q[1] = arm * q[3];
    ld_bdf_default_options(&opt);
    opt.rtol = opt.atol = 1e-10;
    opt.method = method;
    if ((st = ld_bdf_create(s, &opt, &w)) == LD_BDF_SUCCESS &&
        (st = ld_bdf_init(w, 0.0, q, v, NULL)) == LD_BDF_SUCCESS) {
        *n = ld_bdf_get_size(w);
        tout[0] = 0.0;
        tout[1] = t_end;
        st = ld_bdf_integrate(w, t_end, 2, tout, y, &nw);
        if (st == LD_BDF_SUCCESS && nw != 2) st = LD_BDF_BAD_INPUT;
    }
    ld_bdf_free(w);
    return st;
}

static double largest_row(const ld_system *s, double t, const double *q)
{
    double phi[3], worst = 0.0;
    int i;
    s->phi(s->user, t, q, phi);
    for (i = 0; i < s->nc; i++) worst = fmax(worst, fabs(phi[i]));
    return worst;
}

/* The pinned bar is a pendulum of equivalent length I / (m arm): after its exact period
 * (the elliptic integral) the state is the start's again, to the run's global error (some
 * tol^0.8 per unit time, far below the bound). */
static void check_period(ld_system *s, int method)
{
    double theta0 = 2.0, arm = HALF, I = mass[2] + mass[0] * arm * arm, period, y[2 * 11];
    double err = 0.0, rows;
    int i, n = 0, st;
    char what[160];
    period = 4.0 * ellipk(sin(theta0 / 2) * sin(theta0 / 2)) * sqrt(I / (mass[0] * G * arm));
    st = run(s, arm, method, period, y, &n);
    for (i = 0; i < 4; i++) err = fmax(err, fabs(y[n + i] - y[i]));
    rows = largest_row(s, period, y + n);
    snprintf(what, sizeof what, "pinned bar, %s: back at the start after the exact period "
             "(%.1e m), rows held (%.1e)", method == LD_METHOD_RK ? "rk" : "bdf", err, rows);
    check(st == LD_BDF_SUCCESS && err < 1e-6 && rows < 1e-12, what);
}

/* The bar on a rod is a double pendulum: no closed form, but its energy is kept, to the
 * global error of the run (relative 1e-6 = 1e4 rtol: the BDF's global error is up to some
 * 500 times the explicit method's at one tolerance, ld_run.c). */
static void check_energy(ld_system *s, int method)
{
    double y[2 * 10], e[2], rows;
    int k, i, n = 0, st;
    char what[160];
    st = run(s, HALF + ROD, method, 2.0, y, &n);
    for (k = 0; k < 2; k++) {
        const double *q = y + k * n, *v = q + 4;
        e[k] = mass[0] * G * q[1];
        for (i = 0; i < 4; i++) e[k] += 0.5 * mass[i] * v[i] * v[i];
    }
    rows = largest_row(s, 2.0, y + n);
    snprintf(what, sizeof what, "bar on a rod, %s: energy kept over 2 s (%.1e J of %.1f J), "
             "rows held (%.1e)", method == LD_METHOD_RK ? "rk" : "bdf", fabs(e[1] - e[0]),
             fabs(e[0]), rows);
    check(st == LD_BDF_SUCCESS && fabs(e[1] - e[0]) < 1e-6 * fabs(e[0]) && rows < 1e-12, what);
}

int main(void)
{
    ld_model m1, m2;
    ld_system s1, s2;
    revolute_model(&m1);
    rod_model(&m2);
    s1 = system_of(&m1, colptr1, rowind1, hcolptr1, hrowind1);
    s2 = system_of(&m2, colptr2, rowind2, hcolptr2, hrowind2);
    check_derivatives(&s1, "revolute model");
    check_derivatives(&s2, "rod model");
    check_period(&s1, LD_METHOD_RK);
    check_period(&s1, LD_METHOD_BDF);
    check_energy(&s2, LD_METHOD_RK);
    check_energy(&s2, LD_METHOD_BDF);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
