"""Cam profiles: the follower's motion program over the cam angle, the curve it generates on
the cam for a follower's geometry, and measured profiles; the pressure angle and radius of
curvature of a profile. This module is the mathematics of :mod:`linkdyn.elements.cams` (the
element family), free of any model.

Motion programs
---------------
A program is a list of segments that together span one cam turn (2 pi rad), each a
``("dwell", angle)``, ``("rise", angle, lift, law)`` or ``("return", angle, lift, law)``
(or the mappings ``{"motion", "angle", "lift", "law"}`` of a model file); the returns must
bring the follower back down by what the rises lifted it. Over a segment of span beta from
its start, with x = (theta - start) / beta, the follower moves by ``lift * y(x)``, with y one
of the standard laws (Norton, "Cam Design and Manufacturing Handbook"; Rothbart, "Cam
Design Handbook"):

* ``"cycloidal"``: ``y = x - sin(2 pi x) / (2 pi)``, peak acceleration ``2 pi h / beta^2``;
* ``"harmonic"``: ``y = (1 - cos(pi x)) / 2``, peak ``pi^2 h / (2 beta^2)``;
* ``"3-4-5"``: ``y = 10 x^3 - 15 x^4 + 6 x^5``, peak ``5.7735 h / beta^2``;
* ``"4-5-6-7"``: ``y = 35 x^4 - 84 x^5 + 70 x^6 - 20 x^7``, peak ``7.5132 h / beta^2``;
* ``"modified_trapezoid"``: constant acceleration ramped in and out by sines, in eighths
  of the span (1/8 ramp, 1/4 constant, 1/4 sine reversal, 1/4 constant, 1/8 ramp), peak
  ``4.8881 h / beta^2``.

Between dwells the harmonic law's acceleration jumps at the segment's ends; the cycloid,
3-4-5 and the modified trapezoid start and end at zero acceleration with a finite jump of
jerk, and 4-5-6-7 also at zero jerk.

Every law is stored as pieces, each a polynomial of degree at most 7 plus ``A sin(w t) + B
cos(w t)`` in the piece's own angle t: the kernels (``csrc/ld_cams.c``) evaluate the same
pieces with their first two derivatives.

Curves on the cam
-----------------
A cam is a body turning about its ``centre``; its curve lies in the cam body's own frame
(origin at the centre, axes the body's). For a program and a follower guided by a
prismatic joint (translating) or a revolute joint (oscillating), placed at the program's
``phase`` in the initial guesses, the kernels hold

* a knife-edge's tip or a roller's centre on the **pitch curve** ``Q(u) = R(gamma - sigma
  u) W(u)``: ``W(u)`` where the guide puts the point at program angle ``u`` (world frame of
  the guesses, relative to the cam's centre), turned back by the cam's rotation (``sigma =
  +1`` for a cam turning counterclockwise, -1 clockwise; ``gamma`` the cam body's frame at
  the start). The cam's surface is the pitch curve's inner offset by the roller's radius.
* a flat face, whose line has the unit normal n (pointing from the cam to the follower), at
  the distance ``H(u)`` from the cam's centre along n, n at the angle ``Psi(u)`` in the
  cam's frame: the face touches the cam where its distance is the profile's **support
  function** ``h(psi) = H(u)`` at ``Psi(u) = psi``. The profile's contact point is ``h n +
  h' t`` (t = n turned by +90 degrees), its radius of curvature ``h + h''``.
* a **measured** profile is the cam's surface itself, through points given in the cam's
  frame, as the polar curve ``r(phi) (cos phi, sin phi)`` of a periodic quintic spline
  (SciPy's ``make_interp_spline``); a knife-edge's tip or a roller's centre keeps its
  distance from it equal to the roller's radius, and a flat face (on a convex profile)
  touches it where the surface's outward normal is the face's: its support function.

The gap of a point follower is its signed distance from its curve (positive off the cam,
minus the roller's radius on a measured profile); that of a flat face ``d - h(psi)``, with d
the face's distance from the cam's centre.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError

__all__ = ["LAWS", "MOTIONS", "NCOEF", "NPAR", "POINT", "POLAR", "FACE", "POLAR_FACE",
           "law_pieces",
           "MotionProgram", "motion_program", "CamCurve", "evaluate_pieces",
           "measured_pieces", "peak_acceleration"]

#: The standard motion laws of a rise or return.
LAWS = ("cycloidal", "harmonic", "3-4-5", "4-5-6-7", "modified_trapezoid")
#: The motions of a program's segments.
MOTIONS = ("dwell", "rise", "return")
#: Numbers per piece: c0 .. c7, A, B, w (``csrc/ld_cams.h``).
NCOEF = 11
#: Numbers per curve (``csrc/ld_cams.h`` says what each is).
NPAR = 12
#: Curve kinds of ``csrc/ld_cams.h``.
POINT, POLAR, FACE, POLAR_FACE = 0, 1, 2, 3

TWO_PI = 2.0 * math.pi


def _integrate(accel, lengths):
    """Normalised pieces of y from pieces of its second derivative ``(a0, a_s, a_c, w)`` (a0
    + a_s sin(w t) + a_c cos(w t)) of the given lengths, y and y' zero at x = 0."""
    pieces, x0, y0, v0 = [], 0.0, 0.0, 0.0
    for (a0, a_s, a_c, w), length in zip(accel, lengths):
        poly = np.zeros(8)
        if w:
            poly[:3] = (y0 + a_c / w**2, v0 + a_s / w, 0.5 * a0)
            A, B = -a_s / w**2, -a_c / w**2
        else:
            poly[:3] = (y0, v0, 0.5 * a0)
            A = B = 0.0
        pieces.append([x0, poly, A, B, w])
        t = length
        v0 = v0 + a0 * t + ((a_s / w) * (1.0 - math.cos(w * t)) + (a_c / w) * math.sin(w * t)
                            if w else 0.0)
        y0 = poly[0] + poly[1] * t + poly[2] * t * t + A * math.sin(w * t) + B * math.cos(w * t)
        x0 += length
    return pieces, y0


def law_pieces(law: str) -> list:
    """The normalised law ``y(x)`` on [0, 1] as pieces ``[x0, poly (8,), A, B, w]``: ``y =
    sum_j poly[j] t^j + A sin(w t) + B cos(w t)`` with ``t = x - x0``."""
    if law == "cycloidal":
        return [[0.0, np.array([0, 1, 0, 0, 0, 0, 0, 0], float), -1.0 / TWO_PI, 0.0, TWO_PI]]
    if law == "harmonic":
        return [[0.0, np.array([0.5, 0, 0, 0, 0, 0, 0, 0], float), 0.0, -0.5, math.pi]]
    if law == "3-4-5":
        return [[0.0, np.array([0, 0, 0, 10, -15, 6, 0, 0], float), 0.0, 0.0, 0.0]]
    if law == "4-5-6-7":
        return [[0.0, np.array([0, 0, 0, 0, 35, -84, 70, -20], float), 0.0, 0.0, 0.0]]
    if law == "modified_trapezoid":
        w = 4.0 * math.pi
        accel = [(0.0, 1.0, 0.0, w), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 1.0, w),
                 (-1.0, 0.0, 0.0, 0.0), (0.0, 0.0, -1.0, w)]
        pieces, end = _integrate(accel, (0.125, 0.25, 0.25, 0.25, 0.125))
        for p in pieces:                   # scaled so that y(1) = 1
            p[1] = p[1] / end
            p[2] /= end
            p[3] /= end
        return pieces
    raise ValueError(f"unknown law {law!r}")


def peak_acceleration(law: str) -> float:
    """The largest magnitude of the second derivative of a normalised law (the peak
    acceleration of a rise of lift h over span beta is this times h / beta^2), from its
    pieces on a fine grid."""
    x = np.linspace(0.0, 1.0, 200001)
    start, coef = _scaled(law_pieces(law), 0.0, 1.0, 1.0, 0.0)
    return float(np.max(np.abs(evaluate_pieces(start, coef, x, 2, period=None))))


def _scaled(pieces, u0, span, lift, base):
    """A normalised law's pieces as pieces of ``base + lift y((u - u0) / span)``."""
    start, coef = [], []
    powers = span ** -np.arange(8.0)
    for x0, poly, A, B, w in pieces:
        c = np.zeros(NCOEF)
        c[:8] = lift * poly * powers
        c[0] += base
        c[8:] = (lift * A, lift * B, w / span)
        start.append(u0 + span * x0)
        coef.append(c)
    return start, coef


def evaluate_pieces(start, coef, u, order: int = 0, period=TWO_PI) -> np.ndarray:
    """The ``order``-th derivative (0 to 3) of the piecewise function at ``u`` (taken modulo
    ``period``, None: as it is): pieces begin at ``start`` (ascending, the first at 0),
    ``coef`` their (n, 11) numbers."""
    start = np.asarray(start, dtype=float)
    coef = np.asarray(coef, dtype=float).reshape(-1, NCOEF)
    u = np.asarray(u, dtype=float)
    if period is not None:
        u = np.mod(u, period)
    i = np.clip(np.searchsorted(start, u, side="right") - 1, 0, len(start) - 1)
    t = u - start[i]
    c = coef[i]
    out = np.zeros_like(t)
    for j in range(order, 8):
        fall = math.factorial(j) / math.factorial(j - order)
        out = out + c[..., j] * fall * t ** (j - order)
    w = c[..., 10]
    phase = 0.5 * math.pi * order
    out = out + c[..., 8] * w**order * np.sin(w * t + phase) \
        + c[..., 9] * w**order * np.cos(w * t + phase)
    return out


@dataclass(frozen=True)
class MotionProgram:
    """A follower's motion over one cam turn: ``segments`` are (motion, span in rad, lift,
    law), with lift 0 and law "" for a dwell; displacement 0 at program angle 0."""

    segments: tuple

    def pieces(self):
        """(start (n,), coef (n, 11)) of the displacement over [0, 2 pi)."""
        start, coef, u0, base = [], [], 0.0, 0.0
        for motion, span, lift, law in self.segments:
            if motion == "dwell":
                c = np.zeros(NCOEF)
                c[0] = base
                start.append(u0)
                coef.append(c)
            else:
                sign = 1.0 if motion == "rise" else -1.0
                s, c = _scaled(law_pieces(law), u0, span, sign * lift, base)
                start += s
                coef += c
                base += sign * lift
            u0 += span
        return np.array(start), np.array(coef)

    def total_lift(self) -> float:
        """The largest displacement of the program (m, or rad for an oscillating follower)."""
        level, top = 0.0, 0.0
        for motion, _, lift, _ in self.segments:
            level += lift if motion == "rise" else -lift if motion == "return" else 0.0
            top = max(top, level)
        return top

    def to_list(self) -> list:
        """The model-file form: mappings ``{"motion", "angle", "lift", "law"}``."""
        out = []
        for motion, span, lift, law in self.segments:
            d = {"motion": motion, "angle": span}
            if motion != "dwell":
                d.update(lift=lift, law=law)
            out.append(d)
        return out


def _segment(entry, k, seg):
    where = f"{entry}: motion segment {k}"
    if isinstance(seg, dict):
        motion = seg.get("motion")
        extra = set(seg) - {"motion", "angle", "lift", "law"}
        if extra:
            raise ModelError(f"{where}: unknown field(s) {sorted(extra)} (expected motion, "
                             "angle, lift, law)")
        parts = [motion, seg.get("angle"), seg.get("lift"), seg.get("law")]
    elif isinstance(seg, (tuple, list)) and seg:
        parts = list(seg) + [None] * (4 - len(seg))
        if len(seg) > 4:
            raise ModelError(f"{where}: expected (motion, angle[, lift, law]), got {seg!r}")
    else:
        raise ModelError(f"{where}: expected a tuple (motion, angle[, lift, law]) or a "
                         f"mapping, got {seg!r}")
    motion, span, lift, law = parts
    if motion not in MOTIONS:
        raise ModelError(f"{where}: motion must be one of {', '.join(MOTIONS)}, got "
                         f"{motion!r}")
    from .._checks import real
    span = real(where, "angle", span, positive=True)
    if motion == "dwell":
        if lift not in (None, 0, 0.0) or law not in (None, ""):
            raise ModelError(f"{where}: a dwell takes no lift or law")
        return ("dwell", span, 0.0, "")
    lift = real(where, "lift", lift, positive=True)
    if law not in LAWS:
        raise ModelError(f"{where}: law must be one of {', '.join(LAWS)}, got {law!r}")
    return (motion, span, lift, law)


def motion_program(entry: str, segments) -> MotionProgram:
    """A checked :class:`MotionProgram`, or ModelError naming ``entry`` and the segment: the
    spans must add up to one turn (2 pi rad, to 1e-9 rad) and the returns must take back
    what the rises lifted (to 1e-9 of the largest lift), never going below the start."""
    if isinstance(segments, MotionProgram):
        return segments
    if not isinstance(segments, (list, tuple)) or not segments:
        raise ModelError(f"{entry}: motion must be a non-empty list of segments, got "
                         f"{segments!r}")
    segs = tuple(_segment(entry, k, s) for k, s in enumerate(segments))
    total = sum(s[1] for s in segs)
    if abs(total - TWO_PI) > 1e-9:
        raise ModelError(f"{entry}: the motion's segments span {total:.12g} rad; a program "
                         f"spans one cam turn, 2 pi = {TWO_PI:.12g} rad")
    level, top = 0.0, max(s[2] for s in segs)
    if top == 0.0:
        raise ModelError(f"{entry}: the motion has no rise (a cam that never lifts its "
                         "follower is a circle)")
    for k, (motion, _, lift, _) in enumerate(segs):
        level += lift if motion == "rise" else -lift if motion == "return" else 0.0
        if level < -1e-9 * top:
            raise ModelError(f"{entry}: motion segment {k} returns the follower "
                             f"{-level:.6g} below where the program starts")
    if abs(level) > 1e-9 * top:
        raise ModelError(f"{entry}: the motion ends {level:.6g} from where it starts; its "
                         "returns must take back what its rises lift")
    return MotionProgram(segs)


def measured_pieces(entry: str, points) -> tuple:
    """(start, coef) of the polar radius r(phi) of a measured profile through ``points``
    (m, n >= 8 of them, (x, y) in the cam's frame around its centre, in counterclockwise
    order, one turn): a periodic quintic spline (SciPy), or ModelError naming ``entry``."""
    from scipy.interpolate import PPoly, make_interp_spline

    try:
        p = np.asarray(points, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{entry}: profile must be an array (n, 2) of points, got "
                         f"{points!r}") from None
    if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 8 or not np.all(np.isfinite(p)):
        raise ModelError(f"{entry}: profile must be at least 8 finite points (x, y), got "
                         f"shape {p.shape}")
    r = np.hypot(p[:, 0], p[:, 1])
    if np.any(r <= 0.0):
        raise ModelError(f"{entry}: profile point {int(np.argmin(r))} lies on the cam's "
                         "centre")
    phi = np.unwrap(np.arctan2(p[:, 1], p[:, 0]))
    phi -= TWO_PI * math.floor(phi[0] / TWO_PI)
    dphi = np.diff(np.append(phi, phi[0] + TWO_PI))
    bad = np.flatnonzero(dphi <= 0.0)
    if bad.size or abs(phi[-1] - phi[0]) >= TWO_PI:
        k = int(bad[0]) + 1 if bad.size else len(phi) - 1
        raise ModelError(f"{entry}: profile points must go once counterclockwise around "
                         f"the cam's centre (a star-shaped profile); point {k % len(phi)} "
                         "does not")
    # start the pieces at phi = 0: rotate the points so the first is the first past 0
    order = np.argsort(np.mod(phi, TWO_PI), kind="stable")
    phi, r = np.mod(phi, TWO_PI)[order], r[order]
    x = np.append(phi, phi[0] + TWO_PI)
    spline = make_interp_spline(x, np.append(r, r[0]), k=5, bc_type="periodic")
    pp = PPoly.from_spline(spline)       # its breaks run past the data on both sides
    brk, c = pp.x, pp.c                  # c[k, i]: power (5 - k) on piece i
    inside = [i for i in range(len(brk) - 1)
              if brk[i + 1] > brk[i] and x[0] <= brk[i] < x[-1]]
    start, coef = [], []
    if x[0] > 0.0:                       # [0, x0) is the last piece's tail, a turn back
        last = inside[-1]
        start.append(0.0)
        coef.append(_shifted(c[:, last], brk[last] - TWO_PI, 0.0))
    for i in inside:
        start.append(float(brk[i]))
        coef.append(_shifted(c[:, i], brk[i], brk[i]))
    return np.array(start), np.array(coef)


def _shifted(c, x_from, x_to):
    """Coefficients (11,) in t = u - x_to of the polynomial sum c[k] (u - x_from)^(5 - k)."""
    poly = np.polynomial.Polynomial(c[::-1])
    shift = x_to - x_from
    moved = poly(np.polynomial.Polynomial([shift, 1.0]))
    out = np.zeros(NCOEF)
    out[:len(moved.coef)] = moved.coef[:8]
    return out


def _rot(c):
    return np.array([[np.cos(c), -np.sin(c)], [np.sin(c), np.cos(c)]])


@dataclass(frozen=True, eq=False)
class CamCurve:
    """What the kernels evaluate (``csrc/ld_cams.h``): the curve's ``kind`` (POINT, POLAR or
    FACE), its ``par`` (NPAR numbers) and the pieces of its law (``start``, ``coef``)."""

    kind: int
    par: tuple
    start: np.ndarray
    coef: np.ndarray

    def __eq__(self, other):
        return (isinstance(other, CamCurve) and self.kind == other.kind
                and self.par == other.par and np.array_equal(self.start, other.start)
                and np.array_equal(self.coef, other.coef))

    __hash__ = None

    def law(self, u, order: int = 0):
        """The law's ``order``-th derivative at ``u``."""
        return evaluate_pieces(self.start, self.coef, u, order)

    def point(self, u):
        """Q, Q', Q'' (each (n, 2)) of a POINT or POLAR curve at program angles u (n,)."""
        u = np.atleast_1d(np.asarray(u, dtype=float))
        s0, s1, s2 = (self.law(u, k) for k in range(3))
        p = self.par
        if self.kind in (POLAR, POLAR_FACE):
            e = np.stack([np.cos(u), np.sin(u)], axis=-1)
            je = np.stack([-e[:, 1], e[:, 0]], axis=-1)
            q0 = s0[:, None] * e
            q1 = s1[:, None] * e + s0[:, None] * je
            q2 = s2[:, None] * e + 2.0 * s1[:, None] * je - s0[:, None] * e
            return q0, q1, q2
        sigma, gamma, lam, kappa = p[0], p[1], p[3], p[4]
        a, b, L, beta0 = np.array(p[5:7]), np.array(p[7:9]), p[9], p[10]
        beta = beta0 + kappa * s0
        e = np.stack([np.cos(beta), np.sin(beta)], axis=-1)
        je = np.stack([-e[:, 1], e[:, 0]], axis=-1)
        w0 = a + lam * s0[:, None] * b + L * e
        w1 = lam * s1[:, None] * b + L * kappa * s1[:, None] * je
        w2 = lam * s2[:, None] * b + L * (kappa * s2[:, None] * je
                                           - kappa**2 * (s1**2)[:, None] * e)
        J = lambda w: np.stack([-w[:, 1], w[:, 0]], axis=-1)
        R = np.moveaxis(_rot(gamma - sigma * u), -1, 0)   # (n, 2, 2)
        turn = lambda w: np.einsum("nij,nj->ni", R, w)
        return turn(w0), turn(w1 - sigma * J(w0)), turn(w2 - 2.0 * sigma * J(w1) - w0)

    def support(self, u):
        """Psi, Psi', H, H', H'' (each (n,)) of a FACE curve at program angles u."""
        u = np.atleast_1d(np.asarray(u, dtype=float))
        s0, s1, s2 = (self.law(u, k) for k in range(3))
        p = self.par
        sigma, gamma, lam, kappa, c0 = p[0], p[1], p[3], p[4], p[5]
        A, psi0 = np.array(p[6:8]), p[8]
        phi = psi0 + kappa * s0
        ae, aj = A[0] * np.cos(phi) + A[1] * np.sin(phi), -A[0] * np.sin(phi) + A[1] * np.cos(phi)
        psi = gamma + phi - sigma * u
        dpsi = kappa * s1 - sigma
        H = c0 + lam * s0 + ae
        H1 = lam * s1 + kappa * s1 * aj
        H2 = lam * s2 + kappa * s2 * aj - kappa**2 * s1**2 * ae
        return psi, dpsi, H, H1, H2

    def face_profile(self, u):
        """Contact points (n, 2) on the cam and the radius of curvature h + h'' (n,) of a
        FACE curve at program angles u (a POLAR_FACE curve: of the surface at polar angles
        u)."""
        if self.kind == POLAR_FACE:
            q0, q1, q2 = self.point(u)
            cross = q1[:, 0] * q2[:, 1] - q1[:, 1] * q2[:, 0]
            with np.errstate(divide="ignore"):
                return q0, np.hypot(q1[:, 0], q1[:, 1]) ** 3 / cross
        psi, dpsi, H, H1, H2 = self.support(u)
        s2 = self.law(u, 2)
        kappa = self.par[4]
        dh = H1 / dpsi
        d2h = (H2 * dpsi - H1 * kappa * s2) / dpsi**3
        n = np.stack([np.cos(psi), np.sin(psi)], axis=-1)
        t = np.stack([-n[:, 1], n[:, 0]], axis=-1)
        return H[:, None] * n + dh[:, None] * t, H + d2h

    def point_curvature(self, u):
        """The signed radius of curvature (n,) of a POINT or POLAR curve at u: positive
        where the curve bends towards the cam's centre (convex)."""
        q0, q1, q2 = self.point(u)
        cross = q1[:, 0] * q2[:, 1] - q1[:, 1] * q2[:, 0]
        speed = np.hypot(q1[:, 0], q1[:, 1])
        turning = np.sign(q0[:, 0] * q1[:, 1] - q0[:, 1] * q1[:, 0])
        with np.errstate(divide="ignore"):
            return turning * speed**3 / cross

    def outward_normal(self, u):
        """Unit normals (n, 2) of a POINT or POLAR curve at u, pointing off the cam."""
        q0, q1, _ = self.point(u)
        t = q1 / np.hypot(q1[:, 0], q1[:, 1])[:, None]
        turning = np.sign(q0[:, 0] * q1[:, 1] - q0[:, 1] * q1[:, 0])
        return turning[:, None] * np.stack([t[:, 1], -t[:, 0]], axis=-1)
