"""Joints with clearance (linkdyn.elements.clearance): the contact forces' derivatives against
finite differences (a centred journal included), a pendulum whose pin has play converging to
the ideal pendulum as the clearance shrinks, an elastic clearance keeping the energy, an
impact rebounding at the restitution's speed, a slider in a frictionless guide with play
sliding exactly as in an ideal one, a ball in its socket, the reactions at rest, files and bad
input."""

import json
import math
from importlib import resources

import numpy as np
import pytest

import linkdyn
from conftest import central_difference
from linkdyn.compile.compiler import compile_model
from linkdyn.errors import ModelError, ModelFileError, UnknownNameError

G = 9.81


def pendulum(clearance=None, angle=0.0):
    """A bar of 1 m and 1 kg on a pin at its end, released at ``angle`` from horizontal."""
    b = linkdyn.ModelBuilder("pendulum", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, angle=angle,
              position=(0.5 * math.cos(angle), 0.5 * math.sin(angle)))
    b.add_revolute("pin", "ground.O", "rod.a", clearance=clearance)
    return b


def law(size, **extra):
    return {"size": size, "stiffness": 1e10, "exponent": 1.5,
            "model": "lankarani_nikravesh", "restitution": 0.5, **extra}


def angle(r):
    return np.unwrap(np.arctan2(r.q[:, 3], r.q[:, 2]))


def slider(axis=0.3, **extra):
    """A block of 1 kg in a guide on the ground, inclined at ``axis``, with play."""
    b = linkdyn.ModelBuilder("slider", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("block", mass=1.0, inertia=0.01, points={"c": (0.0, 0.0)}, angle=axis)
    b.add_prismatic("guide", "ground.O", "block.c", axis=axis, clearance={
        "size": 1e-3, "stiffness": 1e7, "length": 0.1, "height": 0.02, **extra})
    return b


@pytest.mark.parametrize("make", [
    lambda: pendulum({"size": 1e-3, "stiffness": 1e8, "damping": 0.3}).build(),
    lambda: slider(damping=0.2).build()])
def test_clearance_forces_and_their_derivatives_match_differences(make):
    model = make()
    rng = np.random.default_rng(4)
    # the second body pressed 0.4 mm into a wall: every contact's penetration is positive
    # on one side, and zero on the others
    q = model.q0.copy()
    q[:2] += 1.4e-3 * np.array([math.cos(2.0), math.sin(2.0)])
    q[2:4] = [math.cos(0.31), math.sin(0.31)]
    v = rng.standard_normal(model.nq)
    assert np.abs(model.force(q, v)).max() > 1.0
    fq = central_difference(lambda x: model.force(x, v), q, h=1e-8)
    fv = central_difference(lambda x: model.force(q, x), v, h=1e-3)   # linear in v
    scale = np.abs(model.force_q(q, v).toarray()).max()
    np.testing.assert_allclose(model.force_q(q, v).toarray(), fq, rtol=1e-6,
                               atol=1e-6 * scale)
    np.testing.assert_allclose(model.force_v(q, v).toarray(), fv, rtol=1e-6, atol=1e-6)


def test_a_centred_journal_feels_nothing():
    # Journal and bearing centres coincide: the distance has no direction there, and the
    # clearance's contact is open, so force and derivatives vanish (no error).
    model = pendulum({"size": 1e-3, "stiffness": 1e8, "damping": 0.3}).build()
    q, v = model.q0, np.ones(model.nq)
    assert np.abs(model.force(q, v) - model.force(q, 0 * v)).max() == 0.0
    assert model.force_q(q, v).count_nonzero() == 0


def test_a_pendulum_with_play_converges_to_the_ideal_one():
    # The pin's play lets the bar's end wander by the clearance c plus the contact's
    # penetration delta, so the angle departs from the ideal pendulum's by O((c + delta)/L).
    ideal = linkdyn.simulate(pendulum().build(), 1.0, rtol=1e-10, dt_out=1e-3)
    errors = []
    for size in (1e-3, 1e-4, 1e-5):
        r = linkdyn.simulate(pendulum(law(size)).build(), 1.0, rtol=1e-10, dt_out=1e-3)
        assert r.status == "success"
        reach = r.element_coordinate("pin").max()      # c + the deepest penetration
        assert size < reach < size + 1e-5
        errors.append(np.abs(angle(r) - angle(ideal)).max())
        assert errors[-1] < 5.0 * reach                # L = 1 m
    # each decade of clearance takes off most of a decade of error
    assert errors[0] > 5 * errors[1] > 25 * errors[2]


def test_an_elastic_clearance_keeps_the_energy_through_its_impacts():
    r = linkdyn.simulate(pendulum({"size": 1e-3, "stiffness": 1e8}).build(), 1.0,
                         rtol=1e-10, atol=1e-10, dt_out=1e-3)
    onsets = [e for e in r.events if e.name == "pin" and e.direction > 0]
    assert len(onsets) > 20                         # the end rattles in its bearing
    energy = r.kinetic_energy + r.potential_energy
    assert np.abs(energy - energy[0]).max() < 1e-6 * (0.5 * G)


def test_a_journal_rebounds_from_its_bearing_at_the_restitution_speed():
    # No gravity: a free bar whose end drifts at 0.1 m/s across its bearing strikes the
    # far side and comes back at e times the speed (Lankarani and Nikravesh's law, derived
    # for e near 1: 0.35% high at e = 0.95 for the joint stops, inside the 1% bound).
    e = 0.95
    b = linkdyn.ModelBuilder("drift", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0), velocity=(0.1, 0.0))
    b.add_revolute("pin", "ground.O", "rod.a",
                   clearance={"size": 1e-3, "stiffness": 1e9, "model": "lankarani_nikravesh",
                              "restitution": e})
    r = linkdyn.simulate(b.build(), 0.03, rtol=1e-10, dt_out=1e-5)
    off = [ev.t for ev in r.events if ev.name == "pin" and ev.direction < 0]
    on = [ev.t for ev in r.events if ev.name == "pin" and ev.direction > 0]
    assert len(on) >= 1 and len(off) >= 1 and off[0] > on[0]
    after = r.body_velocity("rod")[np.searchsorted(r.t, off[0]) + 1]
    assert -after[0] / 0.1 == pytest.approx(e, rel=1e-2)
    assert abs(after[1]) < 1e-9                     # a central impact stays central


def test_a_slider_with_play_slides_as_in_an_ideal_guide():
    # The walls are parallel to the axis and frictionless: along the axis the block falls
    # freely, s = -g sin(a) t^2 / 2, whatever its rattle across it; at rest on the lower
    # wall (damped) it presses with m g cos(a).
    a = 0.3
    r = linkdyn.simulate(slider(a, model="lankarani_nikravesh", restitution=0.5).build(), 0.5,
                         rtol=1e-10, dt_out=1e-3)
    axis = np.array([math.cos(a), math.sin(a)])
    s = r.body_position("block") @ axis
    np.testing.assert_allclose(s, -0.5 * G * math.sin(a) * r.t ** 2, atol=1e-8)
    names = {ev.name for ev in r.events}
    assert {"guide/lower_front", "guide/lower_back"} <= names
    force = r.clearance_force("guide")[-1]         # on the guide: along -n
    normal = np.array([-math.sin(a), math.cos(a)])
    np.testing.assert_allclose(force, -G * math.cos(a) * normal, rtol=1e-6, atol=1e-6)
    assert abs(r.body_angle("block")[-1] - a) < 1e-4   # settled flat on the wall


def test_a_hanging_pendulum_rests_on_its_bearing():
    # Dropped by the clearance onto the bearing's bottom, it bounces (e = 0.5) and comes to
    # rest: its last vibration, damped by the contact, is well below 1e-5 of its weight.
    r = linkdyn.simulate(pendulum(law(1e-3), angle=-math.pi / 2).build(), 2.0, rtol=1e-10,
                         dt_out=1e-2)
    np.testing.assert_allclose(r.clearance_force("pin")[-1], [0.0, -G], atol=1e-5 * G)
    # resting at the bearing's bottom, pressed in by the static penetration (G/K)^(2/3)
    end = r.element_coordinate("pin")[-1] - 1e-3
    assert end == pytest.approx((G / 1e10) ** (2 / 3), rel=1e-4)
    assert r.clearance_force("pin")[:, 1].max() <= 0.0   # the bearing is only ever pushed


def test_a_ball_in_its_socket_keeps_energy_and_stays_within_its_clearance():
    b = linkdyn.SpatialModelBuilder("ball", gravity=(0.0, 0.0, -G))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("bob", mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.5, 0.0, 0.0),
               points={"s": (-0.5, 0.0, 0.0)}, angular_velocity=(0.0, 0.0, 2.0))
    b.add_spherical("socket", "ground.O", "bob.s",
                    clearance={"size": 1e-3, "stiffness": 1e9})
    r = linkdyn.simulate(b.build(), 0.5, rtol=1e-10, atol=1e-10, dt_out=1e-3)
    assert len([e for e in r.events if e.name == "socket"]) > 4
    energy = r.kinetic_energy + r.potential_energy
    assert np.abs(energy - energy[0]).max() < 1e-6 * G
    # the ball presses in no deeper than where the contact's stored energy K d^2.5 / 2.5
    # would take all the mechanical energy (m g L / 2 + the spin's, 0.04 J, at most)
    deepest = (2.5 * (0.5 * G + 0.04) / 1e9) ** 0.4
    assert 1e-3 < r.element_coordinate("socket").max() < 1e-3 + deepest
    assert r.clearance_force("socket").shape == (len(r.t), 3)
    # the bob hangs from the socket: on the average it pulls the socket down
    assert r.clearance_force("socket")[:, 2].mean() < 0.0


def test_clearances_in_model_files_and_bad_input(tmp_path):
    for model in (pendulum(law(1e-3)).build(), slider().build()):
        path = tmp_path / f"{model.name}.json"
        linkdyn.modelfile.save(model.description, path)
        assert linkdyn.modelfile.load(path) == model.description
    data = json.loads((tmp_path / "slider.json").read_text())
    data["joints"][0]["clearance"]["size"] = -1e-3
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"joints\[0\].*size = -0.001 must be positive"):
        linkdyn.modelfile.load(tmp_path / "bad.json")

    with pytest.raises(ModelError, match="joint 'pin': clearance needs 'stiffness'"):
        pendulum({"size": 1e-3})
    with pytest.raises(ModelError, match="clearance has no field 'length'"):
        pendulum(law(1e-3, length=0.1))
    with pytest.raises(ModelError, match="needs the slider's length"):
        b = linkdyn.ModelBuilder()
        b.add_ground_point("O", (0.0, 0.0))
        b.add_body("block", mass=1.0, inertia=0.01, points={"c": (0.0, 0.0)})
        b.add_prismatic("guide", "ground.O", "block.c", clearance=law(1e-3))
    with pytest.raises(ModelError, match=r"initial guesses put the joint 0.001 m beyond"):
        b = linkdyn.ModelBuilder()
        b.add_ground_point("O", (0.0, 0.0))
        b.add_bar("rod", length=1.0, mass=1.0, position=(0.502, 0.0))
        b.add_revolute("pin", "ground.O", "rod.a", clearance=law(1e-3))
    with pytest.raises(ModelError, match="restitution belongs to model 'lankarani_nikravesh'"):
        pendulum({"size": 1e-3, "stiffness": 1e8, "restitution": 0.9})
    with pytest.raises(ModelError, match="the name is already used by a joint"):
        b = pendulum(law(1e-3))
        b.add_spring_damper("pin", "ground.O", "rod.b", stiffness=1.0)
    with pytest.raises(ModelError, match="'pin' is not a revolute or prismatic joint"):
        pendulum(law(1e-3)).add_joint_stop("stop", "pin", lower=-1.0, stiffness=1e5)
    r = linkdyn.simulate(pendulum(law(1e-3)).build(), 0.01)
    with pytest.raises(UnknownNameError, match="no joint with clearance 'rod'"):
        r.clearance_force("rod")


def test_clearance_stiffness_of_a_journal_in_its_bearing():
    # Hertz's two spheres, one inside the other: K = 4/(3 s) sqrt(R_b R_j / (R_b - R_j)),
    # s = 2 (1 - nu^2) / E for equal materials.
    k = linkdyn.clearance_stiffness(10.5e-3, 10e-3, 207e9, 0.3)
    s = 2 * (1 - 0.3 ** 2) / 207e9
    assert k == pytest.approx(4 / (3 * s) * math.sqrt(10.5e-3 * 10e-3 / 0.5e-3), rel=1e-12)
    with pytest.raises(ModelError, match="journal_radius = 0.02 must be below"):
        linkdyn.clearance_stiffness(0.01, 0.02, 207e9)


def test_a_driven_slider_crank_with_play_follows_the_ideal_one():
    # The built-in clearance_slider_crank (Flores and co-workers' machine: crank 0.05 m, rod
    # 0.12 m, 0.5 mm of play between rod and slider) slowed to 600 rpm, against itself with
    # an ideal wrist pin.
    text = resources.files("linkdyn.models").joinpath("clearance_slider_crank.json")
    w = 600 * 2 * math.pi / 60
    results = {}
    for worn in (False, True):
        data = json.loads(text.read_text(encoding="utf-8"))
        data["drivers"][0]["law"]["rate"] = w
        if not worn:
            wrist = next(j for j in data["joints"] if j["name"] == "wrist")
            wrist.pop("clearance")
        model = compile_model(linkdyn.modelfile.from_dict(data))
        results[worn] = linkdyn.simulate(model, 4 * math.pi / w, rtol=1e-9, dt_out=1e-4)
    ideal, play = results[False], results[True]
    x0, x1 = ideal.body_position("slider")[:, 0], play.body_position("slider")[:, 0]
    # The rod's end lies within the play (plus the penetration, < 1e-5 m) of the slider's
    # pin, so off the axis by as much, which moves it along by up to tan(phi) times that,
    # phi the rod's steepest angle asin(0.05 / 0.12); the pin is within the play of it.
    reach = 0.5e-3 + 1e-5
    bound = reach * (1.0 + math.tan(math.asin(0.05 / 0.12)))
    assert 0.1e-3 < np.abs(x1 - x0).max() < bound
    assert len(play.events) > 2


def test_joints_with_clearance_are_drawn_as_pins_and_sliders(tmp_path):
    from linkdyn.compile.geometry import pins, slides

    model = linkdyn.load_model("clearance_slider_crank")
    # the wrist's journal is drawn as a pin, beside the ideal main and crank pins
    assert pins(model) == [("ground", "O"), ("crank", "b"), ("rod", "b")]
    assert [j.name for j in slides(model)] == ["guide"]
    assert [j.name for j in slides(slider().build())] == ["guide"]
    r = linkdyn.simulate(model, 0.004, dt_out=1e-3)
    fig = r.snapshot(0.002)
    assert len(fig.axes) >= 1
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_an_html_page_shows_the_journal_among_the_joints(tmp_path):
    pytest.importorskip("plotly")
    r = linkdyn.simulate(linkdyn.load_model("clearance_slider_crank"), 0.004, dt_out=1e-3)
    page = tmp_path / "page.html"
    r.to_html(page)
    assert page.stat().st_size > 1000
