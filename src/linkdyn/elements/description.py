"""The whole description: :class:`Description` gathers the element records of a model (bodies,
joints, drivers, markers, force elements, contacts) into one immutable record, and this module
writes it in the model-file form (read back by :mod:`linkdyn.modelfile`, whose docstring gives
the format)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

from .._checks import checked_path
from . import cams, clearance, contacts, forces, gears, joint_friction, stops
from .bodies import BarSpec, BodySpec, MarkerSpec, Vec2
from .joints import (AngleDriverSpec, CoordinateDriverSpec, PrismaticSpec, RevoluteSpec,
                     SlideDriverSpec)

__all__ = ["Description", "FORMAT_VERSION", "to_dict", "dumps", "save"]

#: The model-file format version written and read.
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Description:
    """A complete, validated model description (immutable). Two descriptions are equal
    when every field is equal; a model saved to a file loads back to an equal description."""

    name: str
    gravity: Vec2
    ground: tuple[tuple[str, Vec2], ...]
    bodies: tuple[BodySpec | BarSpec, ...]
    joints: tuple[RevoluteSpec | PrismaticSpec, ...]
    markers: tuple[MarkerSpec, ...]
    drivers: tuple[AngleDriverSpec | SlideDriverSpec | CoordinateDriverSpec, ...] = ()
    forces: tuple = ()   # force elements, see linkdyn.forces
    contacts: tuple = ()  # contacts, see linkdyn.contacts
    #: True for a linkage of points and lines (linkdyn.geometric): its bodies carry unit
    #: placeholder masses, so it has kinematics but no dynamics (the solvers of dynamics
    #: refuse it).
    kinematic: bool = False
    #: The model's own run settings, sorted (key, value) pairs (linkdyn.elements.run_defaults)
    run_defaults: tuple = ()
    gears: tuple = ()    # gear pairs and racks, see linkdyn.elements.gears
    stops: tuple = ()    # joint stops, see linkdyn.elements.stops
    clearances: tuple = ()   # joints with clearance, see linkdyn.elements.clearance
    joint_frictions: tuple = ()   # see linkdyn.elements.joint_friction
    cams: tuple = ()     # cams and followers, see linkdyn.elements.cams


def unconnected_bodies(desc) -> list:
    """The bodies of a planar or spatial description that no joint, driver, force element or
    contact refers to (they move on their own: fall, or drift). An element refers to a body
    by its name or by a point reference (body, point) in any of its fields."""
    named = set()

    def collect(value):
        if isinstance(value, str):
            named.add(value)
        elif isinstance(value, (tuple, list)):
            for item in value:
                collect(item)

    for element in (*desc.joints, *desc.drivers, *desc.forces, *desc.contacts,
                    *getattr(desc, "gears", ()), *getattr(desc, "clearances", ()),
                    *getattr(desc, "cams", ())):
        for f in fields(element):
            if f.name != "name":
                collect(getattr(element, f.name))
    return [b.name for b in desc.bodies if b.name not in named]


def element_laws(desc) -> list:
    """(element name, Law) of every law in a planar or spatial description's drivers, force
    elements and contacts (a driver's motion, a motor's torque, a spring's free length)."""
    from .laws import Law

    out = []
    for element in (*getattr(desc, "drivers", ()), *getattr(desc, "forces", ()),
                    *getattr(desc, "contacts", ())):
        for f in fields(element):
            value = getattr(element, f.name)
            if isinstance(value, Law):
                out.append((element.name, value))
    return out


def to_dict(desc: Description) -> dict:
    """The canonical JSON-ready form of a description."""
    bodies = []
    for b in desc.bodies:
        if isinstance(b, BarSpec):
            d = {"type": "bar", "name": b.name, "length": b.length}
            for k in ("density", "mass", "inertia"):
                if getattr(b, k) is not None:
                    d[k] = getattr(b, k)
        else:
            assert isinstance(b, BodySpec)
            d = {"type": "body", "name": b.name, "mass": b.mass, "inertia": b.inertia}
        if b.points:
            d["points"] = {name: list(xy) for name, xy in b.points}
        d.update(position=list(b.position), u=list(b.u), velocity=list(b.velocity),
                 ud=list(b.ud))
        if b.hold:
            d["hold"] = True
        bodies.append(d)
    out = {
        "linkdyn_model": FORMAT_VERSION,
        "name": desc.name,
        "gravity": list(desc.gravity),
        "ground": {name: list(xy) for name, xy in desc.ground},
        "bodies": bodies,
        "joints": ([_joint_dict(j) for j in desc.joints]
                   + [clearance.to_dict(j) for j in desc.clearances]),
        "drivers": [_driver_dict(d) for d in desc.drivers],
        "forces": ([forces.to_dict(f) for f in desc.forces]
                   + [joint_friction.to_dict(f) for f in desc.joint_frictions]),
        "contacts": [contacts.to_dict(c) for c in desc.contacts],
        "markers": [{"name": m.name, "point": f"{m.body}.{m.point}"} for m in desc.markers],
    }
    if desc.gears:
        out["gears"] = [gears.to_dict(g) for g in desc.gears]
    if desc.cams:
        out["cams"] = [cams.to_dict(c) for c in desc.cams]
    if desc.stops:
        out["stops"] = [stops.to_dict(s) for s in desc.stops]
    if desc.kinematic:
        out["kinematic"] = True
    if desc.run_defaults:
        out["run_defaults"] = dict(desc.run_defaults)
    return out


def _joint_dict(j) -> dict:
    d = {"type": "prismatic" if isinstance(j, PrismaticSpec) else "revolute", "name": j.name,
         "first": ".".join(j.first), "second": ".".join(j.second)}
    if isinstance(j, PrismaticSpec):
        d.update(axis=j.axis, angle=j.angle)
    return d


def _driver_dict(d) -> dict:
    if isinstance(d, CoordinateDriverSpec):
        return {"type": "coordinate", "name": d.name, "point": ".".join(d.point),
                "axis": d.axis, "law": d.law.to_dict()}
    kind = "angle" if isinstance(d, AngleDriverSpec) else "slide"
    assert isinstance(d, (AngleDriverSpec, SlideDriverSpec))
    return {"type": kind, "name": d.name, "joint": d.joint, "law": d.law.to_dict()}


def _no_negative_zero(x):
    """-0.0 written as 0.0 (a sign of zero carries no meaning in a model file)."""
    if isinstance(x, float):
        return x + 0.0
    if isinstance(x, dict):
        return {k: _no_negative_zero(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_no_negative_zero(v) for v in x]
    return x


def dumps(desc: Description) -> str:
    return json.dumps(_no_negative_zero(to_dict(desc)), indent=2) + "\n"


def save(desc: Description, path) -> None:
    """Write a description as a model file (canonical form)."""
    Path(checked_path("save", path)).write_text(dumps(desc), encoding="utf-8")
