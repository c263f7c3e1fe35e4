/*
 * ld_rk.h -- the explicit method's parts the run driver calls (private; see ld_work.h and
 * the top of ld_rk.c).
 */
#ifndef LD_RK_H
#define LD_RK_H

#include "ld_work.h"

int ld__rk_create(ld_bdf *w);
void ld__rk_free(ld_bdf *w);
void ld__rk_set_tolerances(ld_bdf *w, double qmax);
int ld__rk_start(ld_bdf *w);
int ld__rk_step(ld_bdf *w, double t_end, int *accepted);
int ld__rk_dense(ld_bdf *w, double t, double *out);
/* The output row y made consistent with the Schur complement; LD_BDF_SINGULAR where S
 * cannot be factorised (the driver then uses the KKT matrix). */
int ld__rk_consistent(ld_bdf *w, double t, double *y);
struct ld_schur;
/* The explicit method's Schur plan (ld_schur.h), NULL without the explicit method. */
struct ld_schur *ld__rk_schur(ld_bdf *w);
/* Whether the steps have come near the stability limit (method auto's cost trials). */
int ld__rk_near_stiff(const ld_bdf *w);

#endif /* LD_RK_H */
