"""A planar Warren truss of ``panels`` panels swinging about its first node: a closed-loop
mechanism of any size (``4 panels - 1`` bars, ``2 panels - 1`` triangular loops) whose motion
is known, for tests and benchmarks at scale.

All bars are equal (``length`` m, ``mass`` kg, uniform): bottom chord ``B0..B(n-1)`` from
node ``b_i`` = (i a, 0) to ``b_(i+1)``, top chord ``T0..T(n-2)`` from ``t_i`` = ((i + 1/2) a,
a sqrt(3)/2) to ``t_(i+1)``, and diagonals ``U_i`` (``b_i`` to ``t_i``) and ``D_i`` (``t_i``
to ``b_(i+1)``). At a node where k bar ends meet, k - 1 revolute joints pin them to the first
end there; node ``b_0`` is pinned to the ground point ``O`` at the origin by joint ``pin``.
A simple truss (each new node added with two bars) has no redundant constraint: the truss is
one rigid body with one degree of freedom, the angle phi it has turned (counter-clockwise,
zero as built, horizontal). Under gravity it swings as a compound pendulum released at rest
from the horizontal; ``driven=True`` instead turns it at ``rate`` rad/s with the angle driver
``turn`` on ``pin`` (for kinematics: every point turns rigidly about O).

Markers: ``tip``, the last bottom node ``b_n``.
"""

from __future__ import annotations

import math

import numpy as np

from ..compile.model import Model, check_model_size
from ..describe.builder import ModelBuilder
from ..elements.laws import linear
from ..errors import ModelError

__all__ = ["truss", "truss_exact", "truss_nodes"]

GRAVITY = 9.81


def _check(panels, length, mass):
    if isinstance(panels, bool) or not isinstance(panels, int) or panels < 1:
        raise ModelError(f"truss: panels must be a positive integer, got {panels!r}")
    check_model_size(panels, 4e4, "truss", "panels")   # 19.5 kB a panel measured
    for name, value in (("length", length), ("mass", mass)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ModelError(f"truss: {name} must be a positive number, got {value!r}")


def truss_nodes(panels: int, length: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Initial positions (m) of the bottom nodes (panels + 1, 2) and top nodes (panels, 2)."""
    a = float(length)
    bottom = np.column_stack([a * np.arange(panels + 1), np.zeros(panels + 1)])
    top = np.column_stack([a * (np.arange(panels) + 0.5), np.full(panels, a * math.sqrt(3) / 2)])
    return bottom, top


def _bars(panels, length):
    """(name, start, end) of every bar, with the node keys ('b', i) / ('t', i) it joins."""
    bars = []
    for i in range(panels):
        bars.append((f"B{i}", ("b", i), ("b", i + 1)))
        bars.append((f"U{i}", ("b", i), ("t", i)))
        bars.append((f"D{i}", ("t", i), ("b", i + 1)))
        if i < panels - 1:
            bars.append((f"T{i}", ("t", i), ("t", i + 1)))
    return bars


def truss(panels: int, length: float = 1.0, mass: float = 1.0, driven: bool = False,
          rate: float = 1.0) -> Model:
    """The Warren truss described in :mod:`linkdyn.models.warren`."""
    _check(panels, length, mass)
    bottom, top = truss_nodes(panels, length)
    where = {("b", i): bottom[i] for i in range(panels + 1)}
    where.update({("t", i): top[i] for i in range(panels)})
    b = ModelBuilder(f"truss{panels}", gravity=(0.0, -GRAVITY))
    b.add_ground_point("O", (0.0, 0.0))
    ends = {}
    for name, start, end in _bars(panels, length):
        p, q = where[start], where[end]
        u = (q - p) / float(length)
        b.add_bar(name, length=float(length), mass=float(mass),
                  position=tuple(0.5 * (p + q)), u=tuple(u))
        ends.setdefault(start, []).append(f"{name}.a")
        ends.setdefault(end, []).append(f"{name}.b")
    for key, refs in ends.items():
        for k, ref in enumerate(refs[1:], start=1):
            b.add_revolute(f"N{key[0]}{key[1]}_{k}", ref, refs[0])
    b.add_revolute("pin", ends[("b", 0)][0], "ground.O")
    if driven:
        # The relative angle of pin is the ground's minus B0's: -phi.
        b.add_angle_driver("turn", "pin", linear(0.0, -float(rate)))
    b.add_marker("tip", f"B{panels - 1}.b")
    return b.build()


def truss_exact(panels: int, t, length: float = 1.0) -> np.ndarray:
    """The angle phi(t) (rad) of the truss swinging from rest, horizontal, as a compound
    pendulum: I_O phi'' = -M g (c_x cos phi - c_y sin phi), with I_O the truss's moment of
    inertia about O and c its initial centre of mass (solved to 1e-13 by SciPy). Independent
    of the bars' mass."""
    from scipy.integrate import solve_ivp

    _check(panels, length, 1.0)
    bottom, top = truss_nodes(panels, length)
    where = {("b", i): bottom[i] for i in range(panels + 1)}
    where.update({("t", i): top[i] for i in range(panels)})
    centres = np.array([0.5 * (where[s] + where[e]) for _, s, e in _bars(panels, length)])
    count = len(centres)                   # bars of unit mass
    c = centres.mean(axis=0)
    inertia = count * length**2 / 12.0 + float(np.sum(centres**2))
    k = count * GRAVITY / inertia
    t = np.asarray(t, dtype=float)
    sol = solve_ivp(lambda _, y: [y[1], -k * (c[0] * math.cos(y[0]) - c[1] * math.sin(y[0]))],
                    (0.0, float(t[-1])), [0.0, 0.0], method="DOP853", rtol=1e-13, atol=1e-13,
                    t_eval=t)
    return sol.y[0]
