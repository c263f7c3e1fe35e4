"""Frames and rotations shared by the model importers, and the one way their builder
calls report a bad element (the file, its line, the element)."""

from __future__ import annotations

import contextlib
import math

import numpy as np

from ..errors import ModelError

__all__ = ["axis_rotation", "element_errors", "rpy_matrix", "z_to"]


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (fixed axes x, y, z)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                              math.cos(y), math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def axis_rotation(axis, angle) -> np.ndarray:
    """Rotation by ``angle`` about the unit ``axis`` (Rodrigues)."""
    k = np.asarray(axis, dtype=float)
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def z_to(direction) -> np.ndarray:
    """The smallest rotation that takes the z axis to ``direction`` (MuJoCo's ``zaxis`` and
    ``fromto`` frames); a half turn about x for -z."""
    z = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    c = np.cross([0.0, 0.0, 1.0], z)
    s = float(np.linalg.norm(c))
    if s < 1e-14:
        return np.eye(3) if z[2] > 0 else np.diag([1.0, -1.0, -1.0])
    return axis_rotation(c / s, math.atan2(s, z[2]))


@contextlib.contextmanager
def element_errors(node):
    """The builder's ModelError raised inside turned into a ModelFileError naming the
    file, the line and the element ``node`` (an :class:`~.xml.Node`)."""
    try:
        yield
    except ModelError as exc:
        if getattr(exc, "path", None):
            raise
        raise node.error(str(exc)) from None
