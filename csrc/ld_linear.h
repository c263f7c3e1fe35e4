/*
 * ld_linear.h -- the linear layer of the integrator (private; see ld_work.h): the KKT
 * matrix K = [M Phi_q^T; Phi_q -R] and the BDF's iteration matrix G in one fixed CSC
 * pattern, their KLU factorisations, and the Jacobian helpers both methods share.
 */
#ifndef LD_LINEAR_H
#define LD_LINEAR_H

#include "ld_work.h"

/* perm[k] <- the index of the k-th of n (col[i], row[i]) keys in the order of column, then
 * row (equal keys in index order): two stable counting passes, O(n + ncols + nrows), for the
 * patterns made when a solver is created. Returns LD_BDF_SUCCESS or LD_BDF_NO_MEMORY. */
int ld__sort_keys(int n, const int *col, const int *row, int ncols, int nrows, int *perm);
/* 1 when all n values are finite. */
int ld__all_finite(const double *x, int n);

/* The pattern of G (and K) and its maps, KLU's settings (w->map_D_wanted set before);
 * what ld__kkt_free releases. */
int ld__kkt_create(ld_bdf *w);
void ld__kkt_free(ld_bdf *w);

/* Phi_q values at (t, q) into w->phiq, the entries of inactive rows zeroed (returns the
 * callback's status); right-hand sides of inactive rows zeroed; out = Phi_q^T lam. */
int ld__eval_phi_q(ld_bdf *w, double t, const double *q);
void ld__zero_inactive(const ld_bdf *w, double *rows);
void ld__phiq_transpose_times(const ld_bdf *w, const double *lam, double *out);

/* Gx <- K at the current phiq values with regularisation r; the rows' regularisation
 * scale diag(Phi_q M^-1 Phi_q^T) from them (at a start). */
void ld__assemble_K(ld_bdf *w, double r);
void ld__set_regularization(ld_bdf *w);

/* Factorise Gx (refactor with the old pivots when they are still good), solve with it. */
int ld__factor_G(ld_bdf *w);
int ld__solve_G(ld_bdf *w, double *rhs);
/* Assemble and factorise G at the BDF's current iterate w->y with step constant c (phiq
 * current); factorise K at (t, q) (the index-1 matrix, output regularisation). */
int ld__refresh_G(ld_bdf *w, double t, double c);
int ld__factor_K(ld_bdf *w, double t, const double *q);
/* KLU's condition estimate of the current factorisation of G into *condest (0: failed). */
int ld__condest_G(ld_bdf *w, double *condest);

/* K at the current phiq values factorised into the output rows' own numeric object (kept
 * between rows: refactored while its pivots stay good), and solves with it. */
int ld__factor_output(ld_bdf *w);
int ld__solve_output(ld_bdf *w, double *rhs);

#endif /* LD_LINEAR_H */
