"""Spatial rigid bodies and their joints: the records of a spatial model (bodies, ground
points, spherical joints, markers), the checks the spatial builder applies to them, and the
mass properties of a body in natural coordinates.

Conventions (SI units throughout)
---------------------------------
* A spatial body carries its centre of mass ``r`` and three unit vectors ``u, v, w`` along
  its principal axes of inertia: twelve natural coordinates (Garcia de Jalon and Bayo,
  "Kinematic and Dynamic Simulation of Multibody Systems"), kept a rigid, orthonormal frame
  by six quadratic rows (``u.u = v.v = w.w = 1``, ``u.v = u.w = v.w = 0``).
* A body-fixed point with coordinates ``p`` in the principal frame sits at
  ``r + p_1 u + p_2 v + p_3 w``: linear in the coordinates, so its velocity and acceleration
  are the same map of the coordinates' rates.
* With the centre of mass and the principal axes as coordinates the kinetic energy is
  ``m |r'|^2 / 2 + sum_k P_k |e_k'|^2 / 2``, where ``P_k = (I_l + I_m - I_k) / 2 =
  integral of x_k^2 dm`` is the body's second moment along principal axis k: the mass matrix
  is constant and diagonal, ``diag(m, m, m, P_1 (x3), P_2 (x3), P_3 (x3))``, as for the planar
  bodies (``diag(m, m, Jz, Jz)``). P_k > 0 needs the strict triangle inequality of the
  principal moments, I_k < I_l + I_m: a body whose mass lies on a plane has none along the
  plane's normal and is refused (give it a thickness).
* A *rod* is a body whose mass lies on a line: principal moments (0, I, I), the zero one
  about its axis (a slender bar, or point masses on a massless rod, as in a chain of
  spatial pendulums). It carries only its centre of mass and the unit axis ``u``: six
  coordinates, one row (``u.u = 1``) and the mass matrix ``diag(m, m, m, I, I, I)``, the
  spatial twin of the planar bar. Its points lie on its axis; it has no spin about the axis
  (the axial part of ``angular_velocity`` is not a state and is dropped) and no frame
  across it, so joints, drivers, loads and contacts that need a direction across a rod's
  axis (a revolute joint's perpendiculars, an angle driver, a torque) are refused by name.
  Spherical joints, point primitives, distance and coordinate drivers, point forces in
  global axes, spring-dampers, contacts at its points and markers take rods.
* The user describes a body in its own axes: ``inertia`` about the centre of mass in those
  axes (3 principal moments, or a symmetric 3 x 3 tensor), ``orientation`` the rotation
  matrix from body axes to global axes, ``points`` in body axes relative to the centre of
  mass, ``velocity`` of the centre of mass and ``angular_velocity`` in global axes.
  Every body has the point ``cm``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .._checks import mat3, unit_vec3, vec3
from ..errors import ModelError
from .clearance import to_dict as clearance_to_dict
from .gears import to_dict as gear_to_dict
from .joint_friction import to_dict as friction_to_dict
from .stops import to_dict as stop_to_dict
from .spatial_contacts import to_dict as contact_to_dict
from .spatial_forces import to_dict as force_to_dict

__all__ = ["SpatialBodySpec", "SphericalSpec", "AxisJointSpec", "SpatialDriverSpec",
           "SpatialDescription", "Vec3", "principal_frame", "rod_axis", "may_be_rod", "vec3",
           "rotation_matrix", "unit_vec3"]

Vec3 = tuple[float, float, float]
Mat3 = tuple[Vec3, Vec3, Vec3]

#: Largest departure of a rotation matrix from orthonormality accepted (then re-orthonormalised).
ORTHONORMAL_TOL = 1e-9
_EYE = np.eye(3)


@dataclass(frozen=True)
class SpatialBodySpec:
    """A spatial rigid body (see the module's conventions)."""

    name: str
    mass: float
    inertia: Mat3
    points: tuple[tuple[str, Vec3], ...] = ()
    position: Vec3 = (0.0, 0.0, 0.0)
    orientation: Mat3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    velocity: Vec3 = (0.0, 0.0, 0.0)
    angular_velocity: Vec3 = (0.0, 0.0, 0.0)

    def local_points(self) -> dict[str, Vec3]:
        return {"cm": (0.0, 0.0, 0.0), **dict(self.points)}


@dataclass(frozen=True)
class SphericalSpec:
    """A spherical joint: point ``first`` of one body coincides with point ``second`` of
    another body or of the ground."""

    name: str
    first: tuple[str, str]
    second: tuple[str, str]


@dataclass(frozen=True)
class AxisJointSpec:
    """A joint with an axis: ``axis_first`` is fixed in the first body (body axes),
    ``axis_second`` in the second (body axes, or global for the ground). ``kind``:

    - "revolute": the points coincide and the axes stay aligned (one relative rotation);
    - "universal": the points coincide and the cross's arms, the two axes, stay
      perpendicular (two rotations);
    - "cylindrical": the first point stays on the line through the second point along the
      axis, the axes aligned (slides along and turns about it);
    - "prismatic": cylindrical without the rotation;
    - "rigid": the points coincide and the relative orientation is kept (a weld);
    - "planar": the first point stays on the plane through the second point normal to the
      axis, and the axes (the planes' normals) stay aligned: two slides in the plane and a
      rotation about its normal;
    - "planar_slide": planar without the rotation: the first point on that plane and the
      relative orientation kept (two slides in the plane);
    - "point_plane": the first point stays on that plane (five freedoms);
    - "point_line": the first point stays on the line through the second point along the
      axis (four freedoms)."""

    name: str
    kind: str
    first: tuple[str, str]
    second: tuple[str, str]
    axis_first: Vec3
    axis_second: Vec3


@dataclass(frozen=True)
class SpatialDriverSpec:
    """A driver row with a law of time: ``kind`` "angle" (the relative rotation of a
    revolute joint's first body about its axis, rad, zero at the initial configuration,
    right-handed about the axis), "distance" (between two points, m) or "coordinate" (a
    point's global x, y or z, m)."""

    name: str
    kind: str
    law: object
    joint: str = ""
    first: tuple[str, str] = ("", "")
    second: tuple[str, str] = ("", "")
    axis: str = ""


@dataclass(frozen=True)
class SpatialMarkerSpec:
    name: str
    body: str
    point: str


@dataclass(frozen=True)
class SpatialDescription:
    """A complete, validated spatial model description (immutable)."""

    name: str
    gravity: Vec3
    ground: tuple[tuple[str, Vec3], ...]
    bodies: tuple[SpatialBodySpec, ...]
    joints: tuple[SphericalSpec | AxisJointSpec, ...]
    markers: tuple[SpatialMarkerSpec, ...]
    drivers: tuple = ()
    forces: tuple = ()
    contacts: tuple = ()
    kinematic: bool = False
    #: The model's own run settings, sorted (key, value) pairs (linkdyn.elements.run_defaults)
    run_defaults: tuple = ()
    gears: tuple = ()    # gear pairs between revolute joints, see linkdyn.elements.gears
    stops: tuple = ()    # joint stops, see linkdyn.elements.stops
    clearances: tuple = ()   # spherical joints with clearance, linkdyn.elements.clearance
    joint_frictions: tuple = ()   # see linkdyn.elements.joint_friction


def rotation_matrix(entry: str, value) -> Mat3:
    """A proper rotation matrix (orthonormal to 1e-9, determinant +1), re-orthonormalised
    unless it already is to rounding (so that a saved model reads back bit for bit: the
    polar factor of an orthonormal matrix moves its last bits)."""
    R = mat3(entry, "orientation", value)
    (a, b, c), (d, e, f), (g, h, i) = R.tolist()
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    off = np.abs(R.T @ R - _EYE).max()
    if not det > 0 or off > ORTHONORMAL_TOL:
        raise ModelError(f"{entry}: orientation must be a rotation matrix (orthonormal "
                         f"columns, determinant +1), got {R.tolist()}")
    if off <= 8 * np.finfo(float).eps:
        return tuple(map(tuple, R.tolist()))
    u, _, vt = np.linalg.svd(R)
    return tuple(map(tuple, (u @ vt).tolist()))


def inertia_tensor(entry: str, value) -> Mat3:
    """The inertia about the centre of mass: 3 principal moments (body axes principal) or a
    symmetric 3 x 3 tensor; positive definite, and every moment below the sum of the other
    two (see the module's conventions)."""
    flat = value.ndim == 1 if isinstance(value, np.ndarray) else (
        isinstance(value, (list, tuple)) and len(value) == 3 and
        not any(isinstance(x, (list, tuple, np.ndarray)) for x in value))
    if flat:    # a diagonal tensor: its moments, checked without numpy's overhead
        m = vec3(entry, "inertia", value, "three principal moments or a 3 x 3 tensor")
        J = ((m[0], 0.0, 0.0), (0.0, m[1], 0.0), (0.0, 0.0, m[2]))
        _check_range(entry, J)
        _check_moments(entry, sorted(m))
        return J
    J = mat3(entry, "inertia", value)
    _check_range(entry, J)
    if np.abs(J - J.T).max() > 1e-12 * max(np.abs(J).max(), 1e-300):
        raise ModelError(f"{entry}: inertia must be symmetric, got {J.tolist()}")
    sym = 0.5 * (J + J.T)
    _check_moments(entry, np.linalg.eigvalsh(sym).tolist())
    return tuple(tuple(float(x) for x in row) for row in sym)


def _check_range(entry: str, J) -> None:
    """ModelError unless every entry of the tensor J is below 1e150 (its eigenvalues would
    overflow, and any motion)."""
    if not max(abs(float(x)) for row in J for x in row) < 1e150:
        raise ModelError(f"{entry}: inertia {[[float(x) for x in row] for row in J]} is out "
                         "of range (entries below 1e150 kg m^2)")


#: A rod's axial moment, relative to its transverse ones, at most (module conventions).
ROD_TOL = 1e-12


def _rod_moments(moments) -> bool:
    """Whether principal ``moments`` (ascending) are a rod's (0, I, I): the smallest zero
    and the other two equal, to ROD_TOL of the largest."""
    scale = moments[2]
    return (scale > 0 and abs(moments[0]) <= ROD_TOL * scale and
            moments[2] - moments[1] <= ROD_TOL * scale)


def rod_axis(P):
    """The principal axis (0, 1 or 2: a column of :func:`principal_frame`'s E) of a rod's
    zero moment, or None for a body with a full frame (module conventions); ``P``: the
    second moments :func:`principal_frame` gives."""
    moments = P.sum() - P            # I_k = (I_1 + I_2 + I_3) / 2 - P_k, sum(P) = that half
    if not _rod_moments(sorted(moments.tolist())):
        return None
    return int(np.argmin(moments))


def may_be_rod(J) -> bool:
    """False for a checked inertia tensor ``J`` (tuples) that is surely not a rod's: its
    determinant, the product of the moments, is not small against the largest entry
    cubed (a cheap test before :func:`principal_frame` and :func:`rod_axis`; the largest
    entry of a positive semi-definite J is on its diagonal)."""
    (a, b, c), (_, e, f), (_, _, i) = J
    det = a * (e * i - f * f) - b * (b * i - f * c) + c * (b * f - e * c)
    return abs(det) <= 1e-6 * max(a, e, i) ** 3


def _check_moments(entry: str, moments: list) -> None:
    """ModelError unless the principal ``moments`` (ascending) are positive and each below
    the sum of the other two, or are a rod's (0, I, I)."""
    if _rod_moments(moments):
        return
    if not moments[0] > 0:
        raise ModelError(f"{entry}: inertia must be positive definite, or a rod's (0, I, "
                         f"I) (principal moments {moments} kg m^2)")
    half = 0.5 * (moments[0] + moments[1] + moments[2])
    if not min(half - x for x in moments) > 1e-9 * moments[2]:
        raise ModelError(f"{entry}: principal moments {moments} kg m^2 break the "
                         "triangle inequality (each must be less than the sum of the other "
                         "two): the body's mass lies on a plane, which leaves its natural "
                         "coordinates without mass along it; give the body a thickness (a "
                         "body whose mass lies on a line is a rod: moments (0, I, I))")


def principal_frame(inertia) -> tuple[np.ndarray, np.ndarray]:
    """(E, P): the principal axes of ``inertia`` as the columns of a proper rotation E (in
    body axes) and the second moments P_k = (I_l + I_m - I_k) / 2.

    E is the principal frame nearest the body axes: the identity for a diagonal tensor
    (whatever the order or equality of its moments), else the eigenvectors ordered and
    signed to lie closest to the body axes. So the frame, and with it the meaning of the
    body's coordinates, does not jump when a moment passes another or two become equal
    (a symmetric rotor): the models compiled at nearby inertias, as sensitivities compile
    them, share their coordinates."""
    if isinstance(inertia, tuple) and len(inertia) == 3:     # the checked tensor's tuples
        (a, b, c), (d, e, f), (g, h, i) = inertia
        if b == c == d == f == g == h == 0.0:       # diagonal, without numpy's overhead
            moments = np.array([a, e, i], dtype=float)
            return np.eye(3), 0.5 * moments.sum() - moments
    J = np.asarray(inertia, dtype=float)
    if not np.any(J - np.diag(np.diag(J))):
        moments = np.diag(J).copy()
        return np.eye(3), 0.5 * moments.sum() - moments
    moments, V = np.linalg.eigh(J)
    best, order = -1.0, None
    for perm in itertools.permutations(range(3)):
        score = sum(abs(V[k, perm[k]]) for k in range(3))
        if score > best:
            best, order = score, perm
    E = V[:, order] * np.sign([V[k, order[k]] or 1.0 for k in range(3)])
    moments = moments[list(order)]
    if np.linalg.det(E) < 0:     # the nearest signed frame is improper: flip the weakest
        k = int(np.argmin(np.abs(np.diag(E))))
        E[:, k] = -E[:, k]
    return E, 0.5 * moments.sum() - moments


def to_dict(desc: SpatialDescription) -> dict:
    """The canonical JSON-ready form of a spatial description (read back by
    :mod:`linkdyn.describe.spatialfile`): orientations as rotation matrices, joint axes as
    global directions at the initial configuration."""
    orient = {b.name: np.array(b.orientation) for b in desc.bodies}

    def glob(body, axis):
        return [float(x) for x in (orient[body] @ np.array(axis) if body in orient
                                   else np.array(axis))]

    bodies = []
    for b in desc.bodies:
        d = {"name": b.name, "mass": b.mass, "inertia": [list(r) for r in b.inertia]}
        if b.points:
            d["points"] = {name: list(p) for name, p in b.points}
        d.update(position=list(b.position), orientation=[list(r) for r in b.orientation],
                 velocity=list(b.velocity), angular_velocity=list(b.angular_velocity))
        bodies.append(d)
    joints = []
    for j in desc.joints:
        d = {"name": j.name, "first": ".".join(j.first), "second": ".".join(j.second)}
        if isinstance(j, SphericalSpec):
            d["type"] = "spherical"
        elif j.kind == "universal":
            d.update(type="universal", axis_first=glob(j.first[0], j.axis_first),
                     axis_second=glob(j.second[0], j.axis_second))
        else:
            d["type"] = j.kind
            if j.kind in ("planar", "planar_slide", "point_plane"):
                d["normal"] = glob(j.second[0], j.axis_second)
            elif j.kind != "rigid":
                d["axis"] = glob(j.first[0], j.axis_first)
        joints.append(d)
    joints += [clearance_to_dict(j) for j in desc.clearances]
    drivers = []
    for v in desc.drivers:
        d = {"type": v.kind, "name": v.name}
        if v.kind == "angle":
            d["joint"] = v.joint
        elif v.kind == "distance":
            d.update(first=".".join(v.first), second=".".join(v.second))
        else:
            d.update(point=".".join(v.first), axis=v.axis)
        d["law"] = v.law.to_dict()
        drivers.append(d)
    out = {"linkdyn_model": 1, "space": "spatial", "name": desc.name,
           "gravity": list(desc.gravity), "ground": {n: list(p) for n, p in desc.ground},
           "bodies": bodies, "joints": joints, "drivers": drivers,
           "forces": ([force_to_dict(f) for f in desc.forces]
                      + [friction_to_dict(f) for f in desc.joint_frictions]),
           "contacts": [contact_to_dict(c, orient.get(c.plane_point[0]))
                        for c in desc.contacts],
           "markers": [{"name": m.name, "point": f"{m.body}.{m.point}"}
                       for m in desc.markers]}
    if desc.run_defaults:
        out["run_defaults"] = dict(desc.run_defaults)
    if desc.gears:
        out["gears"] = [gear_to_dict(g) for g in desc.gears]
    if desc.stops:
        out["stops"] = [stop_to_dict(s) for s in desc.stops]
    return out
