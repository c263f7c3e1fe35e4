/*
 * ld_linear.c -- the integrator's linear layer (see ld_linear.h and ld_work.h).
 *
 * One CSC pattern serves the KKT matrix K = [M Phi_q^T; Phi_q -R] of the index-1 solves
 * (starts, output rows, the sensitivities' projections) and the BDF's iteration matrix G
 * (K plus the force and constraint-curvature terms): the pattern and the map from every
 * source entry (mass, Q_q, Q_v, the Hessian term, Phi_q, Phi_q^T, the constraint block's
 * diagonal) to its slot are made once, when the integrator is created. KLU analyses the
 * pattern when first needed, refactors with the same pivot order after that, and
 * factorises afresh (new pivots) when the reciprocal pivot ratio drops below eps^(2/3), as
 * SUNDIALS' KLU module does. The output rows keep a second numeric object of their own, so
 * that projecting a row does not disturb the BDF's factorisation of G.
 *
 * Straight-line LU code (ld_bdf_set_lu_code, written by linkdyn.solve.lu_code) can take
 * KLU's place for G and K: the pattern's elimination in one fixed pivot order (KLU's, from a
 * factorisation of K at the start: ld_bdf_g_pivot_order) with every index a constant. It
 * keeps its pivots on the same terms as KLU's refactorisation, while their ratio stays at
 * or above eps^(2/3); below, KLU factorises with fresh pivots. On the Jansen linkage with
 * the BDF, KLU's refactorisations and solves were half of the run's instructions.
 */
#include "ld_linear.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest iteration matrix analysed with KLU's block triangular form (see ld__kkt_create). */
#define BTF_MAX_SIZE 10000
#define FILL_LIMIT 4.0          /* fill of a factorisation over its ordering's estimate that
                                   calls for another ordering (see ld__factor_G) */
#define RCOND_MIN 3.67e-11      /* eps^(2/3): below it, factorise with fresh pivots */

typedef struct { int col, row, src; } entry;

int ld__sort_keys(int n, const int *col, const int *row, int ncols, int nrows, int *perm)
{
    int *count = (int *)calloc((size_t)((ncols > nrows ? ncols : nrows) + 1), sizeof(int));
    int *tmp = (int *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    int i, k;
    if (!count || !tmp) { free(count); free(tmp); return LD_BDF_NO_MEMORY; }
    /* by row first, then stably by column: the order of column, then row */
    for (i = 0; i < n; i++) count[row[i] + 1]++;
    for (k = 0; k < nrows; k++) count[k + 1] += count[k];
    for (i = 0; i < n; i++) tmp[count[row[i]]++] = i;
    for (k = 0; k <= ncols; k++) count[k] = 0;
    for (i = 0; i < n; i++) count[col[i] + 1]++;
    for (k = 0; k < ncols; k++) count[k + 1] += count[k];
    for (i = 0; i < n; i++) perm[count[col[tmp[i]]]++] = tmp[i];
    free(count);
    free(tmp);
    return LD_BDF_SUCCESS;
}

/* Fixed CSC pattern of G and the map from every source entry to its slot in Gx. */
static int build_pattern(ld_bdf *w)
{
    const ld_system *s = w->sys;
    int nq = w->nq, total = nq + s->fq_nnz + s->fv_nnz + s->hess_nnz + 2 * s->phiq_nnz +
                            (w->map_D_wanted ? w->nc : 0);
    entry *e = (entry *)malloc((size_t)(total > 0 ? total : 1) * sizeof(entry));
    int *slot_of = (int *)malloc((size_t)(total > 0 ? total : 1) * sizeof(int));
    int k = 0, j, p, i, *order;
    if (!e || !slot_of) { free(e); free(slot_of); return LD_BDF_NO_MEMORY; }
    for (i = 0; i < nq; i++) { e[k].col = i; e[k].row = i; e[k].src = k; k++; }
#define ADD_CSC(colptr, rowind, ncols, coloff, rowoff)                                   \
    for (j = 0; j < (ncols); j++)                                                        \
        for (p = (colptr)[j]; p < (colptr)[j + 1]; p++) {                                \
            e[k].col = j + (coloff); e[k].row = (rowind)[p] + (rowoff); e[k].src = k; k++; \
        }
    ADD_CSC(s->fq_colptr, s->fq_rowind, nq, 0, 0)
    ADD_CSC(s->fv_colptr, s->fv_rowind, nq, 0, 0)
    ADD_CSC(s->hess_colptr, s->hess_rowind, nq, 0, 0)
    ADD_CSC(s->phiq_colptr, s->phiq_rowind, nq, 0, nq)   /* Phi_q: rows nq.., cols 0.. */
#undef ADD_CSC
    /* Phi_q^T: entry (c, j) of Phi_q goes to row j, column nq + c; keep source order. */
    for (j = 0; j < nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++) {
            e[k].col = nq + s->phiq_rowind[p]; e[k].row = j; e[k].src = k; k++;
        }
    /* Diagonal entries of the constraint block: they replace an inactive row by lam_i = 0
     * and carry the regularisation of active rows. */
    if (w->map_D_wanted)
        for (i = 0; i < w->nc; i++) {
            e[k].col = nq + i; e[k].row = nq + i; e[k].src = k; k++;
        }
    /* The entries in the order of column, then row: the CSC pattern with its duplicates. */
    order = (int *)malloc((size_t)(3 * total + 1) * sizeof(int));
    if (!order) { free(e); free(slot_of); return LD_BDF_NO_MEMORY; }
    for (k = 0; k < total; k++) { order[total + k] = e[k].col; order[2 * total + k] = e[k].row; }
    if (ld__sort_keys(total, order + total, order + 2 * total, w->ng, w->ng, order) !=
        LD_BDF_SUCCESS) {
        free(order); free(e); free(slot_of); return LD_BDF_NO_MEMORY;
    }

    w->Gp = (int *)calloc((size_t)w->ng + 1, sizeof(int));
    w->Gi = (int *)malloc((size_t)(total > 0 ? total : 1) * sizeof(int));
    if (!w->Gp || !w->Gi) { free(order); free(e); free(slot_of); return LD_BDF_NO_MEMORY; }
    w->g_nnz = 0;
    for (i = 0; i < total; i++) {
        const entry *x = e + order[i], *prev = i > 0 ? e + order[i - 1] : NULL;
        if (!prev || x->col != prev->col || x->row != prev->row) {
            w->Gi[w->g_nnz] = x->row;
            w->Gp[x->col + 1]++;
            w->g_nnz++;
        }
        slot_of[x->src] = w->g_nnz - 1;
    }
    free(order);
    for (j = 0; j < w->ng; j++) w->Gp[j + 1] += w->Gp[j];
    w->Gx = (double *)calloc((size_t)(w->g_nnz > 0 ? w->g_nnz : 1), sizeof(double));
    w->map_M = slot_of;
    w->map_fq = slot_of + nq;
    w->map_fv = w->map_fq + s->fq_nnz;
    w->map_h = w->map_fv + s->fv_nnz;
    w->map_J = w->map_h + s->hess_nnz;
    w->map_JT = w->map_J + s->phiq_nnz;
    w->map_D = w->map_D_wanted ? w->map_JT + s->phiq_nnz : NULL;
    free(e);
    return w->Gx ? LD_BDF_SUCCESS : LD_BDF_NO_MEMORY;
}

/* KLU's analysis of the iteration matrix's pattern, made once, when first needed. */
static int symbolic(ld_bdf *w)
{
    if (w->sym) return LD_BDF_SUCCESS;
    w->sym = klu_analyze(w->ng, w->Gp, w->Gi, &w->common);
    return w->sym ? LD_BDF_SUCCESS : LD_BDF_NO_MEMORY;
}

int ld__all_finite(const double *x, int n)
{
    /* Branch-free: inf * 0 and nan * 0 are nan, so the sums are 0 exactly when all are
     * finite (four of them, independent, for the pipeline). */
    int i;
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    for (i = 0; i + 3 < n; i += 4) {
        a0 += x[i] * 0.0;
        a1 += x[i + 1] * 0.0;
        a2 += x[i + 2] * 0.0;
        a3 += x[i + 3] * 0.0;
    }
    for (; i < n; i++) a0 += x[i] * 0.0;
    return a0 + a1 + a2 + a3 == 0.0;
}

/* Gx <- K = [M Phi_q^T; Phi_q -r diag(rdiag)] at the current phiq values (the index-1
 * matrix; r = 0 without regularisation). */
void ld__assemble_K(ld_bdf *w, double r)
{
    const ld_system *s = w->sys;
    int i;
    memset(w->Gx, 0, (size_t)w->g_nnz * sizeof(double));
    for (i = 0; i < w->nq; i++) w->Gx[w->map_M[i]] += s->mass[i];
    for (i = 0; i < s->phiq_nnz; i++) {
        w->Gx[w->map_J[i]] += w->phiq[i];
        w->Gx[w->map_JT[i]] += w->phiq[i];
    }
    if (w->map_D)
        for (i = 0; i < w->nc; i++)
            w->Gx[w->map_D[i]] = (s->row_active && !s->row_active[i]) ? 1.0 : -r * w->rdiag[i];
}

/* The rows' scale for the regularisation, diag(Phi_q M^-1 Phi_q^T), from the phiq values
 * (at the start or a restart; kept fixed in between, so that the corrector's equations do
 * not depend on when the iteration matrix was refreshed). */
void ld__set_regularization(ld_bdf *w)
{
    const ld_system *s = w->sys;
    int i, j, p;
    for (i = 0; i < w->nc; i++) w->rdiag[i] = 0.0;
    if (w->opt.regularization <= 0) return;
    for (j = 0; j < w->nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            w->rdiag[s->phiq_rowind[p]] += w->phiq[p] * w->phiq[p] / s->mass[j];
}

/* Phi_q values at q into w->phiq, the entries of inactive rows zeroed. */
int ld__eval_phi_q(ld_bdf *w, double t, const double *q)
{
    const ld_system *s = w->sys;
    int p, st = s->phi_q(s->user, t, q, w->phiq);
    if (st == LD_OK && s->row_active)
        for (p = 0; p < s->phiq_nnz; p++)
            if (!s->row_active[s->phiq_rowind[p]]) w->phiq[p] = 0.0;
    return st;
}

/* Right-hand sides of inactive rows: zero (their multipliers are zero). */
void ld__zero_inactive(const ld_bdf *w, double *rows)
{
    int i;
    if (w->sys->row_active)
        for (i = 0; i < w->nc; i++)
            if (!w->sys->row_active[i]) rows[i] = 0.0;
}

/* Gx <- G: K plus the force and constraint-curvature terms at step constant c. */
static void assemble_G(ld_bdf *w, double c)
{
    const ld_system *s = w->sys;
    int i;
    ld__assemble_K(w, w->opt.regularization);
    for (i = 0; i < s->fq_nnz; i++) w->Gx[w->map_fq[i]] -= c * c * w->fq[i];
    for (i = 0; i < s->fv_nnz; i++) w->Gx[w->map_fv[i]] -= c * w->fv[i];
    for (i = 0; i < s->hess_nnz; i++) w->Gx[w->map_h[i]] += w->hess[i];
}

/* Once per integrator, when the first full factorisation filled far beyond what AMD's
 * ordering of the symmetric pattern promised: KLU's threshold pivoting has left the
 * diagonal, as in the iteration matrix of spatial bodies, whose direction coordinates carry
 * second moments tiny against their rows' Jacobian entries (a chain of 1,000 spatial bars:
 * 0.36 s for one factorisation, growing like n^2). COLAMD orders the columns for the pivots
 * partial pivoting takes; its factorisation replaces AMD's where it is sparser (that chain:
 * 0.05 s). Models whose factorisations fill as promised never get here. */
static void reorder(ld_bdf *w)
{
    klu_symbolic *sym;
    klu_numeric *num = NULL;
    w->reordered = 1;
    w->common.ordering = 1;
    sym = klu_analyze(w->ng, w->Gp, w->Gi, &w->common);
    if (sym) num = klu_factor(w->Gp, w->Gi, w->Gx, sym, &w->common);
    if (num && num->lnz + num->unz < w->num->lnz + w->num->unz) {
        w->stats.reorderings++;
        klu_free_numeric(&w->num, &w->common);
        if (w->num_out) klu_free_numeric(&w->num_out, &w->common);   /* of the old order */
        klu_free_symbolic(&w->sym, &w->common);
        w->sym = sym;
        w->num = num;
        return;
    }
    if (num) klu_free_numeric(&num, &w->common);
    if (sym) klu_free_symbolic(&sym, &w->common);
    w->common.status = KLU_OK;
}

static int klu_factor_G(ld_bdf *w);

/* Numeric factorisation of Gx: by the straight-line code where its pivots serve, else
 * KLU's (below). */
int ld__factor_G(ld_bdf *w)
{
    int sign;
    if (w->lu_code.factor && w->lu_code.factor(w->Gx, w->lu_x, &sign) >= RCOND_MIN) {
        w->stats.factorizations++;
        w->stats.generated_factorizations++;
        w->lu_fast = 1;
        return LD_BDF_SUCCESS;
    }
    w->lu_fast = 0;
    return klu_factor_G(w);
}

/* KLU's factorisation of Gx: refactor with the old pivots when possible, afresh when the
 * pivots have become poor or none exist yet. */
static int klu_factor_G(ld_bdf *w)
{
    if (symbolic(w) != LD_BDF_SUCCESS) return LD_BDF_NO_MEMORY;
    w->stats.factorizations++;
    if (w->num) {
        if (klu_refactor(w->Gp, w->Gi, w->Gx, w->sym, w->num, &w->common) &&
            w->common.status == KLU_OK && klu_rcond(w->sym, w->num, &w->common) &&
            w->common.rcond >= RCOND_MIN)
            return LD_BDF_SUCCESS;
        klu_free_numeric(&w->num, &w->common);
    }
    w->stats.full_factorizations++;
    w->num = klu_factor(w->Gp, w->Gi, w->Gx, w->sym, &w->common);
    if (!w->num) {
        w->fail_index = w->common.singular_col < w->ng ? w->common.singular_col : -1;
        if (w->common.status == KLU_SINGULAR) return LD_BDF_SINGULAR;
        if (w->common.status == KLU_OUT_OF_MEMORY) return LD_BDF_NO_MEMORY;
        return LD_BDF_LINEAR_SOLVER;
    }
    if (!w->reordered && w->num->lnz + w->num->unz > FILL_LIMIT * (w->sym->lnz + w->sym->unz))
        reorder(w);
    if (klu_rcond(w->sym, w->num, &w->common) && w->common.rcond < DBL_EPSILON) {
        w->fail_index = -1;
        return LD_BDF_SINGULAR;
    }
    return LD_BDF_SUCCESS;
}

int ld__solve_G(ld_bdf *w, double *rhs)
{
    if (w->lu_fast) {
        w->lu_code.solve(w->lu_x, rhs, w->lu_work);
        return LD_BDF_SUCCESS;
    }
    return klu_solve(w->sym, w->num, w->ng, 1, rhs, &w->common) ? LD_BDF_SUCCESS
                                                                 : LD_BDF_LINEAR_SOLVER;
}

/* out[j] = sum_c Phi_q[c, j] lam[c] */
void ld__phiq_transpose_times(const ld_bdf *w, const double *lam, double *out)
{
    const ld_system *s = w->sys;
    int j, p;
    for (j = 0; j < w->nq; j++) {
        double acc = 0.0;
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            acc += w->phiq[p] * lam[s->phiq_rowind[p]];
        out[j] = acc;
    }
}

/* Assemble and factorise G at the current iterate (phiq and y are current). */
int ld__refresh_G(ld_bdf *w, double t, double c)
{
    const ld_system *s = w->sys;
    int i, st;
    const double *q = w->y, *v = w->y + w->nq, *lam = w->y + 2 * w->nq;
    w->stats.jacobian_evaluations++;
    for (i = 0; i < w->nc; i++) w->lam_scaled[i] = c * c * lam[i];
    if (s->fq_nnz && (st = s->force_q(s->user, t, q, v, w->fq)) != LD_OK) return LD_BDF_CALLBACK;
    if (s->fv_nnz && (st = s->force_v(s->user, t, q, v, w->fv)) != LD_OK) return LD_BDF_CALLBACK;
    if (s->hess_nnz && (st = s->phi_qq_lam(s->user, t, q, w->lam_scaled, w->hess)) != LD_OK)
        return LD_BDF_CALLBACK;
    assemble_G(w, c);
    if (!ld__all_finite(w->Gx, w->g_nnz)) return LD_BDF_NONFINITE;
    return ld__factor_G(w);
}

int ld__kkt_create(ld_bdf *w)
{
    int st = build_pattern(w);
    if (st != LD_BDF_SUCCESS) return st;
    klu_defaults(&w->common);
    /* KLU's block triangular form starts with a maximum transversal, whose cost on these
     * KKT matrices grows like n^2 with the loops of a mechanism (1.5 s of analysis for an
     * N-four-bar of 4,000 windows, n = 36,000) and which finds one block anyway: a closed
     * loop couples everything. Without it AMD orders the symmetric pattern with half the
     * fill. Small systems keep it: their analysis is instant and their pivot order is the one
     * the accuracy tests were measured with (at 1e-12, round-off differs by up to 2x). */
    if (w->ng > BTF_MAX_SIZE) w->common.btf = 0;
    if (w->opt.column_ordering) {
        w->common.ordering = 1;
        w->reordered = 1;
    }
    /* The pattern is analysed when first factorised (symbolic()): a run that the explicit
     * method finishes never pays for it. */
    return LD_BDF_SUCCESS;
}

void ld__kkt_free(ld_bdf *w)
{
    if (w->num) klu_free_numeric(&w->num, &w->common);
    if (w->num_out) klu_free_numeric(&w->num_out, &w->common);
    if (w->sym) klu_free_symbolic(&w->sym, &w->common);
    free(w->Gp); free(w->Gi); free(w->Gx); free(w->map_M);
    free(w->lu_x); free(w->lu_work);
}

/* ------------------------------------------------------------------------------------------ */
/* Straight-line LU code (see the top) */

void ld_bdf_g_pattern(const ld_bdf *w, int *ng, const int **colptr, const int **rowind)
{
    *ng = w->ng;
    *colptr = w->Gp;
    *rowind = w->Gi;
}

static unsigned long long fnv_int(unsigned long long h, int v)
{
    unsigned int u = (unsigned int)v;
    int b;
    for (b = 0; b < 4; b++) h = (h ^ ((u >> (8 * b)) & 0xffu)) * 1099511628211ULL;
    return h;
}

unsigned long long ld_bdf_g_signature(const ld_bdf *w)
{
    unsigned long long h = 14695981039346656037ULL;
    int i;
    h = fnv_int(h, w->ng);
    h = fnv_int(h, w->g_nnz);
    for (i = 0; i <= w->ng; i++) h = fnv_int(h, w->Gp[i]);
    for (i = 0; i < w->g_nnz; i++) h = fnv_int(h, w->Gi[i]);
    return h;
}

int ld_bdf_g_pivot_order(ld_bdf *w, double t, const double *q, int *rows, int *cols)
{
    klu_numeric *num;
    int i;
    if (symbolic(w) != LD_BDF_SUCCESS) return LD_BDF_NO_MEMORY;
    if (ld__eval_phi_q(w, t, q) != LD_OK) return LD_BDF_CALLBACK;
    ld__assemble_K(w, w->out_reg);
    if (!ld__all_finite(w->Gx, w->g_nnz)) return LD_BDF_NONFINITE;
    num = klu_factor(w->Gp, w->Gi, w->Gx, w->sym, &w->common);
    if (!num) {
        w->common.status = KLU_OK;
        return LD_BDF_SINGULAR;
    }
    for (i = 0; i < w->ng; i++) {
        rows[i] = num->Pnum[i];
        cols[i] = w->sym->Q[i];
    }
    klu_free_numeric(&num, &w->common);
    return LD_BDF_SUCCESS;
}

int ld_bdf_set_lu_code(ld_bdf *w, const ld_lu_code *code)
{
    double *x, *work;
    if (!code) {
        memset(&w->lu_code, 0, sizeof w->lu_code);
        w->lu_fast = 0;
        return LD_BDF_SUCCESS;
    }
    if (code->signature != ld_bdf_g_signature(w) || !code->factor || !code->solve ||
        code->size < 2 * w->ng)
        return LD_BDF_BAD_INPUT;
    x = (double *)malloc((size_t)code->size * sizeof(double));
    work = (double *)malloc((size_t)(w->ng > 0 ? w->ng : 1) * sizeof(double));
    if (!x || !work) { free(x); free(work); return LD_BDF_NO_MEMORY; }
    free(w->lu_x);
    free(w->lu_work);
    w->lu_x = x;
    w->lu_work = work;
    w->lu_code = *code;
    w->lu_fast = 0;
    return LD_BDF_SUCCESS;
}

int ld__factor_K(ld_bdf *w, double t, const double *q)
{
    if (ld__eval_phi_q(w, t, q) != LD_OK) return LD_BDF_CALLBACK;
    ld__assemble_K(w, w->out_reg);
    if (!ld__all_finite(w->Gx, w->g_nnz)) return LD_BDF_NONFINITE;
    return ld__factor_G(w);
}

int ld__condest_G(ld_bdf *w, double *condest)
{
    /* KLU's estimate needs KLU's factors: made of the same Gx where the code's are current */
    if (w->lu_fast) {
        w->lu_fast = 0;
        if (klu_factor_G(w) != LD_BDF_SUCCESS) return 0;
    }
    if (!klu_condest(w->Gp, w->Gx, w->sym, w->num, &w->common)) return 0;
    *condest = w->common.condest;
    return 1;
}

int ld__factor_output(ld_bdf *w)
{
    if (symbolic(w) != LD_BDF_SUCCESS) return LD_BDF_NO_MEMORY;
    if (!(w->num_out && klu_refactor(w->Gp, w->Gi, w->Gx, w->sym, w->num_out, &w->common) &&
          klu_rcond(w->sym, w->num_out, &w->common) && w->common.rcond >= RCOND_MIN)) {
        if (w->num_out) klu_free_numeric(&w->num_out, &w->common);
        w->num_out = klu_factor(w->Gp, w->Gi, w->Gx, w->sym, &w->common);
        if (!w->num_out) {
            w->fail_index = w->common.singular_col < w->ng ? w->common.singular_col : -1;
            return w->common.status == KLU_SINGULAR ? LD_BDF_SINGULAR : LD_BDF_LINEAR_SOLVER;
        }
    }
    return LD_BDF_SUCCESS;
}

int ld__solve_output(ld_bdf *w, double *rhs)
{
    return klu_solve(w->sym, w->num_out, w->ng, 1, rhs, &w->common) ? LD_BDF_SUCCESS
                                                                     : LD_BDF_LINEAR_SOLVER;
}
