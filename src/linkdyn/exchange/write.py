"""Models out: a spatial linkdyn model written as MJCF (MuJoCo's XML) or, where its joints
make a tree, as URDF, so that it can be taken to MuJoCo, Drake or pybullet.

Both writers take the model's joint graph as it is at the initial configuration. Its
spanning tree takes first the joints the format could not write as loops, then the rest
in description order, and hangs from the ground; each other joint closes a loop.

- **Bodies**: each body's frame is its principal-or-given axes at its centre of mass, as in
  linkdyn; its mass and inertia tensor go in an ``<inertial>`` at the frame's origin (URDF:
  the link's frame is at its parent joint's point, with the body's axes, and the inertial
  origin at the centre of mass). Markers are MJCF ``<site>``\\ s (URDF has none: they are
  left out, and named).
- **Tree joints** (MJCF: the child body's own joints, at the joint's point in the child's
  frame; URDF: a joint whose frame is the child link's): revolute (``hinge``; URDF
  ``continuous``), prismatic (``slide``; URDF ``prismatic``, with limits of +-1e3 m, which
  URDF requires and no stop reads without ``stops=``) and rigid (a body without joints;
  URDF ``fixed``); in MJCF also cylindrical (a hinge and a slide on one axis), universal
  (two hinges through the point, the parent's arm first), planar (two slides in the plane
  and a hinge about its normal), planar slide (two slides) and spherical (``ball``). A body
  that no joint reaches from the ground is free (MJCF ``freejoint``; URDF: refused, a URDF
  tree hangs from one root).
- **Loops** (MJCF ``<equality>``: exact in linkdyn, soft in MuJoCo's solver): a spherical
  joint is a ``connect`` at its point, a rigid joint a ``weld``, a revolute joint two
  ``connect``\\ s on its axis (``"<joint>"`` and ``"<joint>/axis"``, 0.1 of the model's
  size apart: MuJoCo has no hinge equality; read back, they are two ball joints with one
  redundant row). URDF writes loops as ``<loop_joint>`` (RigidBodyDynamics.jl's
  convention, which :func:`linkdyn.exchange.load_urdf` reads): revolute, prismatic, rigid
  and spherical. A loop of another kind raises :class:`~linkdyn.ModelError` naming it.
- The model's gravity is MJCF's ``<option gravity>``; URDF has none (give it back with
  ``load_model(path, gravity=...)``).
- A tree joint's own dynamics, where it is one hinge or slide: joint dampers (MJCF
  ``damping``; URDF ``<dynamics damping>``), torsional springs (MJCF ``stiffness`` with
  ``springref``, hinges only; their damping adds to the joint's) and Coulomb joint
  frictions without a Stribeck rise (MJCF ``frictionloss``; URDF ``<dynamics friction>``),
  as the readers read them back.
- Gear pairs between two tree hinges: MJCF ``<equality joint polycoef="c0 c1 0 0 0">``,
  URDF ``<mimic joint multiplier offset>`` (qpos1 = c0 + c1 qpos2, the positions turning
  each joint's child, as both readers take them).
- Not written, and named once in a :class:`~linkdyn.ModelWarning`: drivers, other force
  elements, contacts, other gear pairs, stops, clearances, other joint frictions and
  initial velocities.

Numbers are written with 17 significant digits, so that a model read back is the same to
the last bit of its inputs; angles in radians (``<compiler angle="radian">``).
"""

from __future__ import annotations

import math
import warnings
from collections import deque
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np

from .._checks import checked_path
from ..elements.bodies import GROUND
from ..elements.spatial import AxisJointSpec, SphericalSpec
from ..errors import ModelError, ModelWarning

__all__ = ["save_mjcf", "save_urdf", "mjcf_text", "urdf_text", "TREE_KINDS", "URDF_TREE"]

#: Joint kinds a body tree holds (MJCF; URDF holds all but the spherical).
TREE_KINDS = ("revolute", "prismatic", "cylindrical", "universal", "planar", "planar_slide",
              "rigid", "spherical")
#: Joint kinds a URDF tree holds.
URDF_TREE = ("revolute", "prismatic", "rigid")
#: Loop joints each format writes.
MJCF_LOOPS = ("spherical", "rigid", "revolute")
URDF_LOOPS = ("spherical", "rigid", "revolute", "prismatic")


def _num(x) -> str:
    return repr(float(x)) if float(x) != 0.0 else "0"


def _nums(xs) -> str:
    return " ".join(_num(x) for x in np.ravel(xs))


def _description(model_or_description):
    desc = getattr(model_or_description, "description", model_or_description)
    if not hasattr(desc, "bodies") or not all(hasattr(b, "orientation") for b in desc.bodies):
        raise ModelError("a spatial model is written as MJCF or URDF; planar models and "
                         "linkages of points, lines and planes are not")
    return desc


class _Frames:
    """Each body's frame (axes R, origin o) at the initial configuration, and its points."""

    def __init__(self, desc):
        self.R = {b.name: np.array(b.orientation, dtype=float) for b in desc.bodies}
        self.o = {b.name: np.array(b.position, dtype=float) for b in desc.bodies}
        self.R[GROUND] = np.eye(3)
        self.o[GROUND] = np.zeros(3)
        self.points = {b.name: b.local_points() for b in desc.bodies}
        self.ground = dict(desc.ground)
        pts = [np.asarray(p, dtype=float) for p in self.o.values()]
        pts += [np.asarray(p, dtype=float) for p in self.ground.values()]
        cloud = np.array(pts)
        self.size = float(max(np.ptp(cloud, axis=0).max(), 1e-3))

    def local(self, ref) -> np.ndarray:
        """A point's coordinates in its body's frame (the ground's: global)."""
        body, point = ref
        if body == GROUND:
            return np.asarray(self.ground[point], dtype=float)
        return np.asarray(self.points[body][point], dtype=float)

    def world(self, ref) -> np.ndarray:
        return self.o[ref[0]] + self.R[ref[0]] @ self.local(ref)

    def relative(self, parent, child):
        """The child's frame in the parent's: (position, rotation)."""
        Rp = self.R[parent]
        return Rp.T @ (self.o[child] - self.o[parent]), Rp.T @ self.R[child]


def _tree(desc, tree_kinds, loop_kinds):
    """The body tree: {child: (parent, joint)}, the loop joints, and the bodies no joint
    reaches (free). The tree is a spanning forest of the joint graph that takes first the
    joints that could not close a loop in the format (a Kruskal pass: those, then the
    rest, in description order), grown from the ground; each component the ground does
    not reach hangs from its first body, free."""
    root = {}

    def find(x):
        while root.setdefault(x, x) != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    kinds = {j.name: _kind(j) for j in desc.joints}
    order = sorted(desc.joints, key=lambda j: kinds[j.name] in loop_kinds)
    tree = {}
    for j in order:
        a, b = j.first[0], j.second[0]
        if a == b or kinds[j.name] not in tree_kinds or find(a) == find(b):
            continue
        root[find(a)] = find(b)
        tree[j.name] = j
    adjacent = {}
    for j in tree.values():
        adjacent.setdefault(j.first[0], []).append((j.second[0], j))
        adjacent.setdefault(j.second[0], []).append((j.first[0], j))
    parent, free = {}, []
    for start in [GROUND] + [b.name for b in desc.bodies]:
        if start in parent or (start != GROUND and find(start) == find(GROUND)):
            continue
        if start != GROUND:
            free.append(start)
            parent[start] = (GROUND, None)
        queue = deque([start])
        while queue:
            node = queue.popleft()
            for other, j in adjacent.get(node, ()):
                if other != GROUND and other not in parent and other != start:
                    parent[other] = (node, j)
                    queue.append(other)
    loops = [j for j in desc.joints if j.name not in tree]
    return parent, loops, free


def _joint_dynamics(desc, tree_joints, springs: bool) -> tuple:
    """{joint: {"damping", "stiffness", "rest", "friction"}} of the tree joints (one hinge or
    slide each) from the joint dampers, torsional springs (``springs``) and Coulomb joint
    frictions acting on them, and the names of the elements so written."""
    from ..elements.forces import JointDamperSpec, TorsionalSpringDamperSpec
    from ..elements.joint_friction import JointFrictionSpec

    out, used = {}, set()
    for f in (*desc.forces, *desc.joint_frictions):
        if f.joint not in tree_joints:
            continue
        d = out.setdefault(f.joint, {"damping": 0.0, "stiffness": 0.0, "rest": 0.0,
                                     "friction": 0.0})
        if isinstance(f, JointDamperSpec):
            d["damping"] += f.damping
        elif isinstance(f, TorsionalSpringDamperSpec) and springs and not d["stiffness"]:
            d["damping"] += f.damping
            d["stiffness"], d["rest"] = f.stiffness, f.rest_angle
        elif (isinstance(f, JointFrictionSpec) and f.static == f.coulomb
              and not f.stribeck_velocity and not d["friction"]):
            d["friction"] = f.coulomb
        else:
            continue
        used.add(f.name)
    return out, used


def _couplings(desc, parent) -> list:
    """(pair, joint1, joint2, c0, c1) of each gear pair between two tree hinges and each
    joint coupling between tree hinges and slides: qpos1 = c0 + c1 qpos2, a joint's qpos
    its child's turn or slide (linkdyn's angle turns its first body, its slide moves it)."""
    child_of = {j.name: child for child, (_, j) in parent.items() if j is not None}
    joints = {j.name: j for j in desc.joints}
    out = []
    for g in desc.gears:
        j1, j2 = joints.get(g.first), joints.get(g.second)
        if any(j is None or _kind(j) not in ("revolute", "prismatic") or j.name not in child_of
               for j in (j1, j2)):
            continue
        s1, s2 = (1.0 if child_of[j.name] == j.first[0] else -1.0 for j in (j1, j2))
        if hasattr(g, "teeth"):
            ratio, phase = g.sense * g.teeth[1] / g.teeth[0], g.phase   # q1 = ratio q2 + phase
        else:
            ratio, phase = g.ratio, g.offset
        out.append((g.name, g.first, g.second, s1 * phase, s1 * s2 * ratio))
    return out


def _not_written(desc, fmt, extra=(), written=()) -> None:
    left = list(extra)
    for what, items in (("driver", desc.drivers), ("force element", desc.forces),
                        ("contact", desc.contacts), ("gear pair", desc.gears),
                        ("joint stop", desc.stops), ("joint with clearance", desc.clearances),
                        ("joint friction", desc.joint_frictions)):
        left += [f"{what} {x.name!r}" for x in items if x.name not in written]
    moving = [b.name for b in desc.bodies if any(b.velocity) or any(b.angular_velocity)]
    if moving:
        left.append("the initial velocities of " + ", ".join(moving))
    if left:
        warnings.warn(f"model {desc.name!r} written as {fmt} without: " + "; ".join(left),
                      ModelWarning, stacklevel=3)


def _kind(j) -> str:
    return "spherical" if isinstance(j, SphericalSpec) else j.kind


def _child_side(j, child):
    """(child's point, parent's point, axis in the child's frame, axis in the parent's) of
    joint j, whose child is ``child``."""
    if j.first[0] == child:
        return j.first, j.second, getattr(j, "axis_first", None), getattr(j, "axis_second",
                                                                           None)
    return j.second, j.first, getattr(j, "axis_second", None), getattr(j, "axis_first", None)


def _in_plane(axis) -> tuple:
    """Two unit vectors spanning the plane normal to ``axis``."""
    n = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    a = np.cross(n, helper)
    a /= np.linalg.norm(a)
    return a, np.cross(n, a)


def _mjcf_dynamics(j, child, dynamics) -> str:
    """A single hinge's or slide's damping, stiffness (springref: qpos, which turns the
    child; linkdyn's angle turns the joint's first body) and frictionloss attributes."""
    d = dynamics.get(j.name)
    if d is None:
        return ""
    out = ""
    if d["damping"]:
        out += f' damping="{_num(d["damping"])}"'
    if d["stiffness"]:
        ref = d["rest"] if j.first[0] == child else -d["rest"]
        out += f' stiffness="{_num(d["stiffness"])}" springref="{_num(ref)}"'
    if d["friction"]:
        out += f' frictionloss="{_num(d["friction"])}"'
    return out


def _mjcf_joints(frames, j, child, parent, dynamics=None) -> list:
    """The child body's joint elements for tree joint j."""
    mine, theirs, axis_c, axis_p = _child_side(j, child)
    pos = _nums(frames.local(mine))
    kind = _kind(j)
    name = j.name
    extra = _mjcf_dynamics(j, child, dynamics or {})
    hinge = lambda n, ax: f'<joint name={quoteattr(n)} type="hinge" pos="{pos}" ' \
                          f'axis="{_nums(ax)}"{extra if n == name else ""}/>'
    slide = lambda n, ax: f'<joint name={quoteattr(n)} type="slide" pos="{pos}" ' \
                          f'axis="{_nums(ax)}"{extra if n == name else ""}/>'
    if kind == "rigid":
        return []
    if kind == "spherical":
        return [f'<joint name={quoteattr(name)} type="ball" pos="{pos}"/>']
    if kind == "revolute":
        return [hinge(name, axis_c)]
    if kind == "prismatic":
        return [slide(name, axis_c)]
    if kind == "cylindrical":
        return [hinge(name, axis_c), slide(f"{name}/slide", axis_c)]
    if kind == "universal":
        # the parent's arm, seen in the child's frame at the start, turns first
        Rpc = frames.R[child].T @ frames.R[parent] if parent != GROUND else frames.R[child].T
        return [hinge(name, Rpc @ np.asarray(axis_p)), hinge(f"{name}/2", axis_c)]
    a, b = _in_plane(axis_c)
    out = [slide(f"{name}/x", a), slide(f"{name}/y", b)]
    if kind == "planar":
        out.append(hinge(f"{name}/turn", axis_c))
    return out


def _mjcf_loop(frames, j) -> list:
    kind = _kind(j)
    b1, b2 = j.first[0], j.second[0]
    if b1 == GROUND:
        b1, b2 = b2, b1
        anchor_ref = j.second
    else:
        anchor_ref = j.first
    body2 = "world" if b2 == GROUND else b2
    anchor = frames.local(anchor_ref)
    if kind == "spherical":
        return [f'<connect name={quoteattr(j.name)} body1={quoteattr(b1)} '
                f'body2={quoteattr(body2)} anchor="{_nums(anchor)}"/>']
    if kind == "rigid":
        return [f'<weld name={quoteattr(j.name)} body1={quoteattr(b1)} '
                f'body2={quoteattr(body2)}/>']
    if kind == "revolute":
        axis = np.asarray(j.axis_first if anchor_ref is j.first else j.axis_second, float)
        axis = axis / np.linalg.norm(axis)
        second = anchor + 0.1 * frames.size * axis
        return [f'<connect name={quoteattr(n)} body1={quoteattr(b1)} '
                f'body2={quoteattr(body2)} anchor="{_nums(p)}"/>'
                for n, p in ((j.name, anchor), (f"{j.name}/axis", second))]
    raise ModelError(f"joint {j.name!r}: a {kind} joint that closes a loop cannot be written "
                     f"as MJCF (its equalities are {', '.join(MJCF_LOOPS)})")


def _inertial(body) -> str:
    J = np.array(body.inertia, dtype=float)
    return (f'<inertial pos="0 0 0" mass="{_num(body.mass)}" fullinertia="'
            f'{_nums([J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]])}"/>')


def mjcf_text(model) -> str:
    """The MJCF document of a spatial model (see the module's notes)."""
    desc = _description(model)
    frames = _Frames(desc)
    parent, loops, free = _tree(desc, TREE_KINDS, MJCF_LOOPS)
    single = {j.name for _, j in parent.values()
              if j is not None and _kind(j) in ("revolute", "prismatic")}
    dynamics, written = _joint_dynamics(desc, single, springs=True)
    children = {}
    for child, (p, j) in parent.items():
        children.setdefault(p, []).append((child, j))
    by_name = {b.name: b for b in desc.bodies}
    sites = {}
    for m in desc.markers:
        sites.setdefault(m.body, []).append(m)
    equalities = [line for j in loops for line in _mjcf_loop(frames, j)]
    couplings = _couplings(desc, parent)
    equalities += [f'<joint name={quoteattr(n)} joint1={quoteattr(a)} joint2={quoteattr(b)} '
                   f'polycoef="{_num(c0)} {_num(c1)} 0 0 0"/>' for n, a, b, c0, c1 in couplings]
    out = [f"<mujoco model={quoteattr(desc.name)}>",
           '  <compiler angle="radian" autolimits="false"/>',
           f'  <option gravity="{_nums(desc.gravity)}"/>', "  <worldbody>"]

    def body(name, depth):
        pad = "  " * depth
        p, j = parent[name]
        pos, R = frames.relative(p, name)
        out.append(f'{pad}<body name={quoteattr(name)} pos="{_nums(pos)}" '
                   f'xyaxes="{_nums(np.concatenate([R[:, 0], R[:, 1]]))}">')
        out.append(f"{pad}  {_inertial(by_name[name])}")
        if j is None:
            out.append(f'{pad}  <freejoint name={quoteattr(name + "/free")}/>')
        else:
            out.extend(f"{pad}  {line}" for line in _mjcf_joints(frames, j, name, p,
                                                                   dynamics))
        for m in sites.get(name, ()):
            out.append(f'{pad}  <site name={quoteattr(m.name)} '
                       f'pos="{_nums(frames.local((name, m.point)))}"/>')
        for child, _ in children.get(name, ()):
            body(child, depth + 1)
        out.append(f"{pad}</body>")

    for child, _ in children.get(GROUND, ()):
        body(child, 2)
    out.append("  </worldbody>")
    if equalities:
        out.extend(["  <equality>"] + [f"    {line}" for line in equalities] + ["  </equality>"])
    out.append("</mujoco>")
    _not_written(desc, "MJCF", written=written | {c[0] for c in couplings})
    return "\n".join(out) + "\n"


def save_mjcf(model, path) -> Path:
    """Write spatial ``model`` (a Model or its description) as an MJCF file at ``path``;
    returns the path. See :mod:`linkdyn.exchange.write`."""
    path = Path(checked_path("save_mjcf", path))
    text = mjcf_text(model)
    path.write_text(text, encoding="utf-8")
    return path


def _urdf_tree_order(parent):
    """The bodies of the tree, each after its parent."""
    order, done = [], {GROUND}
    pending = list(parent)
    while pending:
        rest = [c for c in pending if parent[c][0] not in done]
        for c in pending:
            if parent[c][0] in done and c not in done:
                order.append(c)
                done.add(c)
        if len(rest) == len(pending):
            break
        pending = [c for c in rest if c not in done]
    return order


def urdf_text(model) -> str:
    """The URDF document of a spatial model whose joints make a tree from the ground of
    revolute, prismatic and rigid joints (loops: ``<loop_joint>``); see the module's
    notes."""
    from scipy.spatial.transform import Rotation

    desc = _description(model)
    frames = _Frames(desc)
    parent, loops, free = _tree(desc, URDF_TREE, URDF_LOOPS)
    # a joint the tree cannot take that would hold a body, or a loop URDF has no tag for
    loose = {name for name in free}
    bad = [j for j in loops if _kind(j) not in URDF_LOOPS
           or (free and {j.first[0], j.second[0]} & loose)]
    if bad:
        raise ModelError(f"joint {bad[0].name!r}: a {_kind(bad[0])} joint cannot be written "
                         "as URDF (its tree joints are revolute, prismatic and fixed, its loop "
                         f"joints {', '.join(URDF_LOOPS)}); write MJCF")
    if free:
        raise ModelError(f"model {desc.name!r}: bodies {', '.join(map(repr, free))} reach the "
                         "ground through no joint; a URDF tree hangs from the ground (write "
                         "MJCF, which frees them)")
    # each link's frame: the body's axes at its parent joint's point (the ground: world)
    origin, axes = {GROUND: np.zeros(3)}, {GROUND: np.eye(3)}
    order = _urdf_tree_order(parent)
    for child in order:
        mine = _child_side(parent[child][1], child)[0]
        origin[child], axes[child] = frames.world(mine), frames.R[child]
    link = lambda body: "world" if body == GROUND else body
    in_link = lambda body, x: axes[body].T @ (np.asarray(x) - origin[body])
    by_name = {b.name: b for b in desc.bodies}
    out = [f"<robot name={quoteattr(desc.name)}>", '  <link name="world"/>']
    for name in order:
        body = by_name[name]
        J = np.array(body.inertia, dtype=float)
        com = in_link(name, frames.o[name])
        out += [f"  <link name={quoteattr(name)}>", "    <inertial>",
                f'      <origin xyz="{_nums(com)}" rpy="0 0 0"/>',
                f'      <mass value="{_num(body.mass)}"/>',
                f'      <inertia ixx="{_num(J[0, 0])}" ixy="{_num(J[0, 1])}" '
                f'ixz="{_num(J[0, 2])}" iyy="{_num(J[1, 1])}" iyz="{_num(J[1, 2])}" '
                f'izz="{_num(J[2, 2])}"/>', "    </inertial>", "  </link>"]
    kinds = {"revolute": "continuous", "prismatic": "prismatic", "rigid": "fixed"}
    dynamics, written = _joint_dynamics(
        desc, {parent[c][1].name for c in order if _kind(parent[c][1]) != "rigid"},
        springs=False)
    mimics = {c[1]: c for c in _couplings(desc, parent)}
    for child in order:
        p, j = parent[child]
        _, _, axis_c, _ = _child_side(j, child)
        xyz = in_link(p, origin[child])
        rpy = Rotation.from_matrix(axes[p].T @ axes[child]).as_euler("xyz")
        out += [f"  <joint name={quoteattr(j.name)} type=\"{kinds[_kind(j)]}\">",
                f"    <parent link={quoteattr(link(p))}/>",
                f"    <child link={quoteattr(child)}/>",
                f'    <origin xyz="{_nums(xyz)}" rpy="{_nums(rpy)}"/>']
        if _kind(j) != "rigid":
            out.append(f'    <axis xyz="{_nums(axis_c)}"/>')
        if _kind(j) == "prismatic":
            out.append('    <limit lower="-1000" upper="1000" effort="0" velocity="0"/>')
        d = dynamics.get(j.name)
        if d is not None:
            out.append(f'    <dynamics damping="{_num(d["damping"])}" '
                       f'friction="{_num(d["friction"])}"/>')
        if j.name in mimics:
            _, _, other, c0, c1 = mimics[j.name]
            out.append(f'    <mimic joint={quoteattr(other)} multiplier="{_num(c1)}" '
                       f'offset="{_num(c0)}"/>')
        out.append("  </joint>")
    for j in loops:
        kind = {"revolute": "revolute", "prismatic": "prismatic", "rigid": "fixed",
                "spherical": "spherical"}[_kind(j)]
        ends = [(j.first[0], frames.world(j.first)), (j.second[0], frames.world(j.second))]
        out.append(f"  <loop_joint name={quoteattr(j.name)} type=\"{kind}\">")
        for tag, (body, x) in zip(("link1", "link2"), ends):
            out.append(f'    <{tag} link={quoteattr(link(body))} '
                       f'xyz="{_nums(in_link(body, x))}" rpy="0 0 0"/>')
        if kind in ("revolute", "prismatic"):
            world_axis = frames.R[j.first[0]] @ np.asarray(j.axis_first, dtype=float)
            out.append(f'    <axis xyz="{_nums(axes[j.first[0]].T @ world_axis)}"/>')
        out.append("  </loop_joint>")
    out.append("</robot>")
    markers = [f"marker {m.name!r}" for m in desc.markers]
    _not_written(desc, "URDF", markers + (["its gravity (load it with gravity=)"]
                                          if any(desc.gravity) else []),
                 written | {c[0] for c in mimics.values()})
    return "\n".join(out) + "\n"


def save_urdf(model, path) -> Path:
    """Write spatial ``model`` (a Model or its description), a tree from the ground with
    its loops, as a URDF file at ``path``; returns the path. See
    :mod:`linkdyn.exchange.write`."""
    path = Path(checked_path("save_urdf", path))
    text = urdf_text(model)
    path.write_text(text, encoding="utf-8")
    return path
