"""A read URDF file (:mod:`.urdf`) as the parts and connections of :mod:`.assemble`: its
links at their start poses, its joints and its loop joints with their world anchors and
axes."""

from __future__ import annotations

import numpy as np

from .assemble import Connection, Part, ball_name, build as assemble_model, drake_ball
from .geometry import rpy_matrix

__all__ = ["build"]

#: Loop joint types read, and the connection each is.
LOOP_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
              "fixed": "rigid", "spherical": "spherical", "ball": "spherical"}
#: Tree joint types and their connections (floating and the rest: none).
JOINT_KINDS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
               "planar": "planar", "fixed": "rigid"}


def _parts(imp, tree) -> dict:
    return {n: Part(n, link.node, link.mass, link.inertia, link.com, tree.R[n],
                             tree.o[n], tree.v[n], tree.w[n])
            for n, link in imp.links.items()}


def _joints(imp, tree) -> list:
    out = []
    for j in imp.joints.values():
        if j.kind not in JOINT_KINDS:
            continue
        oj = tree.o[j.parent] + tree.R[j.parent] @ j.p
        dyn = j.node.find("dynamics")
        out.append(Connection(
            j.name, JOINT_KINDS[j.kind], j.child, j.parent, tree.o[j.child], oj, j.node,
            axis=tree.R[j.parent] @ j.R @ j.axis,
            damping=0.0 if dyn is None else dyn.number("damping", 0.0),
            friction=0.0 if dyn is None else dyn.number("friction", 0.0)))
    return out


def _loops(imp, tree, owner) -> list:
    out = []
    for node in imp.loops:
        name = node.required("name")
        kind = LOOP_TYPES[node.choice("type", tuple(LOOP_TYPES), "loop joint type")]
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
        out.append(Connection(name, kind, l2, l1, x2, x1, node,
                                       axis=R1 @ (axis / np.linalg.norm(axis))))
    return out


def _balls(imp, tree, taken: set) -> list:
    """Drake's ball constraints (``<drake:ball_constraint>``: links in the ``name`` of
    ``drake:ball_constraint_body_A`` and ``_body_B``, points in the ``value`` of ``_p_AP``
    and ``_p_BQ``, in their link frames) as spherical connections."""
    out = []
    for node in imp.balls:
        ends = []
        for body, point in (("A", "AP"), ("B", "BQ")):
            link = node.child(f"drake:ball_constraint_body_{body}").reference(
                "name", imp.links, "link")
            ends.append((link, node.child(f"drake:ball_constraint_p_{point}").floats(
                "value", 3)))
        name = ball_name(taken, ends[0][0], ends[1][0])
        taken.add(name)
        out.append(drake_ball(node, name, ends, lambda link: (tree.R[link], tree.o[link])))
    return out


def build(imp, tree, owner, extras=()):
    """The compiled model of the importer's links and joints at the start ``tree``, with
    the mimics' gear pairs and the joints' stops ``extras``
    (:func:`linkdyn.exchange.assemble.build`)."""
    parts = _parts(imp, tree)
    connections = _joints(imp, tree) + _loops(imp, tree, owner)
    connections += _balls(imp, tree, {c.name for c in connections})
    # massless frames fixed to a body (those fixed to the ground stay where they are)
    frames = [n for n, o in owner.items() if o not in (n, None, "ground")]
    return assemble_model(imp.builder, imp.node, parts, owner, connections, frames, extras)
