"""The validated builder of spatial models: :class:`SpatialModelBuilder` checks every name,
reference and number as it is given (errors name the offending entry and say what was
expected), gathers the records of :mod:`linkdyn.elements.spatial` into a
:class:`~linkdyn.elements.spatial.SpatialDescription`, and ``build()`` hands that to the one
compile path, which returns a frozen :class:`~linkdyn.compile.spatial.SpatialModel`.

>>> b = SpatialModelBuilder("top", gravity=(0.0, 0.0, -9.81))
>>> b.add_ground_point("O", (0.0, 0.0, 0.0))
>>> b.add_body("top", mass=1.0, inertia=(0.004, 0.004, 0.002), position=(0.0, 0.0, 0.1),
...            points={"apex": (0.0, 0.0, -0.1)}, angular_velocity=(0.0, 0.0, 50.0))
>>> b.add_spherical("pivot", "top.apex", "ground.O")
>>> model = b.build()
"""

from __future__ import annotations


import numpy as np

from ..compile.compiler import compile_model
from .builder import named_points, resolve_ref
from ..elements.bodies import GROUND, _element, _positive
from .._checks import real
from ..elements.bushings import SpatialBushingBuilder
from ..elements.gears import SpatialGearBuilder
from ..elements.laws import Law, constant, law_from_dict
from ..elements.spatial_contacts import SpatialContactBuilder
from ..elements.spatial_forces import SpatialForceBuilder
from ..elements.spatial import (AxisJointSpec, SpatialBodySpec, SpatialDescription,
                                SpatialDriverSpec, SpatialMarkerSpec, SphericalSpec,
                                inertia_tensor, may_be_rod, principal_frame, rod_axis,
                                rotation_matrix, unit_vec3, vec3)
from ..elements.run_defaults import checked_run_defaults
from ..elements.stops import StopBuilder
from ..elements.clearance import ClearanceBuilder
from ..elements.joint_friction import JointFrictionBuilder
from ..errors import ModelError

__all__ = ["SpatialModelBuilder"]


def _points_on_rod(entry: str, inertia, points) -> None:
    """ModelError naming the point unless every point of a rod lies on its axis (to 1e-9
    of its distance from the centre of mass)."""
    if not may_be_rod(inertia):
        return
    E, P = principal_frame(inertia)
    k = rod_axis(P)
    if k is None:
        return
    a = E[:, k]
    for name, p in points:
        p = np.asarray(p)
        off = float(np.linalg.norm(p - (p @ a) * a))
        if off > 1e-9 * float(np.linalg.norm(p)):
            raise ModelError(f"{entry}: point {name!r} at {p.tolist()} is {off:.3g} m off "
                             f"the body's axis {a.tolist()}; the body is a rod (principal "
                             "moments (0, I, I): its mass lies on that line), whose points "
                             "lie on its axis; give the body a thickness to attach points "
                             "off it")


class SpatialModelBuilder(SpatialForceBuilder, SpatialContactBuilder, SpatialGearBuilder,
                          SpatialBushingBuilder, StopBuilder, ClearanceBuilder,
                          JointFrictionBuilder):
    """Builds a validated spatial model description, element by element: bodies in natural
    coordinates (conventions of :mod:`linkdyn.elements.spatial`), ground points, joints,
    drivers, force elements (:mod:`linkdyn.elements.spatial_forces`), contacts
    (:mod:`linkdyn.elements.spatial_contacts`) and markers, under uniform gravity.
    References (``"arm.tip"`` or ``("arm", "tip")``) must name bodies and points added
    before."""

    def __init__(self, name: str = "model", gravity=(0.0, 0.0, -9.81)):
        if not isinstance(name, str) or not name:
            raise ModelError(f"model name must be a non-empty string, got {name!r}")
        self._name = name
        self._gravity = vec3(f"model '{name}'", "gravity", gravity)
        self._ground: dict = {}
        self._bodies: dict = {}
        self._joints: dict = {}
        self._markers: dict = {}
        self._run_defaults: tuple = ()
        self._drivers: dict = {}
        self._forces: dict = {}
        self._contacts: dict = {}
        self._gears: dict = {}
        self._stops: dict = {}
        self._clearances: dict = {}
        self._joint_frictions: dict = {}

    def _new_name(self, kind: str, name) -> str:
        if not isinstance(name, str) or not name or name.strip() != name or "." in name:
            raise ModelError(f"{kind} name must be a non-empty string without '.' or "
                             f"surrounding spaces, got {name!r}")
        if name == GROUND:
            raise ModelError(f"{kind} '{name}': the name '{GROUND}' is reserved", name)
        for other_kind, table in (("body", self._bodies), ("joint", self._joints),
                                  ("joint", self._clearances),
                                  ("marker", self._markers), ("driver", self._drivers),
                                  ("force element", self._forces),
                                  ("contact", self._contacts),
                                  ("gear pair", self._gears),
                                  ("joint stop", self._stops),
                                  ("joint friction", self._joint_frictions)):
            if name in table:
                raise ModelError(f"{kind} '{name}': the name is already used by a {other_kind}",
                                 name)
        return name

    def _ref(self, entry: str, ref) -> tuple[str, str]:
        return resolve_ref(entry, ref, self._ground, self._bodies)

    def add_ground_point(self, name: str, position) -> None:
        """A named point fixed to the ground at global ``position`` (x, y, z), m."""
        if not isinstance(name, str) or not name or "." in name:
            raise ModelError(f"ground point name must be a non-empty string without '.', "
                             f"got {name!r}")
        if name in self._ground:
            raise ModelError(f"ground point '{name}': the name is already used", name)
        with _element(name):
            self._ground[name] = vec3(f"ground point '{name}'", "position", position)

    def add_body(self, name: str, *, mass, inertia, points=None, position=(0.0, 0.0, 0.0),
                 orientation=None, velocity=(0.0, 0.0, 0.0),
                 angular_velocity=(0.0, 0.0, 0.0)) -> None:
        """A rigid body: ``mass`` (kg); ``inertia`` about the centre of mass in body axes
        (kg m^2: three principal moments, or a symmetric 3 x 3 tensor); named ``points``
        {name: (x, y, z)} in body axes relative to the centre of mass; the centre of mass
        at ``position``; ``orientation`` the rotation matrix from body to global axes
        (default: aligned); ``velocity`` of the centre of mass and ``angular_velocity``
        (rad/s), both in global axes. Initial values are guesses that
        :func:`linkdyn.consistent_state` makes consistent.

        A body with principal moments (0, I, I) is a rod (mass on a line: six coordinates,
        see :mod:`linkdyn.elements.spatial`); its points must lie on its axis."""
        name = self._new_name("body", name)
        entry = f"body '{name}'"
        with _element(name):
            if _positive(entry, "mass", mass) < 1e-300:
                raise ModelError(f"{entry}: mass {mass!r} is too small for double precision")
            J = inertia_tensor(entry, inertia)
            pts = named_points(entry, points, ("cm",), vec3, "(x, y, z)")
            _points_on_rod(entry, J, pts)
            R = rotation_matrix(entry, np.eye(3) if orientation is None else orientation)
            self._bodies[name] = SpatialBodySpec(
                name=name, mass=float(mass), inertia=J, points=pts,
                position=vec3(entry, "position", position), orientation=R,
                velocity=vec3(entry, "velocity", velocity),
                angular_velocity=vec3(entry, "angular_velocity", angular_velocity))

    @staticmethod
    def _rotation(entry, value) -> np.ndarray:
        """A checked rotation matrix (the mixins' orientations)."""
        return np.array(rotation_matrix(entry, value))

    def add_spherical(self, name: str, first, second, *, clearance=None) -> None:
        """A spherical joint: point ``first`` ("body.point") stays at point ``second`` of
        another body or of the ground. Its multipliers are the joint's reaction. With
        ``clearance={"size", "stiffness", ...}`` the ball (``second``) moves inside a
        socket (``first``) of that radial clearance instead
        (:mod:`linkdyn.elements.clearance`)."""
        name = self._new_name("joint", name)
        if clearance is not None:
            self._add_clearance(name, "spherical", first, second, clearance)
            return
        entry = f"joint '{name}'"
        with _element(name):
            a, b, _ = self._pair(entry, first, second)
            self._joints[name] = SphericalSpec(name=name, first=a, second=b)

    def _pair(self, entry, first, second):
        """The joint's two points, the ground's second, and whether they were swapped."""
        a, b = self._ref(entry, first), self._ref(entry, second)
        if a[0] == b[0]:
            raise ModelError(f"{entry}: both points are on '{a[0]}'; a joint connects two "
                             "different bodies (or a body and the ground)")
        return (b, a, True) if a[0] == GROUND else (a, b, False)

    def add_revolute(self, name: str, first, second, axis) -> None:
        """A revolute joint: point ``first`` stays at point ``second`` and the two bodies
        turn relative to each other about ``axis`` only. ``axis``: the axis' direction in
        global axes at the initial configuration (the bodies' given orientations); each
        body keeps it fixed in its own axes."""
        self._axis_joint(name, "revolute", first, second, axis, axis)

    def add_universal(self, name: str, first, second, axis_first, axis_second) -> None:
        """A universal (Hooke's) joint: point ``first`` stays at point ``second``, and the
        cross's two arms, ``axis_first`` fixed in the first body and ``axis_second`` in the
        second (global directions at the initial configuration, perpendicular), stay
        perpendicular: two relative rotations."""
        self._axis_joint(name, "universal", first, second, axis_first, axis_second)

    def add_cylindrical(self, name: str, first, second, axis) -> None:
        """A cylindrical joint: point ``first`` stays on the line through point ``second``
        along ``axis`` (global axes at the initial configuration, fixed in the second
        body), and the first body turns about and slides along that line only."""
        self._axis_joint(name, "cylindrical", first, second, axis, axis)

    def add_prismatic(self, name: str, first, second, axis) -> None:
        """A prismatic joint: as cylindrical, without the rotation about the axis."""
        self._axis_joint(name, "prismatic", first, second, axis, axis)

    def add_planar(self, name: str, first, second, normal) -> None:
        """A planar joint: the first body slides and turns on a plane of the second, the
        plane through point ``second`` normal to ``normal`` (global axes at the initial
        configuration, fixed in the second body), with point ``first`` on it."""
        self._axis_joint(name, "planar", first, second, normal, normal)

    def add_planar_slide(self, name: str, first, second, normal) -> None:
        """A planar slide: the first body slides on a plane of the second without turning,
        point ``first`` on the plane through point ``second`` normal to ``normal`` (global
        axes at the initial configuration, fixed in the second body) and the relative
        orientation kept (two translations; MJCF's body on two slides at right angles)."""
        self._axis_joint(name, "planar_slide", first, second, normal, normal)

    def add_point_on_plane(self, name: str, first, second, normal) -> None:
        """A point-on-plane primitive: point ``first`` stays on the plane of the second body
        through point ``second`` normal to ``normal`` (global axes at the initial
        configuration); nothing else is constrained."""
        self._axis_joint(name, "point_plane", first, second, normal, normal)

    def add_point_on_line(self, name: str, first, second, axis) -> None:
        """A point-on-line primitive: point ``first`` stays on the line of the second body
        through point ``second`` along ``axis`` (global axes at the initial
        configuration); the bodies turn freely."""
        self._axis_joint(name, "point_line", first, second, axis, axis)

    def add_rigid(self, name: str, first, second) -> None:
        """A rigid joint (weld): point ``first`` stays at point ``second`` and the two
        bodies keep their initial relative orientation."""
        self._axis_joint(name, "rigid", first, second, (1.0, 0.0, 0.0), (1.0, 0.0, 0.0))

    def _in_body_axes(self, body: str, axis) -> tuple:
        """A global direction at the initial configuration, in a body's own axes (global
        for the ground)."""
        if body == GROUND:
            return tuple(axis)
        R = np.array(self._bodies[body].orientation)
        return tuple(float(x) for x in R.T @ np.array(axis))

    def _axis_joint(self, name, kind, first, second, axis_first, axis_second):
        name = self._new_name("joint", name)
        entry = f"joint '{name}'"
        with _element(name):
            a, b, swapped = self._pair(entry, first, second)
            if swapped and kind in ("point_plane", "point_line"):
                raise ModelError(f"{entry}: the point that stays on the "
                                 f"{'plane' if kind == 'point_plane' else 'line'} (first) "
                                 "must be on a moving body, not the ground")
            if swapped:
                axis_first, axis_second = axis_second, axis_first
            both = kind == "universal"
            u = unit_vec3(entry, "axis_first" if both else "axis", axis_first)
            w = unit_vec3(entry, "axis_second" if both else "axis", axis_second)
            if both and abs(float(np.dot(u, w))) > 1e-9:
                raise ModelError(f"{entry}: the cross's arms axis_first {u} and axis_second "
                                 f"{w} must be perpendicular")
            self._joints[name] = AxisJointSpec(name=name, kind=kind, first=a, second=b,
                                               axis_first=self._in_body_axes(a[0], u),
                                               axis_second=self._in_body_axes(b[0], w))

    def _law(self, entry, law) -> Law:
        """A law, its dict form, or a number (a constant law: a fixed angle, distance or
        coordinate)."""
        if isinstance(law, Law):
            return law
        if isinstance(law, (int, float)) and not isinstance(law, bool):
            return constant(real(entry, "law", law))
        if isinstance(law, dict):
            try:
                return law_from_dict(law)
            except ModelError as exc:
                raise ModelError(f"{entry}: {exc}") from None
        raise ModelError(f"{entry}: law must be a number or a linkdyn.laws law (constant, "
                         f"linear, polynomial, harmonic, tabulated, function) or its dict form, "
                         f"got {law!r}")

    def add_angle_driver(self, name: str, joint: str, law) -> None:
        """Drive revolute joint ``joint``: its first body's rotation relative to the second
        about the joint's axis (rad, right-handed about the axis given to add_revolute,
        zero at the initial configuration) follows ``law``. Its effort
        (``result.driver_effort``) is the torque about the axis on the first body."""
        name = self._new_name("driver", name)
        entry = f"driver '{name}'"
        with _element(name):
            spec = self._joints.get(joint) if isinstance(joint, str) else None
            if getattr(spec, "kind", None) != "revolute":
                known = [j for j, s in self._joints.items()
                         if getattr(s, "kind", None) == "revolute"]
                raise ModelError(f"{entry}: {joint!r} is not a revolute joint of this model "
                                 f"(revolute joints: {', '.join(known) or 'none'})")
            self._drivers[name] = SpatialDriverSpec(name=name, kind="angle",
                                                    law=self._law(entry, law), joint=joint)

    def add_distance_driver(self, name: str, first, second, law) -> None:
        """The distance between points ``first`` and ``second`` (m, positive) follows
        ``law`` (a linear actuator, or with a constant law a massless rod); its effort is the
        force (N) along the distance, positive pushing the points apart."""
        name = self._new_name("driver", name)
        entry = f"driver '{name}'"
        with _element(name):
            a, b = self._ref(entry, first), self._ref(entry, second)
            if a == b:
                raise ModelError(f"{entry}: the two points are the same point")
            self._drivers[name] = SpatialDriverSpec(name=name, kind="distance",
                                                    law=self._law(entry, law), first=a,
                                                    second=b)

    def add_coordinate_driver(self, name: str, point, axis: str, law) -> None:
        """The global ``axis`` ("x", "y" or "z") coordinate of body point ``point``
        follows ``law`` (m); its effort is the force along that axis on the body (N)."""
        name = self._new_name("driver", name)
        entry = f"driver '{name}'"
        with _element(name):
            p = self._ref(entry, point)
            if p[0] == GROUND:
                raise ModelError(f"{entry}: a ground point cannot be driven")
            if axis not in ("x", "y", "z"):
                raise ModelError(f"{entry}: axis must be 'x', 'y' or 'z', got {axis!r}")
            self._drivers[name] = SpatialDriverSpec(name=name, kind="coordinate",
                                                    law=self._law(entry, law), first=p,
                                                    axis=axis)

    def add_marker(self, name: str, point) -> None:
        """A named body point reported in results (``result.marker(name)``: (n, 3))."""
        name = self._new_name("marker", name)
        entry = f"marker '{name}'"
        with _element(name):
            body, p = self._ref(entry, point)
            if body == GROUND:
                raise ModelError(f"{entry}: markers sit on bodies, not on the ground")
            self._markers[name] = SpatialMarkerSpec(name=name, body=body, point=p)

    def set_run_defaults(self, **settings) -> None:
        """The model's own run settings, which the ``linkdyn`` command uses where its
        options are not given: ``t_end`` (s), ``redundant`` ("raise" or "allow") and
        ``at_limit`` ("raise" or "reverse"); see :mod:`linkdyn.elements.run_defaults`.
        Replaces what an earlier call set."""
        self._run_defaults = checked_run_defaults(f"model '{self._name}'", settings)

    def description(self) -> SpatialDescription:
        """The validated, immutable description of what was added."""
        if not self._bodies:
            raise ModelError(f"model '{self._name}': a spatial model needs at least one body")
        return SpatialDescription(
            name=self._name, gravity=self._gravity, ground=tuple(self._ground.items()),
            bodies=tuple(self._bodies.values()), joints=tuple(self._joints.values()),
            markers=tuple(self._markers.values()), drivers=tuple(self._drivers.values()),
            forces=tuple(self._forces.values()), contacts=tuple(self._contacts.values()),
            run_defaults=self._run_defaults, gears=tuple(self._gears.values()),
            stops=tuple(self._stops.values()),
            clearances=tuple(self._clearances.values()),
            joint_frictions=tuple(self._joint_frictions.values()))

    def build(self):
        """Compile the description into a frozen :class:`linkdyn.SpatialModel`."""
        return compile_model(self.description())
