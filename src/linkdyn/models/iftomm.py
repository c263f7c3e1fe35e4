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

``andrews()`` is problem A03, Andrews' squeezing mechanism (seven bodies, ten revolute joints,
a spring and a constant torque, no gravity; 0.03 s), with the data and initial state of the
Test Set for IVP Solvers (Mazzia and Magherini, problem "andrews", after Hairer and Wanner):
``andrews_angles(result)`` gives its seven angles (beta, Theta, gamma, Phi, delta, Omega,
epsilon) from a linkdyn result, and ``ANDREWS_REFERENCE`` the test set's reference values at
t = 0.03 s, an independent solution in those angles.

``pendulum_exact`` and ``nfourbar_exact`` give the reference motions: the pendulum in closed
form (Jacobi elliptic functions), the parallelogram from its one angle (an ODE in one
coordinate solved to 1e-13 by SciPy).
"""

from __future__ import annotations

import math

import numpy as np

from ..compile.model import Model, check_model_size
from ..describe.builder import ModelBuilder
from ..elements.laws import linear
from ..errors import ArgumentError, ModelError

__all__ = ["simple_pendulum", "pendulum_exact", "nfourbar", "nfourbar_exact", "andrews",
           "andrews_angles", "ANDREWS_REFERENCE", "ANDREWS_T_END", "GRAVITY"]

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
    check_model_size(n, 2e4, "nfourbar", "windows")   # 8.5 kB a window measured
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


# -- A03: Andrews' squeezing mechanism -----------------------------------------------------
# Data of the test set (lengths in m, masses in kg, inertias about the centres in kg m^2).
_ANDREWS = dict(
    m=(0.04325, 0.00365, 0.02373, 0.00706, 0.07050, 0.00706, 0.05498),
    inertia=(2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5),
    A=(-0.06934, -0.00227), B=(-0.03635, 0.03273), C=(0.014, 0.072),
    d=0.028, da=0.0115, e=0.02, ea=0.01421, rr=0.007, ra=0.00092,
    ss=0.035, sa=0.01874, sb=0.01043, sc=0.018, sd=0.02, ta=0.02308, tb=0.00916,
    u=0.04, ua=0.01228, ub=0.00449, zf=0.02, zt=0.04, fa=0.01421,
    stiffness=4530.0, free_length=0.07785, torque=0.033)
#: Consistent initial angles (rad) of the test set: beta, Theta, gamma, Phi, delta, Omega,
#: epsilon (at rest).
ANDREWS_INITIAL = (-0.0617138900142764496358948458001, 0.0,
                   0.455279819163070380255912382449, 0.222668390165885884674473185609,
                   0.487364979543842550225598953530, -0.222668390165885884674473185609,
                   1.23054744454982119249735015568)
#: End time (s) of the test set's run and its reference angles there (rad), same order.
ANDREWS_T_END = 0.03
ANDREWS_REFERENCE = (15.81077119629904, -15.75637105984298, 0.04082224013073101,
                     -0.5347301163226948, 0.5244099658805304, 0.5347301163226948,
                     1.048080741042263)
#: Bodies of andrews(), and the absolute angle each carries: beta, beta + Theta, gamma,
#: Phi + delta, delta, Omega + epsilon, epsilon.
ANDREWS_BODIES = ("crank", "rod", "triangle", "link4", "lever5", "link6", "lever7")


def _e(angle):
    return np.array([math.cos(angle), math.sin(angle)])


def _andrews_points():
    """World positions of the mechanism's points and centres of mass at the initial angles:
    {body: (centre, {point: position})}."""
    p = _ANDREWS
    beta, theta, gamma, phi, delta, omega, eps = ANDREWS_INITIAL
    O, A, B = np.zeros(2), np.array(p["A"]), np.array(p["B"])
    F = p["rr"] * _e(beta)
    E = F - p["d"] * _e(beta + theta)
    G = A + p["zt"] * _e(delta)
    H = A + p["u"] * np.array([math.sin(eps), -math.cos(eps)])

    def frame(angle, x, y):        # a point (x, y) of a frame turned by angle
        return x * _e(angle) + y * _e(angle + math.pi / 2)

    D = B + frame(gamma, p["sd"], -p["sc"])
    return {
        "crank": (p["ra"] * _e(beta), {"O": O, "F": F}),
        "rod": (F - p["da"] * _e(beta + theta), {"F": F, "E": E}),
        "triangle": (B + frame(gamma, p["sb"], -p["sa"]), {"B": B, "D": D, "E": E}),
        "link4": (G + (p["e"] - p["ea"]) * (E - G) / p["e"], {"G": G, "E": E}),
        "lever5": (A + frame(delta, p["ta"], p["tb"]), {"A": A, "G": G}),
        "link6": (H + (p["zf"] - p["fa"]) * (E - H) / p["zf"], {"H": H, "E": E}),
        "lever7": (A + (p["ua"] / p["u"]) * (H - A) + frame(eps, p["ub"], 0.0),
                   {"A": A, "H": H}),
    }


def andrews() -> Model:
    """IFToMM problem A03, Andrews' squeezing mechanism (the test set's data, in m, kg, s):
    bodies ``crank`` (O-F, driven by the torque ``motor`` of 0.033 N m), ``rod`` (F-E),
    ``triangle`` (B-D-E, pinned to the ground at B), ``link4`` (G-E), ``lever5`` (A-G),
    ``link6`` (H-E) and ``lever7`` (A-H), pinned together at E, F, G and H and to the ground
    at O, A and B; the spring ``spring`` (4530 N/m, free length 0.07785 m) from the ground
    point C to the triangle's D; no gravity; at rest at the test set's initial angles. Each
    body's frame is the world frame at the start (its angle counts the rotation since)."""
    p = _ANDREWS
    b = ModelBuilder("andrews", gravity=(0.0, 0.0))
    for name, xy in (("O", (0.0, 0.0)), ("A", p["A"]), ("B", p["B"]), ("C", p["C"])):
        b.add_ground_point(name, tuple(float(v) for v in xy))
    for k, (name, (centre, points)) in enumerate(_andrews_points().items()):
        b.add_body(name, mass=p["m"][k], inertia=p["inertia"][k], position=tuple(centre),
                   angle=0.0, points={n: tuple(x - centre) for n, x in points.items()})
    b.add_revolute("O", "crank.O", "ground.O")
    b.add_revolute("F", "crank.F", "rod.F")
    b.add_revolute("E3", "rod.E", "triangle.E")
    b.add_revolute("E4", "rod.E", "link4.E")
    b.add_revolute("E6", "rod.E", "link6.E")
    b.add_revolute("B", "triangle.B", "ground.B")
    b.add_revolute("G", "link4.G", "lever5.G")
    b.add_revolute("A5", "lever5.A", "ground.A")
    b.add_revolute("A7", "lever7.A", "ground.A")
    b.add_revolute("H", "link6.H", "lever7.H")
    b.add_spring_damper("spring", "ground.C", "triangle.D", stiffness=p["stiffness"],
                        free_length=p["free_length"])
    b.add_torque("motor", "crank", p["torque"])
    b.set_run_defaults(t_end=0.03)   # the test set's interval, 0 .. 0.03 s
    return b.build()


def andrews_angles(result) -> np.ndarray:
    """The test set's angles (n, 7): beta, Theta, gamma, Phi, delta, Omega, epsilon (rad),
    from the bodies' rotations in a result of :func:`andrews`, continuous over turns (the
    crank turns 2.5 times in 0.03 s: the output rows must be close enough to count them)."""
    turn = np.column_stack([result.body_angle(b) - result.body_angle(b)[0]
                            for b in ANDREWS_BODIES])
    # Turns are counted from row to row: rows a half turn apart cannot tell +pi from -pi.
    if len(turn) > 1 and np.abs(np.diff(turn, axis=0)).max() > 0.9 * math.pi:
        raise ArgumentError("andrews_angles: a body turns by about half a turn between two "
                            "output rows, so its turns cannot be counted; ask for more output "
                            "times (dt_out = 1e-4 s is enough)")
    beta0, theta0, gamma0, phi0, delta0, omega0, eps0 = ANDREWS_INITIAL
    beta = beta0 + turn[:, 0]
    gamma = gamma0 + turn[:, 2]
    delta = delta0 + turn[:, 4]
    eps = eps0 + turn[:, 6]
    return np.column_stack([beta, beta0 + theta0 + turn[:, 1] - beta, gamma,
                            phi0 + delta0 + turn[:, 3] - delta, delta,
                            omega0 + eps0 + turn[:, 5] - eps, eps])
