/*
 * Plain-C tests of Lemke's method (ld_lcp.c): known solutions, degenerate and unsolvable
 * problems, and random positive-definite problems checked for feasibility and
 * complementarity. Build: cc -std=c99 test_lcp.c ../ld_lcp.c -I.. -lm
 */
#include <math.h>
#include <stdio.h>

#include "ld_lcp.h"

#define NMAX 12

static int passed = 0, failed = 0;
static double work[NMAX * (2 * NMAX + 2) + NMAX + 1];
static int iwork[2 * NMAX + 1];

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    if (ok) passed++; else failed++;
}

/* w = M z + q, z >= 0, w >= 0, z.w = 0, to tol. */
static int is_solution(int n, const double *M, const double *q, const double *z,
                       const double *w, double tol)
{
    int i, j;
    for (i = 0; i < n; i++) {
        double r = q[i];
        for (j = 0; j < n; j++) r += M[i * n + j] * z[j];
        if (fabs(r - w[i]) > tol || z[i] < 0 || w[i] < 0 || z[i] * w[i] > tol) return 0;
    }
    return 1;
}

static unsigned long long seed = 12345;
static double uniform(void)   /* deterministic, in [-1, 1) */
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(seed >> 11) / 4503599627370496.0 - 1.0;
}

int main(void)
{
    double z[NMAX], w[NMAX];
    int st, pivots, k, bad = 0;

    {   /* q >= 0: z = 0. */
        double M[4] = {2, 1, 1, 2}, q[2] = {1, 0};
        st = ld_lemke(2, M, q, z, w, 0, 0, work, iwork, &pivots);
        check(st == LD_LCP_SOLVED && pivots == 0 && z[0] == 0 && z[1] == 0 && w[0] == 1,
              "q >= 0: the trivial solution without pivots");
    }
    {   /* Both active: M z = -q, z = (4/3, 7/3). */
        double M[4] = {2, 1, 1, 2}, q[2] = {-5, -6};
        st = ld_lemke(2, M, q, z, w, 0, 0, work, iwork, &pivots);
        check(st == LD_LCP_SOLVED && fabs(z[0] - 4.0 / 3) < 1e-14 &&
                  fabs(z[1] - 7.0 / 3) < 1e-14 && w[0] == 0 && w[1] == 0,
              "both components active: z = -M^-1 q");
    }
    {   /* One active. */
        double M[4] = {1, 0, 0, 1}, q[2] = {-1, 2};
        st = ld_lemke(2, M, q, z, w, 0, 0, work, iwork, &pivots);
        check(st == LD_LCP_SOLVED && z[0] == 1 && z[1] == 0 && w[0] == 0 && w[1] == 2,
              "one component active");
    }
    {   /* No solution: w = -z - 1 < 0. */
        double M[1] = {-1}, q[1] = {-1};
        st = ld_lemke(1, M, q, z, w, 0, 0, work, iwork, &pivots);
        check(st == LD_LCP_RAY, "unsolvable: ray termination");
    }
    {   /* Degenerate (singular M, tied ratios). */
        double M[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, q[3] = {-1, -1, -1};
        st = ld_lemke(3, M, q, z, w, 0, 0, work, iwork, &pivots);
        check(st == LD_LCP_SOLVED && is_solution(3, M, q, z, w, 1e-14),
              "degenerate: a solution found");
    }
    {   /* NaN. */
        double M[1] = {NAN}, q[1] = {-1};
        check(ld_lemke(1, M, q, z, w, 0, 0, work, iwork, &pivots) == LD_LCP_BAD_INPUT,
              "NaN: bad input");
    }
    /* Random positive-definite problems (M = A A^T + I / 10): a unique solution. */
    for (k = 0; k < 200; k++) {
        int n = 1 + k % NMAX, i, j, l;
        double A[NMAX * NMAX], M[NMAX * NMAX], q[NMAX];
        for (i = 0; i < n * n; i++) A[i] = uniform();
        for (i = 0; i < n; i++) {
            q[i] = 2 * uniform();
            for (j = 0; j < n; j++) {
                double s = i == j ? 0.1 : 0.0;
                for (l = 0; l < n; l++) s += A[i * n + l] * A[j * n + l];
                M[i * n + j] = s;
            }
        }
        st = ld_lemke(n, M, q, z, w, 0, 0, work, iwork, &pivots);
        if (st != LD_LCP_SOLVED || !is_solution(n, M, q, z, w, 1e-9)) bad++;
    }
    check(bad == 0, "200 random positive-definite problems solved, complementary");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
