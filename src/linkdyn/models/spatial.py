"""Built-in spatial models (bodies in natural coordinates, :mod:`linkdyn.compile.spatial`).

``heavy_top()``: a symmetric top about a fixed point, the classical heavy (Lagrange) top:
mass 1 kg, centre of mass on the symmetry axis 0.1 m from the pivot O = (0, 0, 0) (a
spherical joint to the ground), moments of inertia about the centre of mass 0.004 kg m^2
about the two transverse axes and 0.002 kg m^2 about the symmetry axis, gravity 9.81 m/s^2
along -z. At t = 0 its axis points along (sin 0.5, 0, cos 0.5) and it spins at 50 rad/s about
that axis, with no other angular velocity. Marker ``tip`` is on the axis, 0.2 m from O.
``heavy_top_nutation(...)`` gives the bounds of its axis' polar angle from the classical
cubic (Goldstein, "Classical Mechanics", section 5.7): an independent solution.

``bricard()``: Bricard's overconstrained linkage, problem A04 of the IFToMM library of
multibody benchmark problems: five rods of 1 m and 1 kg (square section 0.1 m) and the
ground, closed by six revolute joints; Grubler's count gives no freedom, yet it moves with
one, so one constraint row is redundant (simulate it with ``redundant="allow"``). Rod 1
runs from O = (0, 0, 0) along x, rod 2 down along -y, rod 3 along z, rod 4 back along -x
and rod 5 up along y to (0, 0, 1); the joints' axes are y, z, x, y, z and x (at O, between
the rods in turn, and at (0, 0, 1)). It starts at rest in that configuration, with gravity
9.81 m/s^2 along -y, and runs for 10 s (the initial state and the rods' inertia as the
benchmark's OpenSim implementation has them); marker ``P3`` is the end of rod 2 that
starts at (1, -1, 0). ``bricard(redundant_free=True)`` keeps of the last joint only the
rows that are not redundant (a universal joint, whose cross keeps rod 5's axis x
perpendicular to the ground's z): the same motion without redundant rows.
"""

from __future__ import annotations

import math

import numpy as np

from ..describe.spatial import SpatialModelBuilder

__all__ = ["heavy_top", "heavy_top_nutation", "HEAVY_TOP", "spatial_chain", "bricard",
           "BRICARD_T_END"]

#: The heavy top's data: mass (kg), distance of the centre of mass from the pivot (m),
#: transverse and axial moments about the centre of mass (kg m^2), initial polar angle of
#: the axis (rad), spin (rad/s), gravity (m/s^2).
HEAVY_TOP = dict(mass=1.0, l=0.1, transverse=0.004, axial=0.002, theta0=0.5, spin=50.0,
                 g=9.81)


def heavy_top(theta0: float = HEAVY_TOP["theta0"], spin: float = HEAVY_TOP["spin"]):
    """The heavy top (module notes); body ``top`` (its own z axis the symmetry axis),
    joint ``pivot``, markers ``tip`` and ``cm``."""
    d = HEAVY_TOP
    axis = np.array([math.sin(theta0), 0.0, math.cos(theta0)])
    # body axes: z along the symmetry axis, x in the vertical plane through it
    ex = np.array([math.cos(theta0), 0.0, -math.sin(theta0)])
    R = np.column_stack([ex, np.cross(axis, ex), axis])
    b = SpatialModelBuilder("heavy_top", gravity=(0.0, 0.0, -d["g"]))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("top", mass=d["mass"], inertia=(d["transverse"], d["transverse"], d["axial"]),
               points={"pivot": (0.0, 0.0, -d["l"]), "tip": (0.0, 0.0, d["l"])},
               position=tuple(d["l"] * axis), orientation=R,
               angular_velocity=tuple(spin * axis))
    b.add_spherical("pivot", "top.pivot", "ground.O")
    b.add_marker("tip", "top.tip")
    b.add_marker("cm", "top.cm")
    return b.build()


def spatial_chain(n_bars: int, length: float = 0.1, density: float = 1.0,
                  angle: float = -math.pi / 4, width: float = 0.1):
    """The spatial counterpart of :func:`linkdyn.chain`: ``n_bars`` equal bars of square
    section (``width`` times their length) hanging from the ground point ``O``, joined end
    to end by spherical joints, all at ``angle`` (rad) from the x axis in the xz plane and
    at rest, gravity along -z: 3 n degrees of freedom. Marker ``tip`` at the free end."""
    from ..errors import ModelError

    if isinstance(n_bars, bool) or not isinstance(n_bars, int) or n_bars < 1:
        raise ModelError(f"spatial_chain: n_bars must be a positive integer, got {n_bars!r}")
    mass = density * length
    side = width * length
    axial, transverse = mass * side**2 / 6.0, mass * (length**2 + side**2) / 12.0
    c, s = math.cos(angle), math.sin(angle)
    R = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])    # body x along the bar
    b = SpatialModelBuilder(f"spatial_chain{n_bars}", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    for i in range(n_bars):
        d = (i + 0.5) * length
        b.add_body(f"B{i}", mass=mass, inertia=(axial, transverse, transverse),
                   points={"a": (-0.5 * length, 0.0, 0.0), "b": (0.5 * length, 0.0, 0.0)},
                   position=(d * c, 0.0, d * s), orientation=R)
        b.add_spherical(f"S{i}", f"B{i}.a", "ground.O" if i == 0 else f"B{i - 1}.b")
    b.add_marker("tip", f"B{n_bars - 1}.b")
    return b.build()


def heavy_top_nutation(theta0: float = HEAVY_TOP["theta0"],
                       spin: float = HEAVY_TOP["spin"]) -> tuple[float, float]:
    """(theta_min, theta_max), rad: the bounds of the axis' angle from the vertical for a top
    released with spin only (no precession, no nutation rate). With u = cos(theta), the
    energy and the two momenta give u'^2 = f(u) = (alpha - beta u)(1 - u^2) - (b - a u)^2,
    whose roots bound u; released at rest in theta, u0 = cos(theta0) is one of them and the
    other is the root in (-1, u0) of beta (1 - u^2) = a^2 (u0 - u)."""
    d = HEAVY_TOP
    I1 = d["transverse"] + d["mass"] * d["l"] ** 2     # about the pivot
    a = d["axial"] * spin / I1
    beta = 2.0 * d["mass"] * d["g"] * d["l"] / I1
    u0 = math.cos(theta0)
    # beta u^2 - a^2 u + (a^2 u0 - beta) = 0
    disc = a**4 - 4.0 * beta * (a * a * u0 - beta)
    u1 = (a * a - math.sqrt(disc)) / (2.0 * beta)
    return theta0, math.acos(u1)


#: The duration of IFToMM problem A04 (s).
BRICARD_T_END = 10.0


def bricard(redundant_free: bool = False):
    """IFToMM problem A04, Bricard's linkage (module notes); ``redundant_free``: its last
    revolute joint replaced by the universal joint that keeps only its non-redundant row."""
    length, mass, side = 1.0, 1.0, 0.1
    b = SpatialModelBuilder("bricard", gravity=(0.0, -9.81, 0.0))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_ground_point("Q", (0.0, 0.0, 1.0))
    corners = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, -1.0, 0.0), (1.0, -1.0, 1.0),
               (0.0, -1.0, 1.0), (0.0, 0.0, 1.0)]
    for k in range(5):
        p, q = np.array(corners[k]), np.array(corners[k + 1])
        along = int(np.argmax(np.abs(q - p)))
        moments = [mass * (length**2 + side**2) / 12.0] * 3
        moments[along] = mass * 2.0 * side**2 / 12.0      # a square rod about its own axis
        centre = (p + q) / 2.0
        b.add_body(f"rod{k + 1}", mass=mass, inertia=tuple(moments), position=tuple(centre),
                   points={"a": tuple(p - centre), "b": tuple(q - centre)})
    axes = [(0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
            (0.0, 0.0, 1.0)]
    b.add_revolute("J1", "rod1.a", "ground.O", axis=axes[0])
    for k in range(1, 5):
        b.add_revolute(f"J{k + 1}", f"rod{k + 1}.a", f"rod{k}.b", axis=axes[k])
    if redundant_free:
        b.add_universal("J6", "rod5.b", "ground.Q", axis_first=(1.0, 0.0, 0.0),
                        axis_second=(0.0, 0.0, 1.0))
    else:
        b.add_revolute("J6", "rod5.b", "ground.Q", axis=(1.0, 0.0, 0.0))
    b.add_marker("P3", "rod2.b")
    return b.build()
