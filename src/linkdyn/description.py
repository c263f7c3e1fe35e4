"""The model description: plain immutable records, and the builder that validates them.

Data flows one way: description -> :class:`ModelBuilder` (names, validation, clear errors)
-> :meth:`ModelBuilder.build` (compile) -> :class:`linkdyn.Model` (frozen arrays).
All user-facing checks live here; the compiled model and the kernels trust what they get.

Conventions (SI units throughout)
---------------------------------
* A planar body is described by its centre of mass ``position = (x, y)`` and a body-fixed unit
  vector ``u = (ux, uy)``, the body's local xi axis. ``perp(u) = (-uy, ux)`` is its local eta
  axis, so angles are counter-clockwise and ``u = (cos angle, sin angle)``.
* A body-fixed point with local coordinates ``(xi, eta)`` (relative to the centre of mass) sits
  at ``r + xi * u + eta * perp(u)``. Every body has the point ``cm = (0, 0)``.
* A bar of length ``L`` has its centre of mass at mid-length and the points ``a = (-L/2, 0)`` and
  ``b = (L/2, 0)``: ``u`` points from ``a`` to ``b``.
* ``inertia`` is the polar moment of inertia about the centre of mass (kg m^2); a bar's default
  is ``m L^2 / 12``.
* Initial values (``position``, ``u``, ``velocity``, ``ud``) are guesses: they are projected onto
  the constraints by :func:`linkdyn.consistent_state`, which keeps bodies marked ``hold`` fixed.
"""

from __future__ import annotations

import itertools
import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterable, Mapping

from ._checks import real
from .errors import ModelError
from .contacts import ContactBuilder
from .forces import ForceBuilder
from .laws import Law, law_from_dict

__all__ = [
    "GROUND",
    "BodySpec",
    "BarSpec",
    "RevoluteSpec",
    "PrismaticSpec",
    "AngleDriverSpec",
    "SlideDriverSpec",
    "CoordinateDriverSpec",
    "MarkerSpec",
    "Description",
    "ModelBuilder",
]

#: Name of the ground (the fixed frame); reserved, no body may take it.
GROUND = "ground"

Vec2 = tuple[float, float]
PointRef = tuple[str, str]  # (body or "ground", point name)


@dataclass(frozen=True)
class BodySpec:
    """A general planar rigid body."""

    name: str
    mass: float
    inertia: float
    points: tuple[tuple[str, Vec2], ...] = ()
    position: Vec2 = (0.0, 0.0)
    u: Vec2 = (1.0, 0.0)
    velocity: Vec2 = (0.0, 0.0)
    ud: Vec2 = (0.0, 0.0)
    hold: bool = False

    def resolved_mass(self) -> float:
        return self.mass

    def resolved_inertia(self) -> float:
        return self.inertia

    def local_points(self) -> dict[str, Vec2]:
        return {"cm": (0.0, 0.0), **dict(self.points)}


@dataclass(frozen=True)
class BarSpec:
    """A slender uniform bar with ends ``a`` and ``b``; mass from ``mass`` or ``density``
    (kg/m), exactly one of them given."""

    name: str
    length: float
    density: float | None = None
    mass: float | None = None
    inertia: float | None = None
    points: tuple[tuple[str, Vec2], ...] = ()
    position: Vec2 = (0.0, 0.0)
    u: Vec2 = (1.0, 0.0)
    velocity: Vec2 = (0.0, 0.0)
    ud: Vec2 = (0.0, 0.0)
    hold: bool = False

    def resolved_mass(self) -> float:
        return self.mass if self.mass is not None else self.density * self.length

    def resolved_inertia(self) -> float:
        if self.inertia is not None:
            return self.inertia
        return self.resolved_mass() * self.length**2 / 12.0

    def local_points(self) -> dict[str, Vec2]:
        half = 0.5 * self.length
        return {"cm": (0.0, 0.0), "a": (-half, 0.0), "b": (half, 0.0), **dict(self.points)}


@dataclass(frozen=True)
class RevoluteSpec:
    """A revolute (pin) joint: point ``first`` coincides with point ``second``.
    The constraint rows are ``r_first - r_second = 0`` (x row, then y row)."""

    name: str
    first: PointRef
    second: PointRef


@dataclass(frozen=True)
class PrismaticSpec:
    """A prismatic (translational) joint: the second body keeps the relative orientation
    ``angle`` (rad, angle of the second body's u minus the first's) and its point ``second``
    stays on the line through point ``first`` with direction at ``axis`` (rad) from the first
    body's u. Rows: ``<name>.rotation`` (sine of the orientation error) and ``<name>.axis``
    (distance from the line times |axis|)."""

    name: str
    first: PointRef
    second: PointRef
    axis: float
    angle: float


@dataclass(frozen=True)
class AngleDriverSpec:
    """Drives the relative angle of revolute ``joint`` (second body's angle minus the
    first's; the ground's is 0) along ``law``: row sin(angle - f(t)) = 0."""

    name: str
    joint: str
    law: Law


@dataclass(frozen=True)
class SlideDriverSpec:
    """Drives the displacement along prismatic ``joint`` (of its second point from its first,
    along the axis) along ``law``."""

    name: str
    joint: str
    law: Law


@dataclass(frozen=True)
class CoordinateDriverSpec:
    """Drives the global x or y coordinate of a body point along ``law``."""

    name: str
    point: PointRef
    axis: str
    law: Law


@dataclass(frozen=True)
class MarkerSpec:
    """A named body-fixed point reported in results."""

    name: str
    body: str
    point: str


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


@contextmanager
def _element(name):
    """Attach the element's name to any ModelError raised while it is checked."""
    try:
        yield
    except ModelError as exc:
        if exc.entry is None:
            exc.entry = name
        raise


def _finite(entry: str, what: str, value) -> float:
    return real(entry, what, value)


def _positive(entry: str, what: str, value) -> float:
    return real(entry, what, value, positive=True)


def _vec2(entry: str, what: str, value) -> Vec2:
    if type(value) in (tuple, list) and len(value) == 2:
        # The common case without the ABC check (a tenth of the build time of big models).
        return (_finite(entry, what, value[0]), _finite(entry, what, value[1]))
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ModelError(f"{entry}: {what} must be a pair of numbers (x, y), got {value!r}")
    # Take at most three items: an endless or huge iterable is not materialised.
    items = list(itertools.islice(value, 3))
    if len(items) != 2:
        count = ("more than 2 values" if len(items) > 2 else
                 f"{len(items)} value{'' if len(items) == 1 else 's'}")
        raise ModelError(f"{entry}: {what} must be a pair of numbers (x, y), got {count}")
    return (_finite(entry, what, items[0]), _finite(entry, what, items[1]))


class ModelBuilder(ForceBuilder, ContactBuilder):
    """Builds a validated model description, element by element.

    Force elements (springs, dampers, loads, motors, servos) are added with the methods of
    :class:`linkdyn.forces.ForceBuilder`, contacts with
    :meth:`linkdyn.contacts.ContactBuilder.add_contact`.

    Every ``add_*`` method checks its arguments at once and raises :class:`ModelError`
    naming the element and what was expected. References (``"bar1.a"`` or ``("bar1", "a")``)
    must name bodies and points added before.

    >>> b = ModelBuilder("pendulum", gravity=(0.0, -9.81))
    >>> b.add_ground_point("O", (0.0, 0.0))
    >>> b.add_bar("rod", length=1.0, density=1.0, position=(0.5, 0.0))
    >>> b.add_revolute("pin", "rod.a", "ground.O")
    >>> model = b.build()
    """

    def __init__(self, name: str = "model", gravity=(0.0, -9.81)):
        if not isinstance(name, str) or not name:
            raise ModelError(f"model name must be a non-empty string, got {name!r}")
        self._name = name
        self._gravity = _vec2("model", "gravity", gravity)
        self._ground: dict[str, Vec2] = {}
        self._bodies: dict[str, BodySpec | BarSpec] = {}
        self._joints: dict[str, RevoluteSpec | PrismaticSpec] = {}
        self._markers: dict[str, MarkerSpec] = {}
        self._drivers: dict = {}
        self._forces: dict = {}
        self._contacts: dict = {}

    # -- names -----------------------------------------------------------------------------
    def _new_name(self, kind: str, name) -> str:
        if not isinstance(name, str) or not name or name.strip() != name:
            raise ModelError(f"{kind} name must be a non-empty string without surrounding "
                             f"spaces, got {name!r}")
        if "." in name:
            raise ModelError(f"{kind} '{name}': names may not contain '.' (it separates a body "
                             "from its point in references)", name)
        if name == GROUND:
            raise ModelError(f"{kind} '{name}': the name '{GROUND}' is reserved", name)
        for other_kind, table in (("body", self._bodies), ("joint", self._joints),
                                  ("marker", self._markers), ("driver", self._drivers),
                                  ("force element", self._forces),
                                  ("contact", self._contacts)):
            if name in table:
                raise ModelError(f"{kind} '{name}': the name is already used by a {other_kind}",
                                 name)
        return name

    def _ref(self, entry: str, ref) -> PointRef:
        if isinstance(ref, str):
            parts = ref.split(".")
            if len(parts) != 2 or not all(parts):
                raise ModelError(f"{entry}: point reference {ref!r} must be 'body.point'")
            body, point = parts
        elif isinstance(ref, (tuple, list)) and len(ref) == 2 and all(
                isinstance(p, str) for p in ref):
            body, point = ref
        else:
            raise ModelError(f"{entry}: point reference must be 'body.point' or (body, point), "
                             f"got {ref!r}")
        if body == GROUND:
            if point not in self._ground:
                known = ", ".join(sorted(self._ground)) or "none"
                raise ModelError(f"{entry}: unknown ground point '{point}' (known: {known})")
        else:
            if body not in self._bodies:
                known = ", ".join(self._bodies) or "none"
                raise ModelError(f"{entry}: unknown body '{body}' (known: {known})")
            points = self._bodies[body].local_points()
            if point not in points:
                raise ModelError(f"{entry}: body '{body}' has no point '{point}' (it has: "
                                 f"{', '.join(points)})")
        return (body, point)

    # -- elements --------------------------------------------------------------------------
    def set_gravity(self, gravity) -> None:
        """Uniform gravity (gx, gy) in m/s^2; default (0, -9.81)."""
        self._gravity = _vec2("model", "gravity", gravity)

    def add_ground_point(self, name: str, position) -> None:
        """A named point fixed to the ground at global ``position`` (x, y)."""
        entry = f"ground point '{name}'"
        if not isinstance(name, str) or not name or "." in name:
            raise ModelError(f"ground point name must be a non-empty string without '.', "
                             f"got {name!r}")
        if name in self._ground:
            raise ModelError(f"{entry}: the name is already used by a ground point", name)
        with _element(name):
            self._ground[name] = _vec2(entry, "position", position)

    def _kinematics(self, entry, position, angle, u, velocity, omega, ud):
        position = _vec2(entry, "position", position)
        if angle is not None and u is not None:
            raise ModelError(f"{entry}: give the orientation as angle or as u, not both")
        if u is None:
            a = 0.0 if angle is None else _finite(entry, "angle", angle)
            u = (math.cos(a), math.sin(a))
        u = _vec2(entry, "u", u)
        if math.hypot(*u) == 0.0:
            raise ModelError(f"{entry}: u must be a non-zero vector (it is normalised by the "
                             "initial projection)")
        velocity = _vec2(entry, "velocity", velocity)
        if omega is not None and ud is not None:
            raise ModelError(f"{entry}: give the angular velocity as omega or as ud, not both")
        if ud is None:
            w = 0.0 if omega is None else _finite(entry, "omega", omega)
            ud = (-w * u[1], w * u[0])
        ud = _vec2(entry, "ud", ud)
        return position, u, velocity, ud

    def _points(self, entry, points, reserved) -> tuple[tuple[str, Vec2], ...]:
        if points is None:
            return ()
        if not isinstance(points, Mapping):
            raise ModelError(f"{entry}: points must be a mapping name -> (xi, eta), got "
                             f"{points!r}")
        out = []
        for pname, xy in points.items():
            if not isinstance(pname, str) or not pname or "." in pname:
                raise ModelError(f"{entry}: point names must be non-empty strings without "
                                 f"'.', got {pname!r}")
            if pname in reserved:
                raise ModelError(f"{entry}: point name '{pname}' is reserved (the body "
                                 f"already has {', '.join(reserved)})")
            out.append((pname, _vec2(entry, f"point '{pname}'", xy)))
        return tuple(out)

    def add_body(self, name: str, *, mass, inertia, points=None, position=(0.0, 0.0),
                 angle=None, u=None, velocity=(0.0, 0.0), omega=None, ud=None,
                 hold: bool = False) -> None:
        """A general rigid body: ``mass`` (kg), ``inertia`` about the centre of mass (kg m^2),
        named local ``points`` {name: (xi, eta)}, and initial guesses (see module docs).
        ``hold=True`` keeps the body's initial position and velocity fixed during the
        initial projection."""
        name = self._new_name("body", name)
        entry = f"body '{name}'"
        with _element(name):
            self._bodies[name] = self._body_spec(entry, name, mass, inertia, points, position,
                                                 angle, u, velocity, omega, ud, hold)

    def _body_spec(self, entry, name, mass, inertia, points, position, angle, u, velocity,
                   omega, ud, hold):
        for what, value in (("mass", mass), ("inertia", inertia)):
            if _positive(entry, what, value) < 1e-300:
                raise ModelError(f"{entry}: {what} {value!r} is too small for double "
                                 "precision; use units that keep it above 1e-300")
        return BodySpec(
            name=name,
            mass=_positive(entry, "mass", mass),
            inertia=_positive(entry, "inertia", inertia),
            points=self._points(entry, points, ("cm",)),
            **dict(zip(("position", "u", "velocity", "ud"),
                       self._kinematics(entry, position, angle, u, velocity, omega, ud))),
            hold=self._flag(entry, "hold", hold),
        )

    def add_bar(self, name: str, *, length, density=None, mass=None, inertia=None,
                points=None, position=(0.0, 0.0), angle=None, u=None, velocity=(0.0, 0.0),
                omega=None, ud=None, hold: bool = False) -> None:
        """A uniform slender bar of ``length`` (m) with ends ``a`` and ``b``. Give exactly
        one of ``density`` (kg/m) and ``mass`` (kg); ``inertia`` defaults to m L^2 / 12."""
        name = self._new_name("body", name)
        entry = f"bar '{name}'"
        with _element(name):
            self._bodies[name] = self._bar_spec(entry, name, length, density, mass, inertia,
                                                points, position, angle, u, velocity, omega, ud,
                                                hold)

    def _bar_spec(self, entry, name, length, density, mass, inertia, points, position, angle,
                  u, velocity, omega, ud, hold):
        if (density is None) == (mass is None):
            raise ModelError(f"{entry}: give exactly one of density (kg/m) and mass (kg)")
        spec = self._bar_record(entry, name, length, density, mass, inertia, points, position,
                                angle, u, velocity, omega, ud, hold)
        # The derived mass and inertia must be usable numbers too (1e200 m squared
        # overflows, 1e-320 m squared underflows to zero).
        try:
            m, jz = spec.resolved_mass(), spec.resolved_inertia()
        except OverflowError:
            m = jz = math.inf
        for what, value in (("mass", m), ("inertia", jz)):
            if not (math.isfinite(value) and value > 1e-300):
                raise ModelError(f"{entry}: its {what} ({value!r}, from length {spec.length!r}) "
                                 "is out of the range of double precision; use units that keep "
                                 "it between 1e-300 and 1e300")
        return spec

    def _bar_record(self, entry, name, length, density, mass, inertia, points, position,
                    angle, u, velocity, omega, ud, hold):
        return BarSpec(
            name=name,
            length=_positive(entry, "length", length),
            density=None if density is None else _positive(entry, "density", density),
            mass=None if mass is None else _positive(entry, "mass", mass),
            inertia=None if inertia is None else _positive(entry, "inertia", inertia),
            points=self._points(entry, points, ("cm", "a", "b")),
            **dict(zip(("position", "u", "velocity", "ud"),
                       self._kinematics(entry, position, angle, u, velocity, omega, ud))),
            hold=self._flag(entry, "hold", hold),
        )

    @staticmethod
    def _flag(entry, what, value) -> bool:
        if not isinstance(value, bool):
            raise ModelError(f"{entry}: {what} must be true or false, got {value!r}")
        return value

    def add_revolute(self, name: str, first, second) -> None:
        """A revolute joint making point ``first`` coincide with point ``second``; each is
        ``'body.point'`` (or ``'ground.point'``) or a ``(body, point)`` pair."""
        name = self._new_name("joint", name)
        entry = f"joint '{name}'"
        with _element(name):
            a, b = self._joint_ends(entry, first, second)
        self._joints[name] = RevoluteSpec(name, a, b)

    def _joint_ends(self, entry, first, second):
        a = self._ref(entry, first)
        b = self._ref(entry, second)
        if a[0] == b[0]:
            what = "the ground to itself" if a[0] == GROUND else f"body '{a[0]}' to itself"
            raise ModelError(f"{entry}: a joint must connect two different bodies; it connects "
                             f"{what}")
        return a, b

    def _orientation(self, body: str) -> float:
        if body == GROUND:
            return 0.0
        u = self._bodies[body].u
        return math.atan2(u[1], u[0])

    def add_prismatic(self, name: str, first, second, axis=0.0, angle=None) -> None:
        """A prismatic joint: point ``second`` slides along the line through point ``first``
        in the direction at ``axis`` (rad) from the first body's u (for the ground: from the
        global x axis); the relative orientation stays ``angle`` (rad; default: as in the
        initial guesses)."""
        name = self._new_name("joint", name)
        entry = f"joint '{name}'"
        with _element(name):
            a, b = self._joint_ends(entry, first, second)
            axis = _finite(entry, "axis", axis)
            if angle is None:
                angle = self._orientation(b[0]) - self._orientation(a[0])
            angle = _finite(entry, "angle", angle)
        self._joints[name] = PrismaticSpec(name, a, b, axis, angle)

    def _law(self, entry, law) -> Law:
        try:
            return law_from_dict(law)
        except ModelError as exc:
            raise ModelError(f"{entry}: {exc}") from None

    def add_angle_driver(self, name: str, joint: str, law) -> None:
        """Drive the relative angle of revolute ``joint`` with ``law`` (a
        :mod:`linkdyn.laws` law or its dict form)."""
        self._add_joint_driver(name, joint, law, RevoluteSpec, AngleDriverSpec, "revolute")

    def add_slide_driver(self, name: str, joint: str, law) -> None:
        """Drive the displacement along prismatic ``joint`` with ``law``."""
        self._add_joint_driver(name, joint, law, PrismaticSpec, SlideDriverSpec, "prismatic")

    def _add_joint_driver(self, name, joint, law, joint_type, spec, kind):
        name = self._new_name("driver", name)
        entry = f"driver '{name}'"
        with _element(name):
            if not isinstance(joint, str) or joint not in self._joints:
                raise ModelError(f"{entry}: unknown joint {joint!r} (joints: "
                                 f"{', '.join(self._joints) or 'none'})")
            if not isinstance(self._joints[joint], joint_type):
                raise ModelError(f"{entry}: joint '{joint}' is not a {kind} joint")
            self._drivers[name] = spec(name, joint, self._law(entry, law))

    def add_coordinate_driver(self, name: str, point, axis: str, law) -> None:
        """Drive the global ``axis`` ("x" or "y") coordinate of body point ``point``."""
        name = self._new_name("driver", name)
        entry = f"driver '{name}'"
        with _element(name):
            ref = self._ref(entry, point)
            if ref[0] == GROUND:
                raise ModelError(f"{entry}: drive a body point, not a ground point")
            if axis not in ("x", "y"):
                raise ModelError(f"{entry}: axis must be 'x' or 'y', got {axis!r}")
            self._drivers[name] = CoordinateDriverSpec(name, ref, axis, self._law(entry, law))

    def add_marker(self, name: str, point) -> None:
        """A named body-fixed point, ``'body.point'``, reported in results."""
        name = self._new_name("marker", name)
        entry = f"marker '{name}'"
        with _element(name):
            body, pname = self._ref(entry, point)
        if body == GROUND:
            raise ModelError(f"{entry}: markers sit on bodies, not on the ground", name)
        self._markers[name] = MarkerSpec(name, body, pname)

    # -- results ---------------------------------------------------------------------------
    def description(self) -> Description:
        """The validated description as an immutable record."""
        return Description(
            name=self._name,
            gravity=self._gravity,
            ground=tuple(self._ground.items()),
            bodies=tuple(self._bodies.values()),
            joints=tuple(self._joints.values()),
            markers=tuple(self._markers.values()),
            drivers=tuple(self._drivers.values()),
            forces=tuple(self._forces.values()),
            contacts=tuple(self._contacts.values()),
        )

    def build(self):
        """Compile the description into a frozen :class:`linkdyn.Model`."""
        from .model import compile_model

        return compile_model(self.description())
