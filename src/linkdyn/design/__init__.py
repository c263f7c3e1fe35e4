"""Design: what a mechanism designer asks of a linkage beyond its motion. :mod:`.metrics`:
Grashof classification of four-bars and transmission angles along a motion."""

from .metrics import Grashof, grashof, transmission_angle

__all__ = ["Grashof", "grashof", "transmission_angle"]
