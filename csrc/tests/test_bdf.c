/*
 * Plain-C tests of the BDF integrator: a pendulum written directly against ld_system.
 * Build: cc -std=c99 test_bdf.c ../ld_bdf.c -I.. -I<suitesparse> -lklu -lm
 * Prints one line per check and "N passed, M failed"; exits non-zero on any failure.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ld_bdf.h"

#define PI 3.14159265358979323846

typedef struct {
    double half, mass, inertia, g;
    int duplicate_pin;   /* add the pin rows twice: a singular iteration matrix */
    double nan_after;    /* force turns NaN after this time (< 0: never) */
    double m4[4];        /* diagonal mass matrix, filled by make_system */
    long accepted;       /* calls of the accept hook */
} pendulum;

/* q = (x, y, ux, uy): a bar pinned at its end a = r - half u to the origin.
 * Rows: 0 unit vector, 1-2 pin (x, y) [, 3-4 the same pin again]. */
static const int colptr1[] = {0, 1, 2, 4, 6};
static const int rowind1[] = {1, 2, 0, 1, 0, 2};
static const int colptr2[] = {0, 2, 4, 7, 10};
static const int rowind2[] = {1, 3, 2, 4, 0, 1, 3, 0, 2, 4};
static const int hcolptr[] = {0, 0, 0, 1, 2};
static const int hrowind[] = {2, 3};
static const int zcolptr[] = {0, 0, 0, 0, 0};

static int pins(const pendulum *p) { return p->duplicate_pin ? 2 : 1; }

static int phi(void *user, double t, const double *q, double *out)
{
    const pendulum *p = (const pendulum *)user;
    int k;
    (void)t;
    out[0] = q[2] * q[2] + q[3] * q[3] - 1.0;
    for (k = 0; k < pins(p); k++) {
        out[1 + 2 * k] = q[0] - p->half * q[2];
        out[2 + 2 * k] = q[1] - p->half * q[3];
    }
    return LD_OK;
}

static int phi_q(void *user, double t, const double *q, double *v)
{
    const pendulum *p = (const pendulum *)user;
    (void)t;
    if (!p->duplicate_pin) {
        v[0] = 1; v[1] = 1; v[2] = 2 * q[2]; v[3] = -p->half; v[4] = 2 * q[3]; v[5] = -p->half;
    } else {
        v[0] = 1; v[1] = 1; v[2] = 1; v[3] = 1;
        v[4] = 2 * q[2]; v[5] = -p->half; v[6] = -p->half;
        v[7] = 2 * q[3]; v[8] = -p->half; v[9] = -p->half;
    }
    return LD_OK;
}

static int phi_t(void *user, double t, const double *q, double *out)
{
    const pendulum *p = (const pendulum *)user;
    int i;
    (void)t; (void)q;
    for (i = 0; i < 1 + 2 * pins(p); i++) out[i] = 0.0;
    return LD_OK;
}

static int gamma_fn(void *user, double t, const double *q, const double *v, double *out)
{
    const pendulum *p = (const pendulum *)user;
    int i;
    (void)t; (void)q;
    out[0] = -2.0 * (v[2] * v[2] + v[3] * v[3]);
    for (i = 1; i < 1 + 2 * pins(p); i++) out[i] = 0.0;
    return LD_OK;
}

static int force(void *user, double t, const double *q, const double *v, double *out)
{
    const pendulum *p = (const pendulum *)user;
    (void)q; (void)v;
    out[0] = 0.0; out[1] = -p->mass * p->g; out[2] = 0.0; out[3] = 0.0;
    if (p->nan_after >= 0 && t > p->nan_after) out[1] = NAN;
    return LD_OK;
}

static int nothing(void *user, double t, const double *q, const double *v, double *out)
{
    (void)user; (void)t; (void)q; (void)v; (void)out;
    return LD_OK;
}

static int hess(void *user, double t, const double *q, const double *lam, double *out)
{
    (void)user; (void)t; (void)q;
    out[0] = 2.0 * lam[0];
    out[1] = 2.0 * lam[0];
    return LD_OK;
}

/* Quadrature: the power of gravity, -m g v_y, whose integral is -(V(t) - V(0)). */
static int gravity_power(void *user, double t, const double *q, const double *v,
                         const double *lam, double *out)
{
    const pendulum *p = (const pendulum *)user;
    (void)t; (void)q; (void)lam;
    out[0] = -p->mass * p->g * v[1];
    return LD_OK;
}

/* Event: the bar's centre crosses x = 0 (the bottom of the swing). */
static int bottom(void *user, double t, const double *q, const double *v, const double *lam,
                  double *g)
{
    (void)user; (void)t; (void)v; (void)lam;
    g[0] = q[0];
    return LD_OK;
}

/* Event at a set time: regula falsi lands on it exactly (a zero trial value). */
static int at_time(void *user, double t, const double *q, const double *v, const double *lam,
                   double *g)
{
    (void)user; (void)q; (void)v; (void)lam;
    g[0] = t - 0.3;
    return LD_OK;
}

static int count_accepted(void *user, double t, const double *q, const double *v)
{
    (void)t; (void)q; (void)v;
    ((pendulum *)user)->accepted++;
    return LD_OK;
}

static ld_system make_system(pendulum *p)
{
    ld_system s;
    p->m4[0] = p->m4[1] = p->mass;
    p->m4[2] = p->m4[3] = p->inertia;
    memset(&s, 0, sizeof s);
    s.nq = 4;
    s.nc = 1 + 2 * pins(p);
    s.mass = p->m4;
    s.phiq_nnz = p->duplicate_pin ? 10 : 6;
    s.phiq_colptr = p->duplicate_pin ? colptr2 : colptr1;
    s.phiq_rowind = p->duplicate_pin ? rowind2 : rowind1;
    s.fq_colptr = zcolptr; s.fv_colptr = zcolptr;
    s.hess_nnz = 2; s.hess_colptr = hcolptr; s.hess_rowind = hrowind;
    s.user = p;
    s.phi = phi; s.phi_q = phi_q; s.phi_t = phi_t; s.gamma = gamma_fn; s.force = force;
    s.force_q = nothing; s.force_v = nothing; s.phi_qq_lam = hess;
    return s;
}

static int passed = 0, failed = 0;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (ok) passed++; else failed++;
}

/* Complete elliptic integral of the first kind K(m), m = k^2, by the AGM. */
static double ellipk(double m)
{
    double a = 1.0, b = sqrt(1.0 - m);
    while (fabs(a - b) > 1e-16 * a) { double an = 0.5 * (a + b); b = sqrt(a * b); a = an; }
    return PI / (2.0 * a);
}

static void initial_state(const pendulum *p, double theta, double *q, double *v)
{
    q[2] = sin(theta); q[3] = -cos(theta);
    q[0] = p->half * q[2]; q[1] = p->half * q[3];
    v[0] = v[1] = v[2] = v[3] = 0.0;
}

/* The explicit method with the pins' Phi_q entries declared constant (ld_system.phiq_const):
 * the Schur complement's constant products are summed once, and every row, multiplier and
 * counter is the same to the bit as without the declaration; with the pin doubled and the
 * duplicate switched off (row_active), the same, and the constraints still hold. */
static const int const1[] = {1, 1, 0, 1, 0, 1};
static const int const2[] = {1, 1, 1, 1, 0, 1, 1, 0, 1, 1};

static void check_constant_entries(double theta0, double period)
{
    enum { ROWS = 21 };
    static double plain[ROWS * 15], planned[ROWS * 15];
    static const int active[5] = {1, 1, 1, 0, 0};
    double q[4], v[4], times[ROWS], res[5];
    int dup, k, nw, n;
    for (k = 0; k < ROWS; k++) times[k] = period * k / (ROWS - 1);
    for (dup = 0; dup <= 1; dup++) {
        long steps[2], facts[2];
        int pass, same = 1, st[2];
        for (pass = 0; pass < 2; pass++) {
            pendulum p = {0.5, 2.0, 2.0 / 12.0, 9.81, dup, -1.0, {0, 0, 0, 0}, 0};
            ld_system s = make_system(&p);
            ld_bdf_options o;
            ld_bdf *w = NULL;
            ld_bdf_default_options(&o);
            o.method = LD_METHOD_RK;
            o.rtol = o.atol = 1e-9;
            if (dup) s.row_active = active;
            if (pass) s.phiq_const = dup ? const2 : const1;
            initial_state(&p, theta0, q, v);
            nw = 0;
            st[pass] = ld_bdf_create(&s, &o, &w) == LD_BDF_SUCCESS &&
                       ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SUCCESS
                           ? ld_bdf_integrate(w, period, ROWS, times, pass ? planned : plain, &nw)
                           : -1;
            steps[pass] = w ? ld_bdf_get_stats(w)->steps : -1;
            facts[pass] = w ? ld_bdf_get_stats(w)->schur_factorizations : -1;
            n = w ? ld_bdf_get_size(w) : 0;
            if (nw != ROWS) st[pass] = -1;
            ld_bdf_free(w);
            if (pass) phi(&p, period, planned + (size_t)(ROWS - 1) * n, res);
        }
        for (k = 0; k < ROWS * n; k++) same = same && plain[k] == planned[k];
        check(st[0] == LD_BDF_SUCCESS && st[1] == LD_BDF_SUCCESS && same &&
                  steps[0] == steps[1] && facts[0] == facts[1] && facts[1] > 12 * steps[1],
              dup ? "constant entries, a pin switched off: the same rows to the bit"
                  : "constant entries planned once: the same rows, steps and factorisations");
        check(fabs(res[0]) + fabs(res[1]) + fabs(res[2]) < 1e-12,
              "constant entries: the constraints hold at the end");
    }
}

static void no_add(const double *J, const double *m, double *LD) { (void)J; (void)m; (void)LD; }
static void no_elim(double *LD) { (void)LD; }

/* The plan written out as C (ld_schur_gen.c): its length asked first, then written whole or
 * cut with a NUL; code with another signature, or missing a function, is refused. */
static void check_schur_source(void)
{
    pendulum p = {0.5, 2.0, 2.0 / 12.0, 9.81, 1, -1.0, {0, 0, 0, 0}, 0};
    ld_system s = make_system(&p);
    ld_bdf_options o;
    ld_bdf *w = NULL;
    static char text[200000], cut[64];
    long n, m;
    unsigned long long sig = 0;
    const char *at;
    ld_schur_code code = {0};
    ld_bdf_default_options(&o);
    o.method = LD_METHOD_RK;
    if (ld_bdf_create(&s, &o, &w) != LD_BDF_SUCCESS) {
        check(0, "schur source: create");
        return;
    }
    n = ld_bdf_schur_source(w, NULL, 0);
    m = ld_bdf_schur_source(w, text, (long)sizeof text);
    check(n > 0 && m == n && (long)strlen(text) == n &&
              strstr(text, "void ldg_elim(") && strstr(text, "void ldg_solve(") &&
              strstr(text, "void ldg_add(") && strstr(text, "void ldg_jt(") &&
              strstr(text, "void ldg_jm("),
          "schur source: its length, then all of it with its functions");
    check(ld_bdf_schur_size_bound(w) > 0 && ld_bdf_schur_size_bound(w) <= n,
          "schur source: the quick bound is below its length");
    check(ld_bdf_schur_source(w, cut, (long)sizeof cut) == n &&
              strlen(cut) == sizeof cut - 1 && strncmp(cut, text, sizeof cut - 1) == 0,
          "schur source: a short buffer gets its start, NUL-terminated");
    at = strstr(text, "return ");
    if (at) sig = strtoull(at + 7, NULL, 10);
    code.signature = sig;
    code.add = no_add;
    code.elim = no_elim;
    check(ld_bdf_set_schur_code(w, &code) == LD_BDF_BAD_INPUT,
          "schur code: refused without all its functions");
    check(ld_bdf_set_schur_code(w, NULL) == LD_BDF_SUCCESS, "schur code: NULL, the loops");
    ld_bdf_free(w);
    o.method = LD_METHOD_BDF;
    w = NULL;
    check(ld_bdf_create(&s, &o, &w) == LD_BDF_SUCCESS &&
              ld_bdf_schur_source(w, NULL, 0) == -1 && ld_bdf_schur_size_bound(w) == -1 &&
              ld_bdf_set_schur_code(w, &code) == LD_BDF_BAD_INPUT,
          "schur source: none without the explicit method");
    ld_bdf_free(w);
}

/* Straight-line LU code's place in the BDF (ld_bdf_set_lu_code), exercised by two stand-ins:
 * a "code" whose pivots never serve (KLU factorises every time: the run is the run without
 * it, to the bit) and a dense LU with partial pivoting over the pattern (the run agrees with
 * KLU's to round-off, and every factorisation is the stand-in's). */
static int lu_n;
static const int *lu_colptr, *lu_rowind;

static double refuse_factor(const double *a, double *lu, int *sign)
{
    (void)a; (void)lu; *sign = 1;
    return 0.0;
}

static double dense_factor(const double *a, double *lu, int *sign)
{
    int n = lu_n, i, j, k, p, piv;
    double *m = lu, *perm = lu + n * n, big = 0.0, small = HUGE_VAL, t;
    for (i = 0; i < n * n; i++) m[i] = 0.0;
    for (j = 0; j < n; j++)
        for (p = lu_colptr[j]; p < lu_colptr[j + 1]; p++) m[lu_rowind[p] * n + j] = a[p];
    for (i = 0; i < n; i++) perm[i] = i;
    *sign = 1;
    for (k = 0; k < n; k++) {
        piv = k;
        for (i = k + 1; i < n; i++)
            if (fabs(m[i * n + k]) > fabs(m[piv * n + k])) piv = i;
        if (!(fabs(m[piv * n + k]) > 0.0)) return 0.0;
        if (piv != k) {
            for (j = 0; j < n; j++) {
                t = m[k * n + j];
                m[k * n + j] = m[piv * n + j];
                m[piv * n + j] = t;
            }
            t = perm[k]; perm[k] = perm[piv]; perm[piv] = t;
            *sign = -*sign;
        }
        t = fabs(m[k * n + k]);
        big = t > big ? t : big;
        small = t < small ? t : small;
        for (i = k + 1; i < n; i++) {
            m[i * n + k] /= m[k * n + k];
            for (j = k + 1; j < n; j++) m[i * n + j] -= m[i * n + k] * m[k * n + j];
        }
    }
    return small / big;
}

static void dense_solve(const double *lu, double *x, double *w)
{
    int n = lu_n, i, j;
    const double *m = lu, *perm = lu + n * n;
    for (i = 0; i < n; i++) w[i] = x[(int)perm[i]];
    for (i = 0; i < n; i++)
        for (j = 0; j < i; j++) w[i] -= m[i * n + j] * w[j];
    for (i = n - 1; i >= 0; i--) {
        for (j = i + 1; j < n; j++) w[i] -= m[i * n + j] * w[j];
        w[i] /= m[i * n + i];
    }
    for (i = 0; i < n; i++) x[i] = w[i];
}

static void check_lu_code(double theta0, double period)
{
    enum { ROWS = 11 };
    static double rows[3][ROWS * 11];
    double q[4], v[4], times[ROWS], worst = 0.0;
    long facts[3] = {0, 0, 0}, gen[3] = {0, 0, 0}, steps[3] = {0, 0, 0};
    int pass, k, nw, st[3], same = 1;
    for (k = 0; k < ROWS; k++) times[k] = period * k / (ROWS - 1);
    for (pass = 0; pass < 3; pass++) {
        pendulum p = {0.5, 2.0, 2.0 / 12.0, 9.81, 0, -1.0, {0, 0, 0, 0}, 0};
        ld_system s = make_system(&p);
        ld_bdf_options o;
        ld_bdf *w = NULL;
        ld_lu_code code = {0};
        ld_bdf_default_options(&o);
        o.method = LD_METHOD_BDF;
        o.rtol = o.atol = 1e-9;
        initial_state(&p, theta0, q, v);
        nw = 0;
        st[pass] = -1;
        if (ld_bdf_create(&s, &o, &w) == LD_BDF_SUCCESS) {
            ld_bdf_g_pattern(w, &lu_n, &lu_colptr, &lu_rowind);
            code.signature = ld_bdf_g_signature(w);
            code.size = lu_n * lu_n + lu_n;
            code.factor = pass == 1 ? refuse_factor : dense_factor;
            code.solve = dense_solve;
            if (pass == 0 || ld_bdf_set_lu_code(w, &code) == LD_BDF_SUCCESS)
                st[pass] = ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SUCCESS
                               ? ld_bdf_integrate(w, period, ROWS, times, rows[pass], &nw)
                               : -1;
            facts[pass] = ld_bdf_get_stats(w)->factorizations;
            gen[pass] = ld_bdf_get_stats(w)->generated_factorizations;
            steps[pass] = ld_bdf_get_stats(w)->steps;
            if (pass == 2) {
                code.signature ^= 1ULL;
                check(ld_bdf_set_lu_code(w, &code) == LD_BDF_BAD_INPUT,
                      "lu code: another pattern's signature is refused");
                code.signature ^= 1ULL;
                code.solve = NULL;
                check(ld_bdf_set_lu_code(w, &code) == LD_BDF_BAD_INPUT,
                      "lu code: refused without its solve");
                check(ld_bdf_set_lu_code(w, NULL) == LD_BDF_SUCCESS, "lu code: NULL, KLU");
            }
        }
        if (nw != ROWS) st[pass] = -1;
        ld_bdf_free(w);
    }
    for (k = 0; k < ROWS * 11; k++) {
        same = same && rows[0][k] == rows[1][k];
        worst = fmax(worst, fabs(rows[0][k] - rows[2][k]));
    }
    check(st[0] == LD_BDF_SUCCESS && st[1] == LD_BDF_SUCCESS && same && gen[1] == 0 &&
              facts[1] == facts[0] && steps[1] == steps[0],
          "lu code whose pivots never serve: KLU's run, to the bit");
    check(st[2] == LD_BDF_SUCCESS && gen[2] == facts[2] && gen[2] > 0 && worst < 1e-6,
          "lu code (a dense stand-in): every factorisation its own, KLU's run to the tolerance");
}

int main(void)
{
    pendulum p = {0.5, 2.0, 2.0 / 12.0, 9.81, 0, -1.0, {0, 0, 0, 0}, 0};
    ld_system sys = make_system(&p);
    ld_bdf_options opt;
    ld_bdf *w = NULL;
    double q[4], v[4], theta0 = 2.0, period, y[3 * 11], tout[3];  /* rows of n = 11 */
    int nw = 0, st;

    /* 1. Large-amplitude period: equivalent length 2L/3 = 2/3 for L = 1. */
    period = 4.0 * ellipk(sin(theta0 / 2) * sin(theta0 / 2)) / sqrt(p.g / (2.0 / 3.0));
    ld_bdf_default_options(&opt);
    opt.rtol = opt.atol = 1e-10;
    check(ld_bdf_create(&sys, &opt, &w) == LD_BDF_SUCCESS, "create");
    initial_state(&p, theta0, q, v);
    check(ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SUCCESS, "init");
    check(ld_bdf_get_size(w) == 11, "state size 2 nq + nc");
    tout[0] = 0.0; tout[1] = 0.5 * period; tout[2] = period;
    st = ld_bdf_integrate(w, period, 3, tout, y, &nw);
    check(st == LD_BDF_SUCCESS && nw == 3, "integrate one period");
    check(ld_bdf_get_time(w) == period, "stops exactly at t_end");
    check(fabs(atan2(y[11 + 2], -y[11 + 3]) + theta0) < 1e-7, "opposite turning point at T/2");
    check(fabs(atan2(y[22 + 2], -y[22 + 3]) - theta0) < 1e-7, "back at theta0 after T");
    check(fabs(y[22 + 4]) + fabs(y[22 + 5]) < 1e-6, "at rest after T");
    check(ld_bdf_get_stats(w)->steps > 50 && ld_bdf_get_stats(w)->factorizations >= 1 &&
          ld_bdf_get_stats(w)->residual_evaluations == ld_bdf_get_stats(w)->newton_iterations,
          "counters");
    /* Continue in a second call: the state carries over. */
    nw = 0;
    st = ld_bdf_integrate(w, 1.5 * period, 0, NULL, NULL, &nw);
    check(st == LD_BDF_SUCCESS && ld_bdf_get_time(w) == 1.5 * period, "continue to 1.5 T");
    ld_bdf_get_state(w, y);
    check(fabs(atan2(y[2], -y[3]) + theta0) < 1e-7, "turning point at 1.5 T");

    check_lu_code(theta0, period);

    /* 2. Interrupt flag: stops before the first step. */
    {
        volatile int flag = 1;
        ld_bdf *w2 = NULL;
        opt.interrupt = &flag;
        ld_bdf_create(&sys, &opt, &w2);
        ld_bdf_init(w2, 0.0, q, v, NULL);
        nw = 0;
        check(ld_bdf_integrate(w2, 1.0, 0, NULL, NULL, &nw) == LD_BDF_INTERRUPTED &&
              ld_bdf_get_time(w2) == 0.0, "interrupt flag stops the run");
        ld_bdf_free(w2);
        opt.interrupt = NULL;
    }
    ld_bdf_free(w);

    /* 3. Bad input. */
    opt.rtol = 0.0;
    check(ld_bdf_create(&sys, &opt, &w) == LD_BDF_BAD_INPUT && w == NULL, "rtol = 0 rejected");
    opt.rtol = 1e-8;
    opt.max_order = 6;
    check(ld_bdf_create(&sys, &opt, &w) == LD_BDF_BAD_INPUT, "max_order 6 rejected");
    opt.max_order = 5;

    /* 4. Redundant pin rows: the iteration matrix is singular. */
    {
        pendulum p2 = p;
        ld_system s2;
        double t, h;
        int index;
        p2.duplicate_pin = 1;
        s2 = make_system(&p2);
        check(ld_bdf_create(&s2, &opt, &w) == LD_BDF_SUCCESS, "create (redundant)");
        initial_state(&p2, 0.3, q, v);
        check(ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SINGULAR, "redundant rows: singular");
        ld_bdf_get_failure(w, &t, &h, &index);
        check(index >= 4, "zero pivot reported on a multiplier column");
        ld_bdf_free(w);

        /* With regularization the same rows integrate one period as the single pin does,
         * and the two copies of the pin carry half the reaction each (least norm). */
        {
            ld_bdf_options o2 = opt;
            double yr[3 * 13], tr[3];
            o2.rtol = o2.atol = 1e-10;
            o2.output_regularization = 1e-8;
            o2.regularization = -1.0;
            check(ld_bdf_create(&s2, &o2, &w) == LD_BDF_BAD_INPUT,
                  "negative regularization rejected");
            o2.regularization = 1e-12;
            check(ld_bdf_create(&s2, &o2, &w) == LD_BDF_SUCCESS, "create (regularised)");
            initial_state(&p2, theta0, q, v);
            check(ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SUCCESS,
                  "redundant rows, regularised: init");
            tr[0] = 0.0; tr[1] = 0.5 * period; tr[2] = period;
            nw = 0;
            st = ld_bdf_integrate(w, period, 3, tr, yr, &nw);
            check(st == LD_BDF_SUCCESS && nw == 3, "redundant rows, regularised: one period");
            check(fabs(atan2(yr[26 + 2], -yr[26 + 3]) - theta0) < 1e-7,
                  "redundant rows, regularised: back at theta0 after T");
            /* lam = (unit, pin x, pin y, pin x again, pin y again) from offset 8. */
            check(fabs(yr[13 + 9] - yr[13 + 11]) < 1e-6 * fabs(yr[13 + 9]) + 1e-9 &&
                  fabs(yr[13 + 10] - yr[13 + 12]) < 1e-6 * fabs(yr[13 + 10]) + 1e-9 &&
                  fabs(yr[13 + 10]) > 1.0, "the copies share the pin force evenly");
            ld_bdf_free(w);
        }
    }

    /* 5. NaN from the model: cut steps, then give up with LD_BDF_NONFINITE at t ~ 0.1. */
    {
        pendulum p3 = p;
        ld_system s3;
        double t, h;
        int index;
        p3.nan_after = 0.1;
        s3 = make_system(&p3);
        ld_bdf_create(&s3, &opt, &w);
        initial_state(&p3, 0.3, q, v);
        ld_bdf_init(w, 0.0, q, v, NULL);
        nw = 0;
        st = ld_bdf_integrate(w, 1.0, 0, NULL, NULL, &nw);
        ld_bdf_get_failure(w, &t, &h, &index);
        check(st == LD_BDF_NONFINITE && t <= 0.1 && t > 0.09, "NaN force: non-finite status");
        ld_bdf_free(w);
    }

    /* 6. Tolerance proportionality and the round-off floor. */
    {
        ld_bdf_options o;
        ld_bdf_default_options(&o);
        o.rtol = o.atol = 1e-10;
        ld_bdf_create(&sys, &o, &w);
        check(fabs(ld_bdf_get_stats(w)->local_rtol / (1e-10 * pow(1e-10 / 2e-6, 0.25)) - 1.0)
                  < 1e-12, "local rtol = rtol (rtol / 2e-6)^(1/4)");
        ld_bdf_free(w);
        o.proportional = 0;
        ld_bdf_create(&sys, &o, &w);
        check(ld_bdf_get_stats(w)->local_rtol == 1e-10, "proportional = 0: local rtol = rtol");
        ld_bdf_free(w);
        /* At the floor (100 eps max(1, max|q0|) = 100 eps here) a whole period runs without the step collapsing, and with a
         * requested Newton tolerance below round-off. */
        o.proportional = 1;
        o.rtol = o.atol = 1e-14;
        o.newton_tol = 1e-9;
        ld_bdf_create(&sys, &o, &w);
        initial_state(&p, theta0, q, v);
        ld_bdf_init(w, 0.0, q, v, NULL);
        check(ld_bdf_get_stats(w)->local_rtol == 100 * DBL_EPSILON, "local rtol floor 100 eps");
        nw = 0;
        tout[0] = period;
        st = ld_bdf_integrate(w, period, 1, tout, y, &nw);
        check(st == LD_BDF_SUCCESS && fabs(atan2(y[2], -y[3]) - theta0) < 1e-9,
              "one period at rtol 1e-14");
        check(ld_bdf_get_stats(w)->rejected_error + ld_bdf_get_stats(w)->rejected_newton <
                  0.05 * ld_bdf_get_stats(w)->steps, "few rejections at the floor");
        ld_bdf_free(w);
    }

    /* 7. Quadratures, the accept hook and a restart: z' = -m g v_y integrates to the loss of
     * potential energy; the hook sees the initial state and every accepted step; a restart
     * at T/2 keeps (q, v, z) and the motion goes on to the turning point at T. */
    {
        pendulum p4 = p;
        ld_system s4;
        ld_bdf_options o;
        double z0 = 0.25, yrow[12], y0;
        s4 = make_system(&p4);
        s4.nz = 1;
        s4.aux_rate = gravity_power;
        s4.accept = count_accepted;
        ld_bdf_default_options(&o);
        o.rtol = o.atol = 1e-10;
        check(ld_bdf_create(&s4, &o, &w) == LD_BDF_SUCCESS && ld_bdf_get_size(w) == 12,
              "create with one quadrature (n = 2 nq + nc + nz)");
        initial_state(&p4, theta0, q, v);
        y0 = q[1];
        ld_bdf_init(w, 0.0, q, v, &z0);
        check(p4.accepted == 1, "accept hook at the initial state");
        nw = 0;
        st = ld_bdf_integrate(w, 0.5 * period, 0, NULL, NULL, &nw);
        ld_bdf_get_state(w, yrow);
        check(st == LD_BDF_SUCCESS && p4.accepted == 1 + ld_bdf_get_stats(w)->steps,
              "accept hook after every accepted step");
        check(fabs(yrow[11] - z0 + p4.mass * p4.g * (yrow[1] - y0)) < 1e-7,
              "quadrature of the gravity power = -(V(t) - V(0))");
        check(ld_bdf_restart(w) == LD_BDF_SUCCESS && ld_bdf_get_time(w) == 0.5 * period,
              "restart at T/2");
        st = ld_bdf_integrate(w, period, 0, NULL, NULL, &nw);
        ld_bdf_get_state(w, yrow);
        check(st == LD_BDF_SUCCESS && fabs(atan2(yrow[2], -yrow[3]) - theta0) < 1e-7 &&
                  fabs(yrow[11] - z0 + p4.mass * p4.g * (yrow[1] - y0)) < 1e-7,
              "after the restart: back at theta0 after T, quadrature still exact");
        ld_bdf_free(w);
    }

    /* 8. Events: the swing passes the bottom at T/4 (falling x) and 3T/4 (rising); each
     * stops the integration at the located time, output rows up to it are written, and the
     * next call restarts there. */
    {
        pendulum p5 = p;
        ld_system s5;
        ld_bdf_options o;
        int fired[1], nw5 = 0, st5;
        double rows[4 * 11], times[4], te1, te2;
        s5 = make_system(&p5);
        s5.nev = 1;
        s5.events = bottom;
        ld_bdf_default_options(&o);
        o.rtol = o.atol = 1e-10;
        ld_bdf_create(&s5, &o, &w);
        initial_state(&p5, theta0, q, v);
        ld_bdf_init(w, 0.0, q, v, NULL);
        times[0] = 0.1 * period; times[1] = 0.3 * period; times[2] = 0.6 * period;
        times[3] = period;
        st5 = ld_bdf_integrate(w, period, 4, times, rows, &nw5);
        te1 = ld_bdf_get_event(w, fired);
        check(st5 == LD_BDF_EVENT && fabs(te1 - 0.25 * period) < 1e-8 && fired[0] == -1,
              "event at T/4, falling");
        check(nw5 == 1 && ld_bdf_get_time(w) == te1, "rows up to the event, state at it");
        st5 = ld_bdf_integrate(w, period, 4, times, rows, &nw5);
        te2 = ld_bdf_get_event(w, fired);
        check(st5 == LD_BDF_EVENT && fabs(te2 - 0.75 * period) < 1e-8 && fired[0] == 1 &&
                  nw5 == 3, "event at 3T/4, rising, after a restart");
        st5 = ld_bdf_integrate(w, period, 4, times, rows, &nw5);
        check(st5 == LD_BDF_SUCCESS && nw5 == 4 && fabs(atan2(rows[33 + 2], -rows[33 + 3]) -
                                                       theta0) < 1e-7,
              "on to T after two events: back at theta0");
        check(ld_bdf_get_stats(w)->events == 2 && ld_bdf_get_stats(w)->restarts == 2,
              "event and restart counters");
        ld_bdf_free(w);
    }

    /* 9. An event function that reaches exactly zero at a trial point still fires, once. */
    {
        pendulum p6 = p;
        ld_system s6;
        ld_bdf_options o;
        int fired[1] = {0}, nw6 = 0, st6;
        s6 = make_system(&p6);
        s6.nev = 1;
        s6.events = at_time;
        ld_bdf_default_options(&o);
        o.rtol = o.atol = 1e-8;
        ld_bdf_create(&s6, &o, &w);
        initial_state(&p6, 0.5, q, v);
        ld_bdf_init(w, 0.0, q, v, NULL);
        st6 = ld_bdf_integrate(w, 1.0, 0, NULL, NULL, &nw6);
        check(st6 == LD_BDF_EVENT && fabs(ld_bdf_get_event(w, fired) - 0.3) < 1e-12 &&
                  fired[0] == 1, "an exact zero at a trial fires the event");
        st6 = ld_bdf_integrate(w, 1.0, 0, NULL, NULL, &nw6);
        check(st6 == LD_BDF_SUCCESS && ld_bdf_get_stats(w)->events == 1, "and only once");
        ld_bdf_free(w);
    }


    /* 10. Switchable rows: the pendulum's pin rows are switched off at the bottom of the
     * swing (an event, then a restart); the bar flies free: its centre follows the parabola
     * of its velocity there, it spins at a constant rate, and the pin multipliers are 0. */
    {
        pendulum p7 = p;
        ld_system s7;
        ld_bdf_options o;
        int fired[1] = {0}, nw7 = 0, st7, active[3] = {1, 1, 1};
        double y0[11], y1[11], tau = 0.3, te, omega0, ok_lam;
        s7 = make_system(&p7);
        s7.nev = 1;
        s7.events = bottom;
        s7.row_active = active;
        ld_bdf_default_options(&o);
        o.rtol = o.atol = 1e-10;
        ld_bdf_create(&s7, &o, &w);
        initial_state(&p7, theta0, q, v);
        ld_bdf_init(w, 0.0, q, v, NULL);
        st7 = ld_bdf_integrate(w, period, 0, NULL, NULL, &nw7);
        te = ld_bdf_get_event(w, fired);
        ld_bdf_get_state(w, y0);
        ok_lam = fabs(y0[9]) + fabs(y0[10]);
        active[1] = active[2] = 0;
        st7 = st7 == LD_BDF_EVENT ? ld_bdf_restart(w) : st7;
        st7 = st7 == LD_BDF_SUCCESS ? ld_bdf_integrate(w, te + tau, 0, NULL, NULL, &nw7) : st7;
        ld_bdf_get_state(w, y1);
        omega0 = y0[2] * y0[7] - y0[3] * y0[6];   /* ux uy' - uy ux' */
        check(st7 == LD_BDF_SUCCESS && fabs(te - 0.25 * period) < 1e-8 && ok_lam > 1.0,
              "pinned to the bottom of the swing (pin force non-zero)");
        check(fabs(y1[0] - (y0[0] + y0[4] * tau)) < 1e-8 &&
                  fabs(y1[1] - (y0[1] + y0[5] * tau - 0.5 * p7.g * tau * tau)) < 1e-8,
              "pin switched off: the centre flies on a parabola");
        check(fabs(remainder(atan2(y1[3], y1[2]) - atan2(y0[3], y0[2]) - omega0 * tau, 2 * PI)) <
                      1e-8 &&
                  y1[9] == 0.0 && y1[10] == 0.0,
              "constant spin, pin multipliers exactly zero");
        ld_bdf_free(w);
    }

    /* 9. stop_when_full: 41 rows over a period, in buffers of 3 rows, come out bit for bit as
     * in one buffer, with the same steps (a buffer may fill in the middle of a step's rows). */
    {
        enum { ROWS = 41, N = 11, BUF = 3 };
        static double one[ROWS * N], parts[ROWS * N], times[ROWS];
        double buf[BUF * N];
        long steps_one;
        int k, nw9, st9, done = 0, calls = 0, same = 1;
        pendulum p9 = {0.5, 2.0, 2.0 / 12.0, 9.81, 0, -1.0, {0, 0, 0, 0}, 0};
        ld_system s9 = make_system(&p9);
        for (k = 0; k < ROWS; k++) times[k] = period * k / (ROWS - 1);
        ld_bdf_default_options(&opt);
        opt.rtol = opt.atol = 1e-8;
        initial_state(&p9, theta0, q, v);
        check(ld_bdf_create(&s9, &opt, &w) == LD_BDF_SUCCESS &&
                  ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SUCCESS,
              "stop_when_full: reference run set up");
        nw9 = 0;
        st9 = ld_bdf_integrate(w, period, ROWS, times, one, &nw9);
        steps_one = ld_bdf_get_stats(w)->steps;
        check(st9 == LD_BDF_SUCCESS && nw9 == ROWS, "stop_when_full: reference rows");
        ld_bdf_free(w);
        opt.stop_when_full = 1;
        check(ld_bdf_create(&s9, &opt, &w) == LD_BDF_SUCCESS &&
                  ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SUCCESS,
              "stop_when_full: buffered run set up");
        do {
            int room = ROWS - done < BUF ? ROWS - done : BUF;
            nw9 = 0;
            st9 = ld_bdf_integrate(w, period, room, times + done, buf, &nw9);
            memcpy(parts + (size_t)done * N, buf, (size_t)nw9 * N * sizeof(double));
            done += nw9;
            calls++;
        } while (st9 == LD_BDF_OUTPUT_FULL && calls < 100);
        for (k = 0; k < ROWS * N; k++) same = same && parts[k] == one[k];
        check(st9 == LD_BDF_SUCCESS && done == ROWS && calls >= ROWS / BUF, "stop_when_full: "
              "every row written, the buffers full on the way");
        check(same && ld_bdf_get_stats(w)->steps == steps_one &&
                  ld_bdf_get_time(w) == period,
              "stop_when_full: rows and steps identical to one buffer");
        check(ld_bdf_get_stats(w)->output_rows == ROWS, "stop_when_full: rows counted");
        ld_bdf_free(w);
    }

    /* 12. The explicit method (ld_rk.c) and method auto on the same pendulum: the period,
     * the constraints held by the projection, its counters, the bottom event at T/4 and the
     * quadrature of gravity's power. */
    {
        int mth;
        for (mth = LD_METHOD_RK; mth <= LD_METHOD_AUTO; mth++) {
            pendulum pr = p;
            ld_system sr = make_system(&pr);
            ld_bdf_options o = opt;
            const ld_bdf_stats *sts;
            double yr[3 * 12], tr[3], te, phires[3], z0 = 0.0;
            int fired[1], nwr = 0, str;
            const char *name = mth == LD_METHOD_RK ? "rk" : "auto";
            char what[160];
            o.stop_when_full = 0;
            o.method = mth;
            o.rtol = o.atol = 1e-10;
            sr.nz = 1;
            sr.aux_rate = gravity_power;
            sr.nev = 1;
            sr.events = bottom;
            check(ld_bdf_create(&sr, &o, &w) == LD_BDF_SUCCESS, "explicit: create");
            initial_state(&pr, theta0, q, v);
            check(ld_bdf_init(w, 0.0, q, v, &z0) == LD_BDF_SUCCESS, "explicit: init");
            tr[0] = 0.0; tr[1] = 0.5 * period; tr[2] = period;
            str = ld_bdf_integrate(w, period, 3, tr, yr, &nwr);
            te = ld_bdf_get_event(w, fired);
            snprintf(what, sizeof what, "%s: the bottom event at T/4 (%.12f vs %.12f)", name,
                     te, 0.25 * period);
            check(str == LD_BDF_EVENT && fabs(te - 0.25 * period) < 1e-8 && fired[0] == -1,
                  what);
            str = ld_bdf_integrate(w, period, 3, tr, yr, &nwr);
            while (str == LD_BDF_EVENT) str = ld_bdf_integrate(w, period, 3, tr, yr, &nwr);
            check(str == LD_BDF_SUCCESS && nwr == 3, "explicit: one period");
            snprintf(what, sizeof what, "%s: opposite turning point at T/2 (%.3g), back at T "
                     "(%.3g)", name, atan2(yr[12 + 2], -yr[12 + 3]) + theta0,
                     atan2(yr[24 + 2], -yr[24 + 3]) - theta0);
            check(fabs(atan2(yr[12 + 2], -yr[12 + 3]) + theta0) < 1e-8 &&
                      fabs(atan2(yr[24 + 2], -yr[24 + 3]) - theta0) < 1e-8, what);
            phi(&pr, period, yr + 24, phires);
            check(fabs(phires[0]) + fabs(phires[1]) + fabs(phires[2]) < 1e-12,
                  "explicit: constraints held to round-off at the end (projection)");
            /* z = -(V(t) - V(0)): back at the start height after a period */
            check(fabs(yr[24 + 11]) < 1e-8, "explicit: gravity's work over a period is zero");
            sts = ld_bdf_get_stats(w);
            check(sts->rk_steps == sts->steps && sts->steps > 10 &&
                      sts->rhs_evaluations >= 12 * sts->steps && sts->events == 2 &&
                      sts->switches_to_bdf == 0 && sts->schur_factorizations > 0,
                  "explicit: counters (every step explicit, 12 right-hand sides a step)");
            ld_bdf_free(w);
            w = NULL;
        }
        opt.method = 3;
        check(ld_bdf_create(&sys, &opt, &w) == LD_BDF_BAD_INPUT, "unknown method rejected");
        opt.method = LD_METHOD_BDF;
    }

    /* 13. Method auto on a pendulum whose bar has almost no inertia about its centre (a
     * lumped mass): S = Phi_q M^-1 Phi_q^T is so ill-conditioned that the explicit method's
     * accelerations would carry rounding errors above the tolerance; auto starts the BDF. */
    {
        pendulum pl = {0.5, 2.0, 1e-12, 9.81, 0, -1.0, {0, 0, 0, 0}, 0};
        ld_system sl = make_system(&pl);
        ld_bdf_options o = opt;
        const ld_bdf_stats *sts;
        double yl[3 * 11], tl[3], lperiod;
        int nwl = 0, stl;
        o.stop_when_full = 0;
        o.method = LD_METHOD_AUTO;
        o.rtol = o.atol = 1e-8;
        /* a point mass at distance 0.5: the equivalent length is 0.5 */
        lperiod = 4.0 * ellipk(sin(theta0 / 2) * sin(theta0 / 2)) / sqrt(pl.g / 0.5);
        check(ld_bdf_create(&sl, &o, &w) == LD_BDF_SUCCESS, "lumped: create");
        initial_state(&pl, theta0, q, v);
        check(ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SUCCESS, "lumped: init");
        tl[0] = 0.0; tl[1] = 0.5 * lperiod; tl[2] = lperiod;
        stl = ld_bdf_integrate(w, lperiod, 3, tl, yl, &nwl);
        sts = ld_bdf_get_stats(w);
        check(stl == LD_BDF_SUCCESS && nwl == 3 && sts->rk_steps == 0 &&
                  sts->switches_to_bdf == 1 && sts->steps > 0,
              "lumped: auto starts the BDF (ill-conditioned accelerations)");
        check(fabs(atan2(yl[22 + 2], -yl[22 + 3]) - theta0) < 1e-5,
              "lumped: back at the start angle after a period");
        ld_bdf_free(w);
        w = NULL;
    }

    /* 14. The BDF with its iteration matrix ordered by COLAMD (column_ordering): the same
     * period as with AMD, to the tolerance. */
    {
        pendulum pc = p;
        ld_system sc = make_system(&pc);
        ld_bdf_options o = opt;
        double yc[3 * 11], tc[3];
        int nwc = 0, stc;
        o.stop_when_full = 0;
        o.method = LD_METHOD_BDF;
        o.column_ordering = 1;
        o.rtol = o.atol = 1e-10;
        check(ld_bdf_create(&sc, &o, &w) == LD_BDF_SUCCESS, "colamd: create");
        initial_state(&pc, theta0, q, v);
        check(ld_bdf_init(w, 0.0, q, v, NULL) == LD_BDF_SUCCESS, "colamd: init");
        tc[0] = 0.0; tc[1] = 0.5 * period; tc[2] = period;
        stc = ld_bdf_integrate(w, period, 3, tc, yc, &nwc);
        check(stc == LD_BDF_SUCCESS && nwc == 3 &&
                  fabs(atan2(yc[22 + 2], -yc[22 + 3]) - theta0) < 1e-6,
              "colamd: back at the start angle after a period");
        ld_bdf_free(w);
        w = NULL;
    }

    /* 13. Forward sensitivities (ld_sens.c) to g, from members at g +- h (the force is
     * affine in g). Started at rest, theta(t; g) = Theta(t sqrt(g)): d theta/dg equals
     * theta' t / (2 g) at every time, theta' from the state itself. */
    {
        pendulum pp = p, pm = p;
        ld_system sp_, sm_, members[2];
        const ld_system *mp[2];
        ld_sensitivity se;
        ld_bdf_options o;
        int start[2] = {0, 2}, member[2] = {0, 1}, nws = 0, sts, k;
        double hg = 1e-3, weight[2], ts[5], ys[5 * 19], s0[8] = {0}, worst = 0.0, top = 0.0;
        pp.g = p.g + hg; pm.g = p.g - hg;
        sp_ = make_system(&pp); sm_ = make_system(&pm);
        members[0] = sp_; members[1] = sm_;
        mp[0] = &members[0]; mp[1] = &members[1];
        weight[0] = 0.5 / hg; weight[1] = -0.5 / hg;
        se.np = 1; se.nmembers = 2; se.members = mp; se.start = start; se.member = member;
        se.weight = weight;
        se.scale = NULL;
        ld_bdf_default_options(&o);
        o.rtol = o.atol = 1e-10;
        o.sensitivities = &se;
        o.method = LD_METHOD_AUTO;
        check(ld_bdf_create(&sys, &o, &w) == LD_BDF_BAD_INPUT, "sensitivities need the BDF");
        o.method = LD_METHOD_BDF;
        check(ld_bdf_create(&sys, &o, &w) == LD_BDF_SUCCESS && ld_bdf_get_size(w) == 19,
              "state size with sensitivities 2 nq + nc + 2 nq np");
        check(ld_bdf_init_sensitivities(w, s0) == LD_BDF_BAD_INPUT,
              "sensitivities set only after init");
        initial_state(&p, theta0, q, v);
        ld_bdf_init(w, 0.0, q, v, NULL);
        /* at rest, whatever g: dq0/dg = dv0/dg = 0 (da0/dg is solved by ld_sens.c) */
        check(ld_bdf_init_sensitivities(w, s0) == LD_BDF_SUCCESS, "initial sensitivities");
        for (k = 0; k < 5; k++) ts[k] = 0.3 * k * period;   /* the last at 1.2 T */
        /* to 0.5 T, a restart there (as after an event), then on: the law holds across */
        sts = ld_bdf_integrate(w, 0.5 * period, 5, ts, ys, &nws);
        check(ld_bdf_restart_at(w, q, NULL) == LD_BDF_BAD_INPUT,
              "no restarts from a moved state with sensitivities");
        check(ld_bdf_restart(w) == LD_BDF_SUCCESS, "a restart from the current state");
        if (sts == LD_BDF_SUCCESS) sts = ld_bdf_integrate(w, 1.2 * period, 5, ts, ys, &nws);
        for (k = 0; k < 5; k++) {
            const double *r = ys + 19 * k;
            double ux = r[2], uy = r[3];
            double dth = -uy * r[11 + 2] + ux * r[11 + 3];
            double rate = -uy * r[6] + ux * r[7];
            double want = rate * ts[k] / (2.0 * p.g);
            if (fabs(dth - want) > worst) worst = fabs(dth - want);
            if (fabs(want) > top) top = fabs(want);
        }
        check(sts == LD_BDF_SUCCESS && nws == 5 && top > 0.1 && worst < 1e-7,
              "d theta / dg = theta' t / (2 g) over 1.2 periods, across a restart");
        ld_bdf_free(w);
        /* The same with the sensitivities in the error test (scale |g|). */
        {
            double gs = p.g;
            se.scale = &gs;
            check(ld_bdf_create(&sys, &o, &w) == LD_BDF_SUCCESS, "create (error-tested)");
            ld_bdf_init(w, 0.0, q, v, NULL);
            ld_bdf_init_sensitivities(w, s0);
            nws = 0;
            worst = 0.0;
            sts = ld_bdf_integrate(w, 1.2 * period, 5, ts, ys, &nws);
            for (k = 0; k < 5; k++) {
                const double *r = ys + 19 * k;
                double dth = -r[3] * r[11 + 2] + r[2] * r[11 + 3];
                double want = (-r[3] * r[6] + r[2] * r[7]) * ts[k] / (2.0 * p.g);
                if (fabs(dth - want) > worst) worst = fabs(dth - want);
            }
            check(sts == LD_BDF_SUCCESS && nws == 5 && worst < 1e-7,
                  "error-tested sensitivities: the same law");
            se.scale = NULL;
        }
        ld_bdf_free(w);
        w = NULL;
    }

    check_constant_entries(theta0, period);
    check_schur_source();

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
