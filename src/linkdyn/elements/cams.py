"""Cams and followers (planar): a cam turning about its centre drives a follower guided by a
prismatic joint (translating) or a revolute joint (oscillating), through a knife-edge, a
roller or a flat face. This module is the family's one home: its records, the checks of
their fields, their model-file form, the curve each pair generates from the description
(with :mod:`linkdyn.elements.cam_profiles`, its mathematics), what its constraint row is
(compiled by the coordinate family into the cam rows of :mod:`linkdyn.compile.angles`,
``csrc/ld_angles.c`` and ``csrc/ld_cams.c``) and the contact force and pressure angle read
back from the row's multiplier.

Conventions
-----------
* ``cam`` is the cam's centre, a point of the cam's body (the body's revolute joint to the
  frame, and what turns it, are the model's own); ``follower`` is the knife-edge's tip,
  the roller's centre or a point of the flat face, on the follower's body; ``guide`` the
  follower's revolute or prismatic joint to the frame.
* The profile is either a **motion program** (``motion=``: dwells, rises and returns with
  the standard laws of :mod:`~linkdyn.elements.cam_profiles`, the follower's lift in m, or
  in rad for an oscillating follower's arm) or a **measured profile** (``profile=``, points
  of the cam's surface in the cam body's frame around its centre; a flat face needs it
  convex). A program's curve is generated from the initial guesses: the cam
  turns counterclockwise (``turning="clockwise"``: the other way) from program angle
  ``phase`` at the start, and the follower's point is where the guide puts it at
  ``s(phase)``; the lift moves it away from the cam's centre (the roller and the knife
  along the guide, the flat face along its normal).
* A flat face's normal points from the cam to the follower: by default along the line
  from the cam's centre to the face's point in the initial guesses, else at
  ``face_angle`` rad in the follower body's frame.
* The pair is an exact higher pair, one constraint row ``"<name>.contact"`` (its value the
  gap): the follower keeps touching the cam, whether it presses or pulls (a grooved,
  form-closed cam). ``result.cam_force(name)`` is the normal contact force (positive
  pressing, N); negative values mark where a force-closed follower (held by a spring)
  would lift off. ``result.cam_pressure_angle(name)`` is the angle between the contact
  normal and the follower point's direction of motion.
* With ``contact={"stiffness", "exponent", "model", "damping" | "restitution"}`` (the laws
  of :mod:`linkdyn.elements.contacts`) the pair is force-closed instead: no row, but a
  one-sided compliant contact ``"<name>"`` on the gap, which pushes while the follower
  presses into the cam and lets go when it would pull, so that a follower held by a
  spring jumps off the cam at high speed and strikes it again (its lift-off and impact
  are events under the pair's name; ``result.element_work(name)`` is the energy its
  damping took). Such a contact is stiff: a follower that stays on its cam for many turns
  runs far faster with ``method="bdf"``.
* Undercutting (a roller larger than the pitch curve's convex radius, a flat face on a
  profile whose radius h + h'' turns negative) is reported with a ModelWarning naming the
  pair and the program angles; a roller larger than a measured profile's concave radius,
  or a flat face on a measured profile with a hollow, is an error.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._checks import real
from ..errors import ModelError, ModelWarning
from . import cam_profiles as cp
from .bodies import GROUND, PointRef, _element
from .contacts import MODELS, contact_mapping
from .joints import PrismaticSpec, RevoluteSpec
from .records import CAM, _Record

__all__ = ["CamFollowerSpec", "CamBuilder", "FILE_TYPES", "to_dict", "SHAPES", "TURNING",
           "contact_terms", "pressure_angle", "SAMPLES", "planar_records",
           "kernel_arrays"]

#: Follower shapes.
SHAPES = ("knife", "roller", "flat")
#: Senses the cam may turn in (the program's angle grows with the cam's turn).
TURNING = ("counterclockwise", "clockwise")
#: Program angles at which a profile is checked for undercutting.
SAMPLES = 4096


@dataclass(frozen=True)
class CamFollowerSpec:
    """A cam and its follower (see the module's conventions); ``curve`` is the curve the
    kernels hold the follower on, generated from the description."""

    name: str
    cam: PointRef
    follower: PointRef
    guide: str
    shape: str
    radius: float
    motion: cp.MotionProgram | None
    profile: tuple | None
    phase: float
    turning: str
    face_angle: float | None
    curve: cp.CamCurve = field(repr=False)
    #: the face's unit normal in the follower body's frame (a flat face), else None
    face_normal: tuple | None = None
    #: a force-closed follower's contact law (model, K, n, damping, restitution), else
    #: None (the exact pair)
    contact: tuple | None = None

    def lift(self, theta, order: int = 0) -> np.ndarray:
        """The program's displacement (``order`` 0) or its ``order``-th derivative with
        respect to the cam angle (1 to 3: velocity, acceleration and jerk per unit cam speed
        and its powers) at program angles ``theta`` (rad); a motion program only."""
        if self.motion is None:
            raise ModelError(f"cam follower '{self.name}': a measured profile has no motion "
                             "program")
        start, coef = self.motion.pieces()
        return cp.evaluate_pieces(start, coef, theta, order)

    def surface(self, n: int = 720) -> np.ndarray:
        """Points (n, 2) of the cam's surface in the cam body's frame (around its centre)."""
        c = self.curve
        u = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
        if c.kind in (cp.FACE, cp.POLAR_FACE):
            return c.face_profile(u)[0]
        q0 = c.point(u)[0]
        if c.kind == cp.POINT and self.radius:
            return q0 - self.radius * c.outward_normal(u)
        return q0

    def pressure_angle(self, theta) -> np.ndarray:
        """The pressure angle (rad, as ``result.cam_pressure_angle``) over program angles
        ``theta`` of a motion program: from the line along which the guide moves the
        follower's point of contact to the contact normal, from the profile alone."""
        if self.motion is None:
            raise ModelError(f"cam follower '{self.name}': a measured profile's pressure "
                             "angle depends on the motion; see result.cam_pressure_angle")
        c, u = self.curve, np.atleast_1d(np.asarray(theta, dtype=float))
        p = c.par
        turn = np.moveaxis(cp._rot(p[1] - p[0] * u), -1, 0)       # world -> cam frame
        rotate = lambda w: np.einsum("nij,nj->ni", turn, np.broadcast_to(w, (len(u), 2)))
        J = lambda w: np.stack([-w[:, 1], w[:, 0]], axis=-1)
        if c.kind == cp.POINT:
            normal = c.outward_normal(u)
            if p[4] == 0.0:                                  # translating: along b
                motion = rotate(np.array(p[7:9]))
            else:                                            # about the pivot a
                q0 = c.point(u)[0]
                motion = J(q0 - rotate(np.array(p[5:7])))
            return pressure_angle(normal, motion)
        psi = c.support(u)[0]
        normal = np.stack([np.cos(psi), np.sin(psi)], axis=-1)
        if p[4] == 0.0:                    # translating: the face's normal against the guide
            return np.full(len(u), math.acos(min(1.0, p[3])))
        contact = c.face_profile(u)[0]
        return pressure_angle(normal, J(contact - rotate(np.array(p[6:8]))))

    def curvature_radius(self, theta) -> np.ndarray:
        """The radius of curvature (m) of the cam's surface where it touches the follower at
        program angles ``theta`` (a measured profile: at polar angles), positive convex."""
        c = self.curve
        if c.kind in (cp.FACE, cp.POLAR_FACE):
            return c.face_profile(theta)[1]
        rho = c.point_curvature(theta)
        return rho - self.radius if c.kind == cp.POINT else rho


def _joint_axis(builder, joint) -> np.ndarray:
    """A prismatic joint's axis in the initial guesses (world frame)."""
    base = 0.0
    if joint.first[0] != GROUND:
        ux, uy = builder._bodies[joint.first[0]].u
        base = math.atan2(uy, ux)
    return np.array([math.cos(base + joint.axis), math.sin(base + joint.axis)])


def _body_angle(builder, body) -> float:
    if body == GROUND:
        return 0.0
    ux, uy = builder._bodies[body].u
    return math.atan2(uy, ux)


def _span_text(u, bad) -> str:
    """The program angles where ``bad`` holds, as ranges in degrees."""
    idx = np.flatnonzero(bad)
    groups = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)
    parts = [f"{math.degrees(u[g[0]]):.1f}-{math.degrees(u[g[-1]]):.1f} deg" for g in groups]
    return ", ".join(parts[:4]) + (" ..." if len(parts) > 4 else "")


def _point_curve(entry, O, C0, guide, builder, s0, sigma, gamma):
    """The par of a POINT curve (knife or roller on the pitch curve)."""
    r0 = C0 - O
    if isinstance(guide, PrismaticSpec):
        d = _joint_axis(builder, guide)
        along = float(d @ r0)
        if abs(along) <= 1e-9 * np.linalg.norm(r0):
            raise ModelError(f"{entry}: the guide '{guide.name}' moves the follower across "
                             "the line to the cam's centre (a pressure angle of 90 degrees)")
        d = d if along > 0.0 else -d
        a = r0 - s0 * d
        return (sigma, gamma, 0.0, 1.0, 0.0, a[0], a[1], d[0], d[1], 0.0, 0.0, 0.0)
    pivot = builder._gear_point_guess(guide.first)
    arm = C0 - pivot
    L = float(np.linalg.norm(arm))
    if L <= 1e-12:
        raise ModelError(f"{entry}: the follower's point lies on its guide's pivot "
                         f"'{guide.name}'")
    turn = float(r0 @ np.array([-arm[1], arm[0]]))
    if abs(turn) <= 1e-9 * L * np.linalg.norm(r0):
        raise ModelError(f"{entry}: the follower's arm points at the cam's centre (its "
                         "motion is across the line to it: a pressure angle of 90 degrees)")
    kappa = 1.0 if turn > 0.0 else -1.0
    a = pivot - O
    beta0 = math.atan2(arm[1], arm[0]) - kappa * s0
    return (sigma, gamma, 0.0, 0.0, kappa, a[0], a[1], 0.0, 0.0, L, beta0, 0.0)


def _face_curve(entry, O, C0, n0, guide, builder, s0, sigma, gamma):
    """The par of a FACE curve."""
    r0 = C0 - O
    if isinstance(guide, PrismaticSpec):
        d = _joint_axis(builder, guide)
        lam = float(n0 @ d)
        if abs(lam) <= 1e-9:
            raise ModelError(f"{entry}: the flat face is parallel to its guide "
                             f"'{guide.name}' (the cam could not move it)")
        lam = abs(lam)
        c0 = float(n0 @ r0) - lam * s0
        return (sigma, gamma, 0.0, lam, 0.0, c0, 0.0, 0.0, math.atan2(n0[1], n0[0]), 0.0,
                0.0, 0.0)
    pivot = builder._gear_point_guess(guide.first)
    A = pivot - O
    turn = float(A @ np.array([-n0[1], n0[0]]))
    if abs(turn) <= 1e-9 * np.linalg.norm(A):
        raise ModelError(f"{entry}: the flat face's normal points along the line from the "
                         "cam's centre to the guide's pivot (turning the arm would not move "
                         "the face away from the cam)")
    kappa = 1.0 if turn > 0.0 else -1.0
    c0 = float(n0 @ (C0 - pivot))
    psi0 = math.atan2(n0[1], n0[0]) - kappa * s0
    return (sigma, gamma, 0.0, 0.0, kappa, c0, A[0], A[1], psi0, 0.0, 0.0, 0.0)


def _warn_undercut(entry, spec_shape, radius, curve):
    u = np.linspace(0.0, 2.0 * math.pi, SAMPLES, endpoint=False)
    if curve.kind == cp.POLAR_FACE:
        rho = curve.face_profile(u)[1]
        bad = ~(rho > 0.0)
        if bad.any():
            raise ModelError(f"{entry}: a flat face follows a convex profile; the measured "
                             f"profile is concave at polar angles {_span_text(u, bad)}")
        return
    if curve.kind == cp.FACE:
        rho = curve.face_profile(u)[1]
        bad = rho <= 0.0
        what = "the profile's radius of curvature h + h'' is not positive"
    elif curve.kind == cp.POINT:
        rho = curve.point_curvature(u)
        bad = (rho > 0.0) & (rho <= radius)
        what = f"the pitch curve's convex radius is below the roller's {radius:g} m"
    else:
        rho = curve.point_curvature(u)
        bad = (rho < 0.0) & (-rho <= radius)
        if bad.any():
            raise ModelError(f"{entry}: the roller (radius {radius:g} m) is larger than the "
                             f"measured profile's concave radius {float(-rho[bad].max()):.6g}"
                             f" m at polar angles {_span_text(u, bad)}")
        return
    if bad.any():
        warnings.warn(f"{entry}: the cam is undercut at program angles {_span_text(u, bad)}"
                      f" ({what}; smallest {float(rho[bad].min()):.6g} m): the follower "
                      "keeps the motion law, but a cam so cut would not", ModelWarning,
                      stacklevel=4)


class CamBuilder:
    """The cam method of :class:`linkdyn.ModelBuilder` (a mixin: it uses the builder's
    tables and reference checks)."""

    def _face_normal(self, entry, c, f, O, C0, face_angle):
        """A flat face's unit normal: in the follower body's frame, and in the world at the
        start."""
        theta_f = _body_angle(self, f[0])
        if face_angle is None:
            n0 = (C0 - O) / np.linalg.norm(C0 - O)
        else:
            n0 = np.array([math.cos(theta_f + face_angle), math.sin(theta_f + face_angle)])
            if n0 @ (C0 - O) <= 0.0:
                raise ModelError(f"{entry}: face_angle {face_angle!r} turns the face's "
                                 "normal towards the cam; it points from the cam to the "
                                 "follower")
        angle = math.atan2(n0[1], n0[0]) - theta_f
        return (math.cos(angle), math.sin(angle)), n0

    def _cam_guide(self, entry, guide, follower_body, cam_body):
        spec = self._joints.get(guide) if isinstance(guide, str) else None
        if not isinstance(spec, (RevoluteSpec, PrismaticSpec)):
            known = [n for n, j in self._joints.items()
                     if isinstance(j, (RevoluteSpec, PrismaticSpec))]
            raise ModelError(f"{entry}: guide must name the follower's revolute or prismatic "
                             f"joint (joints: {', '.join(known) or 'none'}), got {guide!r}")
        bodies = (spec.first[0], spec.second[0])
        if follower_body not in bodies:
            raise ModelError(f"{entry}: the guide '{guide}' joins {bodies[0]!r} and "
                             f"{bodies[1]!r}, not the follower's body {follower_body!r}")
        if cam_body in bodies:
            raise ModelError(f"{entry}: the guide '{guide}' must join the follower to the "
                             f"frame, not to the cam's body {cam_body!r}")
        return spec

    def add_cam_follower(self, name: str, cam, follower, *, guide: str, motion=None,
                         profile=None, shape="roller", radius=0.0, phase=0.0,
                         turning="counterclockwise", face_angle=None, contact=None) -> None:
        """A cam centred at point ``cam`` (``"body.point"``) driving a follower through
        its point ``follower`` (the knife's tip, the roller's centre, a point of the flat
        face), guided by joint ``guide`` (prismatic: translating, revolute: oscillating).
        Give either ``motion`` (a program of dwells, rises and returns) or ``profile``
        (measured points of the cam's surface; convex for a flat face); ``shape``
        is "knife", "roller" (of ``radius`` m) or "flat". Without ``contact`` the pair is
        exact and holds the follower on; ``contact={"stiffness", "exponent", "model",
        "damping" | "restitution"}`` makes it a one-sided compliant contact (a follower that
        a spring holds, and that can lift off). See :mod:`linkdyn.elements.cams` and
        :mod:`linkdyn.elements.cam_profiles`."""
        name = self._new_name("cam follower", name)
        entry = f"cam follower '{name}'"
        with _element(name):
            c, f = self._ref(entry, cam), self._ref(entry, follower)
            if c[0] == GROUND:
                raise ModelError(f"{entry}: the cam's centre must be a point of the cam's "
                                 "body, not of the ground")
            if f[0] in (GROUND, c[0]):
                raise ModelError(f"{entry}: the follower's point must lie on a body other "
                                 f"than the cam's, got '{'.'.join(f)}'")
            g = self._cam_guide(entry, guide, f[0], c[0])
            if shape not in SHAPES:
                raise ModelError(f"{entry}: shape must be one of {', '.join(SHAPES)}, got "
                                 f"{shape!r}")
            radius = real(entry, "radius", radius, nonnegative=True)
            if (shape == "roller") != (radius > 0.0):
                raise ModelError(f"{entry}: a roller needs a positive radius, a knife-edge "
                                 f"or flat face none; got shape {shape!r}, radius {radius!r}")
            if turning not in TURNING:
                raise ModelError(f"{entry}: turning must be one of {', '.join(TURNING)}, "
                                 f"got {turning!r}")
            phase = real(entry, "phase", phase)
            if face_angle is not None:
                if shape != "flat":
                    raise ModelError(f"{entry}: face_angle is for a flat face")
                face_angle = real(entry, "face_angle", face_angle)
            law = None if contact is None else contact_mapping(entry, contact)
            spec = self._cam_spec(entry, name, c, f, g, shape, radius, motion, profile,
                                  phase, turning, face_angle)
        self._cams[name] = dataclasses.replace(spec, contact=law)

    def _cam_spec(self, entry, name, c, f, g, shape, radius, motion, profile, phase,
                  turning, face_angle):
        if (motion is None) == (profile is None):
            raise ModelError(f"{entry}: give either motion (a program) or profile (measured "
                             "points), not both or neither")
        O, C0 = self._gear_point_guess(c), self._gear_point_guess(f)
        face_normal = None
        if np.linalg.norm(C0 - O) <= 1e-12:
            raise ModelError(f"{entry}: the follower's point lies on the cam's centre in the "
                             "initial guesses")
        if shape == "flat":
            face_normal, n0 = self._face_normal(entry, c, f, O, C0, face_angle)
        if profile is not None:
            start, coef = cp.measured_pieces(entry, profile)
            pts = tuple(tuple(float(x) for x in p) for p in np.asarray(profile, float))
            kind = cp.POLAR_FACE if shape == "flat" else cp.POLAR
            curve = cp.CamCurve(kind, (0.0, 0.0, radius) + (0.0,) * 9, start, coef)
            _warn_undercut(entry, shape, radius, curve)
            return CamFollowerSpec(name, c, f, g.name, shape, radius, None, pts, phase,
                                   turning, face_angle, curve, face_normal)
        program = cp.motion_program(entry, motion)
        start, coef = program.pieces()
        s0 = float(cp.evaluate_pieces(start, coef, phase))
        sigma = 1.0 if turning == "counterclockwise" else -1.0
        gamma = sigma * phase - _body_angle(self, c[0])
        if shape == "flat":
            par = _face_curve(entry, O, C0, n0, g, self, s0, sigma, gamma)
            curve = cp.CamCurve(cp.FACE, par, start, coef)
        else:
            par = _point_curve(entry, O, C0, g, self, s0, sigma, gamma)
            curve = cp.CamCurve(cp.POINT, par, start, coef)
        _warn_undercut(entry, shape, radius, curve)
        return CamFollowerSpec(name, c, f, g.name, shape, radius, program, None, phase,
                               turning, face_angle, curve, face_normal)


#: Model-file entry types: method, required fields, optional fields (besides type, name).
FILE_TYPES = {
    "cam_follower": ("add_cam_follower", {"cam", "follower", "guide"},
                     {"motion", "profile", "shape", "radius", "phase", "turning",
                      "face_angle", "contact"}),
}


def to_dict(spec: CamFollowerSpec) -> dict:
    """The model-file form of a cam and its follower."""
    d = {"type": "cam_follower", "name": spec.name, "cam": ".".join(spec.cam),
         "follower": ".".join(spec.follower), "guide": spec.guide, "shape": spec.shape}
    if spec.radius:
        d["radius"] = spec.radius
    if spec.motion is not None:
        d["motion"] = spec.motion.to_list()
    else:
        d["profile"] = [list(p) for p in spec.profile]
    if spec.phase:
        d["phase"] = spec.phase
    if spec.turning != "counterclockwise":
        d["turning"] = spec.turning
    if spec.face_angle is not None:
        d["face_angle"] = spec.face_angle
    if spec.contact is not None:
        model, k, n, c, e = spec.contact
        d["contact"] = {"model": model, "stiffness": k, "exponent": n,
                        **({"damping": c} if model == "hertz" else {"restitution": e})}
    return d


def contact_terms(spec: CamFollowerSpec) -> tuple:
    """What the pair's row is, for the coordinate family to place in q: ("point", cam
    centre, follower point) for the gap of the follower's point in the cam's frame, or
    ("face", cam centre, face point, face normal in the follower's frame) for the face's
    distance minus the cam's support at the face's normal angle."""
    if spec.curve.kind in (cp.FACE, cp.POLAR_FACE):
        return ("face", spec.cam, spec.follower, spec.face_normal)
    return ("point", spec.cam, spec.follower)


def pressure_angle(normal, motion) -> np.ndarray:
    """The signed angle (rad, in [-pi/2, pi/2]) from the line of the follower point's motion
    ``motion`` to the contact normal ``normal`` (both (n, 2), world frame; either sense)."""
    normal, motion = np.atleast_2d(normal), np.atleast_2d(motion)
    dot = np.sum(motion * normal, axis=1)
    motion = np.where(dot[:, None] < 0.0, -motion, motion)
    cross = motion[:, 0] * normal[:, 1] - motion[:, 1] * normal[:, 0]
    return np.arctan2(cross, np.abs(dot))


def planar_records(desc, body_index, local_of) -> list:
    """The contact records of a planar description's force-closed followers: each a CAM
    record (``csrc/ld_forces.h``) from the cam's centre to the follower's point, whose
    coordinate is the gap, with its contact law (sense +1, gap 0)."""
    out = []
    for index, spec in enumerate(getattr(desc, "cams", ())):
        if spec.contact is None:
            continue
        bc, bf = body_index[spec.cam[0]], body_index[spec.follower[0]]
        normal = spec.face_normal if spec.face_normal is not None else (1.0, 0.0)
        rec = _Record(spec.name, CAM, (bc, bf), (*local_of(bc, spec.cam[1]),
                                                  *local_of(bf, spec.follower[1]), *normal))
        model, k, n, c, e = spec.contact
        rec.law = MODELS[model]
        rec.law_par = (k, n, c if model == "hertz" else e, 0.0)
        rec.cam = index
        out.append(rec)
    return out


def kernel_arrays(desc) -> dict:
    """The cam table of ``csrc/ld_cams.h`` for a description's cams, in their order (cam
    rows and cam records name a cam by its place here)."""
    curves = [spec.curve for spec in getattr(desc, "cams", ())]
    first = np.cumsum([0] + [len(c.start) for c in curves])
    return dict(
        cam_kind=np.array([c.kind for c in curves], dtype=np.intc),
        cam_par=np.array([c.par for c in curves], dtype=float).reshape(-1),
        cam_first=first.astype(np.intc),
        cam_start=(np.concatenate([np.asarray(c.start, float) for c in curves])
                   if curves else np.zeros(0)),
        cam_coef=(np.concatenate([np.asarray(c.coef, float).reshape(-1) for c in curves])
                  if curves else np.zeros(0)))
