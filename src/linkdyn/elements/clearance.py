"""Joints with clearance: a revolute joint whose journal moves inside a larger bearing, a
prismatic joint whose slider has play in its guide, and in space a spherical joint whose
ball moves inside its socket. This module is the family's one home: its records, the checks
of their fields, their model-file form and their compile step to the force kernels' contact
records (:mod:`linkdyn.elements.contacts` gives the laws).

A joint with clearance has no constraint rows: its bodies move freely relative to each
other within the clearance (free flight) and meet with a compliant one-sided contact
(impact, then continuous contact or a rebound), the modes Flores, Ambrosio, Claro and
Lankarani describe in "Kinematics and Dynamics of Multibody Systems with Imperfect Joints".
Their onsets and separations are events located by the integrator.

Conventions
-----------
* Revolute (planar) and spherical (spatial) joints: ``first`` is the bearing's (or
  socket's) centre, ``second`` the journal's (ball's). The eccentricity e is the distance
  between them; the contact's penetration is ``delta = e - size`` with ``size`` the radial
  clearance (bearing radius minus journal radius). The normal force pushes the journal's
  centre back towards the bearing's along the line between them.
* Prismatic (planar): ``first`` is a point on the guide's centreline, at ``axis`` rad from
  the first body's u (the ground's x axis), ``second`` the slider's centre. The slider is a
  rectangle of ``length`` along the axis and ``height`` across it, at the relative
  orientation ``angle`` (default: as in the initial guesses); the guide's walls lie at
  ``height / 2 + size`` on either side of the centreline, so that ``size`` is how far the
  centred slider moves sideways before it touches. Each of the slider's four corners is a
  contact with the wall on its side: ``"<joint>/upper_front"``, ``"<joint>/upper_back"``,
  ``"<joint>/lower_front"`` and ``"<joint>/lower_back"`` (front: along +axis; upper: on the
  side the axis turned by +90 degrees points to). The slider may tilt and slide freely.
* Laws: ``model="hertz"`` ``K delta^n (1 + c delta')`` or ``"lankarani_nikravesh"``
  ``K delta^n (1 + 3 (1 - e^2) delta' / (4 v0))``, with v0 the approach speed at the onset
  (the laws of :mod:`linkdyn.elements.contacts`). :func:`clearance_stiffness` gives the K of
  a journal in its bearing for n = 1.5. The contacts are frictionless.
* Reactions: ``result.clearance_force(joint)`` is the contact force on the first body,
  global components, zero in free flight; ``result.element_coordinate(contact)`` is the
  eccentricity (a revolute or spherical joint) or a corner's distance from the centreline.
* The initial guesses must lie within the clearance (a journal at its bearing's centre is
  the usual start). Drivers, stops and gears act on ideal joints only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import real
from ..errors import ModelError
from .bodies import GROUND, PointRef, _element
from .contacts import MODELS, contact_law
from .records import DISTANCE, SLIDE, _Record

__all__ = ["ClearanceJointSpec", "ClearanceBuilder", "clearance_stiffness", "to_dict",
           "planar_records", "spatial_records", "CORNERS", "FIELDS"]

#: The contacts of a prismatic joint with clearance: (name, along the axis, across it).
CORNERS = (("upper_front", 1.0, 1.0), ("upper_back", -1.0, 1.0),
           ("lower_front", 1.0, -1.0), ("lower_back", -1.0, -1.0))
#: The fields of a joint's ``clearance`` mapping: required, optional.
FIELDS = ({"size", "stiffness"},
          {"exponent", "model", "damping", "restitution", "length", "height"})


@dataclass(frozen=True)
class ClearanceJointSpec:
    """A joint with clearance (module notes): ``kind`` "revolute", "prismatic" (planar) or
    "spherical" (spatial); ``axis`` and ``angle`` as a prismatic joint's, ``length`` and
    ``height`` its slider's."""

    name: str
    kind: str
    first: PointRef
    second: PointRef
    size: float
    model: str
    stiffness: float
    exponent: float
    damping: float
    restitution: float
    axis: float = 0.0
    angle: float = 0.0
    length: float = 0.0
    height: float = 0.0

    def contacts(self) -> tuple:
        """The names of the joint's contacts (its force elements)."""
        if self.kind == "prismatic":
            return tuple(f"{self.name}/{c[0]}" for c in CORNERS)
        return (self.name,)


def clearance_stiffness(bearing_radius, journal_radius, young, poisson=0.3, *,
                        journal_young=None, journal_poisson=None) -> float:
    """The contact stiffness K (N/m^1.5, for exponent 1.5) of a journal of
    ``journal_radius`` in a bearing of ``bearing_radius`` (m), both of Young's modulus
    ``young`` (Pa) and Poisson's ratio ``poisson`` unless the journal's are given: Hertz's
    contact of two spheres of those radii, one inside the other (the approximation
    Lankarani and Nikravesh use for a journal in its bearing),
    ``K = 4 / (3 (s_b + s_j)) sqrt(R_b R_j / (R_b - R_j))``, ``s = (1 - nu^2) / E``."""
    entry = "clearance_stiffness"
    rb = real(entry, "bearing_radius", bearing_radius, positive=True)
    rj = real(entry, "journal_radius", journal_radius, positive=True)
    if not rj < rb:
        raise ModelError(f"{entry}: journal_radius = {rj!r} must be below bearing_radius = "
                         f"{rb!r} (the clearance is their difference)")
    e_b = real(entry, "young", young, positive=True)
    nu_b = real(entry, "poisson", poisson, nonnegative=True)
    e_j = e_b if journal_young is None else real(entry, "journal_young", journal_young,
                                                 positive=True)
    nu_j = nu_b if journal_poisson is None else real(entry, "journal_poisson",
                                                     journal_poisson, nonnegative=True)
    for what, nu in (("poisson", nu_b), ("journal_poisson", nu_j)):
        if not nu < 0.5:
            raise ModelError(f"{entry}: {what} = {nu!r} must be below 0.5")
    s = (1.0 - nu_b ** 2) / e_b + (1.0 - nu_j ** 2) / e_j
    return 4.0 / (3.0 * s) * math.sqrt(rb * rj / (rb - rj))


def _law(entry, clearance, kind) -> dict:
    """The checked fields of a ``clearance`` mapping."""
    if not isinstance(clearance, dict):
        raise ModelError(f"{entry}: clearance must be a mapping with size and stiffness "
                         f"(and exponent, model, damping or restitution), got {clearance!r}")
    required, optional = FIELDS
    if kind != "prismatic":
        optional = optional - {"length", "height"}
    unknown = sorted(set(clearance) - required - optional)
    if unknown:
        raise ModelError(f"{entry}: clearance has no field {unknown[0]!r} (fields: "
                         f"{', '.join(sorted(required | optional))})")
    missing = sorted(required - set(clearance))
    if missing:
        raise ModelError(f"{entry}: clearance needs {missing[0]!r}")
    size = real(entry, "clearance size", clearance["size"])
    if not size > 0.0:
        raise ModelError(f"{entry}: clearance size = {size!r} must be positive (m: the "
                         "bearing's radius minus the journal's, or the slider's sideways "
                         "play); an ideal joint has no clearance argument")
    model = clearance.get("model", "hertz")
    k, n, c, e = contact_law(f"{entry} clearance", model, clearance["stiffness"],
                             clearance.get("exponent", 1.5), clearance.get("damping", 0.0),
                             clearance.get("restitution"))
    out = dict(size=size, model=model, stiffness=k, exponent=n, damping=c, restitution=e)
    if kind == "prismatic":
        if "length" not in clearance:
            raise ModelError(f"{entry}: a prismatic joint's clearance needs the slider's "
                             "length (m, along the axis)")
        out["length"] = real(entry, "clearance length", clearance["length"], positive=True)
        out["height"] = real(entry, "clearance height", clearance.get("height", 0.0),
                             nonnegative=True)
    return out


class ClearanceBuilder:
    """Joints with clearance in :class:`linkdyn.ModelBuilder` and
    :class:`linkdyn.SpatialModelBuilder` (a mixin): ``add_revolute``, ``add_prismatic``
    (planar) and ``add_spherical`` (spatial) with ``clearance=`` call
    :meth:`_add_clearance`."""

    def _add_clearance(self, name, kind, first, second, clearance, axis=0.0,
                       angle=None) -> None:
        entry = f"joint '{name}'"
        with _element(name):
            law = _law(entry, clearance, kind)
            a, b = self._ref(entry, first), self._ref(entry, second)
            if a[0] == b[0]:
                raise ModelError(f"{entry}: a joint must connect two different bodies; both "
                                 f"points are on '{a[0]}'")
            if kind != "prismatic":
                angle = 0.0
            elif angle is None:        # as in the initial guesses
                angle = self._orientation(b[0]) - self._orientation(a[0])
            spec = ClearanceJointSpec(name, kind, a, b, axis=axis,
                                      angle=real(entry, "angle", angle), **law)
            worst = max(self._clearance_start(spec))
            if worst > 0.0:
                raise ModelError(f"{entry}: the initial guesses put the joint {worst:.6g} m "
                                 f"beyond its clearance {law['size']:.6g} m (start within "
                                 "it: a journal at its bearing's centre)")
            self._clearances[name] = spec

    def _clearance_start(self, spec) -> list:
        """The penetrations of the joint's contacts in the initial guesses."""
        if spec.kind == "spherical":
            d = self._point_at_start(spec.second) - self._point_at_start(spec.first)
            return [float(np.linalg.norm(d)) - spec.size]
        p1, p2 = np.array(self._guess_point(spec.first)), np.array(self._guess_point(spec.second))
        if spec.kind == "revolute":
            return [float(np.linalg.norm(p2 - p1)) - spec.size]
        axis = spec.axis + self._orientation(spec.first[0])
        t = np.array([math.cos(axis), math.sin(axis)])
        n = np.array([-t[1], t[0]])
        # the slider's tilt from the guide: its relative orientation minus angle
        own = (self._orientation(spec.second[0]) - self._orientation(spec.first[0])
               - spec.angle)
        out = []
        for _, along, across in CORNERS:
            # the corner in the slider's turned frame, as the kernels place it
            c = (along * spec.length / 2.0, across * spec.height / 2.0)
            turned = (math.cos(own) * c[0] - math.sin(own) * c[1],
                      math.sin(own) * c[0] + math.cos(own) * c[1])
            s = float(n @ (p2 - p1)) + turned[1]
            out.append(across * s - (spec.height / 2.0 + spec.size))
        return out


def to_dict(spec: ClearanceJointSpec) -> dict:
    """The joint's model-file entry (in the ``"joints"`` list)."""
    law = {"size": spec.size, "model": spec.model, "stiffness": spec.stiffness,
           "exponent": spec.exponent}
    if spec.model == "hertz":
        law["damping"] = spec.damping
    else:
        law["restitution"] = spec.restitution
    d = {"type": spec.kind, "name": spec.name, "first": ".".join(spec.first),
         "second": ".".join(spec.second)}
    if spec.kind == "prismatic":
        d.update(axis=spec.axis, angle=spec.angle)
        law.update(length=spec.length, height=spec.height)
    d["clearance"] = law
    return d


def _contact(spec, owner, coord, bodies, geom, gap, sense) -> _Record:
    rec = _Record(owner, coord, bodies, geom)
    rec.law = MODELS[spec.model]
    rec.law_par = (spec.stiffness, spec.exponent,
                   spec.damping if spec.model == "hertz" else spec.restitution, gap)
    rec.sense = sense
    return rec


def planar_records(desc, body_index, local_of, ground) -> list:
    """The contact records of a planar description's joints with clearance."""
    out = []
    for spec in getattr(desc, "clearances", ()):
        ends = []
        for body, point in (spec.first, spec.second):
            if body == GROUND:
                ends.append((-1, tuple(ground[point])))
            else:
                b = body_index[body]
                ends.append((b, tuple(local_of(b, point))))
        (b1, p1), (b2, p2) = ends
        if spec.kind == "revolute":
            out.append(_contact(spec, spec.name, DISTANCE, (b1, b2), (*p1, *p2, 1.0, 0.0),
                                spec.size, -1.0))
            continue
        # The corners in the slider's own frame: its axis is at axis - angle from its u.
        own = spec.axis - spec.angle
        t2 = (math.cos(own), math.sin(own))
        n2 = (-t2[1], t2[0])
        normal = spec.axis + 0.5 * math.pi
        wall = spec.height / 2.0 + spec.size
        for corner, along, across in CORNERS:
            a, h = along * spec.length / 2.0, across * spec.height / 2.0
            c = (p2[0] + a * t2[0] + h * n2[0], p2[1] + a * t2[1] + h * n2[1])
            geom = (*p1, *c, math.cos(normal), math.sin(normal))
            # upper corners stay below +wall, lower ones above -wall
            out.append(_contact(spec, f"{spec.name}/{corner}", SLIDE, (b1, b2), geom,
                                across * wall, -across))
    return out


def spatial_records(desc, geo) -> list:
    """The contact records of a spatial description's joints with clearance (``geo``: the
    spatial compile's :class:`linkdyn.elements.spatial_forces.Geometry`)."""
    out = []
    for spec in getattr(desc, "clearances", ()):
        geo.entry = f"joint {spec.name!r}"
        bodies = (geo.body(spec.first[0]), geo.body(spec.second[0]))
        geom = geo.point(spec.first) + geo.point(spec.second) + (0.0,) * 9
        out.append(_contact(spec, spec.name, DISTANCE, bodies, geom, spec.size, -1.0))
    return out
