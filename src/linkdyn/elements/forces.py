"""Force elements: springs, dampers, applied loads, motors and servos.

Everything about the family lives here: the records (immutable specs), the builder methods
(:class:`ForceBuilder`, mixed into :class:`linkdyn.ModelBuilder`), the model-file entries
(:data:`FILE_TYPES`, :func:`to_dict`) and the compile step to the flat arrays of the C
kernels (:func:`force_records`, packed with the contacts' by
:func:`linkdyn.elements.records.compile_records`; the kernels are ``csrc/ld_forces.c``).

Every element but the point loads acts along one scalar coordinate ``s`` of the mechanism:

=================================  ===========================================  ==========
element                            coordinate s                                 f along s
=================================  ===========================================  ==========
``add_spring_damper``              distance between two points (m)              -tension
``add_torsional_spring_damper``    relative angle of a revolute joint (rad)     torque
``add_joint_damper``               relative angle or slide of a joint           torque/force
``add_motor``                      relative angle or slide of a joint           torque/force
``add_servo``                      relative angle or slide of a joint           torque/force
``add_torque``                     absolute angle of a body (rad)               torque
=================================  ===========================================  ==========

with the generalised force along ``s``

    f = -k (s - r(t)) - c (s' - r'(t)) + g(t) + u

(stiffness k, damping c, reference r: free length, rest angle or servo target; load g: a
motor's or a torque's law; u: a controller input). A positive f pushes s to grow: a spring
stretched beyond its free length pulls its points together (f < 0), a positive motor torque
turns the joint's second body counter-clockwise relative to its first. The relative angle of
a revolute joint is the second body's angle minus the first's (the ground's is 0), as for angle
drivers, and it is continuous over any number of turns. The slide of a prismatic joint is the
displacement of its second point from its first along the axis, as for slide drivers.

``add_force`` applies a force at a body point with components from two laws, in the global
frame or in the body frame (a follower force that turns with the body).

Energy: a spring stores ``k (s - r)^2 / 2``; everything else in f does work. The result of a
simulation reports both (``energy`` includes the springs, ``work`` integrates the power of
the rest), so that ``energy(t) - energy(0) = work(t)`` holds to the integrator's tolerance.

Rotor inertia (armature): ``add_motor(..., rotor_inertia=J_r, gear_ratio=n, rotor_mass=m)``
adds the kinetic energy ``n^2 J_r (w2 - w1)^2 / 2`` of a rotor turning at the joint's
relative rate (w1, w2: the angular velocities of the joint's bodies), the model of rigid-body
codes that put the reflected inertia on the joint's diagonal (Jiminy, Pinocchio's armature,
Featherstone). The compiler adds a body ``<motor>/rotor`` of mass m and inertia n^2 J_r
pinned at the joint, whose orientation is held at u_rotor = u2 conj(u1) (complex product of
the two bodies' unit vectors: two bilinear rows, which replace the rotor's unit-vector row),
so the mass matrix stays constant and diagonal; the rotor's mass m rides at the joint point.
On a fixed base this is the exact reflected inertia; on a moving base it neglects the
rotor's own share of the base's rotation, ``J_r (w1^2 / 2 + n w1 (w2 - w1))`` in the kinetic
energy, which is small for large gear ratios.

Flexible joints (Vigne, "A note on the model used by Jiminy to simulate flexibilities", 2020):
``add_flexible_joint`` builds the series-elastic actuator of the note's Figure 1a (a rotor body
between the motor and a torsional spring-damper to the output) or, with ``form="jiminy"``, its
Figure 1b (the spring placed before the motor, on an extra body of small inertia I_f, with the
rotor as an armature on the motor's joint).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._checks import real
from ..errors import ModelError
from . import bushings
from .bodies import GROUND, BodySpec, _element
from .joints import PrismaticSpec, RevoluteSpec
from .laws import Law, constant, law_from_dict
from .records import ANGLE, DISTANCE, INPUT_ADD, INPUT_TARGET, SLIDE, _Record

__all__ = [
    "SpringDamperSpec", "TorsionalSpringDamperSpec", "JointDamperSpec", "MotorSpec",
    "ServoSpec", "TorqueSpec", "ForceSpec", "FlexibleJointSpec", "ForceBuilder",
    "FILE_TYPES", "to_dict", "force_records", "expand",
]

PointRef = tuple[str, str]

@dataclass(frozen=True)
class SpringDamperSpec:
    """Linear spring and viscous damper between points ``first`` and ``second``: tension
    ``k (L - L0(t)) + c (L' - L0'(t))`` along the line between them. ``free_length`` is a
    law (a constant, or a driving law: a linear actuator)."""

    name: str
    first: PointRef
    second: PointRef
    stiffness: float
    damping: float
    free_length: Law


@dataclass(frozen=True)
class TorsionalSpringDamperSpec:
    """Torsional spring and damper on the relative angle of revolute ``joint``: torque
    ``-k (theta - rest_angle) - c theta'`` on the joint's second body (the opposite on the
    first)."""

    name: str
    joint: str
    stiffness: float
    damping: float
    rest_angle: float


@dataclass(frozen=True)
class JointDamperSpec:
    """Viscous damping on the relative rate of a revolute or prismatic ``joint``."""

    name: str
    joint: str
    damping: float


@dataclass(frozen=True)
class MotorSpec:
    """A torque (revolute) or force (prismatic) in ``joint`` from ``law``, plus the input of a
    controller; ``rotor_inertia`` and ``gear_ratio`` add the reflected inertia
    ``gear_ratio^2 rotor_inertia`` (revolute joints only; see the module notes)."""

    name: str
    joint: str
    law: Law
    rotor_inertia: float = 0.0
    gear_ratio: float = 1.0
    rotor_mass: float = 0.0


@dataclass(frozen=True)
class ServoSpec:
    """A PD servo in ``joint``: ``kp (target - s) + kd (target' - s')``; a controller's input
    replaces the target while it is held."""

    name: str
    joint: str
    target: Law
    kp: float
    kd: float


@dataclass(frozen=True)
class TorqueSpec:
    """A torque ``law(t)`` (N m, counter-clockwise) on ``body``."""

    name: str
    body: str
    law: Law


@dataclass(frozen=True)
class ForceSpec:
    """A force with components ``law_x``, ``law_y`` (N) at body point ``point``, in the
    global frame or (``frame="body"``) along the body's u and perp(u)."""

    name: str
    point: PointRef
    law_x: Law
    law_y: Law
    frame: str


@dataclass(frozen=True)
class FlexibleJointSpec:
    """A series-elastic actuator on revolute ``joint`` (first body: the base carrying the
    motor; second: the output); see :meth:`ForceBuilder.add_flexible_joint`."""

    name: str
    joint: str
    stiffness: float
    damping: float
    rotor_inertia: float
    rotor_mass: float
    law: Law
    form: str = "series"
    flex_inertia: float = 0.0
    flex_mass: float = 0.0


@dataclass(frozen=True)
class _AngleRecord:
    """Compiler-made: an actuator record on the relative angle of two bodies."""

    name: str
    body1: str
    body2: str
    stiffness: float = 0.0
    damping: float = 0.0
    rest: float = 0.0
    load: Law | None = None
    input_mode: int = 0


@dataclass(frozen=True)
class Armature:
    """Compiler-made: body ``rotor`` held at u_rotor = u2 conj(u1), u1, u2 the unit vectors of
    ``body1`` and ``body2`` (the ground's is (1, 0)); ``owner`` is the element it serves."""

    owner: str
    rotor: str
    body1: str
    body2: str


ForceElement = (SpringDamperSpec | TorsionalSpringDamperSpec | JointDamperSpec | MotorSpec
                | ServoSpec | TorqueSpec | ForceSpec)


# -- validation helpers ---------------------------------------------------------------------

_number = real   # the shared check (linkdyn._checks)


def _law(entry, what, value) -> Law:
    """A law, its dict form, or a number (a constant law)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return constant(_number(entry, what, value))
    try:
        law = law_from_dict(value)
    except ModelError as exc:
        raise ModelError(f"{entry}: {what}: {exc}") from None
    if law.is_function:
        raise ModelError(f"{entry}: {what} is a Python function, which the compiled force "
                         "kernels cannot call; use a constant, linear, polynomial, harmonic or "
                         "tabulated law (or a controller, see simulate)")
    return law


def _law_value(law: Law):
    """What a law-or-number field writes to a file: the number for a constant law."""
    return law.params[0] if law.kind == "constant" else law.to_dict()


def spring_damper_spec(entry, name, a, b, stiffness, damping, free_length,
                       distance) -> SpringDamperSpec:
    """A checked spring-damper between point references ``a`` and ``b``; ``distance()``
    gives their distance in the initial configuration, the default free length."""
    if a == b:
        raise ModelError(f"{entry}: the two points are the same point")
    k = _number(entry, "stiffness", stiffness, nonnegative=True)
    c = _number(entry, "damping", damping, nonnegative=True)
    if free_length is None:
        length = distance()
        if length == 0.0:
            raise ModelError(f"{entry}: the two points coincide in the initial configuration; "
                             "give free_length")
        law = constant(length)
    else:
        law = _law(entry, "free_length", free_length)
    if law.kind == "constant" and law.params[0] < 0:
        raise ModelError(f"{entry}: free_length must be zero or positive, got "
                         f"{law.params[0]!r}")
    return SpringDamperSpec(name, a, b, k, c, law)


class ForceBuilder:
    """The force-element methods of :class:`linkdyn.ModelBuilder` (a mixin: it uses the
    builder's tables and reference checks)."""

    def _joint_of(self, entry, joint, kinds=("revolute", "prismatic")):
        if not isinstance(joint, str):
            raise ModelError(f"{entry}: joint must be a joint's name, got {joint!r}")
        if joint not in self._joints:
            raise ModelError(f"{entry}: unknown joint {joint!r} (joints: "
                             f"{', '.join(self._joints) or 'none'})")
        j = self._joints[joint]
        kind = "revolute" if isinstance(j, RevoluteSpec) else "prismatic"
        assert isinstance(j, (RevoluteSpec, PrismaticSpec))
        if kind not in kinds:
            raise ModelError(f"{entry}: joint '{joint}' is a {kind} joint; expected a "
                             f"{' or '.join(kinds)} joint")
        return j, kind

    def _add_force(self, name, make):
        name = self._new_name("force element", name)
        with _element(name):
            self._forces[name] = make(f"force element '{name}'", name)

    def add_spring_damper(self, name: str, first, second, stiffness, damping=0.0,
                          free_length=None) -> None:
        """A linear spring (``stiffness``, N/m) and viscous damper (``damping``, N s/m)
        between points ``first`` and ``second`` ('body.point' or 'ground.point').
        ``free_length`` (m) is a number or a law (a linear actuator); by default the
        distance in the initial guesses. The tension is ``k (L - L0) + c (L' - L0')``.
        The points must never coincide (the direction of the force is undefined there):
        a simulation that brings them together stops with an error naming the element."""
        def make(entry, name):
            a, b = self._ref(entry, first), self._ref(entry, second)

            def distance():
                pa, pb = self._guess_point(a), self._guess_point(b)
                return math.hypot(pb[0] - pa[0], pb[1] - pa[1])

            return spring_damper_spec(entry, name, a, b, stiffness, damping, free_length,
                                      distance)
        self._add_force(name, make)

    def add_torsional_spring_damper(self, name: str, joint: str, stiffness, damping=0.0,
                                    rest_angle=None) -> None:
        """A torsional spring (``stiffness``, N m/rad) and damper (``damping``, N m s/rad)
        on the relative angle of revolute ``joint`` (second body minus first, continuous
        over turns). ``rest_angle`` (rad) defaults to the relative angle of the initial
        guesses."""
        def make(entry, name):
            j, _ = self._joint_of(entry, joint, ("revolute",))
            k = _number(entry, "stiffness", stiffness, nonnegative=True)
            c = _number(entry, "damping", damping, nonnegative=True)
            rest = (self._orientation(j.second[0]) - self._orientation(j.first[0])
                    if rest_angle is None else _number(entry, "rest_angle", rest_angle))
            return TorsionalSpringDamperSpec(name, joint, k, c, rest)
        self._add_force(name, make)

    def add_joint_damper(self, name: str, joint: str, damping) -> None:
        """Viscous damping (N m s/rad or N s/m) on the relative rate of a revolute or
        prismatic ``joint``."""
        def make(entry, name):
            self._joint_of(entry, joint)
            return JointDamperSpec(name, joint, _number(entry, "damping", damping,
                                                        positive=True))
        self._add_force(name, make)

    def add_motor(self, name: str, joint: str, law=0.0, rotor_inertia=0.0,
                  gear_ratio=1.0, rotor_mass=0.0) -> None:
        """A motor in ``joint``: torque (revolute, N m) or force (prismatic, N) ``law``
        (a number or a law; default 0, for a motor run by a controller), on the joint's
        second body (the opposite on the first). A controller's input (see
        :func:`linkdyn.simulate`) is added to it. ``rotor_inertia`` (kg m^2) with
        ``gear_ratio`` adds the armature ``gear_ratio^2 rotor_inertia`` on the joint's
        relative rate, carried by a rotor body of ``rotor_mass`` (kg, > 0 with a rotor
        inertia; it rides at the joint point) named ``<name>/rotor`` (revolute joints; see
        the module notes for what is exact)."""
        def make(entry, name):
            j, kind = self._joint_of(entry, joint)
            ji = _number(entry, "rotor_inertia", rotor_inertia, nonnegative=True)
            n = _number(entry, "gear_ratio", gear_ratio, positive=True)
            m = _number(entry, "rotor_mass", rotor_mass, nonnegative=True)
            if ji > 0 and kind != "revolute":
                raise ModelError(f"{entry}: rotor_inertia needs a revolute joint; joint "
                                 f"'{joint}' is prismatic")
            if ji > 0 and m == 0:
                raise ModelError(f"{entry}: a rotor inertia needs the rotor's mass "
                                 "(rotor_mass > 0, kg): the rotor is a body riding at the joint")
            return MotorSpec(name, joint, _law(entry, "law", law), ji, n, m)
        self._add_force(name, make)

    def add_flexible_joint(self, name: str, joint: str, stiffness, damping, rotor_inertia,
                           rotor_mass, law=0.0, form: str = "series", flex_inertia=None,
                           flex_mass=None) -> None:
        """A series-elastic actuator on revolute ``joint`` (Vigne's note on Jiminy's
        flexibilities): the motor sits on the joint's first body (the base) and drives its
        second (the output) through a torsional spring-damper (``stiffness`` N m/rad,
        ``damping`` N m s/rad).

        ``form="series"`` (Figure 1a): a rotor body ``<name>/rotor`` of inertia
        ``rotor_inertia`` (the reflected inertia, kg m^2) and mass ``rotor_mass`` (kg) is pinned
        at the joint; the motor torque ``law`` (plus a controller's input) acts between the
        base and the rotor, the spring between the rotor and the output.

        ``form="jiminy"`` (Figure 1b, as Jiminy simulates it): the spring sits between the
        base and an extra body ``<name>/flex`` of inertia ``flex_inertia`` (I_f, small) and
        mass ``flex_mass`` (default ``rotor_mass``), pinned at the joint; the motor acts
        between that body and the output, with the rotor as an armature on their relative
        rate. As I_f -> 0 it tends to the series form (the note's argument).

        The element's name reports the motor (``element_force``: its torque;
        ``element_coordinate``: the motor angle) and takes a controller's input;
        ``<name>/spring`` reports the spring (its coordinate is the deflection)."""
        def make(entry, name):
            j, _ = self._joint_of(entry, joint, ("revolute",))
            if form not in ("series", "jiminy"):
                raise ModelError(f"{entry}: form must be 'series' or 'jiminy', got {form!r}")
            if j.second[0] == GROUND:
                raise ModelError(f"{entry}: the joint's second body is the output; joint "
                                 f"'{joint}' has the ground there (swap its points)")
            k = _number(entry, "stiffness", stiffness, positive=True)
            c = _number(entry, "damping", damping, nonnegative=True)
            ji = _number(entry, "rotor_inertia", rotor_inertia, positive=True)
            m = _number(entry, "rotor_mass", rotor_mass, positive=True)
            if form == "jiminy":
                if flex_inertia is None:
                    raise ModelError(f"{entry}: form 'jiminy' needs flex_inertia (I_f, kg m^2)")
                fi = _number(entry, "flex_inertia", flex_inertia, positive=True)
                fm = m if flex_mass is None else _number(entry, "flex_mass", flex_mass,
                                                          positive=True)
            else:
                if flex_inertia is not None or flex_mass is not None:
                    raise ModelError(f"{entry}: flex_inertia and flex_mass belong to form "
                                     "'jiminy'")
                fi = fm = 0.0
            return FlexibleJointSpec(name, joint, k, c, ji, m, _law(entry, "law", law), form,
                                     fi, fm)
        self._add_force(name, make)

    def add_servo(self, name: str, joint: str, target, kp, kd=0.0) -> None:
        """A PD servo in ``joint`` tracking ``target`` (rad or m; a number or a law):
        torque or force ``kp (target - s) + kd (target' - s')``. A controller's input
        replaces the target (held, with zero rate) from the sample it is given at."""
        def make(entry, name):
            self._joint_of(entry, joint)
            return ServoSpec(name, joint, _law(entry, "target", target),
                             _number(entry, "kp", kp, positive=True),
                             _number(entry, "kd", kd, nonnegative=True))
        self._add_force(name, make)

    def add_torque(self, name: str, body: str, law) -> None:
        """A torque ``law`` (N m, counter-clockwise; a number or a law) on ``body``."""
        def make(entry, name):
            if not isinstance(body, str) or body not in self._bodies:
                raise ModelError(f"{entry}: unknown body {body!r} (bodies: "
                                 f"{', '.join(self._bodies) or 'none'})")
            return TorqueSpec(name, body, _law(entry, "law", law))
        self._add_force(name, make)

    def add_force(self, name: str, point, law_x=0.0, law_y=0.0, frame: str = "global") -> None:
        """A force (N) at body point ``point`` with components ``law_x``, ``law_y``
        (numbers or laws): global x and y (``frame="global"``) or along the body's u and
        perp(u) (``frame="body"``, a follower force)."""
        def make(entry, name):
            ref = self._ref(entry, point)
            if ref[0] == GROUND:
                raise ModelError(f"{entry}: apply the force to a body point, not a ground point")
            if frame not in ("global", "body"):
                raise ModelError(f"{entry}: frame must be 'global' or 'body', got {frame!r}")
            return ForceSpec(name, ref, _law(entry, "law_x", law_x),
                             _law(entry, "law_y", law_y), frame)
        self._add_force(name, make)

    # -- guesses -------------------------------------------------------------------------
    def _guess_point(self, ref):
        return _guess_point(self._bodies, self._ground, ref)


def _guess_point(bodies, ground, ref):
    """Global position of a point reference in the initial guesses."""
    body, point = ref
    if body == GROUND:
        return ground[point]
    b = bodies[body]
    xi, eta = b.local_points()[point]
    (x, y), (ux, uy) = b.position, b.u
    n = math.hypot(ux, uy)
    ux, uy = ux / n, uy / n
    return (x + xi * ux - eta * uy, y + xi * uy + eta * ux)


def _guess_rotation(bodies, body):
    """(unit vector, angular velocity) of a body in the guesses; the ground's (1, 0), 0."""
    if body == GROUND:
        return (1.0, 0.0), 0.0
    b = bodies[body]
    n = math.hypot(*b.u)
    u = (b.u[0] / n, b.u[1] / n)
    return u, (u[0] * b.ud[1] - u[1] * b.ud[0]) / n



# -- model files ------------------------------------------------------------------------------

#: Model-file entry types: type -> (builder method, required fields, optional fields).
FILE_TYPES = {
    "spring_damper": ("add_spring_damper", {"first", "second", "stiffness"},
                      {"damping", "free_length"}),
    "torsional_spring_damper": ("add_torsional_spring_damper", {"joint", "stiffness"},
                                {"damping", "rest_angle"}),
    "joint_damper": ("add_joint_damper", {"joint", "damping"}, set()),
    "motor": ("add_motor", {"joint"}, {"law", "rotor_inertia", "gear_ratio", "rotor_mass"}),
    "servo": ("add_servo", {"joint", "target", "kp"}, {"kd"}),
    "flexible_joint": ("add_flexible_joint",
                       {"joint", "stiffness", "damping", "rotor_inertia", "rotor_mass"},
                       {"law", "form", "flex_inertia", "flex_mass"}),
    "torque": ("add_torque", {"body", "law"}, set()),
    "force": ("add_force", {"point"}, {"law_x", "law_y", "frame"}),
    "bushing": bushings.FILE_TYPE,
}


def to_dict(spec) -> dict:
    """The canonical model-file entry of a force element."""
    if isinstance(spec, bushings.BushingSpec):
        return bushings.to_dict(spec)
    if isinstance(spec, SpringDamperSpec):
        return {"type": "spring_damper", "name": spec.name, "first": ".".join(spec.first),
                "second": ".".join(spec.second), "stiffness": spec.stiffness,
                "damping": spec.damping, "free_length": _law_value(spec.free_length)}
    if isinstance(spec, TorsionalSpringDamperSpec):
        return {"type": "torsional_spring_damper", "name": spec.name, "joint": spec.joint,
                "stiffness": spec.stiffness, "damping": spec.damping,
                "rest_angle": spec.rest_angle}
    if isinstance(spec, JointDamperSpec):
        return {"type": "joint_damper", "name": spec.name, "joint": spec.joint,
                "damping": spec.damping}
    if isinstance(spec, MotorSpec):
        return {"type": "motor", "name": spec.name, "joint": spec.joint,
                "law": _law_value(spec.law), "rotor_inertia": spec.rotor_inertia,
                "gear_ratio": spec.gear_ratio, "rotor_mass": spec.rotor_mass}
    if isinstance(spec, FlexibleJointSpec):
        d = {"type": "flexible_joint", "name": spec.name, "joint": spec.joint,
             "stiffness": spec.stiffness, "damping": spec.damping,
             "rotor_inertia": spec.rotor_inertia, "rotor_mass": spec.rotor_mass,
             "law": _law_value(spec.law), "form": spec.form}
        if spec.form == "jiminy":
            d.update(flex_inertia=spec.flex_inertia, flex_mass=spec.flex_mass)
        return d
    if isinstance(spec, ServoSpec):
        return {"type": "servo", "name": spec.name, "joint": spec.joint,
                "target": _law_value(spec.target), "kp": spec.kp, "kd": spec.kd}
    if isinstance(spec, TorqueSpec):
        return {"type": "torque", "name": spec.name, "body": spec.body,
                "law": _law_value(spec.law)}
    assert isinstance(spec, ForceSpec)
    return {"type": "force", "name": spec.name, "point": ".".join(spec.point),
            "law_x": _law_value(spec.law_x), "law_y": _law_value(spec.law_y),
            "frame": spec.frame}


# -- compile ----------------------------------------------------------------------------------

def _joint_coordinate(joint, body_index, local_of, ground):
    """(coordinate kind, bodies, geometry) of a joint's relative angle or slide."""
    def side(ref):
        b, p = ref
        if b == GROUND:
            return -1, ground[p]
        i = body_index[b]
        return i, local_of(i, p)

    (b1, p1), (b2, p2) = side(joint.first), side(joint.second)
    if isinstance(joint, PrismaticSpec):
        return SLIDE, (b1, b2), (*p1, *p2, math.cos(joint.axis), math.sin(joint.axis))
    return ANGLE, (b1, b2), (0.0, 0.0, 0.0, 0.0, 1.0, 0.0)


def force_records(desc, body_index, local_of, ground):
    """Records and loads of every force element, in description order, with their owners
    (compiled to arrays by :func:`linkdyn.elements.records.compile_records`)."""

    joints = {j.name: j for j in desc.joints}
    recs, loads = [], []
    for f in desc.forces:
        if isinstance(f, SpringDamperSpec):
            sides = []
            for b, p in (f.first, f.second):
                sides.append((-1, ground[p]) if b == GROUND
                             else (body_index[b], local_of(body_index[b], p)))
            recs.append(_Record(f.name, DISTANCE, (sides[0][0], sides[1][0]),
                                (*sides[0][1], *sides[1][1], 1.0, 0.0), f.stiffness,
                                f.damping, f.free_length))
        elif isinstance(f, (TorsionalSpringDamperSpec, JointDamperSpec, MotorSpec, ServoSpec)):
            kind, bodies, geom = _joint_coordinate(joints[f.joint], body_index, local_of,
                                                   ground)
            rec = _Record(f.name, kind, bodies, geom)
            if isinstance(f, TorsionalSpringDamperSpec):
                rec.k, rec.c, rec.ref = f.stiffness, f.damping, f.rest_angle
            elif isinstance(f, JointDamperSpec):
                rec.c = f.damping
            elif isinstance(f, MotorSpec):
                rec.load, rec.input_mode = f.law, INPUT_ADD
            else:
                rec.k, rec.c, rec.ref, rec.input_mode = f.kp, f.kd, f.target, INPUT_TARGET
            recs.append(rec)
        elif isinstance(f, _AngleRecord):
            b1 = -1 if f.body1 == GROUND else body_index[f.body1]
            b2 = -1 if f.body2 == GROUND else body_index[f.body2]
            recs.append(_Record(f.name, ANGLE, (b1, b2), (0.0, 0.0, 0.0, 0.0, 1.0, 0.0),
                                f.stiffness, f.damping, f.rest, f.load, f.input_mode))
        elif isinstance(f, TorqueSpec):
            recs.append(_Record(f.name, ANGLE, (-1, body_index[f.body]),
                                (0.0, 0.0, 0.0, 0.0, 1.0, 0.0), load=f.law))
        elif isinstance(f, bushings.BushingSpec):
            recs += bushings.planar_records(f, lambda ref: (
                (-1, ground[ref[1]]) if ref[0] == GROUND else
                (body_index[ref[0]], local_of(body_index[ref[0]], ref[1]))))
        else:
            assert isinstance(f, ForceSpec)
            b = body_index[f.point[0]]
            loads.append((f.name, b, local_of(b, f.point[1]), f.law_x, f.law_y,
                          1 if f.frame == "body" else 0))
    return recs, loads


def expand(desc):
    """The description the compiler numbers: the user's, plus the bodies, pins and records
    that rotor inertias and flexible joints are made of (see the module notes). Returns
    ``(expanded description, armatures)``."""
    from dataclasses import replace

    bodies = {b.name: b for b in desc.bodies}
    ground = dict(desc.ground)
    joints = {j.name: j for j in desc.joints}
    new_bodies, new_joints, armatures = [], [], []
    taken = set(bodies) | set(joints) | {f.name for f in desc.forces}

    def body(name, owner, mass, inertia, at, u, omega):
        if name in taken:
            raise ModelError(f"force element '{owner}': the name '{name}' it needs for its "
                             "rotor is already used", owner)
        taken.add(name)
        pos = _guess_point(bodies, ground, at)
        spec = BodySpec(name=name, mass=mass, inertia=inertia, position=pos, u=u,
                        ud=(-omega * u[1], omega * u[0]))
        bodies[name] = spec
        new_bodies.append(spec)
        new_joints.append(RevoluteSpec(f"{name}.pin", (name, "cm"), at))

    def product(u2, u1):   # u2 conj(u1)
        return (u2[0] * u1[0] + u2[1] * u1[1], u2[1] * u1[0] - u2[0] * u1[1])

    forces = []
    for f in desc.forces:
        if isinstance(f, MotorSpec) and f.rotor_inertia > 0:
            j = joints[f.joint]
            (u1, w1), (u2, w2) = (_guess_rotation(bodies, j.first[0]),
                                  _guess_rotation(bodies, j.second[0]))
            rotor = f"{f.name}/rotor"
            body(rotor, f.name, f.rotor_mass, f.gear_ratio**2 * f.rotor_inertia, j.first,
                 product(u2, u1), w2 - w1)
            armatures.append(Armature(f.name, rotor, j.first[0], j.second[0]))
            forces.append(f)
        elif isinstance(f, FlexibleJointSpec):
            j = joints[f.joint]
            base, out = j.first[0], j.second[0]
            (ub, wb), (uo, wo) = _guess_rotation(bodies, base), _guess_rotation(bodies, out)
            if f.form == "series":
                rotor = f"{f.name}/rotor"
                body(rotor, f.name, f.rotor_mass, f.rotor_inertia, j.first, uo, wo)
                forces.append(_AngleRecord(f.name, base, rotor, load=f.law,
                                           input_mode=INPUT_ADD))
                forces.append(_AngleRecord(f"{f.name}/spring", rotor, out, f.stiffness,
                                           f.damping))
            else:
                flex, rotor = f"{f.name}/flex", f"{f.name}/rotor"
                body(flex, f.name, f.flex_mass, f.flex_inertia, j.first, ub, wb)
                body(rotor, f.name, f.rotor_mass, f.rotor_inertia, j.first, product(uo, ub),
                     wo - wb)
                armatures.append(Armature(f.name, rotor, flex, out))
                forces.append(_AngleRecord(f"{f.name}/spring", base, flex, f.stiffness,
                                           f.damping))
                forces.append(_AngleRecord(f.name, flex, out, load=f.law,
                                           input_mode=INPUT_ADD))
        else:
            forces.append(f)
    expanded = replace(desc, bodies=desc.bodies + tuple(new_bodies),
                       joints=desc.joints + tuple(new_joints), forces=tuple(forces))
    return expanded, armatures
