/*
 * ld_forces_eval.h -- private to the force kernels (ld_forces.c, ld_forces3.c): one record's
 * evaluation on its local block, shared by the planar and the spatial geometry.
 */
#ifndef LD_FORCES_EVAL_H
#define LD_FORCES_EVAL_H

#include <stddef.h>

#include "ld_forces.h"

typedef struct {
    int n;                      /* local coordinates: 2 x the body stride (8 or 24) */
    int idx[LD_REC_MAX];        /* global coordinate of each local entry, -1 for the ground */
    double s, sd;               /* coordinate and its rate */
    double g[LD_REC_MAX];       /* ds/dq */
    double H[LD_REC_MAX * LD_REC_MAX];   /* d2s/dq2, row-major, n x n */
    double r, rd;               /* reference and its rate */
    double f;                   /* generalised force along s */
    double fs, fsd;             /* df/ds, df/ds' */
    double f_el;                /* the conservative part of f */
    double angle;               /* the relative angle (ANGLE, and the angle part of ROLL) */
    double V;                   /* stored energy */
    double dVdt;                /* its explicit time derivative (a moving reference) */
} record_eval;

/* The sense of contact record r (ld_forces.law_sense): +1 or -1. */
static inline double ld_forces_sense(const ld_forces *F, int r)
{
    return F->law_sense ? F->law_sense[r] : 1.0;
}
/* Whether distance record r may have coincident points: a clearance contact (sense -1),
 * which applies no force there. */
static inline int ld_forces_open_at_zero(const ld_forces *F, int r)
{
    return F->law != NULL && F->law[r] != LD_FORCE_LINEAR && F->law[r] != LD_FORCE_FRICTION &&
           ld_forces_sense(F, r) < 0.0;
}
/* Coordinate s of spatial record r with its gradient and Hessian on the local block
 * (e->idx set here). LD_ERR_DOMAIN where s is undefined. */
int ld_forces3_coordinate(const ld_forces *F, const ld_forces_run *run, int r,
                          const double *q, record_eval *e);
/* The global index of coordinate j (0..11: r, e_1, e_2, e_3) of spatial body b, -1 for a
 * rod's absent e_2, e_3 (ld_forces.body_view). */
static inline int ld_forces3_index(const ld_forces *F, int b, int j)
{
    return F->body_view ? F->body_view[12 * b + j] : 12 * b + j;
}
/* Spatial load l: its generalised force on its body's 12 coordinates into Ql[12], the
 * global force or torque into G[3], and, when fq is not NULL, adds its Q_q values. */
void ld_forces3_load(const ld_forces *F, int l, double t, const double *q, double *Ql,
                     double *G, double *fq);

#endif /* LD_FORCES_EVAL_H */
