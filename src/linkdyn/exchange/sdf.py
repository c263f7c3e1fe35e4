"""SDFormat models in: a model's links and joints as a spatial model, cycles as they are.

SDFormat gives every link's pose (relative to the model frame, or to another link with
``relative_to``), so its joint graph may have cycles: linkdyn reads each joint as one more
exact constraint, with no spanning tree. What becomes what (versions 1.4 to 1.10):

- The file's one ``<model>`` (directly under ``<sdf>`` or in a ``<world>``; static models
  of the world, such as ground planes, are left out and named in the warning). Its
  ``<pose>`` places it in the world.
- A link is a body named after it: its ``<inertial>`` (``<pose>`` in the link frame,
  ``<mass>``, ``<inertia>``; SDFormat's defaults, mass 1 and unit moments, where absent),
  its link frame the body's axes. A link of zero mass is part of the ground, as pybullet
  reads it (the base of a fixed robot), unless a moving joint carries it (an error); a
  link fixed to the ground, or to ``world``, is part of it; a static model is ground.
- Joints: ``revolute`` and ``continuous`` (revolute), ``prismatic``, ``ball``
  (spherical), ``universal`` (``<axis>`` on the parent, ``<axis2>`` on the child) and
  ``fixed`` (rigid), at their ``<pose>`` (relative to the child link by default) with
  their axes in the joint frame (``<use_parent_model_frame>`` or ``expressed_in``: the
  model frame), ``<dynamics><damping>`` as a joint damper and ``<dynamics><friction>`` as
  a joint friction ``"<joint>/friction"`` (:mod:`linkdyn.elements.joint_friction`).
  ``world`` as a parent is the ground. Drake's ball constraints (``<drake:ball_constraint>`` in the model, its links
  in ``<drake:ball_constraint_body_A>`` and ``_body_B``, its points in ``_p_AP`` and
  ``_p_BQ`` in their link frames) are spherical joints named ``"ball_<A>_<B>"``.
- Gravity: the world's ``<gravity>`` (SDFormat's default ``0 0 -9.8`` in a world),
  linkdyn's ``(0, 0, -9.81)`` for a bare model; ``gravity=`` overrides both.
- A revolute or prismatic joint's ``<axis><limit><lower>``/``<upper>`` (bounds beyond
  1e15 are none, SDFormat's default) as a joint stop ``"<joint>/limits"`` when ``stops``
  gives its contact law (as :func:`linkdyn.exchange.urdf.load_urdf` does).
- Not imported yet, and named once in a :class:`~linkdyn.ModelWarning`: joint limits
  without ``stops``, a universal joint's friction, geometry, sensors, plugins and other
  elements.

The start is the file's poses at rest; ``initial={"joint": angle or (angle, rate)}`` turns
and slides the tree's revolute, continuous and prismatic joints from there, each counted
from the file's pose (:mod:`linkdyn.exchange.initial`). Errors name the file, the line, the
element and the attribute (:class:`~linkdyn.ModelFileError`).
"""

from __future__ import annotations

import math

import numpy as np

from .assemble import (Connection, Part, ball_name, build as assemble_model,
                       check_pose_options, drake_ball, say_not_imported, stop_law)
from .geometry import rpy_matrix
from .initial import initial_values, place_initial, settable
from .xml import Node, parse_file

__all__ = ["load_sdf"]

JOINTS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
          "ball": "spherical", "universal": "universal", "fixed": "rigid"}
WORLD_GRAVITY = (0.0, 0.0, -9.8)
MODEL_GRAVITY = (0.0, 0.0, -9.81)
KNOWN_LINK = ("pose", "inertial", "visual", "collision")
KNOWN_MODEL = ("pose", "link", "joint", "static", "drake:ball_constraint")


def _vector(node: Node, count: int) -> np.ndarray:
    """A child's text as ``count`` finite numbers."""
    try:
        values = [float(x) for x in node.text.split()]
    except ValueError:
        raise node.error(f"expected {count} numbers, got {node.text!r}") from None
    if len(values) != count or not all(math.isfinite(x) for x in values):
        raise node.error(f"expected {count} finite numbers, got {node.text!r}")
    return np.array(values)


def _pose(node: Node | None):
    """(R, p, relative_to) of a ``<pose>`` child (identity, None where absent)."""
    pose = None if node is None else node.find("pose")
    if pose is None or not pose.text:
        return np.eye(3), np.zeros(3), None if pose is None else pose.attrib.get("relative_to")
    v = _vector(pose, 6)
    if pose.attrib.get("degrees", "false").strip().lower() in ("true", "1"):
        v[3:] = np.radians(v[3:])
    return rpy_matrix(v[3:]), v[:3], pose.attrib.get("relative_to")


def _number(node: Node, tag: str, default: float) -> float:
    child = node.find(tag)
    return default if child is None else float(_vector(child, 1)[0])


def _flag(node: Node, tag: str) -> bool:
    child = node.find(tag)
    return child is not None and child.text.strip().lower() in ("1", "true")


class _Model:
    def __init__(self, model: Node):
        self.node, self.name = model, model.required("name")
        self.skipped: dict[str, list] = {}
        self.limits: list = []      # (joint, kind, its <limit>)
        self.links = {}
        for link in model.findall("link"):
            name = link.required("name")
            if name in self.links:
                raise link.error(f"a second link named {name!r}", "name")
            self.links[name] = link
            for child in link.children:
                if child.tag not in KNOWN_LINK:
                    self.skip(f"<{child.tag}>", name)
                elif child.tag in ("visual", "collision"):
                    self.skip(f"{child.tag} geometry", name)
        for child in model.children:
            if child.tag not in KNOWN_MODEL:
                self.skip(f"<{child.tag}>", child.attrib.get("name", f"line {child.line}"))
        self.joints = model.findall("joint")
        self.static = _flag(model, "static")
        R, p, _ = _pose(model)
        self.world = (R, p)
        self.frames: dict[str, tuple] = {}

    def skip(self, what, name):
        self.skipped.setdefault(what, []).append(name)

    def link_frame(self, name, seen=()):
        """(R, o) of link ``name`` in the world (poses relative to the model or a link)."""
        if name in self.frames:
            return self.frames[name]
        node = self.links[name]
        R, p, rel = _pose(node)
        if rel in (None, "", "__model__"):
            base = self.world
        elif rel in self.links and rel not in seen:
            base = self.link_frame(rel, seen + (name,))
        else:
            raise node.child("pose").error(f"relative_to {rel!r} names no link of the model "
                                           "(or a cycle of them)", "relative_to")
        self.frames[name] = (base[0] @ R, base[1] + base[0] @ p)
        return self.frames[name]

    def part(self, name) -> Part:
        node = self.links[name]
        R, o = self.link_frame(name)
        inertial = node.find("inertial")
        mass, com, J = 1.0, np.zeros(3), np.eye(3)
        if inertial is not None:
            Ri, com, _ = _pose(inertial)
            mass = _number(inertial, "mass", 1.0)
            if not mass >= 0.0:
                raise inertial.child("mass").error(f"the mass must be positive or zero, got "
                                                   f"{mass!r}")
            I = inertial.find("inertia")
            if I is not None:
                v = {k: _number(I, k, 1.0 if k in ("ixx", "iyy", "izz") else 0.0)
                     for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
                J = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]],
                              [v["ixz"], v["iyz"], v["izz"]]])
            J = Ri @ J @ Ri.T
        return Part(name, node, mass, J, com, R, o)


def _axis(model: _Model, joint: Node, tag: str, R_joint) -> np.ndarray:
    """A joint's ``tag`` axis in the world, from the joint frame (or the model frame)."""
    axis = joint.child(tag)
    xyz = axis.child("xyz")
    a = _vector(xyz, 3)
    if not np.linalg.norm(a) > 0.0:
        raise xyz.error("the axis must not be zero")
    frame = xyz.attrib.get("expressed_in")
    if _flag(axis, "use_parent_model_frame") or frame == "__model__":
        R = model.world[0]
    elif frame in (None, ""):
        R = R_joint
    elif frame in model.links:
        R = model.link_frame(frame)[0]
    else:
        raise xyz.error(f"expressed_in {frame!r} names no link of the model", "expressed_in")
    return R @ (a / np.linalg.norm(a))


def _connection(model: _Model, joint: Node) -> Connection:
    name = joint.required("name")
    kind = joint.choice("type", tuple(JOINTS), "joint type")
    ends = []
    for tag in ("parent", "child"):
        end = joint.child(tag)
        link = end.text.strip()
        if link != "world" and link not in model.links:
            raise end.error(f"no link named {link!r} in the model")
        ends.append(link)
    parent, child = ends
    if child == "world":
        raise joint.child("child").error("the world cannot be a joint's child")
    R, p, rel = _pose(joint)
    if rel in (None, ""):
        base = model.link_frame(child)
    elif rel == "__model__":
        base = model.world
    elif rel in model.links:
        base = model.link_frame(rel)
    else:
        raise joint.child("pose").error(f"relative_to {rel!r} names no link of the model",
                                        "relative_to")
    Rj, oj = base[0] @ R, base[1] + base[0] @ p
    c = Connection(name, JOINTS[kind], child, parent, oj, oj, joint)
    if kind in ("revolute", "continuous", "prismatic", "universal"):
        c.axis = _axis(model, joint, "axis", Rj)
        dyn = joint.child("axis").find("dynamics")
        c.damping = 0.0 if dyn is None else _number(dyn, "damping", 0.0)
        if joint.child("axis").find("limit") is not None:
            model.limits.append((name, kind, joint.child("axis").find("limit")))
        c.friction = 0.0 if dyn is None else _number(dyn, "friction", 0.0)
        if c.friction < 0.0:
            raise dyn.child("friction").error("friction must be at least 0 (N m or N: the "
                                              "joint's Coulomb friction)")
        if c.friction > 0.0 and kind == "universal":
            model.skip("joint friction of universal joints", name)
            c.friction = 0.0
    if kind == "universal":
        c.axis2 = _axis(model, joint, "axis2", Rj)
    return c


def _balls(model: _Model, taken: set) -> list:
    """Drake's ball constraints (``<drake:ball_constraint>`` in the model: links
    ``drake:ball_constraint_body_A`` and ``_body_B``, points ``_p_AP`` and ``_p_BQ`` in
    their link frames) as spherical connections."""
    out = []
    for node in model.node.findall("drake:ball_constraint"):
        ends = []
        for body, point in (("A", "AP"), ("B", "BQ")):
            end = node.child(f"drake:ball_constraint_body_{body}")
            link = end.text.strip()
            if link not in model.links:
                raise end.error(f"no link named {link!r} in the model")
            ends.append((link, _vector(node.child(f"drake:ball_constraint_p_{point}"), 3)))
        name = ball_name(taken, ends[0][0], ends[1][0])
        taken.add(name)
        out.append(drake_ball(node, name, ends, model.link_frame))
    return out


def _owners(model: _Model, parts, connections) -> dict:
    """Each link's owner ("world" too): "ground" (a static model, zero mass, fixed to the
    ground) or the link itself."""
    owner = {n: ("ground" if model.static or not parts[n].mass > 0 else n) for n in parts}
    owner["world"] = "ground"
    changed = True
    while changed:                 # fixed joints to the ground make ground
        changed = False
        for c in connections:
            if c.kind == "rigid" and "ground" in (owner[c.first], owner[c.second]) \
                    and owner[c.first] != owner[c.second]:
                for end in (c.first, c.second):
                    if owner[end] != "ground":
                        owner[end], changed = "ground", True
    for c in connections:      # a massless link is ground unless a joint moves it
        if not parts[c.first].mass > 0 and c.kind != "rigid" and not model.static:
            raise parts[c.first].node.error(
                f"link {c.first!r} has zero mass but moves on joint {c.name!r}: linkdyn's "
                "bodies need mass")
    return owner


def _the_model(root: Node) -> tuple[Node, tuple, list]:
    """The file's model, the gravity it states (or None), and the static models left out."""
    if root.tag != "sdf":
        raise root.error(f"an SDFormat file's root element is <sdf>, got <{root.tag}>")
    world = root.find("world")
    scope = world if world is not None else root
    models = scope.findall("model")
    moving = [m for m in models if not _flag(m, "static")]
    if len(moving) != 1:
        raise scope.error(f"linkdyn reads one moving <model> of a file, found {len(moving)}"
                          + (f" ({', '.join(m.attrib.get('name', '?') for m in moving)})"
                             if moving else ""))
    gravity = None
    if world is not None:
        g = world.find("gravity")
        if g is None and world.find("physics") is not None:
            g = world.find("physics").find("gravity")
        gravity = tuple(_vector(g, 3)) if g is not None else WORLD_GRAVITY
    return moving[0], gravity, [m.attrib.get("name", "?") for m in models if m is not moving[0]]


#: A bound at least this large is none (SDFormat's default limits are +-1e16).
NO_BOUND = 1e15


def _limits(model: _Model, values: dict, law) -> list:
    """The joints' limits as joint stops (the ``stops`` option); without it, or for a
    joint other than a revolute or prismatic one, they are named as not imported. A
    revolute joint's stop counts from the start, a prismatic one's from the file's pose."""
    out = []
    for name, kind, node in model.limits:
        bounds = [_number(node, tag, sign * math.inf) for tag, sign in
                  (("lower", -1.0), ("upper", 1.0))]
        bounds = [None if abs(b) >= NO_BOUND else b for b in bounds]
        if law is None or kind not in ("revolute", "prismatic") or bounds == [None, None]:
            if bounds != [None, None]:
                model.skip("joint limits", name)
            continue
        start = values.get(name, (0.0, 0.0))[0] if kind == "revolute" else 0.0
        out.append(("add_joint_stop", f"{name}/limits", (name,),
                    dict(lower=None if bounds[0] is None else bounds[0] - start,
                         upper=None if bounds[1] is None else bounds[1] - start, **law), node))
    return out


def load_sdf(path: str, *, gravity=None, initial=None, floating_base=None, stops=None):
    """The compiled spatial model of an SDFormat file (see the module's notes); ``stops``
    makes the joints' limits joint stops (see :func:`linkdyn.exchange.urdf.load_urdf`)."""
    from ..describe.spatial import SpatialModelBuilder

    check_pose_options("an SDFormat file gives every link's pose", gravity, floating_base)
    law = stop_law(stops)
    node, file_gravity, others = _the_model(parse_file(path))
    model = _Model(node)
    parts = {n: model.part(n) for n in model.links}
    connections = [_connection(model, j) for j in model.joints]
    owner = _owners(model, parts, connections)
    values = initial_values(initial, settable(connections),
                            "revolute, continuous and prismatic joints")
    balls = _balls(model, {c.name for c in connections})
    place_initial(parts, owner, connections, values, closures=balls)
    connections += balls
    g = gravity if gravity is not None else (file_gravity or MODEL_GRAVITY)
    builder = SpatialModelBuilder(model.name, gravity=g)
    result = assemble_model(builder, node, parts, owner, connections,
                            extras=_limits(model, values, law))
    for name in others:
        model.skip("static models", name)
    say_not_imported(path, model.skipped)
    return result
