"""Gear pairs and racks (linkdyn.elements.gears, csrc/ld_angles.c): the rows against finite
differences, gear trains against their ratio products over many turns, the reflected inertia
in a train's acceleration and pendulum period, the power balance and the tooth forces
against Newton's law on each gear, a planetary train against Willis' formula, a rack and
pinion, and the checks of bad input."""

import json
import math

import numpy as np
import pytest
from scipy.special import ellipk

import linkdyn
from conftest import assert_rows_match_differences
from linkdyn import ModelBuilder
from linkdyn.errors import ModelError, ModelFileError, UnknownNameError

G = 9.81
J1, J23, J4 = 2e-4, 3e-3, 5e-3
Z = (20, 50, 18, 45)
M1, M2 = 0.002, 0.003


def angle(q, body):
    return np.unwrap(np.arctan2(q[:, 4 * body + 3], q[:, 4 * body + 2]))


def gearbox(torque=None, load=None, driven=None):
    """Two external stages: gear 1 on O1 meshes with the large wheel of the compound gear
    23 on O2, whose small wheel meshes with gear 4 on O3 (at 60 degrees from the line O1-O2,
    so the second centre line is not along x)."""
    b = ModelBuilder("gearbox", gravity=(0.0, -G))
    a1, a2 = 0.5 * M1 * (Z[0] + Z[1]), 0.5 * M2 * (Z[2] + Z[3])
    o3 = (a1 + a2 * math.cos(math.pi / 3), a2 * math.sin(math.pi / 3))
    b.add_ground_point("O1", (0.0, 0.0))
    b.add_ground_point("O2", (a1, 0.0))
    b.add_ground_point("O3", o3)
    b.add_body("g1", mass=0.3, inertia=J1, angle=0.2)
    b.add_body("g23", mass=1.1, inertia=J23, position=(a1, 0.0), angle=-0.4)
    b.add_body("g4", mass=1.5, inertia=J4, position=o3, angle=1.0)
    b.add_revolute("p1", "ground.O1", "g1.cm")   # driven: g1's angle
    b.add_revolute("p2", "g23.cm", "ground.O2")
    b.add_revolute("p3", "g4.cm", "ground.O3")
    b.add_gear_pair("stage1", "g1.cm", "g23.cm", teeth=Z[:2], module=M1)
    b.add_gear_pair("stage2", "g23.cm", "g4.cm", teeth=Z[2:], module=M2,
                    pressure_angle=math.radians(25.0))
    if torque is not None:
        b.add_torque("T", "g1", torque)
    if load is not None:
        b.add_torque("L", "g4", load)
    if driven is not None:
        b.add_angle_driver("drive", "p1", {"law": "linear", "value": 0.0, "rate": driven})
    return b


RATIO = (Z[0] / Z[1]) * (Z[2] / Z[3])              # output turns per input turn
J_EFF = J1 + J23 * (Z[0] / Z[1]) ** 2 + J4 * RATIO ** 2   # inertia seen by gear 1


def planetary(rate=3.0, zs=24, zp=18):
    """A sun on O, a planet on the arm, a fixed ring (the ground) with zs + 2 zp teeth; the
    arm is driven at ``rate`` (None: not driven)."""
    m = 0.0025
    zr = zs + 2 * zp
    a = 0.5 * m * (zs + zp)
    b = ModelBuilder("planetary", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("sun", mass=0.4, inertia=1e-4, angle=0.3)
    b.add_body("arm", mass=0.2, inertia=2e-4, points={"c": (a, 0.0)}, position=(0.0, 0.0))
    b.add_body("planet", mass=0.1, inertia=3e-5, position=(a, 0.0), angle=-0.7)
    b.add_revolute("ps", "sun.cm", "ground.O")
    b.add_revolute("pa", "ground.O", "arm.cm")
    b.add_revolute("pp", "planet.cm", "arm.c")
    b.add_gear_pair("sun_planet", "sun.cm", "planet.cm", teeth=(zs, zp), module=m,
                    carrier="arm")
    b.add_gear_pair("planet_ring", "planet.cm", "ground.O", teeth=(zp, zr), module=m,
                    internal=True, carrier="arm")
    if rate is not None:
        b.add_angle_driver("drive", "pa", {"law": "linear", "value": 0.0, "rate": rate})
    return b, (zs, zp, zr)


def rack(below=True, torque=0.0, mass=0.8, jp=1e-4, z=16, m=0.004):
    """A pinion on O drives a rack sliding along x on a line tangent to its pitch circle,
    below it (or above)."""
    r = 0.5 * m * z
    y = -r if below else r
    b = ModelBuilder("rack", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("P", (0.0, y))
    b.add_body("pinion", mass=0.2, inertia=jp, angle=0.1)
    b.add_body("rack", mass=mass, inertia=1e-3, position=(0.05, y))
    b.add_revolute("pin", "pinion.cm", "ground.O")
    b.add_prismatic("slide", "ground.P", "rack.cm", axis=0.0)
    b.add_rack_and_pinion("rp", "pinion.cm", "slide", teeth=z, module=m)
    b.add_torque("T", "pinion", torque)
    return b, r


# -- the rows ------------------------------------------------------------------------------

@pytest.mark.parametrize("make", ["gearbox", "planetary", "rack"])
def test_mesh_rows_match_finite_differences(make):
    model = {"gearbox": lambda: gearbox(), "planetary": lambda: planetary(None)[0],
             "rack": lambda: rack()[0]}[make]().build()
    rows = [k for k, n in enumerate(model.constraint_names) if n.endswith(".mesh")]
    assert rows
    # The rows hold where the description puts the bodies (the mesh as drawn).
    assert np.abs(model.phi(model.q0)[rows]).max() < 1e-15
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = model.q0 + 0.02 * rng.standard_normal(model.nq)
        assert_rows_match_differences(model, q, rng.standard_normal(model.nq),
                                      rng.standard_normal(model.nc))


def test_a_mesh_row_is_the_arc_between_the_pitch_circles():
    model = gearbox().build()
    row = model.constraint_names.index("stage1.mesh")
    q = model.q0.copy()
    for turn, expected in ((1e-3, 0.5 * M1 * Z[0] * 1e-3), (2 * math.pi, 0.0)):
        c, s = math.cos(0.2 + turn), math.sin(0.2 + turn)
        q[2:4] = (c, s)
        assert model.phi(q)[row] == pytest.approx(expected, rel=1e-9, abs=1e-15)


# -- gear trains ------------------------------------------------------------------------------

def test_a_driven_train_turns_by_its_ratio_product_over_many_turns():
    model = gearbox(driven=2 * math.pi * 25.0).build()      # 25 turns a second, 2 s
    res = linkdyn.kinematics(model, np.linspace(0.0, 2.0, 2001))
    t1, t23, t4 = (angle(res.q, i) for i in range(3))
    assert (t1[-1] - t1[0]) / (2 * math.pi) == pytest.approx(50.0, rel=1e-12)
    np.testing.assert_allclose(t23 - t23[0], -(Z[0] / Z[1]) * (t1 - t1[0]), rtol=0,
                               atol=1e-11)
    np.testing.assert_allclose(t4 - t4[0], RATIO * (t1 - t1[0]), rtol=0, atol=1e-11)
    w1 = res.v[:, 2] * -res.q[:, 3] + res.v[:, 3] * res.q[:, 2]
    w4 = res.v[:, 10] * -res.q[:, 11] + res.v[:, 11] * res.q[:, 10]
    np.testing.assert_allclose(w4, RATIO * w1, rtol=1e-12)


def test_a_torque_accelerates_the_train_with_its_reflected_inertia():
    torque = 0.05
    model = gearbox(torque=torque).build()
    for method, tol in (("auto", 1e-9), ("bdf", 1e-5)):
        res = linkdyn.simulate(model, t_end=1.0, rtol=1e-11, method=method,
                               t_out=np.linspace(0.0, 1.0, 1001))
        t1 = angle(res.q, 0)
        exact = 0.5 * torque / J_EFF * res.t ** 2
        np.testing.assert_allclose(t1 - t1[0], exact, rtol=0, atol=tol * exact[-1])
    # The second stage's tooth force turns gear 4 and nothing else: J4 alpha4 = its torque.
    alpha4 = RATIO * torque / J_EFF
    tau = res.gear_torques("stage2")
    np.testing.assert_allclose(tau[1:, 1], J4 * alpha4, rtol=1e-4)
    force = res.gear_force("stage2")
    r4 = 0.5 * M2 * Z[3]
    np.testing.assert_allclose(force[1:, 0], -J4 * alpha4 / r4, rtol=1e-4)
    np.testing.assert_allclose(force[:, 1], np.abs(force[:, 0]) * math.tan(math.radians(25)))
    np.testing.assert_allclose(force[:, 2], np.abs(force[:, 0]) / math.cos(math.radians(25)))


def test_power_in_equals_power_out_plus_the_change_of_kinetic_energy():
    torque, load = 0.08, -0.4
    res = linkdyn.simulate(gearbox(torque=torque, load=load).build(), t_end=1.0, rtol=1e-11)
    t1, t4 = angle(res.q, 0), angle(res.q, 2)
    work_in = torque * (t1 - t1[0])
    work_out = -load * (t4 - t4[0])
    kinetic = res.kinetic_energy
    np.testing.assert_allclose(kinetic - kinetic[0], work_in - work_out, rtol=0,
                               atol=1e-9 * work_in[-1])
    assert work_out[-1] > 0.1 * work_in[-1]         # the load takes a real share


def test_a_pendulum_behind_a_gear_swings_with_the_reflected_inertia():
    # Gear 2 carries a bob off its centre; gear 1 (inertia J1) adds J1 (z2/z1)^2 to it.
    z1, z2, m, mass, arm, theta0 = 15, 45, 0.002, 0.5, 0.04, 0.6
    a = 0.5 * m * (z1 + z2)
    j2 = 2e-4
    b = ModelBuilder("geared pendulum", gravity=(0.0, -G))
    b.add_ground_point("O1", (-a, 0.0))
    b.add_ground_point("O2", (0.0, 0.0))
    b.add_body("g1", mass=0.1, inertia=J1, position=(-a, 0.0))
    b.add_body("g2", mass=mass, inertia=j2, points={"c": (-arm, 0.0)},
               position=(arm * math.sin(theta0), -arm * math.cos(theta0)),
               angle=theta0 - math.pi / 2)
    b.add_revolute("p1", "g1.cm", "ground.O1")
    b.add_revolute("p2", "g2.c", "ground.O2")
    b.add_gear_pair("mesh", "g1.cm", "g2.c", teeth=(z1, z2), module=m)
    j_eff = j2 + mass * arm ** 2 + J1 * (z2 / z1) ** 2
    period = 4.0 * math.sqrt(j_eff / (mass * G * arm)) * ellipk(math.sin(theta0 / 2) ** 2)
    res = linkdyn.simulate(b.build(), t_end=period, rtol=1e-11, t_out=[0.0, period / 2, period])
    swing = angle(res.q, 1) + math.pi / 2
    np.testing.assert_allclose(swing, [theta0, -theta0, theta0], rtol=0, atol=1e-7)


def test_a_planetary_train_follows_willis_formula():
    rate = 3.0
    builder, (zs, zp, zr) = planetary(rate)
    res = linkdyn.kinematics(builder.build(), np.linspace(0.0, 4.0, 401))
    sun, arm, planet = (angle(res.q, i) for i in range(3))
    np.testing.assert_allclose(arm - arm[0], rate * res.t, atol=1e-12)
    np.testing.assert_allclose(sun - sun[0], (1 + zr / zs) * rate * res.t, atol=1e-11)
    np.testing.assert_allclose(planet - planet[0], (1 - zr / zp) * rate * res.t, atol=1e-11)


@pytest.mark.parametrize("below", [True, False])
def test_a_rack_moves_by_the_pinion_arc_and_takes_its_tooth_force(below):
    torque, mass, jp = 0.03, 0.8, 1e-4
    builder, r = rack(below, torque, mass, jp)
    res = linkdyn.simulate(builder.build(), t_end=0.5, rtol=1e-11,
                           t_out=np.linspace(0.0, 0.5, 101))
    theta = angle(res.q, 0)
    sense = 1.0 if below else -1.0
    alpha = torque / (jp + mass * r * r)
    np.testing.assert_allclose(theta - theta[0], 0.5 * alpha * res.t ** 2, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(res.q[:, 4] - res.q[0, 4], sense * r * (theta - theta[0]),
                               rtol=0, atol=1e-12)
    # The rack's force along its axis is its mass times its acceleration.
    np.testing.assert_allclose(res.gear_torques("rp")[:, 1], sense * mass * r * alpha,
                               rtol=1e-6)


# -- files and bad input --------------------------------------------------------------------

def test_gears_survive_a_model_file_round_trip(tmp_path):
    desc = gearbox(torque=0.1).description()
    path = tmp_path / "gearbox.json"
    from linkdyn.describe.modelfile import load, save

    save(desc, path)
    assert load(path) == desc
    data = json.loads(path.read_text())
    assert [g["type"] for g in data["gears"]] == ["gear_pair", "gear_pair"]
    builder, _ = rack()
    save(builder.description(), path)
    assert load(path) == builder.description()
    builder, _ = planetary()
    save(builder.description(), path)
    assert load(path).gears == builder.description().gears


def _add(builder, **change):
    kwargs = dict(first="g1.cm", second="g23.cm", teeth=Z[:2], module=M1)
    kwargs.update(change)
    builder.add_gear_pair("extra", **kwargs)


@pytest.mark.parametrize("change, message", [
    (dict(teeth=(20, 51)), "are 0.07 m apart in the initial guesses; teeth (20, 51) of module 0.002 m need 0.071 m"),
    (dict(teeth=(20.5, 50)), "teeth[0] must be a positive whole number"),
    (dict(teeth=(20,)), "teeth must be a pair"),
    (dict(module=-1.0), "module"),
    (dict(internal=True, teeth=(50, 20)), "needs more teeth than its pinion"),
    (dict(carrier="nope"), "carrier must be 'ground' or a body's name"),
    (dict(carrier="g1"), "gear body 'g1' is its own carrier"),
    (dict(second="g1.cm"), "must be different bodies"),
    (dict(second="g23.nope"), "nope"),
    (dict(pressure_angle=2.0), "pressure_angle must be in [0, pi/2)"),
])
def test_bad_gear_pairs_are_refused_by_name(change, message):
    with pytest.raises(ModelError, match="gear pair 'extra'") as info:
        _add(gearbox(), **change)
    assert message in str(info.value)


def test_bad_racks_are_refused_by_name():
    builder, _ = rack()
    with pytest.raises(ModelError, match="rack must name a prismatic joint .*slide"):
        builder.add_rack_and_pinion("r2", "pinion.cm", "pin", teeth=16, module=0.004)
    with pytest.raises(ModelError, match="lies 0.032 m from the rack's pitch line.*pitch radius is 0.036 m"):
        builder.add_rack_and_pinion("r2", "pinion.cm", "slide", teeth=18, module=0.004)
    with pytest.raises(ModelError, match="neither the rack nor its carrier"):
        builder.add_rack_and_pinion("r2", "rack.cm", "slide", teeth=16, module=0.004)
    with pytest.raises(ModelError, match="already used by a gear pair"):
        builder.add_revolute("rp", "pinion.cm", "ground.P")


def test_a_model_file_names_the_bad_gear_entry(tmp_path):
    from linkdyn.describe.modelfile import dumps, loads

    data = json.loads(dumps(gearbox().description()))
    data["gears"][1]["teeth"] = [18, 45.5]
    with pytest.raises(ModelFileError, match=r"gears\[1\].*teeth\[1\] must be a positive"):
        loads(json.dumps(data))
    data["gears"][1] = {"type": "worm", "name": "w"}
    with pytest.raises(ModelFileError, match=r"gears\[1\].*gear_pair, rack_and_pinion"):
        loads(json.dumps(data))


def test_results_name_unknown_gear_pairs():
    res = linkdyn.simulate(gearbox(torque=0.01).build(), t_end=0.01)
    with pytest.raises(UnknownNameError, match="stage1, stage2"):
        res.gear_force("stage3")


# -- spatial pairs between revolute joints ----------------------------------------------------

def shafts(z, sense, worm=False, driven=None, torque=0.0, inertias=(2e-4, 3e-3)):
    """Two shafts on revolute joints to the ground, coupled by a gear pair: a bevel pair on
    the x and y axes meeting at the origin, or a worm on x with its wheel on z, offset."""
    b = linkdyn.SpatialModelBuilder("shafts", gravity=(0.0, 0.0, -G))
    second_axis, second_at = ((0.0, 0.0, 1.0), (0.0, 0.05, 0.0)) if worm else \
        ((0.0, 1.0, 0.0), (0.0, 0.1, 0.0))
    b.add_ground_point("A", (0.1, 0.0, 0.0))
    b.add_ground_point("B", second_at)
    j1, j2 = inertias
    b.add_body("s1", mass=0.5, inertia=(j1, 1e-3, 1e-3), position=(0.1, 0.0, 0.0))
    inertia2 = (1e-2, 1e-2, j2) if worm else (1e-2, j2, 1e-2)
    b.add_body("s2", mass=1.0, inertia=inertia2, position=second_at)
    b.add_revolute("j1", "s1.cm", "ground.A", (1.0, 0.0, 0.0))
    b.add_revolute("j2", "s2.cm", "ground.B", second_axis)
    b.add_gear_pair("pair", "j1", "j2", teeth=z, module=0.002, sense=sense)
    if driven is not None:
        b.add_angle_driver("drive", "j1", {"law": "linear", "value": 0.0, "rate": driven})
    if torque:
        b.add_torque("T", "s1", torque, 0.0, 0.0)
    return b


def spin(q, base, axis):
    """A shaft's angle about a global axis (0: x, 2: z, 1: y) from its e vectors."""
    e = q[:, base + 3:base + 12].reshape(-1, 3, 3)     # e1, e2, e3 (rows), global
    i, k = [(1, 2), (2, 0), (0, 1)][axis]
    # the body's first principal axis perpendicular to the shaft turns about it
    ref = e[:, 0] if axis != 0 else e[:, 1]
    return np.unwrap(np.arctan2(ref[:, k], ref[:, i]))


def test_spatial_gear_rows_match_finite_differences():
    model = shafts((20, 30), "opposite").build()
    rng = np.random.default_rng(5)
    row = model.constraint_names.index("pair.mesh")
    assert abs(model.phi(model.q0)[row]) < 1e-15
    for _ in range(3):
        q = model.q0 + 0.02 * rng.standard_normal(model.nq)
        assert_rows_match_differences(model, q, rng.standard_normal(model.nq),
                                      rng.standard_normal(model.nc))


@pytest.mark.parametrize("z, sense, worm", [((20, 30), "opposite", False),
                                            ((1, 40), "same", True)])
def test_a_bevel_pair_and_a_worm_turn_their_shafts_by_the_teeth_ratio(z, sense, worm):
    rate = 2 * math.pi * 10.0                    # the first shaft: 10 turns a second, 3 s
    res = linkdyn.kinematics(shafts(z, sense, worm, driven=rate).build(),
                             np.linspace(0.0, 3.0, 3001))
    first = spin(res.q, 0, 0)
    second = spin(res.q, 12, 2 if worm else 1)
    np.testing.assert_allclose(first - first[0], rate * res.t, atol=1e-10)
    sign = 1.0 if sense == "same" else -1.0
    np.testing.assert_allclose(second - second[0], sign * (z[0] / z[1]) * rate * res.t,
                               atol=1e-10)


def test_a_bevel_pair_reflects_the_inertia_of_its_second_shaft():
    z, torque, (j1, j2) = (20, 30), 0.02, (2e-4, 3e-3)
    res = linkdyn.simulate(shafts(z, "opposite", torque=torque).build(), t_end=0.5,
                           rtol=1e-11, t_out=np.linspace(0.0, 0.5, 501))
    first = spin(res.q, 0, 0)
    exact = 0.5 * torque / (j1 + j2 * (z[0] / z[1]) ** 2) * res.t ** 2
    np.testing.assert_allclose(first - first[0], exact, rtol=0, atol=1e-8 * exact[-1])
    # the tooth force turns the second shaft: torque2 = J2 alpha2
    alpha2 = -(z[0] / z[1]) * 2 * exact[-1] / res.t[-1] ** 2
    np.testing.assert_allclose(res.gear_torques("pair")[1:, 1], j2 * alpha2, rtol=1e-6)


def test_spatial_gear_pairs_in_model_files_and_bad_input(tmp_path):
    from linkdyn.describe.modelfile import load, loads
    from linkdyn.describe.spatialfile import dumps, save

    desc = shafts((1, 40), "same", worm=True).description()
    save(desc, tmp_path / "worm.json")
    assert load(tmp_path / "worm.json") == desc
    data = json.loads(dumps(desc))
    data["gears"][0]["sense"] = "sideways"
    with pytest.raises(ModelFileError, match=r"gears\[0\].*sense must be 'opposite' or"):
        loads(json.dumps(data))
    b = shafts((20, 30), "opposite")
    with pytest.raises(ModelError, match="gear pair 'p2': 'nope' is not a revolute joint .*j1"):
        b.add_gear_pair("p2", "j1", "nope", teeth=(20, 30), module=0.002)
    with pytest.raises(ModelError, match="two different joints"):
        b.add_gear_pair("p2", "j1", "j1", teeth=(20, 30), module=0.002)


def test_the_drawing_puts_each_pitch_circle_on_its_gear():
    from linkdyn.compile.geometry import PointGeometry, gear_circles

    builder, (zs, zp, zr) = planetary()
    model = builder.build()
    q = linkdyn.consistent_state(model).q
    geo = PointGeometry(model, q.reshape(1, -1))
    circles = gear_circles(model, geo, np.zeros(1, dtype=int))
    m = 0.0025
    assert [r for _, r, _ in circles] == pytest.approx([m * z / 2 for z in (zs, zp, zp, zr)])
    np.testing.assert_allclose(circles[0][0][0], (0.0, 0.0), atol=1e-12)     # the sun
    np.testing.assert_allclose(circles[1][0][0], q[8:10], atol=1e-12)        # the planet
    for centre, radius, tip in circles:
        assert np.hypot(*(tip[0] - centre[0])) == pytest.approx(radius)
    assert model._repr_png_().startswith(b"\x89PNG")


# -- backlash ------------------------------------------------------------------------------

TOOTH = {"stiffness": 1e9, "exponent": 1.5, "damping": 50.0}


def loose_pair(backlash=1e-4, load=0.05, drive=None, damping=1e-3, contact=TOOTH):
    """Gear 1 (20 teeth) driven at 2 rad/s (or by ``drive``), gear 2 (50 teeth) under the
    load torque ``load`` and a joint damper, the teeth with ``backlash`` m of play (None:
    the exact pair)."""
    b = ModelBuilder("loose", gravity=(0.0, 0.0))
    a = 0.5 * M1 * (Z[0] + Z[1])
    b.add_ground_point("O1", (0.0, 0.0))
    b.add_ground_point("O2", (a, 0.0))
    b.add_body("g1", mass=0.3, inertia=2e-4, angle=0.2)
    b.add_body("g2", mass=1.1, inertia=3e-3, position=(a, 0.0), angle=-0.4)
    b.add_revolute("p1", "ground.O1", "g1.cm")
    b.add_revolute("p2", "ground.O2", "g2.cm")
    kw = {} if backlash is None else dict(backlash=backlash, contact=contact)
    b.add_gear_pair("mesh", "g1.cm", "g2.cm", teeth=Z[:2], module=M1, **kw)
    b.add_angle_driver("drive", "p1", drive or {"law": "linear", "value": 0.2, "rate": 2.0})
    if load:
        b.add_torque("load", "g2", load)
    if damping:
        b.add_joint_damper("d2", "p2", damping)
    return b


def test_a_loaded_pair_with_backlash_lags_by_half_its_play_and_the_teeth_s_deflection():
    """Under a steady load the driven gear sits on its driving flank: behind the exact
    pair's angle by (b / 2 + delta) / r2, delta = (F_t / K)^(1 / n) the teeth's Hertz
    deflection, with the exact pair's tooth force."""
    exact = linkdyn.simulate(loose_pair(None).build(), 1.0, dt_out=0.01, rtol=1e-9)
    loose = linkdyn.simulate(loose_pair().build(), 1.0, dt_out=0.01, rtol=1e-9)
    # gear 1 turning forwards closes the play on the upper side of the mesh arc
    assert [e.name for e in loose.events][:1] == ["mesh/upper"]
    f_exact, f_loose = exact.gear_force("mesh")[-1], loose.gear_force("mesh")[-1]
    np.testing.assert_allclose(f_loose, f_exact, rtol=1e-3)
    r2 = 0.5 * M1 * Z[1]
    delta = (f_exact[0] / TOOTH["stiffness"]) ** (1 / TOOTH["exponent"])
    lag = angle(loose.q, 1)[-1] - angle(exact.q, 1)[-1]
    assert lag == pytest.approx((0.5e-4 + delta) / r2, rel=1e-3)


def test_a_mesh_contact_record_matches_finite_differences():
    from conftest import central_difference

    model = loose_pair().build()
    q = model.q0.copy()
    # turn gear 2 by 60 um of arc past its lower flank: the contact presses
    r2 = 0.5 * M1 * Z[1]
    t = -0.4 + (0.5e-4 + 6e-5) / r2
    q[6:8] = math.cos(t), math.sin(t)
    v = np.random.default_rng(2).standard_normal(model.nq)
    assert np.abs(model.force(q, v)).max() > 1.0
    np.testing.assert_allclose(model.force_q(q, v).toarray(),
                               central_difference(lambda x: model.force(x, v), q, 1e-8),
                               rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(model.force_v(q, v).toarray(),
                               central_difference(lambda x: model.force(q, x), v),
                               rtol=1e-6, atol=1e-6)


def test_a_rattling_pair_balances_its_energy_and_converges_to_the_exact_pair():
    drive = {"law": "harmonic", "a": 0.2, "b": 0.3, "omega": 8.0, "phase": 0.0}
    res = linkdyn.simulate(loose_pair(load=0.0, damping=0.0, drive=drive).build(), 1.0,
                           dt_out=1e-3, rtol=1e-10, atol=1e-12)
    hits = [e for e in res.events if e.direction > 0]
    assert {e.name for e in hits} == {"mesh/lower", "mesh/upper"}     # both flanks
    lost = res.element_work("mesh/lower") + res.element_work("mesh/upper")
    np.testing.assert_allclose(res.energy - res.energy[0], res.driver_work + lost,
                               atol=1e-7 * np.abs(res.driver_work).max() + 1e-10)
    assert lost[-1] < 0.0
    # As the play shrinks the driven gear follows the exact pair, to the teeth's deflection
    # (stiff teeth here: with K = 1e9 the deflection under the rattle's inertia, some 15 um
    # of arc, would hide the play's share below b = 1e-5 m).
    exact = linkdyn.simulate(loose_pair(None, load=0.0, damping=0.0, drive=drive).build(),
                             1.0, dt_out=1e-3, rtol=1e-10)
    stiff = dict(TOOTH, stiffness=1e11)
    r2 = 0.5 * M1 * Z[1]
    arc = [r2 * np.abs(angle(linkdyn.simulate(
        loose_pair(b, load=0.0, damping=0.0, drive=drive, contact=stiff).build(), 1.0,
        dt_out=1e-3, rtol=1e-9).q, 1) - angle(exact.q, 1)).max() for b in (1e-4, 1e-6)]
    assert 0.5 * 0.5e-4 < arc[0] < 2.0 * 0.5e-4       # about half the play
    assert arc[1] < 0.1 * arc[0]


def test_backlash_in_model_files_and_bad_input(tmp_path):
    from linkdyn.describe.modelfile import load, save

    desc = loose_pair().description()
    save(desc, tmp_path / "loose.json")
    assert load(tmp_path / "loose.json") == desc
    data = json.loads((tmp_path / "loose.json").read_text())
    assert data["gears"][0]["backlash"] == 1e-4
    for change, message in (
            (dict(backlash=-1e-4, contact=TOOTH), "backlash must be positive"),
            (dict(backlash=0.01, contact=TOOTH), "below half the circular pitch"),
            (dict(backlash=1e-4), "backlash needs contact="),
            (dict(contact=TOOTH), "give backlash too"),
            (dict(backlash=1e-4, contact={"stiffness": 1e9, "size": 1}), "no field 'size'")):
        with pytest.raises(ModelError, match="gear pair 'extra'") as info:
            _add(gearbox(), **change)
        assert message in str(info.value)
    b, _ = planetary()
    with pytest.raises(ModelError, match="backlash needs the gears' centres on the ground"):
        b.add_gear_pair("extra", "sun.cm", "planet.cm", teeth=(24, 18), module=0.0025,
                        carrier="arm", backlash=1e-4, contact=TOOTH)
