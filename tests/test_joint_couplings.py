"""Spatial joint couplings (linkdyn.elements.gears, add_joint_coupling): a slide held at a
ratio of another slide or of a revolute joint's angle (a rack and pinion, a screw, a mimic
of slides), its rows against finite differences, the reflected inertia and the coupling's
force against closed forms, and its forms in model files, URDF and MJCF."""

import json
import math
import warnings

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ModelError, ModelFileError

from conftest import assert_rows_match_differences

G = 9.81


def rack_and_pinion(radius=0.05, torque=0.4, offset=0.0, first="rack"):
    """A pinion (inertia J about x) on a revolute joint and a rack (mass M) on a level
    prismatic joint along y, coupled ``s = r theta`` (``first="rack"``) or ``theta = s / r``
    (``first="pinion"``); a torque on the pinion about x."""
    b = linkdyn.SpatialModelBuilder("rack", gravity=(0.0, 0.0, -G))
    b.add_ground_point("A", (0.0, 0.0, 0.0))
    b.add_ground_point("B", (0.0, 0.0, -0.1))
    b.add_body("pinion", mass=0.3, inertia=(1.8e-3, 1.2e-3, 1.2e-3), position=(0.0, 0.0, 0.0))
    b.add_body("rack", mass=1.5, inertia=(1e-2, 1e-2, 1e-2), position=(0.0, 0.0, -0.1))
    b.add_revolute("turn", "pinion.cm", "ground.A", (1.0, 0.0, 0.0))
    b.add_prismatic("slide", "rack.cm", "ground.B", (0.0, 1.0, 0.0))
    if first == "rack":
        b.add_joint_coupling("mesh", "slide", "turn", ratio=radius, offset=offset)
    else:
        b.add_joint_coupling("mesh", "turn", "slide", ratio=1.0 / radius, offset=offset)
    if torque:
        b.add_torque("T", "pinion", torque, 0.0, 0.0)
    return b


@pytest.mark.parametrize("first", ["rack", "pinion"])
def test_coupling_rows_match_finite_differences(first):
    model = rack_and_pinion(first=first).build()
    rng = np.random.default_rng(7)
    assert abs(model.phi(model.q0)[model.constraint_names.index("mesh.mesh")]) < 1e-15
    for _ in range(3):
        q = model.q0 + 0.02 * rng.standard_normal(model.nq)
        assert_rows_match_differences(model, q, rng.standard_normal(model.nq),
                                      rng.standard_normal(model.nc))


@pytest.mark.parametrize("first", ["rack", "pinion"])
def test_a_rack_reflects_its_mass_onto_the_pinion(first):
    """Torque T on the pinion: theta'' = T / (J + M r^2) from rest, the rack at s = r
    theta through many turns (5.7 after 1 s), and the coupling's force on the rack
    M s''."""
    r, T, J, M = 0.05, 0.4, 1.8e-3, 1.5
    t = np.linspace(0.0, 1.0, 101)
    res = linkdyn.simulate(rack_and_pinion(r, T, first=first).build(), 1.0, rtol=1e-11,
                           atol=1e-12, t_out=t)
    alpha = T / (J + M * r * r)
    s = res.body_position("rack")[:, 1]
    np.testing.assert_allclose(s, r * 0.5 * alpha * t**2, rtol=0, atol=1e-9)
    assert 0.5 * alpha / (2 * math.pi) > 5       # turns: the row needs no count of them
    force = res.coupling_force("mesh")
    on_rack = force[:, 0] if first == "rack" else force[:, 1]
    np.testing.assert_allclose(on_rack, M * r * alpha, rtol=1e-7)
    with pytest.raises(linkdyn.UnknownNameError, match="joint coupling, not a gear pair"):
        res.gear_force("mesh")


def test_an_offset_holds_the_first_joint_ahead():
    """offset = 0.02 m: the consistent start moves the rack 2 cm beyond where the guesses
    put it relative to the pinion."""
    model = rack_and_pinion(torque=0.0, offset=0.02).build()
    with pytest.warns(linkdyn.ModelWarning, match="consistent state"):
        q = linkdyn.consistent_state(model).q
    rack = model.body_start(model.body_names.index("rack"))
    pin = model.body_start(model.body_names.index("pinion"))
    e2 = q[pin + 6:pin + 9]                # the pinion's second axis, turned about x
    theta = math.atan2(e2[2], e2[1])
    assert abs(q[rack + 1] - 0.05 * theta - 0.02) < 1e-12


def slides(ratio=0.5, offset=0.0):
    b = linkdyn.SpatialModelBuilder("slides", gravity=(0.0, 0.0, -G))
    b.add_ground_point("A", (0.0, 0.0, 0.0))
    b.add_ground_point("B", (0.0, 1.0, 0.0))
    b.add_body("lift", mass=2.0, inertia=(1e-2,) * 3, position=(0.0, 0.0, 0.0))
    b.add_body("cart", mass=1.0, inertia=(1e-2,) * 3, position=(0.0, 1.0, 0.0))
    b.add_prismatic("up", "lift.cm", "ground.A", (0.0, 0.0, 1.0))
    b.add_prismatic("along", "cart.cm", "ground.B", (1.0, 0.0, 0.0))
    b.add_joint_coupling("lever", "up", "along", ratio=ratio, offset=offset)
    return b


def test_a_lever_of_slides_balances_its_weights():
    """A lift (2 kg, vertical) held at half a cart's slide (1 kg, level) falls as
    (m1 k^2 + m2) s2'' = -m1 g k, and lifts at k s2 exactly."""
    res = linkdyn.simulate(slides().build(), 1.0, rtol=1e-11, atol=1e-12,
                           t_out=np.linspace(0.0, 1.0, 11))
    s1 = res.body_position("lift")[:, 2]
    s2 = res.body_position("cart")[:, 0]
    np.testing.assert_allclose(s1, 0.5 * s2, rtol=0, atol=1e-12)
    acc = -2.0 * G * 0.5 / (2.0 * 0.25 + 1.0)
    np.testing.assert_allclose(s2, 0.5 * acc * res.t**2, rtol=0, atol=1e-9)


def test_couplings_in_model_files_and_bad_input(tmp_path):
    from linkdyn.describe.modelfile import load, loads
    from linkdyn.describe.spatialfile import dumps, save

    desc = slides(0.5, 0.01).description()
    save(desc, tmp_path / "lever.json")
    assert load(tmp_path / "lever.json") == desc
    data = json.loads(dumps(desc))
    data["gears"][0]["ratio"] = "half"
    with pytest.raises(ModelFileError, match=r"gears\[0\].*ratio"):
        loads(json.dumps(data))
    b = rack_and_pinion()
    with pytest.raises(ModelError, match="both revolute.*gear pair"):
        b.add_revolute("turn2", "pinion.cm", "ground.A", (1.0, 0.0, 0.0))
        b.add_joint_coupling("c", "turn", "turn2", ratio=2.0)
    b = rack_and_pinion()
    with pytest.raises(ModelError, match="'nope' is not a revolute or prismatic joint.*slide"):
        b.add_joint_coupling("c", "slide", "nope", ratio=1.0)
    with pytest.raises(ModelError, match="ratio must not be zero"):
        b.add_joint_coupling("c", "slide", "turn", ratio=0.0)
    with pytest.raises(ModelError, match="two different joints"):
        b.add_joint_coupling("c", "slide", "slide", ratio=1.0)


URDF_MIMIC = """<robot name="gripper">
  <link name="base"><inertial><mass value="5"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="left"><inertial><mass value="0.2"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="right"><inertial><mass value="0.3"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="l" type="prismatic"><parent link="base"/><child link="left"/>
    <origin xyz="0 0.1 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1"
    velocity="1"/></joint>
  <joint name="r" type="prismatic"><parent link="base"/><child link="right"/>
    <origin xyz="0 -0.1 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1"
    velocity="1"/><mimic joint="l" multiplier="-0.7" offset="0.01"/></joint>
</robot>"""


def test_a_urdf_mimic_of_slides_is_a_coupling(tmp_path):
    """A gripper's fingers on vertical slides, the right mimicking the left at -0.7 (0.01 m
    offset), under gravity: r = -0.7 l + 0.01 throughout, and the pair falls as
    (m_l + 0.49 m_r) l'' = -(m_l - 0.7 m_r) g."""
    path = tmp_path / "gripper.urdf"
    path.write_text(URDF_MIMIC)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linkdyn.ModelWarning)
        model = linkdyn.load_model(path, gravity=(0.0, 0.0, -G))
    with pytest.warns(linkdyn.ModelWarning, match="consistent state"):     # the offset
        res = linkdyn.simulate(model, 0.5, rtol=1e-11, atol=1e-12,
                               t_out=np.linspace(0, 0.5, 6))
    zl, zr = res.body_position("left")[:, 2], res.body_position("right")[:, 2]
    np.testing.assert_allclose(zr, -0.7 * zl + 0.01, rtol=0, atol=1e-12)
    acc = -(0.2 - 0.7 * 0.3) * G / (0.2 + 0.49 * 0.3)
    np.testing.assert_allclose(zl - zl[0], 0.5 * acc * res.t**2, rtol=0, atol=1e-9)


MJCF_SLIDES = """<mujoco><option gravity="0 0 -9.81"/><worldbody>
  <body name="lift"><joint name="up" type="slide" axis="0 0 1"/>
    <geom type="box" size="0.1 0.1 0.1" mass="2"/></body>
  <body name="cart" pos="0 1 0"><joint name="along" type="slide" axis="1 0 0"/>
    <geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
  <body name="wheel" pos="0 2 0"><joint name="spin" type="hinge" axis="1 0 0"/>
    <geom type="cylinder" size="0.1 0.05" mass="0.5" euler="0 90 0"/></body>
  </worldbody>
  <equality><joint name="lever" joint1="up" joint2="along" polycoef="0 0.5 0 0 0"/>
    <joint name="screw" joint1="spin" joint2="along" polycoef="0.1 20 0 0 0"/></equality>
</mujoco>"""


def test_mjcf_joint_equalities_with_slides_are_couplings(tmp_path):
    """``<equality joint>`` between two slides and between a hinge and a slide: exact
    couplings (MuJoCo's are soft); the written model reads back the same."""
    path = tmp_path / "lever.xml"
    path.write_text(MJCF_SLIDES)
    model = linkdyn.load_model(path)
    with pytest.warns(linkdyn.ModelWarning, match="consistent state"):     # c0 = 0.1
        res = linkdyn.simulate(model, 0.5, rtol=1e-11, atol=1e-12,
                               t_out=np.linspace(0, 0.5, 501))
    up, along = res.body_position("lift")[:, 2], res.body_position("cart")[:, 0]
    np.testing.assert_allclose(up, 0.5 * along, rtol=0, atol=1e-12)
    R = res.body_rotation("wheel")
    spin = np.unwrap(np.arctan2(R[:, 2, 1], R[:, 1, 1]))
    np.testing.assert_allclose(spin, 0.1 + 20.0 * along, rtol=0, atol=1e-10)
    assert abs(along[-1]) > 1e-3
    from linkdyn.exchange import save_mjcf
    back = linkdyn.load_model(save_mjcf(model, tmp_path / "back.xml"))
    with pytest.warns(linkdyn.ModelWarning, match="consistent state"):     # as written
        again = linkdyn.simulate(back, 0.5, rtol=1e-11, atol=1e-12, t_out=res.t)
    np.testing.assert_allclose(again.body_position("cart"), res.body_position("cart"),
                               rtol=0, atol=1e-9)
