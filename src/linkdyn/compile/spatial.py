"""Spatial rigid bodies in natural coordinates: a
:class:`~linkdyn.elements.spatial.SpatialDescription` compiled into a :class:`SpatialModel`.

Each body has twelve coordinates, ``"<body>.x|y|z"`` (centre of mass) and
``"<body>.ux|uy|uz"``, ``".vx|vy|vz"``, ``".wx|wy|wz"`` (its principal axes), with the
constant diagonal mass matrix of :mod:`linkdyn.elements.spatial`; a rod (mass on a line)
has six, ``"<rod>.x|y|z"`` and its axis ``"<rod>.ux|uy|uz"``, and one row, ``"<rod>.uu"``.
The bodies' coordinates follow one another in the description's order
(``SpatialModel.body_base``); ``SpatialModel.body_view`` gives each body's twelve r, e_1,
e_2, e_3 (-1 for a rod's absent e_2, e_3), which the force kernels read. Every constraint
row is a quadratic form in these coordinates, so Phi_q, gamma and the Hessian are exact. The frame rows
have kernels of their own (``csrc/ld_kernels.c``, ``frame_*``, their entries in the order of
:data:`FRAME_JACOBIAN` and :data:`FRAME_HESSIAN`); the others are the compiled kernels'
generic rows (the same rows as the spatial linkages of :mod:`.natural`):

- ``"<body>.uu"``, ``".vv"``, ``".ww"``: unit axes; ``".uv"``, ``".uw"``, ``".vw"``: orthogonal
  axes (the frame's handedness is that of the start, which a continuous motion keeps);
- ``"<joint>.x|y|z"``: a joint's two points coincide (linear rows; spherical, revolute and
  universal joints);
- ``"<joint>.axis1"``, ``".axis2"``: a revolute joint's axis in the first body stays
  perpendicular to two directions of the second body perpendicular to its axis there;
  ``"<joint>.cross"``: a universal joint's arms stay perpendicular (bilinear rows);
- cylindrical and prismatic joints: ``"<joint>.line1|2"``, the first point's offset from the
  second along two directions of the second body perpendicular to the axis is zero, with
  the axis rows above; a prismatic joint adds ``"<joint>.lock"`` (a direction of the first
  body perpendicular to the axis stays perpendicular to the second body's second
  perpendicular); a rigid joint has the points' rows ``".x|y|z"``, the axis rows and the
  lock;
- a planar joint: ``"<joint>.plane"`` (the first point's offset from the second along the
  second body's normal is zero) with the axis rows of the normals; the primitives
  point-on-plane (``".plane"`` alone) and point-on-line (``".line1|2"``);
- ``"<driver>"``: an angle driver, (d . b2) cos f - (d . b1) sin f = sin(theta - f) with d a
  direction of the first body perpendicular to the axis and (b1, b2) the second body's
  (d = b1 at the start: theta = 0 there); a distance driver, |p1 - p2|^2 - f^2; a
  coordinate driver, p_x - f, with f the driver's law.

Gravity is a constant applied force on the centres of mass. The integrators, consistent
states, events and results are the planar models' own: this is the same compile path
(:func:`linkdyn.compile.compiler.assemble`) with another coordinate family.
"""

from __future__ import annotations

import json

import numpy as np

from ..elements.bodies import GROUND
from ..elements.description import Description
from ..elements import gears, spatial_forces
from ..elements.spatial_forces import along_rod, perpendiculars
from ..elements.spatial import (AxisJointSpec, SpatialBodySpec, SpatialDescription,
                                principal_frame, rod_axis)
from ..errors import ArgumentError, UnknownNameError, name_list
from .._checks import checked_path
from .angles import AngleRow
from .model import Model, checked_array, checked_coordinates, checked_time
from .patterns import Numbering, assign_slots, mul

__all__ = ["SpatialModel", "number_spatial", "COORDINATES_3D"]

#: A body's frame rows (uu, vv, ww, uv, uw, vw: 0..5) and their Jacobian entries, in the
#: kernels' slot order (csrc/ld_kernels.c, frame_jacobian): (row, column among e1, e2, e3 = 0..8).
FRAME_JACOBIAN = tuple([(k, 3 * k + i) for k in range(3) for i in range(3)] +
                       [(3 + k, 3 * a + i) for k, (p, q) in enumerate(((0, 1), (0, 2), (1, 2)))
                        for a in (p, q) for i in range(3)])
#: Their Hessian entries (row, i, j) in the kernels' order (frame_hessian).
FRAME_HESSIAN = tuple([(k, 3 * k + i, 3 * k + i) for k in range(3) for i in range(3)] +
                      [(3 + k, 3 * a + i, 3 * c + i)
                       for k, (p, q) in enumerate(((0, 1), (0, 2), (1, 2)))
                       for a, c in ((p, q), (q, p)) for i in range(3)])

#: Names of a spatial body's twelve coordinates, in storage order.
COORDINATES_3D = ("x", "y", "z", "ux", "uy", "uz", "vx", "vy", "vz", "wx", "wy", "wz")
_AXES = ("u", "v", "w")


class SpatialModel(Model):
    """A compiled spatial model of rigid bodies in natural coordinates.

    Attributes as :class:`linkdyn.Model`, with 12 coordinates per body and 6 per rod (see
    :mod:`linkdyn.compile.spatial`); ``mass`` is diag(m, m, m, P_1 x3, P_2 x3, P_3 x3) per
    body, diag(m, m, m, I x3) per rod; markers are 3D (``marker_positions``: (...,
    nmarkers, 3)). ``principal_axes``: (nbody, 3, 3), the principal axes of each body as
    columns in its own body axes."""

    space = "spatial"
    marker_dimension = 3
    #: coordinates of a body with a frame (the force kernels' view of every body)
    body_stride = 12
    #: the iteration matrix's pivots leave the diagonal (ld_bdf.c, reorder): COLAMD
    column_ordering = True

    def __init__(self, description, arrays: dict, names: dict, principal_axes, markers,
                 cosines, compiled, view, base, *, compiler):
        super().__init__(description, arrays, names, compiler)
        #: (nbody, 12) the coordinate of each body's r, e_1, e_2, e_3, -1 for a rod's
        #: absent axes; (nbody + 1,) each body's first coordinate (a rod has 6, others 12)
        self.body_view, self.body_base = view, base
        #: (nbody,) which bodies are rods (mass on a line: r and the axis only)
        self.rods = np.any(view < 0, axis=1)
        self._gather = np.where(view < 0, base[-1], view).reshape(-1)
        for x in (view, base, self.rods, self._gather):
            x.flags.writeable = False
        #: the bodies and joints as compiled: the description's with the rotor bodies and
        #: pins of flexible joints (linkdyn.elements.spatial_forces.expand)
        self.body_specs = tuple(compiled.bodies)
        self._joint_specs = {j.name: j for j in compiled.joints}
        #: rows met also with a direction turned half a turn: (body, direction, body,
        #: direction[, direction, driver]) of each (see orientation_cosines)
        self._cosines = cosines
        self.principal_axes = principal_axes
        principal_axes.flags.writeable = False
        #: (nmarkers,) body index and (nmarkers, 3) coordinates in the principal frame
        self.spatial_marker_body, self.spatial_marker_local = markers
        self.spatial_marker_body.flags.writeable = False
        self.spatial_marker_local.flags.writeable = False

    def joint_spec(self, joint: str):
        """The record of ``joint``, a flexible joint's rotor pin included (UnknownNameError
        listing the joints)."""
        if not isinstance(joint, str) or joint not in self._joint_specs:
            raise UnknownNameError(f"model {self.name!r} has no joint {joint!r} (joints: "
                                   f"{name_list(self._joint_specs)})")
        return self._joint_specs[joint]

    def driver_effort_scale(self, driver: str, t) -> np.ndarray:
        """A distance driver's row is ``|p1 - p2|^2 - f(t)^2``: its effort, the force along the
        distance (positive pushes the points apart), is -lam times 2 f(t). Angle rows
        (sin(theta - f), slope 1 where met) and coordinate rows need no factor. A function
        law of a run is evaluated here again at ``t``."""
        t = checked_array("t", t)
        spec = next((d for d in self.description.drivers if d.name == driver), None)
        if spec is None:
            raise UnknownNameError(f"model {self.name!r} has no driver {driver!r} (drivers: "
                                   f"{name_list(self.driver_names)})")
        if spec.kind != "distance":
            return np.ones_like(t)
        return 2.0 * np.array([spec.law(float(x))[0] for x in t.reshape(-1)]).reshape(t.shape)

    def body_start(self, index: int) -> int:
        """The first coordinate of body ``index``."""
        return int(self.body_base[index])

    def _frame_rows(self, z) -> np.ndarray:
        """Each body's twelve r, e_1, e_2, e_3 (..., nbody, 12) of coordinates (or rates)
        z, a rod's absent e_2, e_3 zero."""
        z = checked_coordinates(self, z, "coordinates")
        if not self.rods.any():
            return z.reshape(z.shape[:-1] + (self.nbody, 12))
        padded = np.concatenate([z, np.zeros(z.shape[:-1] + (1,))], axis=-1)
        return padded[..., self._gather].reshape(z.shape[:-1] + (self.nbody, 12))

    def require_frame(self, what: str, name) -> int:
        """The index of body ``name``; ArgumentError naming ``what`` if it is a rod, which
        has an axis (:meth:`body_axis`), not a frame."""
        i = self.body_index(name)
        if self.rods[i]:
            raise ArgumentError(f"{what}: body {name!r} of model {self.name!r} is a rod (its "
                                "mass lies on its axis): it has an axis (body_axis), not a "
                                "frame")
        return i

    def body_axis(self, q, name) -> np.ndarray:
        """A rod's unit axis (..., 3) in global axes (of a body with a frame: its first
        principal axis)."""
        i = self.body_index(name)
        k = int(np.argmax(self.body_view[i, 3::3] >= 0)) if self.rods[i] else 0
        return self._frame_rows(q)[..., i, 3 + 3 * k:6 + 3 * k]

    def _markers_linear(self, z) -> np.ndarray:
        # r + p1 u + p2 v + p3 w is linear in the coordinates: one map serves q, v and qdd.
        zb = self._frame_rows(z)[..., self.spatial_marker_body, :]
        p = self.spatial_marker_local
        return (zb[..., 0:3] + p[:, 0:1] * zb[..., 3:6] + p[:, 1:2] * zb[..., 6:9] +
                p[:, 2:3] * zb[..., 9:12])

    def marker_positions(self, q) -> np.ndarray:
        """Global positions of all markers: q of shape (..., nq) -> (..., nmarkers, 3)."""
        return self._markers_linear(q)

    def _direction(self, q, body, d) -> np.ndarray:
        if body < 0:
            return np.asarray(d, dtype=float)
        view = self.body_view[body]
        zb = np.where(view >= 0, q[np.maximum(view, 0)], 0.0)
        return d[0] * zb[3:6] + d[1] * zb[6:9] + d[2] * zb[9:12]

    def orientation_cosines(self, q, t: float = 0.0, state=None) -> np.ndarray:
        """Rows that an axis turned half a turn also meets: +1 at the intended
        configuration, -1 at the flipped one, one per such row: each body's handedness
        (det [u v w]: the frame rows admit a mirrored frame too, which no motion reaches),
        the axes of revolute, cylindrical, prismatic and rigid joints (their cosine), their
        lock directions, and angle drivers (cos(theta - f))."""
        q = checked_coordinates(self, q)
        t = checked_time(t)
        frames = self._frame_rows(q)[~self.rods]
        out = [float(np.cross(f[3:6], f[6:9]) @ f[9:12]) for f in frames]
        for entry in self._cosines:
            a = self._direction(q, entry[0], entry[1])
            b = self._direction(q, entry[2], entry[3])
            if len(entry) == 4:
                out.append(float(a @ b))
                continue
            b2, k = self._direction(q, entry[2], entry[4]), entry[5]
            law = self.description.drivers[k].law
            f = (state.law_values[3 * k] if law.is_function and state is not None
                 else law(float(t))[0])
            out.append(float((a @ b) * np.cos(f) + (a @ b2) * np.sin(f)))
        return np.array(out)

    def body_index(self, name) -> int:
        if not isinstance(name, str) or name not in self.body_names:
            raise UnknownNameError(f"model {self.name!r} has no body {name!r} (bodies: "
                                   f"{name_list(self.body_names)})")
        return self.body_names.index(name)

    def body_rotation(self, q, name) -> np.ndarray:
        """Rotation matrices (..., 3, 3) from the body's own axes to global axes: the
        columns are its axes in global coordinates (the principal frame [u v w] turned back
        by its principal axes in body axes)."""
        i = self.require_frame("body_rotation", name)
        zb = self._frame_rows(q)[..., i, :]
        frame = np.stack([zb[..., 3:6], zb[..., 6:9], zb[..., 9:12]], axis=-1)
        return frame @ self.principal_axes[i].T

    def body_angular_velocity(self, q, v, name) -> np.ndarray:
        """Angular velocity (..., 3), rad/s, global axes: omega = (1/2) sum_k e_k x e_k'
        (exact for an orthonormal frame; with the accelerations for v, the angular
        acceleration: e_k x e_k'' sums the same way since e_k' x e_k' = 0). A rod's is
        u x u', the part across its axis (it has no spin)."""
        i = self.body_index(name)
        zq, zv = self._frame_rows(q)[..., i, :], self._frame_rows(v)[..., i, :]
        return (1.0 if self.rods[i] else 0.5) * sum(
            np.cross(zq[..., 3 + 3 * k:6 + 3 * k], zv[..., 3 + 3 * k:6 + 3 * k])
            for k in range(3))

    def joint_reaction(self, q, lam, t, joint) -> tuple[np.ndarray, np.ndarray]:
        """Force (n, 3) and moment (n, 3) about the joint's first point that ``joint``
        exerts on its first body at each state: the generalised force -Phi_q^T lam of the
        joint's own rows on that body's coordinates, whose part on its centre is the force
        and whose part on its axes e_k gives the moment sum_k e_k x Q_k about the centre."""
        spec = self.joint_spec(joint)
        rows = [i for i, o in enumerate(self.constraint_owner) if o == joint]
        i = self.body_index(spec.first[0])
        o, width = self.body_start(i), int(self.body_base[i + 1] - self.body_base[i])
        p = self.principal_axes[i].T @ np.array(
            self.body_specs[i].local_points()[spec.first[1]])
        q, lam, t = np.atleast_2d(q), np.atleast_2d(lam), np.atleast_1d(t)
        # The Jacobian's entries in the body's columns and the joint's rows, in the fixed
        # pattern: each state's values come from the kernels, with no sparse matrix made.
        slots = np.arange(self.phiq_colptr[o], self.phiq_colptr[o + width])
        slots = slots[np.isin(self.phiq_rowind[slots], rows)]
        cols, which = self.phiq_colind[slots] - o, self.phiq_rowind[slots]
        gen = np.zeros((len(q), 12))       # on r, e_1, e_2, e_3 (a rod's e_2, e_3: none)
        kept = self.body_view[i] >= 0
        for k in range(len(q)):
            vals = self.kernels.phi_q_values(q[k], float(t[k]))
            gen[k, kept] = -np.bincount(cols, vals[slots] * lam[k, which], minlength=width)
        e = self._frame_rows(q)[:, i, 3:].reshape(-1, 3, 3)
        arm = np.einsum("a,nad->nd", p, e)        # the first point relative to the centre
        force = gen[:, :3]
        moment = sum(np.cross(e[:, a], gen[:, 3 + 3 * a:6 + 3 * a]) for a in range(3)) - \
            np.cross(arm, force)
        return force, moment

    def body_outline(self, q, name) -> np.ndarray:
        """A polyline (..., 2 k - 1, 3) through a body's points for drawing: from its
        centre of mass to each of its k - 1 named points and back."""
        i = self.body_index(name)
        spec = self.body_specs[i]
        E = self.principal_axes[i]
        zb = self._frame_rows(q)[..., i, :]
        out = []
        for pname, p in spec.local_points().items():
            c = E.T @ np.array(p)
            out.append(zb[..., 0:3] + c[0] * zb[..., 3:6] + c[1] * zb[..., 6:9] +
                       c[2] * zb[..., 9:12])
        path = [out[0]]
        for x in out[1:]:
            path += [x, out[0]]
        return np.stack(path, axis=-2)

    def save(self, path) -> None:
        """Write the spatial model file (see :mod:`linkdyn.describe.spatialfile`)."""
        from pathlib import Path

        from ..elements.description import _no_negative_zero
        from ..elements.spatial import to_dict

        checked_path("save", path)
        Path(path).write_text(json.dumps(_no_negative_zero(to_dict(self.description)),
                                         indent=2) + "\n", encoding="utf-8")


def _point_forms(place, p):
    """The three linear forms {coordinate: coef} of a body point with principal-frame
    coordinates p (``place``: the body's first coordinate and its rod axis, or None for a
    body with a full frame; a rod's point lies on its axis)."""
    o, k = place
    if k is None:
        return [{o + x: 1.0, o + 3 + x: p[0], o + 6 + x: p[1], o + 9 + x: p[2]}
                for x in range(3)]
    return [{o + x: 1.0, o + 3 + x: p[k]} for x in range(3)]


def _direction_forms(place, d):
    """The three linear forms of a body-fixed direction with principal-frame components d
    (its global components; a rod's lies along its axis)."""
    o, k = place
    if k is None:
        return [{o + 3 + x: d[0], o + 6 + x: d[1], o + 9 + x: d[2]} for x in range(3)]
    return [{o + 3 + x: d[k]} for x in range(3)]


def body_view(axes) -> tuple[np.ndarray, np.ndarray]:
    """(view, base) of bodies whose rod axes are ``axes`` (None for a body with a full
    frame): view (nbody, 12) the coordinate of each body's r, e_1, e_2, e_3 (-1 for a rod's
    absent axes), base (nbody + 1,) the first coordinate of each body."""
    axis = np.array([-1 if k is None else k for k in axes], dtype=np.intp)
    width = np.where(axis < 0, 12, 6)
    base = np.concatenate([[0], np.cumsum(width)]).astype(np.intp)
    view = base[:-1, None] + np.arange(12)
    view[axis >= 0, 3:] = -1
    for k in range(3):         # a rod's axis takes the slots of its principal axis k
        rods = np.flatnonzero(axis == k)
        view[rods, 3 + 3 * k:6 + 3 * k] = base[rods, None] + np.arange(3, 6)
    return view, base


def _bilinear(f, g) -> dict:
    """Terms of sum_x f[x] g[x] for vectors of linear forms."""
    out = {}
    for fx, gx in zip(f, g):
        for key, coef in mul(fx, gx).items():
            out[key] = out.get(key, 0.0) + coef
    return out


def _difference(f, g) -> list:
    """The linear forms f - g (vectors of three)."""
    out = []
    for fx, gx in zip(f, g):
        form = dict(fx)
        for key, c in gx.items():
            form[key] = form.get(key, 0.0) - c
        out.append(form)
    return out


def _any_point(ref, places, local, ground) -> list:
    """The three linear forms of a body point, or constants for a ground point."""
    if ref[0] == GROUND:
        return [{-1: float(x)} for x in ground[ref[1]]]
    return _point_forms(places[ref[0]], local[ref[0]][ref[1]])


class _Rows:
    """The rows and orientation checks of a spatial description, made body by body, joint
    by joint and driver by driver (after every body is numbered)."""

    def __init__(self, desc: SpatialDescription):
        nb = len(desc.bodies)
        self.body_specs = desc.bodies
        self.index = {b.name: k for k, b in enumerate(desc.bodies)}
        #: each body's principal axes and second moments (principal_frame), rod axis (None:
        #: a full frame), view and first coordinate (body_view)
        self.principal_frames = [principal_frame(b.inertia) for b in desc.bodies]
        self.axes = [rod_axis(P) for _, P in self.principal_frames]
        self.view, self.base = body_view(self.axes)
        #: body name -> (first coordinate, rod axis or None): where its forms point
        self.places = {b.name: (int(self.base[k]), a)
                       for k, (b, a) in enumerate(zip(desc.bodies, self.axes))}
        self.frames = np.zeros((nb, 3, 3))
        self.mass, self.q0, self.v0, self.applied = (np.zeros(self.base[-1]) for _ in range(4))
        self.local, self.generic, self.cosines = {}, [], []
        #: the element whose rows are being made (named in refusals)
        self.entry = ""
        self.ground = dict(desc.ground)
        self.orient = {b.name: np.array(b.orientation) for b in desc.bodies}
        self.joints = {j.name: j for j in desc.joints}
        self.gravity = np.array(desc.gravity)

    def bodies(self):
        """Every body's coordinates, masses, initial guesses, gravity and principal-frame
        points, the bodies stacked (each body's arithmetic as it would be on its own)."""
        bodies = self.body_specs
        nb = len(bodies)
        if nb == 0:
            return
        frames = self.principal_frames
        E = np.array([f[0] for f in frames])
        self.frames[:] = E
        R = np.array([b.orientation for b in bodies], dtype=float) @ E   # principal, global
        w0, w1, w2 = np.array([b.angular_velocity for b in bodies], dtype=float).T[:, :, None]
        # w x R[:, a] for the three axes at once (np.cross's arithmetic, not its overhead)
        axes_rate = np.stack([w1 * R[:, 2] - w2 * R[:, 1], w2 * R[:, 0] - w0 * R[:, 2],
                              w0 * R[:, 1] - w1 * R[:, 0]], axis=1)
        mass = np.array([b.mass for b in bodies], dtype=float)
        # Each body's twelve r, e_1, e_2, e_3 (a rod keeps r and its axis: the view).
        M, q0, v0, applied = (np.zeros((nb, 12)) for _ in range(4))
        M[:, :3] = mass[:, None]
        M[:, 3:] = np.repeat(np.array([f[1] for f in frames]), 3, axis=1)
        q0[:, :3] = [b.position for b in bodies]
        v0[:, :3] = [b.velocity for b in bodies]
        q0[:, 3:] = R.transpose(0, 2, 1).reshape(nb, 9)
        v0[:, 3:] = axes_rate.transpose(0, 2, 1).reshape(nb, 9)
        applied[:, :3] = mass[:, None] * self.gravity
        kept = self.view >= 0
        for mine, full in ((self.mass, M), (self.q0, q0), (self.v0, v0),
                           (self.applied, applied)):
            mine[self.view[kept]] = full[kept]
        for b, (E_b, _), k in zip(bodies, frames, self.axes):
            self.local[b.name] = {name: E_b.T @ np.array(p) for name, p in
                                  b.local_points().items()}
            if k is not None:       # a rod's points lie on its axis (the builder's check)
                for p in self.local[b.name].values():
                    p[[i for i in range(3) if i != k]] = 0.0
                o = self.places[b.name][0]
                u = [(c, c) for c in range(o + 3, o + 6)]
                self.generic.append((f"{b.name}.uu", b.name,
                                     [({**{c: 1.0 for c in u}, (-1, -1): -1.0}, 0, -1)]))

    def principal(self, body, axis):
        """(body index or -1, the direction's principal-frame components or global)."""
        if body == GROUND:
            return -1, tuple(float(x) for x in axis)
        k = self.index[body]
        return k, tuple(float(x) for x in self.frames[k].T @ np.asarray(axis))

    def direction(self, body, axis) -> list:
        """The three linear forms of a direction fixed in ``body`` (``axis`` in its body
        axes; constants for the ground); ModelError naming the element for a direction
        across a rod."""
        if body == GROUND:
            return [{-1: float(x)} for x in axis]
        k = self.index[body]
        d = self.frames[k].T @ np.asarray(axis)
        along_rod(self.entry, body, self.axes[k], d)
        return _direction_forms(self.places[body], d)

    def first_b1(self, j, b1):
        """In the first body's axes, the direction that is the second body's b1 at the start
        (the first body is never the ground)."""
        b1_global = b1 if j.second[0] == GROUND else self.orient[j.second[0]] @ b1
        return self.orient[j.first[0]].T @ b1_global

    def joint(self, j):
        self.entry = f"joint {j.name!r}"
        diff = _difference(self.point(j.first), self.point(j.second))
        axial = isinstance(j, AxisJointSpec)
        if axial and j.kind in ("planar", "planar_slide", "point_plane", "point_line"):
            return self.surface_joint(j, diff)
        sliding = axial and j.kind in ("cylindrical", "prismatic")
        if not sliding:
            for x in range(3):
                terms = {((c, -1) if c >= 0 else (-1, -1)): v for c, v in diff[x].items()}
                self.generic.append((f"{j.name}.{'xyz'[x]}", j.name, [(terms, 0, -1)]))
        if not axial:
            return
        if j.kind != "universal":
            b1, b2 = perpendiculars(j.axis_second)
            second_dir = [self.direction(j.second[0], b) for b in (b1, b2)]
            if sliding:
                for k in range(2):
                    self.generic.append((f"{j.name}.line{k + 1}", j.name,
                                         [(_bilinear(diff, second_dir[k]), 0, -1)]))
        self.generic.extend(self.axis_rows(j))
        if j.kind == "universal":
            return
        self.cosines.append((*self.principal(j.first[0], j.axis_first),
                             *self.principal(j.second[0], j.axis_second)))
        if j.kind in ("prismatic", "rigid"):
            self.lock_row(j, b1, second_dir[1])

    def lock_row(self, j, b1, second_b2):
        """The row that stops the turn about the axis (prismatic, rigid, planar slide): a
        direction of the first body that is b1 at the start stays off b2."""
        d = self.first_b1(j, b1)
        self.generic.append((f"{j.name}.lock", j.name,
                             [(_bilinear(self.direction(j.first[0], d), second_b2), 0, -1)]))
        self.cosines.append((*self.principal(j.first[0], d),
                             *self.principal(j.second[0], b1)))

    def surface_joint(self, j, diff):
        """A planar joint (the first body's plane stays on the second's: the first point on
        the plane through the second point normal to the axis, ``"<joint>.plane"``, and the
        normals aligned, the axis rows), a planar slide (the same and the lock row: no turn
        about the normal) and the primitives point-on-plane (the plane row alone) and
        point-on-line (``".line1|2"``: the first point on the line through the second along
        the axis)."""
        b1, b2 = perpendiculars(j.axis_second)
        if j.kind == "point_line":
            for k, b in enumerate((b1, b2)):
                self.generic.append((f"{j.name}.line{k + 1}", j.name,
                                     [(_bilinear(diff, self.direction(j.second[0], b)), 0,
                                       -1)]))
            return
        normal = self.direction(j.second[0], j.axis_second)
        self.generic.append((f"{j.name}.plane", j.name, [(_bilinear(diff, normal), 0, -1)]))
        if j.kind in ("planar", "planar_slide"):
            self.generic.extend(self.axis_rows(j))
            self.cosines.append((*self.principal(j.first[0], j.axis_first),
                                 *self.principal(j.second[0], j.axis_second)))
        if j.kind == "planar_slide":
            self.lock_row(j, b1, self.direction(j.second[0], b2))

    def axis_rows(self, j) -> list:
        """The rows that keep a joint's axis in the first body along its axis in the
        second (revolute, cylindrical, prismatic, rigid) or perpendicular to it
        (universal)."""
        a = self.direction(j.first[0], j.axis_first)
        if j.kind == "universal":
            return [(f"{j.name}.cross", j.name,
                     [(_bilinear(a, self.direction(j.second[0], j.axis_second)), 0, -1)])]
        return [(f"{j.name}.axis{k + 1}", j.name,
                 [(_bilinear(a, self.direction(j.second[0], b)), 0, -1)])
                for k, b in enumerate(perpendiculars(j.axis_second))]

    def point(self, ref):
        return _any_point(ref, self.places, self.local, self.ground)

    def joint_angle(self, name) -> tuple:
        """(S, C) with a revolute joint's angle atan2(S, C), as its angle driver measures
        it: a direction d of the first body, the second's b1 at the start, against the
        second body's b1 and b2 (S = d . b2, C = d . b1)."""
        j = self.joints[name]
        b1, b2 = perpendiculars(j.axis_second)
        d = self.direction(j.first[0], self.first_b1(j, b1))
        return (_bilinear(d, self.direction(j.second[0], b2)),
                _bilinear(d, self.direction(j.second[0], b1)))

    def gear(self, spec) -> AngleRow:
        """A gear pair's or joint coupling's angle row (linkdyn.elements.gears says what it
        is)."""
        self.entry = f"gear pair {spec.name!r}"
        scale, terms, shift = gears.mesh_terms(spec, self.joints)
        return AngleRow(f"{spec.name}.mesh", spec.name, scale,
                        tuple((0, n, *self.joint_angle(joint)) if kind == "joint"
                              else (1, n, self.joint_slide(joint), {})
                              for kind, joint, n in terms), shift)

    def joint_slide(self, name) -> dict:
        """A prismatic joint's slide as a quadratic form: the first point's displacement
        from the second along the axis (fixed in the second body), as its slide driver
        measures it."""
        j = self.joints[name]
        diff = _difference(self.point(j.first), self.point(j.second))
        return _bilinear(diff, self.direction(j.second[0], j.axis_second))

    def driver(self, k, d):
        """Driver ``d``'s row (law k) and, for an angle driver, its orientation check."""
        self.entry = f"driver {d.name!r}"
        if d.kind == "angle":
            j = self.joints[d.joint]
            b1, b2 = perpendiculars(j.axis_second)       # in the second body's axes
            first = self.first_b1(j, b1)
            dv = self.direction(j.first[0], first)
            parts = [(_bilinear(dv, self.direction(j.second[0], b2)), 1, k),
                     ({key: -c for key, c in
                       _bilinear(dv, self.direction(j.second[0], b1)).items()}, 2, k)]
            self.cosines.append((*self.principal(j.first[0], first),
                                 *self.principal(j.second[0], b1),
                                 self.principal(j.second[0], b2)[1], k))
        elif d.kind == "coordinate":
            form = self.point(d.first)["xyz".index(d.axis)]
            parts = [({((c, -1) if c >= 0 else (-1, -1)): v for c, v in form.items()}, 0, -1),
                     ({(-1, -1): -1.0}, 3, k)]
        else:
            diff = _difference(self.point(d.first), self.point(d.second))
            parts = [(_bilinear(diff, diff), 0, -1), ({(-1, -1): -1.0}, 4, k)]
        self.generic.append((d.name, d.name, parts))


def number_spatial(desc: SpatialDescription) -> Numbering:
    """Number the bodies' natural coordinates and the rows of a spatial description."""
    user_desc = desc
    # Rotors of flexible joints become bodies, pins and records of their own.
    desc = spatial_forces.expand(desc, SpatialBodySpec, AxisJointSpec)
    rows = _Rows(desc)
    rows.bodies()
    for j in desc.joints:
        rows.joint(j)
    for k, d in enumerate(desc.drivers):
        rows.driver(k, d)
    index, local, frames, generic = rows.index, rows.local, rows.frames, rows.generic
    # The bodies' frame rows, a family of the kernels of their own (csrc/ld_kernels.c, frame_*):
    # rows 6 f .. 6 f + 5 of the f-th body with a frame, their Jacobian entries and Hessian
    # pairs in the kernels' order. Rods have none: their unit rows are generic rows (made
    # with their bodies).
    framed = [k for k, a in enumerate(rows.axes) if a is None]
    nf = len(framed)
    frame_rows, frame_cols, frame_names, frame_owners, frame_pairs = [], [], [], [], []
    for f, k in enumerate(framed):
        b, e = desc.bodies[k], int(rows.base[k]) + 3
        for r, (row, col) in enumerate(FRAME_JACOBIAN):
            frame_rows.append(6 * f + row)
            frame_cols.append(e + col)
        frame_pairs += [(e + i, e + j) for _, i, j in FRAME_HESSIAN]
        frame_names += [f"{b.name}.{a}" for a in ("uu", "vv", "ww", "uv", "uw", "vw")]
        frame_owners += [b.name] * 6
    mbody = np.array([index[m.body] for m in desc.markers], dtype=np.intp)
    mlocal = np.array([local[m.body][m.point] for m in desc.markers], dtype=float)
    none = np.zeros(0, dtype=np.intc)

    def family_arrays(slot, hess_slot) -> dict:
        """The frame rows' arrays (no planar bodies: none of the planar kernels' unit-vector
        or revolute rows)."""
        return dict(nbody=0, unit_row=none, unit_body=none, unit_slot=none, unit_hslot=none,
                    rev_body=none, rev_local=np.zeros(0), rev_row=none, rev_slot=none,
                    frame_base=np.asarray(rows.base[framed] + 3, dtype=np.intc),
                    frame_row=np.arange(nf, dtype=np.intc) * 6,
                    frame_slot=np.asarray(slot[:27 * nf], dtype=np.intc),
                    frame_hslot=np.asarray(hess_slot, dtype=np.intc))

    empty = Description(name=desc.name, gravity=(0.0, 0.0), ground=(), bodies=(), joints=(),
                        markers=())
    geometry = spatial_forces.Geometry(index, frames, rows.orient, local, rows.ground,
                                       rows.view, rows.axes)

    def compile_forces(add_law, nq):
        a, info, fq_blocks, fv_blocks = spatial_forces.spatial_force_arrays(
            desc, geometry, add_law, rows.q0)
        fq_colptr, fq_rowind, fq_slots = assign_slots(fq_blocks, nq)
        fv_colptr, fv_rowind, fv_slots = assign_slots(fv_blocks, nq)
        n = 576 * info["nrec"]
        a.update(rec_slot_q=fq_slots[:n], load_slot_q=fq_slots[n:], rec_slot_v=fv_slots,
                 fq_colptr=fq_colptr, fq_rowind=fq_rowind, fv_colptr=fv_colptr,
                 fv_rowind=fv_rowind)
        return a, info

    return Numbering(
        description=user_desc, model_type=SpatialModel,
        model_args=(frames, (mbody, mlocal.reshape(-1, 3)), tuple(rows.cosines), desc,
                    rows.view, rows.base),
        q0=rows.q0, v0=rows.v0, hold=np.zeros(len(rows.mass), dtype=bool), mass=rows.mass,
        q_applied=rows.applied,
        coordinates=[f"{b.name}.{c}" for b, a in zip(desc.bodies, rows.axes)
                     for c in (COORDINATES_3D if a is None else COORDINATES_3D[:6])],
        rows=frame_rows, cols=frame_cols, row_names=frame_names, owners=frame_owners,
        nc=6 * nf, hdiag=np.array(frame_pairs, dtype=np.intc).reshape(-1, 2),
        generic=generic, laws=[d.law for d in desc.drivers], force_description=empty,
        body_index={}, local_of=None, ground={}, marker_body=np.zeros(0, dtype=np.intp),
        marker_local=np.zeros((0, 2)),
        names=dict(bodies=tuple(b.name for b in desc.bodies),
                   joints=tuple(j.name for j in desc.joints),
                   markers=tuple(m.name for m in desc.markers),
                   drivers=tuple(d.name for d in desc.drivers),
                   forces=tuple(f.name for f in desc.forces)),
        family_arrays=family_arrays, compile_forces=compile_forces,
        angle_rows=[rows.gear(g) for g in desc.gears])
