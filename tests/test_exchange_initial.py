"""``initial`` for the formats that give every pose (linkdyn.exchange.initial): SDFormat and
MJCF files started at joint positions and rates, against the forward kinematics of the
codes that wrote or read them (pybullet for pybullet's KUKA iiwa in SDFormat, MuJoCo for
gymnasium's models and for a hinge with a reference angle), and the joints it refuses."""

import numpy as np
import pytest

import linkdyn
from test_exchange import FOURBAR_SDF, gymnasium_file, pybullet_file, quiet_load

RNG = np.random.default_rng(7)


def first_row(model):
    """The start's row of a short run (its consistent initial state)."""
    return linkdyn.simulate(model, 1e-3, t_out=[0.0, 1e-3], rtol=1e-10, atol=1e-10)


def test_an_sdf_robot_starts_where_pybullet_puts_its_joints():
    """pybullet's KUKA iiwa in SDFormat, every joint at a random angle and rate: each link's
    centre of mass, orientation, its velocity and angular velocity as pybullet's forward
    kinematics gives them (the file's tree: nothing for the projection to move)."""
    p = pytest.importorskip("pybullet")
    from scipy.spatial.transform import Rotation

    path = pybullet_file("kuka_iiwa/model.sdf")
    client = p.connect(p.DIRECT)
    try:
        body = p.loadSDF(path, physicsClientId=client)[0]
        n = p.getNumJoints(body, physicsClientId=client)
        joints = [p.getJointInfo(body, j, physicsClientId=client)[1].decode()
                  for j in range(n)]
        links = [p.getJointInfo(body, j, physicsClientId=client)[12].decode()
                 for j in range(n)]
        q, qd = RNG.uniform(-1.0, 1.0, n), RNG.uniform(-1.0, 1.0, n)
        for j in range(n):
            p.resetJointState(body, j, q[j], qd[j], physicsClientId=client)
        states = [p.getLinkState(body, j, computeLinkVelocity=1, computeForwardKinematics=1,
                                 physicsClientId=client) for j in range(n)]
    finally:
        p.disconnect(physicsClientId=client)
    model = quiet_load(path, initial={name: (q[k], qd[k]) for k, name in enumerate(joints)})
    r = first_row(model)
    for name, s in zip(links, states):
        assert np.abs(r.body_position(name)[0] - s[0]).max() < 1e-12
        R = Rotation.from_quat(s[1]).as_matrix()
        assert np.abs(r.body_rotation(name)[0] - R).max() < 1e-12
        assert np.abs(r.body_velocity(name)[0] - s[6]).max() < 1e-12
        assert np.abs(r.body_angular_velocity(name)[0] - s[7]).max() < 1e-12


def mujoco_start(mm, mujoco, values):
    """MuJoCo's data at qpos0 with ``values`` ({joint: (qpos, qvel)}) set."""
    data = mujoco.MjData(mm)
    for name, (q, qd) in values.items():
        j = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, name)
        data.qpos[mm.jnt_qposadr[j]] = q
        data.qvel[mm.jnt_dofadr[j]] = qd
    mujoco.mj_forward(mm, data)
    return data


def against_mujoco(path, values, mujoco):
    mm = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco_start(mm, mujoco, values)
    r = first_row(quiet_load(path, initial=values))
    checked = 0
    for i in range(1, mm.nbody):
        body = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, i)
        if body not in r.model.body_names:
            continue
        twist = np.zeros(6)
        mujoco.mj_objectVelocity(mm, data, mujoco.mjtObj.mjOBJ_XBODY, i, twist, 0)
        w = twist[:3]
        v = twist[3:] + np.cross(w, data.xipos[i] - data.xpos[i])
        assert np.abs(r.body_position(body)[0] - data.xipos[i]).max() < 1e-12
        assert np.abs(r.body_rotation(body)[0] - data.xmat[i].reshape(3, 3)).max() < 1e-12
        assert np.abs(r.body_velocity(body)[0] - v).max() < 1e-12
        assert np.abs(r.body_angular_velocity(body)[0] - w).max() < 1e-12
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize("name,joints", [
    ("inverted_double_pendulum", ("slider", "hinge", "hinge2")),
    ("hopper", ("thigh_joint", "leg_joint", "foot_joint")),
])
def test_mjcf_models_start_where_mujoco_puts_their_joints(name, joints):
    """Gymnasium's cart with a double pendulum (a slide and two hinges) and the hopper's
    leg hinges (below its planar root) at random positions and rates: every body's centre
    of mass, orientation and velocities as MuJoCo computes them from qpos and qvel."""
    mujoco = pytest.importorskip("mujoco")
    values = {j: tuple(RNG.uniform(-0.8, 0.8, 2)) for j in joints}
    against_mujoco(gymnasium_file(name), values, mujoco)


MJCF_REF = """<mujoco model="ref">
  <compiler angle="degree"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" ref="30"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05"/>
      <body name="fore" pos="0.5 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" ref="-20"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
        <body name="slide" pos="0.4 0 0">
          <joint name="reach" type="slide" axis="1 0 0" ref="0.1"/>
          <geom type="box" size="0.05 0.05 0.05"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_positions_are_mujocos_qpos_with_its_reference_angles(tmp_path):
    """A joint's ``ref`` is its qpos in the file's pose (degrees here, as the compiler says):
    initial takes MuJoCo's qpos, so the chain starts where MuJoCo puts it."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "ref.xml"
    path.write_text(MJCF_REF)
    values = {"shoulder": (0.9, 0.4), "elbow": (-0.3, -1.1), "reach": (0.25, 0.2)}
    against_mujoco(path, values, mujoco)


def test_a_joint_that_closes_a_loop_is_refused(tmp_path):
    """The SDFormat four-bar's joint graph has one cycle: three of its joints make the tree
    and may be set (the projection then closes the loop), the fourth closes it and is
    refused by name."""
    path = tmp_path / "fourbar.sdf"
    path.write_text(FOURBAR_SDF)
    refused = []
    model = quiet_load(path)
    for joint in model.joint_names:
        try:
            m = quiet_load(path, initial={joint: 0.05})
        except linkdyn.ArgumentError as exc:
            assert f"joint {joint!r} closes a loop" in str(exc)
            refused.append(joint)
            continue
        state = linkdyn.consistent_state(m, redundant="allow")
        assert state.phi_norm < 1e-12
    assert len(refused) == 1


def test_the_joints_initial_cannot_set_are_named(tmp_path):
    mujoco_path = gymnasium_file("ant")
    with pytest.raises(linkdyn.ArgumentError, match=r"initial: no joint named 'knee'"):
        quiet_load(mujoco_path, initial={"knee": 0.1})
    path = tmp_path / "ball.xml"
    path.write_text("<mujoco><worldbody><body name='b' pos='0 0 1'><joint name='j' "
                    "type='ball'/><geom size='0.1'/></body></worldbody></mujoco>")
    with pytest.raises(linkdyn.ArgumentError, match=r"'j' is a spherical joint; initial "
                                                     r"sets hinge and slide joints"):
        linkdyn.load_model(path, initial={"j": 0.1})
    with pytest.raises(linkdyn.ArgumentTypeError, match="initial must be a dict"):
        linkdyn.load_model(path, initial=[0.1])
