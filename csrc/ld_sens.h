/*
 * ld_sens.h -- forward sensitivities (private; see ld_work.h and the top of ld_sens.c):
 * their checks and workspace (the driver) and their steps along the BDF's corrector.
 */
#ifndef LD_SENS_H
#define LD_SENS_H

#include "ld_work.h"

int ld__sens_valid(const ld_system *sys, const ld_bdf_options *opt);
int ld__sens_create(ld_bdf *w);
int ld__sens_step(ld_bdf *w, double t, double c);
int ld__sens_accept(ld_bdf *w, double t, const double *q, const double *v);
void ld__sens_test_terms(ld_bdf *w, int k);

#endif /* LD_SENS_H */
