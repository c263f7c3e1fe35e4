"""The builder calls every reader ends in: parts (a format's links or bodies, with their
poses and velocities at the start) and connections (its joints and loop closures, with
their world anchors and axes) turned into a spatial model.

A reader gives each part an owner: the part itself (a body), the body a massless frame is
fixed to, or ``"ground"``. Every connection between two owners becomes one joint; the
points it needs are made on each owner (in its axes, about its centre of mass) or on the
ground. A joint named like a part is ``"<name>/joint"``: a linkdyn model's names are one
namespace, the formats' are not.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, ModelWarning
from .geometry import element_errors

__all__ = ["Connection", "Part", "build", "check_pose_options", "say_not_imported",
           "drake_ball", "ball_name", "stop_law", "ratio_coupling", "scalar_coupling"]

#: Connection kinds and the builder's joints.
KINDS = ("revolute", "prismatic", "cylindrical", "planar", "planar_slide", "rigid", "spherical",
         "universal")


@dataclass
class Part:
    """A link (a body, or a frame of one): mass (kg), inertia about the centre of mass in
    its axes, the centre ``com`` in its axes from its origin, its axes ``R`` (to world) and
    origin ``o`` at the start, the origin's velocity ``v`` and the angular velocity ``w``."""
    name: str
    node: object
    mass: float
    inertia: np.ndarray
    com: np.ndarray
    R: np.ndarray
    o: np.ndarray
    v: np.ndarray = field(default_factory=lambda: np.zeros(3))
    w: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def point_velocity(self, x):
        return self.v + np.cross(self.w, np.asarray(x) - self.o)


@dataclass
class Connection:
    """A joint between parts ``first`` and ``second`` (the axes and lines are fixed in the
    second), at world points ``x_first``, ``x_second`` (the same point when assembled),
    about or along the world ``axis`` (``axis2``: a universal joint's second arm, fixed in
    the first part), with an optional viscous ``damping``, Coulomb ``friction`` (a torque
    or force) and a spring of ``stiffness``: for a revolute joint torsional, at rest
    ``rest`` rad from the start; for a prismatic one on its slide, at rest where the slide
    is ``rest``."""
    name: str
    kind: str
    first: str
    second: str
    x_first: np.ndarray
    x_second: np.ndarray
    node: object
    axis: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    axis2: np.ndarray | None = None
    damping: float = 0.0
    ref: float = 0.0            # the joint's position in the file's pose (MJCF's ref)
    stiffness: float = 0.0      # a revolute joint's torsional spring (N m/rad), a slide's (N/m)
    rest: float = 0.0           # its rest angle from the start's (rad) or slide (m)
    friction: float = 0.0       # Coulomb friction (N m or N; joint_friction)


def _point_name(name: str) -> str:
    """A connection's name as a point's (points are referenced as "body.point")."""
    return name.replace(".", "_")


class _Points:
    def __init__(self, parts, owner):
        self.parts, self.owner = parts, owner
        self.body: dict[str, dict] = {n: {} for n, o in owner.items() if o == n}
        self.ground: dict[str, np.ndarray] = {}

    def attach(self, part: str, x, name: str, ground_name: str | None = None):
        """The reference of a point at world ``x`` on the owner of ``part``."""
        own = self.owner[part]
        if own == "ground":
            name = _point_name(ground_name or name)
            self.ground[name] = np.asarray(x, dtype=float)
            return ("ground", name)
        name = _point_name(name)
        p = self.parts[own]
        self.body[own][name] = p.R.T @ (np.asarray(x) - p.o) - p.com
        return (own, name)


def drake_ball(node, name: str, ends, frame) -> Connection:
    """Drake's ball constraint (its ``drake:ball_constraint`` element ``node``, in SDFormat
    and URDF alike): point P of body A (``p_AP`` in A's frame) at point Q of body B
    (``p_BQ``); ``ends`` ((A, p_AP), (B, p_BQ)), ``frame(link)`` a link's (R, o) at the
    start. A spherical connection, which closes a loop."""
    (a, p_ap), (b, p_bq) = ends
    (Ra, oa), (Rb, ob) = frame(a), frame(b)
    return Connection(name, "spherical", a, b, oa + Ra @ np.asarray(p_ap, dtype=float),
                      ob + Rb @ np.asarray(p_bq, dtype=float), node)


def ball_name(taken, a: str, b: str) -> str:
    """A name for Drake's unnamed ball constraint between links a and b, not in ``taken``."""
    name, k = f"ball_{a}_{b}", 1
    while name in taken:
        k += 1
        name = f"ball_{a}_{b}_{k}"
    return name


def joint_name(parts, name: str) -> str:
    return f"{name}/joint" if name in parts else name


def _add_connection(b, c: Connection, name, first, second) -> None:
    if c.kind == "revolute":
        b.add_revolute(name, first, second, axis=tuple(c.axis))
    elif c.kind == "prismatic":
        b.add_prismatic(name, first, second, axis=tuple(c.axis))
    elif c.kind == "cylindrical":
        b.add_cylindrical(name, first, second, axis=tuple(c.axis))
    elif c.kind == "planar":
        b.add_planar(name, first, second, normal=tuple(c.axis))
    elif c.kind == "planar_slide":
        b.add_planar_slide(name, first, second, normal=tuple(c.axis))
    elif c.kind == "rigid":
        b.add_rigid(name, first, second)
    elif c.kind == "spherical":
        b.add_spherical(name, first, second)
    else:
        b.add_universal(name, first, second, axis_first=tuple(c.axis2),
                        axis_second=tuple(c.axis))
    if c.damping > 0.0 and c.kind in ("revolute", "prismatic"):
        b.add_joint_damper(f"{name}/damping", name, c.damping)
    if c.friction > 0.0 and c.kind in ("revolute", "prismatic"):
        b.add_joint_friction(f"{name}/friction", name, coulomb=c.friction)
    if c.stiffness > 0.0 and c.kind == "revolute":
        b.add_torsional_spring_damper(f"{name}/stiffness", name, c.stiffness,
                                      rest_angle=c.rest)
    elif c.stiffness > 0.0 and c.kind == "prismatic":     # a spring on the slide
        b.add_servo(f"{name}/stiffness", name, target=c.rest, kp=c.stiffness)


def build(builder, root_node, parts: dict, owner: dict, connections: list, frames=(),
          extras=()):
    """The compiled model: a body per part that owns itself, the connections between
    different owners as joints, a marker (named after it) at each frame part's origin
    (``frames``: parts fixed to a body), and ``extras`` on the connections' joints: (builder
    method, name, connections, keyword arguments, node), as a URDF mimic's gear pair
    (``add_gear_pair``) or a joint's limits (``add_joint_stop``)."""
    pts = _Points(parts, owner)
    refs = []
    for c in connections:
        if owner[c.first] == owner[c.second]:
            continue
        ground_names = (f"{c.name}_1", f"{c.name}_2")
        first = pts.attach(c.first, c.x_first, c.name, ground_names[0])
        second = pts.attach(c.second, c.x_second, c.name, ground_names[1])
        refs.append((c, first, second))
    marks = {n: pts.attach(n, parts[n].o, f"{n}_origin") for n in frames}
    for name, x in pts.ground.items():
        with element_errors(root_node):
            builder.add_ground_point(name, tuple(x))
    for name, points in pts.body.items():
        p = parts[name]
        com = p.o + p.R @ p.com
        with element_errors(p.node):
            builder.add_body(name, mass=p.mass, inertia=p.inertia,
                             points={k: tuple(v) for k, v in points.items()},
                             position=tuple(com), orientation=p.R,
                             velocity=tuple(p.point_velocity(com)),
                             angular_velocity=tuple(p.w))
    for c, first, second in refs:
        with element_errors(c.node):
            _add_connection(builder, c, joint_name(parts, c.name), first, second)
    joined = {c.name for c, _, _ in refs}
    for method, name, joints, kwargs, node in extras:
        with element_errors(node):
            for j in joints:
                if j not in joined:
                    raise node.error(f"joint {j!r} joins parts of one body (fixed to each "
                                     "other): it has no coordinate to couple or stop")
            getattr(builder, method)(name, *(joint_name(parts, j) for j in joints), **kwargs)
    for name, ref in marks.items():
        with element_errors(parts[name].node):
            builder.add_marker(name, ref)
    with element_errors(root_node):
        return builder.build()


#: The largest denominator of a coupling's multiplier read as a ratio of whole numbers.
RATIO_DENOMINATOR = 1000


def ratio_coupling(k: float, offset: float, q_a: float, q_b: float) -> dict | None:
    """The arguments of ``add_gear_pair`` that hold joint a's position at ``k`` times joint
    b's plus ``offset`` (a URDF mimic, an MJCF joint equality), from the start positions
    ``q_a``, ``q_b``: teeth from ``k`` as a ratio of whole numbers p / q (q up to
    RATIO_DENOMINATOR), the row in radians of joint a (module 2 / q), the offset as the
    pair's phase. None where ``k`` is zero or no such ratio."""
    ratio = Fraction(k).limit_denominator(RATIO_DENOMINATOR)
    if ratio == 0 or abs(float(ratio) - k) > 1e-12 * max(1.0, abs(k)):
        return None
    return dict(teeth=(ratio.denominator, abs(ratio.numerator)),
                module=2.0 / ratio.denominator, sense="same" if ratio > 0 else "opposite",
                phase=-(q_a - k * q_b - offset))


def scalar_coupling(kinds, k: float, offset: float, q_a: float, q_b: float):
    """The builder call (method, its keyword arguments) that holds joint a's position at
    ``k`` times joint b's plus ``offset``, from their start positions ``q_a``, ``q_b`` and
    their ``kinds`` ("revolute" or "prismatic"): two revolute joints as a gear pair
    (:func:`ratio_coupling`), a slide and another joint as a joint coupling; None where
    there is none (k zero, two angles at no ratio of whole numbers, other kinds)."""
    if any(kind not in ("revolute", "prismatic") for kind in kinds) or k == 0.0:
        return None
    if tuple(kinds) == ("revolute", "revolute"):
        pair = ratio_coupling(k, offset, q_a, q_b)
        return None if pair is None else ("add_gear_pair", pair)
    return "add_joint_coupling", dict(ratio=k, offset=-(q_a - k * q_b - offset))


#: The keys of the ``stops`` option.
STOP_LAW = ("stiffness", "exponent", "model", "damping", "restitution")


def stop_law(stops) -> dict | None:
    """The readers' ``stops`` option checked: None, or the contact law of
    :meth:`~linkdyn.SpatialModelBuilder.add_joint_stop` as a dict."""
    if stops is None:
        return None
    if not isinstance(stops, dict) or "stiffness" not in stops or set(stops) - set(STOP_LAW):
        raise ArgumentError(f"stops must be a dict with stiffness and optionally "
                            f"{', '.join(STOP_LAW[1:])}, got {stops!r}")
    return dict(stops)


def check_pose_options(what: str, gravity, floating_base) -> None:
    """A format that gives every pose takes no ``floating_base`` (URDF's); ``gravity`` must
    be a vector."""
    if floating_base is not None:
        raise ArgumentError(f"load_model: floating_base applies to URDF files; {what}")
    if gravity is not None and not isinstance(gravity, (tuple, list, np.ndarray)):
        raise ArgumentTypeError(f"gravity must be (x, y, z), got {type(gravity).__name__}")


def say_not_imported(path, skipped: dict) -> None:
    """One ModelWarning naming what a file holds that no linkdyn element reads yet
    (``skipped``: {what: [names]}), a few names of each."""
    if not skipped:
        return
    parts = [f"{what} ({len(names)}: {', '.join(names[:4])}{', ...' if len(names) > 4 else ''})"
             for what, names in skipped.items()]
    warnings.warn(f"linkdyn: {path}: not imported (no such element in linkdyn yet): "
                  + "; ".join(parts), ModelWarning, stacklevel=4)
