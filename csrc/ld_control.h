/*
 * ld_control.h -- step-size control of the explicit method (private to the C core): a PI
 * controller on the step's error estimate, see ld_control.c. It calls nothing and keeps its
 * state in the struct its caller owns.
 */
#ifndef LD_CONTROL_H
#define LD_CONTROL_H

typedef struct ld_control {
    double err_old;             /* the last accepted step's error (1: the test's limit) */
    int rejected_last;          /* the last attempt failed: no growth at the next step */
} ld_control;

/* A fresh start (the run's first step, a restart): no history. */
void ld__control_reset(ld_control *c);
/* The factor of the next step after a step accepted with error err (err <= 1). */
double ld__control_accepted(ld_control *c, double err);
/* The factor of the retry after a step whose error err failed the test (err > 1, or not
 * finite). */
double ld__control_rejected(ld_control *c, double err);
/* An attempt that failed for another reason (the caller chooses the retry's step). */
void ld__control_failed(ld_control *c);

#endif
