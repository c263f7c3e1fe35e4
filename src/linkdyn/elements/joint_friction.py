"""Friction in joints: Coulomb friction in a planar revolute or prismatic joint, with
stick-slip, and Stribeck's rise of the friction to its static value at rest. This module is
the family's one home: its record, the checks of its fields, its model-file form and its
compile step to the force kernels' friction records, whose modes
:mod:`linkdyn.elements.friction` decides.

Conventions
-----------
* The friction acts on the joint's own coordinate s, the angle or slide its drivers and
  force elements measure (the second body's angle minus the first's; the second point's
  slide along the axis), as a torque (N m) or force (N) ``f`` along it, and the opposite on
  the first body. Its bound is given: ``coulomb`` F_c while the joint slides and ``static``
  F_s >= F_c (default F_c) that holding it at rest may take. It is the constant friction
  of URDF's ``<dynamics friction>`` and MuJoCo's ``frictionloss``; a joint's viscous
  friction is :meth:`linkdyn.ModelBuilder.add_joint_damper`.
* Sliding (``|s'|`` above ``stick_velocity``): ``f = -sign(s') (F_c + (F_s - F_c)
  exp(-(s' / v_s)^2))``, with ``v_s = stribeck_velocity`` (0, the default, leaves out
  Stribeck's term: ``f = -F_c sign(s')``).
* At rest: the joint sticks, held by a constraint row on s whose multiplier is the friction,
  as long as that stays within F_s. The transitions are events located by the integrator,
  ``"<friction>/stop"`` (a sliding joint comes to rest) and ``"<friction>/slip"`` (the
  friction that holds it reaches F_s), and each decision is taken with the contacts' by
  the linear complementarity problem of :mod:`linkdyn.elements.friction`.
* It acts in simulations: the stateless evaluations (``Model.force`` and its derivatives)
  and statics (:func:`linkdyn.equilibrium`) leave it out, as they do a contact's friction,
  whose direction and sticking only a run decides.
* ``result.friction_force(name)`` is f per output row (the stick row's force while it
  sticks); ``result.friction_modes`` lists the mode changes ("slide+", "slide-", "stick");
  ``result.element_work(name)`` is the energy the friction took (negative).
* Planar and spatial models. In space the coordinate is the first body's turn (or slide)
  relative to the second, as for :mod:`linkdyn.elements.stops`; URDF's ``<dynamics
  friction>`` and MJCF's ``frictionloss`` become joint frictions ``"<joint>/friction"``
  (:mod:`linkdyn.exchange`). A friction whose bound grows with the joint's reaction (a
  pin of radius r: mu r times the magnitude of its reaction) is not modelled yet.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._checks import real
from ..errors import ModelError
from .bodies import _element
from .contacts import FRICTION, STICK_VELOCITY, MIN_STICK_VELOCITY
from .forces import _joint_coordinate
from .stops import one_dof_joint, spatial_coordinate
from .records import _Record

__all__ = ["JointFrictionSpec", "JointFrictionBuilder", "FILE_TYPE", "to_dict",
           "planar_records", "spatial_records"]


@dataclass(frozen=True)
class JointFrictionSpec:
    """Coulomb friction in a joint (module notes): limits in N m (revolute) or N
    (prismatic), velocities in rad/s or m/s."""

    name: str
    joint: str
    coulomb: float
    static: float
    stribeck_velocity: float = 0.0
    stick_velocity: float = STICK_VELOCITY


class JointFrictionBuilder:
    """The joint-friction method of :class:`linkdyn.ModelBuilder` and
    :class:`linkdyn.SpatialModelBuilder` (a mixin)."""

    def add_joint_friction(self, name: str, joint: str, coulomb, static=None, *,
                           stribeck_velocity=0.0, stick_velocity=STICK_VELOCITY) -> None:
        """Coulomb friction ``coulomb`` (N m or N) in revolute or prismatic ``joint``,
        rising to ``static`` (default: ``coulomb``) at rest, by Stribeck's law with
        ``stribeck_velocity`` where it is positive; the joint sticks while its rate is
        within ``stick_velocity`` and the friction holding it within ``static``. See
        :mod:`linkdyn.elements.joint_friction`."""
        name = self._new_name("joint friction", name)
        entry = f"joint friction '{name}'"
        with _element(name):
            one_dof_joint(entry, self._joints, joint)
            fc = real(entry, "coulomb", coulomb, positive=True)
            fs = fc if static is None else real(entry, "static", static, positive=True)
            if fs < fc:
                raise ModelError(f"{entry}: static = {fs!r} must be at least coulomb = "
                                 f"{fc!r} (holding at rest takes at least the sliding "
                                 "friction)")
            vs = real(entry, "stribeck_velocity", stribeck_velocity, nonnegative=True)
            if vs > 0.0 and fs == fc:
                raise ModelError(f"{entry}: a stribeck_velocity needs static > coulomb (the "
                                 "friction it lets fall from static to coulomb)")
            vstick = real(entry, "stick_velocity", stick_velocity, positive=True)
            if vstick < MIN_STICK_VELOCITY:
                raise ModelError(f"{entry}: stick_velocity = {vstick!r} is below "
                                 f"{MIN_STICK_VELOCITY:g}: rest would be lost in the "
                                 "velocities' rounding")
            for other in self._joint_frictions.values():
                if other.joint == joint:
                    raise ModelError(f"{entry}: joint {joint!r} has a friction already "
                                     f"('{other.name}')")
            self._joint_frictions[name] = JointFrictionSpec(name, joint, fc, fs, vs, vstick)


#: Model-file entry (in the ``"forces"`` list): method, required fields, optional fields.
FILE_TYPE = ("add_joint_friction", {"joint", "coulomb"},
             {"static", "stribeck_velocity", "stick_velocity"})


def to_dict(spec: JointFrictionSpec) -> dict:
    return {"type": "joint_friction", "name": spec.name, "joint": spec.joint,
            "coulomb": spec.coulomb, "static": spec.static,
            "stribeck_velocity": spec.stribeck_velocity,
            "stick_velocity": spec.stick_velocity}


def _friction(spec, kind, bodies, geom, index) -> tuple:
    """The friction record of ``spec`` on the joint's coordinate, and its mode entry."""
    rec = _Record(spec.name, kind, bodies, geom)
    rec.law = FRICTION
    rec.law_par = (spec.coulomb, -1.0, spec.stribeck_velocity, spec.static - spec.coulomb)
    # sliding from rest, the friction is F_s with Stribeck's term and F_c without
    moving = spec.static if spec.stribeck_velocity > 0.0 else spec.coulomb
    return rec, (spec.name, index, -1, moving, spec.static, spec.stick_velocity)


def planar_records(desc, body_index, local_of, ground, first) -> tuple:
    """The joint frictions' records of a planar description (the first gets index
    ``first``) and their entries for :class:`linkdyn.elements.friction.ContactModes`:
    (name, record, -1 (no normal record: the bound is the friction's own), sliding bound at
    rest, static bound, stick velocity)."""
    joints = {j.name: j for j in desc.joints}
    recs, frictions = [], []
    for spec in getattr(desc, "joint_frictions", ()):
        kind, bodies, geom = _joint_coordinate(joints[spec.joint], body_index, local_of,
                                               ground)
        rec, entry = _friction(spec, kind, bodies, geom, first + len(recs))
        recs.append(rec)
        frictions.append(entry)
    return recs, frictions


def spatial_records(desc, geo, first) -> tuple:
    """As :func:`planar_records` for a spatial description (``geo``: the spatial compile's
    :class:`linkdyn.elements.spatial_forces.Geometry`), on the coordinates of
    :mod:`linkdyn.elements.stops` (the first body's turn or slide relative to the
    second)."""
    joints = {j.name: j for j in desc.joints}
    recs, frictions = [], []
    for spec in getattr(desc, "joint_frictions", ()):
        geo.entry = f"joint friction {spec.name!r}"
        kind, bodies, geom, _ = spatial_coordinate(joints[spec.joint], geo)
        rec, entry = _friction(spec, kind, bodies, geom, first + len(recs))
        recs.append(rec)
        frictions.append(entry)
    return recs, frictions
