"""Shareable results: ``to_html(result, path)`` (or ``result.to_html(path)``) writes one
self-contained HTML file with the mechanism animated frame by frame, a time slider and a
play button, the markers' paths, and the plotted series with a cursor at the frame's time.
It is made with plotly (``pip install "linkdyn[html]"``), whose JavaScript the file carries,
so it opens in any browser without a network or a Python installation.

Drawing is that of the animations (:mod:`linkdyn.animation`): planar bodies as their bars or
polygons, revolute joints as circles, ground supports as triangles, spatial bodies and
spherical or spatial linkages in a 3D scene. Each frame shows the output row nearest its
time: ask for outputs often enough (``dt_out``).
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import numpy as np

from ..elements.bodies import GROUND
from ..errors import ArgumentError, ArgumentTypeError
from ..compile.geometry import PointGeometry, cam_outlines, pins, pivots, shapes_3d
from .animation import AnimationError, _check_timing, _checked_markers, frame_times
from .plotting import runs_back, travelled

__all__ = ["to_html", "figure", "HTML_MAX_FRAMES"]

#: Largest number of frames a page carries (the file grows with each).
HTML_MAX_FRAMES = 2_000


def _plotly():
    try:
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots
    except ImportError:
        raise ArgumentError("to_html needs plotly: pip install \"linkdyn[html]\"") from None
    return go, make_subplots


def _joined(polylines):
    """One polyline array (k, d) per piece -> x, y(, z) lists with None between pieces,
    so that one trace draws them all."""
    if not polylines:
        return [[], []]
    dims = polylines[0].shape[1]
    out = [[] for _ in range(dims)]
    for line in polylines:
        for d in range(dims):
            out[d].extend(line[:, d].tolist())
            out[d].append(None)
    return out


def _planar_frames(result, rows, markers):
    """Static traces and per-frame traces of a planar model."""
    model = result.model
    geo = PointGeometry(model, np.asarray(result.q))
    outlines = {b: geo.outline(b, rows) for b in geo.drawn}
    revolute = pins(model)
    joint_xy = np.stack([geo.ref(ref, rows) for ref in revolute], axis=1) \
        if revolute else np.zeros((len(rows), 0, 2))
    paths = {m: np.asarray(result.marker(m)) for m in markers}
    # Contacts: each circle (a round foot) moves with its body; a line on the ground (a
    # floor) is drawn once, across the extent of everything else.
    circles = [(c.radius, geo.ref(c.point, rows)) for c in model.description.contacts
               if c.radius > 0]
    ring = np.linspace(0.0, 2 * np.pi, 25)
    unit = np.column_stack([np.cos(ring), np.sin(ring)])
    static = {"supports": pivots(model, geo), "paths": paths,
              "floors": [(np.asarray(geo.ground[c.line_point[1]], dtype=float),
                          np.array([math.cos(c.line_angle), math.sin(c.line_angle)]))
                         for c in model.description.contacts if c.line_point[0] == GROUND]}
    cams = cam_outlines(model, geo, rows)
    frames = []
    for k, row in enumerate(rows):
        bodies = _joined([outlines[b][k] for b in geo.drawn]
                         + [centre[k] + radius * unit for radius, centre in circles]
                         + [line[k] for line in cams])
        frames.append({"bodies": bodies, "joints": joint_xy[k].T.tolist(),
                       "markers": np.array([paths[m][row] for m in markers]).reshape(-1, 2)
                       .T.tolist()})
    return static, frames


def _spatial_frames(result, rows, markers):
    """Static traces and per-frame traces of a spherical or spatial model."""
    model = result.model
    P, shapes, fixed = shapes_3d(model, np.asarray(result.q))
    index = {m: i for i, m in enumerate(model.marker_names)}
    paths = {m: P[:, index[m]] for m in markers}
    static = {"supports": fixed, "paths": paths, "floors": []}
    frames = []
    for row in rows:
        frames.append({"bodies": _joined([s[row] for s in shapes]), "joints": [[], [], []],
                       "markers": np.array([paths[m][row] for m in markers]).reshape(-1, 3)
                       .T.tolist()})
    return static, frames


def _extent(static, frames, dims):
    """Fixed axis ranges that hold every frame, path and support, with a margin (the axes
    must not rescale while the mechanism moves)."""
    pts = [np.asarray(static["supports"], dtype=float).reshape(-1, dims)]
    pts += [np.asarray(p, dtype=float).reshape(-1, dims) for p in static["paths"].values()]
    for f in frames:
        coords = np.array(f["bodies"], dtype=float).T      # None -> nan
        pts.append(coords.reshape(-1, dims))
    cloud = np.concatenate(pts)
    cloud = cloud[np.all(np.isfinite(cloud), axis=1)]
    if cloud.size == 0:
        return np.full(dims, -1.0), np.full(dims, 1.0)
    lo, hi = cloud.min(axis=0), cloud.max(axis=0)
    pad = 0.06 * max(float(np.max(hi - lo)), 1e-9)
    return lo - pad, hi + pad


def _series(result, series):
    """The plotted series: name -> values (n,); by default every marker's coordinates."""
    if series is None:
        out = {}
        axes = "xyz"[:result.model.marker_dimension]
        for m in result.model.marker_names:
            values = np.asarray(result.marker(m))
            for d, axis in enumerate(axes):
                out[f"{m}.{axis}"] = values[:, d]
        if not out and hasattr(result, "energy"):
            out["energy"] = np.asarray(result.energy)
        return out
    if not isinstance(series, dict):
        raise ArgumentError("series must be a dict of name -> values (one per output row), "
                            f"got {type(series).__name__}")
    out = {}
    for name, values in series.items():
        v = np.asarray(values, dtype=float)
        if v.shape != (len(result.t),):
            raise ArgumentError(f"series {name!r}: expected {len(result.t)} values, one per "
                                f"output row, got shape {v.shape}")
        out[str(name)] = v
    return out


def to_html(result, path, **options) -> Path:
    """Write ``result`` (a SimulationResult or KinematicsResult) as one self-contained HTML
    page, plotly's JavaScript included, and return its path.

    Parameters
    ----------
    path : str or Path
        The file to write (its directory must exist).
    **options
        markers, series, fps, speed, title: see :func:`figure`.

    Raises
    ------
    ArgumentError
        As :func:`figure`, and for a directory that does not exist.
    ArgumentTypeError
        An option :func:`figure` does not take.
    """
    unknown = sorted(set(options) - FIGURE_OPTIONS)
    if unknown:
        raise ArgumentTypeError(f"to_html: unknown option(s) {', '.join(map(repr, unknown))} "
                                f"(options: {', '.join(sorted(FIGURE_OPTIONS))})")
    path = Path(path)
    if not path.parent.is_dir():
        raise ArgumentError(f"{path}: the directory {path.parent} does not exist")
    fig = figure(result, **options)
    fig.write_html(str(path), include_plotlyjs=True, full_html=True, auto_play=False,
                   div_id="linkdyn-result")
    return path


def figure(result, *, markers=None, series=None, fps: float = 20.0, speed: float = 1.0,
           title=None):
    """The interactive plotly figure of ``result`` that :func:`to_html` writes: the
    mechanism frame by frame beside the plotted series, with a time slider and play and
    pause buttons. Show it in a notebook, change its layout, or write it yourself.

    Parameters
    ----------
    markers : sequence of str, optional
        Markers whose paths are drawn (default: all, as for :func:`linkdyn.animation.animate`).
    series : dict, optional
        Curves plotted beside the mechanism, ``{name: values}`` with one value per output
        row (default: every marker's coordinates; a model without markers: its energy).
    fps, speed : float
        Frames per second of animation time and simulated seconds per second: the frames are
        the output rows nearest ``t0 + k speed / fps``. At most :data:`HTML_MAX_FRAMES`.
    title : str, optional
        The page's heading (default: the model's name).

    Raises
    ------
    ArgumentError
        plotly missing, bad markers, series, fps or speed, a result without rows, or too
        many frames.
    """
    go, make_subplots = _plotly()
    if len(result.t) == 0:
        raise ArgumentError("the result has no output rows")
    try:
        _check_timing(fps, speed)
        markers = _checked_markers(result.model, markers)
        rows = frame_times(result.t, fps, speed)
    except AnimationError as exc:
        raise ArgumentError(str(exc)) from None
    if len(rows) > HTML_MAX_FRAMES:
        raise ArgumentError(f"the page would have {len(rows)} frames (more than "
                            f"{HTML_MAX_FRAMES}): lower fps or raise speed")
    curves = _series(result, series)
    model = result.model
    space = model.marker_dimension == 3
    static, frames = (_spatial_frames if space else _planar_frames)(result, rows, markers)
    # a schedule run back at limit positions goes back and forth in t: the series, the
    # cursor and the frames' names follow the schedule travelled (increasing, unique)
    t, back = travelled(result.t), runs_back(result.t)

    fig = make_subplots(rows=1, cols=2, column_widths=[0.55, 0.45],
                        specs=[[{"type": "scene" if space else "xy"}, {"type": "xy"}]],
                        subplot_titles=("mechanism", "series"))
    scatter = go.Scatter3d if space else go.Scatter

    def xyz(points, **style):
        keys = ("x", "y", "z") if space else ("x", "y")
        return scatter(**dict(zip(keys, points)), **style)

    # Static traces first (paths, supports, series), then the four that frames update.
    for m, p in static["paths"].items():
        fig.add_trace(xyz(p.T.tolist(), mode="lines", name=f"path of {m}",
                          line=dict(width=1)), row=1, col=1)
    sup = np.asarray(static["supports"]).reshape(-1, 3 if space else 2)
    if len(sup):
        fig.add_trace(xyz(sup.T.tolist(), mode="markers", name="supports",
                          marker=dict(symbol="diamond" if space else "triangle-up", size=9,
                                      color="#555")), row=1, col=1)
    lo_xyz, hi_xyz = _extent(static, frames, 3 if space else 2)
    if static["floors"]:
        reach = 2.0 * float(np.linalg.norm(hi_xyz - lo_xyz))
        floors = [np.array([p - reach * d, p + reach * d]) for p, d in static["floors"]]
        fig.add_trace(xyz(_joined(floors), mode="lines", name="floor",
                          line=dict(color="#444", width=2)), row=1, col=1)
    for name, values in curves.items():
        fig.add_trace(go.Scatter(x=t.tolist(), y=values.tolist(), mode="lines", name=name),
                      row=1, col=2)
    first = len(fig.data)
    f0 = frames[0]
    fig.add_trace(xyz(f0["bodies"], mode="lines", name="bodies",
                      line=dict(width=5 if not space else 6, color="#1f77b4")), row=1, col=1)
    fig.add_trace(xyz(f0["joints"], mode="markers", name="joints",
                      marker=dict(size=8, color="white", line=dict(width=1.5, color="black"))),
                  row=1, col=1)
    fig.add_trace(xyz(f0["markers"], mode="markers", name="markers",
                      marker=dict(size=7, color="#d62728")), row=1, col=1)
    values = np.concatenate(list(curves.values())) if curves else np.zeros(1)
    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    fig.add_trace(go.Scatter(x=[t[rows[0]]] * 2, y=[lo, hi], mode="lines", name="time",
                             line=dict(color="black", dash="dot")), row=1, col=2)
    moving = list(range(first, first + 4))

    plotly_frames = []
    for k, row in enumerate(rows):
        fk = frames[k]
        plotly_frames.append(go.Frame(name=f"{t[row]:.6g}", traces=moving, data=[
            xyz(fk["bodies"]), xyz(fk["joints"]), xyz(fk["markers"]),
            go.Scatter(x=[t[row]] * 2, y=[lo, hi])]))
    fig.frames = plotly_frames
    if title is None:
        title = f"{model.name}: t = {t[0]:g} .. {result.t[-1]:g} s" + (
            f" (the input run back at its limits: {t[-1] - t[0]:g} s of schedule)"
            if back else "")
    _controls(fig, fps, space, title, "schedule travelled " if back else "t = ")
    if space:
        fig.update_scenes(aspectmode="data", **{f"{a}axis": dict(range=[lo_xyz[i], hi_xyz[i]])
                                                for i, a in enumerate("xyz")})
    else:
        fig.update_xaxes(title_text="x [m]", range=[lo_xyz[0], hi_xyz[0]], scaleanchor="y",
                         scaleratio=1, row=1, col=1)
        fig.update_yaxes(title_text="y [m]", range=[lo_xyz[1], hi_xyz[1]], row=1, col=1)
    fig.update_xaxes(title_text="schedule travelled [s]" if back else "t [s]", row=1, col=2)
    if series is None:
        label = ("marker coordinates [m]" if result.model.marker_names else "energy [J]")
    else:
        label = ", ".join(curves) if len(curves) <= 3 else "the given series"
    fig.update_yaxes(title_text=label, row=1, col=2)
    return fig


def _controls(fig, fps, space, title, prefix) -> None:
    """The figure's heading, its play and pause buttons and its slider (a step a frame,
    the current value shown after ``prefix``)."""
    duration = 1000.0 / fps
    play = dict(label="play", method="animate",
                args=[None, {"frame": {"duration": duration, "redraw": space},
                             "fromcurrent": True, "transition": {"duration": 0}}])
    pause = dict(label="pause", method="animate",
                 args=[[None], {"frame": {"duration": 0, "redraw": False}, "mode": "immediate",
                                "transition": {"duration": 0}}])
    steps = [dict(label=f.name, method="animate",
                  args=[[f.name], {"mode": "immediate", "frame": {"duration": 0,
                                                                  "redraw": space},
                                   "transition": {"duration": 0}}]) for f in fig.frames]
    fig.update_layout(
        title=title,
        updatemenus=[dict(type="buttons", buttons=[play, pause], x=0.0, y=-0.06,
                          xanchor="left", yanchor="top", direction="left")],
        sliders=[dict(steps=steps, active=0, x=0.2, len=0.8, y=-0.04,
                      currentvalue=dict(prefix=prefix, suffix=" s"))],
        margin=dict(l=40, r=20, t=70, b=110), height=620)


#: The options of :func:`figure` (and so of :func:`to_html`), from its signature.
FIGURE_OPTIONS = frozenset(inspect.signature(figure).parameters) - {"result"}
