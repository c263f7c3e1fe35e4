"""Design metrics of linkages.

:func:`grashof` classifies a four-bar by its link lengths (Grashof's criterion: with s the
shortest and l the longest link and p, q the others, some link turns fully relative to the
others exactly when s + l <= p + q). :func:`transmission_angle` follows the angle between two
links at the joint that connects them over a computed motion: the angle at which the coupler
drives the output link, best near 90 degrees; a designer keeps it above about 40 degrees
(and below 140) over the whole cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..elements.bodies import GROUND
from ..elements.joints import RevoluteSpec
from ..errors import ArgumentError, ArgumentTypeError, ModelError, counted, name_list
from ..compile.geometry import PointGeometry
from ..compile.model import checked_positive

__all__ = ["Grashof", "grashof", "transmission_angle", "mechanical_advantage",
           "limit_positions", "dead_centres", "Position", "coupler_curve", "CouplerCurve",
           "input_torque"]

#: Relative tolerance of the Grashof sum comparison (change-point linkages are equal to it).
GRASHOF_TOL = 1e-12

#: A body whose angle moves less than this (rad) over a motion does not turn: it has no
#: limit positions (its angle is computed to round-off, some 1e-15 rad).
TURN_TOL = 1e-9


@dataclass(frozen=True)
class Grashof:
    """A four-bar's class.

    ``kind``: "crank-rocker" (the shortest link is the input, next to the ground, and turns
    fully), "double-crank" (the shortest link is the ground: both side links turn fully),
    "double-rocker" (Grashof, the shortest link is the coupler: it turns fully, the side
    links rock), "change-point" (s + l = p + q: the linkage passes through a folded
    configuration where it can change branch) or "triple-rocker" (not Grashof: no link turns
    fully). ``grashof``: s + l < p + q. ``margin``: (p + q) - (s + l), in the lengths' unit.
    ``shortest``: which link is the shortest ("ground", "input", "coupler", "output")."""

    kind: str
    grashof: bool
    margin: float
    shortest: str


def grashof(ground: float, input: float, coupler: float, output: float) -> Grashof:
    """Classify a four-bar from its link lengths: ``ground`` (the fixed pivots' distance),
    ``input`` and ``output`` (the side links at the ground pivots) and ``coupler``."""
    lengths = {}
    for name, value in (("ground", ground), ("input", input), ("coupler", coupler),
                        ("output", output)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value > 0):
            raise ArgumentError(f"grashof: the {name} length must be a positive number, got "
                                f"{value!r}")
        lengths[name] = float(value)
    order = sorted(lengths, key=lambda k: lengths[k])
    s, l = lengths[order[0]], lengths[order[-1]]
    p, q = (lengths[k] for k in order[1:3])
    margin = (p + q) - (s + l)
    if abs(margin) <= GRASHOF_TOL * (p + q):
        return Grashof("change-point", False, 0.0, order[0])
    if margin < 0:
        return Grashof("triple-rocker", False, margin, order[0])
    kind = {"ground": "double-crank", "input": "crank-rocker", "output": "crank-rocker",
            "coupler": "double-rocker"}[order[0]]
    return Grashof(kind, True, margin, order[0])


def checked_result(result, what: str, planar: bool = True, coordinates: bool = True):
    """The model of ``result``, a kinematics or simulation result (anything with a
    ``model``, times ``t`` and, with ``coordinates``, the rows ``q``; a planar model's with
    ``planar``), or an error that names ``what`` asked for it."""
    model = getattr(result, "model", None)
    if model is None or not hasattr(result, "t"):
        raise ArgumentTypeError(f"{what}: expected the result of linkdyn.kinematics or "
                                f"linkdyn.simulate, got {type(result).__name__}")
    if coordinates and getattr(result, "q", None) is None:
        raise ArgumentError(f"{what}: the result has no coordinates (a run that kept only "
                            "recorded series)")
    if planar and model.space != "planar":
        raise ModelError(f"{what}: planar models only (spherical and spatial linkages have "
                         "no single plane of motion)")
    return model


def transmission_angle(result, joint: str) -> np.ndarray:
    """The angle (rad, in [0, pi]) between the two links that revolute ``joint`` connects, at
    every row of a kinematics or simulation result: each link's line runs from the joint to
    the link's other joint (a revolute one first, else any other joint of the link, such as
    a slider's), else to its centre of mass, else to another of its named points: the first
    of these that is not at the joint itself. For a four-bar and the coupler-output joint it
    is the transmission angle.

    Raises
    ------
    ArgumentError
        ``joint`` is not a revolute joint between two moving links, or one of its links has
        no point other than the joint's own (its line has no direction).
    """
    model = checked_result(result, "transmission_angle")
    at, arms = _link_arms(model, joint, np.asarray(result.q), "transmission_angle")
    cos = np.einsum("ij,ij->i", arms[0], arms[1]) / (
        np.linalg.norm(arms[0], axis=1) * np.linalg.norm(arms[1], axis=1))
    return np.arccos(np.clip(cos, -1.0, 1.0))


def _link_arms(model, joint, q, what) -> tuple:
    """(the joint's point, [each link's line from it]) at every row of ``q`` (n, 2 arrays),
    or an error naming ``joint`` (see :func:`transmission_angle`)."""
    spec = model.joint_spec(joint)
    if not isinstance(spec, RevoluteSpec) or GROUND in (spec.first[0], spec.second[0]):
        raise ArgumentError(f"{what}: joint {joint!r} must be a revolute joint between two "
                            "moving links")
    ends = [_far_point(model, spec, body) for body in (spec.first[0], spec.second[0])]
    for body, end in zip((spec.first[0], spec.second[0]), ends):
        if end is None:
            raise ArgumentError(f"{what}: link {body!r} of joint {joint!r} has no point other "
                                "than the joint's own (no other joint, its centre of mass at "
                                "the joint): its line has no direction")
    geo = PointGeometry(model, q)
    rows = np.arange(len(q))
    at = geo.ref(spec.first, rows)
    return at, [geo.ref(end, rows) - at for end in ends]


def has_link_lines(model, joint: str) -> bool:
    """Whether both links of revolute ``joint`` have a line (see :func:`transmission_angle`)."""
    spec = model.joint_spec(joint)
    return all(_far_point(model, spec, body) is not None
               for body in (spec.first[0], spec.second[0]))


def _far_point(model, spec, body):
    """The point (body, name) of ``body`` its link line runs to from ``spec``'s point, or
    None where every candidate is at that point (see :func:`transmission_angle`)."""
    own = spec.first if spec.first[0] == body else spec.second
    local = next(b for b in model.description.bodies if b.name == body).local_points()
    origin = np.asarray(local[own[1]], dtype=float)
    size = max(1.0, max(float(np.abs(np.asarray(x, dtype=float)).max()) for x in local.values()))
    others = [j for j in model.description.joints if j.name != spec.name]
    revolute = [end for j in others if isinstance(j, RevoluteSpec) for end in (j.first, j.second)]
    other = [end for j in others if not isinstance(j, RevoluteSpec)
             for end in (getattr(j, "first", None), getattr(j, "second", None))
             if isinstance(end, tuple)]
    for end in revolute + other + [(body, "cm")] + [(body, name) for name in local]:
        if end[0] == body and end[1] in local and \
                np.abs(np.asarray(local[end[1]], dtype=float) - origin).max() > 1e-12 * size:
            return end
    return None


def mechanical_advantage(result, input_body: str, output_body: str) -> np.ndarray:
    """The mechanical advantage (n,) of a one-degree-of-freedom planar linkage between two
    turning bodies: output torque over input torque, which for a linkage without losses is
    the input's angular velocity over the output's, ``w_in / w_out`` (signed). It is
    infinite where the output stops (a toggle, or a rocker at its limit positions)."""
    w_in = _angular_velocity(result, input_body, "mechanical_advantage")
    w_out = _angular_velocity(result, output_body, "mechanical_advantage")
    with np.errstate(divide="ignore", invalid="ignore"):
        return w_in / w_out


def _angular_velocity(result, body, what):
    checked_result(result, what)
    if body not in result.model.body_names:
        raise ArgumentError(f"{what}: model {result.model.name!r} has no body {body!r} "
                            f"(bodies: {name_list(result.model.body_names)})")
    return np.asarray(result.body_angular_velocity(body), dtype=float)


def _crossings(t, values):
    """Times where ``values`` changes sign between rows (linear interpolation) or is zero
    at a row, and the row before each."""
    t, values = np.asarray(t, dtype=float), np.asarray(values, dtype=float)
    out = []
    if not np.any(values != 0.0):       # identically zero: nothing changes sign
        return out
    for i in range(len(t) - 1):
        a, b = values[i], values[i + 1]
        if a == 0.0 and (i == 0 or values[i - 1] != 0.0):
            out.append((float(t[i]), i))
        elif a * b < 0.0:
            out.append((float(t[i] + (t[i + 1] - t[i]) * a / (a - b)), i))
    return out


@dataclass(frozen=True)
class Position:
    """A special position of a linkage: the time it is reached (s, interpolated between
    output rows), what it is ("limit": a body's rotation reverses; "dead centre": the two
    links at a joint line up, folded (angle 0) or extended (pi)) and ``value`` (the body's
    angle at a limit, rad; the transmission angle at a dead centre, 0 or pi)."""

    t: float
    kind: str
    value: float


def limit_positions(result, body: str) -> list:
    """Where ``body`` (a rocker) reverses: the times its angular velocity changes sign, with
    its angle there (rad; the rocker's extreme positions over the motion). A body that does
    not turn (its angle keeps within TURN_TOL, a slider on a fixed guide) has none."""
    w = _angular_velocity(result, body, "limit_positions")
    angle = np.asarray(result.body_angle(body), dtype=float)
    if len(angle) == 0 or np.ptp(angle) <= TURN_TOL:
        return []
    out = []
    for tc, i in _crossings(result.t, w):
        j = min(i + 1, len(angle) - 1)
        s = (tc - result.t[i]) / (result.t[j] - result.t[i]) if j > i else 0.0
        out.append(Position(tc, "limit", float(angle[i] + s * (angle[j] - angle[i]))))
    return out


def dead_centres(result, joint: str) -> list:
    """Where the two links that revolute ``joint`` connects line up (the transmission angle
    reaches 0 or pi): the times the cross product of the links' lines changes sign, with the
    angle there. At such a position of a four-bar's coupler-output joint the input cannot
    drive the output."""
    model = checked_result(result, "dead_centres")
    mu = transmission_angle(result, joint)
    _, arms = _link_arms(model, joint, np.asarray(result.q), "dead_centres")
    cross = arms[0][:, 0] * arms[1][:, 1] - arms[0][:, 1] * arms[1][:, 0]
    return [Position(tc, "dead centre", 0.0 if mu[i] < math.pi / 2 else math.pi)
            for tc, i in _crossings(result.t, cross)]


@dataclass(frozen=True)
class CouplerCurve:
    """Features of the path a marker traces (a coupler curve).

    ``points`` (n, 2); ``extent`` (x_min, x_max, y_min, y_max), ``width`` and ``height`` (m);
    ``length``: the path's length (m); ``closed``: whether it returns to its start (to
    1e-9 of its size); ``double_points``: (t1, t2, x, y) where the path crosses itself;
    ``cusps``: (t, x, y) where the point stops and turns back (its speed has a local minimum
    below ``cusp_speed`` times its largest)."""

    points: np.ndarray
    extent: tuple
    width: float
    height: float
    length: float
    closed: bool
    double_points: tuple
    cusps: tuple

    def __repr__(self) -> str:
        return (f"<CouplerCurve: {counted(len(self.points), 'point')}, {self.width:.6g} by "
                f"{self.height:.6g} m, length {self.length:.6g} m, "
                f"{'closed' if self.closed else 'open'}, "
                f"{counted(len(self.double_points), 'double point')}, "
                f"{counted(len(self.cusps), 'cusp')}>")


def coupler_curve(result, marker: str, cusp_speed: float = 1e-3) -> CouplerCurve:
    """The features of the path ``marker`` traces along ``result`` (a planar kinematics or
    simulation result): extent, length, double points (self-crossings, located on the
    polyline of the output rows) and cusps. Over one cycle: where the motion repeats (at a
    row the mechanism is back in its first row's configuration with its velocities, as
    after a crank's whole turn), the rows after it trace the same curve again and are left
    out (its retraced segments would cross it everywhere)."""
    if checked_result(result, "coupler_curve", False, False).marker_dimension != 2:
        raise ModelError("coupler_curve: planar markers only")
    if cusp_speed != 0:
        cusp_speed = checked_positive("coupler_curve: cusp_speed (a fraction of the largest "
                                      "speed)", cusp_speed)
    P = np.asarray(result.marker(marker), dtype=float)
    t = np.asarray(result.t, dtype=float)
    if len(P) < 3:
        raise ArgumentError("coupler_curve: the result needs at least three rows")
    speeds = np.asarray(result.marker_velocity(marker), dtype=float)
    end = cycle_end(result, P, speeds)
    P, t, speeds = P[:end], t[:end], speeds[:end]
    lo, hi = P.min(axis=0), P.max(axis=0)
    size = float(np.max(hi - lo)) or 1.0
    seg = np.diff(P, axis=0)
    closed = bool(np.linalg.norm(P[-1] - P[0]) <= 1e-9 * size)
    doubles = []
    a0, d = P[:-1], seg
    m = len(seg)
    for i in range(m - 2):
        j = np.arange(i + 2, m)
        if closed and i == 0:
            j = j[j != m - 1]            # the last segment meets the first at the start
        if not len(j):
            continue
        # a0[i] + s d[i] = a0[j] + u d[j], s and u in [0, 1)
        det = d[i, 0] * d[j, 1] - d[i, 1] * d[j, 0]
        ok = np.abs(det) > 1e-300
        w = a0[j] - a0[i]
        s = np.where(ok, (w[:, 0] * d[j, 1] - w[:, 1] * d[j, 0]) / np.where(ok, det, 1), -1)
        u = np.where(ok, (w[:, 0] * d[i, 1] - w[:, 1] * d[i, 0]) / np.where(ok, det, 1), -1)
        for k in np.flatnonzero((s >= 0) & (s < 1) & (u >= 0) & (u < 1)):
            jj = j[k]
            x, y = a0[i] + s[k] * d[i]
            doubles.append((float(t[i] + s[k] * (t[i + 1] - t[i])),
                            float(t[jj] + u[k] * (t[jj + 1] - t[jj])), float(x), float(y)))
    speed = np.linalg.norm(speeds, axis=1)
    top = float(speed.max()) or 1.0
    # On a closed curve the first row (the same point as the last) has neighbours too.
    before = np.concatenate([[speed[-2] if closed else np.inf], speed[:-2]])
    after = speed[1:]
    rows = range(0 if closed else 1, len(t) - 1)
    cusps = tuple((float(t[i]), float(P[i, 0]), float(P[i, 1])) for i in rows
                  if speed[i] <= before[i] and speed[i] <= after[i]
                  and speed[i] < cusp_speed * top)
    return CouplerCurve(P, (float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])),
                        float(hi[0] - lo[0]), float(hi[1] - lo[1]),
                        float(np.sum(np.linalg.norm(seg, axis=1))), closed, tuple(doubles),
                        cusps)


def cycle_end(result, P, V) -> int:
    """The number of rows of the first cycle: up to and with the first row (after the
    first two) where the state repeats the first row's, to 1e-9 of the coordinates' scale
    and 1e-6 of the velocities' (the mechanism's coordinates and velocities; a result
    without them, the marker's own), or all of them."""
    q, v = getattr(result, "q", None), getattr(result, "v", None)
    x, dx = (P, V) if q is None or v is None else (np.asarray(q), np.asarray(v))
    if len(x) < 4:
        return len(x)
    near = np.abs(x[2:] - x[0]).max(axis=1) <= 1e-9 * max(1.0, float(np.abs(x).max()))
    same = np.abs(dx[2:] - dx[0]).max(axis=1) <= 1e-6 * max(float(np.abs(dx).max()), 1e-300)
    repeats = np.flatnonzero(near & same)
    return int(repeats[0]) + 3 if len(repeats) else len(x)


def input_torque(result, driver: str) -> np.ndarray:
    """What driver ``driver`` must apply (n,) to move a fully driven model along a kinematic
    analysis: kinetostatics, the multipliers of M a + Phi_q^T lam = Q(q, v, t) at each row
    (gravity and force elements included), in the sign convention of
    :meth:`linkdyn.SimulationResult.driver_effort` (N m for an angle driver, N for a slide
    or coordinate driver)."""
    model = checked_result(result, "input_torque", planar=False)
    if not model.dynamic or getattr(model.description, "kinematic", False):
        raise ModelError(f"input_torque: model {model.name!r} is kinematic only (its masses "
                         "are placeholders)")
    if driver not in model.driver_names:
        raise ArgumentError(f"input_torque: model {model.name!r} has no driver {driver!r} "
                            f"(drivers: {name_list(model.driver_names)})")
    from scipy.sparse.linalg import splu

    row = model.constraint_names.index(driver)
    out = np.empty(len(result.t))
    for i, (t, q, v, a) in enumerate(zip(result.t, result.q, result.v, result.a)):
        rhs = model.force(q, v, t) - model.mass * a
        lam = splu(model.phi_q(q, t).T.tocsc()).solve(rhs)
        out[i] = -lam[row]
    return out
