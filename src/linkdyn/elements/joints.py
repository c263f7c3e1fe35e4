"""Joints and drivers: revolute and prismatic joints between body points, and the drivers
that move a joint's angle or slide, or a point's coordinate, along a law (see
:mod:`linkdyn.laws`). Body and point conventions: :mod:`linkdyn.elements.bodies`."""

from __future__ import annotations

from dataclasses import dataclass

from .bodies import PointRef
from .laws import Law

__all__ = ["RevoluteSpec", "PrismaticSpec", "AngleDriverSpec", "SlideDriverSpec",
           "CoordinateDriverSpec"]


@dataclass(frozen=True)
class RevoluteSpec:
    """A revolute (pin) joint: point ``first`` coincides with point ``second``.
    The constraint rows are ``r_first - r_second = 0`` (x row, then y row)."""

    name: str
    first: PointRef
    second: PointRef


@dataclass(frozen=True)
class PrismaticSpec:
    """A prismatic (translational) joint: the second body keeps the relative orientation
    ``angle`` (rad, angle of the second body's u minus the first's) and its point ``second``
    stays on the line through point ``first`` with direction at ``axis`` (rad) from the first
    body's u. Rows: ``<name>.rotation`` (sine of the orientation error) and ``<name>.axis``
    (distance from the line times |axis|)."""

    name: str
    first: PointRef
    second: PointRef
    axis: float
    angle: float


@dataclass(frozen=True)
class AngleDriverSpec:
    """Drives the relative angle of revolute ``joint`` (second body's angle minus the
    first's; the ground's is 0) along ``law``: row sin(angle - f(t)) = 0."""

    name: str
    joint: str
    law: Law


@dataclass(frozen=True)
class SlideDriverSpec:
    """Drives the displacement along prismatic ``joint`` (of its second point from its first,
    along the axis) along ``law``."""

    name: str
    joint: str
    law: Law


@dataclass(frozen=True)
class CoordinateDriverSpec:
    """Drives the global x or y coordinate of a body point along ``law``."""

    name: str
    point: PointRef
    axis: str
    law: Law
