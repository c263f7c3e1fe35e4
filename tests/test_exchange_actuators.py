"""MJCF actuators (linkdyn.exchange.mjcf_actuators): motors, position and velocity servos
and affine general actuators on hinges and slides, read as linkdyn's motors, servos and
joint dampers, against MuJoCo's own dynamics of the same files and a closed form."""

import math
import warnings

import numpy as np
import pytest

import linkdyn
from linkdyn.elements import laws

from test_exchange import gymnasium_file

#: Every kind of actuator read, on hinges with a ref and a slide with a spring: a position
#: servo with kv (gear 2, ctrl-limited), an unnamed velocity servo, a motor whose control
#: is clamped (5 -> 1), a general actuator with an affine bias (b0, b1, b2 all nonzero).
ACTUATED = """<mujoco model="acts">
  <option gravity="0 0 -9.81"><flag contact="disable"/></option>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" ref="10" damping="0.05"
             armature="0.02"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04"/>
      <body name="fore" pos="0.5 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03"/>
      </body>
    </body>
    <body name="cart" pos="1 1 0">
      <joint name="rail" type="slide" axis="1 0 0.5" ref="0.1" stiffness="40" springref="0.3"
             armature="0.5"/>
      <geom type="box" size="0.1 0.1 0.1"/>
      <body name="pole" pos="0 0 0.1">
        <joint name="pivot" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.6" size="0.02"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="shoulder" joint="shoulder" kp="30" kv="2" gear="2" ctrlrange="-1 1"/>
    <velocity joint="elbow" kv="0.5" gear="1.5"/>
    <motor name="push" joint="rail" gear="3" ctrlrange="-1 1"/>
    <general name="hold" joint="pivot" gainprm="4" biasprm="0.5 -6 -0.3" gear="0.8"/>
  </actuator>
</mujoco>
"""
CONTROLS = {"shoulder": 0.7, "actuator_1": -2.0, "push": 5.0, "hold": 0.25}
INITIAL = {"shoulder": (0.6, 0.3), "elbow": (0.2, -1.0), "rail": (0.05, 0.2), "pivot": (0.1, 0.0)}


def quiet_load(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linkdyn.ModelWarning)
        return linkdyn.load_model(path, **options)


def mujoco_run(mujoco, mm, controls, T, initial=None, step=5e-5):
    """MuJoCo's RK4 at ``step`` to T from ``initial`` (joint: (qpos, qvel)), with
    ``controls`` by actuator name (actuator_<i> for unnamed ones): the data at T."""
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    mm.opt.timestep = step
    data = mujoco.MjData(mm)
    for joint, (q, v) in (initial or {}).items():
        j = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, joint)
        data.qpos[mm.jnt_qposadr[j]], data.qvel[mm.jnt_dofadr[j]] = q, v
    for i in range(mm.nu):
        name = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"actuator_{i}"
        data.ctrl[i] = controls.get(name, 0.0)
    mujoco.mj_forward(mm, data)
    while data.time < T - 1e-12:
        mujoco.mj_step(mm, data)
    mujoco.mj_forward(mm, data)
    return data


def farthest(mujoco, mm, data, model, result) -> tuple:
    """(largest distance of a body's centre of mass from MuJoCo's at the end, largest
    distance a body moved)."""
    off = moved = 0.0
    for i in range(mm.nbody):
        body = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, i)
        if body not in model.body_names:
            continue
        p = result.body_position(body)
        off = max(off, np.abs(p[-1] - data.xipos[i]).max())
        moved = max(moved, np.abs(p[-1] - p[0]).max())
    return off, moved


def test_every_kind_of_actuator_moves_as_mujoco_computes_it(tmp_path):
    """All four actuator kinds, a hinge's ref, a slide's spring, armature on a hinge and a
    slide, and initial states: every centre of mass after 1 s against MuJoCo's RK4 at
    5e-5 s. Measured 1.5e-11 m (the bound is the tolerance's); the same run with the
    clamped control unclamped (0.9 instead of 1) ends 1e-2 m off, so the comparison sees
    each actuator."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "acts.xml"
    path.write_text(ACTUATED)
    mm = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco_run(mujoco, mm, CONTROLS, 1.0, INITIAL)
    model = linkdyn.load_model(path, initial=INITIAL, controls=CONTROLS)
    assert set(model.force_names) == {
        "shoulder/damping", "rail/stiffness", "shoulder/actuator", "shoulder/actuator/damping",
        "actuator_1", "actuator_1/damping", "push", "hold"}
    r = linkdyn.simulate(model, 1.0, rtol=1e-10, atol=1e-10, t_out=[0.0, 1.0])
    off, moved = farthest(mujoco, mm, data, model, r)
    assert off < 1e-9 and moved > 0.5
    other = linkdyn.load_model(path, initial=INITIAL, controls={**CONTROLS, "push": 0.9})
    r = linkdyn.simulate(other, 1.0, rtol=1e-10, atol=1e-10, t_out=[0.0, 1.0])
    assert farthest(mujoco, mm, data, other, r)[0] > 1e-3


@pytest.mark.parametrize("name", ["ant", "half_cheetah", "hopper", "inverted_double_pendulum",
                                  "reacher", "walker2d"])
def test_gymnasium_models_move_under_their_motors_as_mujoco_computes_them(name):
    """gymnasium's models with random controls (some beyond their ctrlrange: clamped) and
    their joints' armature (rotors), contacts and limits off: every centre of mass after
    0.2 s against MuJoCo's RK4 at 5e-5 s. Measured 1.2e-14 to 2.8e-10 m where bodies
    move 0.2 to 1.0 m (the walker's is MuJoCo's own error: it is 16 times larger at
    1e-4 s, fourth order)."""
    mujoco = pytest.importorskip("mujoco")
    path = gymnasium_file(name)
    mm = mujoco.MjModel.from_xml_path(path)
    names = [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"actuator_{i}"
             for i in range(mm.nu)]
    rng = np.random.default_rng(3)
    controls = {n: float(rng.uniform(-1.5, 1.5)) for n in names}
    bits = mujoco.mjtDisableBit
    mm.opt.disableflags |= bits.mjDSBL_CONTACT | bits.mjDSBL_LIMIT
    data = mujoco_run(mujoco, mm, controls, 0.2)
    model = quiet_load(path, controls=controls)
    r = linkdyn.simulate(model, 0.2, rtol=1e-10, atol=1e-10, t_out=[0.0, 0.2])
    off, moved = farthest(mujoco, mm, data, model, r)
    assert off < 5e-9 and moved > 0.1


def test_a_harmonic_control_drives_a_block_as_the_closed_form(tmp_path):
    """A block (8 kg) on a level slide pushed by a motor of gear 2 with the control
    0.5 sin(3 t): x(t) = (g B / (m w)) (t - sin(w t) / w) from rest."""
    path = tmp_path / "block.xml"
    path.write_text("""<mujoco><worldbody><body name="block">
      <joint name="x" type="slide" axis="1 0 0"/><geom type="box" size="0.1 0.1 0.1"/>
      </body></worldbody>
      <actuator><motor name="m" joint="x" gear="2" ctrlrange="-1 1"/></actuator></mujoco>""")
    model = linkdyn.load_model(path, controls={"m": laws.harmonic(0.0, 0.5, 3.0)})
    t = np.linspace(0.0, 2.0, 21)
    r = linkdyn.simulate(model, 2.0, rtol=1e-11, atol=1e-11, t_out=t)
    x = r.body_position("block")[:, 0] - r.body_position("block")[0, 0]
    exact = 2.0 * 0.5 / (8.0 * 3.0) * (t - np.sin(3.0 * t) / 3.0)
    assert np.abs(x - exact).max() < 1e-9 and exact[-1] > 0.05


def test_a_position_servo_holds_its_target(tmp_path):
    """A damped pendulum under a position servo (gear 2) settles where the servo's torque
    balances gravity: kp g (u - g q) = m g_0 l sin(q) (the arm horizontal at q = 0), a
    root checked to 1e-8 rad."""
    path = tmp_path / "held.xml"
    path.write_text("""<mujoco><worldbody><body name="arm" pos="0 0 1">
      <joint name="j" type="hinge" axis="0 -1 0" damping="2"/>
      <geom type="sphere" pos="0.5 0 0" size="0.05" mass="1"/>
      </body></worldbody>
      <actuator><position name="p" joint="j" kp="20" gear="2"/></actuator></mujoco>""")
    model = linkdyn.load_model(path, controls={"p": 1.0})
    r = linkdyn.simulate(model, 30.0, rtol=1e-10, atol=1e-10, t_out=[30.0])
    p = r.body_position("arm")[-1]
    q = math.atan2(p[2] - 1.0, p[0])          # the arm's angle up from horizontal
    assert abs(20.0 * 2.0 * (1.0 - 2.0 * q) - 9.81 * 0.5 * math.cos(q)) < 1e-6
    assert 0.3 < q < 0.5


BAD_CONTROLS = {
    "unknown": ({"nowhere": 1.0}, linkdyn.ArgumentError, r"no actuator named 'nowhere'.*push"),
    "type": ({"push": "fast"}, linkdyn.ArgumentTypeError, r"controls\['push'\] must be a num"),
    "nan": ({"push": float("nan")}, linkdyn.ArgumentError, r"controls\['push'\] must be finite"),
    "ramp": ({"push": laws.linear(0.0, 1.0)}, linkdyn.ArgumentError,
             r"ctrl-limited to \[-1.0, 1.0\].*linear law"),
    "wide": ({"push": laws.harmonic(0.5, 0.8, 1.0)}, linkdyn.ArgumentError,
             r"not provably within"),
    "cubic": ({"push": laws.tabulated([0.0, 1.0, 2.0], [0.0, 1.0, 0.0])},
              linkdyn.ArgumentError, r"'pchip' table"),
}


def test_an_actuator_of_an_unknown_class_is_named(tmp_path):
    path = tmp_path / "classless.xml"
    path.write_text("""<mujoco><worldbody><body name="b">
      <joint name="x" type="slide" axis="1 0 0"/><geom type="box" size="0.1 0.1 0.1"/>
      </body></worldbody>
      <actuator>
      <motor name="m" joint="x" class="nowhere"/></actuator></mujoco>""")
    with pytest.raises(linkdyn.ModelFileError, match=r"line 5, <motor.*'class'"):
        linkdyn.load_model(path)


@pytest.mark.parametrize("case", sorted(BAD_CONTROLS))
def test_bad_controls_are_named(tmp_path, case):
    path = tmp_path / "acts.xml"
    path.write_text(ACTUATED)
    controls, error, pattern = BAD_CONTROLS[case]
    with pytest.raises(error, match=pattern):
        linkdyn.load_model(path, controls=controls)


def test_controls_within_the_range_are_taken(tmp_path):
    """A harmonic within ctrlrange and a pchip table within it are taken as given."""
    path = tmp_path / "acts.xml"
    path.write_text(ACTUATED)
    for law in (laws.harmonic(0.1, 0.8, 2.0), laws.tabulated([0, 1, 2], [0, 1, -1], "pchip")):
        assert "push" in linkdyn.load_model(path, controls={"push": law}).force_names


def test_controls_apply_to_mjcf_files_alone(tmp_path):
    path = tmp_path / "one.urdf"
    path.write_text("<robot name='r'><link name='a'/></robot>")
    with pytest.raises(linkdyn.ArgumentError, match="controls applies to MJCF files"):
        linkdyn.load_model(path, controls={"m": 1.0})
    with pytest.raises(linkdyn.ArgumentTypeError, match="controls must be a dict"):
        linkdyn.load_model(gymnasium_file("hopper"), controls=[1.0])


def test_actuators_not_read_are_named(tmp_path):
    """Activation dynamics, force limits, a tendon's transmission, a positive bias (a
    negative stiffness) and a non-fixed gain: each named in the file's one warning; the
    force-limited motor is read, its limit named."""
    path = tmp_path / "others.xml"
    path.write_text("""<mujoco><worldbody><body name="b">
      <joint name="x" type="slide" axis="1 0 0"/><geom type="box" size="0.1 0.1 0.1"/>
      </body></worldbody>
      <tendon><fixed name="t"><joint joint="x" coef="1"/></fixed></tendon>
      <actuator>
        <general name="filtered" joint="x" dyntype="filter" dynprm="0.1"/>
        <motor name="limited" joint="x" forcerange="-1 1"/>
        <motor name="pulled" tendon="t"/>
        <general name="unstable" joint="x" biastype="affine" biasprm="0 2 0"/>
        <general name="muscle" joint="x" gaintype="muscle"/>
        <position name="timed" joint="x" kp="1" timeconst="0.1"/>
      </actuator></mujoco>""")
    with pytest.warns(linkdyn.ModelWarning) as caught:
        model = linkdyn.load_model(path)
    text = " ".join(str(w.message) for w in caught)
    for name in ("filtered", "limited", "pulled", "unstable", "muscle", "timed"):
        assert name in text
    assert "force limits (forcerange) (1: limited)" in text
    assert model.force_names == ("limited",)


def test_armature_slows_a_pendulum_as_its_reflected_inertia(tmp_path):
    """A point mass m on an arm l with armature a: small swings (1e-3 rad) of period
    2 pi sqrt((m l^2 + a) / (m g l)), measured over five periods between upward zero
    crossings of the mass's horizontal offset to 1e-6 of it (the amplitude's correction is
    6e-8); the rotor's energy a theta'^2 / 2 keeps the total constant."""
    m, l, a, g0 = 1.0, 0.5, 0.1, 9.81
    path = tmp_path / "armature.xml"
    path.write_text(f"""<mujoco><worldbody><body name="arm" pos="0 0 1">
      <joint name="j" type="hinge" axis="0 1 0" armature="{a}"/>
      <geom type="sphere" pos="0 0 -{l}" size="0.001" mass="{m}"/>
      </body></worldbody></mujoco>""")
    model = linkdyn.load_model(path, initial={"j": 1e-3})
    assert model.body_names == ("arm", "j/rotor")
    period = 2 * math.pi * math.sqrt((m * l * l + a) / (m * g0 * l))
    t = np.linspace(0.0, 5.5 * period, 20001)
    r = linkdyn.simulate(model, t[-1], rtol=1e-11, atol=1e-13, t_out=t)
    x = r.body_position("arm")[:, 0]
    up = np.flatnonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))
    crossings = t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])
    measured = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    assert len(crossings) >= 5 and abs(measured / period - 1.0) < 1e-6
    e = r.energy
    # (the total holds the rotor's constant 103 J of potential energy: its round-off, 1e-14
    # J, against the swing's m g l theta0^2 / 2 = 2.5e-6 J)
    assert np.abs(e - e[0]).max() < 1e-5 * (m * g0 * l * 1e-6 / 2)
    without = 2 * math.pi * math.sqrt(l / g0)
    assert measured / without > 1.1      # the armature's share is visible


def test_armature_of_a_slide_adds_to_its_mass_alone(tmp_path):
    """A block (8 kg) sliding down a slide tilted 30 degrees with armature a = 2 kg
    accelerates at m g sin(30) / (m + a) from rest: the rotor adds inertia, not weight
    (its own slide lies normal to gravity). Checked to 1e-9 m after 1 s."""
    path = tmp_path / "slide.xml"
    path.write_text("""<mujoco><worldbody><body name="b">
      <joint name="x" type="slide" axis="0.8660254037844387 0 -0.5" armature="2"/>
      <geom type="box" size="0.1 0.1 0.1"/></body></worldbody></mujoco>""")
    model = linkdyn.load_model(path)
    assert model.body_names == ("b", "x/rotor")
    r = linkdyn.simulate(model, 1.0, rtol=1e-11, atol=1e-12, t_out=[0.0, 1.0])
    moved = np.linalg.norm(r.body_position("b")[1] - r.body_position("b")[0])
    assert abs(moved - 0.5 * 8.0 * 9.81 * 0.5 / 10.0) < 1e-9


def test_armature_of_a_ball_joint_is_named_not_read(tmp_path):
    path = tmp_path / "ball.xml"
    path.write_text("""<mujoco><worldbody><body name="b" pos="0 0 1">
      <joint name="x" type="ball" armature="0.2"/>
      <geom type="sphere" pos="0 0 -0.5" size="0.1"/></body></worldbody></mujoco>""")
    with pytest.warns(linkdyn.ModelWarning, match=r"joint armature \(read for single hinges "
                      r"and slides\) \(1: x\)"):
        model = linkdyn.load_model(path)
    assert model.body_names == ("b",)
