"""The passive dynamic walker with round feet of Zheng and Wang (an LCP method for a planar
passive dynamic walker with round feet): two straight legs pinned at the hip H, each with a
round foot, walking down a slope under gravity alone.

Geometry (the paper's): each leg has mass m, length l from the hip to the bottom of its foot,
moment of inertia J about its centre of mass C at distance d below the hip, and a foot that
is an arc of radius r centred on the leg's axis at l - r below the hip. The model is written
in a frame fixed to the floor: x down the slope along the floor, y normal to it; gravity is
(g sin(slope), -g cos(slope)). A leg's angle theta is measured counterclockwise from -y (the
paper's convention): theta > 0 puts the foot ahead (down the slope) of the hip.

Bodies ``leg1``, ``leg2`` (u along the leg, from the hip to the foot; points ``hip``,
``foot`` (the foot's centre), ``cm``); joint ``H``; contacts ``foot1``, ``foot2`` (Hertz
with Hunt-Crossley damping, Coulomb friction with kinetic mu and static mu0, each the
other's swing partner: Zheng and Wang's rule that the swing leg is not subject to contact forces,
see :mod:`linkdyn.contacts`); markers ``hip``, ``O1``, ``O2`` (the foot centres).
"""

from __future__ import annotations

import math

from ..describe.builder import ModelBuilder
from ..elements import description
from ..errors import ModelError

__all__ = ["walker", "PAPER"]

#: The paper's walker: m (kg), J (kg m^2), l, d, r (m), g (m/s^2), Hertz exponent n.
PAPER = dict(m=1.0, J=0.0096, l=0.40, d=0.10, r=0.08, g=9.8, n=1.5)


def walker(*, slope, stiffness, damping, friction, static_friction, theta1, theta2,
           omega1, omega2, name="walker", m=PAPER["m"], J=PAPER["J"], l=PAPER["l"],
           d=PAPER["d"], r=PAPER["r"], g=PAPER["g"], exponent=PAPER["n"],
           stick_velocity=1e-5):
    """A walker (module notes) with leg 1 standing on its foot (at the static penetration
    of its share of the weight, x of the foot's centre 0) and leg 2 swinging: leg angles
    ``theta1``, ``theta2`` (rad) and rates ``omega1``, ``omega2`` (rad/s), the stance foot
    rolling without slip. ``slope`` in rad; contact ``stiffness`` K (N/m^n), ``damping``
    c (s/m), ``friction`` mu <= ``static_friction`` mu0."""
    for key, value in (("slope", slope), ("theta1", theta1), ("theta2", theta2),
                       ("omega1", omega1), ("omega2", omega2)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value):
            raise ModelError(f"walker: {key} must be a finite number, got {value!r}")
    if not 0 < r < l or not 0 <= d < l:
        raise ModelError(f"walker: need 0 < r < l and 0 <= d < l, got r={r}, l={l}, d={d}")
    b = ModelBuilder(name, gravity=(g * math.sin(slope), -g * math.cos(slope)))
    b.add_ground_point("O", (0.0, 0.0))
    depth = (2 * m * g * math.cos(slope) / stiffness) ** (1.0 / exponent)
    foot = (0.0, r - depth)                      # stance foot's centre
    u1 = (math.sin(theta1), -math.cos(theta1))
    u2 = (math.sin(theta2), -math.cos(theta2))
    hip = (foot[0] - (l - r) * u1[0], foot[1] - (l - r) * u1[1])
    # Rolling without slip: the stance foot's centre moves at -r omega1 along x.
    v_foot = (-r * omega1, 0.0)

    def velocity(origin_v, origin, omega, point):
        return (origin_v[0] - omega * (point[1] - origin[1]),
                origin_v[1] + omega * (point[0] - origin[0]))

    v_hip = velocity(v_foot, foot, omega1, hip)
    points = {"hip": (-d, 0.0), "foot": (l - r - d, 0.0)}
    for i, (u, omega) in enumerate(((u1, omega1), (u2, omega2)), start=1):
        cm = (hip[0] + d * u[0], hip[1] + d * u[1])
        b.add_body(f"leg{i}", mass=m, inertia=J, points=points, position=cm, u=u,
                   velocity=velocity(v_hip, hip, omega, cm), omega=omega)
    b.add_revolute("H", "leg1.hip", "leg2.hip")
    for i in (1, 2):
        b.add_contact(f"foot{i}", f"leg{i}.foot", "ground.O", 0.0, r, stiffness=stiffness,
                      exponent=exponent, damping=damping, friction=friction,
                      static_friction=static_friction, stick_velocity=stick_velocity,
                      swing_partner=f"foot{3 - i}")
    b.add_marker("hip", "leg1.hip")
    b.add_marker("O1", "leg1.foot")
    b.add_marker("O2", "leg2.foot")
    return b


#: Contact stiffness of a rubber-padded foot (N/m^1.5): Hertz's K = (4/3) E* sqrt(r) for a
#: rounded foot of radius r = 0.08 m on a rigid floor, with rubber's E = 5 MPa and
#: Poisson's ratio 0.5 (E* = E / (1 - nu^2) = 6.7 MPa).
RUBBER_K = 2.5e6

#: The four gaits of Zheng and Wang. The paper's text lost K, c, mu, mu0, the slope and the initial
#: conditions; these were chosen here. c follows the Hunt-Crossley relation
#: e = 1 - (2/3) c v0 between damping, restitution and the normal impact speed v0 (0.2-0.3
#: m/s at the walker's heel strikes): c = 10 s/m makes the strike almost plastic (the foot
#: stays down; 40 s/m for gait IV, which must lose its energy), c = 2.5 s/m leaves a
#: restitution of about 0.5 (the foot bounces). mu / mu0 =
#: 0.6 / 0.8 is rubber on a dry floor, 0.244 / 0.369 a slippery one, 0.8 / 1.0 a grippy one
#: (gait IV, like the paper's larger coefficients that keep the walker from slipping).
#: Slopes and initial conditions (leg 1 standing, leg 2 just behind it) came from a random
#: search for motions that keep walking for 10 s; ``linkdyn.periodic_orbit`` then finds the
#: limit cycle they converge to (tests/test_walker.py). Gait IV starts as gait I on a slope
#: lowered until the walk dies out (at 0.001 rad this walker still walks on for good).
GAITS = {
    "walker_gait1": dict(
        note="Gait I: a periodic walk on which the stance foot neither slips nor bounces (it "
             "slides for a few milliseconds while touching down and while lifting off, when "
             "its normal force is nearly zero, and sticks through the stance).",
        slope=0.055, stiffness=RUBBER_K, damping=10.0, friction=0.6, static_friction=0.8,
        theta1=0.336, theta2=-0.326, omega1=-2.51, omega2=0.19),
    "walker_gait2": dict(
        note="Gait II: on a slippery floor leg 1's foot slides forward for tens of "
             "milliseconds after each of its heel strikes, then sticks; leg 2's only slides "
             "for milliseconds: the two legs take different strides.",
        slope=0.0475, stiffness=RUBBER_K, damping=10.0, friction=0.244, static_friction=0.369,
        theta1=0.279, theta2=-0.269, omega1=-1.667, omega2=-0.239),
    "walker_gait3": dict(
        note="Gait III: with little contact damping each heel strike rebounds: the stance "
             "foot bounces three times before it settles, without slipping.",
        slope=0.029, stiffness=RUBBER_K, damping=2.5, friction=0.6, static_friction=0.8,
        theta1=0.232, theta2=-0.222, omega1=-1.36, omega2=-0.27),
    "walker_gait4": dict(
        note="Gait IV: on a nearly level floor the walker takes some thirty ever shorter "
             "steps and comes to a stand on both feet, held by static friction (the two "
             "feet's friction forces differ by the pull of gravity along the slope); on its "
             "round feet it still rocks, the rocking dying out through the contact damping.",
        slope=0.0003, stiffness=RUBBER_K, damping=40.0, friction=0.8, static_friction=1.0,
        theta1=0.336, theta2=-0.326, omega1=-2.51, omega2=0.19),
}


def gait(name):
    """The ModelBuilder of built-in gait ``name`` (a key of GAITS)."""
    params = dict(GAITS[name])
    params.pop("note")
    return walker(name=name, **params)


def gait_notes(name) -> list:
    """The notes of a gait's model file: the gait, its parameters and where they come
    from."""
    p = GAITS[name]
    return [p["note"],
            "Zheng and Wang's walker: m = 1.0 kg, J = 0.0096 kg m^2, l = 0.40 m, "
            "d = 0.10 m, r = 0.08 m, g = 9.8 m/s^2, Hertz exponent n = 1.5, stick threshold "
            "1e-5 m/s (linkdyn.models.walker).",
            f"Contact stiffness K = {p['stiffness']:.3g} N/m^1.5: Hertz's (4/3) E* sqrt(r) "
            "for a rubber-padded foot (E = 5 MPa, nu = 0.5) of radius 0.08 m.",
            f"Damping c = {p['damping']:g} s/m (Hunt-Crossley: e = 1 - (2/3) c v0 at heel-"
            f"strike speeds v0 of 0.2-0.3 m/s); friction mu = {p['friction']:g}, "
            f"mu0 = {p['static_friction']:g}.",
            f"Slope {p['slope']:g} rad; initial leg angles {p['theta1']:g}, {p['theta2']:g} "
            f"rad, rates {p['omega1']:g}, {p['omega2']:g} rad/s (leg 1 standing): found by a "
            "search for motions that walk for 10 s (gait IV: gait I's start on a slope "
            "lowered until the walk dies out); linkdyn.periodic_orbit finds the limit cycle "
            "of a walking gait.",
            "The frame is the floor's: x down the slope, y normal to it; gravity is "
            "(g sin(slope), -g cos(slope))."]


def gait_file(name) -> dict:
    """The model file (as a dict) of built-in gait ``name``, notes included: what
    ``src/linkdyn/models/<name>.json`` holds."""
    data = description.to_dict(gait(name).description())
    data["notes"] = gait_notes(name)
    return description._no_negative_zero(data)
