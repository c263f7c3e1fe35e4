/*
 * ld_bdf_method.h -- the BDF method's parts the run driver calls (private; see ld_work.h
 * and the top of ld_bdf.c).
 */
#ifndef LD_BDF_METHOD_H
#define LD_BDF_METHOD_H

#include "ld_work.h"

/* The formulas' constants and the tolerances at a unit start (when the workspace is made). */
void ld__bdf_setup(ld_bdf *w);
/* The local tolerances for a start whose largest coordinate is qmax (the proportionality
 * transform and the round-off floor), and the same at share times the BDF's own (method
 * auto's cost trials; 1 restores them), with the Newton tolerance that goes with them. */
void ld__bdf_set_tolerances(ld_bdf *w, double qmax);
void ld__bdf_share_tolerances(ld_bdf *w, double share);
/* A start at (t0, q0, v0) with D[0] = (q0, v0, ...) and w->phiq at q0: consistent
 * accelerations and multipliers from K, order 1 and the first step. */
int ld__bdf_start(ld_bdf *w, double t0, const double *q0, const double *v0);
/* One step attempt from w->t, landing on t_end: on acceptance the history D holds the new
 * step and *accepted is 1; a rejected attempt has changed the step size (the caller tries
 * again); other outcomes are failures (status, with the failure's time and step). */
int ld__bdf_step(ld_bdf *w, double t_end, int *accepted);
/* The interpolating polynomial of the last step at t_eval. */
void ld__bdf_dense(const ld_bdf *w, double t_eval, double *out);
/* After an accepted step of the given order (its output rows written): the order and step
 * size for the next one, once k + 1 steps of equal size have been taken. */
void ld__bdf_choose_order(ld_bdf *w, int order);

#endif /* LD_BDF_METHOD_H */
