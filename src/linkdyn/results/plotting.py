"""Plots of simulation results (matplotlib, written to files; no screen needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._checks import checked_path
from ..errors import UnknownNameError, name_list


def _pyplot():
    """pyplot, on the Agg backend (files, no screen) unless the caller chose a backend: a
    notebook's (MPLBACKEND, set by the kernel) or one pyplot already runs on."""
    import os
    import sys

    import matplotlib

    if not os.environ.get("MPLBACKEND") and "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _positive_or_nan(x):
    """Exact zeros (a run starting at rest satisfies its velocity constraints exactly) have no
    logarithm: they are left out of a log plot instead of dragging its axis to 1e-300."""
    x = np.asarray(x, dtype=float)
    return np.where(x > 0, x, np.nan)


def _log_panel(ax, t, values, label):
    y = _positive_or_nan(values)
    if np.all(np.isnan(y)):
        ax.text(0.5, 0.5, f"{label} = 0 throughout", transform=ax.transAxes, ha="center",
                va="center")
        ax.set_yticks([])
    else:
        ax.semilogy(t, y)
    ax.set_ylabel(label)


def _readable_axis(ax):
    """Tick labels are the values themselves (no +offset or multiplier), and a series flat
    to round-off is drawn as the flat line it is, on a range of a thousandth of its size:
    zoomed to 1e-15 m, round-off would read as a trend with ten-digit tick labels."""
    ax.ticklabel_format(axis="y", useOffset=False)
    values = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()]
    y = np.concatenate([v.ravel() for v in values]) if values else np.zeros(0)
    y = y[np.isfinite(y)]
    if y.size == 0:
        return
    lo, hi = float(y.min()), float(y.max())
    size = max(abs(lo), abs(hi))
    if hi - lo <= 1e-9 * max(size, 1e-3):
        mid, pad = 0.5 * (lo + hi), max(1e-3 * size, 1e-6)
        ax.set_ylim(mid - pad, mid + pad)


def output_directory(what: str, directory) -> Path:
    """``directory`` (str or os.PathLike) as a Path, made with its parents if missing."""
    out = Path(checked_path(what, directory))
    out.mkdir(parents=True, exist_ok=True)
    return out


def plot_simulation(result, directory, markers=None) -> list[Path]:
    """Write ``markers.png`` (x and y, and z in space, of the markers against time, like the
    Jansen benchmark's Figure 2; ``markers``: the names, default all) and ``invariants.png``
    (energy variation and the position and velocity constraint norms on a log scale, like
    its Figure 3; exact zeros are left out of the log panels). Returns the paths."""
    plt = _pyplot()
    out = output_directory("plot_simulation", directory)
    paths = []
    model = result.model
    names = list(model.marker_names) if markers is None else list(markers)
    for name in names:
        if name not in model.marker_names:
            raise UnknownNameError(f"model {model.name!r} has no marker {name!r} (markers: "
                                   f"{name_list(model.marker_names)})")
    if names:
        dim = model.marker_dimension
        fig, axes = plt.subplots(dim, 1, sharex=True, figsize=(8, 3 * dim),
                                 layout="constrained")
        for name in names:
            p = result.marker(name)
            for k, ax in enumerate(axes):
                ax.plot(result.t, p[:, k], label=name)
        for ax, label in zip(axes, "xyz"):
            ax.set_ylabel(f"{label} [m]")
            ax.grid(True)
            _readable_axis(ax)
        axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
        axes[-1].set_xlabel("t [s]")
        fig.suptitle(f"{model.name}: markers {', '.join(names)}")
        paths.append(out / "markers.png")
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(8, 8), layout="constrained")
    energy = result.energy
    axes[0].plot(result.t, energy - energy[0], label="E - E(0)")
    driven = model.kernels.driver_work_index >= 0
    if model.force_names or driven:   # the balance E - E(0) = W
        what = " and ".join(w for w, on in (("force elements", model.force_names),
                                            ("drivers", driven)) if on)
        axes[0].plot(result.t, result.work, "--", label=f"work W of the {what}")
        axes[0].legend()
    axes[0].set_ylabel("E - E(0) [J]")
    _log_panel(axes[1], result.t, result.phi_norm, "|Phi|")
    _log_panel(axes[2], result.t, result.phid_norm, "|Phi_q v + Phi_t|")
    for ax in axes:
        ax.grid(True)
    axes[-1].set_xlabel("t [s]")
    fig.suptitle(f"{model.name}: energy variation and constraint violations")
    paths.append(out / "invariants.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def distinct_colors(n: int) -> list:
    """n colours no two of which are alike: matplotlib's tab10 or tab20 where they suffice,
    else n samples of the turbo colour map (the default cycle repeats after ten)."""
    import matplotlib

    if n <= 10:
        return [matplotlib.colormaps["tab10"](i) for i in range(n)]
    if n <= 20:
        return [matplotlib.colormaps["tab20"](i) for i in range(n)]
    return [matplotlib.colormaps["turbo"](x) for x in np.linspace(0.05, 0.95, n)]


def label_3d_axes(ax, space: str) -> None:
    """x, y, z with their units: metres for spatial linkages, the unit sphere's radius for
    spherical ones (directions from its centre)."""
    unit = "unit-sphere radii" if space == "spherical" else "m"
    ax.set_xlabel(f"x [{unit}]")
    ax.set_ylabel(f"y [{unit}]")
    ax.set_zlabel(f"z ({unit})")


def _trajectories_3d(plt, result, path) -> Path:
    """Marker paths of a spherical linkage on its unit sphere (drawn as a wireframe) or of a
    spatial one, in 3D with equal axis scales; each path's start is marked."""
    model = result.model
    fig = plt.figure(figsize=(7, 6.5), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    if model.space == "spherical":
        u, w = np.meshgrid(np.linspace(0, 2 * np.pi, 37), np.linspace(0, np.pi, 19))
        ax.plot_wireframe(np.cos(u) * np.sin(w), np.sin(u) * np.sin(w), np.cos(w),
                          color="0.85", linewidth=0.5)
    points = []
    for name, color in zip(model.marker_names, distinct_colors(len(model.marker_names))):
        p = result.marker(name)
        points.append(p)
        line, = ax.plot(p[:, 0], p[:, 1], p[:, 2], label=name, color=color)
        ax.scatter(*p[0], color=line.get_color(), s=12)
    allp = np.concatenate(points)
    ax.set_box_aspect(np.maximum(np.ptp(allp, axis=0), 1e-3 * np.ptp(allp).max())
                      if model.space != "spherical" else (1, 1, 1))
    label_3d_axes(ax, model.space)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small")
    ax.set_title(f"{model.name} ({model.space}): marker paths")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def runs_back(t) -> bool:
    """Whether ``t`` goes back somewhere: a kinematic analysis whose input was run back at
    its limit positions (``at_limit="reverse"``), whose ``t`` is the input's schedule."""
    return bool(np.any(np.diff(np.asarray(t, dtype=float)) < 0))


def travelled(t) -> np.ndarray:
    """``t`` itself where it never goes back (:func:`runs_back`); else t[0] plus the
    schedule travelled so far (the sum of ``abs(dt)``), the time axis along which the rows
    come in order."""
    t = np.asarray(t, dtype=float)
    if not runs_back(t):
        return t
    return t[0] + np.concatenate([[0.0], np.cumsum(np.abs(np.diff(t)))])


def plot_kinematics(result, directory) -> list[Path]:
    """Write ``trajectories.png`` (every marker's path; in 3D for spherical linkages, on their
    unit sphere, and spatial ones) and, per body, ``body_<name>.png``:
    the signed components of its velocity and acceleration (centre of mass) and, for a body
    that turns, its angular velocity and acceleration, against time."""
    plt = _pyplot()
    out = output_directory("plot_kinematics", directory)
    model = result.model
    paths = []
    if model.marker_names and model.marker_dimension == 3:
        paths.append(_trajectories_3d(plt, result, out / "trajectories.png"))
    elif model.marker_names:
        fig, ax = plt.subplots(figsize=(7, 6), layout="constrained")
        for name in model.marker_names:
            p = result.marker(name)
            ax.plot(p[:, 0], p[:, 1], label=name)
        ax.set_aspect("equal")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.legend()
        ax.grid(True)
        ax.set_title(f"{model.name}: marker trajectories")
        paths.append(out / "trajectories.png")
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)
    # a schedule run back at limit positions goes back and forth in t: against the
    # schedule travelled, the rows are drawn in order
    x = travelled(result.t)
    x_label = "input schedule travelled [s]" if runs_back(result.t) else "t [s]"
    for body in model.body_names:
        v, a = result.body_velocity(body), result.body_acceleration(body)
        omega, alpha = result.body_angular_velocity(body), result.body_angular_acceleration(body)
        axes_ = "xyz"[:v.shape[1]]
        panels = [(tuple(v.T), tuple(f"v{c}" for c in axes_), "v [m/s]"),
                  (tuple(a.T), tuple(f"a{c}" for c in axes_), "a [m/s^2]")]
        if np.any(omega != 0) or np.any(alpha != 0):   # a slider has no rotation to show
            if omega.ndim == 2:     # a spatial body's: vectors in global axes
                panels += [(tuple(omega.T), ("omega_x", "omega_y", "omega_z"),
                            "omega [rad/s]"),
                           (tuple(alpha.T), ("alpha_x", "alpha_y", "alpha_z"),
                            "alpha [rad/s^2]")]
            else:
                panels += [((omega,), ("omega",), "omega [rad/s]"),
                           ((alpha,), ("alpha",), "alpha [rad/s^2]")]
        fig, axes = plt.subplots(len(panels), 1, sharex=True,
                                 figsize=(8, 2.2 * len(panels) + 0.6), layout="constrained")
        for ax, (series, labels, unit) in zip(axes, panels):
            for y, label in zip(series, labels):
                ax.plot(x, y, label=label)
            ax.set_ylabel(unit)
            ax.grid(True)
            _readable_axis(ax)
            if len(series) > 1:
                ax.legend(loc="upper right", fontsize="small")
        axes[-1].set_xlabel(x_label)
        fig.suptitle(f"{model.name}: body {body}")
        paths.append(out / f"body_{body}.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


def plot_contacts(result, directory) -> list[Path]:
    """Write ``contacts.png``: per contact, its normal force and (with friction) its friction
    force against time, and the lowest point of its circle relative to the line (the
    g_N of Zheng and Wang's walker: negative while the circle penetrates). Returns the paths."""
    plt = _pyplot()
    out = output_directory("plot_contacts", directory)
    model = result.model
    contacts = [name for _, name, _ in model.force_info["contacts"]]
    if not contacts:
        return []
    frictions = {f[0] for f in model.force_info["frictions"]}
    gap = model.kernels.arrays["rec_law_par"].reshape(-1, 4)[:, 3]
    sense = model.kernels.arrays["rec_law_sense"]   # -1: a clearance, pressing s down
    fig, axes = plt.subplots(len(contacts), 2, sharex=True, squeeze=False,
                             figsize=(11, 2.8 * len(contacts) + 1), layout="constrained")
    for row, name in enumerate(contacts):
        rec = model.force_info["elements"][name][0][0]
        ax = axes[row, 0]
        ax.plot(result.t, sense[rec] * result.element_force(name), label="normal F_N")
        if name in frictions:
            ax.plot(result.t, result.friction_force(name), label="friction F_T")
        ax.set_ylabel(f"{name} [N]")
        ax.legend(loc="upper right")
        ax.grid(True)
        ax = axes[row, 1]
        ax.plot(result.t, sense[rec] * (result.element_coordinate(name) - gap[rec]))
        ax.axhline(0.0, color="k", lw=0.5)
        ax.set_ylabel(f"{name} g_N [m]")
        ax.grid(True)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    fig.suptitle(f"{model.name}: contact forces and lowest points")
    path = out / "contacts.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def plot_gait(result, directory, legs=("leg1", "leg2"), hip="hip") -> list[Path]:
    """Write ``gait.png`` for a walker (Zheng and Wang's Figures 6-10): the legs' swing angles
    (counterclockwise from -y, the floor's normal pointing down) against time, their phase
    portraits, the hip's trajectory, and ``contacts.png`` (:func:`plot_contacts`)."""
    plt = _pyplot()
    out = output_directory("plot_gait", directory)
    model = result.model
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), layout="constrained")
    for leg in legs:
        theta = result.body_angle(leg) + 0.5 * np.pi   # u = (sin theta, -cos theta)
        omega = result.body_angular_velocity(leg)
        axes[0, 0].plot(result.t, theta, label=leg)
        axes[0, 1].plot(theta, omega, lw=0.8, label=leg)
    axes[0, 0].set_xlabel("t [s]")
    axes[0, 0].set_ylabel("theta [rad]")
    axes[0, 1].set_xlabel("theta [rad]")
    axes[0, 1].set_ylabel("dtheta/dt [rad/s]")
    p = result.marker(hip)
    axes[1, 0].plot(p[:, 0], p[:, 1])
    axes[1, 0].set_xlabel("hip x (down the slope) [m]")
    axes[1, 0].set_ylabel("hip y [m]")
    axes[1, 1].plot(result.t, p[:, 0])
    axes[1, 1].set_xlabel("t [s]")
    axes[1, 1].set_ylabel("hip x [m]")
    for ax in axes.flat:
        ax.grid(True)
    axes[0, 0].legend()
    axes[0, 1].legend()
    fig.suptitle(f"{model.name}: swing angles, phase portraits, hip")
    path = out / "gait.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path] + plot_contacts(result, out)
