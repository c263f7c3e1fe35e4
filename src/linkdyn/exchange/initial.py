"""Joints' positions and rates at the start, for the formats that give every part's pose:
``load_model(path, initial={"joint": angle})`` (or ``{"joint": (angle, rate)}``) on an
SDFormat or MJCF file turns and slides the joints of the file's tree from its pose.

The parts are walked from the ground through the connections (a breadth-first tree of
their owners); a tree joint's position moves everything beyond it, and its rate sets the
velocities there, as a rigid-body chain composes them. A joint's position is that of the
first part (the child in both formats) relative to the second, about or along the joint's
axis, counted from the file's pose. A joint that closes a cycle of the joint graph has no
position of its own here and is refused in ``initial``; the cycles the tree's positions
open are closed by the consistent initial state's projection, which says what it moved.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError
from .geometry import axis_rotation

__all__ = ["initial_values", "place_initial", "settable"]


def initial_values(initial, settable: dict, sets: str) -> dict:
    """{joint: (position, rate)} from the ``initial`` argument, checked by name.
    ``settable``: each joint of the file, True where ``initial`` may set it, else what it is
    (``"a ball joint"``); ``sets``: the joints ``initial`` sets, for the message."""
    if initial is None:
        return {}
    if not isinstance(initial, dict):
        raise ArgumentTypeError(f"initial must be a dict {{joint: angle or (angle, rate)}}, "
                                f"got {type(initial).__name__}")
    out = {}
    for name, value in initial.items():
        if name not in settable:
            raise ArgumentError(f"initial: no joint named {name!r} in the file (joints: "
                                f"{', '.join(sorted(settable))})")
        if settable[name] is not True:
            raise ArgumentError(f"initial: joint {name!r} is {settable[name]}; initial sets "
                                f"{sets}")
        pair = value if isinstance(value, (tuple, list)) else (value, 0.0)
        try:
            pos, rate = (float(x) for x in pair)
        except (TypeError, ValueError):
            raise ArgumentError(f"initial[{name!r}] must be a number or (position, rate), "
                                f"got {value!r}") from None
        if not (math.isfinite(pos) and math.isfinite(rate)):
            raise ArgumentError(f"initial[{name!r}] must be finite, got {value!r}")
        out[name] = (pos, rate)
    return out


def settable(connections) -> dict:
    """:func:`initial_values`' ``settable`` for a reader's connections: True for its
    revolute and prismatic joints, else what the connection is."""
    return {c.name: c.kind in ("revolute", "prismatic") or f"a {c.kind} joint"
            for c in connections}


class _Motion:
    """A rigid motion of the file's pose: a point at x goes to R x + t and moves at
    v0 + w x there."""

    def __init__(self, R=None, t=None, w=None, v0=None):
        self.R = np.eye(3) if R is None else R
        self.t = np.zeros(3) if t is None else t
        self.w = np.zeros(3) if w is None else w
        self.v0 = np.zeros(3) if v0 is None else v0

    def point(self, x):
        return self.R @ np.asarray(x, dtype=float) + self.t

    def then(self, c, sign: float, q: float, qd: float, anchor) -> "_Motion":
        """This motion followed by connection ``c``'s own, ``sign`` q (and rate) at the
        reference point ``anchor``."""
        x, a = self.point(anchor), self.R @ c.axis
        if c.kind == "revolute":
            Rq = axis_rotation(a, sign * q)
            return _Motion(Rq @ self.R, Rq @ (self.t - x) + x, self.w + sign * qd * a,
                           self.v0 - sign * qd * np.cross(a, x))
        if c.kind == "prismatic":
            return _Motion(self.R, self.t + sign * q * a, self.w, self.v0 + sign * qd * a)
        return self


def place_initial(parts: dict, owner: dict, connections: list, values: dict,
                  closures=()) -> None:
    """Move ``parts`` (and the connections' points and axes) to the joints' positions and
    rates in ``values`` ({name: (position, rate)}, from :func:`initial_values`), in place.
    ``closures``: connections that only close loops (MJCF's equalities, Drake's ball
    constraints), never part of the tree; their points move with their parts.
    ArgumentError for a joint of ``values`` that closes a cycle."""
    if not values:
        return
    edges: dict[str, list] = {}
    for c in connections:
        a, b = owner[c.first], owner[c.second]
        if a != b:
            edges.setdefault(a, []).append((c, b))
            edges.setdefault(b, []).append((c, a))
    motion, tree, queue = {"ground": _Motion()}, set(), deque(["ground"])
    while queue:
        here = queue.popleft()
        for c, there in edges.get(here, ()):
            if there in motion:
                continue
            # the joint's position moves its first part against its second
            sign = 1.0 if owner[c.first] == there else -1.0
            anchor = c.x_second if sign > 0 else c.x_first
            q, qd = values.get(c.name, (0.0, 0.0))
            motion[there] = motion[here].then(c, sign, q, qd, anchor)
            tree.add(c.name)
            queue.append(there)
    loops = sorted(set(values) - tree)
    if loops:
        raise ArgumentError(f"initial: joint {loops[0]!r} closes a loop of the file's joints; "
                            "initial sets the joints of its tree (the loops then close by "
                            "the consistent initial state)")
    for name, p in parts.items():
        m = motion.get(owner.get(name, name))
        if m is None:
            continue
        p.R, p.o = m.R @ p.R, m.point(p.o)
        p.w, p.v = m.w.copy(), m.v0 + np.cross(m.w, p.o)
    for c in (*connections, *closures):
        first, second = motion.get(owner[c.first]), motion.get(owner[c.second])
        if first is not None:
            c.x_first = first.point(c.x_first)
            if c.axis2 is not None:
                c.axis2 = first.R @ c.axis2
        if second is not None:
            c.x_second = second.point(c.x_second)
            c.axis = second.R @ c.axis
