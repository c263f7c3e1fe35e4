"""A MuJoCo geom's mass, centre and inertia, computed as MuJoCo's compiler does for a body
without an ``<inertial>``: the solid's volume times ``density`` (or the ``mass`` given),
its centre at the geom's position, its inertia in the geom's frame turned into the body's.
A capsule is a cylinder with a hemisphere at each end (each hemisphere's inertia about its
own centre of mass, 3/8 r from its flat face, moved by the parallel-axis rule)."""

from __future__ import annotations

import math

import numpy as np

from .geometry import z_to

__all__ = ["geom_mass_properties", "solid_inertia"]

DENSITY = 1000.0
#: Geom types without volume (planes) or whose volume linkdyn does not compute (meshes,
#: height fields, signed distance fields).
NO_MASS = ("plane",)
UNREAD = ("mesh", "hfield", "sdf")


def solid_inertia(kind: str, size, density: float | None, mass: float | None):
    """(mass, principal moments about the centre in the geom frame) of a solid."""
    r = size[0]
    if kind == "sphere":
        volume = 4.0 / 3.0 * math.pi * r ** 3
    elif kind == "capsule":
        volume = math.pi * r * r * 2.0 * size[1] + 4.0 / 3.0 * math.pi * r ** 3
    elif kind == "cylinder":
        volume = math.pi * r * r * 2.0 * size[1]
    elif kind == "box":
        volume = 8.0 * size[0] * size[1] * size[2]
    else:   # ellipsoid
        volume = 4.0 / 3.0 * math.pi * size[0] * size[1] * size[2]
    m = mass if mass is not None else density * volume
    if kind == "sphere":
        I = np.full(3, 0.4 * m * r * r)
    elif kind == "capsule":
        h = 2.0 * size[1]                            # the cylinder's length
        ms = m * (4.0 / 3.0 * r) / (4.0 / 3.0 * r + h)   # both hemispheres
        mc = m - ms
        side = mc * (3.0 * r * r + h * h) / 12.0
        # each hemisphere about its own centre: 83/320 m r^2 across, 2/5 m r^2 along;
        # moved to the capsule's centre by h/2 + 3r/8
        d = h / 2.0 + 3.0 * r / 8.0
        hemi = ms * (83.0 / 320.0 * r * r + d * d)
        I = np.array([side + hemi, side + hemi, mc * r * r / 2.0 + 0.4 * ms * r * r])
    elif kind == "cylinder":
        h = 2.0 * size[1]
        I = np.array([m * (3.0 * r * r + h * h) / 12.0] * 2 + [m * r * r / 2.0])
    elif kind == "box":
        a, b, c = (2.0 * s for s in size[:3])
        I = m / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    else:
        a, b, c = size[:3]
        I = m / 5.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    return m, I


#: The size entries each geom type reads.
SIZES = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3, "ellipsoid": 3}


def _fromto(reader, geom, a, kind, size):
    """(position, rotation, size) of a geom given by ``fromto``: its axis along the segment,
    its half-length half the segment (box and ellipsoid: the third size)."""
    ft = reader.floats(geom, a, "fromto", 6)
    p0, p1 = ft[:3], ft[3:]
    axis = p1 - p0
    length = float(np.linalg.norm(axis))
    if not length > 0:
        raise geom.error("fromto's two points coincide", "fromto")
    R = z_to(axis / length)
    size = list(size)
    while len(size) < 3:
        size.append(0.0)
    if kind in ("capsule", "cylinder"):
        size[1] = length / 2.0
    else:
        size[2] = length / 2.0
    return 0.5 * (p0 + p1), R, size


def geom_mass_properties(reader, geom, a):
    """(mass, centre in the body frame, inertia about it in body axes) of one geom, or
    None for a geom without mass (a plane); ModelFileError for a mesh, whose inertia
    linkdyn does not compute (give the body an ``<inertial>``)."""
    kind = a.get("type", "sphere")
    if kind in NO_MASS:
        return None
    if kind in UNREAD:
        raise geom.error(f"the mass properties of a {kind} geom are not computed here: give "
                         "its body an <inertial>", "type")
    if kind not in SIZES:
        raise geom.error(f"unknown geom type {kind!r}", "type")
    need = 1 if "fromto" in a and kind in ("capsule", "cylinder") else SIZES[kind]
    text = a.get("size", "")
    try:
        size = [float(x) for x in text.split()]
    except ValueError:
        raise geom.error(f"expected numbers, got {text!r}", "size") from None
    if len(size) < need or not all(math.isfinite(x) and x >= 0 for x in size[:need]):
        raise geom.error(f"a {kind} needs {need} size entries (non-negative), got {text!r}",
                         "size")
    if "fromto" in a:
        pos, R, size = _fromto(reader, geom, a, kind, size)
    else:
        pos = reader.floats(geom, a, "pos", 3, (0.0, 0.0, 0.0))
        R = reader.frame(geom, a)
    mass = float(reader.floats(geom, a, "mass", 1)[0]) if "mass" in a else None
    density = float(reader.floats(geom, a, "density", 1)[0]) if "density" in a else DENSITY
    m, I = solid_inertia(kind, size, density, mass)
    return m, pos, R @ np.diag(I) @ R.T
