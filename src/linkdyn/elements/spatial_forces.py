"""Force elements of spatial models: springs, dampers, motors, servos, point forces and
torques, and flexible joints with rotor inertia, on bodies in natural coordinates.

The family's records, builder methods (:class:`SpatialForceBuilder`, mixed into
:class:`linkdyn.SpatialModelBuilder`), model-file entries (:data:`FILE_TYPES`,
:func:`to_dict`) and compile step (:func:`spatial_force_arrays`) live here; the kernels are
the planar elements' own (``csrc/ld_forces.c``) with the spatial geometry of
``csrc/ld_forces3.c``. Every element but the loads acts along one scalar coordinate ``s``:

=================================  ==============================================  ==========
element                            coordinate s                                    f along s
=================================  ==============================================  ==========
``add_spring_damper``              distance between two points (m)                 -tension
``add_torsional_spring_damper``    rotation of a revolute or cylindrical joint     torque
``add_joint_damper``               rotation or slide of a joint                    torque/force
``add_motor``                      rotation or slide of a joint                    torque/force
``add_servo``                      rotation or slide of a joint                    torque/force
=================================  ==============================================  ==========

with ``f = -k (s - r(t)) - c (s' - r'(t)) + g(t) + u`` as for planar elements
(:mod:`linkdyn.elements.forces`). A joint's rotation is its first body's relative to its
second, right-handed about the axis given to ``add_revolute`` and zero at the initial
configuration, as for angle drivers, continuous over any number of turns; a positive motor
torque turns the first body that way (the opposite acts on the second). A joint's slide is
the displacement of its first point from its second along the axis, as the prismatic
joint's.

``add_force`` and ``add_torque`` apply a force at a body point or a torque on a body, with
components from three laws in global axes or in the body's own axes (a follower load).
In natural coordinates a torque T acts on the body's axes e_k as the forces T x e_k / 2,
whose power is exactly T . omega.

``add_flexible_joint`` builds a series-elastic actuator in space (Vigne's note on Jiminy's
flexibilities, its Figure 1a): a rotor body ``<name>/rotor`` pinned to the joint's second
body (the base) on the joint's axis, the motor torque between the base and the rotor, and a
torsional spring-damper ``<name>/spring`` between the rotor and the joint's first body (the
output). The rotor is a full rigid body: its gyroscopic coupling with a moving base is
exact, not the armature approximation.

Energy: a spring stores ``k (s - r)^2 / 2`` and everything else does work, so that
``energy(t) - energy(0) = work(t)`` to the integrator's tolerance (``Result.energy``,
``Result.work``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._checks import real
from ..errors import ModelError, name_list
from . import bushings, clearance, joint_friction, stops
from .bodies import GROUND, _element
from .forces import (JointDamperSpec, MotorSpec, ServoSpec, SpringDamperSpec,
                     TorsionalSpringDamperSpec, _law, _law_value, spring_damper_spec)
from .records import (ANGLE, DISTANCE, FRICTION_LAW, INPUT_ADD, INPUT_TARGET, SLIDE, _Record,
                      element_index, record_laws)
from .spatial_contacts import contact_records

__all__ = ["SpatialLoadSpec", "SpatialFlexibleJointSpec", "SpatialForceBuilder", "FILE_TYPES",
           "to_dict", "expand", "spatial_force_arrays", "perpendiculars", "along_rod"]

#: Kinds of the kernels' spatial loads (csrc/ld_forces.h).
LOAD_FORCE, LOAD_TORQUE = 0, 1


@dataclass(frozen=True)
class SpatialLoadSpec:
    """A force (N) at body point ``target`` ("body.point") or a torque (N m) on body
    ``target``: ``kind`` "force" or "torque", components ``laws`` (x, y, z) in global axes
    (``frame="global"``) or in the body's own axes (``frame="body"``)."""

    name: str
    kind: str
    target: object
    laws: tuple
    frame: str


@dataclass(frozen=True)
class SpatialFlexibleJointSpec:
    """A series-elastic actuator on revolute ``joint`` (second body: the base carrying the
    motor; first: the output); see :meth:`SpatialForceBuilder.add_flexible_joint`."""

    name: str
    joint: str
    stiffness: float
    damping: float
    rotor_inertia: float
    rotor_mass: float
    law: object
    rotor_transverse_inertia: float


#: The coordinates a joint kind has for force elements.
_JOINT_COORDINATE = {"revolute": {"angle"}, "cylindrical": {"angle", "slide"},
                     "prismatic": {"slide"}}


class SpatialForceBuilder:
    """The force-element methods of :class:`linkdyn.SpatialModelBuilder` (a mixin: it uses
    the builder's tables and reference checks)."""

    def _joint_of(self, entry, joint, coordinate):
        """The joint spec of ``joint``, checked to have a rotation (``coordinate`` "angle")
        or a slide ("slide") or either ("any"); returns (spec, "angle" | "slide")."""
        if not isinstance(joint, str) or joint not in self._joints:
            raise ModelError(f"{entry}: unknown joint {joint!r} (joints: "
                             f"{name_list(self._joints)})")
        spec = self._joints[joint]
        kind = getattr(spec, "kind", "spherical")
        has = _JOINT_COORDINATE.get(kind, set())
        if coordinate == "any":
            if kind == "cylindrical":
                raise ModelError(f"{entry}: joint '{joint}' is cylindrical, which both turns "
                                 "and slides; use add_torsional_spring_damper for its "
                                 "rotation, or a revolute or prismatic joint")
            coordinate = "angle" if kind == "revolute" else "slide"
        if coordinate not in has:
            need = "revolute or cylindrical" if coordinate == "angle" else \
                "prismatic or cylindrical"
            raise ModelError(f"{entry}: joint '{joint}' is a {kind} joint; expected a "
                             f"{need} joint")
        return spec, coordinate

    def _add_force(self, name, make):
        name = self._new_name("force element", name)
        with _element(name):
            self._forces[name] = make(f"force element '{name}'", name)

    def add_spring_damper(self, name: str, first, second, stiffness, damping=0.0,
                          free_length=None) -> None:
        """A linear spring (``stiffness``, N/m) and viscous damper (``damping``, N s/m)
        between points ``first`` and ``second`` ('body.point' or 'ground.point').
        ``free_length`` (m) is a number or a law (a linear actuator); by default the
        distance in the initial configuration. The tension is ``k (L - L0) + c (L' - L0')``.
        The points must never coincide: a run that brings them together stops with an error
        naming the element."""
        def make(entry, name):
            a, b = self._ref(entry, first), self._ref(entry, second)
            return spring_damper_spec(
                entry, name, a, b, stiffness, damping, free_length,
                lambda: float(np.linalg.norm(self._point_at_start(b) -
                                             self._point_at_start(a))))
        self._add_force(name, make)

    def add_torsional_spring_damper(self, name: str, joint: str, stiffness, damping=0.0,
                                    rest_angle=0.0) -> None:
        """A torsional spring (``stiffness``, N m/rad) and damper (``damping``, N m s/rad)
        on the rotation of revolute or cylindrical ``joint`` (its first body relative to
        its second, zero at the initial configuration); ``rest_angle`` in rad."""
        def make(entry, name):
            self._joint_of(entry, joint, "angle")
            return TorsionalSpringDamperSpec(
                name, joint, real(entry, "stiffness", stiffness, nonnegative=True),
                real(entry, "damping", damping, nonnegative=True),
                real(entry, "rest_angle", rest_angle))
        self._add_force(name, make)

    def add_joint_damper(self, name: str, joint: str, damping) -> None:
        """Viscous damping (N m s/rad or N s/m) on the rotation rate of a revolute joint or
        the slide rate of a prismatic one."""
        def make(entry, name):
            self._joint_of(entry, joint, "any")
            return JointDamperSpec(name, joint, real(entry, "damping", damping,
                                                     positive=True))
        self._add_force(name, make)

    def add_motor(self, name: str, joint: str, law=0.0) -> None:
        """A motor in revolute or prismatic ``joint``: torque (N m) or force (N) ``law`` (a
        number or a law; default 0, for a motor run by a controller) on the joint's first
        body (the opposite on the second). A controller's input is added to it. For rotor
        inertia, see :meth:`add_flexible_joint` or model the rotor as a body."""
        def make(entry, name):
            self._joint_of(entry, joint, "any")
            return MotorSpec(name, joint, _law(entry, "law", law))
        self._add_force(name, make)

    def add_servo(self, name: str, joint: str, target, kp, kd=0.0) -> None:
        """A PD servo in revolute or prismatic ``joint`` tracking ``target`` (rad or m; a
        number or a law): torque or force ``kp (target - s) + kd (target' - s')``. A
        controller's input replaces the target (held, with zero rate)."""
        def make(entry, name):
            self._joint_of(entry, joint, "any")
            return ServoSpec(name, joint, _law(entry, "target", target),
                             real(entry, "kp", kp, positive=True),
                             real(entry, "kd", kd, nonnegative=True))
        self._add_force(name, make)

    def add_force(self, name: str, point, law_x=0.0, law_y=0.0, law_z=0.0,
                  frame: str = "global") -> None:
        """A force (N) at body point ``point`` with components ``law_x``, ``law_y``,
        ``law_z`` (numbers or laws) along the global axes (``frame="global"``) or the
        body's own axes (``frame="body"``, a follower force)."""
        def make(entry, name):
            ref = self._ref(entry, point)
            if ref[0] == GROUND:
                raise ModelError(f"{entry}: apply the force to a body point, not a ground "
                                 "point")
            return SpatialLoadSpec(name, "force", ref, self._laws3(entry, law_x, law_y, law_z),
                                   _frame(entry, frame))
        self._add_force(name, make)

    def add_torque(self, name: str, body: str, law_x=0.0, law_y=0.0, law_z=0.0,
                   frame: str = "global") -> None:
        """A torque (N m) on ``body`` with components ``law_x``, ``law_y``, ``law_z``
        (numbers or laws) along the global axes or (``frame="body"``) the body's own."""
        def make(entry, name):
            if not isinstance(body, str) or body not in self._bodies:
                raise ModelError(f"{entry}: unknown body {body!r} (bodies: "
                                 f"{name_list(self._bodies)})")
            return SpatialLoadSpec(name, "torque", body, self._laws3(entry, law_x, law_y, law_z),
                                   _frame(entry, frame))
        self._add_force(name, make)

    def add_flexible_joint(self, name: str, joint: str, stiffness, damping, rotor_inertia,
                           rotor_mass, law=0.0, rotor_transverse_inertia=None) -> None:
        """A series-elastic actuator on revolute ``joint`` (see the module notes): the motor
        sits on the joint's second body (the base) and turns a rotor ``<name>/rotor``
        (``rotor_inertia`` about the axis, kg m^2: the reflected inertia; transverse
        moments ``rotor_transverse_inertia``, default equal to ``rotor_inertia``;
        ``rotor_mass`` kg, centred on the joint's point), which drives the joint's first
        body (the output) through a torsional spring-damper ``<name>/spring``
        (``stiffness`` N m/rad, ``damping`` N m s/rad, undeflected at the start). The
        motor's torque is ``law`` plus a controller's input; ``element_force(name)``
        reports it, ``element_coordinate(name)`` the rotor's angle, and those of
        ``<name>/spring`` the spring's torque and deflection."""
        def make(entry, name):
            spec, _ = self._joint_of(entry, joint, "angle")
            if spec.kind != "revolute":
                raise ModelError(f"{entry}: joint '{joint}' is {spec.kind}; a flexible "
                                 "joint needs a revolute joint")
            if spec.first[0] == GROUND:
                raise ModelError(f"{entry}: the joint's first body is the output; joint "
                                 f"'{joint}' has the ground there")
            ji = real(entry, "rotor_inertia", rotor_inertia, positive=True)
            jt = ji if rotor_transverse_inertia is None else real(
                entry, "rotor_transverse_inertia", rotor_transverse_inertia, positive=True)
            if not ji < 2.0 * jt:
                raise ModelError(f"{entry}: rotor_inertia {ji!r} must be less than twice "
                                 f"rotor_transverse_inertia {jt!r} (a rigid rotor's axial "
                                 "moment is below the sum of its two transverse moments)")
            return SpatialFlexibleJointSpec(
                name, joint, real(entry, "stiffness", stiffness, positive=True),
                real(entry, "damping", damping, nonnegative=True), ji,
                real(entry, "rotor_mass", rotor_mass, positive=True), _law(entry, "law", law),
                jt)
        self._add_force(name, make)

    def _laws3(self, entry, *laws):
        return tuple(_law(entry, f"law_{a}", v) for a, v in zip("xyz", laws))

    def _point_at_start(self, ref) -> np.ndarray:
        """Global position of a point reference in the initial configuration."""
        body, point = ref
        if body == GROUND:
            return np.array(self._ground[point])
        b = self._bodies[body]
        return np.array(b.position) + np.array(b.orientation) @ np.array(
            b.local_points()[point])


def _frame(entry, frame) -> str:
    if frame not in ("global", "body"):
        raise ModelError(f"{entry}: frame must be 'global' or 'body', got {frame!r}")
    return frame


# -- model files ------------------------------------------------------------------------------

#: Model-file entry types: type -> (builder method, required fields, optional fields).
FILE_TYPES = {
    "spring_damper": ("add_spring_damper", {"first", "second", "stiffness"},
                      {"damping", "free_length"}),
    "torsional_spring_damper": ("add_torsional_spring_damper", {"joint", "stiffness"},
                                {"damping", "rest_angle"}),
    "joint_damper": ("add_joint_damper", {"joint", "damping"}, set()),
    "motor": ("add_motor", {"joint"}, {"law"}),
    "servo": ("add_servo", {"joint", "target", "kp"}, {"kd"}),
    "flexible_joint": ("add_flexible_joint",
                       {"joint", "stiffness", "damping", "rotor_inertia", "rotor_mass"},
                       {"law", "rotor_transverse_inertia"}),
    "force": ("add_force", {"point"}, {"law_x", "law_y", "law_z", "frame"}),
    "torque": ("add_torque", {"body"}, {"law_x", "law_y", "law_z", "frame"}),
    "bushing": bushings.SPATIAL_FILE_TYPE,
}


def to_dict(spec) -> dict:
    """The canonical model-file entry of a spatial force element."""
    if isinstance(spec, bushings.SpatialBushingSpec):
        return bushings.to_dict(spec)
    if isinstance(spec, SpatialLoadSpec):
        d = {"type": spec.kind, "name": spec.name}
        d["point" if spec.kind == "force" else "body"] = (
            ".".join(spec.target) if spec.kind == "force" else spec.target)
        d.update({f"law_{a}": _law_value(law) for a, law in zip("xyz", spec.laws)})
        d["frame"] = spec.frame
        return d
    if isinstance(spec, SpatialFlexibleJointSpec):
        return {"type": "flexible_joint", "name": spec.name, "joint": spec.joint,
                "stiffness": spec.stiffness, "damping": spec.damping,
                "rotor_inertia": spec.rotor_inertia, "rotor_mass": spec.rotor_mass,
                "law": _law_value(spec.law),
                "rotor_transverse_inertia": spec.rotor_transverse_inertia}
    if isinstance(spec, MotorSpec):
        return {"type": "motor", "name": spec.name, "joint": spec.joint,
                "law": _law_value(spec.law)}
    from .forces import to_dict as planar_to_dict
    return planar_to_dict(spec)


# -- the expanded description ---------------------------------------------------------------

@dataclass(frozen=True)
class _AxisRecord:
    """Compiler-made: an actuator record on the rotation of body ``body1`` relative to
    ``body0`` about ``axis`` (global at the initial configuration), zero there."""

    name: str
    body0: str
    body1: str
    axis: tuple
    stiffness: float = 0.0
    damping: float = 0.0
    load: object = None
    input_mode: int = 0


def expand(desc, body_spec, revolute_spec):
    """The description the compiler numbers: the user's, with the rotor bodies, their pins
    and the records that flexible joints are made of. ``body_spec`` and
    ``revolute_spec`` make the new bodies and pins (the builder's record types)."""
    if not any(isinstance(f, SpatialFlexibleJointSpec) for f in desc.forces):
        return desc
    bodies = {b.name: b for b in desc.bodies}
    joints = {j.name: j for j in desc.joints}
    taken = set(bodies) | set(joints) | {f.name for f in desc.forces} | \
        {m.name for m in desc.markers} | {d.name for d in desc.drivers}
    new_bodies, new_joints, forces = [], [], []
    for f in desc.forces:
        if not isinstance(f, SpatialFlexibleJointSpec):
            forces.append(f)
            continue
        j = joints[f.joint]
        rotor = f"{f.name}/rotor"
        for n in (rotor, f"{rotor}.pin", f"{f.name}/spring"):
            if n in taken:
                raise ModelError(f"force element '{f.name}': the name '{n}' it needs is "
                                 "already used", f.name)
            taken.add(n)
        out, base = bodies[j.first[0]], bodies.get(j.second[0])
        R_out = np.array(out.orientation)
        axis = R_out @ np.array(j.axis_first)
        at = np.array(out.position) + R_out @ np.array(out.local_points()[j.first[1]])
        # The rotor's own z axis along the joint's axis; it starts turning with the output.
        R = _frame_with_z(axis)
        w_base = np.zeros(3) if base is None else np.array(base.angular_velocity)
        w = w_base + axis * float(axis @ (np.array(out.angular_velocity) - w_base))
        v = np.array(out.velocity) + np.cross(out.angular_velocity, at - np.array(out.position))
        new_bodies.append(body_spec(
            name=rotor, mass=f.rotor_mass,
            inertia=((f.rotor_transverse_inertia, 0.0, 0.0),
                     (0.0, f.rotor_transverse_inertia, 0.0), (0.0, 0.0, f.rotor_inertia)),
            points=(), position=tuple(at), orientation=tuple(map(tuple, R)),
            velocity=tuple(v), angular_velocity=tuple(w)))
        new_joints.append(revolute_spec(name=f"{rotor}.pin", kind="revolute",
                                        first=(rotor, "cm"), second=j.second,
                                        axis_first=(0.0, 0.0, 1.0),
                                        axis_second=j.axis_second))
        forces.append(_AxisRecord(f.name, j.second[0], rotor, tuple(axis), load=f.law,
                                  input_mode=INPUT_ADD))
        forces.append(_AxisRecord(f"{f.name}/spring", rotor, j.first[0], tuple(axis),
                                  f.stiffness, f.damping))
    return replace(desc, bodies=desc.bodies + tuple(new_bodies),
                   joints=desc.joints + tuple(new_joints), forces=tuple(forces))


def along_rod(entry: str, body_name: str, axis, d) -> None:
    """ModelError naming ``entry`` unless a direction with principal-frame components ``d``
    can be fixed in body ``body_name``: any direction in a body with a frame (``axis``
    None), only its axis in a rod (principal axis ``axis``)."""
    if axis is None:
        return
    d = np.asarray(d, dtype=float)
    if np.abs(np.delete(d, axis)).max() <= 1e-9 * np.abs(d).max():
        return
    raise ModelError(f"{entry}: it needs a direction across the axis of body {body_name!r}, "
                     "a rod (principal moments (0, I, I)), which carries only its axis: use "
                     "joints, drivers and loads at its points (spherical joints, point "
                     "primitives, distance drivers, forces, spring-dampers) or give the body "
                     "a thickness")


def perpendiculars(a) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors b1, b2 perpendicular to the unit vector ``a`` and to each other, with
    (b1, b2, a) right-handed. Joint rotations are measured from b1 about a: angle drivers
    (:mod:`linkdyn.compile.spatial`) and rotation records here share this one choice."""
    a = np.asarray(a, dtype=float)
    seed = np.eye(3)[int(np.argmin(np.abs(a)))]
    b1 = np.cross(a, seed)
    b1 /= np.linalg.norm(b1)
    return b1, np.cross(a, b1)


def _frame_with_z(axis) -> np.ndarray:
    """A rotation matrix whose third column is the unit ``axis``."""
    z = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    b1, b2 = perpendiculars(z)
    return np.column_stack([-b1, -b2, z])


# -- compile ----------------------------------------------------------------------------------

class Geometry:
    """Principal-frame components of points and directions, from the compiled bodies:
    ``index`` body name -> body number, ``frames`` (nbody, 3, 3) principal axes in body axes,
    ``orient`` body name -> initial rotation matrix, ``local`` body name -> {point:
    principal-frame coordinates}, ``ground`` point name -> position; ``view`` (nbody, 12)
    each body's coordinates r, e_1, e_2, e_3 (-1: a rod's absent axes) and ``axes`` each
    body's rod axis or None (:func:`linkdyn.compile.spatial.body_view`)."""

    def __init__(self, index, frames, orient, local, ground, view, axes):
        self.index, self.frames, self.orient = index, frames, orient
        self.local, self.ground, self.view, self.axes = local, ground, view, axes
        #: the element whose records are being made (named in refusals)
        self.entry = ""

    def glob(self, body, j) -> int:
        """The coordinate of body's r, e_1, e_2, e_3 entry j (-1: the ground's, or a rod's
        absent axes)."""
        return -1 if body < 0 else int(self.view[body, j])

    def body(self, name) -> int:
        return -1 if name == GROUND else self.index[name]

    def point(self, ref) -> tuple:
        body, p = ref
        if body == GROUND:
            return tuple(self.ground[p])
        return tuple(float(x) for x in self.local[body][p])

    def direction(self, body, global_dir) -> tuple:
        """Components of a direction given globally at the initial configuration."""
        if body == GROUND:
            return tuple(float(x) for x in global_dir)
        return self.principal(body, self.orient[body].T @ np.asarray(global_dir))

    def principal(self, body, d) -> tuple:
        """Principal-frame components of a direction ``d`` in ``body``'s own axes
        (ModelError naming the element for a direction across a rod)."""
        k = self.index[body]
        d = self.frames[k].T @ np.asarray(d, dtype=float)
        along_rod(self.entry, body, self.axes[k], d)
        return tuple(float(x) for x in d)

    def angle_geometry(self, body0, body1, axis) -> tuple:
        """(p0, p1, a, b, d) of the rotation of body1 relative to body0 about the global
        ``axis``: a, b perpendicular to it in body0, d = a in body1 at the start."""
        b1, b2 = perpendiculars(axis)
        return ((0.0,) * 6 + self.direction(body0, b1) + self.direction(body0, b2) +
                self.direction(body1, b1))

    def global_axis(self, joint) -> np.ndarray:
        body = joint.second[0]
        axis = np.asarray(joint.axis_second, dtype=float)
        return axis if body == GROUND else self.orient[body] @ axis


def _records(desc, geo: Geometry):
    joints = {j.name: j for j in desc.joints}
    recs, loads = [], []
    for f in desc.forces:
        geo.entry = f"force element {f.name!r}"
        if isinstance(f, SpringDamperSpec):
            recs.append(_Record(f.name, DISTANCE, (geo.body(f.first[0]), geo.body(f.second[0])),
                                geo.point(f.first) + geo.point(f.second) + (0.0,) * 9,
                                f.stiffness, f.damping, f.free_length))
        elif isinstance(f, _AxisRecord):
            recs.append(_Record(f.name, ANGLE, (geo.body(f.body0), geo.body(f.body1)),
                                geo.angle_geometry(f.body0, f.body1, f.axis), f.stiffness,
                                f.damping, 0.0, f.load, f.input_mode))
        elif isinstance(f, bushings.SpatialBushingSpec):
            recs += bushings.spatial_records(f, geo)
        elif isinstance(f, SpatialLoadSpec):
            body = f.target[0] if f.kind == "force" else f.target
            b = geo.index[body]
            if geo.axes[b] is not None and (f.kind == "torque" or f.frame == "body"):
                raise ModelError(f"{geo.entry}: body {body!r} is a rod (principal moments "
                                 "(0, I, I)), which has no frame for a torque or body-axes "
                                 "components; apply forces in global axes at its points")
            point = geo.point(f.target) if f.kind == "force" else (0.0, 0.0, 0.0)
            # components in body axes c -> principal axes E^T c (the kernels' load_axes)
            loads.append((f.name, b, point, f.laws, 1 if f.frame == "body" else 0,
                          LOAD_FORCE if f.kind == "force" else LOAD_TORQUE,
                          tuple(geo.frames[b].T.ravel())))
        else:
            j = joints[f.joint]
            slide = (j.kind == "prismatic" or
                     (j.kind == "cylindrical" and not isinstance(f, TorsionalSpringDamperSpec)))
            bodies = (geo.body(j.second[0]), geo.body(j.first[0]))
            axis = geo.global_axis(j)
            if slide:
                geom = (geo.point(j.second) + geo.point(j.first) +
                        geo.direction(j.second[0], axis) + (0.0,) * 6)
                rec = _Record(f.name, SLIDE, bodies, geom)
            else:
                rec = _Record(f.name, ANGLE, bodies,
                              geo.angle_geometry(j.second[0], j.first[0], axis))
            if isinstance(f, TorsionalSpringDamperSpec):
                rec.k, rec.c, rec.ref = f.stiffness, f.damping, f.rest_angle
            elif isinstance(f, JointDamperSpec):
                rec.c = f.damping
            elif isinstance(f, MotorSpec):
                rec.load, rec.input_mode = f.law, INPUT_ADD
            else:
                rec.k, rec.c, rec.ref, rec.input_mode = f.kp, f.kd, f.target, INPUT_TARGET
            recs.append(rec)
    return recs, loads


def _mask(geom, bodies, coord):
    """Local coordinates (of 24) that record's coordinate depends on."""
    g = np.zeros(24, dtype=bool)

    def add(side, comps, origin):
        if bodies[side] < 0:
            return
        o = 12 * side
        if origin:
            g[o:o + 3] = True
        for k in range(3):
            if comps[k] != 0.0:
                g[o + 3 + 3 * k:o + 6 + 3 * k] = True

    p0, p1, a, b, d = (geom[3 * i:3 * i + 3] for i in range(5))
    if coord == ANGLE:
        add(0, a, False)
        add(0, b, False)
        add(1, d, False)
    else:
        add(0, p0, True)
        add(1, p1, True)
        if coord == SLIDE:
            add(0, a, False)
    return g


def spatial_force_arrays(desc, geo: Geometry, add_law, q0):
    """The force kernels' arrays of a spatial description's force elements and contacts
    (``desc`` already expanded): ``(arrays, info, fq_blocks, fv_blocks)``, the blocks' (row, col)
    pairs in local order, records (24 x 24) then loads (12 x 12) for Q_q, records for Q_v
    (the compiler turns them into patterns and slots)."""
    recs, loads = _records(desc, geo)
    contacts_from = len(recs)
    recs += (contact_records(desc, geo) + stops.spatial_records(desc, geo)
             + clearance.spatial_records(desc, geo))
    friction_recs, frictions = joint_friction.spatial_records(desc, geo, len(recs))
    recs += friction_recs
    nrec, nload = len(recs), len(loads)
    a, inputs = record_laws(recs, add_law)
    a.update(rec_geom=np.zeros(6 * nrec),
             rec_geom3=np.array([r.geom for r in recs], dtype=float).reshape(-1),
             load_body=np.array([ld[1] for ld in loads], dtype=np.intc),
             load_point=np.array([ld[2] for ld in loads], dtype=float).reshape(-1),
             load_frame=np.array([ld[4] for ld in loads], dtype=np.intc),
             load_kind=np.array([ld[5] for ld in loads], dtype=np.intc),
             load_axes=np.array([ld[6] for ld in loads], dtype=float).reshape(-1),
             load_laws=np.full(3 * nload, -1, dtype=np.intc))
    for i, ld in enumerate(loads):
        for c, law in enumerate(ld[3]):
            if not (law.kind == "constant" and law.params[0] == 0.0):
                a["load_laws"][3 * i + c] = add_law(law)
    fq_blocks, fv_blocks = [], []
    for r in recs:
        g = _mask(r.geom, r.bodies, r.coord)
        glob = np.array([geo.glob(r.bodies[i // 12], i % 12) for i in range(24)])
        for mask, out in ((np.outer(g, g), fq_blocks),
                          (np.outer(g, g) if (r.c or r.law) else np.zeros((24, 24), bool),
                           fv_blocks)):
            out.append([(int(glob[i]), int(glob[j])) if mask[i, j] else None
                        for i in range(24) for j in range(24)])
    for ld in loads:
        glob = geo.view[ld[1]]
        dependent = ld[4] == 1 or ld[5] == LOAD_TORQUE
        fq_blocks.append([(int(glob[i]), int(glob[j])) if dependent else None
                          for i in range(12) for j in range(12)])
    a.update(body_stride=12,
             angle_ref0=_angles(a["rec_geom3"].reshape(-1, 15), recs, q0, geo))
    if any(k is not None for k in geo.axes):     # rods: the kernels read bodies by the view
        a["body_view"] = np.asarray(geo.view, dtype=np.intc).reshape(-1)
    info = dict(elements=element_index(recs, loads), inputs=tuple(inputs), nrec=nrec,
                nload=nload,
                coord=tuple(r.coord for r in recs),
                contacts=tuple((i, recs[i].owner, recs[i].law)
                               for i in range(contacts_from, nrec)
                               if recs[i].law != FRICTION_LAW),
                frictions=tuple(frictions), swings=(), arcs=(), load_dim=3)
    return a, info, fq_blocks, fv_blocks


def _angles(geom3, recs, q0, geo) -> np.ndarray:
    """The principal value of each angle record at q0 (its branch's start)."""
    out = np.zeros(len(recs))

    def vec(body, c):
        if body < 0:
            return np.asarray(c)
        view = geo.view[body]
        z = np.where(view >= 0, q0[np.maximum(view, 0)], 0.0)
        return c[0] * z[3:6] + c[1] * z[6:9] + c[2] * z[9:12]

    for i, r in enumerate(recs):
        if r.coord != ANGLE:
            continue
        g = geom3[i]
        d = vec(r.bodies[1], g[12:15])
        out[i] = math.atan2(d @ vec(r.bodies[0], g[9:12]), d @ vec(r.bodies[0], g[6:9]))
    return out
