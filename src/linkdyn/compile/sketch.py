"""A model's sketch: a small drawing of its bodies, joints and supports at one configuration
(by default the initial guesses of its description), as PNG bytes for notebooks
(``Model._repr_png_`` and the drawing in ``Model._repr_html_``). Matplotlib's object API and
its Agg canvas draw it, so that no pyplot state or backend is touched."""

from __future__ import annotations

import io

import numpy as np

from .geometry import PointGeometry, gear_circles, pins, pivots, shapes_3d, slides

__all__ = ["sketch_png"]


def sketch_png(model, q=None, *, size=(4.5, 3.4), dpi: int = 72) -> bytes:
    """PNG bytes of ``model`` drawn at ``q`` (default: its initial guesses): planar bodies as
    their bars or polygons with joints, supports and gears' pitch circles, spatial bodies
    and linkages in 3D."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    q = np.asarray(model.q0 if q is None else q, dtype=float).reshape(1, -1)
    fig = Figure(figsize=size, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    if model.marker_dimension == 3:
        ax = fig.add_subplot(projection="3d")
        P, shapes, fixed = shapes_3d(model, q)
        for shape in shapes:
            ax.plot(*shape[0].T, "-", color="C0", lw=2)
        if len(fixed):
            ax.plot(*np.asarray(fixed).T, "^", color="0.35")
        if P.shape[1]:
            ax.plot(*P[0].T, ".", color="C3")
    else:
        ax = fig.add_subplot()
        geo = PointGeometry(model, q)
        rows = np.zeros(1, dtype=int)
        for body in geo.drawn:
            xy = geo.outline(body, rows)[0]
            ax.plot(xy[:, 0], xy[:, 1], "-", color="C0", lw=2.5, solid_capstyle="round")
        joints = np.array([geo.ref(ref, rows)[0] for ref in
                           pins(model) + [j.first for j in slides(model)]])
        if len(joints):
            ax.plot(joints[:, 0], joints[:, 1], "o", mfc="white", mec="k", ms=5)
        for centre, radius, tip in gear_circles(model, geo, rows):
            turn = np.linspace(0.0, 2.0 * np.pi, 73)
            ax.plot(centre[0, 0] + radius * np.cos(turn), centre[0, 1] + radius * np.sin(turn),
                    "--", color="C2", lw=1.0)
            ax.plot([centre[0, 0], tip[0, 0]], [centre[0, 1], tip[0, 1]], "-", color="C2",
                    lw=1.0)
        supports = pivots(model, geo)
        if len(supports):
            ax.plot(supports[:, 0], supports[:, 1], "^", color="0.35", ms=8)
        if model.marker_names:
            m = model.marker_positions(q[0]).reshape(-1, 2)
            ax.plot(m[:, 0], m[:, 1], ".", color="C3", ms=8)
        ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(model.name, fontsize="medium")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
