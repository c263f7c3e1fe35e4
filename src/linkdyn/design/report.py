"""A design report of a planar linkage over a computed motion: every metric of
:mod:`linkdyn.design.metrics` that applies, gathered for printing (``linkdyn kinematics
MODEL --metrics``) and plotting (``metrics.png``).

    report = cycle_metrics(linkdyn.kinematics("crank_rocker", times))
    report.transmission["C"]        # (min, max) rad over the motion
    report.limits["rocker"]         # the rocker's limit positions
    report.curves["P"]              # the coupler curve's features
    report.torque["input"]          # the input torque (kinetostatics), N m per row
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..elements.bodies import GROUND
from ..elements.joints import RevoluteSpec
from ..errors import counted, summary
from .metrics import (checked_result, coupler_curve, cycle_end, dead_centres, has_link_lines,
                      input_torque, limit_positions, transmission_angle)

__all__ = ["CycleMetrics", "cycle_metrics", "plot_cycle_metrics", "format_cycle_metrics"]


@dataclass(frozen=True)
class CycleMetrics:
    """Metrics of a planar linkage over a motion (``t``, s).

    ``transmission``: joint -> (n,) transmission angle (rad) at each revolute joint between
    two moving links; ``dead_centres``: joint -> [Position]; ``limits``: body -> [Position]
    where a body's rotation reverses; ``curves``: marker -> :class:`CouplerCurve`;
    ``torque``: driver -> (n,) what it must apply (kinetostatics; models with masses only);
    ``grashof``: the four-bar's class, when the model is a four-bar Linkage."""

    model_name: str
    t: np.ndarray
    transmission: dict = field(default_factory=dict)
    dead_centres: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)
    curves: dict = field(default_factory=dict)
    torque: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        dead = sum(map(len, self.dead_centres.values()))
        limits = sum(map(len, self.limits.values()))
        return summary("CycleMetrics", self.model_name, self.t,
                       f"transmission at {counted(len(self.transmission), 'joint')}",
                       counted(dead, "dead centre"), counted(limits, "limit position"),
                       counted(len(self.curves), "coupler curve"),
                       f"torque of {counted(len(self.torque), 'driver')}")


def cycle_metrics(result) -> CycleMetrics:
    """Every metric that applies to ``result`` (a planar kinematics or simulation result),
    over the first cycle of a kinematic analysis whose motion repeats (a crank turned more
    than once: the later rows would list every dead centre and limit position again)."""
    model = checked_result(result, "cycle_metrics")
    # a joint whose link has no line (a slider's body with its centre of mass at the joint
    # and no other revolute joint: no transmission angle there) is left out
    joints = [j for j in model.description.joints if isinstance(j, RevoluteSpec)
              and GROUND not in (j.first[0], j.second[0]) and j.first[0] != j.second[0]
              and has_link_lines(model, j.name)]
    result = _first_cycle(result)
    report = CycleMetrics(model.name, np.asarray(result.t, dtype=float))
    for j in joints:
        report.transmission[j.name] = transmission_angle(result, j.name)
        report.dead_centres[j.name] = dead_centres(result, j.name)
    described = {b.name for b in model.description.bodies}
    for body in model.body_names:
        if body in described:
            found = limit_positions(result, body)
            if found:
                report.limits[body] = found
    if len(result.t) >= 3:
        for m in model.marker_names:
            report.curves[m] = coupler_curve(result, m)
    dynamic = model.dynamic and not getattr(model.description, "kinematic", False)
    if dynamic and hasattr(result, "a"):
        for d in model.driver_names:
            report.torque[d] = input_torque(result, d)
    return report


def _first_cycle(result):
    """A kinematic analysis cut after its first cycle, where the motion repeats (see
    :func:`linkdyn.design.coupler_curve`): the later rows would list every dead centre and
    limit position again. Other results as they are."""
    from ..solve.kinematics import KinematicsResult

    if not isinstance(result, KinematicsResult) or len(result.t) < 4:
        return result
    end = cycle_end(result, None, None)
    if end >= len(result.t):
        return result
    return replace(result, t=result.t[:end], q=result.q[:end], v=result.v[:end],
                   a=result.a[:end], rcond=result.rcond[:end],
                   singularities=tuple(s for s in result.singularities
                                       if s.t <= result.t[end - 1]),
                   limits=tuple(x for x in result.limits if x[1] < end))


def format_cycle_metrics(report: CycleMetrics) -> list:
    """The report as lines of text."""
    lines = []
    for joint, mu in report.transmission.items():
        worst = int(np.argmax(np.abs(mu - math.pi / 2)))
        lines.append(f"  transmission angle at {joint}: {math.degrees(mu.min()):.2f} to "
                     f"{math.degrees(mu.max()):.2f} deg (worst {math.degrees(mu[worst]):.2f} deg "
                     f"at t = {report.t[worst]:.6g} s)")
        for p in report.dead_centres[joint]:
            lines.append(f"    dead centre at t = {p.t:.6g} s (angle {math.degrees(p.value):g} "
                         "deg)")
    for body, found in report.limits.items():
        text = ", ".join(f"t = {p.t:.6g} s at {math.degrees(p.value):.3f} deg" for p in found)
        lines.append(f"  {body} reverses: {text}")
    for marker, c in report.curves.items():
        lines.append(f"  path of {marker}: {c.width:.6g} m x {c.height:.6g} m, length "
                     f"{c.length:.6g} m, {'closed' if c.closed else 'open'}, "
                     f"{len(c.double_points)} double point(s), {len(c.cusps)} cusp(s)")
    for driver, torque in report.torque.items():
        lines.append(f"  input {driver}: {torque.min():.6g} to {torque.max():.6g} (N m or N), "
                     f"rms {math.sqrt(float(np.mean(torque**2))):.6g}")
    return lines


def plot_cycle_metrics(report: CycleMetrics, directory) -> Path:
    """Write ``metrics.png`` into ``directory``: transmission angles, and input torques when
    the report has them, against time, dead centres marked."""
    from ..results.plotting import _pyplot, output_directory

    plt = _pyplot()
    out = output_directory("plot_cycle_metrics", directory)
    panels = 1 + bool(report.torque)
    fig, axes = plt.subplots(panels, 1, figsize=(8, 3.2 * panels), squeeze=False,
                             layout="constrained")
    ax = axes[0, 0]
    for joint, mu in report.transmission.items():
        line = ax.plot(report.t, np.degrees(mu), label=joint)[0]
        for p in report.dead_centres[joint]:
            ax.plot([p.t], [math.degrees(p.value)], "o", color=line.get_color())
    ax.axhspan(40, 140, color="0.92", zorder=0)
    ax.set_ylabel("transmission angle [deg]")
    ax.set_title(f"{report.model_name}: transmission angles (shaded: 40 to 140 deg)")
    if report.transmission:
        ax.legend(fontsize="small")
    if report.torque:
        ax = axes[1, 0]
        for driver, torque in report.torque.items():
            ax.plot(report.t, torque, label=driver)
        ax.set_ylabel("input [N m or N]")
        ax.legend(fontsize="small")
    axes[-1, 0].set_xlabel("t [s]")
    path = out / "metrics.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
