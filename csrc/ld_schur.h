/*
 * ld_schur.h -- the Schur complement S = Phi_q M^-1 Phi_q^T of a diagonal mass matrix and
 * its LDL^T factorisation, planned once (private; see ld_work.h and ld_schur.c). The
 * explicit method's linear solver.
 */
#ifndef LD_SCHUR_H
#define LD_SCHUR_H

#include "ld_work.h"

/* S and its factorisation P S P^T = L D L^T, planned when the workspace is created:
 * LD = [Lx (lnz) | D (nc)] */
struct ld_schur {
    int nc, lnz, n_pairs, n_groups;
    int *P, *Pinv;              /* [nc] AMD order: row k of P S P^T is row P[k] of S */
    int *Lp, *Li;               /* [nc + 1], [lnz] pattern of L (CSC, rows ascending) */
    double *LD, *Lx, *Dd;       /* values: Lx = LD, Dd = LD + lnz */
    double *Sd;                 /* [nc] diagonal of P S P^T before elimination */
    int *pair_dst;              /* LD[dst] += phiq[a] phiq[b] / m_j for each pair a >= b of
                                 * column j's entries, columns in order */
    /* Entries of LD that only constant Phi_q entries reach (ld_system.phiq_const) are summed
     * once into LD0; a factorisation starts from it and adds the other pairs: pair k adds
     * phiq[va[k]] phiq[vb[k]] / m_{vc[k]} at LD[vd[k]] (the pairs in the order above) */
    int n_var, *va, *vb, *vc, *vd;
    double *LD0;                /* [lnz + nc], NULL without constant entries */
    int base_ready;             /* LD0 holds the sums for the row flags in base_active */
    int *base_active;           /* [nc] */
    int *row_groups;            /* [nc + 1] groups of each row k of L */
    int *g_src, *g_col, *g_pairs;   /* group: slot of L(k, i), i, first pair [n_groups + 1] */
    int *gp_dst;                /* pair q of a group: Lx[dst] -= Lx[l] * y_i, where l runs
                                 * up column i from Lp[i]: l = Lp[i] + q - g_pairs[g] */
    const double *minv;         /* [nq] M^-1 (the caller's) */
    double *xs;                 /* [nc] permuted scratch */
    ld_schur_code gen;          /* the plan as straight-line code (ld_bdf.h,
                                 * ld_bdf_set_schur_code), or NULLs: the loops */
    double pivot_ratio;         /* min_k D_k / S_kk of the last factorisation (active rows):
                                   cond(S) is at least its inverse */
};

/* The plan for the model's Phi_q pattern (nothing to plan without rows); what
 * ld__schur_free releases (S zeroed before: it may be freed after a failed plan). */
int ld__schur_create(ld_bdf *w, struct ld_schur *S, const double *minv);
void ld__schur_free(struct ld_schur *S);
/* Factorise S (+ regularisation, unit rows for switched-off rows) at the Phi_q values in
 * w->phiq; LD_BDF_SINGULAR (w->fail_index set) where Phi_q has lost rank. */
int ld__schur_factor(ld_bdf *w, struct ld_schur *S);
/* x <- S^-1 x (nc). */
void ld__schur_solve(const struct ld_schur *S, double *x);

#endif /* LD_SCHUR_H */
