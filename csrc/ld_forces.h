/*
 * ld_forces.h -- force elements of a planar model in fully Cartesian coordinates
 * (q_i = x, y, ux, uy per body): generalised forces Q, their exact derivatives Q_q and Q_v,
 * stored energy and the power of the non-conservative parts.
 *
 * Two families cover every element of linkdyn.forces:
 *
 * Actuator records act along one scalar coordinate s(q) of the mechanism
 *   LD_COORD_DISTANCE  s = |r2 - r1|, the distance between two body (or ground) points
 *   LD_COORD_ANGLE     s = angle(u2) - angle(u1), the relative angle of two bodies (ground:
 *                      angle 0), continuous over any number of turns (see angle_ref below)
 *   LD_COORD_SLIDE     s = a . (r2 - r1), a = u1 rotated by the axis angle (ground: the fixed
 *                      axis): the displacement along a prismatic joint's axis
 *   LD_COORD_ROLL      s = a . (r2 - r1) + rho (angle(u2) - angle(u1)), a = u1 rotated by the
 *                      axis angle, rho = law_par[4 r + 2]: the rolling coordinate of a
 *                      circle of radius rho centred at r2 on a line along a through r1 (the
 *                      circle on the side a turned by +90 degrees points to). Its rate is
 *                      the slip velocity of the circle's material point at the contact
 *                      relative to the line's, for a line on the ground or on a body.
 *   LD_COORD_CAM       s = the gap of a follower from cam cam[r] of ld_cams.h: side 0 is the
 *                      cam's body with r1 its centre, side 1 the follower with r2 its point;
 *                      a knife-edge's or roller's gap g(p) at p = (u1 . d, u1 x d), d = r2 -
 *                      r1, or a flat face's n . d - h(atan2(u1 x n, u1 . n)), n = its unit
 *                      normal (geom[4], geom[5] in the follower's frame): the cam's curve
 *                      and its support function are ld_cams.c's
 *   LD_COORD_MESH      s = (m / 2) wrap(n1 angle(u1) + n2 angle(u2) - c), geom[0..3] = n1,
 *                      n2, c, m / 2 (whole numbers n1, n2: the teeth, signed): the arc by
 *                      which a gear pair on the ground turns off its mesh (backlash,
 *                      linkdyn.elements.gears); wrap(x) = x - 2 pi round(x / 2 pi)
 * with the generalised force Q = f grad s of
 *   f = -k (s - r(t)) - c (s' - r'(t)) + g(t) + u
 * (stiffness k, damping c, reference r(t) from a law or a constant, load g(t) from a law,
 * input u from a controller). Springs, dampers, joint dampers, motors, servos and torques on
 * bodies are such records. Their stored energy is k (s - r)^2 / 2 and the power they feed
 * into the mechanical energy is
 *   P = -c (s' - r') s' + (g + u) s' - k (s - r) r'
 * so that d/dt (kinetic + potential energy) = sum of P over all elements, exactly.
 *
 * A record's force may instead follow a tabulated curve (law LD_FORCE_TABLE, a nonlinear
 * bushing's component): f = -T(s - r) - c (s' - r') + g(t) + u with T table table[r]: m
 * pieces over breaks x[0..m], a cubic a + b h + c h^2 + d h^3 in h = delta - x[i] on each,
 * continued beyond x[0] and x[m] along its end tangents; its parameters tab_par[tab_start
 * [k] ..] are m, x[0..m], the pieces' (a, b, c, d), the integral of T from x[0] to each
 * piece's start (m of them), and that integral at delta = 0. The stored energy is the
 * integral of T from 0 to delta = s - r.
 *
 * A record's force may instead follow a one-sided contact law on the penetration
 * delta = sense (gap - s) (law[r], parameters law_par[r] = K, n, c or e, gap; sense
 * law_sense[r] = +1 keeps s above gap, -1 below it):
 *   LD_FORCE_HERTZ       f = K delta^n (1 + c delta')             (Hunt-Crossley damping)
 *   LD_FORCE_LANKARANI   f = K delta^n (1 + 3 (1 - e^2) delta' / (4 v0))
 *                        (Lankarani-Nikravesh; v0 the impact speed, per run: impact[r])
 * for delta > 0, clamped at zero (a contact pushes, never pulls); zero when apart or while
 * the run's gate[r] is not 1: 0 switched off (a swinging foot), 2 open (until its onset is
 * located; the caller switches either only where delta <= 0). The force along s
 * is sense f. The stored energy is K delta^(n+1) / (n + 1); the rest is damping. A
 * distance record with sense -1 (a clearance: the journal's centre within gap of the
 * bearing's) is defined where its two points coincide: s = 0 with a zero gradient, since it
 * applies no force there. Friction records need a normal record of sense +1.
 *
 * A friction record (law LD_FORCE_FRICTION, on a ROLL coordinate, parameters law_par[r] =
 * mu, the index of its normal contact record, rho, unused) applies the sliding friction
 *   f = -mu sigma F_N,    sigma = run->slip[r] in {-1, 0, +1}
 * (F_N the normal record's force; sigma the sliding direction chosen by the caller at the
 * last mode change, 0 while the contact sticks or is open), with exact derivatives through
 * F_N. Its power f s' is the friction's (negative) work rate. A joint's friction has no
 * normal record (law_par[r] = F_c, -1, v_s, F_s - F_c, on the joint's angle or slide):
 *   f = -sigma (F_c + (F_s - F_c) exp(-(s' / v_s)^2))
 * (Coulomb's F_c, with Stribeck's rise to the static F_s at rest where v_s > 0).
 *
 * Load records apply a force F = (Fx, Fy) at a body point, with components from two laws,
 * either in the global frame or in the body frame (then F = Fxi u + Feta perp(u), a follower
 * force). Q = A^T F with A = d r_point / d q_body; P = F . v_point.
 *
 * Spatial models (stride 12: a body's coordinates are its centre of mass r and principal
 * axes e_1, e_2, e_3, natural coordinates) use the same records on 3D geometry, geom3[r] =
 * (p0, p1, a, b, d), three numbers each: p0 and p1 the points of sides 0 and 1 (principal
 * frame components, or global for the ground), a and b directions of side 0, d of side 1
 * (a body direction sum_k a_k e_k is linear in the coordinates, as a point r + sum_k p_k e_k):
 *   LD_COORD_DISTANCE  s = |p1 - p0|
 *   LD_COORD_SLIDE     s = a . (p1 - p0)
 *   LD_COORD_ANGLE     s = atan2(d . b, d . a): the rotation of side 1 relative to side 0
 *                      about a x b (a, b orthonormal, perpendicular to a revolute axis; d is
 *                      along a at the configuration where s = 0), continuous over turns
 * A rod (a body whose mass lies on a line) has only r and e_1: its e_2 and e_3 read as zero
 * and take no force (body_view); its points and directions lie along e_1.
 * Contact laws and rolling records are planar. Spatial loads (load_kind) are a force
 * F at a body point (Q_r = F, Q_e_k = p_k F) or a torque T on a body (Q_e_k = T x e_k / 2,
 * so that Q . v = T . omega with omega = sum_k e_k x e_k' / 2), with three components from
 * laws, global or in the body's own axes (turned into the principal frame by load_axes).
 *
 * Per-run state (ld_forces_run) holds what a run may change: controller inputs, which inputs
 * replace a servo's target, and the reference angle of each angle record, moved to the
 * record's current angle after each accepted step (ld_forces_accept), so that an angle is
 * the branch nearest to its last accepted value.
 */
#ifndef LD_FORCES_H
#define LD_FORCES_H

#include "ld_cams.h"
#include "ld_laws.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { LD_COORD_DISTANCE = 0, LD_COORD_ANGLE = 1, LD_COORD_SLIDE = 2, LD_COORD_ROLL = 3,
       LD_COORD_CAM = 4, LD_COORD_MESH = 5 };
enum { LD_INPUT_NONE = 0, LD_INPUT_ADD = 1, LD_INPUT_TARGET = 2 };
enum { LD_FORCE_LINEAR = 0, LD_FORCE_HERTZ = 1, LD_FORCE_LANKARANI = 2,
       LD_FORCE_FRICTION = 3, LD_FORCE_TABLE = 4 };

/* Entries of a record's local block: side s (0, 1) coordinate j of the body's `stride`
 * (planar: x, y, ux, uy) is local index stride s + j, (2 stride)^2 entries; slot arrays
 * hold, row-major, the position of (i, j) in the model's CSC value array of Q_q (or Q_v),
 * -1 where the pattern has no entry. A load's block is stride x stride. */
#define LD_REC_BLOCK 64
#define LD_LOAD_BLOCK 16
#define LD_STRIDE_SPATIAL 12
#define LD_REC_MAX 24            /* largest local block side: 2 x 12 */
enum { LD_LOAD_FORCE = 0, LD_LOAD_TORQUE = 1 };

typedef struct ld_forces {
    int stride;                 /* coordinates per body: 4 (or 0) planar, 12 spatial */
    int nrec;
    const int *coord;           /* [nrec] LD_COORD_* */
    const int *body;            /* [nrec, 2] body of each side, -1 for the ground */
    const double *geom;         /* [nrec, 6] (xi1, eta1, xi2, eta2, cos axis, sin axis):
                                   local points (ground side: global x, y); axis of SLIDE */
    const double *stiffness;    /* [nrec] k */
    const double *damping;      /* [nrec] c */
    const int *ref_law;         /* [nrec] law of r(t); -1: the constant ref_value */
    const double *ref_value;    /* [nrec] */
    const int *load_law;        /* [nrec] law of g(t); -1: none */
    const int *input_mode;      /* [nrec] LD_INPUT_* */
    const int *input;           /* [nrec] index into the run's inputs (-1: none) */
    const int *slot_q;          /* [nrec, 64] */
    const int *slot_v;          /* [nrec, 64] */
    const int *law;             /* [nrec] LD_FORCE_* (NULL: all linear) */
    const double *law_par;      /* [nrec, 4] contact laws: K, n, c or e, gap */
    const double *law_sense;    /* [nrec] contact laws: +1 (delta = gap - s, s held above
                                   gap: a stop, a circle on a line) or -1 (delta = s - gap, s
                                   held below gap: a journal in its bearing); NULL: all +1 */
    const double *geom3;        /* [nrec, 15] spatial geometry (p0, p1, a, b, d) */
    const int *table;           /* [nrec] TABLE records: their table (NULL where none is) */
    const int *tab_start;       /* [ntable + 1] offsets into tab_par */
    const double *tab_par;      /* the tables (see above) */
    const int *cam;             /* [nrec] CAM records: the cam (NULL where none is) */
    ld_cams cams;               /* the model's cams (csrc/ld_cams.h) */
    const int *body_view;       /* [nbody, 12] spatial: the global index of each body's
                                   r, e_1, e_2, e_3, -1 for a rod's absent e_2, e_3 (a rod
                                   carries only r and its axis e_1); NULL: 12 b + j */

    int nload;
    const int *load_body;       /* [nload] */
    const double *load_point;   /* [nload, dim] local point (dim 2 planar, 3 spatial) */
    const int *load_frame;      /* [nload] 0 global, 1 body */
    const int *load_laws;       /* [nload, dim] laws of the components (-1: zero) */
    const int *load_slot_q;     /* [nload, stride^2] block rows x, y, ux, uy (planar); cols
                                   likewise */
    const int *load_kind;       /* [nload] LD_LOAD_* (spatial; NULL: all forces) */
    const double *load_axes;    /* [nload, 9] (spatial) row-major T: a body-frame load's
                                   principal-frame components are T c, c those of its laws
                                   in the body's own axes (NULL: T = I) */

    const ld_laws *laws;
} ld_forces;

typedef struct ld_forces_run {
    const double *input;        /* [ninput] controller inputs */
    const int *input_active;    /* [ninput] non-zero: a TARGET input replaces r(t) */
    double *angle_ref;          /* [nrec] reference angles (others unused) */
    int *fail_record;           /* set to the record of an LD_ERR_DOMAIN return */
    const double *impact;       /* [nrec] impact speeds of Lankarani-Nikravesh contacts
                                   (NULL or <= 0: no damping yet) */
    const double *slip;         /* [nrec] sliding direction of friction records (NULL: 0) */
    const double *gate;         /* [nrec] 1 on; 0 switches a contact record off (a swinging
                                   foot), 2 holds it open (NULL: all on) */
} ld_forces_run;

/* out[nq] += Q of all elements. Returns LD_OK, or LD_ERR_DOMAIN when a distance record's two
 * points coincide (its direction is undefined; *run->fail_record names it). */
int ld_forces_add(const ld_forces *F, const ld_forces_run *run, double t, const double *q,
                  const double *v, double *out);
/* Values of Q_q (fq) and Q_v (fv) in their patterns; either may be NULL. The arrays are
 * accumulated into: the caller zeroes them first. */
int ld_forces_jacobians(const ld_forces *F, const ld_forces_run *run, double t,
                        const double *q, const double *v, double *fq, double *fv);
/* Stored energy of all records (J). */
double ld_forces_potential(const ld_forces *F, const ld_forces_run *run, double t,
                           const double *q);
/* Per record: out[3 r .. 3 r + 2] = (s, s', f); per load: out[3 nrec + dim l ..] = the
 * global force (Fx, Fy[, Fz]) or torque. */
int ld_forces_values(const ld_forces *F, const ld_forces_run *run, double t, const double *q,
                     const double *v, double *out);
/* Quadratures integrated with the state: z[r] = power of record r, z[nrec + l] = power of
 * load l, z[nrec + nload + r] = s' of record r (so that the integral tracks s over turns). */
int ld_forces_rates(const ld_forces *F, const ld_forces_run *run, double t, const double *q,
                    const double *v, double *z);
/* Coordinate s of record r at q (on the run's branch); NAN where it is undefined. */
double ld_forces_coordinate(const ld_forces *F, const ld_forces_run *run, int r,
                            const double *q);
/* After an accepted step: move each angle (and rolling) record's reference to its current
 * angle. */
void ld_forces_accept(const ld_forces *F, const ld_forces_run *run, const double *q);
/* Coordinate s of record r with its gradient g[2 stride] on the local coordinates
 * idx[2 stride] (-1: the ground) and the curvature term vHv = v^T (d2s/dq2) v, so that
 * s'' = g . q'' + vHv. Callers give arrays of LD_REC_MAX entries. */
int ld_forces_coordinate_derivs(const ld_forces *F, const ld_forces_run *run, int r,
                                const double *q, const double *v, int *idx, double *s,
                                double *g, double *vHv);
/* d2s/dq2 of record r on its local block (H[(2 stride)^2], row-major; LD_REC_MAX^2). */
int ld_forces_coordinate_hessian(const ld_forces *F, const ld_forces_run *run, int r,
                                 const double *q, double *H);
/* The force f of record r alone. */
int ld_forces_record_force(const ld_forces *F, const ld_forces_run *run, int r, double t,
                           const double *q, const double *v, double *f);

#ifdef __cplusplus
}
#endif

#endif /* LD_FORCES_H */
