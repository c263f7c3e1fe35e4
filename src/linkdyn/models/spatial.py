"""Built-in spatial models (bodies in natural coordinates, :mod:`linkdyn.compile.spatial`).

``heavy_top()``: a symmetric top about a fixed point, the classical heavy (Lagrange) top:
mass 1 kg, centre of mass on the symmetry axis 0.1 m from the pivot O = (0, 0, 0) (a
spherical joint to the ground), moments of inertia about the centre of mass 0.004 kg m^2
about the two transverse axes and 0.002 kg m^2 about the symmetry axis, gravity 9.81 m/s^2
along -z. At t = 0 its axis points along (sin 0.5, 0, cos 0.5) and it spins at 50 rad/s about
that axis, with no other angular velocity. Marker ``tip`` is on the axis, 0.2 m from O.
``heavy_top_nutation(...)`` gives the bounds of its axis' polar angle from the classical
cubic (Goldstein, "Classical Mechanics", section 5.7): an independent solution.

``flexible_arm()``: a two-link arm whose shoulder and elbow are series-elastic actuators
(:meth:`~linkdyn.SpatialModelBuilder.add_flexible_joint`; Vigne's note on Jiminy's
flexibilities), on a turret that a servo turns about the vertical; ``flexible_arm(turret=False)``
has the shoulder on the ground, so that the arm moves in the vertical xz plane, where
:data:`FLEXIBLE_ARM` gives what an independent model in minimal coordinates (the link and
rotor angles) needs. ``spatial_double_pendulum()``: two bars joined by spherical joints, a
chaotic spatial pendulum. ``spatial_slider_crank(driven=True)``: a crank turning about z
drives a slider on a line along y through a connecting rod with a spherical joint at the
crank and a universal joint at the slider; undriven, a motor torque turns the crank.
``five_ss_dynamic(driven=True)``: the point-line-plane paper's 5-SS platform linkage with
masses: its five binary links are massless rods (distance rows), the platform a rigid body,
and the actuator from J1 to J7 a driven stroke or (``driven=False``) a spring-damper.

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

from ..compile.model import check_model_size
from ..describe.spatial import SpatialModelBuilder
from ..elements.spatial_forces import perpendiculars

__all__ = ["heavy_top", "heavy_top_nutation", "HEAVY_TOP", "spatial_chain", "bricard",
           "BRICARD_T_END", "flexible_arm", "FLEXIBLE_ARM", "spatial_double_pendulum",
           "spatial_slider_crank", "SLIDER_CRANK", "five_ss_dynamic", "flyball_governor",
           "FLYBALL", "FLYBALL_T_END"]

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
    at rest, gravity along -z: 3 n degrees of freedom (2 n with ``width`` 0: slender rods,
    six coordinates each, whose spin about their axes is not a freedom). Marker ``tip`` at
    the free end."""
    from ..errors import ModelError

    if isinstance(n_bars, bool) or not isinstance(n_bars, int) or n_bars < 1:
        raise ModelError(f"spatial_chain: n_bars must be a positive integer, got {n_bars!r}")
    if isinstance(width, bool) or not isinstance(width, (int, float)) or not width >= 0:
        raise ModelError(f"spatial_chain: width must be a number >= 0, got {width!r}")
    check_model_size(n_bars, 5e4, "spatial_chain", "bars")   # 23 kB a bar measured
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
    if not redundant_free:   # overconstrained as posed: one of its rows is redundant
        b.set_run_defaults(redundant="allow")
    return b.build()


def _rod_inertia(mass, length, side) -> tuple:
    """Principal moments of a rod of square section along its body x axis."""
    return (mass * side**2 / 6.0, mass * (length**2 + side**2) / 12.0,
            mass * (length**2 + side**2) / 12.0)


#: The flexible arm's data (SI): link lengths, masses and square sections, the rotors'
#: reflected axial inertia, transverse inertia and mass, the springs' stiffness and damping,
#: the motor torques' harmonic laws (a, b, omega: a + b sin(omega t)), initial link angles
#: (rad, about +y from the x axis, so hanging below it; the arm starts at rest, springs
#: undeflected), gravity along -z.
FLEXIBLE_ARM = dict(lengths=(0.5, 0.4), masses=(2.0, 1.0), side=0.05,
                    rotor_inertia=(0.02, 0.01), rotor_transverse=(0.02, 0.01),
                    rotor_mass=(0.6, 0.4), stiffness=(300.0, 150.0), damping=(0.4, 0.2),
                    torque=((0.0, 1.5, 3.0), (0.0, 0.3, 5.0)), angles=(1.0, 0.4),
                    g=9.81, turret=dict(mass=3.0, inertia=(0.02, 0.02, 0.03),
                                        target=(0.0, 0.8, 2.0), kp=400.0, kd=40.0))


def flexible_arm(turret: bool = True):
    """The flexible arm (module notes): links ``upper`` and ``fore`` (body x along the
    link), revolute joints ``shoulder`` and ``elbow`` about the horizontal y axis with
    flexible joints ``shoulder_drive`` and ``elbow_drive`` (rotors ``<drive>/rotor``,
    springs ``<drive>/spring``); with ``turret``, body ``turret`` on joint ``yaw`` about z
    follows servo ``yaw_servo``. Markers ``wrist`` at the end of ``upper`` and ``tip`` at
    the end of ``fore``."""
    d = FLEXIBLE_ARM
    b = SpatialModelBuilder("flexible_arm", gravity=(0.0, 0.0, -d["g"]))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    base = "ground.O"
    if turret:
        t = d["turret"]
        b.add_body("turret", mass=t["mass"], inertia=t["inertia"], position=(0.0, 0.0, -0.1),
                   points={"top": (0.0, 0.0, 0.1)})
        b.add_revolute("yaw", "turret.top", "ground.O", axis=(0.0, 0.0, 1.0))
        b.add_servo("yaw_servo", "yaw", {"law": "harmonic", "a": t["target"][0],
                                         "b": t["target"][1], "omega": t["target"][2]},
                    kp=t["kp"], kd=t["kd"])
        base = "turret.top"
    start = np.zeros(3)
    angle = 0.0
    for k, (name, joint) in enumerate((("upper", "shoulder"), ("fore", "elbow"))):
        length, mass = d["lengths"][k], d["masses"][k]
        angle += d["angles"][k]
        c, s_ = math.cos(angle), math.sin(angle)
        R = np.array([[c, 0.0, s_], [0.0, 1.0, 0.0], [-s_, 0.0, c]])   # about +y
        centre = start + R @ np.array([0.5 * length, 0.0, 0.0])
        b.add_body(name, mass=mass, inertia=_rod_inertia(mass, length, d["side"]),
                   position=tuple(centre), orientation=R,
                   points={"base": (-0.5 * length, 0.0, 0.0), "end": (0.5 * length, 0.0, 0.0)})
        b.add_revolute(joint, f"{name}.base", base, axis=(0.0, 1.0, 0.0))
        a, amp, omega = d["torque"][k]
        b.add_flexible_joint(f"{joint}_drive", joint, d["stiffness"][k], d["damping"][k],
                             d["rotor_inertia"][k], d["rotor_mass"][k],
                             law={"law": "harmonic", "a": a, "b": amp, "omega": omega},
                             rotor_transverse_inertia=d["rotor_transverse"][k])
        base = f"{name}.end"
        start = start + R @ np.array([length, 0.0, 0.0])
    b.add_marker("tip", "fore.end")
    b.add_marker("wrist", "upper.end")
    return b.build()


def spatial_double_pendulum(angles=((0.9, 0.3), (1.6, -0.7)), length: float = 0.5,
                            mass: float = 1.0):
    """Two bars (``length`` m, ``mass`` kg, square section 0.02 m) hanging from ground point
    ``O`` and joined end to end by spherical joints ``S1``, ``S2``, released at rest with bar
    k along the polar and azimuth angles ``angles[k]`` (rad, from -z and about z), gravity
    9.81 m/s^2 along -z: a chaotic spatial pendulum. Marker ``tip`` at the free end."""
    b = SpatialModelBuilder("spatial_double_pendulum", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    start, prev = np.zeros(3), "ground.O"
    for k, (polar, azimuth) in enumerate(angles):
        e = np.array([math.sin(polar) * math.cos(azimuth), math.sin(polar) * math.sin(azimuth),
                      -math.cos(polar)])
        R = np.column_stack([e, *perpendiculars(e)])              # body x along the bar
        b.add_body(f"bar{k + 1}", mass=mass, inertia=_rod_inertia(mass, length, 0.02),
                   position=tuple(start + 0.5 * length * e), orientation=R,
                   points={"a": (-0.5 * length, 0.0, 0.0), "b": (0.5 * length, 0.0, 0.0)})
        b.add_spherical(f"S{k + 1}", f"bar{k + 1}.a", prev)
        start, prev = start + length * e, f"bar{k + 1}.b"
    b.add_marker("tip", prev)
    return b.build()


#: The spatial slider-crank's data (SI): the crank's radius, about z through the origin,
#: starting along x; the slider's line, through ``slide_point`` along y; the rod's length;
#: masses; the crank's speed when driven (rad/s) and the motor torque otherwise (N m).
SLIDER_CRANK = dict(radius=0.1, slide_point=(0.05, 0.0, 0.12), rod=0.35,
                    masses=(1.0, 0.8, 1.5), speed=2.0 * math.pi, torque=2.0)


def slider_crank_position(angle) -> np.ndarray:
    """The slider's displacement (m) along its line from ``slide_point`` at crank angle
    ``angle`` (rad, about z from x), the branch on the -y side of the crank pin: the
    closed-form solution of |P - S|^2 = rod^2."""
    d = SLIDER_CRANK
    angle = np.asarray(angle, dtype=float)
    P = d["radius"] * np.stack([np.cos(angle), np.sin(angle), np.zeros_like(angle)], -1)
    rel = P - np.array(d["slide_point"])
    along = rel[..., 1]
    return along - np.sqrt(along**2 - (rel**2).sum(-1) + d["rod"] ** 2)


def spatial_slider_crank(driven: bool = True):
    """The spatial slider-crank (module notes): body ``crank`` on revolute ``hinge`` about
    z, body ``rod`` with spherical ``ball`` at the crank pin and universal ``cross`` at the
    ``slider``, which slides on prismatic ``slide`` along y. ``driven``: angle driver
    ``drive`` at SLIDER_CRANK["speed"]; otherwise motor ``motor`` with its torque, from
    rest. Markers ``P`` (the crank pin) and ``S`` (the slider)."""
    d = SLIDER_CRANK
    r, L = d["radius"], d["rod"]
    m_crank, m_rod, m_slider = d["masses"]
    S0 = np.array(d["slide_point"])
    s0 = float(slider_crank_position(0.0))
    P, S = np.array([r, 0.0, 0.0]), S0 + np.array([0.0, s0, 0.0])
    b = SpatialModelBuilder("spatial_slider_crank", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_ground_point("line", tuple(S0))
    b.add_body("crank", mass=m_crank, inertia=_rod_inertia(m_crank, r, 0.02),
               position=(0.5 * r, 0.0, 0.0), points={"o": (-0.5 * r, 0.0, 0.0),
                                                     "pin": (0.5 * r, 0.0, 0.0)})
    b.add_revolute("hinge", "crank.o", "ground.O", axis=(0.0, 0.0, 1.0))
    e = (S - P) / L
    R = np.column_stack([e, *perpendiculars(e)])                  # body x along the rod
    b.add_body("rod", mass=m_rod, inertia=_rod_inertia(m_rod, L, 0.02),
               position=tuple(0.5 * (P + S)), orientation=R,
               points={"a": (-0.5 * L, 0.0, 0.0), "b": (0.5 * L, 0.0, 0.0)})
    b.add_body("slider", mass=m_slider, inertia=(0.002, 0.002, 0.002), position=tuple(S))
    b.add_spherical("ball", "rod.a", "crank.pin")
    # the cross: an arm on the slider along x, the other on the rod across both
    arm = np.cross(e, (1.0, 0.0, 0.0))
    b.add_universal("cross", "rod.b", "slider.cm", axis_first=tuple(arm / np.linalg.norm(arm)),
                    axis_second=(1.0, 0.0, 0.0))
    b.add_prismatic("slide", "slider.cm", "ground.line", axis=(0.0, 1.0, 0.0))
    if driven:
        b.add_angle_driver("drive", "hinge", {"law": "linear", "value": 0.0,
                                              "rate": d["speed"]})
    else:
        b.add_motor("motor", "hinge", d["torque"])
    b.add_marker("P", "crank.pin")
    b.add_marker("S", "slider.cm")
    return b.build()


def five_ss_dynamic(driven: bool = True, platform_mass: float = 50.0,
                    stiffness: float = 2.0e4, damping: float = 200.0):
    """The 5-SS platform linkage with masses (module notes): the platform ``platform`` (a
    rigid body of ``platform_mass`` kg whose inertia is that of the masses spread equally
    over its joints J6-J11, lengths in m), rods ``L1``-``L5`` (distance rows; their efforts
    are the rods' forces, positive pushing), gravity along -z. ``driven``: the actuator
    ``actuator`` from J1 to J7 lengthens by ``(1 - cos 2t) / 4`` m from its initial length
    L0, a smooth stroke of 0.5 m and back every pi s, short of the singular position the
    linkage nears at L0 + 0.85 m (``linkdyn.kinematics`` of the linkage ``five_ss``, driven
    at 1 m/s, reaches the same configurations at t' = (1 - cos 2t) / 4);
    otherwise it is a spring-damper (``stiffness`` N/m, ``damping`` N s/m, free length
    L0). Marker ``J11``."""
    from .linkages import linkage

    g = linkage("five_ss")
    points = {name: np.array(j.coordinates, dtype=float) for name, j in g.joints.items()}
    names = [f"J{k}" for k in range(6, 12)]
    pts = np.array([points[n] for n in names])
    centre = pts.mean(axis=0)
    rel = pts - centre
    each = platform_mass / len(names)
    J = each * (np.eye(3) * (rel**2).sum() - rel.T @ rel) + np.eye(3) * 1e-3 * platform_mass
    b = SpatialModelBuilder("five_ss_dynamic", gravity=(0.0, 0.0, -9.81))
    for k in range(1, 6):
        b.add_ground_point(f"J{k}", tuple(points[f"J{k}"]))
    b.add_body("platform", mass=platform_mass, inertia=J, position=tuple(centre),
               points={n: tuple(p) for n, p in zip(names, rel)})
    for k in range(1, 6):
        length = float(np.linalg.norm(points[f"J{k + 5}"] - points[f"J{k}"]))
        b.add_distance_driver(f"L{k}", f"platform.J{k + 5}", f"ground.J{k}", length)
    start = float(np.linalg.norm(points["J7"] - points["J1"]))
    if driven:
        b.add_distance_driver("actuator", "platform.J7", "ground.J1",
                              {"law": "harmonic", "a": start + 0.25, "b": 0.25,
                               "omega": 2.0, "phase": -0.5 * math.pi})
    else:
        b.add_spring_damper("actuator", "platform.J7", "ground.J1", stiffness, damping)
    b.add_marker("J11", "platform.J11")
    return b.build()


#: IFToMM problem A05, the stiff flyball governor, as the benchmark's OpenSim implementation
#: (Tagliapietra, Vivian, Ceseracciu and Reggiani, "Multi-Body Systems Benchmark in OpenSim")
#: has it (SI): shaft and rods 1.0 x 0.01 x 0.01 m and the slider a 0.1 m cube, all of
#: density 3000 kg/m^3; a 5 kg point mass at each rod's end; the rods hinged at the top of
#: the shaft 0.05 m either side of its axis and hanging 30 degrees below the horizontal;
#: each rod's middle tied to the slider's side (0.05 m from the axis) by a spring-damper
#: K (L - L0) + C L' of rest length 0.5 m (the initial distance); the slider at s = 0.5 m up
#: the shaft; gravity along -z; the whole turning at 2 pi rad/s about the vertical shaft at
#: the start; 10 s, the slider's height s reported.
FLYBALL = dict(density=3000.0, length=1.0, side=0.01, cube=0.1, ball=5.0, hinge=0.05,
               alpha=math.radians(30.0), stiffness=8e5, damping=4e4, rest=0.5, s0=0.5,
               omega=2.0 * math.pi, g=9.81)
FLYBALL_T_END = 10.0


def flyball_governor():
    """IFToMM A05 (:data:`FLYBALL`): bodies ``shaft`` (revolute ``spin`` to the ground about
    z), ``slider`` (prismatic ``slide`` along the shaft) and ``rod1``, ``rod2`` (revolutes
    ``hinge1``, ``hinge2`` at the shaft's top; each carries its point mass, folded into the
    body), spring-dampers ``spring1``, ``spring2``; markers ``S`` on the slider (its height is s),
    ``ball1``, ``ball2``. The spring-dampers make it stiff: the default method finds the
    BDF cheaper by a cost trial and switches to it; ``method="bdf"`` starts with it."""
    d = FLYBALL
    rho, L, w, c = d["density"], d["length"], d["side"], d["cube"]
    m_bar, m_cube, m_ball = rho * L * w * w, rho * c**3, d["ball"]
    axial, transverse = m_bar * w * w / 6.0, m_bar * (L * L + w * w) / 12.0
    omega = np.array([0.0, 0.0, d["omega"]])
    b = SpatialModelBuilder("flyball_governor", gravity=(0.0, 0.0, -d["g"]))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("shaft", mass=m_bar, inertia=(transverse, transverse, axial),
               position=(0.0, 0.0, L / 2),
               points={"foot": (0.0, 0.0, -L / 2), "top1": (d["hinge"], 0.0, L / 2),
                       "top2": (-d["hinge"], 0.0, L / 2)},
               angular_velocity=tuple(omega))
    b.add_revolute("spin", "shaft.foot", "ground.O", axis=(0.0, 0.0, 1.0))
    b.add_body("slider", mass=m_cube, inertia=(m_cube * c * c / 6.0,) * 3,
               position=(0.0, 0.0, d["s0"]),
               points={"side1": (c / 2, 0.0, 0.0), "side2": (-c / 2, 0.0, 0.0)},
               angular_velocity=tuple(omega))
    b.add_prismatic("slide", "slider.cm", "shaft.cm", axis=(0.0, 0.0, 1.0))
    # A rod with its ball: the centre of mass `at` from the hinge along the rod, the rod's
    # own moments moved there (the ball is a point on the rod's axis).
    mass = m_bar + m_ball
    at = (m_bar * L / 2 + m_ball * L) / mass
    across = transverse + m_bar * (at - L / 2) ** 2 + m_ball * (L - at) ** 2
    for k, side in ((1, 1.0), (2, -1.0)):
        along = np.array([side * math.cos(d["alpha"]), 0.0, -math.sin(d["alpha"])])
        hinge = np.array([side * d["hinge"], 0.0, L])
        centre = hinge + at * along
        frame = np.column_stack([along, [0.0, 1.0, 0.0], np.cross(along, [0.0, 1.0, 0.0])])
        b.add_body(f"rod{k}", mass=mass, inertia=(axial, across, across),
                   position=tuple(centre), orientation=frame,
                   points={"hinge": (-at, 0.0, 0.0), "middle": (L / 2 - at, 0.0, 0.0),
                           "ball": (L - at, 0.0, 0.0)},
                   velocity=tuple(np.cross(omega, centre)), angular_velocity=tuple(omega))
        b.add_revolute(f"hinge{k}", f"rod{k}.hinge", f"shaft.top{k}", axis=(0.0, 1.0, 0.0))
        b.add_spring_damper(f"spring{k}", f"slider.side{k}", f"rod{k}.middle",
                            d["stiffness"], d["damping"], d["rest"])
        b.add_marker(f"ball{k}", f"rod{k}.ball")
    b.add_marker("S", "slider.cm")
    return b.build()
