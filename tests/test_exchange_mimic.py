"""URDF ``<mimic>`` couplings and MJCF ``<equality joint>`` read as gear pairs
(linkdyn.exchange.urdf, .mjcf, linkdyn.elements.gears): a three-link arm whose third joint
mimics the second (multiplier -1.5, offset 0.1) moves as Pinocchio's dynamics of the same
file with its mimic joint compute it; the offset holds from the file's pose; an MJCF chain
keeps qpos2 = 0.1 - 1.5 qpos1 with ``ref`` and ``initial``; couplings linkdyn does not read
are named in the warning."""

import math
import warnings

import numpy as np
import pytest

import linkdyn

ARM = """<?xml version="1.0"?>
<robot name="mimic_arm">
  <link name="base"/>
  <link name="l1">
    <inertial><origin xyz="0.15 0 0"/><mass value="1.0"/>
      <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.009" iyz="0" izz="0.008"/></inertial>
  </link>
  <link name="l2">
    <inertial><origin xyz="0.1 0.02 0"/><mass value="0.7"/>
      <inertia ixx="0.001" ixy="0.0001" ixz="0" iyy="0.004" iyz="0" izz="0.0045"/></inertial>
  </link>
  <link name="l3">
    <inertial><origin xyz="0.08 0 0.01"/><mass value="0.4"/>
      <inertia ixx="0.0008" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0025"/></inertial>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/>
    <origin xyz="0.2 0 0" rpy="0.3 0 0"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
    MIMIC</joint>
</robot>
"""
K, OFFSET = -1.5, 0.1


def arm(tmp_path, mimic=f'<mimic joint="j2" multiplier="{K}" offset="{OFFSET}"/>', **options):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM.replace("MIMIC", mimic))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linkdyn.ModelWarning)     # the joint limits
        return path, linkdyn.load_model(path, **options)


def test_a_mimic_joint_moves_as_pinocchio_computes_it(tmp_path):
    """From random angles and rates of j1 and j2 (j3 set by the mimic), 0.5 s under gravity:
    the links' centres and axes against Pinocchio's joint-space dynamics of the file read
    with its mimic joint (M(q) a = -b(q, v)), integrated by SciPy's DOP853 at 1e-13."""
    pin = pytest.importorskip("pinocchio")
    from scipy.integrate import solve_ivp

    path, _ = arm(tmp_path)
    pm = pin.buildModelFromUrdf(str(path), mimic=True)
    pd = pm.createData()
    assert (pm.nq, pm.nv) == (2, 2)
    q0, v0 = np.array([0.2, 0.4]), np.array([-0.5, 1.0])

    def rate(t, y):
        q, v = y[:2], y[2:]
        return np.concatenate([v, np.linalg.solve(pin.crba(pm, pd, q),
                                                  -pin.nonLinearEffects(pm, pd, q, v))])

    T = 0.5
    ref = solve_ivp(rate, (0, T), np.concatenate([q0, v0]), method="DOP853", rtol=1e-13,
                    atol=1e-13).y[:2, -1]
    initial = {"j1": (q0[0], v0[0]), "j2": (q0[1], v0[1]),
               "j3": (K * q0[1] + OFFSET, K * v0[1])}
    _, model = arm(tmp_path, initial=initial)
    r = linkdyn.simulate(model, T, rtol=1e-11, atol=1e-11, t_out=[0.0, T])
    for row, q in ((0, q0), (1, ref)):
        pin.forwardKinematics(pm, pd, q)
        for i, link in ((1, "l1"), (2, "l2"), (3, "l3")):
            com = pd.oMi[i].act(pm.inertias[i].lever)
            assert np.abs(r.body_position(link)[row] - com).max() < 1e-9
            assert np.abs(r.body_rotation(link)[row] - pd.oMi[i].rotation).max() < 1e-9
    # the coupling's reaction is a torque about j3: it does no work, so energy holds
    energy = r.kinetic_energy + r.potential_energy
    assert abs(energy[1] - energy[0]) < 1e-8


def test_the_mimic_offset_holds_from_the_files_pose(tmp_path):
    """From the file's pose (every joint at 0, which breaks the mimic's offset) the
    consistent state moves the arm onto q3 = -1.5 q2 + 0.1."""
    from linkdyn.exchange.geometry import rpy_matrix

    _, model = arm(tmp_path)
    assert "j3/mimic" in [g.name for g in model.description.gears]
    q = linkdyn.consistent_state(model).q
    R1, R2, R3 = (model.body_rotation(q, link) for link in ("l1", "l2", "l3"))
    M = R1.T @ R2                                    # Rot(y, q2)
    q2 = math.atan2(M[0, 2], M[0, 0])
    M = (R2 @ rpy_matrix((0.3, 0.0, 0.0))).T @ R3    # Rot(n, q3)
    n = np.array([0.0, 0.6, 0.8])
    q3 = math.atan2(0.5 * n @ [M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]],
                    0.5 * (np.trace(M) - 1.0))
    assert abs(q3) > 0.01                            # the start was moved
    assert abs(q3 - (K * q2 + OFFSET)) < 1e-10


@pytest.mark.parametrize("mimic", ['<mimic joint="j2" multiplier="0.70710678"/>',
                                   '<mimic joint="j2" multiplier="0"/>'])
def test_mimics_linkdyn_cannot_read_exactly_are_named(tmp_path, mimic):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM.replace("MIMIC", mimic))
    with pytest.warns(linkdyn.ModelWarning, match=r"<mimic> couplings \(1: j3\)"):
        model = linkdyn.load_model(path)
    assert not model.description.gears


def test_a_mimic_of_an_unknown_joint_names_the_line(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM.replace("MIMIC", '<mimic joint="j9"/>'))
    with pytest.raises(linkdyn.ModelFileError, match=r"line 2\d.*<mimic>.*j9"):
        linkdyn.load_model(path)


MJCF_CHAIN = """<mujoco model="coupled">
  <compiler angle="radian"/>
  <option gravity="0 -9.81 0"/>
  <worldbody>
    <body name="b1">
      <joint name="j1" type="hinge" axis="0 0 1"/>
      <inertial pos="0.3 0 0" mass="1" diaginertia="1e-3 0.03 0.03"/>
      <body name="b2" pos="0.6 0 0">
        <joint name="j2" type="hinge" axis="0 0 1" REF/>
        <inertial pos="0.2 0 0" mass="0.5" diaginertia="1e-3 0.01 0.01"/>
      </body>
    </body>
  </worldbody>
  <equality><joint joint1="j2" joint2="j1" polycoef="POLY"/></equality>
</mujoco>
"""


def chain(tmp_path, poly="0.1 -1.5 0 0 0", ref="", **options):
    path = tmp_path / "chain.xml"
    path.write_text(MJCF_CHAIN.replace("POLY", poly).replace("REF", ref))
    return linkdyn.load_model(path, **options)


def qpos(r):
    """j1's and j2's qpos (rad) from the bodies' axes, the chain turning about z."""
    a1 = np.unwrap(np.arctan2(r.body_rotation("b1")[:, 1, 0], r.body_rotation("b1")[:, 0, 0]))
    a2 = np.unwrap(np.arctan2(r.body_rotation("b2")[:, 1, 0], r.body_rotation("b2")[:, 0, 0]))
    return a1, a2 - a1


@pytest.mark.parametrize("ref", ["", 'ref="0.2"'])
def test_an_mjcf_joint_equality_holds_qpos1_at_its_polynomial(tmp_path, ref):
    # qpos2 = 0.1 - 1.5 qpos1 (MuJoCo's polycoef on qpos; ref is qpos at the file's pose)
    model = chain(tmp_path, ref=ref, initial={"j1": (0.3, 2.0)})
    assert [g.name for g in model.description.gears] == ["j2/equality"]
    r = linkdyn.simulate(model, 1.0, rtol=1e-11, atol=1e-11, t_out=np.linspace(0, 1, 21))
    q1, q2 = qpos(r)
    shift = 0.2 if ref else 0.0          # the bodies' angle is qpos - ref
    assert np.ptp(q1) > 0.5
    np.testing.assert_allclose(q2 + shift, 0.1 - 1.5 * q1, atol=1e-10)
    energy = r.kinetic_energy + r.potential_energy
    assert np.ptp(energy) < 1e-8 * np.abs(energy).max()


def test_mjcf_joint_equalities_linkdyn_cannot_hold_exactly_are_named(tmp_path):
    with pytest.warns(linkdyn.ModelWarning, match=r"<equality joint> \(1: line 14\)"):
        model = chain(tmp_path, poly="0 0.5 0.2 0 0")      # quadratic: not a gear ratio
    assert not model.description.gears
