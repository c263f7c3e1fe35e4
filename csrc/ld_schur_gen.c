/*
 * ld_schur_gen.c -- the explicit method's Schur plan (ld_schur.c) written out as straight-line
 * C, and that code, once compiled, put in the plan's place (ld_bdf.h: ld_bdf_schur_source,
 * ld_bdf_set_schur_code).
 *
 * The plan's loops read, for every product and every elimination update, the indices it
 * works on from lists (pair_dst, gp_dst, ...): on the Jansen linkage two thirds of a
 * factorisation's instructions are that bookkeeping. The pattern is fixed for the run, so
 * the same operations can be written out once with the indices as constants. The source
 * emitted here does exactly the plan's operations in the plan's order, statement for
 * statement (the factors are the same to the bit where the compiler does not contract
 * multiply-adds differently), and the same for the products with Phi_q the explicit
 * method forms at every right-hand side (ld_rk.c), whose pattern is as fixed:
 *
 *   void ldg_add(const double *J, const double *minv, double *LD)    the products
 *   void ldg_elim(double *LD)                                        the elimination
 *   void ldg_solve(const double *LD, double *x, double *y)           x <- S^-1 x
 *   void ldg_jt, ldg_j, ldg_jm                                       the products with Phi_q
 *   unsigned long long ldg_signature(void)                           the plan's signature
 *
 * It includes nothing and calls nothing, so any C99 compiler builds it into a shared library
 * (linkdyn.solve.generated does, caching the result). ld_bdf_set_schur_code accepts the
 * functions only with the signature of the workspace's own plan: a 64-bit FNV-1a hash of
 * every array the code was written from, so code emitted for another model (or another
 * version of the plan) is refused rather than run.
 */
#include "ld_rk.h"
#include "ld_schur.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* The plan's signature */

static unsigned long long fnv_ints(unsigned long long h, const int *a, int n)
{
    int i, b;
    for (i = 0; i < n; i++) {
        unsigned int v = (unsigned int)a[i];
        for (b = 0; b < 4; b++) {
            h ^= (v >> (8 * b)) & 0xffu;
            h *= 1099511628211ULL;
        }
    }
    return h;
}

static unsigned long long plan_signature(const ld_bdf *w, const struct ld_schur *r)
{
    int head[8];
    unsigned long long h = 14695981039346656037ULL;
    int ngp = r->g_pairs[r->n_groups];
    head[0] = r->nc; head[1] = r->lnz; head[2] = r->n_pairs; head[3] = r->n_groups;
    head[4] = r->LD0 != NULL; head[5] = r->LD0 ? r->n_var : 0; head[6] = ngp;
    head[7] = w->nq;
    h = fnv_ints(h, head, 8);
    h = fnv_ints(h, w->sys->phiq_colptr, w->nq + 1);
    h = fnv_ints(h, w->sys->phiq_rowind, w->sys->phiq_colptr[w->nq]);
    h = fnv_ints(h, r->P, r->nc);
    h = fnv_ints(h, r->Lp, r->nc + 1);
    h = fnv_ints(h, r->Li, r->lnz);
    h = fnv_ints(h, r->pair_dst, r->n_pairs);
    if (r->LD0) {
        h = fnv_ints(h, r->va, r->n_var);
        h = fnv_ints(h, r->vb, r->n_var);
        h = fnv_ints(h, r->vc, r->n_var);
        h = fnv_ints(h, r->vd, r->n_var);
    }
    h = fnv_ints(h, r->row_groups, r->nc + 1);
    h = fnv_ints(h, r->g_src, r->n_groups);
    h = fnv_ints(h, r->g_col, r->n_groups);
    h = fnv_ints(h, r->g_pairs, r->n_groups + 1);
    return fnv_ints(h, r->gp_dst, ngp);
}

/* ------------------------------------------------------------------------------------------ */
/* Writing the source: into buf while it has room, counting every character */

/* Statements per function: compilers take time superlinear in a function's length (gcc -O1
 * on the plan of a chain of 60 bars, 5,600 statements, took 2.4 s as one function), so each
 * function is cut, at the boundaries its loops allow, into parts of about this many. */
#define PART_STATEMENTS 400

struct out {
    char *buf;
    long cap, len;              /* room (including the final NUL), characters so far */
    long limit;                 /* > 0 (no buffer): stop writing once len passes it */
    int statements, parts;      /* in the current part, parts of the current function */
    const char *name, *params, *args, *locals;  /* of the current function */
};

static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    long room = o->cap - o->len;
    int n;
    char scratch[1];
    if (o->limit > 0 && o->len > o->limit) return;
    va_start(ap, fmt);
    if (room > 0) n = vsnprintf(o->buf + o->len, (size_t)room, fmt, ap);
    else n = vsnprintf(scratch, 0, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += n;
    o->statements++;
}

static void open_part(struct out *o)
{
    put(o, "LDG_PART %s_%d(%s)\n{\n%s", o->name, o->parts, o->params, o->locals);
    o->statements = 0;
}

/* A function is written as parts ldg_x_0, ldg_x_1, ... and ldg_x calling them in order. */
static void begin(struct out *o, const char *name, const char *params, const char *args,
                  const char *locals)
{
    o->name = name; o->params = params; o->args = args; o->locals = locals;
    o->parts = 0;
    open_part(o);
}

/* Where the function may be cut: a new part once the current one is full. */
static void boundary(struct out *o)
{
    if (o->statements < PART_STATEMENTS) return;
    put(o, "}\n");
    o->parts++;
    open_part(o);
}

static void end(struct out *o)
{
    int k;
    put(o, "}\nvoid %s(%s)\n{\n", o->name, o->params);
    for (k = 0; k <= o->parts; k++) put(o, "%s_%d(%s);\n", o->name, k, o->args);
    put(o, "}\n");
}

/* ldg_add: the products of the plan (ld__schur_factor): the variable ones where there is a
 * base of constant entries, else every pair, column by column. */
static void emit_add(struct out *o, const ld_bdf *w, const struct ld_schur *r)
{
    const int *cp = w->sys->phiq_colptr;
    int j, p, p2, k = 0, q;
    begin(o, "ldg_add", "const double *restrict J, const double *restrict m, "
          "double *restrict L", "J, m, L", "");
    if (r->LD0)
        for (q = 0; q < r->n_var; q++) {
            boundary(o);
            put(o, "L[%d]+=J[%d]*J[%d]*m[%d];\n", r->vd[q], r->va[q], r->vb[q], r->vc[q]);
        }
    else
        for (j = 0; j < w->nq; j++)
            for (p = cp[j]; p < cp[j + 1]; p++)
                for (p2 = cp[j]; p2 <= p; p2++) {
                    boundary(o);
                    put(o, "L[%d]+=J[%d]*J[%d]*m[%d];\n", r->pair_dst[k++], p, p2, j);
                }
    end(o);
}

/* ldg_elim: the plan's up-looking elimination (ld_schur.c, eliminate), D at L + lnz. */
static void emit_elim(struct out *o, const struct ld_schur *r)
{
    int k, g, q, d = r->lnz;
    begin(o, "ldg_elim", "double *restrict L", "L", "double y,l,d;\n");
    for (k = 0; k < r->nc; k++) {
        if (r->row_groups[k] == r->row_groups[k + 1]) continue;
        boundary(o);
        put(o, "d=L[%d];\n", d + k);
        for (g = r->row_groups[k]; g < r->row_groups[k + 1]; g++) {
            int ci = r->g_col[g], q0 = r->g_pairs[g];
            put(o, "y=L[%d];\n", r->g_src[g]);
            for (q = q0; q < r->g_pairs[g + 1]; q++)
                put(o, "L[%d]-=L[%d]*y;\n", r->gp_dst[q], r->Lp[ci] + q - q0);
            put(o, "l=y/L[%d];d-=l*y;L[%d]=l;\n", d + ci, r->g_src[g]);
        }
        put(o, "L[%d]=d;\n", d + k);
    }
    end(o);
}

/* ldg_solve: ld__schur_solve's three sweeps. */
static void emit_solve(struct out *o, const struct ld_schur *r)
{
    int i, p, d = r->lnz;
    begin(o, "ldg_solve", "const double *restrict L, double *restrict x, double *restrict y",
          "L, x, y", "double t;\n");
    for (i = 0; i < r->nc; i++) put(o, "y[%d]=x[%d];\n", i, r->P[i]);
    for (i = 0; i < r->nc; i++) {
        boundary(o);
        put(o, "t=y[%d];\n", i);
        for (p = r->Lp[i]; p < r->Lp[i + 1]; p++) put(o, "y[%d]-=L[%d]*t;\n", r->Li[p], p);
        put(o, "y[%d]=t/L[%d];\n", i, d + i);
    }
    for (i = r->nc - 1; i >= 0; i--) {
        boundary(o);
        put(o, "t=y[%d];\n", i);
        for (p = r->Lp[i]; p < r->Lp[i + 1]; p++) put(o, "t-=L[%d]*y[%d];\n", p, r->Li[p]);
        put(o, "y[%d]=t;x[%d]=t;\n", i, r->P[i]);
    }
    end(o);
}

/* ldg_jt, ldg_j, ldg_jm: the products with Phi_q of ld_rk.c (minus_minv_jt, add_j_times). */
static void emit_products(struct out *o, const ld_bdf *w)
{
    const int *cp = w->sys->phiq_colptr, *ri = w->sys->phiq_rowind;
    int j, p, scaled;
    begin(o, "ldg_jt", "const double *restrict J, const double *restrict m, "
          "const double *restrict x, double *restrict out", "J, m, x, out", "double a;\n");
    for (j = 0; j < w->nq; j++) {
        boundary(o);
        put(o, "a=0.0;\n");
        for (p = cp[j]; p < cp[j + 1]; p++) put(o, "a+=J[%d]*x[%d];\n", p, ri[p]);
        put(o, "out[%d]-=a*m[%d];\n", j, j);
    }
    end(o);
    for (scaled = 0; scaled < 2; scaled++) {
        if (scaled)
            begin(o, "ldg_jm", "const double *restrict J, const double *restrict m, "
                  "const double *restrict x, double *restrict out", "J, m, x, out",
                  "double a;\n");
        else
            begin(o, "ldg_j", "const double *restrict J, const double *restrict x, "
                  "double *restrict out", "J, x, out", "double a;\n");
        for (j = 0; j < w->nq; j++) {
            if (cp[j] == cp[j + 1]) continue;
            boundary(o);
            if (scaled) put(o, "a=x[%d]*m[%d];\n", j, j);
            else put(o, "a=x[%d];\n", j);
            for (p = cp[j]; p < cp[j + 1]; p++) put(o, "out[%d]+=J[%d]*a;\n", ri[p], p);
        }
        end(o);
    }
}

long ld_bdf_schur_size_bound(ld_bdf *w)
{
    /* the shortest form of each statement: a product 22 characters ("L[0]+=J[0]*J[0]*m[0];"
     * and its newline), an elimination update 15, an entry of L 15 in each of the two
     * sweeps, an entry of Phi_q 15 in ldg_jt and 17 in ldg_j and ldg_jm each */
    const struct ld_schur *r = ld__rk_schur(w);
    long nnz;
    if (!r || r->nc == 0 || !r->LD) return -1;
    nnz = w->sys->phiq_colptr[w->nq];
    return 22L * (r->LD0 ? r->n_var : r->n_pairs) + 15L * r->g_pairs[r->n_groups] +
           30L * r->lnz + 49L * nnz;
}

long ld_bdf_schur_source(ld_bdf *w, char *buf, long cap)
{
    const struct ld_schur *r = ld__rk_schur(w);
    struct out o;
    if (!r || r->nc == 0 || !r->LD) return -1;
    o.buf = buf;
    o.cap = buf ? cap : 0;
    o.limit = buf ? 0 : cap;
    o.len = 0;
    o.statements = o.parts = 0;
    if (o.cap > 0) buf[0] = '\0';
    put(&o, "/* linkdyn: the Schur plan of one model as straight-line C (csrc/ld_schur_gen.c).\n"
            " * nc %d, lnz %d, %d products, %d elimination updates. Generated; do not edit. */\n",
        r->nc, r->lnz, r->LD0 ? r->n_var : r->n_pairs, r->g_pairs[r->n_groups]);
    put(&o, "#if defined(__GNUC__)\n#define LDG_PART static __attribute__((noinline)) void\n"
            "#else\n#define LDG_PART static void\n#endif\n");
    put(&o, "unsigned long long ldg_signature(void)\n{\nreturn %lluULL;\n}\n",
        plan_signature(w, r));
    emit_add(&o, w, r);
    emit_elim(&o, r);
    emit_solve(&o, r);
    emit_products(&o, w);
    return o.len;
}

unsigned long long ld_bdf_schur_signature(ld_bdf *w)
{
    const struct ld_schur *r = ld__rk_schur(w);
    return r && r->nc > 0 && r->LD ? plan_signature(w, r) : 0;
}

int ld_bdf_set_schur_code(ld_bdf *w, const ld_schur_code *code)
{
    struct ld_schur *r = ld__rk_schur(w);
    if (!r || r->nc == 0 || !r->LD) return LD_BDF_BAD_INPUT;
    if (!code) {
        memset(&r->gen, 0, sizeof(r->gen));
        return LD_BDF_SUCCESS;
    }
    if (!code->add || !code->elim || !code->solve || !code->jt || !code->j || !code->jm ||
        code->signature != plan_signature(w, r))
        return LD_BDF_BAD_INPUT;
    r->gen = *code;
    return LD_BDF_SUCCESS;
}
