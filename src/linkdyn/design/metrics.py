"""Design metrics of linkages.

:func:`grashof` classifies a four-bar by its link lengths (Grashof's criterion: with s the
shortest and l the longest link and p, q the others, some link turns fully relative to the
others exactly when s + l <= p + q). :func:`transmission_angle` follows the angle between two
links at the joint that connects them over a computed motion: the angle at which the coupler
drives the output link, best near 90 degrees; a designer keeps it above about 40 degrees
(and below 140) over the whole cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..elements.bodies import GROUND
from ..elements.joints import RevoluteSpec
from ..errors import ArgumentError, ModelError
from ..compile.geometry import PointGeometry

__all__ = ["Grashof", "grashof", "transmission_angle"]

#: Relative tolerance of the Grashof sum comparison (change-point linkages are equal to it).
GRASHOF_TOL = 1e-12


@dataclass(frozen=True)
class Grashof:
    """A four-bar's class.

    ``kind``: "crank-rocker" (the shortest link is the input, next to the ground, and turns
    fully), "double-crank" (the shortest link is the ground: both side links turn fully),
    "double-rocker" (Grashof, the shortest link is the coupler: it turns fully, the side
    links rock), "change-point" (s + l = p + q: the linkage passes through a folded
    configuration where it can change branch) or "triple-rocker" (not Grashof: no link turns
    fully). ``grashof``: s + l < p + q. ``margin``: (p + q) - (s + l), in the lengths' unit.
    ``shortest``: which link is the shortest ("ground", "input", "coupler", "output")."""

    kind: str
    grashof: bool
    margin: float
    shortest: str


def grashof(ground: float, input: float, coupler: float, output: float) -> Grashof:
    """Classify a four-bar from its link lengths: ``ground`` (the fixed pivots' distance),
    ``input`` and ``output`` (the side links at the ground pivots) and ``coupler``."""
    lengths = {}
    for name, value in (("ground", ground), ("input", input), ("coupler", coupler),
                        ("output", output)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value > 0):
            raise ArgumentError(f"grashof: the {name} length must be a positive number, got "
                                f"{value!r}")
        lengths[name] = float(value)
    order = sorted(lengths, key=lambda k: lengths[k])
    s, l = lengths[order[0]], lengths[order[-1]]
    p, q = (lengths[k] for k in order[1:3])
    margin = (p + q) - (s + l)
    if abs(margin) <= GRASHOF_TOL * (p + q):
        return Grashof("change-point", False, 0.0, order[0])
    if margin < 0:
        return Grashof("triple-rocker", False, margin, order[0])
    kind = {"ground": "double-crank", "input": "crank-rocker", "output": "crank-rocker",
            "coupler": "double-rocker"}[order[0]]
    return Grashof(kind, True, margin, order[0])


def transmission_angle(result, joint: str) -> np.ndarray:
    """The angle (rad, in [0, pi]) between the two links that revolute ``joint`` connects, at
    every row of a kinematics or simulation result: each link's line runs from the joint to
    the link's other joint (or, for a link with no other joint, to its centre of mass). For
    a four-bar and the coupler-output joint it is the transmission angle."""
    model = result.model
    if model.space != "planar":
        raise ModelError("transmission_angle: planar models only (spherical and spatial "
                         "linkages have no single plane of transmission)")
    spec = model.joint_spec(joint)
    if not isinstance(spec, RevoluteSpec) or GROUND in (spec.first[0], spec.second[0]):
        raise ArgumentError(f"transmission_angle: joint {joint!r} must be a revolute joint "
                            "between two moving links")
    geo = PointGeometry(model, np.asarray(result.q))
    rows = np.arange(len(result.t))
    at = geo.ref(spec.first, rows)
    arms = [geo.ref(_far_point(model, spec, body), rows) - at
            for body in (spec.first[0], spec.second[0])]
    cos = np.einsum("ij,ij->i", arms[0], arms[1]) / (
        np.linalg.norm(arms[0], axis=1) * np.linalg.norm(arms[1], axis=1))
    return np.arccos(np.clip(cos, -1.0, 1.0))


def _far_point(model, spec, body):
    """The point of ``body`` its link line runs to from ``spec``'s point: the body's point at
    its other revolute joint, or its centre of mass."""
    own = spec.first if spec.first[0] == body else spec.second
    for j in model.description.joints:
        if j.name == spec.name or not isinstance(j, RevoluteSpec):
            continue
        for end in (j.first, j.second):
            if end[0] == body and end[1] != own[1]:
                return end
    return (body, "cm")
