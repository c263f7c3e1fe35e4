"""Linkages described by their geometry: joints as points and lines, links as sets of joints
(seed 001's representation), compiled into linkdyn's bodies and joints.

A planar linkage is given as its joints and links, as the seed's tables give them::

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
the line (each keeps its distance from the line, as in the seed's point-line rows). A coupler
point is a marker of the one link that lists it. The input is a revolute joint of the ground
(its other link turns about it at ``rate`` rad/s, counter-clockwise) or a prismatic joint of
the ground (its other link slides along the line at ``rate`` m/s, in the direction (b, -a)).

How it compiles. Each moving link becomes a body (frame at the mean of its joints' points,
aligned with the world at the start) carrying its joints' points; a prismatic joint gets a
point on its line (the foot of the perpendicular from the first link's frame origin) on both
of its links. The bodies carry unit mass and inertia: the description is kinematic (what the
seed's tables hold), so ``linkdyn.kinematics`` is its solver; dynamics needs the bodies'
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

import math
from dataclasses import dataclass

import numpy as np

from ._checks import real
from .description import ModelBuilder
from .errors import ModelError, ModelFileError
from .laws import linear
from .model import Model
from .modelfile import as_file_error, check_fields

__all__ = ["Linkage", "from_dict", "to_dict", "LINKAGE_FORMAT_VERSION"]

#: Version of the linkage file format (the "linkdyn_linkage" field).
LINKAGE_FORMAT_VERSION = 1

REVOLUTE, PRISMATIC, COUPLER = "revolute", "prismatic", "coupler"


@dataclass(frozen=True)
class _Joint:
    name: str
    kind: str
    coordinates: tuple      # (x, y) for points, (a, b, c) for lines


def _name(kind, name):
    if not isinstance(name, str) or not name or name.strip() != name or "." in name:
        raise ModelError(f"{kind} name must be a non-empty string without '.' or surrounding "
                         f"spaces, got {name!r}")
    return name


class Linkage:
    """A planar linkage from points and lines (see :mod:`linkdyn.geometric`)."""

    def __init__(self, name: str = "linkage"):
        self.name = _name("linkage", name)
        self._joints: dict[str, _Joint] = {}
        self._links: dict[str, tuple] = {}
        self._ground: str | None = None
        self._input: tuple | None = None

    # -- joints --------------------------------------------------------------------------------
    def _point(self, entry, coordinates):
        values = tuple(coordinates) if not isinstance(coordinates, (str, bytes)) else ()
        if len(values) == 3:
            raise ModelError(f"{entry}: three coordinates make a point of a spherical or spatial "
                             "linkage, which linkdyn.geometric does not support yet (planar "
                             "points are (x, y))")
        if len(values) != 2:
            raise ModelError(f"{entry}: a point is (x, y), got {coordinates!r}")
        return tuple(real(entry, "coordinate", v) for v in values)

    def _add_joint(self, kind, name, coordinates):
        name = _name(f"{kind} joint", name)
        if name in self._joints:
            raise ModelError(f"joint '{name}': the name is already used", name)
        entry = f"{kind} joint '{name}'"
        if kind == PRISMATIC:
            values = (tuple(coordinates) if not isinstance(coordinates, (str, bytes)) else ())
            if len(values) != 3:
                raise ModelError(f"{entry}: a line is (a, b, c) with a x + b y + c = 0, got "
                                 f"{coordinates!r}", name)
            a, b, c = (real(entry, "coordinate", v) for v in values)
            if math.hypot(a, b) == 0.0:
                raise ModelError(f"{entry}: the line's normal (a, b) is zero", name)
            coords = (a, b, c)
        else:
            coords = self._point(entry, coordinates)
        self._joints[name] = _Joint(name, kind, coords)

    def revolute(self, name: str, point) -> None:
        """A revolute joint at ``point`` (x, y), m: it pins together the links that list it."""
        self._add_joint(REVOLUTE, name, point)

    def prismatic(self, name: str, line) -> None:
        """A prismatic joint along ``line`` (a, b, c): a x + b y + c = 0 (the normal (a, b)
        need not be unit). Its two links slide along it without turning relative to each
        other."""
        self._add_joint(PRISMATIC, name, line)

    def coupler(self, name: str, point) -> None:
        """A coupler point at ``point`` (x, y), m: a marker of the one link that lists it."""
        self._add_joint(COUPLER, name, point)

    # -- links and input -------------------------------------------------------------------------
    def link(self, name: str, joints, ground: bool = False) -> None:
        """A link carrying ``joints`` (names, at least two); ``ground=True``: the fixed
        link (exactly one)."""
        name = _name("link", name)
        entry = f"link '{name}'"
        if name in self._links:
            raise ModelError(f"{entry}: the name is already used", name)
        joints = (joints,) if isinstance(joints, str) else tuple(joints)
        if len(joints) < 2:
            raise ModelError(f"{entry}: a link carries at least two joints, got "
                             f"{list(joints)}", name)
        for j in joints:
            if j not in self._joints:
                raise ModelError(f"{entry}: unknown joint {j!r} (joints: "
                                 f"{', '.join(self._joints) or 'none'})", name)
        if len(set(joints)) != len(joints):
            raise ModelError(f"{entry}: a joint is listed twice", name)
        if ground:
            if self._ground is not None:
                raise ModelError(f"{entry}: link '{self._ground}' is already the ground",
                                 name)
            self._ground = name
        self._links[name] = joints

    def input(self, joint: str, rate: float = 1.0) -> None:
        """Drive the linkage at ``joint``, a revolute or prismatic joint of the ground: its
        other link turns about it (``rate`` rad/s) or slides along it (m/s)."""
        if joint not in self._joints:
            raise ModelError(f"input: unknown joint {joint!r} (joints: "
                             f"{', '.join(self._joints) or 'none'})")
        if self._joints[joint].kind == COUPLER:
            raise ModelError(f"input: joint '{joint}' is a coupler point, which cannot drive",
                             joint)
        self._input = (joint, real("input", "rate", rate))

    # -- compile ---------------------------------------------------------------------------------
    def _holders(self):
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
            if kind == REVOLUTE and len(links) < 2:
                raise ModelError(f"{entry}: a revolute joint pins two or more links, listed by "
                                 f"{len(links)}", j)
            if kind == PRISMATIC and len(links) != 2:
                raise ModelError(f"{entry}: a prismatic joint joins exactly two links, listed "
                                 f"by {len(links)}", j)
        return holders

    def build(self) -> Model:
        """The linkage as a linkdyn Model (bodies: the moving links; joints, drivers and
        markers named after the joints). Raises ModelError for an incomplete description."""
        from .model import compile_model

        return compile_model(self.description())

    def description(self):
        """The linkage as a :class:`linkdyn.Description` of bodies and joints (what
        :meth:`build` compiles; ``linkdyn.modelfile.save`` writes it as a model file)."""
        if self._ground is None:
            raise ModelError(f"linkage '{self.name}': no ground link (link(..., ground=True))")
        if self._input is None:
            raise ModelError(f"linkage '{self.name}': no input (input(joint, rate))")
        holders = self._holders()
        joint, rate = self._input
        if self._ground not in holders[joint]:
            raise ModelError(f"input: joint '{joint}' is not on the ground link "
                             f"'{self._ground}'", joint)
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
        return b.description()


_KINDS = {"revolute": REVOLUTE, "prismatic": PRISMATIC, "coupler": COUPLER}


def _list(data, key, path):
    value = data[key]
    if not isinstance(value, list) or not value:
        raise ModelFileError("expected a non-empty list", path, key)
    return value


def from_dict(data, path=None) -> Linkage:
    """A :class:`Linkage` from a decoded linkage file; ModelFileError names the file and
    the field (``joints[2].coordinates``) of what is wrong."""
    check_fields(data, "top level", {"linkdyn_linkage", "name", "joints", "links", "input"},
            {"notes"}, path)
    version = data["linkdyn_linkage"]
    if isinstance(version, bool) or version != LINKAGE_FORMAT_VERSION:
        raise ModelFileError(f"unsupported linkage format version {version!r} (this linkdyn "
                             f"reads version {LINKAGE_FORMAT_VERSION})", path,
                             "linkdyn_linkage")

    def call(where, fn, *args, **kwargs):
        return as_file_error(path, where, fn, *args, **kwargs)

    g = call("name", Linkage, data["name"])
    for i, j in enumerate(_list(data, "joints", path)):
        where = f"joints[{i}]"
        check_fields(j, where, {"name", "type", "coordinates"}, set(), path)
        if j["type"] not in _KINDS:
            raise ModelFileError(f"type must be one of {', '.join(_KINDS)}, got "
                                 f"{j['type']!r}", path, f"{where}.type")
        if not isinstance(j["coordinates"], list):
            raise ModelFileError("expected a list of numbers", path, f"{where}.coordinates")
        call(where, getattr(g, _KINDS[j["type"]]), j["name"], j["coordinates"])
    for i, link in enumerate(_list(data, "links", path)):
        where = f"links[{i}]"
        check_fields(link, where, {"name", "joints"}, {"ground"}, path)
        ground = link.get("ground", False)
        if not isinstance(ground, bool):
            raise ModelFileError("expected true or false", path, f"{where}.ground")
        if not isinstance(link["joints"], list):
            raise ModelFileError("expected a list of joint names", path, f"{where}.joints")
        call(where, g.link, link["name"], link["joints"], ground=ground)
    check_fields(data["input"], "input", {"joint"}, {"rate"}, path)
    call("input", g.input, data["input"]["joint"], data["input"].get("rate", 1.0))
    return g


def to_dict(linkage: Linkage) -> dict:
    """The linkage file form of a :class:`Linkage` (inverse of :func:`from_dict`)."""
    names = {v: k for k, v in _KINDS.items()}
    out = {"linkdyn_linkage": LINKAGE_FORMAT_VERSION, "name": linkage.name,
           "joints": [{"name": j.name, "type": names[j.kind], "coordinates": list(j.coordinates)}
                      for j in linkage._joints.values()],
           "links": [dict(name=n, joints=list(js), **({"ground": True}
                                                        if n == linkage._ground else {}))
                     for n, js in linkage._links.items()]}
    if linkage._input is not None:
        out["input"] = {"joint": linkage._input[0], "rate": linkage._input[1]}
    return out
