"""Friction in joints (linkdyn.elements.joint_friction): a block sliding on a rail with
Coulomb friction stops when and where the closed form says and then sticks exactly; a
pendulum with pin friction swings down to the turning angles and times of the closed form
(energy lost to the friction torque over each half swing) and stops for good where gravity
cannot overcome the static friction; a block pushed by a growing force breaks away at the
static limit and then follows Stribeck's law; the energy balance closes; files and bad
input. The force derivatives are checked against differences in csrc/tests/test_forces.c."""

import json
import math
import re
import warnings

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp
from scipy.optimize import brentq

import linkdyn
import test_exchange_limits as limits
from linkdyn import laws
from linkdyn.errors import ModelError, ModelFileError, UnknownNameError

G = 9.81


def rail(velocity=1.0, force=None, **friction):
    """A block of 1 kg on a horizontal prismatic joint, with friction in the joint."""
    b = linkdyn.ModelBuilder("rail", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("block", mass=1.0, inertia=0.01, points={"c": (0.0, 0.0)},
               velocity=(velocity, 0.0))
    b.add_prismatic("rail", "ground.O", "block.c")
    b.add_joint_friction("fr", "rail", **friction)
    if force is not None:
        b.add_force("push", "block.c", law_x=force)
    return b


def test_a_block_slides_to_rest_where_coulomb_says_and_sticks_exactly():
    # v0 = 1 m/s against F_c = 2 N on 1 kg: rest at t = m v0 / F_c = 0.5 s after
    # m v0^2 / (2 F_c) = 0.25 m, and no drift after it.
    r = linkdyn.simulate(rail(coulomb=2.0, static=3.0).build(), 1.0, rtol=1e-10,
                         dt_out=1e-3)
    stops = [e.t for e in r.events if e.name == "fr/stop"]
    assert stops == [pytest.approx(0.5, abs=1e-12)]
    x = r.body_position("block")[:, 0]
    assert x[-1] == pytest.approx(0.25, abs=1e-12)
    assert np.ptp(x[r.t > 0.5 + 1e-9]) == 0.0
    assert [m[2] for m in r.friction_modes] == ["slide+", "stick"]
    f = r.friction_force("fr")
    assert np.all(f[r.t < 0.499] == -2.0)
    assert np.abs(f[r.t > 0.501]).max() < 1e-12     # at rest on a level rail: no load
    # the kinetic energy went to the friction
    np.testing.assert_allclose(r.element_work("fr")[-1], -0.5, atol=1e-12)


def pendulum_turns(phi0, weight, coulomb, static, inertia):
    """Closed form of a pendulum (gravity torque ``weight`` sin phi, phi from hanging)
    with Coulomb friction in its pin, released at rest at ``phi0``: the turning angles and
    times. Over a half swing from rest at a the energy balance is
    weight (cos p - cos a) - coulomb (a - p) = inertia p'^2 / 2, which vanishes at the next
    turning point; it moves again from a turning point only while weight sin|a| > static."""
    turn, times = [phi0], [0.0]
    while weight * math.sin(abs(turn[-1])) > static:
        a = abs(turn[-1])

        def kinetic(p, a=a):
            return weight * (math.cos(p) - math.cos(a)) - coulomb * (a - p)

        low = brentq(kinetic, -a, a * (1.0 - 1e-12))

        def slowness(p, a=a, low=low, kinetic=kinetic):
            # dt/dp with the two square-root zeros at low and a factored out
            p = min(max(p, low + 1e-10), a - 1e-10)
            return math.sqrt(inertia / 2.0 / (kinetic(p) / ((a - p) * (p - low))))

        t, _ = quad(slowness, low, a, weight="alg", wvar=(-0.5, -0.5), epsabs=1e-11,
                    epsrel=1e-10, limit=200)
        times.append(times[-1] + t)
        turn.append(math.copysign(1.0, turn[-1]) * low)
    return turn, times


def test_a_pendulum_with_pin_friction_stops_at_the_angle_and_time_of_the_closed_form():
    coulomb, static, phi0 = 0.3, 0.35, 1.0
    b = linkdyn.ModelBuilder("pendulum", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    theta = phi0 - math.pi / 2
    b.add_bar("rod", length=1.0, mass=1.0, angle=theta,
              position=(0.5 * math.cos(theta), 0.5 * math.sin(theta)))
    b.add_revolute("pin", "ground.O", "rod.a")
    b.add_joint_friction("fr", "pin", coulomb=coulomb, static=static)
    r = linkdyn.simulate(b.build(), 8.0, rtol=1e-10, dt_out=1e-3)
    turn, times = pendulum_turns(phi0, G / 2, coulomb, static, 1.0 / 3.0)
    assert len(turn) == 9             # 7 swings through the bottom, an 8th short of it
    changes = r.friction_modes[1:]
    assert [m[2] for m in changes][-1] == "stick"
    np.testing.assert_allclose([m[0] for m in changes], times[1:], atol=1e-6)
    phi = np.unwrap(np.arctan2(r.q[:, 3], r.q[:, 2])) + math.pi / 2
    at_turns = np.interp(times, r.t, phi)
    np.testing.assert_allclose(at_turns[:-1], turn[:-1], atol=1e-5)   # sampled near them
    assert phi[-1] == pytest.approx(turn[-1], abs=1e-9)
    assert np.ptp(phi[r.t > times[-1] + 1e-3]) < 1e-12                 # it stays
    # everything the pendulum lost went to the friction
    energy = r.kinetic_energy + r.potential_energy
    np.testing.assert_allclose(energy - energy[0], r.element_work("fr"), atol=1e-8)


def test_a_pushed_block_breaks_away_at_the_static_limit_and_follows_stribeck():
    # A push growing at 10 N/s: stuck until it reaches F_s = 3 N (t = 0.3 s), then
    # m a = F(t) - F_c - (F_s - F_c) exp(-(v / v_s)^2), integrated here by SciPy.
    fc, fs, vs, rate = 2.0, 3.0, 0.05, 10.0
    r = linkdyn.simulate(rail(0.0, laws.linear(0.0, rate), coulomb=fc, static=fs,
                              stribeck_velocity=vs).build(), 0.6, rtol=1e-10, dt_out=1e-3)
    slips = [e.t for e in r.events if e.name == "fr/slip"]
    assert slips == [pytest.approx(fs / rate, abs=1e-9)]
    assert np.all(r.body_position("block")[r.t < 0.3, 0] == 0.0)
    sol = solve_ivp(lambda t, y: [y[1], rate * t - fc - (fs - fc) * math.exp(-(y[1] / vs) ** 2)],
                    (slips[0], 0.6), [0.0, 0.0], rtol=1e-11, atol=1e-13, dense_output=True)
    after = r.t > slips[0]
    np.testing.assert_allclose(r.body_velocity("block")[after, 0],
                               sol.sol(r.t[after])[1], atol=1e-7)
    # the friction fell from F_s towards F_c as the block sped up
    f = r.friction_force("fr")
    assert f[-1] == pytest.approx(-fc, abs=1e-3)
    assert np.abs(f[after]).max() <= fs * (1 + 1e-9)


def test_joint_frictions_in_model_files_and_bad_input(tmp_path):
    model = rail(coulomb=2.0, static=3.0, stribeck_velocity=0.1).build()
    path = tmp_path / "rail.json"
    linkdyn.modelfile.save(model.description, path)
    assert linkdyn.modelfile.load(path) == model.description
    data = json.loads(path.read_text())
    entry = next(f for f in data["forces"] if f["type"] == "joint_friction")
    entry["static"] = 1.0
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"forces\[0\].*static = 1.0 must be at least"):
        linkdyn.modelfile.load(tmp_path / "bad.json")

    with pytest.raises(ModelError, match="'nope' is not a revolute or prismatic joint"):
        rail(coulomb=1.0).add_joint_friction("f2", "nope", coulomb=1.0)
    with pytest.raises(ModelError, match="joint 'rail' has a friction already"):
        rail(coulomb=1.0).add_joint_friction("f2", "rail", coulomb=1.0)
    with pytest.raises(ModelError, match="coulomb must be positive|coulomb.*positive"):
        rail(coulomb=-1.0)
    with pytest.raises(ModelError, match="a stribeck_velocity needs static > coulomb"):
        rail(coulomb=1.0, stribeck_velocity=0.1)
    with pytest.raises(ModelError, match="stick_velocity = 1e-12 is below"):
        rail(coulomb=1.0, stick_velocity=1e-12)
    r = linkdyn.simulate(rail(coulomb=1.0).build(), 0.01)
    with pytest.raises(UnknownNameError, match="no contact 'rail' with friction"):
        r.friction_force("rail")


# The one-link pendulums of the limits' tests (a bar along x from its pin, turning about z
# under gravity -y), their limits replaced by friction.
URDF = re.sub(r"<limit [^>]*/>", '<dynamics friction="0.3"/>',
              limits.URDF).replace('type="revolute"', 'type="continuous"')
MJCF = re.sub(r'range="[^"]*"\s*REF', 'frictionloss="0.3"', limits.MJCF)
SDF = re.sub(r"<limit>.*</limit>", "<dynamics><friction>0.3</friction></dynamics>",
             limits.SDF)


@pytest.mark.parametrize("name, text", [("pendulum.urdf", URDF), ("pendulum.xml", MJCF),
                                        ("pendulum.sdf", SDF)])
def test_urdf_sdf_and_mjcf_joint_friction_stops_a_pendulum_as_the_closed_form_says(
        tmp_path, name, text):
    # A bar along x from its pin, turning about z under gravity -y, released 1 rad from
    # hanging; the file's friction is Coulomb's, static and sliding alike.
    path = tmp_path / name
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error", linkdyn.ModelWarning)     # nothing left unread
        model = linkdyn.load_model(path, gravity=(0.0, -G, 0.0),
                                   initial={"pin": 1.0 - math.pi / 2})
    assert "friction" in text and "limit" not in text and "range" not in text
    (spec,) = model.description.joint_frictions
    assert (spec.name, spec.coulomb, spec.static) == ("pin/friction", 0.3, 0.3)
    r = linkdyn.simulate(model, 8.0, rtol=1e-10, dt_out=1e-3)
    turn, times = pendulum_turns(1.0, G / 2, 0.3, 0.3, 1.0 / 3.0)
    changes = r.friction_modes[1:]
    assert changes[-1][2] == "stick"
    np.testing.assert_allclose([m[0] for m in changes], times[1:], atol=1e-6)
    x, y = r.body_position("rod")[-1, :2]
    assert math.atan2(x, -y) == pytest.approx(turn[-1], abs=1e-9)


def test_a_spatial_hinge_with_friction_swings_as_the_planar_one():
    b = linkdyn.SpatialModelBuilder("pendulum", gravity=(0.0, 0.0, -G))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    c, s = math.cos(1.0), math.sin(1.0)
    # the bar's axis e_1 from the pin to its end, 1 rad from hanging in the x-z plane
    b.add_body("rod", mass=1.0, inertia=(1e-4, 1 / 12, 1 / 12), position=(0.5 * s, 0, -0.5 * c),
               orientation=[[s, 0.0, c], [0.0, 1.0, 0.0], [-c, 0.0, s]],
               points={"a": (-0.5, 0.0, 0.0)})
    b.add_revolute("pin", "ground.O", "rod.a", axis=(0.0, 1.0, 0.0))
    b.add_joint_friction("fr", "pin", coulomb=0.3, static=0.35)
    r = linkdyn.simulate(b.build(), 8.0, rtol=1e-10, dt_out=1e-3)
    turn, times = pendulum_turns(1.0, G / 2, 0.3, 0.35, 1.0 / 3.0)
    np.testing.assert_allclose([m[0] for m in r.friction_modes[1:]], times[1:], atol=1e-6)
    p = r.body_position("rod")
    phi = np.arctan2(p[:, 0], -p[:, 2])
    assert phi[-1] == pytest.approx(turn[-1], abs=1e-9)
    assert np.ptp(phi[r.t > times[-1] + 1e-3]) < 1e-12
    # and in the spatial model file
    desc = b.description()
    assert linkdyn.modelfile.loads(json.dumps(linkdyn.modelfile.to_dict(desc))) == desc
