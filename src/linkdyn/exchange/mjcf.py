"""MJCF (MuJoCo's XML) models in: the body tree and its joints as a spatial model.

What becomes what:

- ``<compiler>``: ``angle`` (degrees by default), ``eulerseq``, ``inertiafromgeom``,
  ``settotalmass``;
  ``<default>`` classes (nested, ``class`` and ``childclass``) for joints, geoms and
  inertials; ``<option gravity>`` (default ``0 0 -9.81``; ``gravity=`` overrides it).
- Each ``<body>`` is a body named after it (``body_<id>`` for an unnamed one, ``id`` its
  place in the tree as MuJoCo numbers it), its frame (``pos``, ``quat``, ``euler``,
  ``axisangle``, ``xyaxes``, ``zaxis``) the body's axes. Its mass properties come from
  ``<inertial>`` (``diaginertia`` or ``fullinertia``), or from its geoms as MuJoCo
  computes them (spheres, capsules, cylinders, boxes and ellipsoids; ``density``, default
  1000, or ``mass``; ``fromto``). A body without mass welded to a body is a frame of it
  (a marker named after it); the world body's geoms are the ground.
- A body's joints (at their ``pos``, about or along their ``axis``, in the body frame):
  ``hinge`` (revolute), ``slide`` (prismatic), ``ball`` (spherical), ``free`` (none); a
  body without joints is welded to its parent (a rigid joint). Several joints of one
  body are read where they make one joint: two hinges through one point with
  perpendicular axes (universal: the first on the parent, the second on the child), three
  hinges through one point with independent axes (ball), a hinge and a slide on one axis
  (cylindrical), two perpendicular slides and a
  hinge normal to both (planar), two perpendicular slides alone (a planar slide: no
  turn), three slides and three hinges (free). ``damping`` of a
  body's single hinge or slide is a joint damper; ``stiffness`` of a single hinge a
  torsional spring ``"<joint>/stiffness"`` at rest where its qpos is ``springref``, of a
  single slide a spring on its slide (a servo ``"<joint>/stiffness"`` of that stiffness
  and constant target ``springref``);
  ``frictionloss`` of a single hinge or slide a joint friction ``"<joint>/friction"`` of
  that Coulomb torque or force (:mod:`linkdyn.elements.joint_friction`; MuJoCo's own is a
  soft constraint of its solver, this one sticks exactly).
- ``<equality>``: ``connect`` (a ball joint at ``anchor`` in ``body1``'s frame) and
  ``weld`` (a rigid joint at the start's relative pose) as exact constraints; ``joint``
  between two single hinges with a linear ``polycoef`` (c0 c1 0 0 0, c1 a ratio of whole
  numbers) as a gear pair holding qpos1 = c0 + c1 qpos2, and where a single slide takes
  part (any c1) as a joint coupling (``add_joint_coupling``) of the same law (named after
  the equality, or ``"<joint1>/equality"``).
- A single hinge's or slide's limited ``range`` (``limited="true"``, or a range with the
  compiler's ``autolimits``) as a joint stop ``"<joint>/limits"`` when ``stops`` gives its
  contact law (:func:`load_mjcf`); MuJoCo's own limits are soft constraints of its solver,
  which these compliant stops do not copy.
- ``<actuator>``: ``motor``, ``position``, ``velocity`` and affine ``general`` actuators
  on a single hinge or slide as motors, servos and joint dampers, their controls from
  ``controls`` (:mod:`linkdyn.exchange.mjcf_actuators`, which also lists the actuators
  not read).
- A single hinge's ``armature``: a rotor turned at the joint's rate, of exactly MuJoCo's
  kinetic energy (:mod:`linkdyn.exchange.mjcf_actuators`).
- Not imported yet, and named once in a :class:`~linkdyn.ModelWarning`: other joints'
  ``armature``, ``frictionloss`` of ball or combined joints, ``range`` (limits) without ``stops`` or
  of combined joints, combined joints' ``stiffness``, the actuators above, tendons,
  sensors, contacts, fluid forces (``<option density viscosity wind>``), other
  ``<equality joint>`` and the rest.

The start is the file's reference pose (``qpos0``) at rest; ``initial={"joint": qpos or
(qpos, qvel)}`` sets a body's only hinge or slide joint as MuJoCo's qpos does (its ``ref``
is the qpos of the file's pose; a hinge's qpos in radians) and moves what lies beyond it
(:mod:`linkdyn.exchange.initial`). Errors name the file, the line, the element and the
attribute (:class:`~linkdyn.ModelFileError`).
"""

from __future__ import annotations

import math

import numpy as np

from .assemble import (Connection, Part, build as assemble_model, check_pose_options,
                       say_not_imported, scalar_coupling, stop_law)
from .geometry import axis_rotation, z_to
from .initial import initial_values, place_initial, settable
from .mjcf_actuators import actuator_extras, armature_extras
from .mjcf_inertia import geom_mass_properties
from .xml import Node, parse_file

__all__ = ["load_mjcf"]

SKIPPED_JOINT: dict = {}
SKIPPED_TOP = ("tendon", "sensor", "contact", "keyframe")


def _quat_matrix(q) -> np.ndarray:
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


class _Reader:
    """The file's compiler settings and defaults, and the attributes of its elements."""

    def __init__(self, root: Node):
        self.root = root
        compiler = root.find("compiler")
        attrib = {} if compiler is None else compiler.attrib
        self.degrees = attrib.get("angle", "degree") == "degree"
        self.autolimits = attrib.get("autolimits", "true") == "true"
        self.eulerseq = attrib.get("eulerseq", "xyz")
        self.from_geom = attrib.get("inertiafromgeom", "auto")
        self.total_mass = float(compiler.floats("settotalmass", 1)[0]) \
            if compiler is not None and "settotalmass" in attrib else -1.0
        if attrib.get("coordinate", "local") != "local":
            raise compiler.error("coordinate='global' is not read (MuJoCo dropped it too): "
                                 "give local coordinates", "coordinate")
        self.defaults: dict[str, dict] = {}
        self.skipped: dict[str, list] = {}
        top = root.find("default")
        self._read_defaults(top, "main", {})

    def _read_defaults(self, node, name, inherited):
        table = {tag: dict(attrs) for tag, attrs in inherited.items()}
        if node is not None:
            for child in node.children:
                if child.tag != "default":
                    table.setdefault(child.tag, {}).update(child.attrib)
        self.defaults[name] = table
        if node is not None:
            for child in node.findall("default"):
                self._read_defaults(child, child.required("class"), table)

    def skip(self, what, name):
        self.skipped.setdefault(what, []).append(name)

    def attrs(self, node: Node, childclass: str) -> dict:
        """The element's attributes over its class's defaults."""
        cls = node.attrib.get("class", childclass)
        if cls not in self.defaults:
            raise node.error(f"no default class {cls!r} in the file", "class")
        merged = dict(self.defaults[cls].get(node.tag, {}))
        merged.update(node.attrib)
        return merged

    def floats(self, node: Node, attrs: dict, key: str, count: int, default=None):
        if key not in attrs:
            return None if default is None else np.array(default, dtype=float)
        shadow = Node(node.tag, attrs, node.line, path=node.path)
        return shadow.floats(key, count)

    def angle(self, value: float) -> float:
        return math.radians(value) if self.degrees else value

    def frame(self, node: Node, attrs: dict) -> np.ndarray:
        """The rotation an element's orientation attributes give (identity by default)."""
        q = self.floats(node, attrs, "quat", 4)
        if q is not None:
            return _quat_matrix(q)
        aa = self.floats(node, attrs, "axisangle", 4)
        if aa is not None:
            return axis_rotation(aa[:3] / np.linalg.norm(aa[:3]), self.angle(aa[3]))
        eu = self.floats(node, attrs, "euler", 3)
        if eu is not None:
            R = np.eye(3)
            for axis, a in zip(self.eulerseq, eu):
                e = np.eye(3)["xyzXYZ".index(axis) % 3]
                Ra = axis_rotation(e, self.angle(a))
                R = R @ Ra if axis.islower() else Ra @ R    # moving axes: intrinsic
            return R
        xy = self.floats(node, attrs, "xyaxes", 6)
        if xy is not None:
            x = xy[:3] / np.linalg.norm(xy[:3])
            y = xy[3:] - (xy[3:] @ x) * x
            y /= np.linalg.norm(y)
            return np.column_stack([x, y, np.cross(x, y)])
        z = self.floats(node, attrs, "zaxis", 3)
        if z is not None:
            return z_to(z)
        return np.eye(3)


def _inertial(reader: _Reader, body: Node, cls: str):
    """(mass, centre in the body frame, inertia about it in body axes) of a body."""
    node = body.find("inertial")
    use_geoms = reader.from_geom == "true" or (reader.from_geom == "auto" and node is None)
    if not use_geoms:
        if node is None:
            return 0.0, np.zeros(3), np.zeros((3, 3))
        a = reader.attrs(node, cls)
        R = reader.frame(node, a)
        mass = float(reader.floats(node, a, "mass", 1)[0]) if "mass" in a else 0.0
        if "fullinertia" in a:
            f = reader.floats(node, a, "fullinertia", 6)
            J = np.array([[f[0], f[3], f[4]], [f[3], f[1], f[5]], [f[4], f[5], f[2]]])
        else:
            J = np.diag(reader.floats(node, a, "diaginertia", 3, (0.0, 0.0, 0.0)))
        return mass, reader.floats(node, a, "pos", 3, (0.0, 0.0, 0.0)), R @ J @ R.T
    parts = []
    for geom in body.findall("geom"):
        a = reader.attrs(geom, cls)
        props = geom_mass_properties(reader, geom, a)
        if props is not None:
            parts.append(props)
    mass = sum(m for m, _, _ in parts)
    if not mass > 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    com = sum(m * c for m, c, _ in parts) / mass
    J = np.zeros((3, 3))
    for m, c, I in parts:
        d = c - com
        J += I + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, J


class _Body:
    def __init__(self, name, node, parent, R, o, cls):
        self.name, self.node, self.parent, self.R, self.o, self.cls = name, node, parent, R, o, cls
        self.joints: list[tuple[Node, dict]] = []


def _walk(reader: _Reader, world: Node) -> list:
    """The bodies in MuJoCo's order (depth first), with their world frames at the start."""
    out, names = [], set()
    stack = [(child, "world", np.eye(3), np.zeros(3), "main") for child in
             reversed(world.findall("body"))]
    while stack:
        node, parent, Rp, op, cls = stack.pop()
        a = reader.attrs(node, cls)
        name = node.attrib.get("name") or f"body_{len(out) + 1}"
        if name in names or name == "world":
            raise node.error(f"a second body named {name!r}", "name")
        names.add(name)
        R = Rp @ reader.frame(node, a)
        o = op + Rp @ reader.floats(node, a, "pos", 3, (0.0, 0.0, 0.0))
        child_cls = node.attrib.get("childclass", cls)
        body = _Body(name, node, parent, R, o, child_cls)
        for j in node.findall("joint") + node.findall("freejoint"):
            ja = reader.attrs(j, child_cls) if j.tag == "joint" else {"type": "free"}
            body.joints.append((j, ja))
            for key, what in SKIPPED_JOINT.items():
                if key in ja and _nonzero(ja[key]) and not (key == "range"
                                                           and ja.get("limited") == "false"):
                    reader.skip(what, j.attrib.get("name", name))
        out.append(body)
        stack.extend((c, name, R, o, child_cls) for c in reversed(node.findall("body")))
    return out


def _limited(reader, a: dict) -> bool:
    """Whether a joint's range is a limit: ``limited="true"``, or a range given with
    ``limited="auto"`` (the default) under the compiler's ``autolimits`` (default true)."""
    flag = a.get("limited", "auto")
    return flag == "true" or (flag == "auto" and reader.autolimits and "range" in a)


def _limits(reader, bodies, connections, values, law) -> list:
    """A single hinge's or slide's limited range as a joint stop ``"<joint>/limits"`` with
    the contact law ``law`` (the ``stops`` option); the others are named as not imported.
    The stop counts from the start: its range less the joint's qpos there (a hinge's from
    ``initial`` or ``ref``, a slide's from ``ref``, where its slide is zero)."""
    by_name = {c.name: c for c in connections}
    out = []
    for b in bodies.values():
        for j, a in b.joints:
            if j.tag != "joint" or not _limited(reader, a):
                continue
            name = j.attrib.get("name", b.name)
            kind = a.get("type", "hinge")
            c = by_name.get(name)
            if law is None or len(b.joints) != 1 or kind not in ("hinge", "slide") or c is None:
                reader.skip("joint limits", name)
                continue
            unit = reader.angle if kind == "hinge" else float
            lo, hi = (unit(float(x)) for x in reader.floats(j, a, "range", 2, (0.0, 0.0)))
            if not lo < hi:
                raise j.error(f"a limited joint's range must have lower < upper, got "
                              f"{(lo, hi)}", "range")
            start = c.ref + (values[name][0] if kind == "hinge" and name in values else 0.0)
            out.append(("add_joint_stop", f"{name}/limits", (name,),
                        dict(lower=lo - start, upper=hi - start, **law), j))
    return out


def _nonzero(text: str) -> bool:
    try:
        return any(float(x) != 0.0 for x in text.split())
    except ValueError:
        return True


def _world_joint(reader, body: _Body, j: Node, a: dict):
    """(kind, world anchor, world axis, damping) of one joint element."""
    kind = a.get("type", "hinge")
    if kind not in ("hinge", "slide", "ball", "free"):
        raise j.error(f"joint type {kind!r} is not one of hinge, slide, ball, free", "type")
    x = body.o + body.R @ reader.floats(j, a, "pos", 3, (0.0, 0.0, 0.0))
    axis = reader.floats(j, a, "axis", 3, (0.0, 0.0, 1.0))
    if kind in ("hinge", "slide") and not np.linalg.norm(axis) > 0:
        raise j.error("the axis must not be zero", "axis")
    axis = body.R @ (axis / (np.linalg.norm(axis) or 1.0))
    damping = float(reader.floats(j, a, "damping", 1, (0.0,))[0])
    return kind, x, axis, damping


def _combined(reader, body: _Body) -> Connection | None:
    """The one joint a body's joint elements make (None: free), or ModelFileError."""
    js = [(j, *_world_joint(reader, body, j, a)) for j, a in body.joints]
    names = [j.attrib.get("name", body.name) for j, *_ in js]
    kinds = sorted(k for _, k, *_ in js)
    first = js[0][0] if js else body.node
    if not js:                                   # welded to its parent
        return Connection(body.name, "rigid", body.name, body.parent, body.o,
                                   body.o, body.node)
    if kinds == ["free"] or (kinds.count("slide") == 3 and kinds.count("hinge") == 3):
        return None
    hinges = [(x, a) for _, k, x, a, _ in js if k == "hinge"]
    slides = [a for _, k, _, a, _ in js if k == "slide"]
    name = names[0] if len(js) == 1 else "+".join(names)
    stiff = [j for j, a in body.joints if _nonzero(a.get("stiffness", "0"))]
    if len(js) == 1:
        _, kind, x, axis, damping = js[0]
        conn = {"hinge": "revolute", "slide": "prismatic", "ball": "spherical"}[kind]
        c = Connection(name, conn, body.name, body.parent, x, x, first, axis=axis,
                       damping=damping)
        _, a = body.joints[0]
        loss = float(reader.floats(first, a, "frictionloss", 1, (0.0,))[0])
        if loss < 0.0:
            raise first.error("frictionloss must be at least 0", "frictionloss")
        if loss > 0.0 and kind in ("hinge", "slide"):
            c.friction = loss                  # Coulomb friction, linkdyn.elements.joint_friction
        elif loss > 0.0:
            reader.skip("joint friction of ball joints", name)
        unit = reader.angle if kind == "hinge" else float
        c.ref = unit(float(reader.floats(first, a, "ref", 1, (0.0,))[0]))
        if stiff and kind in ("hinge", "slide"):
            c.stiffness = float(reader.floats(first, a, "stiffness", 1)[0])
            c.rest = unit(float(reader.floats(first, a, "springref", 1, (0.0,))[0])) - c.ref
        elif stiff:
            reader.skip("joint stiffness of ball joints", name)
        return c
    if stiff:
        reader.skip("joint stiffness of combined joints", name)
    same_point = len(hinges) > 1 and all(np.abs(x - hinges[0][0]).max() < 1e-12
                                         for x, _ in hinges)
    if kinds == ["hinge", "hinge"] and same_point and abs(hinges[0][1] @ hinges[1][1]) < 1e-9:
        c = Connection(name, "universal", body.name, body.parent, hinges[0][0],
                                hinges[0][0], first, axis=hinges[0][1], axis2=hinges[1][1])
    elif kinds == ["hinge"] * 3 and same_point and \
            abs(np.linalg.det(np.array([a for _, a in hinges]))) > 1e-6:
        c = Connection(name, "spherical", body.name, body.parent, hinges[0][0],
                                hinges[0][0], first)
    elif kinds == ["hinge", "slide", "slide"] and abs(slides[0] @ slides[1]) < 1e-9 and \
            max(abs(s @ hinges[0][1]) for s in slides) < 1e-9:
        c = Connection(name, "planar", body.name, body.parent, hinges[0][0],
                                hinges[0][0], first, axis=hinges[0][1])
    elif kinds == ["hinge", "slide"] and abs(abs(hinges[0][1] @ slides[0]) - 1.0) < 1e-12:
        c = Connection(name, "cylindrical", body.name, body.parent, hinges[0][0],
                       hinges[0][0], first, axis=hinges[0][1])
    elif kinds == ["slide", "slide"] and abs(slides[0] @ slides[1]) < 1e-9:
        c = Connection(name, "planar_slide", body.name, body.parent, body.o, body.o, first,
                       axis=np.cross(slides[0], slides[1]))
    else:
        raise body.node.error(
            f"the joints {', '.join(map(repr, names))} of body {body.name!r} make no joint "
            "linkdyn has (one joint a body; or two hinges through one point at right "
            "angles, three through one point, a hinge and a slide on one axis, two slides at "
            "right angles (with or without a hinge normal to both), or a free joint)")
    if any(d > 0 for *_, d in js):
        reader.skip("damping of combined joints", name)
    if any(_nonzero(a.get("frictionloss", "0")) for _, a in body.joints):
        reader.skip("joint friction of combined joints", name)
    return c


def _equalities(reader, root: Node, bodies: dict) -> list:
    out = []
    eq = root.find("equality")
    for node in ([] if eq is None else eq.children):
        a = reader.attrs(node, "main")
        if node.tag not in ("connect", "weld"):
            if node.tag != "joint":
                reader.skip(f"<equality {node.tag}>",
                            node.attrib.get("name", f"line {node.line}"))
            continue
        b1 = Node(node.tag, a, node.line, path=node.path).reference("body1", bodies, "body")
        b2 = a.get("body2", "world")
        if b2 != "world" and b2 not in bodies:
            raise node.error(f"no body named {b2!r} in the file", "body2")
        name = a.get("name") or f"{node.tag}_{b1}_{b2}"
        x = bodies[b1].o + bodies[b1].R @ reader.floats(node, a, "anchor", 3, (0.0, 0.0, 0.0))
        kind = "spherical" if node.tag == "connect" else "rigid"
        out.append(Connection(name, kind, b1, b2, x, x, node))
    return out


def _joint_equalities(reader, root: Node, connections, values) -> list:
    """``<equality joint>`` between two single hinges or slides, linear (``polycoef`` c0
    c1 0 0 0): qpos1 = c0 + c1 qpos2, a gear pair between two hinges with c1 a ratio of
    whole numbers, else a joint coupling where a slide takes part
    (:func:`linkdyn.exchange.assemble.scalar_coupling`); others are named as not
    imported."""
    eq = root.find("equality")
    scalar = {c.name: c for c in connections if c.kind in ("revolute", "prismatic")}
    out = []
    for node in ([] if eq is None else eq.findall("joint")):
        a = reader.attrs(node, "main")
        name = a.get("name") or f"{a.get('joint1')}/equality"
        c = reader.floats(node, a, "polycoef", 5, (0.0, 1.0, 0.0, 0.0, 0.0))
        j1, j2 = a.get("joint1"), a.get("joint2")
        call = None
        if j1 in scalar and j2 in scalar and j1 != j2 and not np.any(c[2:]):
            start = [scalar[j].ref + values.get(j, (0.0, 0.0))[0] for j in (j1, j2)]
            call = scalar_coupling([scalar[j].kind for j in (j1, j2)], float(c[1]),
                                   float(c[0]), *start)
        if call is None:
            reader.skip("<equality joint>", a.get("name", f"line {node.line}"))
            continue
        out.append((call[0], name, (j1, j2), call[1], node))
    return out


def load_mjcf(path: str, *, gravity=None, initial=None, floating_base=None, stops=None,
              controls=None):
    """The compiled spatial model of an MJCF file (see the module's notes); ``stops`` as for
    :func:`linkdyn.exchange.urdf.load_urdf`: a single hinge's or slide's limited range
    becomes a joint stop ``"<joint>/limits"`` with that contact law. ``controls``
    ``{actuator: number or law}`` sets the actuators' controls (MuJoCo's ``ctrl``; default
    0; :mod:`linkdyn.exchange.mjcf_actuators`)."""
    from ..describe.spatial import SpatialModelBuilder

    check_pose_options("an MJCF file gives its reference pose", gravity, floating_base)
    law = stop_law(stops)
    root = parse_file(path)
    if root.tag != "mujoco":
        raise root.error(f"an MJCF file's root element is <mujoco>, got <{root.tag}>")
    reader = _Reader(root)
    for tag in SKIPPED_TOP:
        if root.find(tag) is not None:
            reader.skip(f"<{tag}>", "file")
    world = root.find("worldbody")
    if world is None:
        raise root.error("the element <worldbody> is missing")
    bodies = {b.name: b for b in _walk(reader, world)}
    parts, owner = {}, {"world": "ground"}
    for b in bodies.values():
        mass, com, J = _inertial(reader, b.node, b.cls)
        parts[b.name] = Part(b.name, b.node, mass, J, com, b.R, b.o)
    total = sum(p.mass for p in parts.values())
    if reader.total_mass > 0 and total > 0:       # <compiler settotalmass>: scaled alike
        for p in parts.values():
            p.mass *= reader.total_mass / total
            p.inertia = p.inertia * (reader.total_mass / total)
    connections = []
    for b in bodies.values():
        c = _combined(reader, b)
        if c is not None:
            connections.append(c)
    for b in bodies.values():                     # welded chains to the ground, massless frames
        if owner.get(b.parent) == "ground" and not b.joints:
            owner[b.name] = "ground"
        elif not parts[b.name].mass > 0:
            if b.joints:
                raise b.node.error(f"body {b.name!r} has no mass (no geoms with volume, no "
                                   "<inertial>) but moves on its joints: linkdyn's bodies "
                                   "need mass")
            owner[b.name] = owner[b.parent]
        else:
            owner[b.name] = b.name
    values = initial_values(initial, settable(connections),
                            "hinge and slide joints (a body's only joint)")
    for c in connections:       # from MuJoCo's qpos (ref in the file's pose) to a turn or
        if c.name in values:    # slide from there; a spring's rest then from the start
            q, qd = values[c.name]
            values[c.name] = (q - c.ref, qd)
            if c.kind == "revolute":    # (a slide counts from the file's pose: s = qpos - ref)
                c.rest -= q - c.ref
    option = root.find("option")
    if option is not None and any(_nonzero(option.attrib.get(k, "0"))
                                  for k in ("density", "viscosity", "wind")):
        reader.skip("fluid forces (<option density, viscosity, wind>)", "option")
    g = gravity
    if g is None:
        g = (0.0, 0.0, -9.81) if option is None else tuple(
            option.floats("gravity", 3, (0.0, 0.0, -9.81)))
    extras = _limits(reader, bodies, connections, values, law)
    taken = set(bodies) | {c.name for c in connections}
    extras += actuator_extras(reader, root, connections, values, controls, taken)
    extras += armature_extras(reader, bodies, connections, values, taken, g)
    extras += _joint_equalities(reader, root, connections, values)
    equalities = _equalities(reader, root, bodies)
    place_initial(parts, owner, connections, values, closures=equalities)
    connections += equalities
    builder = SpatialModelBuilder(root.attrib.get("model") or "mjcf", gravity=g)
    frames = [n for n, o in owner.items() if n != "world" and o not in (n, "ground")]
    model = assemble_model(builder, root, parts, owner, connections, frames, extras)
    say_not_imported(path, reader.skipped)
    return model
