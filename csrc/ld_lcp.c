/*
 * ld_lcp.c -- Lemke's complementary pivoting for LCP(M, q); see ld_lcp.h.
 *
 * The tableau holds [I | -M | -d | q] (columns: w_1..w_n, z_1..z_n, z0, right-hand side) and
 * is pivoted in place; basis[i] is the column of the variable basic in row i. The w columns
 * of the tableau are the current basis inverse, whose rows give the lexicographic order.
 */
#include "ld_lcp.h"

#include <math.h>
#include <string.h>

#define LEX_TIE 1e-12   /* ratios this close (relative) are a tie */

long ld_lcp_work_size(int n)
{
    return (long)n * (2 * n + 2) + n + 1;
}

static void pivot(double *T, int n, int ncol, int r, int c)
{
    int i, j;
    double *row = T + (long)r * ncol, p = row[c];
    for (j = 0; j < ncol; j++) row[j] /= p;
    row[c] = 1.0;
    for (i = 0; i < n; i++) {
        double *ti = T + (long)i * ncol, f = ti[c];
        if (i == r || f == 0.0) continue;
        for (j = 0; j < ncol; j++) ti[j] -= f * row[j];
        ti[c] = 0.0;
    }
}

/* Row i is lexicographically smaller than row k in the ratio test on column c. */
static int lex_less(const double *T, int n, int ncol, int i, int k, int c)
{
    int j;
    const double *a = T + (long)i * ncol, *b = T + (long)k * ncol;
    for (j = 0; j < n; j++) {
        double x = a[j] / a[c], y = b[j] / b[c];
        if (x < y - LEX_TIE * fmax(fabs(x), fabs(y))) return 1;
        if (y < x - LEX_TIE * fmax(fabs(x), fabs(y))) return 0;
    }
    return 0;
}

int ld_lemke(int n, const double *M, const double *q, double *z, double *w, int max_pivots,
             double pivot_tol, double *work, int *iwork, int *pivots)
{
    int ncol = 2 * n + 2, i, j, r, enter, leave, z0 = 2 * n, rhs = 2 * n + 1, count = 0;
    int *basis = iwork;
    double *T = work, qmin;
    if (pivots) *pivots = 0;
    if (n < 0 || (n > 0 && (!M || !q || !z || !w || !work || !iwork))) return LD_LCP_BAD_INPUT;
    for (i = 0; i < n; i++) {
        if (!isfinite(q[i])) return LD_LCP_BAD_INPUT;
        for (j = 0; j < n; j++)
            if (!isfinite(M[(long)i * n + j])) return LD_LCP_BAD_INPUT;
    }
    if (max_pivots <= 0) max_pivots = 50 * (n + 1);
    if (!(pivot_tol > 0)) pivot_tol = 1e-12;

    /* Trivial solution. */
    r = -1;
    qmin = 0.0;
    for (i = 0; i < n; i++)
        if (q[i] < qmin) { qmin = q[i]; r = i; }
    for (i = 0; i < n; i++) { z[i] = 0.0; w[i] = q[i]; }
    if (r < 0) return LD_LCP_SOLVED;

    /* Tableau [I | -M | -1 | q]. */
    for (i = 0; i < n; i++) {
        double *ti = T + (long)i * ncol;
        memset(ti, 0, (size_t)ncol * sizeof(double));
        ti[i] = 1.0;
        for (j = 0; j < n; j++) ti[n + j] = -M[(long)i * n + j];
        ti[z0] = -1.0;
        ti[rhs] = q[i];
        basis[i] = i;
    }
    /* z0 enters at the most negative q: every right-hand side becomes >= 0. */
    pivot(T, n, ncol, r, z0);
    leave = basis[r];
    basis[r] = z0;
    count = 1;
    enter = leave < n ? n + leave : leave - n;   /* the complement of w_j is z_j */

    for (;;) {
        double cmax = 0.0, best = 0.0;
        int best_row = -1, z0_tied = 0;
        if (count >= max_pivots) {
            if (pivots) *pivots = count;
            return LD_LCP_MAX_ITER;
        }
        for (i = 0; i < n; i++) cmax = fmax(cmax, fabs(T[(long)i * ncol + enter]));
        /* Minimum ratio over the rows with a positive entry in the entering column. */
        for (i = 0; i < n; i++) {
            double a = T[(long)i * ncol + enter], ratio;
            if (!(a > pivot_tol * cmax)) continue;
            ratio = T[(long)i * ncol + rhs] / a;
            if (best_row < 0 || ratio < best - LEX_TIE * fmax(1.0, fabs(best))) {
                best = ratio;
                best_row = i;
                z0_tied = basis[i] == z0;
            } else if (ratio <= best + LEX_TIE * fmax(1.0, fabs(best))) {
                /* A tie: z0 leaves when it can, else the lexicographic minimum. */
                if (basis[i] == z0) {
                    best_row = i;
                    z0_tied = 1;
                } else if (!z0_tied && lex_less(T, n, ncol, i, best_row, enter)) {
                    best_row = i;
                }
            }
        }
        if (best_row < 0) {
            if (pivots) *pivots = count;
            return LD_LCP_RAY;
        }
        pivot(T, n, ncol, best_row, enter);
        count++;
        leave = basis[best_row];
        basis[best_row] = enter;
        if (leave == z0) break;
        enter = leave < n ? n + leave : leave - n;
    }

    /* Read the solution: basic variables from the right-hand side (round-off below zero is
     * set to zero), the others are zero. */
    for (i = 0; i < n; i++) { z[i] = 0.0; w[i] = 0.0; }
    for (i = 0; i < n; i++) {
        double value = fmax(0.0, T[(long)i * ncol + rhs]);
        if (basis[i] < n) w[basis[i]] = value;
        else if (basis[i] < 2 * n) z[basis[i] - n] = value;
    }
    if (pivots) *pivots = count;
    return LD_LCP_SOLVED;
}
