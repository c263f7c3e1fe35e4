"""Joint stops: a revolute or prismatic joint's range as compliant one-sided contacts on the
joint's own coordinate, planar and spatial. This module is the family's one home: its
records, the checks of their fields, their model-file form and their compile step, to the
force kernels' contact records (:mod:`linkdyn.elements.contacts` gives the laws).

Conventions
-----------
* The coordinate is the joint's angle or slide as its driver and its force elements
  measure it: in a planar model the second body's angle minus the first's (counted from
  its value in the initial guesses, in (-pi, pi], and continuous over turns) or the second
  point's slide along the axis; in a spatial model the first body's turn relative to the
  second about the axis (zero in the initial guesses) or the first point's slide along it.
* Below ``lower`` the stop pushes the coordinate up, above ``upper`` down, with the force
  (or torque) of a contact law on the penetration ``lower - s`` or ``s - upper``:
  ``model="hertz"``, ``K delta^n (1 + c delta')``, or ``"lankarani_nikravesh"``,
  ``K delta^n (1 + 3 (1 - e^2) delta' / (4 v0))`` with ``v0`` the speed at which the joint
  reached the stop. It never pulls. Either limit may be left out.
* Each side is a contact of its own, ``"<stop>/lower"`` and ``"<stop>/upper"``: its onset
  and separation are events under that name, ``result.element_work`` of it is the energy
  its damping took, and ``result.stop_force(stop)`` is the stop's force along the
  coordinate (positive pushing it up).
* The initial guesses must lie within the range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import real
from ..errors import ModelError
from .bodies import GROUND, _element
from .contacts import MODELS, contact_law
from .forces import _joint_coordinate
from .joints import PrismaticSpec, RevoluteSpec
from .records import ANGLE, SLIDE, _Record

__all__ = ["JointStopSpec", "StopBuilder", "FILE_TYPES", "to_dict", "planar_records",
           "spatial_records", "spatial_coordinate", "SIDES", "joint_kind",
           "one_dof_joint"]

#: The two sides, in record order.
SIDES = ("lower", "upper")


@dataclass(frozen=True)
class JointStopSpec:
    """A joint's range with the contact law of its stops (``restitution`` 1 for Hertz)."""

    name: str
    joint: str
    lower: float | None
    upper: float | None
    model: str
    stiffness: float
    exponent: float
    damping: float
    restitution: float


def joint_kind(joint) -> str | None:
    """The kind of a planar or spatial revolute or prismatic joint ("revolute",
    "prismatic"), else None (other joints, or no joint)."""
    if isinstance(joint, RevoluteSpec):
        return "revolute"
    if isinstance(joint, PrismaticSpec):
        return "prismatic"
    kind = getattr(joint, "kind", None)
    return kind if kind in ("revolute", "prismatic") else None


def one_dof_joint(entry, joints, joint):
    """The spec of revolute or prismatic ``joint`` among a builder's ``joints``, or
    ModelError naming ``entry`` and the joints it could have been."""
    spec = joints.get(joint) if isinstance(joint, str) else None
    if joint_kind(spec) is None:
        known = [n for n, j in joints.items() if joint_kind(j) is not None]
        raise ModelError(f"{entry}: {joint!r} is not a revolute or prismatic joint of this "
                         f"model (those joints: {', '.join(known) or 'none'})")
    return spec


class StopBuilder:
    """The stop method of :class:`linkdyn.ModelBuilder` and
    :class:`linkdyn.SpatialModelBuilder` (a mixin)."""

    def add_joint_stop(self, name: str, joint: str, *, lower=None, upper=None, stiffness,
                       exponent=1.0, model="hertz", damping=0.0, restitution=None) -> None:
        """Stops at the ends of revolute or prismatic ``joint``'s range ``[lower, upper]``
        (rad or m; either may be None), each a compliant contact with stiffness ``K`` (N m /
        rad^n or N/m^n), ``exponent`` n and the Hertz model's ``damping`` c or the
        Lankarani-Nikravesh model's ``restitution`` e. See :mod:`linkdyn.elements.stops`."""
        name = self._new_name("joint stop", name)
        entry = f"joint stop '{name}'"
        with _element(name):
            spec = one_dof_joint(entry, self._joints, joint)
            lo = None if lower is None else real(entry, "lower", lower)
            hi = None if upper is None else real(entry, "upper", upper)
            if lo is None and hi is None:
                raise ModelError(f"{entry}: give lower, upper or both (the range's ends)")
            if lo is not None and hi is not None and not lo < hi:
                raise ModelError(f"{entry}: lower = {lo!r} must be below upper = {hi!r}")
            k, n, c, e = contact_law(entry, model, stiffness, exponent, damping, restitution)
            start = self._stop_start(spec)
            if (lo is not None and start < lo) or (hi is not None and start > hi):
                raise ModelError(f"{entry}: joint {joint!r} starts at {start:.9g} in the "
                                 f"initial guesses, outside the range [{lo}, {hi}]")
            self._stops[name] = JointStopSpec(name, joint, lo, hi, model, k, n, c, e)

    def _stop_start(self, j) -> float:
        """The joint's coordinate in the initial guesses (see the module's conventions)."""
        if isinstance(j, RevoluteSpec):
            turn = self._orientation(j.second[0]) - self._orientation(j.first[0])
            return math.remainder(turn, 2.0 * math.pi)
        if isinstance(j, PrismaticSpec):
            p1, p2 = self._guess_point(j.first), self._guess_point(j.second)
            a = j.axis + (0.0 if j.first[0] == GROUND else self._orientation(j.first[0]))
            return math.cos(a) * (p2[0] - p1[0]) + math.sin(a) * (p2[1] - p1[1])
        if j.kind == "revolute":
            return 0.0
        axis = np.asarray(j.axis_second, dtype=float)
        if j.second[0] != GROUND:
            axis = np.asarray(self._bodies[j.second[0]].orientation) @ axis
        return float((self._point_at_start(j.first) - self._point_at_start(j.second)) @ axis)


#: Model-file entries (the ``"stops"`` list): method, required fields, optional fields.
FILE_TYPES = {"joint_stop": ("add_joint_stop", {"joint", "stiffness"},
                             {"lower", "upper", "exponent", "model", "damping",
                              "restitution"})}


def to_dict(spec: JointStopSpec) -> dict:
    d = {"type": "joint_stop", "name": spec.name, "joint": spec.joint, "model": spec.model,
         "stiffness": spec.stiffness, "exponent": spec.exponent}
    for side in SIDES:
        if getattr(spec, side) is not None:
            d[side] = getattr(spec, side)
    if spec.model == "hertz":
        d["damping"] = spec.damping
    else:
        d["restitution"] = spec.restitution
    return d


def _sides(spec, lower_record, upper_record) -> list:
    """The stop's records: lower on the coordinate, upper on the coordinate reversed."""
    out = []
    for side, make, gap in (("lower", lower_record, spec.lower),
                            ("upper", upper_record, None if spec.upper is None
                             else -spec.upper)):
        if gap is None:
            continue
        rec = make(f"{spec.name}/{side}")
        rec.law = MODELS[spec.model]
        rec.law_par = (spec.stiffness, spec.exponent,
                       spec.damping if spec.model == "hertz" else spec.restitution, gap)
        out.append(rec)
    return out


def planar_records(desc, body_index, local_of, ground) -> list:
    """The stops' contact records of a planar description."""
    joints = {j.name: j for j in desc.joints}
    out = []
    for spec in getattr(desc, "stops", ()):
        kind, (b1, b2), geom = _joint_coordinate(joints[spec.joint], body_index, local_of,
                                                 ground)
        if kind == ANGLE:        # reversed: the first body's angle from the second's
            reverse = ((b2, b1), geom)
        else:                    # reversed: along the axis turned by pi
            reverse = ((b1, b2), (*geom[:4], -geom[4], -geom[5]))
        out += _sides(spec, lambda owner: _Record(owner, kind, (b1, b2), geom),
                      lambda owner: _Record(owner, kind, *reverse))
    return out


def spatial_coordinate(j, geo) -> tuple:
    """(kind, bodies, geometry, reversed geometry) of spatial revolute or prismatic joint
    ``j``'s coordinate (the module's conventions; reversed: the same coordinate negated)."""
    bodies = (geo.body(j.second[0]), geo.body(j.first[0]))
    axis = geo.global_axis(j)
    if j.kind == "prismatic":
        base = geo.point(j.second) + geo.point(j.first)
        return (SLIDE, bodies, base + geo.direction(j.second[0], axis) + (0.0,) * 6,
                base + geo.direction(j.second[0], -axis) + (0.0,) * 6)
    geom = geo.angle_geometry(j.second[0], j.first[0], axis)
    return ANGLE, bodies, geom, geom[:9] + tuple(-x for x in geom[9:12]) + geom[12:]


def spatial_records(desc, geo) -> list:
    """The stops' contact records of a spatial description (``geo``: the spatial compile's
    :class:`linkdyn.elements.spatial_forces.Geometry`)."""
    joints = {j.name: j for j in desc.joints}
    out = []
    for spec in getattr(desc, "stops", ()):
        geo.entry = f"joint stop {spec.name!r}"
        kind, bodies, geom, reverse = spatial_coordinate(joints[spec.joint], geo)
        out += _sides(spec, lambda owner: _Record(owner, kind, bodies, geom),
                      lambda owner: _Record(owner, kind, bodies, reverse))
    return out
