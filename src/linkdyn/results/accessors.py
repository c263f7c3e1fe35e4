"""What simulation and kinematics results share: accessors of bodies and markers over time,
and the export to a table. A result class provides ``model``, ``t`` and ``q``, ``v``, ``a``
arrays of shape (n, nq)."""

from __future__ import annotations

import functools

import numpy as np

from ..errors import UnknownNameError
from .animation import animate
from .output import not_recorded

__all__ = ["TrajectoryAccessors", "recordable", "needs_rows"]


def recordable(accessor):
    """An accessor that a result with recorded series (``result.recorded``, see
    :mod:`linkdyn.output`) answers from them: the series of the same accessor and argument,
    or NotRecordedError."""
    name = accessor.__name__

    @functools.wraps(accessor)
    def wrapper(self, *args):
        recorded = getattr(self, "recorded", None)
        if recorded is None:
            return accessor(self, *args)
        key = (name, *args)
        if key not in recorded:
            raise not_recorded(self, key)
        return recorded[key]

    return wrapper


def needs_rows(accessor):
    """An accessor that needs whole output rows: NotRecordedError on a result with recorded
    series."""
    name = accessor.__name__

    @functools.wraps(accessor)
    def wrapper(self, *args, **kwargs):
        if getattr(self, "recorded", None) is not None:
            raise not_recorded(self, (name, *args[:1]))
        return accessor(self, *args, **kwargs)

    return wrapper


class TrajectoryAccessors:
    """Bodies and markers over time (conventions of :mod:`linkdyn.description`)."""

    def _body(self, name) -> int:
        names = self.model.body_names
        if not isinstance(name, str) or name not in names:
            raise UnknownNameError(f"model {self.model.name!r} has no body {name!r} (bodies: "
                                   f"{', '.join(names)})")
        return 4 * names.index(name)

    @needs_rows
    def animate(self, path, **options):
        """Write an animation (GIF or MP4) of this result: see
        :func:`linkdyn.animation.animate` for the options. Returns the path."""
        return animate(self, path, **options)

    @recordable
    def body_position(self, name) -> np.ndarray:
        """Centre of mass (n, 2), m."""
        i = self._body(name)
        return self.q[:, i:i + 2]

    @recordable
    def body_angle(self, name) -> np.ndarray:
        """Angle of the body's u (n,), rad, counter-clockwise, continuous (unwrapped)."""
        i = self._body(name)
        return np.unwrap(np.arctan2(self.q[:, i + 3], self.q[:, i + 2]))

    @recordable
    def body_velocity(self, name) -> np.ndarray:
        """Velocity of the centre of mass (n, 2), m/s."""
        i = self._body(name)
        return self.v[:, i:i + 2]

    @recordable
    def body_angular_velocity(self, name) -> np.ndarray:
        """omega = u x u' (n,), rad/s."""
        i = self._body(name)
        return self.q[:, i + 2] * self.v[:, i + 3] - self.q[:, i + 3] * self.v[:, i + 2]

    @needs_rows
    def body_acceleration(self, name) -> np.ndarray:
        """Acceleration of the centre of mass (n, 2), m/s^2."""
        i = self._body(name)
        return self.a[:, i:i + 2]

    @needs_rows
    def body_angular_acceleration(self, name) -> np.ndarray:
        """alpha = u x u'' (n,), rad/s^2 (u'' = alpha perp(u) - omega^2 u)."""
        i = self._body(name)
        return self.q[:, i + 2] * self.a[:, i + 3] - self.q[:, i + 3] * self.a[:, i + 2]

    @recordable
    def marker(self, name) -> np.ndarray:
        """Positions (n, 2) of the named marker, m."""
        return self.model.marker_positions(self.q)[:, self.model.marker_index(name)]

    @recordable
    def marker_velocity(self, name) -> np.ndarray:
        """Velocities (n, 2) of the named marker, m/s."""
        return self.model.marker_velocities(self.v)[:, self.model.marker_index(name)]

    @needs_rows
    def marker_acceleration(self, name) -> np.ndarray:
        """Accelerations (n, 2) of the named marker, m/s^2."""
        return self.model.marker_velocities(self.a)[:, self.model.marker_index(name)]

    @needs_rows
    def to_dataframe(self, markers=None, bodies=None):
        """A pandas DataFrame indexed by time: ``<marker>.x``, ``.y``, ``.vx``, ``.vy``,
        ``.ax``, ``.ay`` (and the z components in the 3D models of spherical and spatial
        linkages) for the named markers (default all) and ``<body>.x``, ``.y``, ``.angle``,
        ``.omega`` for the named bodies (default none; all of them for a model without
        markers, such as a linkage without coupler points, so that the table is never
        empty)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_dataframe needs pandas (pip install 'linkdyn[sweep]')") \
                from None
        columns = {}
        for m in self.model.marker_names if markers is None else markers:
            for label, series in (("", self.marker(m)), ("v", self.marker_velocity(m)),
                                  ("a", self.marker_acceleration(m))):
                for i, axis in enumerate("xyz"[:self.model.marker_dimension]):
                    columns[f"{m}.{label}{axis}"] = series[:, i]
        if bodies is None:
            bodies = () if self.model.marker_names else self.model.body_names
        for b in bodies:
            position = self.body_position(b)
            columns[f"{b}.x"], columns[f"{b}.y"] = position[:, 0], position[:, 1]
            columns[f"{b}.angle"] = self.body_angle(b)
            columns[f"{b}.omega"] = self.body_angular_velocity(b)
        return pd.DataFrame(columns, index=pd.Index(self.t, name="t"))
