/*
 * ld_schur.c -- the explicit method's linear solver: S = Phi_q M^-1 Phi_q^T for a diagonal
 * M, factorised as P S P^T = L D L^T (see ld_schur.h).
 *
 * With M diagonal, S has a fixed sparsity pattern (rows that share a coordinate), known
 * when the integrator is created: AMD orders it and LDL's symbolic analysis gives L's
 * pattern once. The plan then lists, as flat arrays, where each product of two Phi_q
 * entries of a column lands in L and D, and the up-looking elimination's updates, so that
 * a factorisation is straight-line loops over these lists with no search and no
 * allocation. A pivot below PIVOT_MIN of its row's diagonal means Phi_q has lost rank.
 *
 * Constant entries. Most of a mechanism's Jacobian entries never change: a revolute joint's
 * in fully Cartesian coordinates, a spherical joint's in natural ones (ld_system.phiq_const).
 * An entry of S whose products all come from such entries is summed once, at the first
 * factorisation (and again when the rows switched off change, their entries being zeroed),
 * into a base that each factorisation copies; only the products that reach the other
 * entries are formed anew, in the order they always were, so the factorisation is the same
 * to the bit. On the Jansen linkage 132 of 598 products remain.
 *
 * Straight-line code. The same products, elimination and solves can be written out with the
 * indices as constants (ld_schur_gen.c); compiled outside the core and set in S->gen, they
 * take the loops' place, operation for operation.
 */
#include "ld_schur.h"

#include "ld_linear.h"

#include <amd.h>
#include <float.h>
#include <ldl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PIVOT_MIN 1e-14         /* a pivot of S below this fraction of its diagonal: singular */

/* Position of L(k, i) (k > i) in Lx: binary search in column i. */
static int l_slot(const struct ld_schur *r, int k, int i)
{
    int lo = r->Lp[i], hi = r->Lp[i + 1] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (r->Li[mid] == k) return mid;
        if (r->Li[mid] < k) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* Where S's entry (a, b) (rows of S) lives in LD: D for the diagonal, else L(k, i) with
 * k > i the rows in the permuted order. */
static int ld_target(const struct ld_schur *r, int a, int b)
{
    int pa = r->Pinv[a], pb = r->Pinv[b];
    if (pa == pb) return r->lnz + pa;
    return pa > pb ? l_slot(r, pa, pb) : l_slot(r, pb, pa);
}

/* The pattern of S, its AMD order and the pattern of L (LDL's symbolic analysis, and one
 * numeric pass on a stand-in matrix to list L's rows; the pattern is structural). */
static int schur_pattern(ld_bdf *w, struct ld_schur *r)
{
    const ld_system *s = w->sys;
    int nc = w->nc, nq = w->nq, j, p, p2, k = 0, total = nc, s_nnz = 0, st = LD_BDF_NO_MEMORY;
    int *Sp = NULL, *Si = NULL, *Parent = NULL, *Lnz = NULL, *Flag = NULL, *Pattern = NULL;
    double *Sx = NULL, *Y = NULL;
    int *e, *ecol, *erow;   /* the keys (col, row) of S's entries, and their order */
    for (j = 0; j < nq; j++) {
        int c = s->phiq_colptr[j + 1] - s->phiq_colptr[j];
        total += c * c;
    }
    e = (int *)malloc((size_t)3 * total * sizeof(int));
    Sp = (int *)calloc((size_t)nc + 1, sizeof(int));
    Si = (int *)malloc((size_t)total * sizeof(int));
    Sx = (double *)malloc((size_t)total * sizeof(double));
    Parent = (int *)malloc((size_t)nc * 4 * sizeof(int));
    Y = (double *)malloc((size_t)nc * sizeof(double));
    r->P = (int *)malloc((size_t)nc * 2 * sizeof(int));
    r->Lp = (int *)malloc((size_t)(nc + 1) * sizeof(int));
    if (!e || !Sp || !Si || !Sx || !Parent || !Y || !r->P || !r->Lp) goto done;
    r->Pinv = r->P + nc;
    Lnz = Parent + nc;
    Flag = Lnz + nc;
    Pattern = Flag + nc;
    ecol = e + total;
    erow = e + 2 * total;
    for (j = 0; j < nc; j++) { ecol[k] = j; erow[k] = j; k++; }
    for (j = 0; j < nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            for (p2 = s->phiq_colptr[j]; p2 < s->phiq_colptr[j + 1]; p2++) {
                ecol[k] = s->phiq_rowind[p];
                erow[k] = s->phiq_rowind[p2];
                k++;
            }
    if (ld__sort_keys(total, ecol, erow, nc, nc, e) != LD_BDF_SUCCESS) goto done;
    for (k = 0; k < total; k++) {
        int x = e[k], prev = k > 0 ? e[k - 1] : -1;
        if (prev < 0 || ecol[x] != ecol[prev] || erow[x] != erow[prev]) {
            /* a stand-in SPD matrix of the same pattern: diagonally dominant */
            Sx[s_nnz] = erow[x] == ecol[x] ? (double)(nc + 1) * (nc + 1) : 1.0;
            Si[s_nnz++] = erow[x];
            Sp[ecol[x] + 1]++;
        }
    }
    for (j = 0; j < nc; j++) Sp[j + 1] += Sp[j];
    if (amd_order(nc, Sp, Si, r->P, NULL, NULL) < AMD_OK) goto done;
    ldl_symbolic(nc, Sp, Si, r->Lp, Parent, Lnz, Flag, r->P, r->Pinv);
    r->lnz = r->Lp[nc];
    r->Li = (int *)malloc((size_t)(r->lnz > 0 ? r->lnz : 1) * sizeof(int));
    r->LD = (double *)malloc((size_t)(r->lnz + nc) * sizeof(double));
    if (!r->Li || !r->LD) goto done;
    r->Lx = r->LD;
    r->Dd = r->LD + r->lnz;
    st = ldl_numeric(nc, Sp, Si, Sx, r->Lp, Parent, Lnz, r->Li, r->Lx, r->Dd, Y, Pattern,
                     Flag, r->P, r->Pinv) == nc ? LD_BDF_SUCCESS : LD_BDF_BAD_INPUT;
done:
    free(e); free(Sp); free(Si); free(Sx); free(Parent); free(Y);
    return st;
}

/* The plan: the products that assemble S straight into LD, and the up-looking elimination
 * as flat lists (for row k of L, each nonzero L(k, i) in ascending i is a group: its pairs
 * update the later entries of row k, then it is scaled by D(i) and subtracted from D(k)). */
static int schur_plan(ld_bdf *w, struct ld_schur *r)
{
    const ld_system *s = w->sys;
    int nc = w->nc, nq = w->nq, j, p, p2, k, i, np = 0, ng = 0, ngp = 0;
    int *row_count = NULL, *row_start = NULL, *rows = NULL;
    for (j = 0; j < nq; j++) {
        int c = s->phiq_colptr[j + 1] - s->phiq_colptr[j];
        np += c * (c + 1) / 2;
    }
    r->n_pairs = np;
    r->pair_dst = (int *)malloc((size_t)(np + 1) * sizeof(int));
    if (!r->pair_dst) return LD_BDF_NO_MEMORY;
    k = 0;
    for (j = 0; j < nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            for (p2 = s->phiq_colptr[j]; p2 <= p; p2++) {
                r->pair_dst[k] = ld_target(r, s->phiq_rowind[p], s->phiq_rowind[p2]);
                if (r->pair_dst[k] < 0) return LD_BDF_BAD_INPUT;
                k++;
            }
    /* rows of L: row k's columns i, ascending */
    row_count = (int *)calloc((size_t)nc + 1, sizeof(int));
    row_start = (int *)calloc((size_t)nc + 1, sizeof(int));
    rows = (int *)malloc((size_t)(r->lnz > 0 ? r->lnz : 1) * sizeof(int));
    r->row_groups = (int *)malloc((size_t)(nc + 1) * sizeof(int));
    if (!row_count || !row_start || !rows || !r->row_groups) {
        free(row_count); free(row_start); free(rows);
        return LD_BDF_NO_MEMORY;
    }
    for (p = 0; p < r->lnz; p++) row_count[r->Li[p]]++;
    for (k = 0; k < nc; k++) row_start[k + 1] = row_start[k] + row_count[k];
    memset(row_count, 0, (size_t)nc * sizeof(int));
    for (i = 0; i < nc; i++)
        for (p = r->Lp[i]; p < r->Lp[i + 1]; p++) {
            k = r->Li[p];
            rows[row_start[k] + row_count[k]++] = i;
        }
    /* count the groups' pairs: L(r', i) for i < r' < k */
    for (k = 0; k < nc; k++)
        for (j = row_start[k]; j < row_start[k + 1]; j++) {
            i = rows[j];
            for (p = r->Lp[i]; p < r->Lp[i + 1] && r->Li[p] < k; p++) ngp++;
            ng++;
        }
    r->n_groups = ng;
    r->g_src = (int *)malloc((size_t)(3 * ng + 2) * sizeof(int));
    r->gp_dst = (int *)malloc((size_t)(ngp + 1) * sizeof(int));
    if (!r->g_src || !r->gp_dst) {
        free(row_count); free(row_start); free(rows);
        return LD_BDF_NO_MEMORY;
    }
    r->g_col = r->g_src + ng;
    r->g_pairs = r->g_col + ng;
    ng = ngp = 0;
    for (k = 0; k < nc; k++) {
        r->row_groups[k] = ng;
        for (j = row_start[k]; j < row_start[k + 1]; j++) {
            i = rows[j];
            r->g_src[ng] = l_slot(r, k, i);
            r->g_col[ng] = i;
            r->g_pairs[ng] = ngp;
            for (p = r->Lp[i]; p < r->Lp[i + 1] && r->Li[p] < k; p++) {
                r->gp_dst[ngp] = l_slot(r, k, r->Li[p]);
                ngp++;
            }
            ng++;
        }
    }
    r->row_groups[nc] = ng;
    r->g_pairs[ng] = ngp;
    free(row_count); free(row_start); free(rows);
    r->Sd = (double *)malloc((size_t)nc * sizeof(double));
    r->xs = (double *)malloc((size_t)nc * sizeof(double));
    return r->Sd && r->xs ? LD_BDF_SUCCESS : LD_BDF_NO_MEMORY;
}

/* The products that reach entries of S that change (see the top, "Constant entries"). */
static int plan_constant(ld_bdf *w, struct ld_schur *r)
{
    const ld_system *s = w->sys;
    const int *pc = s->phiq_const;
    int nld = r->lnz + w->nc, j, p, p2, k = 0, nv = 0;
    char *var;
    if (!pc) return LD_BDF_SUCCESS;
    var = (char *)calloc((size_t)nld, 1);
    if (!var) return LD_BDF_NO_MEMORY;
    for (j = 0; j < w->nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            for (p2 = s->phiq_colptr[j]; p2 <= p; p2++, k++)
                if (!pc[p] || !pc[p2]) var[r->pair_dst[k]] = 1;
    for (k = 0; k < r->n_pairs; k++) nv += var[r->pair_dst[k]];
    if (nv == r->n_pairs) { free(var); return LD_BDF_SUCCESS; }
    r->va = (int *)malloc((size_t)(4 * nv + 1) * sizeof(int));
    r->LD0 = (double *)malloc((size_t)nld * sizeof(double));
    r->base_active = (int *)malloc((size_t)w->nc * sizeof(int));
    if (!r->va || !r->LD0 || !r->base_active) { free(var); return LD_BDF_NO_MEMORY; }
    r->vb = r->va + nv; r->vc = r->vb + nv; r->vd = r->vc + nv;
    k = 0;
    for (j = 0; j < w->nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            for (p2 = s->phiq_colptr[j]; p2 <= p; p2++, k++)
                if (var[r->pair_dst[k]]) {
                    r->va[r->n_var] = p; r->vb[r->n_var] = p2; r->vc[r->n_var] = j;
                    r->vd[r->n_var++] = r->pair_dst[k];
                }
    free(var);
    return LD_BDF_SUCCESS;
}

/* LD0: the sums of the constant entries of S at the Phi_q values in w->phiq, for the rows
 * switched on now; the other entries zero. */
static void constant_base(ld_bdf *w, struct ld_schur *r)
{
    const int *active = w->sys->row_active, *cp = w->sys->phiq_colptr, *dst = r->pair_dst;
    const double *J = w->phiq;
    double *LD0 = r->LD0;
    int j, p, p2, v = 0, i;
    memset(LD0, 0, (size_t)(r->lnz + w->nc) * sizeof(double));
    for (j = 0; j < w->nq; j++) {
        double mj = r->minv[j];
        for (p = cp[j]; p < cp[j + 1]; p++) {
            double jp = J[p];
            for (p2 = cp[j]; p2 <= p; p2++, dst++) {
                if (v < r->n_var && r->vd[v] == *dst && r->va[v] == p && r->vb[v] == p2) {
                    v++;
                    continue;
                }
                LD0[*dst] += jp * J[p2] * mj;
            }
        }
    }
    for (i = 0; i < w->nc; i++) r->base_active[i] = active ? active[i] != 0 : 1;
    r->base_ready = 1;
}

/* Whether the rows switched off differ from those of the base. */
static int base_stale(const ld_bdf *w, const struct ld_schur *r)
{
    const int *active = w->sys->row_active;
    int i;
    if (!r->base_ready) return 1;
    if (!active) return 0;
    for (i = 0; i < w->nc; i++)
        if ((active[i] != 0) != r->base_active[i]) return 1;
    return 0;
}

/* The up-looking elimination of LD by the plan's lists (rows in order; for each, its groups
 * update the row's later entries, then are scaled by D(i) and subtracted from D(k)). */
static void eliminate(struct ld_schur *r)
{
    const int *row_groups = r->row_groups, *g_src = r->g_src, *g_col = r->g_col;
    const int *g_pairs = r->g_pairs, *gp_dst = r->gp_dst, *Lp = r->Lp;
    double *Lx = r->Lx, *D = r->Dd;
    int k, g, q;
    for (k = 0; k < r->nc; k++) {
        double dk = D[k];       /* in a register: the stores to Lx below may not alias it */
        for (g = row_groups[k]; g < row_groups[k + 1]; g++) {
            int src = g_src[g], ci = g_col[g], q0 = g_pairs[g], q1 = g_pairs[g + 1];
            double y = Lx[src], l;
            const double *col = Lx + Lp[ci] - q0;
            for (q = q0; q < q1; q++) Lx[gp_dst[q]] -= col[q] * y;
            l = y / D[ci];
            dk -= l * y;
            Lx[src] = l;
        }
        D[k] = dk;
    }
}

/* Factorise S (+ regularisation, unit rows for switched-off rows) at the Phi_q values in
 * w->phiq, by the plan. A pivot below PIVOT_MIN of its row's diagonal means Phi_q has lost
 * rank (or, for the rows of a redundant set without regularisation, never had it). */
int ld__schur_factor(ld_bdf *w, struct ld_schur *r)
{
    const int *active = w->sys->row_active;
    const double *J = w->phiq;
    const int *cp = w->sys->phiq_colptr, *dst = r->pair_dst;
    double *LD = r->LD, *D = r->Dd, reg = w->out_reg;
    int j, p, p2, k, q, nc = w->nc;
    double ratio = 1.0;
    if (nc == 0) return LD_BDF_SUCCESS;
    if (r->LD0) {
        if (base_stale(w, r)) constant_base(w, r);
        memcpy(LD, r->LD0, (size_t)(r->lnz + nc) * sizeof(double));
        if (r->gen.add) {
            r->gen.add(J, r->minv, LD);
        } else {
            const int *va = r->va, *vb = r->vb, *vc = r->vc, *vd = r->vd;
            const double *minv = r->minv;
            int nv = r->n_var;
            for (q = 0; q < nv; q++) LD[vd[q]] += J[va[q]] * J[vb[q]] * minv[vc[q]];
        }
    } else {
        memset(LD, 0, (size_t)(r->lnz + nc) * sizeof(double));
        if (r->gen.add) r->gen.add(J, r->minv, LD);
        else
            for (j = 0; j < w->nq; j++) {
                double mj = r->minv[j];
                for (p = cp[j]; p < cp[j + 1]; p++) {
                    double jp = J[p];
                    for (p2 = cp[j]; p2 <= p; p2++) LD[*dst++] += jp * J[p2] * mj;
                }
            }
    }
    for (k = 0; k < nc; k++) {
        int i = r->P[k];
        if (active && !active[i]) D[k] = 1.0;
        else D[k] += reg * w->rdiag[i];
        r->Sd[k] = D[k];
    }
    w->stats.schur_factorizations++;
    if (r->gen.elim) r->gen.elim(LD);
    else eliminate(r);
    /* the pivots, in order: the first failing one names the row (D[k] is final once row k
     * is eliminated, so checking after the elimination finds the same one) */
    for (k = 0; k < nc; k++) {
        if (!(D[k] > PIVOT_MIN * r->Sd[k])) {
            w->fail_index = w->nq + r->P[k];
            return isfinite(D[k]) ? LD_BDF_SINGULAR : LD_BDF_NONFINITE;
        }
        if (D[k] < ratio * r->Sd[k]) ratio = D[k] / r->Sd[k];
    }
    r->pivot_ratio = ratio;
    return LD_BDF_SUCCESS;
}

/* x <- S^-1 x (nc). The scaling by D^-1 is folded into the forward sweep (row i is final
 * once its column has been scattered: L is unit lower triangular) and the permutation back
 * into the backward one; the same operations in the same order as three separate passes. */
void ld__schur_solve(const struct ld_schur *r, double *x)
{
    int nc = r->nc, i, p;
    double *y = r->xs;
    const int *Lp = r->Lp, *Li = r->Li, *P = r->P;
    const double *Lx = r->Lx, *D = r->Dd;
    if (r->gen.solve) {
        r->gen.solve(r->LD, x, y);
        return;
    }
    for (i = 0; i < nc; i++) y[i] = x[P[i]];
    for (i = 0; i < nc; i++) {
        double yi = y[i];
        for (p = Lp[i]; p < Lp[i + 1]; p++) y[Li[p]] -= Lx[p] * yi;
        y[i] = yi / D[i];
    }
    for (i = nc - 1; i >= 0; i--) {
        double yi = y[i];
        for (p = Lp[i]; p < Lp[i + 1]; p++) yi -= Lx[p] * y[Li[p]];
        y[i] = yi;
        x[P[i]] = yi;
    }
}

int ld__schur_create(ld_bdf *w, struct ld_schur *S, const double *minv)
{
    int st;
    S->nc = w->nc;
    S->minv = minv;
    if (w->nc == 0) return LD_BDF_SUCCESS;
    if ((st = schur_pattern(w, S)) != LD_BDF_SUCCESS) return st;
    if ((st = schur_plan(w, S)) != LD_BDF_SUCCESS) return st;
    return plan_constant(w, S);
}

void ld__schur_free(struct ld_schur *S)
{
    free(S->P); free(S->Lp); free(S->Li); free(S->LD); free(S->Sd); free(S->pair_dst);
    free(S->row_groups); free(S->g_src); free(S->gp_dst);
    free(S->xs);
    free(S->va); free(S->LD0); free(S->base_active);
}
