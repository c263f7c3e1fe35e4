/*
 * sundials_baseline.c -- a compiled baseline for linkdyn's work-precision benchmarks:
 * SUNDIALS integrators on the index-1 form of any linkdyn model, driven through the model's
 * own ld_system callbacks (csrc/ld_system.h), so that a comparison with linkdyn's methods
 * isolates the integration method: the same residuals, Jacobians and forces, compiled code
 * on both sides, no Python in either loop.
 *
 * The form: y = (q, v), q' = v, and the accelerations a with multipliers lam from
 *
 *     M a + Phi_q^T lam = Q(q, v, t),
 *     Phi_q a = gamma - 2 alpha (Phi_q v + Phi_t) - beta^2 Phi        (Baumgarte),
 *
 * by the Schur complement S = Phi_q M^-1 Phi_q^T (M diagonal): its pattern is found and
 * ordered (AMD) once, and SuiteSparse's LDL factorises it at every right-hand side, as the
 * hand-written compiled peer of the Jansen benchmark does. Integrators: ARKODE's explicit
 * Runge-Kutta-Fehlberg 7(8) (13 stages, ERKStep) and CVODE's Adams-Moulton with fixed-point
 * iteration, each with its own error control on y at rtol, atol.
 *
 * Built by benchmarks/sundials_baseline.py when SUNDIALS (Debian's libsundials-dev) and
 * SuiteSparse are installed; called through ctypes with the ld_system pointer of a model's
 * capsule. Status codes, no exits, no global state.
 */
#include "ld_system.h"

#include <amd.h>
#include <arkode/arkode_erkstep.h>
#include <cvode/cvode.h>
#include <ldl.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdlib.h>
#include <string.h>
#include <sundials/sundials_context.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>
#include <time.h>

enum { LDSUN_ERK = 0, LDSUN_ADAMS = 1 };
enum { LDSUN_OK = 0, LDSUN_NO_MEMORY = -101, LDSUN_BAD_INPUT = -102, LDSUN_SINGULAR = -103,
       LDSUN_BUDGET = -104 };

typedef struct {
    const ld_system *sys;
    int nq, nc;
    double alpha, beta;
    double *minv;               /* [nq] */
    double *phiq;               /* [phiq_nnz] Jacobian values */
    double *force, *gam, *tmp;  /* [nq], [nc], [nc] */
    /* S in CSC (full pattern, both triangles: LDL reads the upper one of the permuted
     * matrix), its values, and where each pair of a column's Jacobian entries (p2 <= p)
     * adds phiq[p] phiq[p2] / m_j: Sx[pair_dst[2 k]] and, off the diagonal,
     * Sx[pair_dst[2 k + 1]] */
    int *Sp, *Si, *pair_dst, n_pairs;
    double *Sx;
    /* LDL: order, symbolic analysis, factors, scratch */
    int *P, *Pinv, *Lp, *Parent, *Lnz, *Flag, *Pattern, *Li;
    double *Lx, *D, *Y;
    long rhs_evaluations;
    int status;                 /* the first failure of a right-hand side */
} problem;

static void problem_free(problem *p)
{
    free(p->minv); free(p->phiq); free(p->force); free(p->gam); free(p->tmp);
    free(p->Sp); free(p->Si); free(p->pair_dst); free(p->Sx);
    free(p->P); free(p->Pinv); free(p->Lp); free(p->Parent); free(p->Lnz); free(p->Flag);
    free(p->Pattern); free(p->Li); free(p->Lx); free(p->D); free(p->Y);
}

/* S's pattern (rows that share a coordinate), the pair map, the AMD order and LDL's
 * symbolic analysis. */
static int problem_init(problem *p, const ld_system *sys, double alpha, double beta)
{
    int nq = sys->nq, nc = sys->nc, j, a, b, k, nnz;
    const int *cp = sys->phiq_colptr, *ri = sys->phiq_rowind;
    char *mark;
    memset(p, 0, sizeof(*p));
    p->sys = sys;
    p->nq = nq;
    p->nc = nc;
    p->alpha = alpha;
    p->beta = beta;
    p->minv = malloc((size_t)nq * sizeof(double));
    p->phiq = malloc((size_t)(sys->phiq_nnz + 1) * sizeof(double));
    p->force = malloc((size_t)nq * sizeof(double));
    p->gam = malloc((size_t)(nc + 1) * sizeof(double));
    p->tmp = malloc((size_t)(nc + 1) * sizeof(double));
    if (!p->minv || !p->phiq || !p->force || !p->gam || !p->tmp) return LDSUN_NO_MEMORY;
    for (j = 0; j < nq; j++) {
        if (!(sys->mass[j] > 0)) return LDSUN_BAD_INPUT;
        p->minv[j] = 1.0 / sys->mass[j];
    }
    if (nc == 0) return LDSUN_OK;
    /* the pattern of S, column by column, from a dense marker per column (nc^2 bytes: the
     * models benchmarked have at most a few hundred rows) */
    mark = calloc((size_t)nc * (size_t)nc, 1);
    if (!mark) return LDSUN_NO_MEMORY;
    for (k = 0; k < nc; k++) mark[(size_t)k * nc + k] = 1;
    for (j = 0; j < nq; j++)
        for (a = cp[j]; a < cp[j + 1]; a++)
            for (b = cp[j]; b < cp[j + 1]; b++) mark[(size_t)ri[b] * nc + ri[a]] = 1;
    p->Sp = malloc((size_t)(nc + 1) * sizeof(int));
    if (!p->Sp) { free(mark); return LDSUN_NO_MEMORY; }
    for (nnz = 0, b = 0; b < nc; b++) {
        p->Sp[b] = nnz;
        for (a = 0; a < nc; a++) nnz += mark[(size_t)b * nc + a];
    }
    p->Sp[nc] = nnz;
    p->Si = malloc((size_t)nnz * sizeof(int));
    p->Sx = malloc((size_t)nnz * sizeof(double));
    if (!p->Si || !p->Sx) { free(mark); return LDSUN_NO_MEMORY; }
    for (k = 0, b = 0; b < nc; b++)
        for (a = 0; a < nc; a++)
            if (mark[(size_t)b * nc + a]) p->Si[k++] = a;
    free(mark);
    for (p->n_pairs = 0, j = 0; j < nq; j++) {
        int c = cp[j + 1] - cp[j];
        p->n_pairs += c * (c + 1) / 2;
    }
    p->pair_dst = malloc((size_t)(2 * p->n_pairs + 1) * sizeof(int));
    if (!p->pair_dst) return LDSUN_NO_MEMORY;
    for (k = 0, j = 0; j < nq; j++)
        for (a = cp[j]; a < cp[j + 1]; a++)
            for (b = cp[j]; b <= a; b++, k += 2) {
                int r = ri[a], c = ri[b], q;
                for (q = p->Sp[c]; p->Si[q] != r; q++) {}
                p->pair_dst[k] = q;
                for (q = p->Sp[r]; p->Si[q] != c; q++) {}
                p->pair_dst[k + 1] = r == c ? -1 : q;
            }
    p->P = malloc((size_t)nc * sizeof(int));
    p->Pinv = malloc((size_t)nc * sizeof(int));
    p->Lp = malloc((size_t)(nc + 1) * sizeof(int));
    p->Parent = malloc((size_t)nc * sizeof(int));
    p->Lnz = malloc((size_t)nc * sizeof(int));
    p->Flag = malloc((size_t)nc * sizeof(int));
    p->Pattern = malloc((size_t)nc * sizeof(int));
    p->D = malloc((size_t)nc * sizeof(double));
    p->Y = malloc((size_t)nc * sizeof(double));
    if (!p->P || !p->Pinv || !p->Lp || !p->Parent || !p->Lnz || !p->Flag || !p->Pattern ||
        !p->D || !p->Y)
        return LDSUN_NO_MEMORY;
    if (amd_order(nc, p->Sp, p->Si, p->P, NULL, NULL) < AMD_OK) return LDSUN_BAD_INPUT;
    ldl_symbolic(nc, p->Sp, p->Si, p->Lp, p->Parent, p->Lnz, p->Flag, p->P, p->Pinv);
    p->Li = malloc((size_t)(p->Lp[nc] + 1) * sizeof(int));
    p->Lx = malloc((size_t)(p->Lp[nc] + 1) * sizeof(double));
    return p->Li && p->Lx ? LDSUN_OK : LDSUN_NO_MEMORY;
}

/* f(t, y) of the index-1 form with Baumgarte stabilisation (see the top). */
static int index1_rhs(double t, N_Vector yv, N_Vector fv, void *user)
{
    problem *p = (problem *)user;
    const ld_system *s = p->sys;
    const double *y = N_VGetArrayPointer(yv), *q = y, *v = y + p->nq;
    double *f = N_VGetArrayPointer(fv), *a = f + p->nq, *lam = p->gam;
    int nq = p->nq, nc = p->nc, i, j, k, c;
    const int *cp = s->phiq_colptr, *ri = s->phiq_rowind;
    p->rhs_evaluations++;
    memcpy(f, v, (size_t)nq * sizeof(double));
    if (s->force(s->user, t, q, v, p->force) != LD_OK) goto fail;
    if (nc == 0) {
        for (j = 0; j < nq; j++) a[j] = p->force[j] * p->minv[j];
        return 0;
    }
    /* lam <- Phi_q M^-1 Q - [gamma - 2 alpha (Phi_q v + Phi_t) - beta^2 Phi] */
    if (s->phi_q(s->user, t, q, p->phiq) != LD_OK ||
        s->gamma(s->user, t, q, v, lam) != LD_OK)
        goto fail;
    if (p->alpha != 0.0 || p->beta != 0.0) {
        if (s->phi_t(s->user, t, q, p->tmp) != LD_OK) goto fail;
        for (j = 0; j < nq; j++)
            for (k = cp[j]; k < cp[j + 1]; k++) p->tmp[ri[k]] += p->phiq[k] * v[j];
        for (i = 0; i < nc; i++) lam[i] -= 2.0 * p->alpha * p->tmp[i];
        if (s->phi(s->user, t, q, p->tmp) != LD_OK) goto fail;
        for (i = 0; i < nc; i++) lam[i] -= p->beta * p->beta * p->tmp[i];
    }
    for (i = 0; i < nc; i++) lam[i] = -lam[i];
    for (j = 0; j < nq; j++)
        for (k = cp[j]; k < cp[j + 1]; k++) lam[ri[k]] += p->phiq[k] * p->force[j] * p->minv[j];
    /* S's values, its factors, and lam = S^-1 (...) */
    memset(p->Sx, 0, (size_t)p->Sp[nc] * sizeof(double));
    for (c = 0, j = 0; j < nq; j++)
        for (k = cp[j]; k < cp[j + 1]; k++)
            for (i = cp[j]; i <= k; i++, c += 2) {
                double x = p->phiq[k] * p->phiq[i] * p->minv[j];
                p->Sx[p->pair_dst[c]] += x;
                if (p->pair_dst[c + 1] >= 0) p->Sx[p->pair_dst[c + 1]] += x;
            }
    if (ldl_numeric(nc, p->Sp, p->Si, p->Sx, p->Lp, p->Parent, p->Lnz, p->Li, p->Lx, p->D,
                    p->Y, p->Pattern, p->Flag, p->P, p->Pinv) != nc) {
        p->status = LDSUN_SINGULAR;
        return -1;
    }
    ldl_perm(nc, p->Y, lam, p->P);
    ldl_lsolve(nc, p->Y, p->Lp, p->Li, p->Lx);
    ldl_dsolve(nc, p->Y, p->D);
    ldl_ltsolve(nc, p->Y, p->Lp, p->Li, p->Lx);
    ldl_permt(nc, lam, p->Y, p->P);
    /* a = M^-1 (Q - Phi_q^T lam) */
    for (j = 0; j < nq; j++) {
        double acc = p->force[j];
        for (k = cp[j]; k < cp[j + 1]; k++) acc -= p->phiq[k] * lam[ri[k]];
        a[j] = acc * p->minv[j];
    }
    for (j = 0; j < 2 * nq; j++)
        if (!isfinite(f[j])) return 1;      /* recoverable: a shorter step */
    return 0;
fail:
    p->status = LDSUN_BAD_INPUT;
    return -1;
}

/* SUNDIALS' messages (warnings of steps at round-off, failures) stay quiet: the caller
 * reports the status. */
static void quiet(int error_code, const char *module, const char *function, char *msg,
                  void *user)
{
    (void)error_code; (void)module; (void)function; (void)msg; (void)user;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
 * Integrate ``sys`` from tout[0] (state q0, v0: consistent) through tout[1..nout-1] with
 * ``method`` (LDSUN_ERK or LDSUN_ADAMS) at rtol, atol, Baumgarte alpha, beta, in at most
 * max_steps steps. Writes q at every output time into qout (nout x nq, row-major; the rows
 * reached), the seconds of the integration loop (the solver's creation not included) and
 * counters[0..2] = steps, right-hand sides, rows written. Returns 0, or the SUNDIALS flag /
 * LDSUN_* code of the failure (LDSUN_BUDGET: max_steps spent; the rows before a failure
 * are kept).
 */
int ldsun_run(const ld_system *sys, int method, double rtol, double atol, double alpha,
              double beta, long max_steps, int nout, const double *tout, const double *q0,
              const double *v0, double *qout, double *seconds, long *counters)
{
    problem p;
    SUNContext ctx = NULL;
    N_Vector y = NULL;
    SUNNonlinearSolver nls = NULL;
    void *mem = NULL;
    double t, start;
    int k, flag, nq = sys ? sys->nq : 0;
    long steps = 0;
    counters[0] = counters[1] = counters[2] = 0;
    *seconds = 0.0;
    if (!sys || nq <= 0 || nout < 1 || (method != LDSUN_ERK && method != LDSUN_ADAMS))
        return LDSUN_BAD_INPUT;
    flag = problem_init(&p, sys, alpha, beta);
    if (flag == LDSUN_OK) flag = SUNContext_Create(NULL, &ctx);
    if (flag == LDSUN_OK && !(y = N_VNew_Serial(2 * nq, ctx))) flag = LDSUN_NO_MEMORY;
    if (flag != LDSUN_OK) goto done;
    memcpy(N_VGetArrayPointer(y), q0, (size_t)nq * sizeof(double));
    memcpy(N_VGetArrayPointer(y) + nq, v0, (size_t)nq * sizeof(double));
    memcpy(qout, q0, (size_t)nq * sizeof(double));
    counters[2] = 1;
    if (method == LDSUN_ERK) {
        if (!(mem = ERKStepCreate(index1_rhs, tout[0], y, ctx))) { flag = LDSUN_NO_MEMORY; goto done; }
        if ((flag = ERKStepSetTableNum(mem, ARKODE_FEHLBERG_13_7_8)) ||
            (flag = ERKStepSStolerances(mem, rtol, atol)) ||
            (flag = ERKStepSetUserData(mem, &p)) ||
            (flag = ERKStepSetMaxNumSteps(mem, max_steps)) ||
            (flag = ERKStepSetMaxHnilWarns(mem, -1)) ||
            (flag = ERKStepSetErrHandlerFn(mem, quiet, NULL)))
            goto done;
    } else {
        if (!(mem = CVodeCreate(CV_ADAMS, ctx))) { flag = LDSUN_NO_MEMORY; goto done; }
        if ((flag = CVodeInit(mem, index1_rhs, tout[0], y)) ||
            (flag = CVodeSStolerances(mem, rtol, atol)) ||
            (flag = CVodeSetUserData(mem, &p)) ||
            (flag = CVodeSetMaxNumSteps(mem, max_steps)) ||
            (flag = CVodeSetMaxHnilWarns(mem, -1)) ||
            (flag = CVodeSetErrHandlerFn(mem, quiet, NULL)))
            goto done;
        if (!(nls = SUNNonlinSol_FixedPoint(y, 0, ctx))) { flag = LDSUN_NO_MEMORY; goto done; }
        if ((flag = CVodeSetNonlinearSolver(mem, nls))) goto done;
    }
    start = now();
    for (k = 1; k < nout; k++) {
        flag = method == LDSUN_ERK ? ERKStepEvolve(mem, tout[k], y, &t, ARK_NORMAL)
                                   : CVode(mem, tout[k], y, &t, CV_NORMAL);
        if (flag < 0) break;
        memcpy(qout + (size_t)k * nq, N_VGetArrayPointer(y), (size_t)nq * sizeof(double));
        counters[2] = k + 1;
        if (method == LDSUN_ERK) ERKStepGetNumSteps(mem, &steps);
        else CVodeGetNumSteps(mem, &steps);
        if (steps >= max_steps && k + 1 < nout) {
            flag = LDSUN_BUDGET;
            break;
        }
    }
    *seconds = now() - start;
    if (flag > 0) flag = 0;
    if (flag == ARK_TOO_MUCH_WORK) flag = LDSUN_BUDGET;     /* CV_TOO_MUCH_WORK alike (-1) */
    if (flag < 0 && flag != LDSUN_BUDGET && p.status != LDSUN_OK) flag = p.status;
    if (method == LDSUN_ERK) ERKStepGetNumSteps(mem, &steps);
    else CVodeGetNumSteps(mem, &steps);
    counters[0] = steps;
    counters[1] = p.rhs_evaluations;
done:
    if (method == LDSUN_ERK && mem) ERKStepFree(&mem);
    if (method == LDSUN_ADAMS && mem) CVodeFree(&mem);
    if (nls) SUNNonlinSolFree(nls);
    if (y) N_VDestroy(y);
    if (ctx) SUNContext_Free(&ctx);
    problem_free(&p);
    return flag;
}
