"""Problems of the IFToMM library of computational benchmark problems for multibody dynamics
(Gonzalez, Dopico, Lugris and Cuadrado, 2006), built with linkdyn, with the exact solutions
they have.

``simple_pendulum()`` is problem A01: a lumped mass of 1 kg on a massless link of 1 m,
released at rest from the horizontal (point P1 at x = +1 m), under gravity 9.81 m/s^2 in -y.
linkdyn's bodies need a positive inertia about their centre of mass: the lump gets 1e-12
kg m^2, which changes the period by a relative 5e-13 (the exact solution accounts for it).

``nfourbar(n)`` is problem A02: ``n`` parallelogram windows of ``2 n + 1`` bars (1 m, 1 kg,
uniform), ``n + 1`` rockers pinned to the ground 1 m apart and ``n`` couplers joining their
tops, starting with the rockers vertical and the top B0 of the first rocker moving at 1 m/s
in +x (the benchmark uses n = 40 and 20 s). Twice per revolution every bar lies on the
ground line, and the degrees of freedom jump from 1 to n + 1.

``pendulum_exact`` and ``nfourbar_exact`` give the reference motions: the pendulum in closed
form (Jacobi elliptic functions), the parallelogram from its one angle (an ODE in one
coordinate solved to 1e-13 by SciPy).
"""

from __future__ import annotations

import math

import numpy as np

from ..description import ModelBuilder
from ..errors import ModelError
from ..laws import linear
from ..model import Model

__all__ = ["simple_pendulum", "pendulum_exact", "nfourbar", "nfourbar_exact", "GRAVITY"]

#: Gravity of the benchmark problems (m/s^2, acting in -y).
GRAVITY = 9.81
#: Inertia (kg m^2) given to A01's lumped mass about its centre.
LUMP_INERTIA = 1e-12


def simple_pendulum() -> Model:
    """IFToMM problem A01. Marker ``P1`` is the lumped mass; joint ``J`` the pivot."""
    b = ModelBuilder("iftomm_a01", gravity=(0.0, -GRAVITY))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("lump", mass=1.0, inertia=LUMP_INERTIA,
               points={"pin": (-1.0, 0.0), "centre": (0.0, 0.0)}, position=(1.0, 0.0))
    b.add_revolute("J", "lump.pin", "ground.O")
    b.add_marker("P1", "lump.centre")
    return b.build()


def pendulum_exact(t) -> np.ndarray:
    """Exact position (n, 2) of A01's P1 at times ``t``: with phi the angle from the
    downward vertical, sin(phi / 2) = k sn(K - w t, k), k = sin(pi / 4), w^2 = m g L / I."""
    from scipy.special import ellipj, ellipk

    t = np.asarray(t, dtype=float)
    k2 = 0.5                                   # k^2 = sin^2(phi0 / 2), phi0 = pi / 2
    w = math.sqrt(GRAVITY / (1.0 + LUMP_INERTIA))
    sn, _, _, _ = ellipj(ellipk(k2) - w * t, k2)
    phi = 2.0 * np.arcsin(math.sqrt(k2) * sn)
    return np.column_stack([np.sin(phi), -np.cos(phi)])


def nfourbar(n: int = 40, speed: float = 1.0, driven: bool = False) -> Model:
    """IFToMM problem A02 with ``n`` windows. Bars ``R0..Rn`` (rockers, pinned to the ground
    at ``O<i>`` = (i, 0) by joints ``G<i>``) and ``C0..C(n-1)`` (couplers, joints ``L<i>`` and
    ``T<i>`` to the tops of ``R<i>`` and ``R<i+1>``); marker ``B0`` at the top of ``R0``,
    which starts at (0, 1) moving at ``speed`` m/s in +x. ``driven``: the angle driver
    ``crank`` turns R0 at the constant rate ``-speed`` rad/s (for kinematics; the rockers'
    angle is then pi/2 - speed t), which does not cross the singular configurations only
    when kept away from them (t speed < pi/2)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ModelError(f"nfourbar: n must be a positive integer, got {n!r}")
    speed = float(speed)
    if not math.isfinite(speed):
        raise ModelError(f"nfourbar: speed must be finite, got {speed!r}")
    b = ModelBuilder(f"nfourbar{n}", gravity=(0.0, -GRAVITY))
    for i in range(n + 1):
        b.add_ground_point(f"O{i}", (float(i), 0.0))
        b.add_bar(f"R{i}", length=1.0, mass=1.0, position=(float(i), 0.5), u=(0.0, 1.0),
                  velocity=(0.5 * speed, 0.0), omega=-speed)
        b.add_revolute(f"G{i}", f"R{i}.a", f"ground.O{i}")
    for i in range(n):
        b.add_bar(f"C{i}", length=1.0, mass=1.0, position=(i + 0.5, 1.0), u=(1.0, 0.0),
                  velocity=(speed, 0.0))
        b.add_revolute(f"L{i}", f"C{i}.a", f"R{i}.b")
        b.add_revolute(f"T{i}", f"C{i}.b", f"R{i + 1}.b")
    if driven:
        # The relative angle of G0 is the ground's minus R0's: -pi/2 at the start.
        b.add_angle_driver("crank", "G0", linear(-math.pi / 2, speed))
    b.add_marker("B0", "R0.b")
    return b.build()


def nfourbar_exact(n: int, t, speed: float = 1.0) -> np.ndarray:
    """Exact position (len(t), 2) of A02's B0: every rocker turns by the same angle theta
    (from +x), J theta'' = -K cos(theta), with J = (n + 1) / 3 + n (rockers about their pins,
    couplers translating) and K = g ((n + 1) / 2 + n), theta(0) = pi / 2,
    theta'(0) = -speed."""
    from scipy.integrate import solve_ivp

    t = np.asarray(t, dtype=float)
    J = (n + 1) / 3.0 + n
    K = GRAVITY * ((n + 1) / 2.0 + n)
    sol = solve_ivp(lambda _, y: [y[1], -K / J * math.cos(y[0])], (0.0, float(t[-1])),
                    [math.pi / 2, -float(speed)], method="DOP853", rtol=1e-13, atol=1e-13,
                    t_eval=t)
    return np.column_stack([np.cos(sol.y[0]), np.sin(sol.y[0])])
