/*
 * ld_angles.h -- angle rows: constraint rows in the angles of bodies and joints, as gear
 * pairs, racks and ratio couplings need them (linkdyn.elements.gears). Row r is
 *
 *     Phi_r = scale_r * wrap(sum_k n_k f_k(q) - offset_r),   wrap(x) = x - 2 pi round(x / 2 pi)
 *
 * over the row's angles k, each f_k = atan2(S_k(q), C_k(q)) (kind 0) or S_k(q) (kind 1, a
 * length over a pitch radius: a rack's slide), S_k and C_k sums of terms coef * x_a * x_b,
 * coef * x_a or coef in the angle's own coordinates x = q[var]. With integer multipliers n_k
 * on the kind-0 angles the sum is defined modulo 2 pi whatever turn each angle is on, so the
 * rows need no count of turns and hold over any number of them; the wrap keeps the residual
 * of a satisfied row at zero. Its derivatives are those of the sum.
 *
 * Cam rows (linkdyn.elements.cams) use two more kinds on cam cam[k] of ld_cams.h: kind 2,
 * f = g(C, S), the gap of the point (C, S) (a follower's point in the cam's frame) from the
 * cam's curve; kind 3, f = -h(atan2(S, C)), minus the cam's support function at a flat
 * face's normal angle (the row adds the face's distance as a kind-1 angle). A row without
 * kind-0 angles is a length, not wrapped.
 *
 * The compile step (src/linkdyn/compile/angles.py) fills the arrays; the kernels of
 * ld_kernels.c call these on an ld_model's angle rows. Nothing here allocates.
 */
#ifndef LD_ANGLES_H
#define LD_ANGLES_H

#include "ld_cams.h"

/* Coordinates one angle may read (a spatial joint's angle reads both bodies' twelve) */
#define LD_ANGLE_MAXVAR 32

typedef struct ld_angles {
    int nrow;
    const int *row;         /* [nrow] the constraint row */
    const double *scale;    /* [nrow] a length: the row's value is an arc of a pitch circle */
    const double *offset;   /* [nrow] the sum where the row holds (its value in the guesses) */
    const int *first;       /* [nrow + 1] the row's angles: first[r] .. first[r + 1] - 1 */
    int nangle;
    const int *kind;        /* [nangle] 0: atan2(S, C), 1: S, 2: a cam's gap g(C, S),
                               3: -h(atan2(S, C)), a cam's support */
    const double *mult;     /* [nangle] n_k */
    const int *var_start;   /* [nangle + 1] the angle's coordinates var[var_start[k] ..] */
    const int *var;         /* coordinates (at most LD_ANGLE_MAXVAR per angle) */
    const int *jslot;       /* [len var] Phi_q slot of (row, var) */
    const int *hstart;      /* [nangle + 1] the angle's Hessian block hslot[hstart[k] ..] */
    const int *hslot;       /* slots of (var i, var j), i-major, m_k^2 per angle */
    const int *form_start;  /* [2 nangle + 1] S's terms form_start[2k] .. form_start[2k+1]-1,
                                then C's up to form_start[2k + 2] - 1 */
    const int *form_a;      /* first coordinate, as its index in the angle's var (-1: none) */
    const int *form_b;      /* second (-1: none) */
    const double *form_coef;
    const int *cam;         /* [nangle] kinds 2 and 3: the cam (NULL where no angle is) */
    ld_cams cams;
} ld_angles;

/* out[row] <- Phi of each angle row */
void ld_angles_phi(const ld_angles *A, const double *q, double *out);
/* val[jslot] <- the rows' Phi_q entries (entries shared by two angles of a row summed) */
void ld_angles_phi_q(const ld_angles *A, const double *q, double *val);
/* out[row] <- gamma = -(Phi_q v)_q v (the rows do not depend on time) */
void ld_angles_gamma(const ld_angles *A, const double *q, const double *v, double *out);
/* val[hslot] += lam_row d/dq (Phi_q^T) of each row: the caller zeroes val first */
void ld_angles_hessian(const ld_angles *A, const double *q, const double *lam, double *val);

#endif /* LD_ANGLES_H */
