"""Bodies and markers: the records of planar rigid bodies (general bodies and bars), the
ground's name, the markers reported in results, and the checks the builder applies to their
fields.

Conventions (SI units throughout)
---------------------------------
* A planar body is described by its centre of mass ``position = (x, y)`` and a body-fixed unit
  vector ``u = (ux, uy)``, the body's local xi axis. ``perp(u) = (-uy, ux)`` is its local eta
  axis, so angles are counter-clockwise and ``u = (cos angle, sin angle)``.
* A body-fixed point with local coordinates ``(xi, eta)`` (relative to the centre of mass) sits
  at ``r + xi * u + eta * perp(u)``. Every body has the point ``cm = (0, 0)``.
* A bar of length ``L`` has its centre of mass at mid-length and the points ``a = (-L/2, 0)`` and
  ``b = (L/2, 0)``: ``u`` points from ``a`` to ``b``.
* ``inertia`` is the polar moment of inertia about the centre of mass (kg m^2); a bar's default
  is ``m L^2 / 12``.
* Initial values (``position``, ``u``, ``velocity``, ``ud``) are guesses: they are projected onto
  the constraints by :func:`linkdyn.consistent_state`, which keeps bodies marked ``hold`` fixed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable

from .._checks import real
from ..errors import ModelError

__all__ = ["GROUND", "BodySpec", "BarSpec", "MarkerSpec", "Vec2", "PointRef"]

#: Name of the ground (the fixed frame); reserved, no body may take it.
GROUND = "ground"

Vec2 = tuple[float, float]
PointRef = tuple[str, str]  # (body or "ground", point name)


@dataclass(frozen=True)
class BodySpec:
    """A general planar rigid body."""

    name: str
    mass: float
    inertia: float
    points: tuple[tuple[str, Vec2], ...] = ()
    position: Vec2 = (0.0, 0.0)
    u: Vec2 = (1.0, 0.0)
    velocity: Vec2 = (0.0, 0.0)
    ud: Vec2 = (0.0, 0.0)
    hold: bool = False

    def resolved_mass(self) -> float:
        return self.mass

    def resolved_inertia(self) -> float:
        return self.inertia

    def local_points(self) -> dict[str, Vec2]:
        return {"cm": (0.0, 0.0), **dict(self.points)}


@dataclass(frozen=True)
class BarSpec:
    """A slender uniform bar with ends ``a`` and ``b``; mass from ``mass`` or ``density``
    (kg/m), exactly one of them given."""

    name: str
    length: float
    density: float | None = None
    mass: float | None = None
    inertia: float | None = None
    points: tuple[tuple[str, Vec2], ...] = ()
    position: Vec2 = (0.0, 0.0)
    u: Vec2 = (1.0, 0.0)
    velocity: Vec2 = (0.0, 0.0)
    ud: Vec2 = (0.0, 0.0)
    hold: bool = False

    def resolved_mass(self) -> float:
        return self.mass if self.mass is not None else self.density * self.length

    def resolved_inertia(self) -> float:
        if self.inertia is not None:
            return self.inertia
        return self.resolved_mass() * self.length**2 / 12.0

    def local_points(self) -> dict[str, Vec2]:
        half = 0.5 * self.length
        return {"cm": (0.0, 0.0), "a": (-half, 0.0), "b": (half, 0.0), **dict(self.points)}


@dataclass(frozen=True)
class MarkerSpec:
    """A named body-fixed point reported in results."""

    name: str
    body: str
    point: str


class _element:
    """``with _element(name):`` attaches the element's name to any ModelError raised while
    it is checked (a class, not a contextlib generator: it wraps every element a model
    file or a builder adds, and the generator's set-up took a tenth of reading a small
    model's file)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if exc is not None and isinstance(exc, ModelError) and exc.entry is None:
            exc.entry = self.name
        return False


def _finite(entry: str, what: str, value) -> float:
    return real(entry, what, value)


def _positive(entry: str, what: str, value) -> float:
    return real(entry, what, value, positive=True)


def _vec2(entry: str, what: str, value) -> Vec2:
    if type(value) in (tuple, list) and len(value) == 2:
        # The common case without the ABC check (a tenth of the build time of big models).
        return (_finite(entry, what, value[0]), _finite(entry, what, value[1]))
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ModelError(f"{entry}: {what} must be a pair of numbers (x, y), got {value!r}")
    shape = getattr(value, "shape", None)
    if shape is not None and tuple(shape) != (2,):
        raise ModelError(f"{entry}: {what} must be a pair of numbers (x, y), got an array of "
                         f"shape {tuple(shape)}")
    # Take at most three items: an endless or huge iterable is not materialised.
    items = list(itertools.islice(value, 3))
    if len(items) != 2:
        count = ("more than 2 values" if len(items) > 2 else
                 f"{len(items)} value{'' if len(items) == 1 else 's'}")
        raise ModelError(f"{entry}: {what} must be a pair of numbers (x, y), got {count}")
    return (_finite(entry, what, items[0]), _finite(entry, what, items[1]))
