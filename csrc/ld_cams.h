/*
 * ld_cams.h -- the curves of cams (linkdyn.elements.cam_profiles says what they are): a
 * follower's law over the program angle u, as pieces, and the gap of a point follower or the
 * support function of a flat-faced one, with their first two derivatives. The angle rows of
 * ld_angles.h (cam rows) call these; nothing here allocates or keeps state.
 *
 * Cam c's law s(u) is periodic over 2 pi; its pieces are first[c] .. first[c + 1] - 1, piece
 * k begins at start[k] (ascending, the first at 0) and, with t = u - start[k] and its numbers
 * coef[11 k ..] = c0 .. c7, A, B, w,
 *
 *     s(u) = sum_j c_j t^j + A sin(w t) + B cos(w t).
 *
 * The curve's numbers par[12 c ..] are sigma, gamma, radius, lam, kappa and then by kind:
 *
 *   LD_CAM_POINT  a_x, a_y, b_x, b_y, L, beta0: the pitch curve Q(u) = R(gamma - sigma u) W(u),
 *                 W(u) = a + lam s(u) b + L (cos beta, sin beta), beta = beta0 + kappa s(u)
 *   LD_CAM_POLAR  the cam's surface Q(u) = s(u) (cos u, sin u) (a measured profile)
 *   LD_CAM_FACE   c0, A_x, A_y, psi0: a flat face at the distance H(u) = c0 + lam s + A .
 *                 (cos phi, sin phi), phi = psi0 + kappa s, whose normal lies at the angle
 *                 Psi(u) = gamma + phi - sigma u in the cam's frame
 *   LD_CAM_POLAR_FACE  a flat face on a measured convex surface P(u) = s(u) (cos u, sin u):
 *                 Psi(u) the angle of its outward normal n, H(u) = n . P(u); then h' = t . P
 *                 and h + h'' = |P'| / Psi', the surface's radius of curvature
 *
 * A point p (cam frame) has the gap g(p) = n . (p - Q(u*)) - radius, u* the foot of the
 * perpendicular from p on the curve (Q'(u*) . (p - Q(u*)) = 0, found by Newton's method
 * from the point of the curve at p's polar angle) and n the unit normal pointing off the cam.
 * Its gradient is n and its Hessian -(Q'' . n) / (|Q'|^2 - Q'' . (p - Q)) t t^T, t the unit
 * tangent: the signed distance's. A face at normal angle psi has the support h(psi) = H(u*),
 * Psi(u*) = psi (mod 2 pi), h' = H' / Psi', h'' = (H'' Psi' - H' Psi'') / Psi'^3.
 */
#ifndef LD_CAMS_H
#define LD_CAMS_H

enum { LD_CAM_POINT = 0, LD_CAM_POLAR = 1, LD_CAM_FACE = 2, LD_CAM_POLAR_FACE = 3 };
#define LD_CAM_NPAR 12
#define LD_CAM_NCOEF 11

typedef struct ld_cams {
    int ncam;
    const int *kind;        /* [ncam] LD_CAM_* */
    const double *par;      /* [ncam, 12] */
    const int *first;       /* [ncam + 1] the pieces of each cam's law */
    const double *start;    /* [npiece] */
    const double *coef;     /* [npiece, 11] */
} ld_cams;

/* s[0..2] <- the law of cam c and its first two derivatives at u */
void ld_cam_law(const ld_cams *C, int c, double u, double *s);
/* Gap of the point p[2] (cam frame) from cam c's POINT or POLAR curve: *g, grad[2] and the
 * Hessian hess[3] = (xx, xy, yy); *u the foot's program angle. Returns 0, or 1 where Newton's
 * method does not converge (then *g is NAN). */
int ld_cam_point_gap(const ld_cams *C, int c, const double *p, double *g, double *grad,
                     double *hess, double *u);
/* Support h[0..2] = h, h', h'' of cam c's FACE or POLAR_FACE curve at the normal angle psi; *u the contact's
 * program angle. Returns 0, or 1 where Newton's method does not converge (h NAN). */
int ld_cam_face_support(const ld_cams *C, int c, double psi, double *h, double *u);

#endif /* LD_CAMS_H */
