"""URDF models in: links, joints and loop joints as a spatial model in natural coordinates.

A URDF file describes a tree of links joined by joints; linkdyn needs no spanning tree, so
closed loops written as ``<loop_joint>`` elements (the convention of RigidBodyDynamics.jl:
``<link1 link xyz rpy/>``, ``<link2 link xyz rpy/>``, ``<axis xyz/>``) are simply more
exact constraints. What becomes what:

- A link with mass is a body named after it: its centre of mass (``<inertial><origin>``) is
  the body's position, its link frame the body's axes (``result.body_rotation(link)``:
  link frame to world), its inertia tensor (``<inertia>``, about the centre of mass in the
  inertial frame) turned into those axes.
- The root link is the ground, as fixed-base loaders read it (a link named ``world`` is
  the ground itself); ``floating_base=True`` frees it (or, below ``world``, the links fixed
  to it). Links without mass joined by fixed joints (tool frames, sensor frames) are frames
  of the body they are fixed to: a marker named after the link keeps their origin. Links
  fixed to the root are part of the ground.
- Joints: ``revolute`` and ``continuous`` (revolute joints), ``prismatic``, ``fixed``
  (rigid joints between bodies), ``planar`` and ``floating`` (no constraint), at their
  ``<origin>`` with their ``<axis>`` (in the child link's frame); ``<dynamics damping>``
  is a joint damper ``"<joint>/damping"``, ``<dynamics friction>`` a joint friction
  ``"<joint>/friction"`` of that Coulomb torque or force, static and sliding alike
  (:mod:`linkdyn.elements.joint_friction`). Loop joints of type revolute, continuous,
  prismatic, fixed and spherical (or ball), and Drake's ball constraints
  (``<drake:ball_constraint>`` with ``<drake:ball_constraint_body_A name/>``, ``_body_B``,
  ``<drake:ball_constraint_p_AP value/>`` and ``_p_BQ``: point P of body A held at point Q
  of body B, each in its link frame), spherical joints named ``"ball_<A>_<B>"``. A joint
  named like a link is ``"<joint>/joint"`` (a linkdyn model's names are one namespace).
- ``<mimic joint multiplier offset>`` between two revolute or continuous joints, with a
  multiplier that is a ratio of whole numbers ``p / q`` (``q`` up to 1,000): a gear pair
  ``"<joint>/mimic"`` between the two (:mod:`linkdyn.elements.gears`), teeth ``(q, |p|)``, its
  row in radians of the mimicking joint and its multiplier that joint's torque; the
  offset holds where the start (the file's pose, or ``initial``) does not. Where a
  prismatic joint takes part, any multiplier: a joint coupling ``"<joint>/mimic"``
  (``add_joint_coupling``), its multiplier the mimicking joint's force or torque.
- Joint limits (``<limit lower upper>`` of revolute and prismatic joints) as joint stops
  when ``stops`` gives their contact law (see :func:`load_urdf`).
- Not imported yet, and named once in a :class:`~linkdyn.ModelWarning`: joint limits
  without ``stops``, other ``<mimic>`` couplings (of two revolute joints at another
  multiplier, or of other joints), visual and collision geometry, transmissions and other extensions.

URDF carries no gravity: ``gravity`` sets it (default ``(0, 0, -9.81)``, linkdyn's own).
``initial={"joint": angle}`` or ``{"joint": (angle, rate)}`` sets the tree's one-degree
joints; every other joint starts at zero. The loops then close at the consistent state
(:func:`linkdyn.consistent_state` says how far it moved a body). A planar loop of hinges
written in space is overconstrained (a four-bar of four revolute joints has three
dependent rows): run it with ``redundant="allow"``.

Errors name the file, the line, the element and the attribute
(:class:`~linkdyn.ModelFileError`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import ArgumentTypeError
from .assemble import say_not_imported, scalar_coupling, stop_law
from .geometry import axis_rotation, rpy_matrix
from .initial import initial_values
from .urdf_build import build
from .xml import Node, parse_file

__all__ = ["load_urdf"]

#: Joint types read, and their degrees of freedom in ``initial``.
JOINT_TYPES = {"revolute": 1, "continuous": 1, "prismatic": 1, "fixed": 0, "floating": 6,
               "planar": 3}
#: Children of <robot> read here; any other is named in the warning.
KNOWN = ("link", "joint", "loop_joint", "material", "drake:ball_constraint")
GRAVITY = (0.0, 0.0, -9.81)


def _origin(node: Node | None):
    """(R, p) of an ``<origin xyz rpy>`` child (identity where absent)."""
    origin = None if node is None else node.find("origin")
    if origin is None:
        return np.eye(3), np.zeros(3)
    return (rpy_matrix(origin.floats("rpy", 3, (0.0, 0.0, 0.0))),
            origin.floats("xyz", 3, (0.0, 0.0, 0.0)))


@dataclass
class Link:
    name: str
    node: Node
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))   # in the link frame
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))   # link axes
    parent: "Joint | None" = None


@dataclass
class Joint:
    name: str
    kind: str
    parent: str
    child: str
    R: np.ndarray
    p: np.ndarray
    axis: np.ndarray
    node: Node


def _read_link(node: Node) -> Link:
    link = Link(node.required("name"), node)
    inertial = node.find("inertial")
    if inertial is None:
        return link
    R, com = _origin(inertial)
    mass_node = inertial.child("mass")
    link.mass = mass_node.number("value")
    if not link.mass >= 0.0:
        raise mass_node.error(f"the mass must be positive or zero, got {link.mass!r}",
                              "value")
    I = inertial.find("inertia")
    if I is not None:
        v = {k: I.number(k, 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        J = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                      [v["ixz"], v["iyz"], v["izz"]]])
        link.inertia = R @ J @ R.T
    link.com = com
    return link


def _read_joint(node: Node, links: dict) -> Joint:
    name, kind = node.required("name"), node.choice("type", JOINT_TYPES, "joint type")
    ends = [node.child(tag).reference("link", links, "link") for tag in ("parent", "child")]
    R, p = _origin(node)
    axis_node = node.find("axis")
    axis = np.array([1.0, 0.0, 0.0]) if axis_node is None else axis_node.floats("xyz", 3)
    norm = float(np.linalg.norm(axis))
    if kind in ("revolute", "continuous", "prismatic", "planar") and not norm > 0.0:
        raise (axis_node or node).error("the axis must not be zero", "xyz")
    return Joint(name, kind, ends[0], ends[1], R, p, axis / norm if norm > 0 else axis, node)


@dataclass
class _Tree:
    """World poses and velocities of every link frame at the start."""
    R: dict = field(default_factory=dict)
    o: dict = field(default_factory=dict)
    w: dict = field(default_factory=dict)
    v: dict = field(default_factory=dict)   # velocity of the frame's origin

    def point_velocity(self, link, x):
        return self.v[link] + np.cross(self.w[link], x - self.o[link])


def _forward(root: str, children: dict, initial: dict) -> _Tree:
    """Poses from the root (at the world frame, at rest) through the joints, each at its
    initial position and rate (zero unless given)."""
    tree = _Tree()
    tree.R[root], tree.o[root] = np.eye(3), np.zeros(3)
    tree.w[root], tree.v[root] = np.zeros(3), np.zeros(3)
    stack = [root]
    while stack:
        parent = stack.pop()
        for j in children.get(parent, ()):
            q, qd = initial.get(j.name, (0.0, 0.0))
            Rj = tree.R[parent] @ j.R                  # the joint frame in world axes
            oj = tree.o[parent] + tree.R[parent] @ j.p
            a = Rj @ j.axis                            # the axis in world axes
            w, v = tree.w[parent], tree.point_velocity(parent, oj)
            if j.kind in ("revolute", "continuous"):
                Rc, oc, w = Rj @ axis_rotation(j.axis, q), oj, w + a * qd
            elif j.kind == "prismatic":
                Rc, oc, v = Rj, oj + a * q, v + a * qd + np.cross(w, a * q)
            else:
                Rc, oc = Rj, oj
            tree.R[j.child], tree.o[j.child], tree.w[j.child], tree.v[j.child] = Rc, oc, w, v
            stack.append(j.child)
    return tree


def _initial(initial, joints: dict) -> dict:
    """{joint: (position, rate)} from the ``initial`` argument, checked by name."""
    return initial_values(initial, {name: JOINT_TYPES[j.kind] == 1 or j.kind
                                    for name, j in joints.items()},
                          "revolute, continuous and prismatic joints")


class _Importer:
    """One file's links and joints turned into builder calls."""

    def __init__(self, root_node: Node, gravity, floating_base: bool):
        from ..describe.spatial import SpatialModelBuilder

        self.node = root_node
        self.name = root_node.attrib.get("name") or "urdf"
        self.floating_base = floating_base
        self.skipped: dict[str, list] = {}
        self.links: dict[str, Link] = {}
        self.joints: dict[str, Joint] = {}
        self.loops: list[Node] = []
        self.mimics: list = []      # (joint, its <mimic>)
        self.builder = SpatialModelBuilder(self.name, gravity=GRAVITY if gravity is None
                                           else gravity)

    def skip(self, what: str, name: str) -> None:
        self.skipped.setdefault(what, []).append(name)

    # -- reading --------------------------------------------------------------------------
    def read(self) -> None:
        for child in self.node.children:
            if child.tag == "link":
                link = _read_link(child)
                if link.name in self.links:
                    raise child.error(f"a second link named {link.name!r}", "name")
                self.links[link.name] = link
                for tag in ("visual", "collision"):
                    if child.find(tag) is not None:
                        self.skip(f"{tag} geometry", link.name)
            elif child.tag not in KNOWN:
                self.skip(f"<{child.tag}>", child.attrib.get("name", f"line {child.line}"))
        for child in self.node.findall("joint"):
            joint = _read_joint(child, self.links)
            if joint.name in self.joints:
                raise child.error(f"a second joint named {joint.name!r}", "name")
            child_link = self.links[joint.child]
            if child_link.parent is not None:
                raise child.error(
                    f"link {joint.child!r} is the child of joint {child_link.parent.name!r} "
                    "already: a URDF joint graph is a tree; close loops with <loop_joint>",
                    "child")
            child_link.parent = joint
            self.joints[joint.name] = joint
            if child.find("mimic") is not None:
                self.mimics.append((joint.name, child.find("mimic")))
            for tag, what in (("safety_controller", "safety controllers"),
                              ("calibration", "calibrations")):
                if child.find(tag) is not None:
                    self.skip(what, joint.name)
            dyn = child.find("dynamics")
            if dyn is not None and dyn.number("friction", 0.0) < 0.0:
                raise dyn.error("friction must be at least 0 (N m or N: the joint's "
                                "Coulomb friction)", "friction")
        self.loops = self.node.findall("loop_joint")
        self.balls = self.node.findall("drake:ball_constraint")

    def couplings(self, start: dict) -> list:
        """The ``<mimic>`` couplings as gear pairs (two revolute joints) or joint couplings (a
        prismatic joint in them): (builder method, name, joints, its arguments, node);
        others are named as not imported."""
        out = []
        for name, node in self.mimics:
            other = node.reference("joint", self.joints, "joint")
            k, offset = node.number("multiplier", 1.0), node.number("offset", 0.0)
            q_a, q_b = (start.get(n, (0.0, 0.0))[0] for n in (name, other))
            kinds = [{"continuous": "revolute"}.get(self.joints[n].kind, self.joints[n].kind)
                     for n in (name, other)]
            call = None if other == name else scalar_coupling(kinds, k, offset, q_a, q_b)
            if call is None:
                self.skip("<mimic> couplings", name)
                continue
            out.append((call[0], f"{name}/mimic", (name, other), call[1], node))
        return out

    def limits(self, start: dict, law) -> list:
        """The joints' ``<limit>`` ranges as joint stops with the contact law ``law`` (the
        ``stops`` option; None: the limits are named as not imported)."""
        out = []
        for name, j in self.joints.items():
            node = j.node.find("limit")
            if node is None or j.kind == "fixed":
                continue
            lower, upper = node.number("lower", 0.0), node.number("upper", 0.0)
            if law is None or j.kind not in ("revolute", "prismatic") or lower == upper:
                self.skip("joint limits", name)
                continue
            # a revolute joint's angle counts from the start, a slide from the file's pose
            shift = start.get(name, (0.0, 0.0))[0] if j.kind == "revolute" else 0.0
            out.append(("add_joint_stop", f"{name}/limits", (name,),
                        dict(lower=lower - shift, upper=upper - shift, **law), node))
        return out

    def root(self) -> str:
        roots = [n for n, link in self.links.items() if link.parent is None]
        if not roots:
            raise self.node.error("no root link: every link is some joint's child (a cycle "
                                  "of <joint> elements; close loops with <loop_joint>)")
        if len(roots) > 1:
            raise self.node.error(f"{len(roots)} links are no joint's child "
                                  f"({', '.join(roots[:5])}): a URDF model is one tree")
        return roots[0]

    # -- what becomes a body --------------------------------------------------------------
    def owners(self, root: str) -> dict:
        """Each link's owner: itself (a body), the body or ground a massless link is fixed
        to ("ground" for the root's group), or None for a free root."""
        owner = {}
        order = self._order(root)
        for name in order:
            link, joint = self.links[name], self.links[name].parent
            if joint is None:
                owner[name] = None if self.floating_base and name != "world" else "ground"
                if owner[name] is None and not link.mass > 0:
                    raise link.node.error(f"the free root link {name!r} has no mass")
                if owner[name] is None:
                    owner[name] = name
                continue
            fixed = joint.kind == "fixed" and not (self.floating_base and
                                                   joint.parent == root == "world")
            if fixed and (owner[joint.parent] == "ground" or not link.mass > 0):
                owner[name] = owner[joint.parent]
            elif link.mass > 0:
                owner[name] = name
            else:
                raise link.node.error(
                    f"link {name!r} has no mass (no <inertial>) but moves on joint "
                    f"{joint.name!r}: linkdyn's bodies need mass; give the link an <inertial>")
        return owner

    def _order(self, root: str) -> list:
        children = {}
        for j in self.joints.values():
            children.setdefault(j.parent, []).append(j.child)
        order, stack = [], [root]
        while stack:
            name = stack.pop()
            order.append(name)
            stack.extend(reversed(children.get(name, [])))
        return order


def load_urdf(path: str, *, gravity=None, initial=None, floating_base: bool = False,
              stops=None):
    """The compiled spatial model of a URDF file (see the module's notes).

    ``stops`` (a dict of :meth:`~linkdyn.SpatialModelBuilder.add_joint_stop`'s law:
    ``stiffness`` and optionally ``exponent``, ``model``, ``damping``, ``restitution``)
    makes each revolute and prismatic joint's ``<limit lower upper>`` a joint stop
    ``"<joint>/limits"`` (:mod:`linkdyn.elements.stops`); without it the limits are named
    as not imported.

    Raises ModelFileError naming the file, line, element and attribute of what cannot be
    read; ArgumentError for an ``initial`` entry that names no one-degree joint, and for a
    ``stops`` that is not such a dict."""
    if not isinstance(floating_base, bool):
        raise ArgumentTypeError(f"floating_base must be True or False, got {floating_base!r}")
    node = parse_file(path)
    if node.tag != "robot":
        raise node.error(f"a URDF file's root element is <robot>, got <{node.tag}>")
    imp = _Importer(node, gravity, floating_base)
    imp.read()
    root = imp.root()
    start = _initial(initial, imp.joints)
    children = {}
    for j in imp.joints.values():
        children.setdefault(j.parent, []).append(j)
    tree = _forward(root, children, start)
    owner = imp.owners(root)
    law = stop_law(stops)
    model = build(imp, tree, owner, imp.couplings(start) + imp.limits(start, law))
    say_not_imported(path, imp.skipped)
    return model
