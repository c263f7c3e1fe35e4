"""Animations of results: ``animate(result, path)`` (or ``result.animate(path)``) draws the
mechanism frame by frame, bars and bodies, joints, ground points and the traces of its
markers, and writes a GIF (Pillow) or an MP4 (ffmpeg) with matplotlib's animation writers.
It works for simulation and kinematics results alike.

Drawing. A bar is its segment from ``a`` to ``b``; a general body is the polygon through its
points in the order they were given (a single point: a segment from its centre of mass); a
revolute joint is a circle at its point, a prismatic joint a short segment along its axis;
a gear its pitch circle, dashed, with a spoke that turns with it; ground points are
triangles. Marker traces show the path up to the current frame. The axes
keep one scale (equal aspect) and fit every frame. Spherical and spatial linkages
(:mod:`linkdyn.natural`) are drawn in 3D: each link as the polygon through its points (its
planes are not drawn), ground joints as triangles, a spherical linkage on its unit sphere.

Time. Frames are taken at ``fps`` per second of animation time; ``speed`` is simulated
seconds per second of animation (``speed=0.1``: ten times slower than real time). Each
frame shows the output row nearest its time (no interpolation: ask for outputs often enough,
e.g. ``dt_out``).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np

from ..elements.bodies import GROUND
from ..compile.geometry import (PointGeometry, cam_outlines, gear_circles, pins, pivots,
                                shapes_3d, slides)
from .plotting import _pyplot, distinct_colors, label_3d_axes, travelled
from ..errors import LinkdynError, name_list

__all__ = ["animate", "snapshot", "frame_times", "AnimationError"]

#: Largest number of frames written (a guard against a long run at a high frame rate).
MAX_FRAMES = 20_000


class AnimationError(LinkdynError, ValueError):
    """Bad arguments for an animation, or no writer for the requested format (a
    :class:`linkdyn.LinkdynError`, and a ValueError as before)."""


def frame_times(t, fps: float, speed: float) -> np.ndarray:
    """Indices of the output rows shown in each frame: the rows nearest t0 + k speed / fps.
    Where ``t`` goes back and forth (a kinematic analysis run back at its limit positions:
    ``t`` is then the input's schedule), the frames follow the rows in order, at the pace
    of the schedule travelled, t0 plus the sum of ``abs(dt)`` so far."""
    t = travelled(t)
    duration = (t[-1] - t[0]) / speed
    n = int(math.floor(duration * fps + 1e-9)) + 1
    if n > MAX_FRAMES:
        raise AnimationError(f"the animation would have {n} frames (more than {MAX_FRAMES}): "
                             "lower fps or raise speed")
    wanted = t[0] + np.arange(n) * speed / fps
    idx = np.clip(np.searchsorted(t, wanted), 0, t.size - 1)
    earlier = np.clip(idx - 1, 0, t.size - 1)
    closer = np.abs(t[earlier] - wanted) <= np.abs(t[idx] - wanted)
    return np.where(closer, earlier, idx)


def _writer(path: Path, fps: float):
    from matplotlib import animation

    suffix = path.suffix.lower()
    if suffix == ".gif":
        return animation.PillowWriter(fps=fps)
    if suffix in (".mp4", ".m4v", ".mov"):
        if shutil.which("ffmpeg") is None:
            raise AnimationError(f"{path}: writing {suffix} needs ffmpeg, which is not "
                                 "installed; write a .gif instead (Pillow)")
        return animation.FFMpegWriter(fps=fps)
    raise AnimationError(f"{path}: unknown animation format {suffix or '(none)'!r}; use "
                         ".gif or .mp4")


def animate(result, path, *, fps: float = 30.0, speed: float = 1.0, markers=None,
            trace: bool = True, dpi: int = 100, size=(6.0, 4.5), title=None) -> Path:
    """Write an animation of ``result`` (a SimulationResult or KinematicsResult) to ``path``
    (``.gif``: Pillow; ``.mp4``: ffmpeg) and return the path.

    Parameters
    ----------
    fps : float
        Frames per second of the animation.
    speed : float
        Simulated seconds per second of animation.
    markers : sequence of str, optional
        Markers whose traces are drawn (default: all of the model's markers; for a spherical
        or spatial linkage, its coupler points).
    trace : bool
        Draw the markers' paths up to the current frame (else only their current points).
    dpi, size : resolution and figure size (inches).
    title : str, optional
        Title above the axes (default: the model's name); the time is shown below it.

    Raises
    ------
    AnimationError
        Bad fps, speed, markers, dpi, size, trace or format (an unknown suffix, .mp4
        without ffmpeg), or more than MAX_FRAMES frames. Errors writing the file (a
        missing directory) are raised before any frame is drawn.
    """

    path = Path(path)
    _check_timing(fps, speed)
    _check_figure(size, dpi, trace)
    model = result.model
    markers = _checked_markers(model, markers)
    if not path.parent.is_dir():
        raise AnimationError(f"{path}: the directory {path.parent} does not exist")
    writer = _writer(path, fps)
    if len(result.t) == 0:
        raise AnimationError("the result has no output rows")

    rows = frame_times(result.t, fps, speed)
    scene = _scene_3d if model.marker_dimension == 3 else _scene_2d
    fig, draw = scene(result, rows, markers, trace, dpi, size, title)
    try:
        with writer.saving(fig, str(path), dpi):
            for k in range(len(rows)):
                draw(k)
                writer.grab_frame()
    finally:
        _pyplot().close(fig)
    return path


def snapshot(result, t=None, *, markers=None, trace: bool = True, dpi: int = 100,
             size=(6.0, 4.5), title=None):
    """Draw the mechanism of ``result`` at one output row, as :func:`animate` draws its
    frames, and return the matplotlib figure (the caller shows, saves or closes it).

    Parameters
    ----------
    t : float, optional
        Time (s); the output row nearest to it is drawn (default: the last row).
    markers, trace, dpi, size, title :
        As for :func:`animate`; the traces run from the first row to the one drawn.

    Raises
    ------
    AnimationError
        Bad markers, dpi, size or trace, a result without output rows, or a ``t`` that is
        not a finite number.
    """
    if len(result.t) == 0:
        raise AnimationError("the result has no output rows")
    _check_figure(size, dpi, trace)
    times = np.asarray(result.t, dtype=float)
    if t is None:
        row = len(times) - 1
    elif isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise AnimationError(f"t must be a finite number of seconds, got {t!r}")
    else:
        row = int(np.argmin(np.abs(times - t)))
    markers = _checked_markers(result.model, markers)
    scene = _scene_3d if result.model.marker_dimension == 3 else _scene_2d
    fig, draw = scene(result, np.array([row]), markers, trace, dpi, size, title)
    draw(0)
    return fig


def _check_timing(fps, speed) -> None:
    """Frames per second and simulated seconds per second: positive numbers (animations and
    HTML pages alike)."""
    for name, value in (("fps", fps), ("speed", speed)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value <= 0:
            raise AnimationError(f"{name} must be a positive number, got {value!r}")


def _check_dpi(dpi) -> None:
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 10 <= dpi <= 1000:
        raise AnimationError(f"dpi must be an integer from 10 to 1000, got {dpi!r}")


#: The most pixels a drawing may have along a side (matplotlib's raster limit is 2^16).
MAX_PIXELS = 10_000


def _check_figure(size, dpi, trace) -> None:
    """The figure's size (two positive inches, at most MAX_PIXELS pixels a side at ``dpi``)
    and ``trace`` (a bool); dpi as :func:`_check_dpi`."""
    _check_dpi(dpi)
    ok = isinstance(size, (tuple, list)) and len(size) == 2 and all(
        not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x) and
        0 < x * dpi <= MAX_PIXELS for x in size)
    if not ok:
        raise AnimationError(f"size must be (width, height) in inches, each positive and at "
                             f"most {MAX_PIXELS / dpi:g} at dpi {dpi}, got {size!r}")
    if not isinstance(trace, (bool, np.bool_)):
        raise AnimationError(f"trace must be True or False, got {trace!r}")


def _checked_markers(model, markers) -> list:
    """The markers whose traces are drawn: the given ones, checked, or by default every
    marker (a linkage of points: its coupler points, every joint being a marker there)."""
    if markers is None and model.marker_dimension == 3 and not model.dynamic:
        markers = [j.name for j in model.description.joints.values() if j.kind == "coupler"]
    if markers is None:
        markers = list(model.marker_names)
    elif isinstance(markers, str):
        markers = [markers]
    for m in markers:
        if not isinstance(m, str) or m not in model.marker_names:
            raise AnimationError(f"model {model.name!r} has no marker {m!r} (markers: "
                                 f"{name_list(model.marker_names)})")
    return list(markers)


def _scene_2d(result, rows, markers, trace, dpi, size, title):
    """The figure of a planar model and draw(k), which shows frame k (output row rows[k]):
    bars and bodies, joints, sliders, contacts and marker traces."""
    model = result.model
    geo = PointGeometry(model, np.asarray(result.q))
    all_rows = np.arange(len(result.t))
    outlines = {b: geo.outline(b, rows) for b in geo.drawn}
    pin_xy = [geo.ref(ref, rows) for ref in pins(model)]
    prismatic = slides(model)
    slide_xy = {j.name: geo.ref(j.first, rows) for j in prismatic}
    traces = {m: np.asarray(result.marker(m)) for m in markers}

    # Limits from every drawn point at every output row, with a margin.
    pts = [geo.outline(b, all_rows).reshape(-1, 2) for b in geo.drawn]
    supports = pivots(model, geo)
    pts += [supports]
    pts += list(traces.values())
    pts += _contact_extent(model, geo, all_rows)
    pts += [xy for centre, r, _ in gear_circles(model, geo, all_rows)
            for xy in (centre - r, centre + r)]
    pts += [line.reshape(-1, 2) for line in cam_outlines(model, geo, all_rows)]
    cloud = np.concatenate([p for p in pts if p.size])
    lo, hi = cloud.min(axis=0), cloud.max(axis=0)
    span = max(float(np.max(hi - lo)), 1e-9)
    lo, hi = lo - 0.06 * span, hi + 0.06 * span

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=size, dpi=dpi, layout="constrained")
    ax.set_aspect("equal")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    heading = title if title is not None else model.name
    ax.set_title(heading)
    if len(supports):
        ax.plot(supports[:, 0], supports[:, 1], "^", color="0.35", markersize=8, zorder=1)
    draw_contacts = _contact_artists(ax, model, geo, rows, lo, hi)
    draw_gears = _gear_artists(ax, model, geo, rows)
    cams = cam_outlines(model, geo, rows)
    cam_lines = [ax.plot([], [], "-", lw=1.5, color="C3", zorder=2)[0] for _ in cams]
    body_lines = {b: ax.plot([], [], "-", lw=2.5, color="C0", solid_capstyle="round",
                             zorder=2)[0] for b in geo.drawn}
    joint_dots = ax.plot([], [], "o", mfc="white", mec="k", markersize=5, zorder=3)[0]
    slider_lines = [ax.plot([], [], "-", lw=5, color="C1", alpha=0.6, zorder=2)[0]
                    for _ in prismatic]
    trace_lines = {m: ax.plot([], [], "-", lw=1, zorder=1, label=m)[0] for m in markers}
    marker_dots = {m: ax.plot([], [], ".", color=trace_lines[m].get_color(),
                              markersize=6, zorder=4)[0] for m in markers}
    if markers:        # beside the axes, off the mechanism
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    clock = ax.text(0.02, 0.97, "", transform=ax.transAxes, va="top")
    half = 0.04 * span

    def draw(k):
        row = rows[k]
        for b, line in body_lines.items():
            line.set_data(outlines[b][k, :, 0], outlines[b][k, :, 1])
        if pin_xy:
            xy = np.array([p[k] for p in pin_xy])
            joint_dots.set_data(xy[:, 0], xy[:, 1])
        for j, line in zip(prismatic, slider_lines):
            c = slide_xy[j.name][k]
            ang = j.axis + (0.0 if j.first[0] == GROUND else
                            math.atan2(geo.q[row, geo.index[j.first[0]] + 3],
                                       geo.q[row, geo.index[j.first[0]] + 2]))
            d = half * np.array([math.cos(ang), math.sin(ang)])
            line.set_data([c[0] - d[0], c[0] + d[0]], [c[1] - d[1], c[1] + d[1]])
        for m in markers:
            p = traces[m]
            if trace:
                trace_lines[m].set_data(p[:row + 1, 0], p[:row + 1, 1])
            marker_dots[m].set_data([p[row, 0]], [p[row, 1]])
        draw_contacts(k)
        draw_gears(k)
        for line, xy in zip(cam_lines, cams):
            line.set_data(xy[k, :, 0], xy[k, :, 1])
        clock.set_text(f"t = {result.t[row]:.3f} s")
        return []

    return fig, draw

def _contact_centres(model, geo, rows) -> list:
    """Per contact (spec, (len(rows), 2) centres of its circle)."""
    return [(c, geo.ref(c.point, rows)) for c in model.description.contacts]


def _contact_extent(model, geo, rows) -> list:
    """Points that bound what the contacts draw: their circles and their lines' points."""
    out = []
    for c, centre in _contact_centres(model, geo, rows):
        out += [centre - c.radius, centre + c.radius]
        if c.line_point[0] == GROUND:
            out.append(np.asarray(geo.ground[c.line_point[1]], dtype=float).reshape(1, 2))
    return out


def _contact_artists(ax, model, geo, rows, lo, hi):
    """Draw each contact's line (the floor of a walker: fixed when on the ground) and its
    circle (a round foot), and return draw(k), which moves the circles to frame k."""
    from matplotlib.patches import Circle

    contacts = _contact_centres(model, geo, rows)
    drawn_lines = set()
    circles = []
    length = 2.0 * float(np.hypot(*(np.asarray(hi) - np.asarray(lo))))
    for c, centre in contacts:
        if c.line_point[0] == GROUND and (c.line_point, c.line_angle) not in drawn_lines:
            drawn_lines.add((c.line_point, c.line_angle))
            p = np.asarray(geo.ground[c.line_point[1]], dtype=float)
            d = np.array([math.cos(c.line_angle), math.sin(c.line_angle)])
            ends = np.array([p - length * d, p + length * d])
            ax.plot(ends[:, 0], ends[:, 1], "-", color="0.3", lw=1.5, zorder=0)
        if c.radius > 0:
            patch = Circle(tuple(centre[0]), c.radius, fill=False, ec="C0", lw=1.5, zorder=2)
            ax.add_patch(patch)
            circles.append((patch, centre))

    def draw(k):
        for patch, centre in circles:
            patch.set_center(tuple(centre[k]))

    return draw


def _gear_artists(ax, model, geo, rows):
    """Each gear's pitch circle (dashed) with a spoke along its body's u, so that its turning
    shows; returns draw(k), which moves them to frame k."""
    from matplotlib.patches import Circle

    artists = []
    for centre, radius, tip in gear_circles(model, geo, rows):
        patch = Circle(tuple(centre[0]), radius, fill=False, ec="C2", lw=1.2, ls="--",
                       zorder=1)
        ax.add_patch(patch)
        spoke = ax.plot([], [], "-", color="C2", lw=1.2, zorder=1)[0]
        artists.append((patch, spoke, centre, tip))

    def draw(k):
        for patch, spoke, centre, tip in artists:
            patch.set_center(tuple(centre[k]))
            spoke.set_data([centre[k, 0], tip[k, 0]], [centre[k, 1], tip[k, 1]])

    return draw


def _scene_3d(result, rows, markers, trace, dpi, size, title):
    """The figure of a spherical or spatial model and draw(k), which shows frame k."""

    model = result.model
    P, shapes, fixed_xyz = shapes_3d(model, np.asarray(result.q))
    index = {m: i for i, m in enumerate(model.marker_names)}
    traces = {m: P[:, index[m]] for m in markers}
    cloud = np.concatenate([P.reshape(-1, 3), fixed_xyz] + [s.reshape(-1, 3) for s in shapes])
    lo, hi = cloud.min(axis=0), cloud.max(axis=0)
    if model.space == "spherical":
        lo, hi = np.full(3, -1.0), np.full(3, 1.0)

    plt = _pyplot()
    fig = plt.figure(figsize=size, dpi=dpi)
    ax = fig.add_subplot(projection="3d")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect(np.maximum(hi - lo, 1e-3 * float(np.max(hi - lo))))
    label_3d_axes(ax, model.space)
    ax.set_title(title if title is not None else model.name)
    if model.space == "spherical":
        u, w = np.meshgrid(np.linspace(0, 2 * np.pi, 25), np.linspace(0, np.pi, 13))
        ax.plot_wireframe(np.cos(u) * np.sin(w), np.sin(u) * np.sin(w), np.cos(w),
                          color="0.88", linewidth=0.4)
    if len(fixed_xyz):
        g = fixed_xyz
        ax.plot(g[:, 0], g[:, 1], g[:, 2], "^", color="0.35", markersize=7)
    link_lines = [ax.plot([], [], [], "-", lw=2.0, color="C0")[0] for _ in shapes]
    trace_lines = {m: ax.plot([], [], [], "-", lw=1, label=m, color=c)[0]
                   for m, c in zip(markers, distinct_colors(len(markers)))}
    dots = {m: ax.plot([], [], [], ".", color=trace_lines[m].get_color())[0]
            for m in markers}
    if markers:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    clock = ax.text2D(0.02, 0.97, "", transform=ax.transAxes, va="top")

    def draw(k):
        row = rows[k]
        for line, shape in zip(link_lines, shapes):
            xyz = shape[row]
            line.set_data_3d(xyz[:, 0], xyz[:, 1], xyz[:, 2])
        for m in markers:
            p = traces[m]
            start = 0 if trace else row
            trace_lines[m].set_data_3d(p[start:row + 1, 0], p[start:row + 1, 1],
                                       p[start:row + 1, 2])
            dots[m].set_data_3d([p[row, 0]], [p[row, 1]], [p[row, 2]])
        clock.set_text(f"t = {result.t[row]:.3f} s")

    return fig, draw
