"""Linkages described by their geometry: joints as points and lines, links as sets of joints
(the point-line-plane paper's representation), compiled into linkdyn's bodies and joints.

A planar linkage is given as its joints and links, as the paper's tables give them::

    g = linkdyn.geometric.Linkage("stephenson2")
    g.revolute("J1", (0.0, -1.0))              # a revolute joint: a point (x, y), m
    g.prismatic("J3", (-0.17, 0.98, -4.28))    # a prismatic joint: the line a x + b y + c = 0
    g.coupler("J8", (6.0, -2.0))               # a coupler point: a point of one link
    g.link("L1", ["J1", "J2"])                 # a link: the joints it carries
    g.link("L6", ["J1", "J7"], ground=True)    # the fixed link
    g.input("J1", rate=1.0)                    # turn the link on J1 about it, rad/s
    model = g.build()                          # a linkdyn Model, for linkdyn.kinematics

What the geometry means. A revolute joint pins together every link that lists it. A prismatic
joint joins the two links that list it: they keep their relative orientation and slide along
the line (each keeps its distance from the line, as in the paper's point-line rows). A coupler
point is a marker of the one link that lists it. The input is a revolute joint of the ground
(its other link turns about it at ``rate`` rad/s, counter-clockwise) or a prismatic joint of
the ground (its other link slides along the line at ``rate`` m/s, in the direction (b, -a)).

How it compiles. Each moving link becomes a body (frame at the mean of its joints' points,
aligned with the world at the start) carrying its joints' points; a prismatic joint gets a
point on its line (the foot of the perpendicular from the first link's frame origin) on both
of its links. The bodies carry unit mass and inertia: the description is kinematic (what the
paper's tables hold), so ``linkdyn.kinematics`` is its solver; dynamics needs the bodies'
masses, given with :class:`linkdyn.ModelBuilder`. Spherical and spatial linkages (points on a
sphere, planes through its centre) are not supported yet: three coordinates for a point raise
a ModelError saying so.

Linkage files. The same description as JSON, read by ``linkdyn.load_model`` and the command
like any model file (format version 1)::

    {
      "linkdyn_linkage": 1,
      "name": "stephenson2",
      "joints": [{"name": "J1", "type": "revolute", "coordinates": [0.0, -1.0]},
                 {"name": "J3", "type": "prismatic", "coordinates": [-0.17, 0.98, -4.28]},
                 {"name": "J8", "type": "coupler", "coordinates": [6.0, -2.0]}, ...],
      "links": [{"name": "L1", "joints": ["J1", "J2"]}, ...,
                {"name": "L6", "joints": ["J1", "J7"], "ground": true}],
      "input": {"joint": "J1", "rate": 1.0}
    }
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from .._checks import as_file_error, check_fields, checked_path, real
from ..compile.compiler import compile_model
from ..compile.model import Model
from ..elements.bodies import GROUND
from ..elements.laws import linear
from ..errors import ModelError, ModelFileError
from ..elements.run_defaults import checked_run_defaults
from .builder import ModelBuilder, read_run_defaults

__all__ = ["Linkage", "from_dict", "to_dict", "save", "LINKAGE_FORMAT_VERSION", "KINDS",
           "SPHERE_TOLERANCE"]

#: Version of the linkage file format (the "linkdyn_linkage" field).
LINKAGE_FORMAT_VERSION = 1

#: Kinds of linkage: in the plane, on a sphere about the origin, in space.
PLANAR, SPHERICAL, SPATIAL = "planar", "spherical", "spatial"
KINDS = (PLANAR, SPHERICAL, SPATIAL)

REVOLUTE, PRISMATIC, COUPLER, BALL = "revolute", "prismatic", "coupler", "spherical"
_JOINTS_OF = {PLANAR: (REVOLUTE, PRISMATIC, COUPLER), SPHERICAL: (REVOLUTE, PRISMATIC, COUPLER),
              SPATIAL: (BALL, COUPLER)}

#: A point of a spherical linkage may lie this far (relative) from the unit sphere: tables
#: round coordinates (the point-line-plane paper's to two decimals, up to 0.7% off); it is
#: projected onto it.
SPHERE_TOLERANCE = 1e-2


@dataclass(frozen=True)
class _Joint:
    name: str
    kind: str
    coordinates: tuple      # a point; a line (a, b, c); a plane's normal (a, b, c)


def _name(kind, name):
    if not isinstance(name, str) or not name or name.strip() != name or "." in name:
        raise ModelError(f"{kind} name must be a non-empty string without '.' or surrounding "
                         f"spaces, got {name!r}")
    return name


def _values(coordinates):
    """The coordinates as a tuple; () for what is not a sequence of them (the caller names
    it)."""
    if isinstance(coordinates, (str, bytes, dict)):
        return ()
    try:
        return tuple(coordinates)
    except TypeError:       # a number, None
        return ()


class Linkage:
    """A linkage from points, lines and planes (see :mod:`linkdyn.geometric`).

    ``kind``: ``"planar"`` (default; points (x, y), lines (a, b, c)), ``"spherical"`` (points
    (x, y, z) on the unit sphere about the origin, prismatic planes through the origin by
    their normal (a, b, c) or homogeneous (a, b, c, 0)) or ``"spatial"`` (spherical joints
    and coupler points (x, y, z))."""

    def __init__(self, name: str = "linkage", kind: str = PLANAR):
        self.name = _name("linkage", name)
        if kind not in KINDS:
            raise ModelError(f"linkage '{self.name}': kind must be one of {', '.join(KINDS)}, "
                             f"got {kind!r}")
        self.kind = kind
        self._joints: dict[str, _Joint] = {}
        self._links: dict[str, tuple] = {}
        self._ground: str | None = None
        self._input: tuple | None = None
        self._actuator: tuple | None = None
        self._run_defaults: tuple = ()

    def __eq__(self, other):
        if not isinstance(other, Linkage):
            return NotImplemented
        return to_dict(self) == to_dict(other)

    __hash__ = None

    def __repr__(self):
        return (f"<linkdyn.geometric.Linkage {self.name!r} ({self.kind}): "
                f"{len(self._joints)} joints, {len(self._links)} links>")

    # -- read access (for the compilers) ---------------------------------------------------
    @property
    def joints(self):
        """Joint name -> its record (name, kind, coordinates), in description order."""
        return MappingProxyType(self._joints)

    @property
    def links(self):
        """Link name -> the names of its joints."""
        return MappingProxyType(self._links)

    @property
    def ground(self) -> str | None:
        return self._ground

    @property
    def input_joint(self) -> str | None:
        """The joint whose rotation (or slide) is the input; None for an actuator's input
        or before the input is set."""
        return self._input[0] if self._input is not None else None

    # -- joints --------------------------------------------------------------------------------
    def _point(self, entry, coordinates, name=None):
        values = _values(coordinates)
        if self.kind == PLANAR:
            if len(values) == 3:
                raise ModelError(f"{entry}: three coordinates make a point of a spherical or "
                                 "spatial linkage (Linkage(name, kind='spherical' or "
                                 "'spatial')); planar points are (x, y)", name)
            if len(values) != 2:
                raise ModelError(f"{entry}: a point is (x, y), got {coordinates!r}", name)
            return tuple(real(entry, "coordinate", v) for v in values)
        if len(values) == 2:
            raise ModelError(f"{entry}: a point of a {self.kind} linkage is (x, y, z); (x, y) "
                             "points belong to planar linkages", name)
        if len(values) != 3:
            raise ModelError(f"{entry}: a point is (x, y, z), got {coordinates!r}", name)
        point = tuple(real(entry, "coordinate", v) for v in values)
        if self.kind == SPHERICAL:
            r = math.sqrt(sum(v * v for v in point))
            if not abs(r - 1.0) <= SPHERE_TOLERANCE:
                raise ModelError(f"{entry}: a point of a spherical linkage lies on the unit "
                                 f"sphere about the origin (|p| = 1 within "
                                 f"{SPHERE_TOLERANCE:.0%}; it is projected onto it), got "
                                 f"|p| = {r:.6g}", name)
        return point

    def _add_joint(self, kind, name, coordinates):
        name = _name(f"{kind} joint", name)
        if name in self._joints:
            raise ModelError(f"joint '{name}': the name is already used", name)
        entry = f"{kind} joint '{name}'"
        if kind not in _JOINTS_OF[self.kind]:
            hint = {BALL: "spherical joints belong to spatial linkages",
                    REVOLUTE: "a spatial linkage's joints are spherical joints (spherical())",
                    PRISMATIC: "a spatial linkage's joints are spherical joints (spherical())"}
            raise ModelError(f"{entry}: a {self.kind} linkage has no {kind} joints "
                             f"({hint[kind]})", name)
        if kind == PRISMATIC and self.kind == PLANAR:
            values = _values(coordinates)
            if len(values) != 3:
                raise ModelError(f"{entry}: a line is (a, b, c) with a x + b y + c = 0, got "
                                 f"{coordinates!r}", name)
            a, b, c = (real(entry, "coordinate", v) for v in values)
            if math.hypot(a, b) == 0.0:
                raise ModelError(f"{entry}: the line's normal (a, b) is zero", name)
            coords = (a, b, c)
        elif kind == PRISMATIC:
            values = _values(coordinates)
            if len(values) not in (3, 4):
                raise ModelError(f"{entry}: a plane through the centre is its normal (a, b, c) "
                                 f"or (a, b, c, 0), got {coordinates!r}", name)
            plane = tuple(real(entry, "coordinate", v) for v in values)
            if len(plane) == 4 and plane[3] != 0.0:
                raise ModelError(f"{entry}: the plane of a spherical prismatic joint passes "
                                 f"through the centre: its fourth coordinate must be 0, got "
                                 f"{plane[3]!r}", name)
            if math.sqrt(sum(v * v for v in plane[:3])) == 0.0:
                raise ModelError(f"{entry}: the plane's normal (a, b, c) is zero", name)
            coords = plane[:3]
        else:
            coords = self._point(entry, coordinates, name)
        self._joints[name] = _Joint(name, kind, coords)

    def revolute(self, name: str, point) -> None:
        """A revolute joint at ``point``: (x, y) in a planar linkage, (x, y, z) on the unit
        sphere in a spherical one (its axis passes through the centre). It pins together
        the links that list it."""
        self._add_joint(REVOLUTE, name, point)

    def prismatic(self, name: str, line) -> None:
        """A prismatic joint. Planar: along ``line`` (a, b, c), a x + b y + c = 0 (the normal
        (a, b) need not be unit); its two links slide along it without turning relative to
        each other. Spherical: the plane through the centre with normal (a, b, c) (or
        homogeneous (a, b, c, 0)); its two links slide along the great circle, turning
        about the plane's pole."""
        self._add_joint(PRISMATIC, name, line)

    def spherical(self, name: str, point) -> None:
        """A spherical (ball) joint of a spatial linkage at ``point`` (x, y, z): it joins
        the links that list it and lets them turn freely about it."""
        self._add_joint(BALL, name, point)

    def coupler(self, name: str, point) -> None:
        """A coupler point (a marker of the one link that lists it) at ``point``: (x, y), or
        (x, y, z) in a spherical (on the unit sphere) or spatial linkage."""
        self._add_joint(COUPLER, name, point)

    @staticmethod
    def _joint_name(entry, value) -> None:
        """A joint is referred to by its name (a string): a list or an object is not one."""
        if not isinstance(value, str):
            raise ModelError(f"{entry}: a joint is named by a string, got "
                             f"{type(value).__name__} {value!r}")

    # -- links and input -------------------------------------------------------------------------
    def link(self, name: str, joints, ground: bool = False) -> None:
        """A link carrying ``joints`` (names, at least two); ``ground=True``: the fixed
        link (exactly one)."""
        name = _name("link", name)
        entry = f"link '{name}'"
        if name in self._links:
            raise ModelError(f"{entry}: the name is already used", name)
        if isinstance(joints, str):
            joints = (joints,)
        elif isinstance(joints, (list, tuple)):
            joints = tuple(joints)
        else:
            raise ModelError(f"{entry}: joints must be a list of joint names, got "
                             f"{type(joints).__name__}", name)
        for j in joints:
            self._joint_name(entry, j)
        if len(joints) < 2:
            raise ModelError(f"{entry}: a link carries at least two joints, got "
                             f"{list(joints)}", name)
        for j in joints:
            if j not in self._joints:
                raise ModelError(f"{entry}: unknown joint {j!r} (joints: "
                                 f"{', '.join(self._joints) or 'none'})", name)
        if len(set(joints)) != len(joints):
            raise ModelError(f"{entry}: a joint is listed twice", name)
        if not isinstance(ground, (bool, np.bool_)):
            raise ModelError(f"{entry}: ground must be True or False, got {ground!r}", name)
        if ground:
            if self._ground is not None:
                raise ModelError(f"{entry}: link '{self._ground}' is already the ground",
                                 name)
            self._ground = name
        self._links[name] = joints

    def input(self, joint: str, rate: float = 1.0) -> None:
        """Drive the linkage at ``joint``, a revolute or prismatic joint of the ground: its
        other link turns about it (``rate`` rad/s; about the axis through the centre and the
        joint, or the plane's pole, in a spherical linkage, right-handed) or slides along it
        (planar prismatic, m/s, in the direction (b, -a)). Spatial linkages are driven by an
        :meth:`actuator`. Replaces any earlier input."""
        if self.kind == SPATIAL:
            raise ModelError("input: a spatial linkage is driven by a linear actuator between "
                             "two of its points: actuator(first, second, rate)")
        self._joint_name("input", joint)
        if joint not in self._joints:
            raise ModelError(f"input: unknown joint {joint!r} (joints: "
                             f"{', '.join(self._joints) or 'none'})")
        if self._joints[joint].kind == COUPLER:
            raise ModelError(f"input: joint '{joint}' is a coupler point, which cannot drive",
                             joint)
        self._input = (joint, real("input", "rate", rate))
        self._actuator = None

    def actuator(self, first: str, second: str, rate: float = 1.0) -> None:
        """Drive a spherical or spatial linkage by a linear actuator between the points
        ``first`` and ``second`` (joints; one may be on the ground): its length grows at
        ``rate`` (length units per second) from its length in the description. Replaces any
        earlier input."""
        if self.kind == PLANAR:
            raise ModelError("actuator: planar linkages are driven at a joint: "
                             "input(joint, rate)")
        for j in (first, second):
            self._joint_name("actuator", j)
            if j not in self._joints:
                raise ModelError(f"actuator: unknown joint {j!r} (joints: "
                                 f"{', '.join(self._joints) or 'none'})")
            if self._joints[j].kind == PRISMATIC:
                raise ModelError(f"actuator: joint '{j}' is a plane; an actuator joins two "
                                 "points", j)
        if first == second:
            raise ModelError(f"actuator: both ends are joint '{first}'", first)
        self._actuator = ((first, second), real("actuator", "rate", rate))
        self._input = None

    @property
    def driving(self) -> tuple:
        """How the linkage is driven: ("rotation" (also a planar slide), joint, rate) or
        ("actuator", (first, second), rate). Raises ModelError when no input is given."""
        if self._actuator is not None:
            return ("actuator", *self._actuator)
        if self._input is None:
            raise ModelError(f"linkage '{self.name}': no input (input(joint, rate)"
                             f"{' or actuator(first, second, rate)' if self.kind != PLANAR else ''})")
        return ("rotation", *self._input)

    # -- compile ---------------------------------------------------------------------------------
    def holders(self) -> dict:
        """Joint name -> the links that list it; ModelError where a joint is held by the
        wrong number of links (a coupler point by one, a revolute or spherical joint by two
        or more, a prismatic joint by exactly two)."""
        holders = {j: [] for j in self._joints}
        for link, joints in self._links.items():
            for j in joints:
                holders[j].append(link)
        for j, links in holders.items():
            kind = self._joints[j].kind
            entry = f"{kind} joint '{j}'"
            if kind == COUPLER and len(links) != 1:
                raise ModelError(f"{entry}: a coupler point belongs to exactly one link, "
                                 f"listed by {len(links)}", j)
            if kind in (REVOLUTE, BALL) and len(links) < 2:
                verb = "pins" if kind == REVOLUTE else "joins"
                raise ModelError(f"{entry}: a {kind} joint {verb} two or more links, listed by "
                                 f"{len(links)}", j)
            if kind == PRISMATIC and len(links) != 2:
                raise ModelError(f"{entry}: a prismatic joint joins exactly two links, listed "
                                 f"by {len(links)}", j)
        return holders

    def checked_holders(self) -> dict:
        """Joint name -> the links holding it, after the checks every kind shares (a ground,
        an input on the ground, every joint held by the right number of links)."""
        if self._ground is None:
            raise ModelError(f"linkage '{self.name}': no ground link (link(..., ground=True))")
        kind, joint, _ = self.driving
        holders = self.holders()
        if kind == "rotation" and self._ground not in holders[joint]:
            raise ModelError(f"input: joint '{joint}' is not on the ground link "
                             f"'{self._ground}'", joint)
        if kind == "actuator" and all(self._ground in holders[j] for j in joint):
            raise ModelError(f"actuator: both ends ({', '.join(joint)}) are on the ground "
                             f"link '{self._ground}'", joint[0])
        return holders

    def build(self) -> Model:
        """The linkage as a linkdyn Model for :func:`linkdyn.kinematics`. Planar: bodies (the
        moving links), joints, the driver ``input`` and markers named after the joints.
        Spherical and spatial: a :class:`linkdyn.natural.NaturalModel` in the joints'
        coordinates. Raises ModelError for an incomplete or inconsistent description."""
        if self.kind != PLANAR:
            self.checked_holders()
            return compile_model(self)
        return compile_model(self.description())

    def set_run_defaults(self, **settings) -> None:
        """The linkage's own run settings for the ``linkdyn`` command (``t_end``, s;
        ``redundant``; ``at_limit``: "reverse" for an input that rocks between limit
        positions); see :mod:`linkdyn.elements.run_defaults`."""
        self._run_defaults = checked_run_defaults(f"linkage '{self.name}'", settings)

    @property
    def run_defaults(self) -> tuple:
        """The run settings set by :meth:`set_run_defaults`, sorted (key, value) pairs."""
        return self._run_defaults

    def save(self, path) -> None:
        """Write this linkage as a linkage file (JSON; see the module notes)."""
        save(self, path)

    def point_derivatives(self, joint: str, axis: int) -> dict | None:
        """How the points that :meth:`description` gives the bodies and the ground move with
        one coordinate (``axis`` 0 or 1) of ``joint``: {(body or "ground", point): (dx, dy)}
        per unit of the coordinate, for the points that move. A body's points are its
        joints' coordinates about its origin, the mean of them all, and a ground point is
        the joint's coordinates: both are linear in the coordinates, so these are exact.
        None for a linkage that is not planar or has a prismatic joint (its line's foot
        point and angle are not linear in the coordinates)."""
        if self.kind != PLANAR or any(j.kind == PRISMATIC for j in self._joints.values()):
            return None
        step = np.zeros(2)
        step[axis] = 1.0
        out = {}
        for link, joints in self._links.items():
            if joint not in joints:
                continue
            if link == self._ground:
                out[(GROUND, joint)] = step
                continue
            for j in joints:
                out[(link, j)] = ((1.0 if j == joint else 0.0) - 1.0 / len(joints)) * step
        return out

    def description(self):
        """A planar linkage as a :class:`linkdyn.Description` of bodies and joints (what
        :meth:`build` compiles; ``linkdyn.modelfile.save`` writes it as a model file)."""
        if self.kind != PLANAR:
            raise ModelError(f"linkage '{self.name}': a {self.kind} linkage compiles to natural "
                             "coordinates, not to planar bodies: use build()")
        holders = self.checked_holders()
        joint, rate = self._input
        g = self._ground
        b = ModelBuilder(self.name, gravity=(0.0, 0.0))
        origin, points = {}, {link: {} for link in self._links}
        for link, joints in self._links.items():
            xy = [self._joints[j].coordinates for j in joints
                  if self._joints[j].kind != PRISMATIC]
            origin[link] = np.mean(xy, axis=0) if xy else np.zeros(2)
        # Prismatic joints: a point on the line, on both of its links.
        for j in self._joints.values():
            if j.kind == PRISMATIC:
                a, bb, c = j.coordinates
                n = np.array([a, bb]) / math.hypot(a, bb)
                p = origin[holders[j.name][0]]
                foot = p - (n @ p + c / math.hypot(a, bb)) * n
                for link in holders[j.name]:
                    points[link][j.name] = foot
            else:
                for link in holders[j.name]:
                    points[link][j.name] = np.array(j.coordinates)
        for name, xy in points[g].items():
            b.add_ground_point(name, tuple(float(v) for v in xy))
        for link in self._links:
            if link == g:
                continue
            b.add_body(link, mass=1.0, inertia=1.0, position=tuple(origin[link]), angle=0.0,
                       points={k: tuple(v - origin[link]) for k, v in points[link].items()})

        def ref(link, j):
            return f"{'ground' if link == g else link}.{j}"

        for j in self._joints.values():
            links = sorted(holders[j.name], key=lambda link: link != g)   # ground first
            if j.kind == REVOLUTE:
                for k, other in enumerate(links[1:], start=1):
                    name = j.name if len(links) == 2 else f"{j.name}_{k}"
                    b.add_revolute(name, ref(other, j.name), ref(links[0], j.name))
            elif j.kind == PRISMATIC:
                a, bb, _ = j.coordinates
                b.add_prismatic(j.name, ref(links[0], j.name), ref(links[1], j.name),
                                axis=math.atan2(-a, bb))
            else:
                b.add_marker(j.name, ref(links[0], j.name))
        driven = next(link for link in holders[joint] if link != g)
        kind = self._joints[joint].kind
        if kind == REVOLUTE:
            # The joint's relative angle is the ground's minus the link's.
            name = joint if len(holders[joint]) == 2 else \
                f"{joint}_{sorted(holders[joint], key=lambda k: k != g).index(driven)}"
            b.add_angle_driver("input", name, linear(0.0, -rate))
        else:
            b.add_slide_driver("input", joint, linear(0.0, rate))
        # Its bodies' masses are placeholders: the description is kinematic.
        return replace(b.description(), kinematic=True, run_defaults=self._run_defaults)


_TYPES = {"revolute": REVOLUTE, "prismatic": PRISMATIC, "coupler": COUPLER, "spherical": BALL}


def _list(data, key, path):
    value = data[key]
    if not isinstance(value, list) or not value:
        raise ModelFileError("expected a non-empty list", path, key)
    return value


def from_dict(data, path=None) -> Linkage:
    """A :class:`Linkage` from a decoded linkage file; ModelFileError names the file and
    the field (``joints[2].coordinates``) of what is wrong."""
    check_fields(data, "top level", {"linkdyn_linkage", "name", "joints", "links", "input"},
                 {"notes", "kind", "run_defaults"}, path)
    version = data["linkdyn_linkage"]
    if isinstance(version, bool) or version != LINKAGE_FORMAT_VERSION:
        raise ModelFileError(f"unsupported linkage format version {version!r} (this linkdyn "
                             f"reads version {LINKAGE_FORMAT_VERSION})", path,
                             "linkdyn_linkage")

    def call(where, fn, *args, **kwargs):
        return as_file_error(path, where, fn, *args, **kwargs)

    kind = data.get("kind", PLANAR)
    if not isinstance(kind, str) or kind not in KINDS:
        raise ModelFileError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}", path,
                             "kind")
    g = call("name", Linkage, data["name"], kind)
    for i, j in enumerate(_list(data, "joints", path)):
        where = f"joints[{i}]"
        check_fields(j, where, {"name", "type", "coordinates"}, set(), path)
        if not isinstance(j["type"], str) or j["type"] not in _TYPES:
            raise ModelFileError(f"type must be one of {', '.join(_TYPES)}, got "
                                 f"{j['type']!r}", path, f"{where}.type")
        if not isinstance(j["coordinates"], list):
            raise ModelFileError("expected a list of numbers", path, f"{where}.coordinates")
        call(where, getattr(g, _TYPES[j["type"]]), j["name"], j["coordinates"])
    for i, link in enumerate(_list(data, "links", path)):
        where = f"links[{i}]"
        check_fields(link, where, {"name", "joints"}, {"ground"}, path)
        ground = link.get("ground", False)
        if not isinstance(ground, bool):
            raise ModelFileError("expected true or false", path, f"{where}.ground")
        if not isinstance(link["joints"], list):
            raise ModelFileError("expected a list of joint names", path, f"{where}.joints")
        call(where, g.link, link["name"], link["joints"], ground=ground)
    driving = data["input"]
    if isinstance(driving, dict) and "actuator" in driving:
        check_fields(driving, "input", {"actuator"}, {"rate"}, path)
        ends = driving["actuator"]
        if not (isinstance(ends, list) and len(ends) == 2):
            raise ModelFileError("expected the names of two joints", path, "input.actuator")
        call("input", g.actuator, *ends, driving.get("rate", 1.0))
    else:
        check_fields(driving, "input", {"joint"}, {"rate"}, path)
        call("input", g.input, driving["joint"], driving.get("rate", 1.0))
    read_run_defaults(data, path, g)
    return g


def to_dict(linkage: Linkage) -> dict:
    """The linkage file form of a :class:`Linkage` (inverse of :func:`from_dict`)."""
    names = {v: k for k, v in _TYPES.items()}
    out = {"linkdyn_linkage": LINKAGE_FORMAT_VERSION, "name": linkage.name,
           **({"kind": linkage.kind} if linkage.kind != PLANAR else {}),
           "joints": [{"name": j.name, "type": names[j.kind], "coordinates": list(j.coordinates)}
                      for j in linkage.joints.values()],
           "links": [dict(name=n, joints=list(js), **({"ground": True}
                                                        if n == linkage.ground else {}))
                     for n, js in linkage.links.items()]}
    if linkage._actuator is not None:
        out["input"] = {"actuator": list(linkage._actuator[0]), "rate": linkage._actuator[1]}
    elif linkage._input is not None:
        out["input"] = {"joint": linkage._input[0], "rate": linkage._input[1]}
    if linkage.run_defaults:
        out["run_defaults"] = dict(linkage.run_defaults)
    return out


def save(linkage: Linkage, path) -> None:
    """Write ``linkage`` as a linkage file (JSON)."""
    # (an int would be taken by open() for a file descriptor, and written to)
    Path(checked_path("save", path)).write_text(json.dumps(to_dict(linkage), indent=2) + "\n",
                                                encoding="utf-8")
