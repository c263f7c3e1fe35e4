"""The builder calls of a read URDF file (:mod:`.urdf`): the points every joint and loop
joint needs on its two bodies (or on the ground), the bodies with their poses and
velocities at the start, the joints, the dampers and the markers of massless frames."""

from __future__ import annotations

import numpy as np

from .geometry import element_errors, rpy_matrix

__all__ = ["build"]

#: Loop joint types read.
LOOP_TYPES = ("revolute", "continuous", "prismatic", "fixed", "spherical", "ball")


def joint_name(imp, name: str) -> str:
    """A joint's name in the model: its own, or ``"<name>/joint"`` where a link has that
    name (URDF keeps links and joints apart; a linkdyn model's names are one namespace)."""
    return f"{name}/joint" if name in imp.links else name


def _point_name(name: str) -> str:
    """A joint's name as a point's (points are referenced as "body.point")."""
    return name.replace(".", "_")


class _Points:
    """Points on the bodies and the ground, in each body's axes about its centre of mass."""

    def __init__(self, imp, tree, owner):
        self.imp, self.tree, self.owner = imp, tree, owner
        self.body: dict[str, dict] = {n: {} for n, o in owner.items() if o == n}
        self.ground: dict[str, np.ndarray] = {}

    def attach(self, link: str, x, name: str):
        """The reference of a point named ``name`` at world position ``x`` on the body (or
        the ground) that link ``link`` belongs to."""
        own, name = self.owner[link], _point_name(name)
        if own == "ground":
            self.ground[name] = np.asarray(x, dtype=float)
            return ("ground", name)
        R, o, com = self.tree.R[own], self.tree.o[own], self.imp.links[own].com
        self.body[own][name] = R.T @ (np.asarray(x) - o) - com
        return (own, name)


def _joint_points(imp, tree, owner, pts: _Points) -> list:
    """(joint, child reference, parent reference, world axis) of each joint between two
    owners (a fixed joint inside one owner is gone)."""
    out = []
    for j in imp.joints.values():
        if owner[j.child] == owner[j.parent] or j.kind == "floating":
            continue
        oj = tree.o[j.parent] + tree.R[j.parent] @ j.p
        axis = tree.R[j.parent] @ j.R @ j.axis
        child = pts.attach(j.child, tree.o[j.child], j.name)
        parent = pts.attach(j.parent, oj, j.name)
        out.append((j, child, parent, axis))
    return out


def _loop_points(imp, tree, owner, pts: _Points) -> list:
    """(node, type, reference on link2, reference on link1, world axis) of each loop."""
    out = []
    for node in imp.loops:
        name, kind = node.required("name"), node.choice("type", LOOP_TYPES, "loop joint type")
        ends = []
        for tag in ("link1", "link2"):
            end = node.child(tag)
            link = end.reference("link", imp.links, "link")
            R = tree.R[link] @ rpy_matrix(end.floats("rpy", 3, (0.0, 0.0, 0.0)))
            x = tree.o[link] + tree.R[link] @ end.floats("xyz", 3, (0.0, 0.0, 0.0))
            ends.append((link, R, x))
        (l1, R1, x1), (l2, _, x2) = ends
        if owner[l1] == owner[l2]:
            raise node.error(f"loop joint {name!r} joins links {l1!r} and {l2!r}, which are "
                             "one rigid body here")
        axis_node = node.find("axis")
        axis = np.array([1.0, 0.0, 0.0]) if axis_node is None else axis_node.floats("xyz", 3)
        if not np.linalg.norm(axis) > 0.0:
            raise (axis_node or node).error("the axis must not be zero", "xyz")
        first = pts.attach(l2, x2, f"{name}_2" if owner[l2] == "ground" else name)
        second = pts.attach(l1, x1, f"{name}_1" if owner[l1] == "ground" else name)
        out.append((node, kind, first, second, R1 @ (axis / np.linalg.norm(axis))))
    return out


def _add_bodies(imp, tree, owner, pts: _Points) -> None:
    b = imp.builder
    for name, x in pts.ground.items():
        with element_errors(imp.node):
            b.add_ground_point(name, tuple(x))
    for name, points in pts.body.items():
        link = imp.links[name]
        R = tree.R[name]
        com = tree.o[name] + R @ link.com
        with element_errors(link.node):
            b.add_body(name, mass=link.mass, inertia=link.inertia,
                       points={k: tuple(v) for k, v in points.items()}, position=tuple(com),
                       orientation=R, velocity=tuple(tree.point_velocity(name, com)),
                       angular_velocity=tuple(tree.w[name]))


def _add_joint(imp, b, j, child, parent, axis) -> None:
    name = joint_name(imp, j.name)
    if j.kind in ("revolute", "continuous"):
        b.add_revolute(name, child, parent, axis=tuple(axis))
    elif j.kind == "prismatic":
        b.add_prismatic(name, child, parent, axis=tuple(axis))
    elif j.kind == "planar":
        b.add_planar(name, child, parent, normal=tuple(axis))
    else:   # fixed, between two bodies
        b.add_rigid(name, child, parent)
    dyn = j.node.find("dynamics")
    damping = 0.0 if dyn is None else dyn.number("damping", 0.0)
    if damping > 0.0 and j.kind in ("revolute", "continuous", "prismatic"):
        b.add_joint_damper(f"{name}/damping", name, damping)


def build(imp, tree, owner):
    """The compiled model of the importer's links and joints at the start ``tree``."""
    pts = _Points(imp, tree, owner)
    joints = _joint_points(imp, tree, owner, pts)
    loops = _loop_points(imp, tree, owner, pts)
    # massless frames fixed to a body (those fixed to the ground stay where they are)
    frames = [n for n, o in owner.items() if o not in (n, None, "ground")]
    marks = {n: pts.attach(n, tree.o[n], f"{n}_origin") for n in frames}
    _add_bodies(imp, tree, owner, pts)
    b = imp.builder
    for j, child, parent, axis in joints:
        with element_errors(j.node):
            _add_joint(imp, b, j, child, parent, axis)
    for node, kind, first, second, axis in loops:
        name = joint_name(imp, node.attrib["name"])
        with element_errors(node):
            if kind in ("revolute", "continuous"):
                b.add_revolute(name, first, second, axis=tuple(axis))
            elif kind == "prismatic":
                b.add_prismatic(name, first, second, axis=tuple(axis))
            elif kind == "fixed":
                b.add_rigid(name, first, second)
            else:
                b.add_spherical(name, first, second)
    for name, ref in marks.items():
        with element_errors(imp.links[name].node):
            b.add_marker(name, ref)
    with element_errors(imp.node):
        return b.build()
