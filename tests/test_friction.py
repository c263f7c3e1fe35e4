"""Coulomb friction with stick-slip (linkdyn.friction): known solutions of blocks and disks,
event times, energy balance, bad input."""

import json
import math
from importlib import resources

import numpy as np
import pytest

import linkdyn
from linkdyn import ModelBuilder, ModelError, laws, modelfile
from linkdyn.model import compile_model

G = 9.81


def incline_block(alpha, mu, mu0, v0=0.0, mass=1.0, K=1e6, c=1.0):
    """A point-contact block on a line at alpha rad through the origin, starting at the
    static penetration with velocity v0 along the line."""
    b = ModelBuilder("block", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    depth = (mass * G * math.cos(alpha) / K) ** (1 / 1.5)
    n = (-math.sin(alpha), math.cos(alpha))
    t = (math.cos(alpha), math.sin(alpha))
    b.add_body("block", mass=mass, inertia=0.01, position=(-depth * n[0], -depth * n[1]),
               velocity=(v0 * t[0], v0 * t[1]))
    b.add_contact("c", "block.cm", "ground.O", line_angle=alpha, stiffness=K, damping=c,
                  friction=mu, static_friction=mu0)
    return b.build()


def along(result, alpha):
    """Position and velocity of the block along the line."""
    t = np.array([math.cos(alpha), math.sin(alpha)])
    return result.q[:, :2] @ t, result.v[:, :2] @ t


def test_block_on_incline_builtin_stays_put_to_round_off():
    model = linkdyn.load_model("block_on_incline")
    r = linkdyn.simulate(model, 100.0, rtol=1e-10, atol=1e-12)
    alpha = math.radians(20.0)
    assert math.tan(alpha) < 0.5
    drift = np.max(np.abs(r.q[:, :2] - r.q[0, :2]))
    assert drift < 1e-12            # round-off, not micrometres
    assert [m for _, _, m in r.friction_modes] == ["stick"]
    # The stick row holds exactly the downhill pull of gravity.
    np.testing.assert_allclose(r.friction_force("contact"), G * math.sin(alpha), rtol=1e-9)


def test_block_above_the_static_limit_slides_with_kinetic_friction():
    data = json.loads(resources.files("linkdyn.models").joinpath("block_on_incline.json")
                      .read_text())
    data["contacts"][0]["static_friction"] = 0.35          # below tan 20 deg = 0.364
    model = compile_model(modelfile.from_dict(data))
    alpha, mu = math.radians(20.0), 0.3
    r = linkdyn.simulate(model, 2.0, rtol=1e-10, atol=1e-12)
    s, v = along(r, alpha)
    acc = -G * (math.sin(alpha) - mu * math.cos(alpha))  # downhill: s decreases
    np.testing.assert_allclose(s - s[0], 0.5 * acc * r.t**2, atol=1e-9)
    np.testing.assert_allclose(v, acc * r.t, atol=1e-8)
    # Kinetic friction mu N, pointing uphill on a block sliding down.
    np.testing.assert_allclose(r.friction_force("contact")[1:], mu * G * math.cos(alpha),
                               rtol=1e-6)
    assert [m for _, _, m in r.friction_modes] == ["slide-"]


def test_sliding_block_stops_at_the_right_time_and_then_sticks():
    alpha, mu, mu0, v0 = math.radians(10.0), 0.3, 0.5, -1.0
    r = linkdyn.simulate(incline_block(alpha, mu, mu0, v0), 2.0, rtol=1e-10, atol=1e-12)
    dec = G * (mu * math.cos(alpha) - math.sin(alpha))    # deceleration while sliding down
    t_stop = -v0 / dec
    stops = [e for e in r.events if e.name == "c/stop"]
    assert len(stops) == 1 and abs(stops[0].t - t_stop) < 1e-7
    assert [m for _, _, m in r.friction_modes] == ["slide-", "stick"]
    s, v = along(r, alpha)
    after = r.t > t_stop + 1e-9
    np.testing.assert_allclose(s[after] - s[0], -v0**2 / (2 * dec), atol=1e-8)
    assert np.max(np.abs(v[after])) < 1e-12
    # Energy: what the block lost went into contact damping and friction.
    np.testing.assert_allclose(r.energy - r.energy[0], r.work, atol=1e-7)
    assert r.work[-1] < -0.4


def test_ramped_push_breaks_away_at_mu0_m_g_then_kinetic_friction():
    m, mu, mu0, rate, K = 2.0, 0.3, 0.5, 4.0, 1e6
    b = ModelBuilder("pushed", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    depth = (m * G / K) ** (1 / 1.5)
    b.add_body("block", mass=m, inertia=0.01, position=(0.0, -depth))
    b.add_contact("c", "block.cm", "ground.O", stiffness=K, damping=1.0, friction=mu,
                  static_friction=mu0)
    b.add_force("push", "block.cm", laws.linear(0.0, rate))
    r = linkdyn.simulate(b.build(), 4.0, rtol=1e-10, atol=1e-12)
    t_break = mu0 * m * G / rate
    slips = [e for e in r.events if e.name == "c/slip"]
    assert len(slips) == 1 and abs(slips[0].t - t_break) < 1e-7
    assert [mode for _, _, mode in r.friction_modes] == ["stick", "slide+"]
    x, v = r.q[:, 0], r.v[:, 0]
    before, after = r.t < t_break, r.t > t_break
    assert np.max(np.abs(x[before] - x[0])) < 1e-12
    # Sticking: the friction balances the push; sliding: -mu m g.
    np.testing.assert_allclose(r.friction_force("c")[before], -rate * r.t[before],
                               atol=1e-8)
    np.testing.assert_allclose(r.friction_force("c")[after], -mu * m * G, rtol=1e-6)
    ta = r.t[after]
    v_exact = (0.5 * rate * (ta**2 - t_break**2) - mu * m * G * (ta - t_break)) / m
    np.testing.assert_allclose(v[after], v_exact, atol=1e-7)


def test_disk_rolls_down_an_incline_at_two_thirds_g_sin_alpha():
    alpha, m, R, K = math.radians(30.0), 1.5, 0.1, 1e7
    b = ModelBuilder("disk", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    depth = (m * G * math.cos(alpha) / K) ** (1 / 1.5)
    n = np.array([-math.sin(alpha), math.cos(alpha)])
    b.add_body("disk", mass=m, inertia=0.5 * m * R**2, position=tuple((R - depth) * n))
    b.add_contact("c", "disk.cm", "ground.O", line_angle=alpha, radius=R, stiffness=K,
                  damping=1.0, friction=0.5, static_friction=0.6)
    model = b.build()
    r = linkdyn.simulate(model, 3.0, rtol=1e-10, atol=1e-12)
    assert [mode for _, _, mode in r.friction_modes] == ["stick"]
    # The friction needed (m g sin(alpha) / 3) is a third of mu0 F_N: no slip event fires.
    # (This run used to fire 1,373 false ones in two bursts of tiny steps: Newton corrections
    # at a few ulps of the 14 m coordinates were not taken as converged, the steps shrank, and
    # the slip test read the BDF's own multipliers, which carry the Newton residue over h^2.
    # ld_bdf.c, "Round-off floor" and "Events".)
    assert r.stats["events"] == 0 and r.stats["restarts"] == 0
    s, v = along(r, alpha)
    acc = -2.0 / 3.0 * G * math.sin(alpha)
    np.testing.assert_allclose(s - s[0], 0.5 * acc * r.t**2, atol=1e-8)
    # Rolling without slip over many turns: the angle turned is the distance over R.
    angle = np.unwrap(np.arctan2(r.q[:, 3], r.q[:, 2]))
    assert abs(s[-1] - s[0]) / (2 * math.pi * R) > 20
    np.testing.assert_allclose(angle - angle[0], -(s - s[0]) / R, atol=1e-7)
    # Friction m g sin(alpha) / 3 uphill holds the contact point at rest.
    np.testing.assert_allclose(r.friction_force("c"), m * G * math.sin(alpha) / 3,
                               rtol=1e-7)
    # Rolling: the sticking friction does no work and the contact barely moves normally, so
    # energy is conserved up to the integration error, which falls with the tolerance (the
    # disk turns over 20 times: the error is the BDF's on the fast rotation).
    drift = abs(r.energy[-1] - r.energy[0] - r.work[-1]) / r.energy[0]
    coarse = linkdyn.simulate(model, 3.0, rtol=1e-8, atol=1e-10)
    drift_coarse = abs(coarse.energy[-1] - coarse.energy[0] - coarse.work[-1]) / r.energy[0]
    assert drift < 1e-5 and drift < drift_coarse / 20
    assert abs(r.work[-1]) < 1e-6 * r.energy[0]


def test_frictionless_and_friction_contacts_share_a_model():
    b = ModelBuilder("two", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    for k, x in enumerate((0.0, 1.0)):
        depth = (G / 1e6) ** (1 / 1.5)
        b.add_body(f"b{k}", mass=1.0, inertia=0.01, position=(x, -depth), velocity=(1.0, 0))
        b.add_contact(f"c{k}", f"b{k}.cm", "ground.O", stiffness=1e6, damping=1.0,
                      friction=(0.2 if k else None))
    r = linkdyn.simulate(b.build(), 1.0, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(r.v[:, 0], 1.0, atol=1e-9)             # frictionless
    # The one with friction decelerates at mu g and stops at 1 / (mu g) = 0.51 s.
    np.testing.assert_allclose(r.v[:, 4], np.maximum(1.0 - 0.2 * G * r.t, 0.0), atol=1e-7)
    with pytest.raises(KeyError, match="c0"):
        r.friction_force("c0")


@pytest.mark.parametrize("kwargs, match", [
    (dict(friction=-0.1), "friction"),
    (dict(friction=0.5, static_friction=0.3), "mu0 = 0.3 is below"),
    (dict(static_friction=0.3), "needs friction"),
    (dict(friction=0.3, stick_velocity=0.0), "stick_velocity"),
    # inside the velocities' noise: a walker with 1e-300 did not finish 0.02 s in 20 s
    (dict(friction=0.3, stick_velocity=1e-300), "stick_velocity = 1e-300 m/s is below 1e-10"),
    (dict(friction=float("nan")), "friction"),
])
def test_bad_friction_raises(kwargs, match):
    b = ModelBuilder("bad")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("block", mass=1.0, inertia=0.01)
    with pytest.raises(ModelError, match=match) as info:
        b.add_contact("c", "block.cm", "ground.O", stiffness=1e6, **kwargs)
    assert "contact 'c'" in str(info.value)


def test_friction_survives_the_model_file_round_trip(tmp_path):
    model = linkdyn.load_model("block_on_incline")
    path = tmp_path / "block.json"
    modelfile.save(model.description, path)
    again = compile_model(modelfile.load(path))
    assert again.description.contacts == model.description.contacts


def test_an_arc_carries_until_the_contact_runs_off_its_end():
    # A disk whose rim carries only on +-0.3 rad around its -n direction rolls down a
    # 30 degree incline; after turning 0.3 rad (rolling R 0.3 at (2/3) g sin alpha) the
    # contact direction leaves the arc and the disk falls free.
    alpha, m, R, K, half = math.radians(30.0), 1.5, 0.1, 1e7, 0.3
    b = ModelBuilder("rocker", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    depth = (m * G * math.cos(alpha) / K) ** (1 / 1.5)
    n = np.array([-math.sin(alpha), math.cos(alpha)])
    b.add_body("disk", mass=m, inertia=0.5 * m * R**2, position=tuple((R - depth) * n),
               u=(math.cos(alpha), math.sin(alpha)))
    b.add_contact("c", "disk.cm", "ground.O", line_angle=alpha, radius=R, stiffness=K,
                  damping=1.0, friction=0.5, static_friction=0.6,
                  arc=(-math.pi / 2 - half, -math.pi / 2 + half))
    r = linkdyn.simulate(b.build(), 0.3, rtol=1e-10, atol=1e-12, dt_out=1e-3)
    t_exit = math.sqrt(2 * R * half / (2.0 / 3.0 * G * math.sin(alpha)))
    ends = [e for e in r.events if e.name == "c/arc_min"]
    assert len(ends) == 1 and abs(ends[0].t - t_exit) < 1e-6
    assert ("off arc" in [m for _, _, m in r.friction_modes])
    after = r.t > t_exit + 1e-9
    assert np.all(r.element_force("c")[after] == 0.0)
    assert np.all(r.friction_force("c")[after] == 0.0)
    # Free fall from then on: the centre's acceleration is gravity.
    np.testing.assert_allclose(r.a[after][:, 1], -G, atol=1e-6)
    # Before: rolling on the arc, the angle turned is the distance over R.
    before = r.t < t_exit
    s, _ = along(r, alpha)
    angle = np.unwrap(np.arctan2(r.q[:, 3], r.q[:, 2]))
    np.testing.assert_allclose(angle[before] - angle[0], -(s[before] - s[0]) / R, atol=1e-8)


@pytest.mark.parametrize("arc, match", [((0.0, 4.0), "less than a half circle"),
                                         ((1.0, 0.5), "less than a half circle"),
                                         ("bottom", "arc must be")])
def test_bad_arcs_raise(arc, match):
    b = ModelBuilder("bad")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("disk", mass=1.0, inertia=0.01)
    with pytest.raises(ModelError, match=match):
        b.add_contact("c", "disk.cm", "ground.O", radius=0.1, stiffness=1e6, arc=arc)


def row_of_blocks(velocities, mu=0.2):
    b = ModelBuilder("blocks", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    depth = (G / 1e6) ** (1 / 1.5)
    for k, v0 in enumerate(velocities):
        b.add_body(f"b{k}", mass=1.0, inertia=0.01, position=(2.0 * k, -depth),
                   velocity=(v0, 0.0))
        b.add_contact(f"c{k}", f"b{k}.cm", "ground.O", stiffness=1e6, damping=1.0,
                      friction=mu)
    return b.build()


def test_contacts_the_mechanism_does_not_couple_are_decided_apart():
    """Blocks on the floor, connected by nothing: their tangential accelerations do not act
    on each other (W is diagonal), so each is its own stick-slip LCP (before, one LCP of
    all of them, whose cost grew with their cube: 500 blocks at rest took 2.0 s to decide,
    now 0.25 s). The walker's two feet, coupled through the hip, stay one LCP. Each block
    slides to rest at mu g or stays at rest, as alone."""
    from linkdyn.elements.friction import coordinate_components, coupled_groups, gradient

    velocities = [0.0, 0.5, 0.0, 1.0, 0.2, 0.0]
    model = row_of_blocks(velocities)
    r = linkdyn.simulate(model, 0.6, rtol=1e-10, atol=1e-12)
    for k, v0 in enumerate(velocities):
        np.testing.assert_allclose(r.v[:, 4 * k], np.maximum(v0 - 0.2 * G * r.t, 0.0),
                                   atol=1e-7)
    run = model.kernels.run_state()
    component = coordinate_components(model)
    grads = [gradient(run, f[1], model.q0, model.v0)[0]
             for f in model.force_info["frictions"]]
    assert coupled_groups(component, grads) == [[k] for k in range(len(velocities))]
    walker = linkdyn.load_model("walker_gait1")
    run = walker.kernels.run_state()
    grads = [gradient(run, f[1], walker.q0, walker.v0)[0]
             for f in walker.force_info["frictions"]]
    assert coupled_groups(coordinate_components(walker), grads) == [[0, 1]]
