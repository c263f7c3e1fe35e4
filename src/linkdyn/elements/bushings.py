"""Bushings: linear and tabulated nonlinear spring-dampers between two body frames (Adams'
BUSHING), planar and spatial. This module is the family's one home: its records, the checks of their fields,
their model-file form and their compile step, to the force kernels' records of
:mod:`linkdyn.elements.records` (one per component, each along one coordinate, with exact
derivatives).

Conventions
-----------
* A bushing joins point ``first`` of one body (or the ground) to point ``second`` of
  another. Its frame is fixed in the first body: in a planar model its x axis is at
  ``angle`` (rad) from the first body's u (from the global x axis on the ground); in a
  spatial model ``orientation`` is its axes' rotation matrix, global at the initial
  configuration, and the frame turns with the first body from there.
* Translations are the second point's offset from the first along the frame's axes (zero
  where the points coincide). Rotations are the second body's turn relative to the first
  (zero in the initial configuration). In the plane this is the relative angle,
  continuous over turns. In space the rotation about axis x is the angle of the second
  body's y axis (the frame's y at the start) in the first body's y-z plane, and likewise
  about y (z in the z-x plane) and z (x in the x-y plane). For small rotations these are
  the components of the rotation vector (the small-angle convention); each is exact for a
  rotation about its own axis.
* Each component i applies ``f_i = -k_i s_i - c_i s_i' + p_i`` along its coordinate: a
  force (N) along the axis on the second body (the opposite on the first) or a torque
  (N m) about it, with stiffness ``k_i``, damping ``c_i`` and preload ``p_i``. The
  coordinates turn with the first body, so the forces do work as a spring's do: the
  potential energy is ``sum k_i s_i^2 / 2`` and the dampers' work is ``-c_i s_i'^2``.
* A component's stiffness may instead be a measured curve, ``{"deflection": [...],
  "force": [...]}`` (m and N, or rad and N m; at least 3 points, deflections increasing):
  the spring force is then ``-T(s_i)`` with T the monotone cubic through the points
  (SciPy's ``PchipInterpolator``, no overshoot between them), continued beyond the
  table along its end tangents; its stored energy is the integral of T from 0, so the
  energy balance holds as for a linear spring. A curve with T(0) != 0 acts as a preload.
* Components in order: planar (x, y, rotation), spatial (x, y, z, rx, ry, rz).
  ``result.bushing_force(name)`` returns the f_i.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import real
from ..errors import ModelError
from .bodies import PointRef, _element
from .laws import constant
from .records import ANGLE, SLIDE, TABLE_LAW, _Record

__all__ = ["BushingSpec", "SpatialBushingSpec", "BushingBuilder", "SpatialBushingBuilder",
           "planar_records", "spatial_records", "to_dict", "COMPONENTS", "FILE_TYPE",
           "SPATIAL_FILE_TYPE", "ForceTable"]

#: The components' names, planar and spatial.
COMPONENTS = {2: ("x", "y", "rotation"), 3: ("x", "y", "z", "rx", "ry", "rz")}


@dataclass(frozen=True)
class BushingSpec:
    """A planar bushing: stiffness, damping and preload per component (x, y, rotation)."""

    name: str
    first: PointRef
    second: PointRef
    stiffness: tuple
    damping: tuple
    preload: tuple
    angle: float = 0.0
    rest_angle: float = 0.0     # the bodies' relative angle in the initial guesses


@dataclass(frozen=True)
class SpatialBushingSpec:
    """A spatial bushing: per component (x, y, z, rx, ry, rz); ``orientation`` the frame's
    axes (columns) in global axes at the initial configuration."""

    name: str
    first: PointRef
    second: PointRef
    stiffness: tuple
    damping: tuple
    preload: tuple
    orientation: tuple = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


@dataclass(frozen=True)
class ForceTable:
    """A measured force-deflection curve: ``deflection`` (increasing) and ``force``."""

    deflection: tuple
    force: tuple

    def interpolant(self):
        from scipy.interpolate import PchipInterpolator

        return PchipInterpolator(self.deflection, self.force, extrapolate=False)

    def params(self) -> list:
        """The kernels' parameters of the curve (``csrc/ld_forces.h``, LD_FORCE_TABLE)."""
        pp = self.interpolant()
        x, c = pp.x, pp.c                 # c[k, i]: power 3 - k on piece i
        m = len(x) - 1
        coef = c[::-1].T                  # (m, 4): a, b, c, d
        h = np.diff(x)
        full = h * (coef[:, 0] + h * (coef[:, 1] / 2 + h * (coef[:, 2] / 3
                                                              + h * coef[:, 3] / 4)))
        start = np.concatenate([[0.0], np.cumsum(full)[:-1]])
        return [float(m), *x, *coef.ravel(), *start, float(self.energy_offset(start))]

    def energy_offset(self, start) -> float:
        """The integral of T from the table's first deflection to 0 (extrapolated)."""
        pp = self.interpolant()
        x = np.asarray(self.deflection)
        if x[0] <= 0.0 <= x[-1]:
            i = min(int(np.searchsorted(x, 0.0, side="right")) - 1, len(x) - 2)
            return float(start[i] + pp.integrate(x[i], 0.0))
        end = 0 if 0.0 < x[0] else -1
        t, dt = float(pp(x[end])), float(pp.derivative()(x[end]))
        h = 0.0 - x[end]
        base = 0.0 if end == 0 else float(start[-1] + pp.integrate(x[-2], x[-1]))
        return base + t * h + 0.5 * dt * h * h

    def to_dict(self) -> dict:
        return {"deflection": list(self.deflection), "force": list(self.force)}


def _table(entry, what, value) -> ForceTable:
    """A checked force table from a mapping {"deflection", "force"}."""
    if set(value) != {"deflection", "force"}:
        raise ModelError(f"{entry}: {what} as a table must be a mapping with 'deflection' and "
                         f"'force', got fields {sorted(value)}")
    try:
        x = np.asarray(value["deflection"], dtype=float)
        f = np.asarray(value["force"], dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{entry}: {what}'s deflection and force must be lists of numbers")\
            from None
    if x.ndim != 1 or x.shape != f.shape or len(x) < 3:
        raise ModelError(f"{entry}: {what}'s deflection and force must be two lists of the "
                         f"same length, at least 3 points, got {x.shape} and {f.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(f))):
        raise ModelError(f"{entry}: {what}'s table must be finite numbers")
    bad = np.flatnonzero(np.diff(x) <= 0.0)
    if bad.size:
        raise ModelError(f"{entry}: {what}'s deflections must increase; entry {bad[0] + 1} "
                         f"({x[bad[0] + 1]!r}) does not exceed the one before it")
    return ForceTable(tuple(x.tolist()), tuple(f.tolist()))


def _two_bodies(entry, first, second) -> None:
    if first[0] == second[0]:
        raise ModelError(f"{entry}: a bushing joins two different bodies; both points are "
                         f"on '{first[0]}'")


def _checked(entry, n, stiffness, damping, preload) -> tuple:
    names = COMPONENTS[2 if n == 3 else 3]

    def vec(what, value, nonnegative, tables=False):
        if (isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__")
                or len(value) != n):
            raise ModelError(f"{entry}: {what} must be {n} numbers (one per component: "
                             f"{', '.join(names)}), got {value!r}")
        return tuple(_table(entry, f"{what}[{i}] ({names[i]})", v)
                     if tables and isinstance(v, dict) else v
                     if tables and isinstance(v, ForceTable) else
                     real(entry, f"{what}[{i}] ({names[i]})", v, nonnegative=nonnegative)
                     for i, v in enumerate(value))

    k = vec("stiffness", stiffness, True, tables=True)
    c = vec("damping", (0.0,) * n if damping is None else damping, True)
    p = vec("preload", (0.0,) * n if preload is None else preload, False)
    if not any(k) and not any(c) and not any(p):
        raise ModelError(f"{entry}: every stiffness, damping and preload is zero: the "
                         "bushing would do nothing")
    return k, c, p


def planar_bushing(entry, name, first, second, stiffness, damping, preload, angle,
                   rest_angle) -> BushingSpec:
    """A checked planar bushing (the builder resolves the references and the rest angle)."""
    _two_bodies(entry, first, second)
    k, c, p = _checked(entry, 3, stiffness, damping, preload)
    return BushingSpec(name, first, second, k, c, p, real(entry, "angle", angle),
                       rest_angle)


def spatial_bushing(entry, name, first, second, stiffness, damping, preload,
                    orientation) -> SpatialBushingSpec:
    """A checked spatial bushing (``orientation`` already a checked rotation matrix)."""
    _two_bodies(entry, first, second)
    k, c, p = _checked(entry, 6, stiffness, damping, preload)
    return SpatialBushingSpec(name, first, second, k, c, p,
                              tuple(map(tuple, np.asarray(orientation, float).tolist())))


class BushingBuilder:
    """The bushing method of :class:`linkdyn.ModelBuilder` (a mixin)."""

    def add_bushing(self, name: str, first, second, *, stiffness, damping=None,
                    preload=None, angle=0.0) -> None:
        """A bushing from point ``first`` to point ``second`` (``"body.point"``), its frame
        at ``angle`` (rad) from the first body's u: ``stiffness`` (kx N/m, ky N/m, k N m/rad),
        ``damping`` (the same per second; default none) and ``preload`` (Fx N, Fy N, T N m;
        default none) for its x, y and rotation components. See
        :mod:`linkdyn.elements.bushings`."""
        name = self._new_name("force element", name)
        entry = f"bushing '{name}'"
        with _element(name):
            a, b = self._ref(entry, first), self._ref(entry, second)
            rest = self._orientation(b[0]) - self._orientation(a[0])
            self._forces[name] = planar_bushing(entry, name, a, b, stiffness, damping,
                                                preload, angle, rest)


class SpatialBushingBuilder:
    """The bushing method of :class:`linkdyn.SpatialModelBuilder` (a mixin)."""

    def add_bushing(self, name: str, first, second, *, stiffness, damping=None,
                    preload=None, orientation=None) -> None:
        """A bushing from point ``first`` to point ``second`` (``"body.point"``), its axes
        the columns of ``orientation`` (a rotation matrix, global at the initial
        configuration; default the global axes), fixed in the first body: ``stiffness``
        (kx, ky, kz in N/m, krx, kry, krz in N m/rad), ``damping`` (the same per second)
        and ``preload`` (forces in N, torques in N m), six numbers each. See
        :mod:`linkdyn.elements.bushings`."""
        name = self._new_name("force element", name)
        entry = f"bushing '{name}'"
        with _element(name):
            a, b = self._ref(entry, first), self._ref(entry, second)
            R = self._rotation(entry, np.eye(3) if orientation is None else orientation)
            self._forces[name] = spatial_bushing(entry, name, a, b, stiffness, damping,
                                                 preload, R)


#: The model-file entry (in the ``forces`` list): method, required and optional fields.
FILE_TYPE = ("add_bushing", {"first", "second", "stiffness"}, {"damping", "preload", "angle"})
SPATIAL_FILE_TYPE = ("add_bushing", {"first", "second", "stiffness"},
                     {"damping", "preload", "orientation"})


def _record(spec, i, coord, bodies, geom, rest=0.0) -> _Record:
    k = spec.stiffness[i]
    rec = _Record(spec.name, coord, bodies, geom, 0.0 if isinstance(k, ForceTable) else k,
                  spec.damping[i], rest,
                  constant(spec.preload[i]) if spec.preload[i] else None)
    if isinstance(k, ForceTable):
        rec.law, rec.table = TABLE_LAW, k
    return rec


def planar_records(spec: BushingSpec, side) -> list:
    """The bushing's three records; ``side(ref)`` gives (body index or -1, local or ground
    point)."""
    (b1, p1), (b2, p2) = side(spec.first), side(spec.second)
    out = []
    for i, turn in enumerate((0.0, 0.5 * math.pi)):
        a = spec.angle + turn
        out.append(_record(spec, i, SLIDE, (b1, b2), (*p1, *p2, math.cos(a), math.sin(a))))
    out.append(_record(spec, 2, ANGLE, (b1, b2), (0.0, 0.0, 0.0, 0.0, 1.0, 0.0),
                       spec.rest_angle))
    return out


def spatial_records(spec: SpatialBushingSpec, geo) -> list:
    """The bushing's six records on a spatial model's geometry
    (:class:`linkdyn.elements.spatial_forces.Geometry`)."""
    A, B = spec.first[0], spec.second[0]
    bodies = (geo.body(A), geo.body(B))
    axes = np.asarray(spec.orientation, dtype=float).T       # rows: the frame's axes
    points = geo.point(spec.first) + geo.point(spec.second)
    out = [_record(spec, i, SLIDE, bodies, points + geo.direction(A, axes[i]) + (0.0,) * 6)
           for i in range(3)]
    for i in range(3):      # about axis i: axis i+1 in the plane of axes i+1, i+2
        a, b = axes[(i + 1) % 3], axes[(i + 2) % 3]
        out.append(_record(spec, 3 + i, ANGLE, bodies, (0.0,) * 6 + geo.direction(A, a) +
                           geo.direction(A, b) + geo.direction(B, a)))
    return out


def to_dict(spec) -> dict:
    """The model-file entry of a bushing."""
    d = {"type": "bushing", "name": spec.name, "first": ".".join(spec.first),
         "second": ".".join(spec.second),
         "stiffness": [k.to_dict() if isinstance(k, ForceTable) else k
                       for k in spec.stiffness],
         "damping": list(spec.damping), "preload": list(spec.preload)}
    if isinstance(spec, BushingSpec):
        d["angle"] = spec.angle
    else:
        d["orientation"] = [list(row) for row in spec.orientation]
    return d
