/*
 * ld_lcp.h -- linear complementarity problems by Lemke's complementary pivoting.
 *
 *     find z, w in R^n:   w = M z + q,   z >= 0,   w >= 0,   z_i w_i = 0 for every i.
 *
 * The stick-slip transitions of contacts with Coulomb friction are decided by such problems
 * (all contacts at once). Lemke's method (Cottle and Dantzig 1968) with the covering vector
 * d = (1, ..., 1): the artificial variable z0 enters at the most negative q_i, then the
 * complement of each leaving variable enters, until z0 leaves (a solution) or the entering
 * column has no positive entry (ray termination: for a copositive-plus M there is then no
 * solution; for other M the method may fail where a solution exists).
 *
 * Pivoting rule: the minimum-ratio test, ties broken lexicographically on the rows of the
 * current basis inverse (which makes the method terminate on degenerate problems), and z0
 * leaves whenever its row is among the tied minima. Entries below pivot_tol in magnitude
 * (relative to the column's largest) count as zero.
 *
 * The caller provides all memory (ld_lcp_work_size): the function allocates nothing and
 * keeps no state.
 */
#ifndef LD_LCP_H
#define LD_LCP_H

#ifdef __cplusplus
extern "C" {
#endif

enum ld_lcp_status {
    LD_LCP_SOLVED = 0,
    LD_LCP_RAY = -1,            /* ray termination: no solution found (none exists when M is
                                   copositive-plus) */
    LD_LCP_MAX_ITER = -2,       /* the pivot budget ran out (cycling or a huge problem) */
    LD_LCP_BAD_INPUT = -3       /* n < 0, or NaN / Inf in M or q */
};

/* Doubles of work space for a problem of size n: n (2n + 2) + n. */
long ld_lcp_work_size(int n);

/* M: n x n, row-major. On LD_LCP_SOLVED, z and w hold the solution (exact zeros for the
 * nonbasic variables); *pivots counts the pivots. max_pivots <= 0: 50 (n + 1).
 * pivot_tol <= 0: 1e-12. iwork: 2 n + 1 ints. */
int ld_lemke(int n, const double *M, const double *q, double *z, double *w, int max_pivots,
             double pivot_tol, double *work, int *iwork, int *pivots);

#ifdef __cplusplus
}
#endif

#endif /* LD_LCP_H */
