"""Contacts of spatial models: compliant normal contact between a sphere (or a point) on a
body and a plane on the ground or on another body.

The family's records, builder method (:class:`SpatialContactBuilder`, mixed into
:class:`linkdyn.SpatialModelBuilder`), model-file entries and compile step live here; the
contact force laws are the planar contacts' (:mod:`linkdyn.elements.contacts`), evaluated by
the force kernels, and onset and separation are events located by the integrator.

Geometry. The plane passes through ``plane_point`` (a ground point or a body point) with the
unit normal ``normal`` (global axes at the initial configuration, fixed in the plane's body);
the contact keeps the sphere on the side the normal points to. The sphere of ``radius`` r (0:
a point) is centred at ``point``. The penetration is

    delta = r - n . (centre - plane point),

linear in the coordinates for a plane on the ground and bilinear for a plane on a body, so
its derivatives are exact. The normal force, for delta > 0, is Hunt and Crossley's
``K delta^n (1 + c delta')`` (``model="hertz"``) or Lankarani and Nikravesh's
``K delta^n (1 + 3 (1 - e^2) delta' / (4 v0))`` (``model="lankarani_nikravesh"``, v0 the
approach speed at the onset), along n on the sphere's body and against it on the plane's;
it never pulls. The stored energy is ``K delta^(n+1) / (n + 1)``; ``result.element_work(name)``
is what the damping took; every onset and separation is an event under the contact's name.

Contacts in space are frictionless (the sphere slides freely on the plane); Coulomb friction
with stick-slip is planar (:mod:`linkdyn.friction`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import real, unit_vec3
from ..errors import ModelError
from .bodies import GROUND, _element
from .contacts import MODELS, contact_law
from .records import SLIDE, _Record

__all__ = ["SpatialContactSpec", "SpatialContactBuilder", "FILE_FIELDS", "to_dict",
           "contact_records"]


@dataclass(frozen=True)
class SpatialContactSpec:
    """A compliant sphere-plane contact (module notes); ``normal`` in the plane's body axes
    (global for the ground)."""

    name: str
    point: tuple
    radius: float
    plane_point: tuple
    normal: tuple
    model: str
    stiffness: float
    exponent: float
    damping: float = 0.0
    restitution: float = 1.0


class SpatialContactBuilder:
    """The contact method of :class:`linkdyn.SpatialModelBuilder` (a mixin)."""

    def add_contact(self, name: str, point, plane_point, normal=(0.0, 0.0, 1.0), radius=0.0,
                    *, stiffness, exponent=1.5, model: str = "hertz", damping=0.0,
                    restitution=None) -> None:
        """A compliant contact of the sphere of ``radius`` (m; 0 for a point) centred at body
        point ``point`` with the plane through ``plane_point`` normal to ``normal`` (global
        axes at the initial configuration; the sphere stays on the side it points to):
        normal force ``K delta^n (1 + c delta')`` (``model="hertz"``, ``damping`` c in s/m)
        or Lankarani-Nikravesh with ``restitution`` e (``model="lankarani_nikravesh"``);
        ``stiffness`` K in N/m^n, ``exponent`` n >= 1. Frictionless (module notes)."""
        name = self._new_name("contact", name)
        entry = f"contact '{name}'"
        with _element(name):
            p, q = self._ref(entry, point), self._ref(entry, plane_point)
            if p[0] == GROUND:
                raise ModelError(f"{entry}: the sphere (point) must be on a body, not the "
                                 "ground")
            if p[0] == q[0]:
                raise ModelError(f"{entry}: the sphere and the plane are on the same body "
                                 f"'{p[0]}'")
            k, n, c, e = contact_law(entry, model, stiffness, exponent, damping,
                                     restitution)
            r = real(entry, "radius", radius, nonnegative=True)
            n_hat = unit_vec3(entry, "normal", normal)
            self._contacts[name] = SpatialContactSpec(
                name, p, r, q, self._in_body_axes(q[0], n_hat), model, k, n, c, e)


#: Model-file entry fields: required, optional.
FILE_FIELDS = ({"name", "point", "plane_point", "stiffness"},
               {"normal", "radius", "exponent", "model", "damping", "restitution"})


def to_dict(spec: SpatialContactSpec, orientation) -> dict:
    """The canonical model-file entry (``orientation``: the plane body's initial rotation,
    or None for the ground: the file gives the normal in global axes)."""
    normal = np.asarray(spec.normal) if orientation is None else \
        np.asarray(orientation) @ np.asarray(spec.normal)
    d = {"name": spec.name, "point": ".".join(spec.point), "radius": spec.radius,
         "plane_point": ".".join(spec.plane_point), "normal": [float(x) for x in normal],
         "model": spec.model, "stiffness": spec.stiffness, "exponent": spec.exponent}
    if spec.model == "hertz":
        d["damping"] = spec.damping
    else:
        d["restitution"] = spec.restitution
    return d


def contact_records(desc, geometry) -> list:
    """Per contact a record on the slide coordinate s = n . (centre - plane point) with its
    contact law on the penetration r - s (``geometry``: the spatial compile's
    :class:`linkdyn.elements.spatial_forces.Geometry`)."""
    recs = []
    for c in desc.contacts:
        geometry.entry = f"contact {c.name!r}"
        b0, b1 = geometry.body(c.plane_point[0]), geometry.body(c.point[0])
        normal = (tuple(float(x) for x in c.normal) if b0 < 0 else
                  geometry.principal(c.plane_point[0], c.normal))
        rec = _Record(c.name, SLIDE, (b0, b1),
                      geometry.point(c.plane_point) + geometry.point(c.point) + normal +
                      (0.0,) * 6)
        rec.law = MODELS[c.model]
        rec.law_par = (c.stiffness, c.exponent,
                       c.damping if c.model == "hertz" else c.restitution, c.radius)
        recs.append(rec)
    return recs
