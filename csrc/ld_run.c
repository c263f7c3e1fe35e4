/*
 * ld_run.c -- the run driver of the integrator: the public API of ld_bdf.h (named after
 * its first method, the BDF). It creates the workspace, starts and restarts a run, keeps
 * the method in force (method auto: the explicit method, the BDF where it is stiff, cost
 * trials between them), writes output rows, locates events and stops where asked. The
 * methods are ld_bdf.c and ld_rk.c; the linear algebra is ld_linear.c (see ld_work.h).
 *
 * Output rows. Each is the current method's interpolant at the output time. The BDF's
 * index-3 solution meets the velocity constraints only to O(tol / h), and its multipliers
 * carry the Newton residue divided by c^2. With project_output set, each output row is made
 * consistent with K = [M Phi_q^T; Phi_q 0] factorised at the output position (a second KLU
 * numeric object, refactored per output): the velocity is projected onto
 * Phi_q v + Phi_t = 0 (mass-weighted) and the multipliers are solved from the index-1
 * equations K (a, lam) = (Q, gamma); the explicit method projects its rows with its Schur
 * complement instead (ld_rk.c). The largest velocity violation before projection is kept in
 * the statistics, and so is each row's constraint residual (track_output_phi).
 *
 * Events. After each accepted step the event functions are evaluated at the new state; a
 * change of sign from the last accepted state (in a direction the function asks for) is
 * located on the step's interpolant by the Illinois variant of regula falsi (as IDA does),
 * to event_tol, on the earliest crossing of all functions. The located time is the right end
 * of the final bracket, so the functions that fired have already changed sign there and do
 * not fire again at the restart. Output rows up to the event are written; the state is moved
 * to the event (the interpolant's (q, v, lam) there) and the integration restarts from it at
 * the next call (order 1, consistent accelerations), since the model's mode may change.
 * A crossing seen on the new state is confirmed on its consistent state (the velocity
 * projected and the multipliers solved from the index-1 equations, as for output rows), and
 * the locator's trial states are made consistent alike: the BDF's own multipliers carry the
 * Newton residue divided by c^2, and a friction limit tested on them fired false slip events
 */
#include "ld_bdf_method.h"
#include "ld_linear.h"
#include "ld_rk.h"
#include "ld_sens.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TRIAL_WAIT 256          /* BDF steps before the explicit method is tried (doubling
                                   after each trial the BDF wins; see "Cost trials") */
#define LONG_STRETCH 4096       /* explicit step attempts in a stretch that ask for a trial
                                   of the BDF whatever their stiffness test says (doubling
                                   after each trial the explicit method wins; see "Cost
                                   trials") */
#define TRIAL_WARMUP 20         /* steps of the tried method before its rate is measured */
#define TRIAL_SPAN 30           /* steps over which it is measured */
#define TRIAL_MARGIN 1.25       /* how much faster the tried method must be to be kept */
#define AUTO_BDF_SHARE 0.01     /* local tolerances of the BDF that a trial brought in, as a
                                   share of its own (see "Cost trials") */
#define EVENT_SAMPLES 4         /* explicit steps: event functions at 3 interior points too */

void ld_bdf_default_options(ld_bdf_options *o)
{
    o->rtol = 1e-6;
    o->atol = 1e-6;
    o->h_init = 0.0;
    o->h_min = 0.0;
    o->h_max = 0.0;
    o->max_order = LD_BDF_MAX_ORDER;
    o->max_steps = 0;
    o->newton_max_iter = 4;
    o->newton_tol = 0.0;
    o->project_output = 1;
    o->proportional = 1;
    o->interrupt = NULL;
    o->event_tol = 0.0;
    o->regularization = 0.0;
    o->output_regularization = 0.0;
    o->stop_when_full = 0;
    o->clock = NULL;
    o->method = LD_METHOD_BDF;
    o->column_ordering = 0;
    o->cost_trials = 1;
    o->sensitivities = NULL;
}

int ld_bdf_create(const ld_system *sys, const ld_bdf_options *opt, ld_bdf **out)
{
    ld_bdf *w;
    int st;
    size_t n;
    *out = NULL;
    if (!sys || !opt || sys->nq <= 0 || sys->nc < 0 || sys->nz < 0 ||
        (sys->nz > 0 && !sys->aux_rate) || !(opt->rtol > 0) || !(opt->atol > 0) ||
        opt->max_order < 1 || opt->max_order > LD_BDF_MAX_ORDER || opt->newton_max_iter < 1 ||
        opt->h_init < 0 || opt->h_min < 0 || opt->h_max < 0 || opt->newton_tol < 0 ||
        !(opt->event_tol >= 0) || !(opt->regularization >= 0) ||
        !(opt->output_regularization >= 0) || sys->nev < 0 || (sys->nev > 0 && !sys->events) ||
        opt->method < LD_METHOD_BDF || opt->method > LD_METHOD_AUTO ||
        (opt->sensitivities && !ld__sens_valid(sys, opt)))
        return LD_BDF_BAD_INPUT;
    w = (ld_bdf *)calloc(1, sizeof(ld_bdf));
    if (!w) return LD_BDF_NO_MEMORY;
    w->sys = sys;
    w->opt = *opt;
    w->stats.max_output_row = -1;
    w->nq = sys->nq;
    w->nc = sys->nc;
    w->nz = sys->nz > 0 ? sys->nz : 0;
    w->zoff = 2 * sys->nq + sys->nc;
    w->soff = w->zoff + w->nz;
    w->np = opt->sensitivities ? opt->sensitivities->np : 0;
    w->sens_errcon = w->np && opt->sensitivities->scale != NULL;
    w->n = w->soff + 2 * w->nq * w->np;
    w->ng = sys->nq + sys->nc;
    n = (size_t)w->n;
    w->D = (double *)calloc(LD__NROWS * n, sizeof(double));
    w->Dtmp = (double *)calloc((LD_BDF_MAX_ORDER + 1) * n, sizeof(double));
    w->y_pred = (double *)calloc(n, sizeof(double));
    w->psi = (double *)calloc(n, sizeof(double));
    w->d = (double *)calloc(n, sizeof(double));
    w->y = (double *)calloc(n, sizeof(double));
    w->scale = (double *)calloc(n, sizeof(double));
    w->res = (double *)calloc((size_t)w->ng, sizeof(double));
    w->phi = (double *)calloc((size_t)(w->nc > 0 ? w->nc : 1), sizeof(double));
    w->lam_scaled = (double *)calloc((size_t)(w->nc > 0 ? w->nc : 1), sizeof(double));
    w->phiq = (double *)calloc((size_t)(sys->phiq_nnz > 0 ? sys->phiq_nnz : 1), sizeof(double));
    w->phiq_out = (double *)calloc((size_t)(sys->phiq_nnz > 0 ? sys->phiq_nnz : 1),
                                   sizeof(double));
    w->row_sums = (double *)calloc((size_t)(w->nc > 0 ? 2 * w->nc : 1), sizeof(double));
    w->fq = (double *)calloc((size_t)(sys->fq_nnz > 0 ? sys->fq_nnz : 1), sizeof(double));
    w->fv = (double *)calloc((size_t)(sys->fv_nnz > 0 ? sys->fv_nnz : 1), sizeof(double));
    w->hess = (double *)calloc((size_t)(sys->hess_nnz > 0 ? sys->hess_nnz : 1), sizeof(double));
    w->force = (double *)calloc((size_t)w->nq, sizeof(double));
    w->nev = sys->nev;
    w->g_old = (double *)calloc((size_t)(4 * w->nev + 1), sizeof(double));
    w->g_new = w->g_old + w->nev;
    w->g_mid = w->g_new + w->nev;
    w->g_end = w->g_mid + w->nev;
    w->y_ev = (double *)calloc(n, sizeof(double));
    w->fired = (int *)calloc((size_t)(w->nev + 1), sizeof(int));
    if (!w->D || !w->Dtmp || !w->y_pred || !w->psi || !w->d || !w->y || !w->scale || !w->res ||
        !w->phi || !w->lam_scaled || !w->phiq || !w->phiq_out || !w->row_sums || !w->fq ||
        !w->fv || !w->hess || !w->force ||
        !w->g_old || !w->y_ev || !w->fired) {
        ld_bdf_free(w);
        return LD_BDF_NO_MEMORY;
    }
    w->map_D_wanted = sys->row_active != NULL || opt->regularization > 0;
    w->out_reg = opt->output_regularization > 0 ? opt->output_regularization
                                                 : opt->regularization;
    w->rdiag = (double *)calloc((size_t)(w->nc > 0 ? w->nc : 1), sizeof(double));
    if (!w->rdiag) { ld_bdf_free(w); return LD_BDF_NO_MEMORY; }
    st = ld__kkt_create(w);
    if (st == LD_BDF_SUCCESS && w->np) st = ld__sens_create(w);
    if (st == LD_BDF_SUCCESS && opt->method != LD_METHOD_BDF) st = ld__rk_create(w);
    if (st != LD_BDF_SUCCESS) { ld_bdf_free(w); return st; }

    ld__bdf_setup(w);
    w->fail_index = -1;
    *out = w;
    return LD_BDF_SUCCESS;
}

void ld_bdf_free(ld_bdf *w)
{
    if (!w) return;
    ld__rk_free(w);
    free(w->sens_work);
    ld__kkt_free(w);
    free(w->D); free(w->Dtmp); free(w->y_pred); free(w->psi); free(w->d); free(w->y);
    free(w->scale); free(w->rdiag); free(w->res); free(w->phi); free(w->lam_scaled);
    free(w->phiq); free(w->phiq_out); free(w->row_sums);
    free(w->fq); free(w->fv); free(w->hess); free(w->force);
    free(w->g_old); free(w->y_ev); free(w->fired);
    free(w);
}

const ld_bdf_stats *ld_bdf_get_stats(const ld_bdf *w) { return &w->stats; }

double ld_bdf_get_time(const ld_bdf *w) { return w->t; }

int ld_bdf_get_size(const ld_bdf *w) { return w->n; }

void ld_bdf_get_state(const ld_bdf *w, double *y)
{
    memcpy(y, w->D, (size_t)w->n * sizeof(double));
}

void ld_bdf_get_failure(const ld_bdf *w, double *t, double *h, int *index)
{
    *t = w->fail_t; *h = w->fail_h; *index = w->fail_index;
}

double ld_bdf_get_event(const ld_bdf *w, int *fired)
{
    if (fired) memcpy(fired, w->fired, (size_t)w->nev * sizeof(int));
    return w->t_event;
}

/* The end of a start: the accepted initial state and its event values. */
static int started(ld_bdf *w, double t0, const double *q0, const double *v0)
{
    const ld_system *s = w->sys;
    if (s->accept && s->accept(s->user, t0, q0, v0) != LD_OK) return LD_BDF_CALLBACK;
    if (w->nev && s->events(s->user, t0, q0, v0, w->D + 2 * w->nq, w->g_old) != LD_OK)
        return LD_BDF_CALLBACK;
    w->restart_pending = 0;
    w->tail_pending = 0;
    w->switch_pending = 0;
    w->ring_n = w->ring_pos = 0;
    w->stretch_steps = w->stretch_tries = 0;
    w->initialised = 1;
    return LD_BDF_SUCCESS;
}

/* Whether a start uses the explicit method: method rk, and method auto unless redundant
 * constraints are allowed (regularisation): the explicit method's accelerations would carry
 * the regularisation's bias, which the BDF's corrector does not (ld_bdf.c, "Redundant
 * constraints"). */
static int explicit_first(const ld_bdf *w)
{
    if (w->opt.method == LD_METHOD_RK) return 1;
    return w->opt.method == LD_METHOD_AUTO && !(w->opt.regularization > 0);
}

/* Start (or restart) the integration at t0 from (q0, v0, z0): consistent accelerations and
 * multipliers, order 1, a first step from the acceleration. q0, v0, z0 must not point into
 * the history D. */
static int start(ld_bdf *w, double t0, const double *q0, const double *v0, const double *z0)
{
    int nq = w->nq, st;
    memset(w->D, 0, (size_t)LD__NROWS * (size_t)w->n * sizeof(double));
    memcpy(w->D, q0, (size_t)nq * sizeof(double));
    memcpy(w->D + nq, v0, (size_t)nq * sizeof(double));
    if (w->nz && z0) memcpy(w->D + w->zoff, z0, (size_t)w->nz * sizeof(double));
    w->t = t0;
    w->refresh_next = 0;
    w->fail_t = t0;
    w->fail_h = 0.0;

    if (ld__eval_phi_q(w, t0, q0) != LD_OK) return LD_BDF_CALLBACK;
    ld__set_regularization(w);
    if (w->use_rk) {
        /* The explicit method solves its first stage (accelerations, multipliers) itself.
         * Where it cannot (Phi_q singular there) or should not (S too ill-conditioned for
         * the tolerance, LD__UNSUITED), auto starts the BDF instead, at AUTO_BDF_SHARE of
         * its tolerances, as a cost trial brings it in (see "Cost trials"): the run keeps
         * the accuracy the explicit method would give it (IFToMM A05 at rtol 1e-9 was 4.7
         * times less accurate than at 1e-8, where a trial brought the BDF in). */
        st = ld__rk_start(w);
        if (st == LD_BDF_SUCCESS) return started(w, t0, q0, v0);
        if (st == LD_BDF_CALLBACK || st == LD_BDF_NO_MEMORY || w->opt.method != LD_METHOD_AUTO)
            return st;
        w->use_rk = 0;
        w->rk_refused = 1;
        w->stats.switches_to_bdf++;
        ld__bdf_share_tolerances(w, AUTO_BDF_SHARE);
        if (ld__eval_phi_q(w, t0, q0) != LD_OK) return LD_BDF_CALLBACK;
    }

    if ((st = ld__bdf_start(w, t0, q0, v0)) != LD_BDF_SUCCESS) return st;
    return started(w, t0, q0, v0);
}

int ld_bdf_init(ld_bdf *w, double t0, const double *q0, const double *v0, const double *z0)
{
    int i, nq = w->nq;
    double nrm = 0.0;
    w->initialised = 0;
    if (!isfinite(t0) || !ld__all_finite(q0, nq) || !ld__all_finite(v0, nq) ||
        (z0 && !ld__all_finite(z0, w->nz)))
        return LD_BDF_BAD_INPUT;
    for (i = 0; i < nq; i++) nrm = fmax(nrm, fabs(q0[i]));
    ld__bdf_set_tolerances(w, nrm);
    ld__rk_set_tolerances(w, nrm);
    w->use_rk = explicit_first(w);
    w->trial_wait[0] = TRIAL_WAIT;
    w->trial_wait[1] = LD__TRIAL_RING;
    w->long_wait = LONG_STRETCH;
    w->trial_steps = 0;
    w->rk_refused = 0;
    w->h = 0.0;                 /* no step to go on from (a restart's first step, ld_rk.c) */
    return start(w, t0, q0, v0, z0);
}

int ld_bdf_restart(ld_bdf *w)
{
    return ld_bdf_restart_at(w, NULL, NULL);
}

int ld_bdf_restart_at(ld_bdf *w, const double *q, const double *v)
{
    int nq = w->nq, st;
    if (!w->initialised) return LD_BDF_BAD_INPUT;
    if ((q && !ld__all_finite(q, nq)) || (v && !ld__all_finite(v, nq))) return LD_BDF_BAD_INPUT;
    /* A moved state would make the sensitivities jump (ld_sens.c). */
    if (w->np && (q || v)) return LD_BDF_BAD_INPUT;
    w->initialised = 0;
    w->stats.restarts++;
    w->trial_steps = 0;         /* a trial under way ends without a verdict */
    ld__bdf_share_tolerances(w, 1.0);
    memcpy(w->y, w->D, (size_t)w->n * sizeof(double));
    if (q) memcpy(w->y, q, (size_t)nq * sizeof(double));
    if (v) memcpy(w->y + nq, v, (size_t)nq * sizeof(double));
    /* With method auto every restart (an event, a new mode) tries the explicit method. */
    if (explicit_first(w) && !w->use_rk) {
        w->use_rk = 1;
        w->stats.switches_to_rk++;
    }
    st = start(w, w->t, w->y, w->y + nq, w->y + w->zoff);
    /* The sensitivities go on from the restart's state (its history anew, as the state's). */
    if (st == LD_BDF_SUCCESS && w->np) st = ld_bdf_init_sensitivities(w, w->y + w->soff);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * Cost trials (method auto, options.cost_trials)
 *
 * Stiffness is not always plain to the explicit method's test: IFToMM A05's dampers keep
 * its steps at some 5/6 of its stability limit, and a flexible arm's at a fifth to a half
 * of it, yet the BDF is 40 and 3 times cheaper there. So method auto measures. A method's
 * rate is the time it advanced per unit of work over its last LD__TRIAL_RING accepted
 * steps; a unit is a right-hand side of the explicit method, a Newton iteration of the BDF,
 * or half a BDF factorisation (measured on models of 8 to 4,000 coordinates, each costs the
 * same within some 40%). The explicit method asks for a trial of the BDF when its steps
 * have come near its stability limit (ld__rk_near_stiff: h |lambda| beyond a sixth of it);
 * the BDF, after TRIAL_WAIT steps, for a trial of the explicit method. The tried method
 * starts from the current state. After TRIAL_WARMUP steps (the BDF starts at order 1 with
 * a short step: its order and step settle) its rate over TRIAL_SPAN more steps is compared
 * with the first method's: the tried method runs on when it is TRIAL_MARGIN times faster;
 * else the first method takes over again from there and waits twice as long before the
 * next trial. Near-stiff steps call for the BDF, and so does a stretch of LONG_STRETCH
 * explicit step attempts, accepted or not (doubling after each such trial the explicit
 * method wins): a stiff spring whose fast oscillation is excited by a few 1e-13 rad keeps
 * the explicit steps at the accuracy that oscillation asks for, well inside the stability
 * limit (a flexible arm with joints of 1e14 N m/rad: h |lambda| 0.02 to 0.7, 2e-9 s steps,
 * five million of them for 0.01 s), where the BDF, which damps it, takes 39 steps; Jansen's
 * 10 s benchmark takes 1,796 explicit steps at rtol 1e-10 and meets no such trial. At a
 * given tolerance the BDF's global error is 25 to 500 times the explicit method's (Jansen,
 * IFToMM A01 and A02;
 * tests/test_accuracy.py), so the BDF that a trial brings in runs at AUTO_BDF_SHARE of its
 * local tolerances (not below the round-off floor): a run keeps the accuracy the explicit
 * method would give it, whichever method ends up running (and so does a BDF started in
 * place of an explicit method that refuses, see start). A switch for stiffness proper
 * (ld_rk.c) and a restart bring back the BDF's own tolerances. Work is counted, not timed,
 * so a run takes the same steps on every machine. A restart (an event) ends a trial without a
 * verdict and returns to the explicit method, as before. No trial goes back to an explicit
 * method that refused to start in this run (S too ill-conditioned for the tolerance).
 * ------------------------------------------------------------------------------------------ */

long ld_bdf_work_units(const ld_bdf *w)
{
    return w->stats.rhs_evaluations + w->stats.newton_iterations + 2 * w->stats.factorizations;
}

/* After an accepted step: its time and the work so far into the ring. */
static void note_step(ld_bdf *w)
{
    w->ring_t[w->ring_pos] = w->t;
    w->ring_work[w->ring_pos] = ld_bdf_work_units(w);
    w->ring_pos = (w->ring_pos + 1) % LD__TRIAL_RING;
    if (w->ring_n < LD__TRIAL_RING) w->ring_n++;
    w->stretch_steps++;
    if (w->trial_steps > 0) w->trial_steps++;
}

/* Time advanced per unit of work over the ring (which must be full). */
static double ring_rate(const ld_bdf *w)
{
    int oldest = w->ring_pos, newest = (w->ring_pos + LD__TRIAL_RING - 1) % LD__TRIAL_RING;
    long work = w->ring_work[newest] - w->ring_work[oldest];
    return (w->ring_t[newest] - w->ring_t[oldest]) / (double)(work > 0 ? work : 1);
}

/* (Method auto) continue from the current state, the last accepted one made consistent by
 * the start, with the explicit method (to_rk) or the BDF: stiffness, a failure of the
 * explicit method, or a cost trial. The start falls back to the BDF where the explicit
 * method cannot start (S too ill-conditioned for the tolerance). */
static int switch_method(ld_bdf *w, int to_rk, double share)
{
    ld__bdf_share_tolerances(w, share);
    w->use_rk = to_rk;
    if (to_rk) w->stats.switches_to_rk++;
    else w->stats.switches_to_bdf++;
    memcpy(w->y, w->D, (size_t)w->n * sizeof(double));
    return start(w, w->t, w->y, w->y + w->nq, w->y + w->zoff);
}

/* Before a step: start, measure or decide a trial (see above). */
static int cost_trial(ld_bdf *w)
{
    int st, from_rk;
    long work;
    if (w->trial_steps == 0) {
        if (w->ring_n < LD__TRIAL_RING || w->stretch_steps < w->trial_wait[w->use_rk] ||
            (w->use_rk && !ld__rk_near_stiff(w) && w->stretch_tries < w->long_wait))
            return LD_BDF_SUCCESS;
        if (!w->use_rk && (!explicit_first(w) || w->rk_refused)) return LD_BDF_SUCCESS;
        w->trial_from_rk = w->use_rk;
        w->trial_long = w->use_rk && !ld__rk_near_stiff(w);
        w->trial_rate_from = ring_rate(w);
        w->stats.cost_trials++;
        if ((st = switch_method(w, !w->use_rk, AUTO_BDF_SHARE)) != LD_BDF_SUCCESS) return st;
        /* (the explicit method may refuse to start: the BDF went on, and stays) */
        w->trial_steps = w->use_rk != w->trial_from_rk;
        return LD_BDF_SUCCESS;
    }
    if (w->trial_steps == TRIAL_WARMUP + 1) {
        w->trial_t0 = w->t;
        w->trial_work0 = ld_bdf_work_units(w);
        return LD_BDF_SUCCESS;
    }
    if (w->trial_steps < TRIAL_WARMUP + TRIAL_SPAN + 1) return LD_BDF_SUCCESS;
    from_rk = w->trial_from_rk;
    w->trial_steps = 0;
    work = ld_bdf_work_units(w) - w->trial_work0;
    if ((w->t - w->trial_t0) / (double)(work > 0 ? work : 1) > TRIAL_MARGIN * w->trial_rate_from) {
        w->stats.trials_kept++;
        w->trial_wait[from_rk] = from_rk ? LD__TRIAL_RING : TRIAL_WAIT;
        return LD_BDF_SUCCESS;
    }
    w->trial_wait[from_rk] *= 2;
    if (w->trial_long) w->long_wait *= 2;
    return switch_method(w, from_rk, AUTO_BDF_SHARE);
}

/* Make an output row y = (q, v, lam) consistent: with K = [M Phi_q^T; Phi_q 0] at q, the
 * velocity is projected onto Phi_q v + Phi_t = 0 (mass-weighted, one solve: the constraint is
 * linear in v), and the multipliers are solved from the index-1 equations
 * K (a, lam) = (Q, gamma) at the projected state. The BDF's own multipliers carry the
 * Newton residue divided by c^2; these carry only the error of (q, v). */
static int consistent_output(ld_bdf *w, double t, double *y)
{
    const ld_system *s = w->sys;
    int i, j, p, st, nq = w->nq, nc = w->nc;
    double *q = y, *v = y + nq, *rhs = w->res, rn = 0.0;
    if (w->use_rk) {
        /* The explicit method's Schur complement; the KKT matrix where S is singular. */
        st = ld__rk_consistent(w, t, y);
        if (st != LD_BDF_SINGULAR) return st;
    }
    if (ld__eval_phi_q(w, t, q) != LD_OK || s->phi_t(s->user, t, q, w->phi) != LD_OK)
        return LD_BDF_CALLBACK;
    ld__zero_inactive(w, w->phi);
    ld__assemble_K(w, w->out_reg);
    if (!ld__all_finite(w->Gx, w->g_nnz)) return LD_BDF_NONFINITE;
    if ((st = ld__factor_output(w)) != LD_BDF_SUCCESS) return st;
    /* Velocity: K (dv, mu) = (0, -(Phi_q v + Phi_t)). */
    for (i = 0; i < nc; i++) rhs[nq + i] = w->phi[i];
    for (j = 0; j < nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++)
            rhs[nq + s->phiq_rowind[p]] += w->phiq[p] * v[j];
    for (i = 0; i < nc; i++) { rn += rhs[nq + i] * rhs[nq + i]; rhs[nq + i] = -rhs[nq + i]; }
    if (sqrt(rn) > w->stats.max_output_velocity_violation)
        w->stats.max_output_velocity_violation = sqrt(rn);
    for (i = 0; i < nq; i++) rhs[i] = 0.0;
    if (ld__solve_output(w, rhs) != LD_BDF_SUCCESS) return LD_BDF_LINEAR_SOLVER;
    for (i = 0; i < nq; i++) v[i] += rhs[i];
    /* Multipliers: K (a, lam) = (Q, gamma). */
    if (s->force(s->user, t, q, v, rhs) != LD_OK || s->gamma(s->user, t, q, v, rhs + nq) != LD_OK)
        return LD_BDF_CALLBACK;
    ld__zero_inactive(w, rhs + nq);
    if (ld__solve_output(w, rhs) != LD_BDF_SUCCESS) return LD_BDF_LINEAR_SOLVER;
    memcpy(y + 2 * nq, rhs + nq, (size_t)nc * sizeof(double));
    return ld__all_finite(y, w->n) ? LD_BDF_SUCCESS : LD_BDF_NONFINITE;
}

/* The constraint residual of an output row, kept as the largest over the run (max-norm;
 * NaN counts as the largest): what the caller checks the run's promise against. Also each
 * row against its own terms: |Phi_i| / (atol sum_j |Phi_q,ij| + rtol sum_j |Phi_q,ij q_j|),
 * the violation that errors of atol + rtol |q_j| in the coordinates would make. The norm
 * alone scales with the largest coordinate and excused a unit vector's row, which is of
 * order 1 wherever the body is (a body 1e16 m out ended with |u|^2 - 1 = 2.4). Uses the
 * scratch row w->phi (free outside consistent_output), w->row_sums, and Phi_q at the row:
 * w->phiq where the row was just made consistent (consistent_output evaluates it there,
 * inactive rows zeroed), else evaluated into w->phiq_out. */
static int track_output_phi(ld_bdf *w, double t, const double *y, int projected)
{
    const ld_system *s = w->sys;
    int i, j, p;
    double worst = 0.0, ratio = 0.0, *sums = w->row_sums;
    const double *J = w->phiq;
    long row = -1;
    if (w->nc == 0) return LD_BDF_SUCCESS;
    if (s->phi(s->user, t, y, w->phi) != LD_OK) return LD_BDF_CALLBACK;
    ld__zero_inactive(w, w->phi);
    for (i = 0; i < w->nc; i++) {
        double a = fabs(w->phi[i]);
        if (!(a <= worst)) worst = a;
    }
    if (!(worst <= w->stats.max_output_phi)) {
        w->stats.max_output_phi = worst;
        w->stats.max_output_phi_t = t;
    }
    /* Each row's scale: sums[i] = sum_j |Phi_q,ij|, sums[nc + i] = sum_j |Phi_q,ij q_j|. */
    if (!projected) {
        if (s->phi_q(s->user, t, y, w->phiq_out) != LD_OK) return LD_BDF_CALLBACK;
        J = w->phiq_out;
    }
    memset(sums, 0, (size_t)(2 * w->nc) * sizeof(double));
    for (j = 0; j < w->nq; j++)
        for (p = s->phiq_colptr[j]; p < s->phiq_colptr[j + 1]; p++) {
            double a = fabs(J[p]);
            sums[s->phiq_rowind[p]] += a;
            sums[w->nc + s->phiq_rowind[p]] += a * fabs(y[j]);
        }
    for (i = 0; i < w->nc; i++) {
        double den = w->opt.atol * sums[i] + w->opt.rtol * sums[w->nc + i], r;
        if (w->phi[i] == 0.0) continue;
        r = fabs(w->phi[i]) / (den > 0.0 ? den : DBL_MIN);
        if (!(r <= ratio)) { ratio = r; row = i; }
    }
    if (row >= 0 && !(ratio <= w->stats.max_output_row_ratio)) {
        w->stats.max_output_row_ratio = ratio;
        w->stats.max_output_row_ratio_t = t;
        w->stats.max_output_row = row;
    }
    return LD_BDF_SUCCESS;
}

/* The current step's interpolant at t_eval (the explicit method's, or the BDF polynomial). */
static int dense_output(ld_bdf *w, double t_eval, double *out)
{
    if (w->use_rk) return ld__rk_dense(w, t_eval, out);
    ld__bdf_dense(w, t_eval, out);
    return LD_BDF_SUCCESS;
}

/* Sign change of event k from a to b that the function asks for: +1 rising, -1 falling. */
static int crossing(const ld_bdf *w, int k, double a, double b)
{
    int dir = w->sys->event_direction ? w->sys->event_direction[k] : 0;
    if (a < 0 && b > 0 && dir >= 0) return 1;
    if (a > 0 && b < 0 && dir <= 0) return -1;
    return 0;
}

static int events_at(ld_bdf *w, double t, const double *y, double *g)
{
    const ld_system *s = w->sys;
    return s->events(s->user, t, y, y + w->nq, y + 2 * w->nq, g) == LD_OK ? LD_BDF_SUCCESS
                                                                           : LD_BDF_CALLBACK;
}

/* y_ev <- y, or the current step's interpolant at t when y is NULL. */
static int event_state(ld_bdf *w, double t, const double *y)
{
    if (!y) return dense_output(w, t, w->y_ev);
    memcpy(w->y_ev, y, (size_t)w->n * sizeof(double));
    return LD_BDF_SUCCESS;
}

/* The event functions at the consistent state of y (NULL: the interpolant at t), made in
 * y_ev: velocity projected, multipliers from the index-1 equations (see consistent_output).
 * Where that state cannot be formed (K singular), the raw state's values: y_ev is made
 * afresh, since consistent_output may have changed part of it before it failed. */
static int events_consistent(ld_bdf *w, double t, const double *y, double *g)
{
    double worst = w->stats.max_output_velocity_violation;   /* not an output row */
    int st;
    if ((st = event_state(w, t, y)) != LD_BDF_SUCCESS) return st;
    st = consistent_output(w, t, w->y_ev);
    w->stats.max_output_velocity_violation = worst;
    if (st == LD_BDF_CALLBACK) return st;
    if (st != LD_BDF_SUCCESS && (st = event_state(w, t, y)) != LD_BDF_SUCCESS) return st;
    return events_at(w, t, w->y_ev, g);
}

static int any_crossing(const ld_bdf *w, const double *g_old, const double *g_new)
{
    int k;
    for (k = 0; k < w->nev; k++)
        if (crossing(w, k, g_old[k], g_new[k])) return 1;
    return 0;
}

/* (Explicit steps, whose ends may lie far apart) a crossing inside the step that its ends do
 * not show: an event function that changes sign and back within it (a contact's slip
 * velocity through zero and back: the walker's gait III missed a stop this way). The
 * functions are sampled on the step's interpolant at EVENT_SAMPLES - 1 interior points; on
 * a crossing between two samples, g_old and g_new become their values and *t_lo, *t_hi
 * their times, and 1 is returned. */
static int interior_crossing(ld_bdf *w, double *t_lo, double *t_hi, int *status)
{
    int j;
    double t0 = *t_lo, h = *t_hi - *t_lo;
    *status = LD_BDF_SUCCESS;
    for (j = 1; j < EVENT_SAMPLES; j++) {
        double ts = t0 + h * j / EVENT_SAMPLES;
        if ((*status = dense_output(w, ts, w->y_ev)) != LD_BDF_SUCCESS ||
            (*status = events_at(w, ts, w->y_ev, w->g_mid)) != LD_BDF_SUCCESS)
            return 0;
        if (any_crossing(w, w->g_old, w->g_mid)) {
            memcpy(w->g_new, w->g_mid, (size_t)w->nev * sizeof(double));
            *t_hi = ts;
            return 1;
        }
        memcpy(w->g_old, w->g_mid, (size_t)w->nev * sizeof(double));
        *t_lo = ts;
    }
    return 0;
}

/* Locate the earliest crossing in (t_lo, t_hi] (g_old at t_lo, g_new at t_hi, the current
 * step's interpolant in between): Illinois regula falsi on the leading event, bisection when
 * it stalls. Sets t_event, fired[], and returns 1 when an event fired. */
static int locate_event(ld_bdf *w, double t_lo, double t_hi, int *status)
{
    int k, lead = -1, side = 0, it;
    double frac_best = 2.0, tol;
    double *g_lo = w->g_old, *g_hi = w->g_new;
    *status = LD_BDF_SUCCESS;
    for (k = 0; k < w->nev; k++)
        if (crossing(w, k, g_lo[k], g_hi[k])) {
            double frac = g_lo[k] / (g_lo[k] - g_hi[k]);   /* linear estimate in (0, 1) */
            if (frac < frac_best) { frac_best = frac; lead = k; }
        }
    if (lead < 0) return 0;
    memcpy(w->g_end, g_hi, (size_t)w->nev * sizeof(double));
    tol = w->opt.event_tol > 0 ? w->opt.event_tol : 1e-12 * fmax(1.0, fabs(w->t));
    /* g_lo and g_hi live in g_old and g_new; g_mid is the trial. Keep copies of the ends. */
    for (it = 0; t_hi - t_lo > tol && it < 200; it++) {
        double a = g_lo[lead], b = g_hi[lead], tm;
        /* Illinois: the end that stayed in the last iteration counts half, which keeps
         * regula falsi from creeping up on the root from one side. */
        if (side == 1) a *= 0.5;
        if (side == -1) b *= 0.5;
        tm = t_hi - (t_hi - t_lo) * b / (b - a);
        /* Keep the trial well inside the bracket (bisect if regula falsi crawls). */
        if (!(tm > t_lo + 0.1 * tol && tm < t_hi - 0.1 * tol) || it % 4 == 3)
            tm = 0.5 * (t_lo + t_hi);
        if ((*status = events_consistent(w, tm, NULL, w->g_mid)) != LD_BDF_SUCCESS)
            return 0;
        /* A crossing in (t_lo, tm] (the trial value zero or past the sign of t_lo) of an
         * event that crosses over the step: of all, the earliest wins. */
        {
            int found = -1;
            double best = 2.0;
            for (k = 0; k < w->nev; k++)
                if (crossing(w, k, g_lo[k], w->g_end[k]) && w->g_mid[k] * g_lo[k] <= 0.0) {
                    double frac = g_lo[k] / (g_lo[k] - w->g_mid[k]);
                    if (frac < best) { best = frac; found = k; }
                }
            if (found >= 0) {
                memcpy(g_hi, w->g_mid, (size_t)w->nev * sizeof(double));
                t_hi = tm;
                lead = found;
                side = 1;
            } else {
                memcpy(g_lo, w->g_mid, (size_t)w->nev * sizeof(double));
                t_lo = tm;
                side = -1;
            }
        }
    }
    /* g_old moved along with t_lo: the functions that fired are those that cross over the
     * step and have changed sign (or reached zero) within the final bracket. */
    w->t_event = t_hi;
    for (k = 0; k < w->nev; k++)
        w->fired[k] = g_hi[k] * g_lo[k] <= 0.0 ? crossing(w, k, g_lo[k], w->g_end[k]) : 0;
    return 1;
}

/* The rest of an accepted step: its output rows (up to the event, if one was located in it),
 * the move to the event, or the order and step size of the next step. Kept apart so that a
 * run can return with a full output buffer in the middle of a step's rows (stop_when_full)
 * and resume here with the next buffer: the rows and the next step come out the same as
 * without the stop. */
static int finish_step(ld_bdf *w, int n_out, const double *t_out, double *y_out,
                       int *n_written)
{
    int st, n = w->n, order = w->tail_order;
    while (*n_written < n_out && t_out[*n_written] <= w->tail_t_stop) {
        double *row = y_out + (size_t)(*n_written) * n;
        double c0 = w->opt.clock ? w->opt.clock() : 0.0;
        st = dense_output(w, t_out[*n_written], row);
        if (st == LD_BDF_SUCCESS && w->opt.project_output)
            st = consistent_output(w, t_out[*n_written], row);
        if (st == LD_BDF_SUCCESS)
            st = track_output_phi(w, t_out[*n_written], row, w->opt.project_output);
        if (w->opt.clock) w->stats.output_seconds += w->opt.clock() - c0;
        if (st != LD_BDF_SUCCESS) return ld__fail(w, st, w->t, w->h);
        (*n_written)++;
        w->stats.output_rows++;
    }
    if (w->opt.stop_when_full && n_out > 0 && *n_written == n_out) return LD_BDF_OUTPUT_FULL;
    w->tail_pending = 0;
    if (w->tail_event) {
        /* Move the state to the event; the next call restarts there. */
        if ((st = dense_output(w, w->t_event, w->y_ev)) != LD_BDF_SUCCESS)
            return ld__fail(w, st, w->t, w->h);
        /* The explicit method's interpolant is off the constraints by its error: the restart
         * starts from the consistent state there. */
        if (w->use_rk && (st = consistent_output(w, w->t_event, w->y_ev)) != LD_BDF_SUCCESS)
            return ld__fail(w, st, w->t, w->h);
        memcpy(w->D, w->y_ev, (size_t)n * sizeof(double));
        w->t = w->t_event;
        w->restart_pending = 1;
        w->stats.events++;
        return LD_BDF_EVENT;
    }
    /* Order and step size for the next step (the explicit method chose its step). */
    if (!w->use_rk) ld__bdf_choose_order(w, order);
    return LD_BDF_SUCCESS;
}

int ld_bdf_integrate(ld_bdf *w, double t_end, int n_out, const double *t_out, double *y_out,
                     int *n_written)
{
    int n = w->n, st;
    if (!w->initialised || !(t_end >= w->t) || n_out < 0 || *n_written < 0 || *n_written > n_out)
        return LD_BDF_BAD_INPUT;
    /* A step whose rows filled the last buffer (stop_when_full): its remaining rows first. */
    if (w->tail_pending &&
        (st = finish_step(w, n_out, t_out, y_out, n_written)) != LD_BDF_SUCCESS)
        return st;
    if (w->restart_pending && (st = ld_bdf_restart(w)) != LD_BDF_SUCCESS)
        return ld__fail(w, st, w->t, w->h);
    /* Outputs at the current time. */
    while (*n_written < n_out && t_out[*n_written] <= w->t) {
        memcpy(y_out + (size_t)(*n_written) * n, w->D, (size_t)n * sizeof(double));
        if ((st = track_output_phi(w, w->t, w->D, 0)) != LD_BDF_SUCCESS)
            return ld__fail(w, st, w->t, w->h);
        (*n_written)++;
        w->stats.output_rows++;
    }
    while (w->t < t_end) {
        double t_prev = w->t;
        int accepted;
        if (w->opt.interrupt && *w->opt.interrupt) return LD_BDF_INTERRUPTED;
        /* The budget is the run's, not the call's: a run restarted at every event (a
           chattering contact) still ends. */
        if (w->opt.max_steps > 0 && w->stats.steps >= w->opt.max_steps)
            return ld__fail(w, LD_BDF_TOO_MUCH_WORK, w->t, w->h);
        if (w->switch_pending) {
            w->trial_steps = 0;     /* stiffness decides: no trial to judge */
            if ((st = switch_method(w, 0, 1.0)) != LD_BDF_SUCCESS)
                return ld__fail(w, st, w->t, w->h);
        } else if (w->opt.method == LD_METHOD_AUTO && w->opt.cost_trials && !w->np &&
                   (st = cost_trial(w)) != LD_BDF_SUCCESS) {
            return ld__fail(w, st, w->t, w->h);
        }
        if (w->use_rk) {
            st = ld__rk_step(w, t_end, &accepted);
            if (st != LD_BDF_SUCCESS) {
                /* The explicit method cannot go on (a singular configuration, a step too
                 * small): with method auto the BDF takes over from the last state. */
                if (w->opt.method == LD_METHOD_AUTO && st != LD_BDF_CALLBACK &&
                    st != LD_BDF_NO_MEMORY) {
                    w->switch_pending = 1;
                    continue;
                }
                return ld__fail(w, st, w->t, w->h);
            }
            w->stretch_tries++;
            if (accepted) {
                w->stats.steps++;
                if (w->sys->accept &&
                    w->sys->accept(w->sys->user, w->t, w->D, w->D + w->nq) != LD_OK)
                    return ld__fail(w, LD_BDF_CALLBACK, w->t, w->h);
            }
        } else if ((st = ld__bdf_step(w, t_end, &accepted)) != LD_BDF_SUCCESS) {
            return st;
        }
        if (!accepted) continue;
        note_step(w);

        w->tail_pending = 1;
        w->tail_event = 0;
        w->tail_t_stop = w->t;
        if (w->nev) {
            double t_lo = t_prev, t_hi = w->t;
            if (events_at(w, w->t, w->D, w->g_new) != LD_BDF_SUCCESS ||
                (any_crossing(w, w->g_old, w->g_new) &&
                 events_consistent(w, w->t, w->D, w->g_new) != LD_BDF_SUCCESS))
                return ld__fail(w, LD_BDF_CALLBACK, w->t, w->h);
            if (w->use_rk && !any_crossing(w, w->g_old, w->g_new)) {
                interior_crossing(w, &t_lo, &t_hi, &st);
                if (st != LD_BDF_SUCCESS) return ld__fail(w, st, w->t, w->h);
            }
            w->tail_event = locate_event(w, t_lo, t_hi, &st);
            if (st != LD_BDF_SUCCESS) return ld__fail(w, st, w->t, w->h);
            if (w->tail_event) w->tail_t_stop = w->t_event;
            else memcpy(w->g_old, w->g_new, (size_t)w->nev * sizeof(double));
        }
        if ((st = finish_step(w, n_out, t_out, y_out, n_written)) != LD_BDF_SUCCESS) return st;
    }
    return LD_BDF_SUCCESS;
}
