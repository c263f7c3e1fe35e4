"""Plots of simulation results (matplotlib, written to files; no screen needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_simulation(result, directory) -> list[Path]:
    """Write ``markers.png`` (x and y of the first marker against time, like the Jansen
    seed's Figure 2 for P3) and ``invariants.png`` (energy variation and the position and
    velocity constraint norms on a log scale, like its Figure 3). Returns the paths."""
    plt = _pyplot()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    model = result.model
    if model.marker_names:
        name = model.marker_names[0]
        p = result.marker(name)
        fig, axes = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
        for ax, k, label in zip(axes, (0, 1), ("x", "y")):
            ax.plot(result.t, p[:, k])
            ax.set_ylabel(f"{name}.{label} [m]")
            ax.grid(True)
        axes[-1].set_xlabel("t [s]")
        fig.suptitle(f"{model.name}: marker {name}")
        paths.append(out / "markers.png")
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(8, 8))
    energy = result.energy
    axes[0].plot(result.t, energy - energy[0], label="E - E(0)")
    if model.force_names:   # the balance E - E(0) = W of the force elements
        axes[0].plot(result.t, result.work, "--", label="work W of the force elements")
        axes[0].legend()
    axes[0].set_ylabel("E - E(0) [J]")
    tiny = np.finfo(float).tiny
    axes[1].semilogy(result.t, np.maximum(result.phi_norm, tiny))
    axes[1].set_ylabel("|Phi|")
    axes[2].semilogy(result.t, np.maximum(result.phid_norm, tiny))
    axes[2].set_ylabel("|Phi_q v + Phi_t|")
    for ax in axes:
        ax.grid(True)
    axes[-1].set_xlabel("t [s]")
    fig.suptitle(f"{model.name}: energy variation and constraint violations")
    paths.append(out / "invariants.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def plot_kinematics(result, directory) -> list[Path]:
    """Write ``trajectories.png`` (every marker's path) and, per body, ``body_<name>.png``
    (speed, angular velocity, acceleration magnitude and angular acceleration against time)."""
    plt = _pyplot()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    model = result.model
    paths = []
    if model.marker_names:
        fig, ax = plt.subplots(figsize=(7, 6))
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
    for body in model.body_names:
        fig, axes = plt.subplots(4, 1, sharex=True, figsize=(8, 9))
        series = [(np.linalg.norm(result.body_velocity(body), axis=1), "|v| [m/s]"),
                  (result.body_angular_velocity(body), "omega [rad/s]"),
                  (np.linalg.norm(result.body_acceleration(body), axis=1), "|a| [m/s^2]"),
                  (result.body_angular_acceleration(body), "alpha [rad/s^2]")]
        for ax, (y, label) in zip(axes, series):
            ax.plot(result.t, y)
            ax.set_ylabel(label)
            ax.grid(True)
        axes[-1].set_xlabel("t [s]")
        fig.suptitle(f"{model.name}: body {body}")
        paths.append(out / f"body_{body}.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths
