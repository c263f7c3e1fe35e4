"""The validated builder: :class:`ModelBuilder` checks every name, reference and number as
it is given (errors name the offending entry and say what was expected), gathers the element
records into a :class:`linkdyn.elements.description.Description`, and ``build()`` hands that
to the compiler, which returns a frozen :class:`linkdyn.Model`.

Data flows one way: builder -> Description (immutable records) -> compile -> Model. All
user-facing checks live here and in the element families' builders (forces, contacts); the
compiled model and the kernels trust what they get. Conventions of bodies and points:
:mod:`linkdyn.elements.bodies`.
"""

from __future__ import annotations

import math
from typing import Mapping

from ..compile.compiler import compile_model
from ..compile.model import Model
from ..elements.bodies import (GROUND, BarSpec, BodySpec, MarkerSpec, PointRef, Vec2, _element,
                               _finite, _positive, _vec2)
from ..elements.bushings import BushingBuilder
from ..elements.clearance import ClearanceBuilder
from ..elements.joint_friction import JointFrictionBuilder
from ..elements.contacts import ContactBuilder
from ..elements.description import Description
from ..elements.forces import ForceBuilder
from ..elements.gears import GearBuilder
from ..elements.cams import CamBuilder
from ..elements.joints import (AngleDriverSpec, CoordinateDriverSpec, PrismaticSpec,
                               RevoluteSpec, SlideDriverSpec)
from ..elements.laws import Law, law_from_dict
from ..elements.run_defaults import checked_run_defaults
from ..elements.stops import StopBuilder
from .._checks import as_file_error
from ..errors import ModelError, ModelFileError

__all__ = ["ModelBuilder", "resolve_ref", "named_points"]


def resolve_ref(entry: str, ref, ground, bodies) -> PointRef:
    """A point reference ("body.point" or (body, point)) checked against the ground points
    and the bodies added so far (their ``local_points()``): (body, point), or ModelError
    naming ``entry`` and what it could have been."""
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
        if point not in ground:
            known = ", ".join(sorted(ground)) or "none"
            raise ModelError(f"{entry}: unknown ground point '{point}' (known: {known})")
    else:
        if body not in bodies:
            known = ", ".join(bodies) or "none"
            raise ModelError(f"{entry}: unknown body '{body}' (known: {known})")
        points = bodies[body].local_points()
        if point not in points:
            raise ModelError(f"{entry}: body '{body}' has no point '{point}' (it has: "
                             f"{', '.join(points)})")
    return (body, point)


def named_points(entry: str, points, reserved, parse, shape: str) -> tuple:
    """A body's named points {name: coordinates} as ((name, coordinates), ...), each parsed
    by ``parse(entry, what, value)``; ModelError for a name that is empty, holds '.', or is
    one of ``reserved``. ``shape`` names the coordinates in messages ("(xi, eta)")."""
    if points is None:
        return ()
    if not isinstance(points, Mapping):
        raise ModelError(f"{entry}: points must be a mapping name -> {shape}, got {points!r}")
    out = []
    for pname, xy in points.items():
        if not isinstance(pname, str) or not pname or "." in pname:
            raise ModelError(f"{entry}: point names must be non-empty strings without "
                             f"'.', got {pname!r}")
        if pname in reserved:
            raise ModelError(f"{entry}: point name '{pname}' is reserved (the body "
                             f"already has {', '.join(reserved)})")
        out.append((pname, parse(entry, f"point '{pname}'", xy)))
    return tuple(out)


class ModelBuilder(ForceBuilder, ContactBuilder, GearBuilder, BushingBuilder, StopBuilder,
                   ClearanceBuilder, JointFrictionBuilder, CamBuilder):
    """Builds a validated model description, element by element.

    Force elements (springs, dampers, loads, motors, servos) are added with the methods of
    :class:`linkdyn.forces.ForceBuilder`, contacts with
    :meth:`linkdyn.contacts.ContactBuilder.add_contact`, gear pairs and racks with those of
    :class:`linkdyn.elements.gears.GearBuilder`, cams with
    :meth:`linkdyn.elements.cams.CamBuilder.add_cam_follower`.

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
        self._gravity = _vec2(f"model '{name}'", "gravity", gravity)
        self._ground: dict[str, Vec2] = {}
        self._bodies: dict[str, BodySpec | BarSpec] = {}
        self._joints: dict[str, RevoluteSpec | PrismaticSpec] = {}
        self._markers: dict[str, MarkerSpec] = {}
        self._run_defaults: tuple = ()
        self._drivers: dict = {}
        self._forces: dict = {}
        self._contacts: dict = {}
        self._gears: dict = {}
        self._cams: dict = {}
        self._stops: dict = {}
        self._clearances: dict = {}
        self._joint_frictions: dict = {}

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
                                  ("joint", self._clearances),
                                  ("marker", self._markers), ("driver", self._drivers),
                                  ("force element", self._forces),
                                  ("contact", self._contacts),
                                  ("gear pair", self._gears),
                                  ("cam follower", self._cams),
                                  ("joint stop", self._stops),
                                  ("joint friction", self._joint_frictions)):
            if name in table:
                raise ModelError(f"{kind} '{name}': the name is already used by a {other_kind}",
                                 name)
        return name

    def _ref(self, entry: str, ref) -> PointRef:
        return resolve_ref(entry, ref, self._ground, self._bodies)

    # -- elements --------------------------------------------------------------------------
    def set_gravity(self, gravity) -> None:
        """Uniform gravity (gx, gy) in m/s^2; default (0, -9.81)."""
        self._gravity = _vec2(f"model '{self._name}'", "gravity", gravity)

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
        return named_points(entry, points, reserved, _vec2, "(xi, eta)")

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

    def add_revolute(self, name: str, first, second, *, clearance=None) -> None:
        """A revolute joint making point ``first`` coincide with point ``second``; each is
        ``'body.point'`` (or ``'ground.point'``) or a ``(body, point)`` pair. With
        ``clearance={"size", "stiffness", ...}`` the journal (``second``) moves inside a
        bearing (``first``) of that radial clearance instead
        (:mod:`linkdyn.elements.clearance`)."""
        name = self._new_name("joint", name)
        if clearance is not None:
            self._add_clearance(name, "revolute", first, second, clearance)
            return
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

    def add_prismatic(self, name: str, first, second, axis=0.0, angle=None, *,
                      clearance=None) -> None:
        """A prismatic joint: point ``second`` slides along the line through point ``first``
        in the direction at ``axis`` (rad) from the first body's u (for the ground: from the
        global x axis); the relative orientation stays ``angle`` (rad; default: as in the
        initial guesses). With ``clearance={"size", "stiffness", "length", ...}`` the
        slider has that play in its guide instead (:mod:`linkdyn.elements.clearance`)."""
        name = self._new_name("joint", name)
        if clearance is not None:
            self._add_clearance(name, "prismatic", first, second, clearance,
                                _finite(f"joint '{name}'", "axis", axis), angle)
            return
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
            if not isinstance(axis, str) or axis not in ("x", "y"):
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

    def set_run_defaults(self, **settings) -> None:
        """The model's own run settings, which the ``linkdyn`` command uses where its
        options are not given: ``t_end`` (s), ``redundant`` ("raise" or "allow") and
        ``at_limit`` ("raise" or "reverse"); see :mod:`linkdyn.elements.run_defaults`.
        Replaces what an earlier call set."""
        self._run_defaults = checked_run_defaults(f"model '{self._name}'", settings)

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
            run_defaults=self._run_defaults,
            gears=tuple(self._gears.values()),
            cams=tuple(self._cams.values()),
            stops=tuple(self._stops.values()),
            clearances=tuple(self._clearances.values()),
            joint_frictions=tuple(self._joint_frictions.values()),
        )

    def build(self) -> Model:
        """Compile the description into a frozen :class:`linkdyn.Model`."""
        return compile_model(self.description())


def read_run_defaults(data: dict, path, builder) -> None:
    """A model file's ``run_defaults`` object (:mod:`linkdyn.elements.run_defaults`), if it
    has one, set on ``builder`` (a planar or spatial one); ModelFileError names the entry."""
    if "run_defaults" not in data:
        return
    settings = data["run_defaults"]
    if not isinstance(settings, dict):
        raise ModelFileError(f"expected an object of setting: value, got "
                             f"{type(settings).__name__}", path, "run_defaults")
    as_file_error(path, "run_defaults", builder.set_run_defaults, **settings)


def name_or_gravity(data) -> str:
    """Where in a file the builder's first call fails: its name, or else its gravity."""
    name = data.get("name")
    return "gravity" if isinstance(name, str) and name else "name"
