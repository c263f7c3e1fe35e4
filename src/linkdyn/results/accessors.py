"""What simulation and kinematics results share: accessors of bodies and markers over time,
and the export to a table. A result class provides ``model``, ``t`` and ``q``, ``v``, ``a``
arrays of shape (n, nq)."""

from __future__ import annotations

import functools

import numpy as np

from .._checks import checked_path
from ..errors import ArgumentError, ArgumentTypeError, UnknownNameError, name_list
from .animation import animate, snapshot
from .plotting import _pyplot
from .output import continuous_quaternions, not_recorded

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
    """Bodies and markers over time (conventions of :mod:`linkdyn.description` for planar
    bodies, :mod:`linkdyn.elements.spatial` for spatial ones)."""

    def _body(self, name) -> int:
        names = self.model.body_names
        if not isinstance(name, str) or name not in names:
            raise UnknownNameError(f"model {self.model.name!r} has no body {name!r} (bodies: "
                                   f"{name_list(names)})")
        return self.model.body_start(names.index(name))

    def _planar(self, what):
        if self.model.space != "planar":
            raise ArgumentError(f"{what}: model {self.model.name!r} is {self.model.space}; a "
                                "spatial body's orientation is body_rotation or "
                                "body_quaternion, its angular velocity a vector")

    def _spatial(self, what):
        if self.model.space == "planar":
            raise ArgumentError(f"{what}: model {self.model.name!r} has no spatial bodies "
                                "(a planar body's orientation is body_angle)")
        if not self.model.dynamic:
            raise ArgumentError(f"{what}: model {self.model.name!r} is a {self.model.space} "
                                "linkage of points, lines and planes: it has no bodies (its "
                                "joints' positions are its markers)")

    @needs_rows
    def animate(self, path, **options):
        """Write an animation (GIF or MP4) of this result: see
        :func:`linkdyn.animation.animate` for the options. Returns the path."""
        return animate(self, checked_path("animate", path), **options)

    @needs_rows
    def snapshot(self, t=None, **options):
        """A matplotlib figure of the mechanism at the output row nearest ``t`` (default:
        the last), with the markers' traces up to it: see
        :func:`linkdyn.animation.snapshot` for the options."""
        return snapshot(self, t, **options)

    def _repr_png_(self) -> bytes | None:
        """A drawing of the mechanism at the last output row, with the markers' paths
        (notebooks); None for a run that kept only recorded series."""
        if getattr(self, "q", None) is None or len(self.t) == 0:
            return None
        import io

        fig = snapshot(self, dpi=72, size=(5.0, 3.6))
        try:
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png")
        finally:
            _pyplot().close(fig)
        return buffer.getvalue()

    @needs_rows
    def to_html(self, path, **options):
        """Write this result as one self-contained, interactive HTML page (the mechanism
        with a time slider and a play button, the markers' paths and plotted series): see
        :func:`linkdyn.html.to_html` for the options. Needs plotly. Returns the path."""
        from .html import to_html

        return to_html(self, checked_path("to_html", path), **options)

    @recordable
    def body_position(self, name) -> np.ndarray:
        """Centre of mass (n, 2) in the plane, (n, 3) in space, m."""
        i = self._body(name)
        return self.q[:, i:i + self.model.marker_dimension]

    @recordable
    def body_angle(self, name) -> np.ndarray:
        """Angle of the body's u (n,), rad, counter-clockwise, continuous (unwrapped);
        planar bodies."""
        self._planar("body_angle")
        i = self._body(name)
        return np.unwrap(np.arctan2(self.q[:, i + 3], self.q[:, i + 2]))

    @recordable
    def body_axis(self, name) -> np.ndarray:
        """A spatial body's unit axis (n, 3) in global axes: a rod's axis, which is its
        orientation (it has no frame); of a body with a frame, its first principal axis."""
        self._spatial("body_axis")
        self._body(name)
        return self.model.body_axis(self.q, name)

    @recordable
    def body_velocity(self, name) -> np.ndarray:
        """Velocity of the centre of mass (n, 2) or (n, 3), m/s."""
        i = self._body(name)
        return self.v[:, i:i + self.model.marker_dimension]

    @recordable
    def body_angular_velocity(self, name) -> np.ndarray:
        """Planar: omega = u x u' (n,), rad/s. Spatial: the angular velocity vector
        (n, 3) in global axes."""
        i = self._body(name)
        if self.model.space != "planar":
            return self.model.body_angular_velocity(self.q, self.v, name)
        return self.q[:, i + 2] * self.v[:, i + 3] - self.q[:, i + 3] * self.v[:, i + 2]

    @needs_rows
    def body_acceleration(self, name) -> np.ndarray:
        """Acceleration of the centre of mass (n, 2) or (n, 3), m/s^2."""
        i = self._body(name)
        return self.a[:, i:i + self.model.marker_dimension]

    @needs_rows
    def body_angular_acceleration(self, name) -> np.ndarray:
        """Planar: alpha = u x u'' (n,), rad/s^2 (u'' = alpha perp(u) - omega^2 u).
        Spatial: the angular acceleration vector (n, 3) in global axes."""
        i = self._body(name)
        if self.model.space != "planar":
            return self.model.body_angular_velocity(self.q, self.a, name)
        return self.q[:, i + 2] * self.a[:, i + 3] - self.q[:, i + 3] * self.a[:, i + 2]

    def body_rotation(self, name) -> np.ndarray:
        """Rotation matrices (n, 3, 3) from a spatial body's own axes to global axes (of a
        result with recorded series: from the body's recorded quaternions)."""
        self._spatial("body_rotation")
        self._body(name)
        self.model.require_frame("body_rotation", name)
        recorded = getattr(self, "recorded", None)
        if recorded is None:
            return self.model.body_rotation(self.q, name)
        if ("body_quaternion", name) not in recorded:
            raise not_recorded(self, ("body_rotation", name))
        from scipy.spatial.transform import Rotation

        quat = recorded[("body_quaternion", name)]
        if not len(quat):
            return np.zeros((0, 3, 3))
        return Rotation.from_quat(quat[:, [1, 2, 3, 0]]).as_matrix()

    @recordable
    def body_quaternion(self, name) -> np.ndarray:
        """A spatial body's orientation as unit quaternions (n, 4), scalar first
        (w, x, y, z), the sign chosen continuous over the rows (w >= 0 at the first)."""
        from scipy.spatial.transform import Rotation

        self._spatial("body_quaternion")
        rotations = self.body_rotation(name)
        if not len(rotations):
            return np.zeros((0, 4))
        return continuous_quaternions(Rotation.from_matrix(rotations).as_quat()[:, [3, 0, 1, 2]])

    @recordable
    def marker(self, name) -> np.ndarray:
        """Positions (n, 2) of the named marker, m ((n, 3) in space)."""
        return self.model.marker_positions(self.q)[:, self.model.marker_index(name)]

    @recordable
    def marker_velocity(self, name) -> np.ndarray:
        """Velocities (n, 2) of the named marker, m/s ((n, 3) in space)."""
        return self.model.marker_velocities(self.v)[:, self.model.marker_index(name)]

    @needs_rows
    def marker_acceleration(self, name) -> np.ndarray:
        """Accelerations (n, 2) of the named marker, m/s^2 ((n, 3) in space)."""
        return self.model.marker_velocities(self.a)[:, self.model.marker_index(name)]

    @needs_rows
    def to_dataframe(self, markers=None, bodies=None):
        """A pandas DataFrame indexed by time: ``<marker>.x``, ``.y``, ``.vx``, ``.vy``,
        ``.ax``, ``.ay`` (and the z components in the 3D models of spherical and spatial
        linkages) for the named markers (default all) and ``<body>.x``, ``.y``, ``.angle``,
        ``.omega`` for the named bodies (a spatial body's ``.x``, ``.y``, ``.z``, its
        orientation's quaternion ``.qw``, ``.qx``, ``.qy``, ``.qz`` and its angular velocity
        ``.omega_x``, ``.omega_y``, ``.omega_z``; default none; all of them for a model
        without markers, such as a linkage without coupler points, so that the table is never
        empty)."""
        for what, names in (("markers", markers), ("bodies", bodies)):
            if names is not None and (isinstance(names, str) or not all(
                    isinstance(n, str) for n in np.atleast_1d(np.asarray(names, dtype=object)))):
                raise ArgumentTypeError(f"to_dataframe: {what} must be a list of names, "
                                        f"got {names!r}")
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
        spatial = self.model.space == "spatial"
        for b in bodies:
            position = self.body_position(b)
            for i, axis in enumerate("xyz"[:position.shape[1]]):
                columns[f"{b}.{axis}"] = position[:, i]
            if spatial:
                rod = self.model.rods[self.model.body_index(b)]
                omega = self.body_angular_velocity(b)
                if rod:                 # an axis, not a frame
                    parts, values = ("ux", "uy", "uz"), self.body_axis(b)
                else:
                    parts, values = ("qw", "qx", "qy", "qz"), self.body_quaternion(b)
                for i, part in enumerate(parts):
                    columns[f"{b}.{part}"] = values[:, i]
                for i, axis in enumerate("xyz"):
                    columns[f"{b}.omega_{axis}"] = omega[:, i]
            else:
                columns[f"{b}.angle"] = self.body_angle(b)
                columns[f"{b}.omega"] = self.body_angular_velocity(b)
        return pd.DataFrame(columns, index=pd.Index(self.t, name="t"))
