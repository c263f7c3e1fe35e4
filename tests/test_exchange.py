"""Models in other formats (linkdyn.exchange): URDF and SDFormat robots no one here wrote
against independent dynamics (Pinocchio, pybullet), a closed loop against the same
mechanism built as a planar model and written in both formats, and the bad files'
errors, which name the file, the line, the element and the attribute."""

import math
import re
import os
import warnings

import numpy as np
import pytest

import linkdyn
import linkdyn.exchange

FOURBAR = linkdyn.exchange.example("fourbar_loop.urdf")


def pybullet_file(name):
    data = pytest.importorskip("pybullet_data")
    return os.path.join(data.getDataPath(), name)


def quiet_load(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linkdyn.ModelWarning)
        return linkdyn.load_model(path, **options)


def test_a_robot_arm_moves_as_pinocchio_computes_it():
    """pybullet's KUKA iiwa (7 revolute joints, joint damping 0.5 N m s/rad), fixed base,
    from random joint angles and rates: the links' centres of mass and orientations after
    0.3 s against Pinocchio's articulated-body dynamics (damping as joint torques)
    integrated by SciPy's DOP853 at 1e-13. Measured 1.3e-13 m and 1.7e-13; the bound is
    the tolerance's global error (rtol 1e-10) with a margin."""
    pin = pytest.importorskip("pinocchio")
    from scipy.integrate import solve_ivp

    path = pybullet_file("kuka_iiwa/model.urdf")
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    rng = np.random.default_rng(3)
    q0, v0 = rng.uniform(-1, 1, pm.nq), rng.uniform(-1, 1, pm.nv)

    def rate(t, y):
        q, v = y[:pm.nq], y[pm.nq:]
        return np.concatenate([v, pin.aba(pm, pd, q, v, -0.5 * v)])

    T = 0.3
    ref = solve_ivp(rate, (0, T), np.concatenate([q0, v0]), method="DOP853", rtol=1e-13,
                    atol=1e-13).y[:pm.nq, -1]
    initial = {pm.names[i]: (q0[pm.joints[i].idx_q], v0[pm.joints[i].idx_v])
               for i in range(1, pm.njoints)}
    with pytest.warns(linkdyn.ModelWarning, match=r"joint limits \(7: lbr_iiwa_joint_1"):
        model = linkdyn.load_model(path, initial=initial)
    assert model.body_names == tuple(f"lbr_iiwa_link_{i}" for i in range(1, 8))
    r = linkdyn.simulate(model, T, rtol=1e-10, atol=1e-10, t_out=[0.0, T])
    for row, q in ((0, q0), (1, ref)):
        pin.forwardKinematics(pm, pd, q)
        for i in range(1, pm.njoints):
            link = f"lbr_iiwa_link_{i}"
            com = pd.oMi[i].act(pm.inertias[i].lever)
            assert np.abs(r.body_position(link)[row] - com).max() < 1e-9
            assert np.abs(r.body_rotation(link)[row] - pd.oMi[i].rotation).max() < 1e-9


def test_a_loop_joint_closes_a_four_bar_as_the_planar_model_does():
    """A four-bar written as a URDF tree closed by a <loop_joint>, in the x-y plane under
    gravity along -y, released at rest with the crank at 60 degrees: its links' centres
    follow those of the same four-bar built as a planar model to the runs' tolerance
    (measured 2.4e-9 m over 2 s at 1e-10; the loop of four hinges in space has three
    dependent rows, so redundant="allow"), and never leave the plane."""
    m = linkdyn.load_model(FOURBAR, gravity=(0.0, -9.81, 0.0))
    t = np.linspace(0.0, 2.0, 21)
    r = linkdyn.simulate(m, 2.0, t_out=t, rtol=1e-10, atol=1e-10, redundant="allow")
    b = linkdyn.ModelBuilder("fourbar_planar", gravity=(0.0, -9.81))
    b.add_ground_point("A", (0.0, 0.0))
    b.add_ground_point("D", (3.0, 0.0))
    for name, length, mass, start, angle in (
            ("crank", 1.0, 1.0, (0.0, 0.0), math.pi / 3),
            ("coupler", math.sqrt(10.0), 2.0, (0.5, math.sqrt(3) / 2), 0.3475982081801946),
            ("rocker", 2.0, 1.5, (3.0, 0.0), 1.331955452557448)):
        c, s = math.cos(angle), math.sin(angle)
        b.add_body(name, mass=mass, inertia=mass * length ** 2 / 12,
                   points={"a": (-length / 2, 0.0), "b": (length / 2, 0.0)},
                   position=(start[0] + c * length / 2, start[1] + s * length / 2),
                   angle=angle)
    b.add_revolute("A", "crank.a", "ground.A")
    b.add_revolute("B", "coupler.a", "crank.b")
    b.add_revolute("D", "rocker.a", "ground.D")
    b.add_revolute("C", "coupler.b", "rocker.b")
    planar = linkdyn.simulate(b.build(), 2.0, t_out=t, rtol=1e-10, atol=1e-10)
    moved = np.abs(planar.body_position("crank")[-1] - planar.body_position("crank")[0])
    assert moved.max() > 0.1                      # the linkage swings
    for name in ("crank", "coupler", "rocker"):
        p = r.body_position(name)
        assert np.abs(p[:, :2] - planar.body_position(name)).max() < 1e-7
        assert np.abs(p[:, 2]).max() < 1e-12


def test_an_overconstrained_loop_is_refused_without_allow():
    m = linkdyn.load_model(FOURBAR)
    with pytest.raises(linkdyn.RedundantConstraintsError):
        linkdyn.simulate(m, 0.1)


def test_initial_rates_and_a_free_base():
    """``initial`` sets a joint's rate too (the arm's rates: the Pinocchio test). In a loop
    the tree's rates are then projected onto the loop's velocity constraints
    (mass-weighted): the four-bar's crank, started at 2 rad/s with the rest of the tree
    at rest, turns at the projection's rate, on its circle, and the loop holds. A free
    base falls: the iiwa without its fixed base, joints at rest, drops g t^2 / 2 as a
    whole (its centre of mass), whatever its joints do."""
    m = linkdyn.load_model(FOURBAR, initial={"crank_joint": (0.0, 2.0)},
                           gravity=(0.0, 0.0, 0.0))
    r = linkdyn.simulate(m, 1e-3, redundant="allow", t_out=[0.0, 1e-3])
    v, p = r.body_velocity("crank")[0], r.body_position("crank")[0]
    assert 0.1 < np.linalg.norm(v) < 10.0
    assert abs(v @ p) < 1e-9 * np.linalg.norm(v)
    assert np.abs(m.phi(r.q[-1])).max() < 1e-9

    free = quiet_load(pybullet_file("kuka_iiwa/model_free_base.urdf"), floating_base=True)
    assert "lbr_iiwa_link_0" in free.body_names
    r = linkdyn.simulate(free, 0.2, rtol=1e-10, atol=1e-10, t_out=[0.0, 0.2])
    masses = free.mass[free.body_position_columns[:, 0]]
    com = sum(mk * r.body_position(n) for mk, n in zip(masses, free.body_names))
    com /= masses.sum()
    drop = com[1] - com[0]
    assert drop[2] == pytest.approx(-0.5 * 9.81 * 0.2 ** 2, rel=1e-8)
    assert np.abs(drop[:2]).max() < 1e-9


def test_a_massless_tool_frame_is_a_marker_on_its_body(tmp_path):
    """A link with no <inertial> fixed to a moving link is a frame of that body: a marker
    named after it follows the body (1 m out along the arm, so on a circle of 1 m)."""
    path = tmp_path / "arm.urdf"
    path.write_text("""<robot name="arm">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
    <inertia ixx="1e-4" iyy="0.0833" izz="0.0833" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="tool_mount" type="fixed"><parent link="arm"/><child link="tool"/>
    <origin xyz="1 0 0"/></joint>
</robot>""")
    m = linkdyn.load_model(path)
    assert m.body_names == ("arm",)
    r = linkdyn.simulate(m, 0.5, t_out=np.linspace(0, 0.5, 6))
    tool = r.marker("tool")
    assert np.abs(np.linalg.norm(tool, axis=1) - 1.0).max() < 1e-8
    assert tool[-1, 2] < -0.5                      # it swung down


BAD = {
    "malformed": ("<robot name='x'>\n<link name='a'>\n</robot>\n", r"line 3.*not well-formed"),
    "entities": ("<?xml version='1.0'?>\n<!DOCTYPE r [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;'>]>"
                 "\n<robot name='x'>&b;</robot>\n", r"declares entities"),
    "root": ("<model name='x'/>", r"line 1, <model name=\"x\">.*root element is <robot>"),
    "joint type": ("<robot name='x'><link name='a'/><link name='b'/>\n"
                   "<joint name='j' type='hinge'><parent link='a'/><child link='b'/></joint>"
                   "</robot>", r"line 2, <joint name=\"j\">, attribute 'type'.*'hinge'"),
    "missing link": ("<robot name='x'><link name='a'/>\n<joint name='j' type='fixed'>\n"
                     "<parent link='a'/>\n<child link='nowhere'/></joint></robot>",
                     r"line 4, <child>, attribute 'link'.*'nowhere'"),
    "two parents": ("<robot name='x'><link name='a'/><link name='b'/><link name='c'/>\n"
                    "<joint name='j1' type='fixed'><parent link='a'/><child link='c'/></joint>\n"
                    "<joint name='j2' type='fixed'><parent link='b'/><child link='c'/></joint>"
                    "</robot>", r"line 3, <joint name=\"j2\">.*loop_joint"),
    "bad number": ("<robot name='x'><link name='a'>\n<inertial><mass value='heavy'/></inertial>"
                   "</link></robot>", r"line 2, <mass>, attribute 'value'.*'heavy'"),
    "massless mover": ("<robot name='x'><link name='a'/>\n<link name='b'/>\n"
                       "<joint name='j' type='revolute'><parent link='a'/><child link='b'/>"
                       "</joint></robot>", r"line 2, <link name=\"b\">.*no mass"),
    "bad inertia": ("<robot name='x'><link name='a'/>\n<link name='b'><inertial><mass value='1'/>"
                    "<inertia ixx='1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial>"
                    "</link><joint name='j' type='continuous'><parent link='a'/>"
                    "<child link='b'/></joint></robot>", r"line 2, <link name=\"b\">.*triangle"),
}




def test_a_missing_or_irregular_file_is_named(tmp_path):
    with pytest.raises(linkdyn.ModelFileError, match="no such file"):
        linkdyn.load_model(tmp_path / "absent.urdf")
    (tmp_path / "dir.urdf").mkdir()
    with pytest.raises(linkdyn.ModelFileError, match="not a regular file"):
        linkdyn.load_model(tmp_path / "dir.urdf")


def test_the_options_are_checked():
    with pytest.raises(linkdyn.ArgumentError, match=r"initial: no joint named 'elbow'"):
        linkdyn.load_model(FOURBAR, initial={"elbow": 1.0})
    with pytest.raises(linkdyn.ArgumentError, match=r"initial\['crank_joint'\] must be"):
        linkdyn.load_model(FOURBAR, initial={"crank_joint": "up"})
    with pytest.raises(linkdyn.ArgumentTypeError, match="floating_base"):
        linkdyn.load_model(FOURBAR, floating_base="yes")
    with pytest.raises(linkdyn.ArgumentError, match="apply to URDF, SDFormat and MJCF"):
        linkdyn.load_model("jansen", gravity=(0.0, 0.0, -1.0))


def test_what_is_not_imported_is_named_once():
    path = pybullet_file("franka_panda/panda.urdf")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = linkdyn.load_model(path)
    said = [w for w in caught if issubclass(w.category, linkdyn.ModelWarning)
            and "not imported" in str(w.message)]
    assert len(said) == 1
    text = str(said[0].message)
    assert "joint limits" in text and "visual geometry" in text
    assert "panda_link1" in model.body_names


# -- SDFormat ---------------------------------------------------------------------------

FOURBAR_SDF = """<sdf version="1.7">
<world name="w">
  <gravity>0 -9.81 0</gravity>
  <model name="ground_plane"><static>true</static><link name="plane"/></model>
  <model name="fourbar_sdf">
    <link name="crank"><pose>0 0 0 0 0 1.0471975511965976</pose>
      <inertial><pose>0.5 0 0 0 0 0</pose><mass>1</mass><inertia><ixx>0.0001</ixx>
        <iyy>0.08333333333333333</iyy><izz>0.08333333333333333</izz></inertia></inertial>
    </link>
    <link name="coupler"><pose>0.5 0.8660254037844386 0 0 0 0.3475982081801946</pose>
      <inertial><pose>1.5811388300841898 0 0 0 0 0</pose><mass>2</mass><inertia>
        <ixx>0.0002</ixx><iyy>1.6666666666666667</iyy><izz>1.6666666666666667</izz>
      </inertia></inertial>
    </link>
    <link name="rocker"><pose>3 0 0 0 0 1.331955452557448</pose>
      <inertial><pose>1 0 0 0 0 0</pose><mass>1.5</mass><inertia><ixx>0.00015</ixx>
        <iyy>0.5</iyy><izz>0.5</izz></inertia></inertial>
    </link>
    <joint name="crank_joint" type="revolute"><parent>world</parent><child>crank</child>
      <axis><xyz>0 0 1</xyz></axis></joint>
    <joint name="coupler_joint" type="revolute"><parent>crank</parent><child>coupler</child>
      <axis><xyz>0 0 1</xyz></axis></joint>
    <joint name="rocker_joint" type="revolute"><parent>world</parent><child>rocker</child>
      <axis><xyz>0 0 1</xyz></axis></joint>
    <joint name="closure" type="revolute"><parent>rocker</parent><child>coupler</child>
      <pose>3.1622776601683795 0 0 0 0 0</pose><axis><xyz>0 0 1</xyz></axis></joint>
  </model>
</world>
</sdf>
"""


def test_an_sdf_four_bar_with_its_cycle_moves_as_the_urdf_one(tmp_path):
    """SDFormat gives every link's pose, so a joint graph with a cycle is read as it is
    (no loop joint): the four-bar of the URDF test, written as SDFormat with the world's
    gravity, moves as the URDF file's (the same model: to round-off, measured 0 m)."""
    path = tmp_path / "fourbar.sdf"
    path.write_text(FOURBAR_SDF)
    with pytest.warns(linkdyn.ModelWarning, match=r"static models \(1: ground_plane\)"):
        sdf = linkdyn.load_model(path)
    urdf = linkdyn.load_model(FOURBAR, gravity=(0.0, -9.81, 0.0))
    t = np.linspace(0.0, 1.0, 11)
    a = linkdyn.simulate(sdf, 1.0, t_out=t, rtol=1e-10, atol=1e-10, redundant="allow")
    b = linkdyn.simulate(urdf, 1.0, t_out=t, rtol=1e-10, atol=1e-10, redundant="allow")
    assert sdf.body_names == urdf.body_names
    for name in sdf.body_names:
        assert np.abs(a.body_position(name) - b.body_position(name)).max() < 1e-9
    assert np.ptp(a.body_position("crank")[:, 0]) > 0.1


def test_an_sdf_robot_moves_as_pybullet_computes_it():
    """pybullet's KUKA iiwa in SDFormat (its base link of zero mass is the ground, as
    pybullet reads it), released at rest in its file's pose, against pybullet's own
    reading of the file: its mass matrix and inverse dynamics (with the file's inertias,
    which pybullet otherwise recomputes from the collision meshes; damping 0.5 as joint
    torques) integrated by DOP853 at 1e-12. Measured 5.7e-14 m and 2.3e-13 after 0.3 s."""
    p = pytest.importorskip("pybullet")
    import xml.etree.ElementTree as ET

    from scipy.integrate import solve_ivp
    from scipy.spatial.transform import Rotation

    path = pybullet_file("kuka_iiwa/model.sdf")
    client = p.connect(p.DIRECT)
    try:
        p.setGravity(0, 0, -9.8, physicsClientId=client)
        body = p.loadSDF(path, physicsClientId=client)[0]
        n = p.getNumJoints(body, physicsClientId=client)
        links = {link.get("name"): link for link in ET.parse(path).getroot().iter("link")}
        names = [p.getJointInfo(body, j, physicsClientId=client)[12].decode()
                 for j in range(n)]
        for j, name in enumerate(names):
            inertia = links[name].find("inertial/inertia")
            p.changeDynamics(body, j, physicsClientId=client, localInertiaDiagonal=[
                float(inertia.find(k).text) for k in ("ixx", "iyy", "izz")])

        def rate(t, y):
            q, v = list(y[:n]), list(y[n:])
            M = np.array(p.calculateMassMatrix(body, q, physicsClientId=client))
            h = np.array(p.calculateInverseDynamics(body, q, v, [0.0] * n,
                                                    physicsClientId=client))
            return np.concatenate([y[n:], np.linalg.solve(M, -0.5 * y[n:] - h)])

        T = 0.3
        qT = solve_ivp(rate, (0, T), np.zeros(2 * n), method="DOP853", rtol=1e-12,
                       atol=1e-12).y[:n, -1]
        for j in range(n):
            p.resetJointState(body, j, qT[j], physicsClientId=client)
        poses = [p.getLinkState(body, j, computeForwardKinematics=True,
                                physicsClientId=client) for j in range(n)]
    finally:
        p.disconnect(physicsClientId=client)
    model = quiet_load(path)
    assert model.body_names == tuple(names)
    r = linkdyn.simulate(model, T, rtol=1e-10, atol=1e-10, t_out=[0.0, T])
    for name, pose in zip(names, poses):
        assert np.abs(r.body_position(name)[1] - pose[0]).max() < 1e-9
        R = Rotation.from_quat(pose[1]).as_matrix()
        assert np.abs(r.body_rotation(name)[1] - R).max() < 1e-9


SDF_BAD = {
    "root": ("<robot name='x'/>", r"root element is <sdf>"),
    "two models": ("<sdf version='1.6'><model name='a'/><model name='b'/></sdf>",
                   r"one moving <model>.*found 2 \(a, b\)"),
    "joint type": ("<sdf version='1.6'><model name='m'><link name='a'/>\n"
                   "<joint name='j' type='screw'><parent>world</parent><child>a</child>"
                   "</joint></model></sdf>", r"line 2, <joint name=\"j\">, attribute 'type'"),
    "missing link": ("<sdf version='1.6'><model name='m'><link name='a'/>\n"
                     "<joint name='j' type='fixed'><parent>world</parent>\n"
                     "<child>b</child></joint></model></sdf>", r"line 3, <child>.*'b'"),
    "relative_to": ("<sdf version='1.7'><model name='m'>\n<link name='a'>"
                    "<pose relative_to='nowhere'>0 0 0 0 0 0</pose></link></model></sdf>",
                    r"line 2, <pose>, attribute 'relative_to'"),
    "bad pose": ("<sdf version='1.6'><model name='m'>\n<link name='a'><pose>0 0 x</pose>"
                 "</link></model></sdf>", r"line 2, <pose>.*6 numbers"),
    "massless mover": ("<sdf version='1.6'><model name='m'>\n<link name='a'><inertial>"
                       "<mass>0</mass></inertial></link><joint name='j' type='revolute'>"
                       "<parent>world</parent><child>a</child><axis><xyz>0 0 1</xyz></axis>"
                       "</joint></model></sdf>", r"line 2, <link name=\"a\">.*zero mass"),
}


@pytest.mark.parametrize("suffix,case", [("urdf", c) for c in sorted(BAD)]
                         + [("sdf", c) for c in sorted(SDF_BAD)])
def test_a_bad_file_is_named_by_line_element_and_attribute(tmp_path, suffix, case):
    text, pattern = (BAD if suffix == "urdf" else SDF_BAD)[case]
    path = tmp_path / f"bad.{suffix}"
    path.write_text(text)
    with pytest.raises(linkdyn.ModelFileError, match=pattern) as info:
        linkdyn.load_model(path)
    assert info.value.path == str(path)


def test_the_sdf_options():
    path = pybullet_file("kuka_iiwa/model.sdf")
    with pytest.raises(linkdyn.ArgumentError, match="floating_base applies to URDF files"):
        linkdyn.load_model(path, floating_base=True)
    with pytest.raises(linkdyn.ArgumentError, match=r"initial: no joint named 'elbow'"):
        linkdyn.load_model(path, initial={"elbow": 0.1})
    m = quiet_load(path, gravity=(0.0, 0.0, 0.0))
    r = linkdyn.simulate(m, 0.2, t_out=[0.0, 0.2])
    assert np.abs(r.q[-1] - r.q[0]).max() < 1e-12      # no gravity: it stays at rest


# -- MJCF -------------------------------------------------------------------------------

GYM_MODELS = ("ant", "half_cheetah", "hopper", "humanoid", "inverted_double_pendulum",
              "inverted_pendulum", "pusher", "reacher", "swimmer", "walker2d")


def gymnasium_file(name):
    gym = pytest.importorskip("gymnasium")
    return os.path.join(os.path.dirname(gym.__file__), "envs", "mujoco", "assets",
                        f"{name}.xml")


def mujoco_bodies(mm, mujoco):
    return [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, i) or f"body_{i}"
            for i in range(mm.nbody)]


def mujoco_velocities(mm, data, model, mujoco) -> np.ndarray:
    """The rigid-body velocities of MuJoCo's state ``data`` (at the file's pose) in
    ``model``'s natural coordinates (each body's centre and axes; an armature's rotor
    spinning at its joint's rate)."""
    q0, v0 = model.q0, np.zeros(model.nq)
    for i, body in enumerate(mujoco_bodies(mm, mujoco)):
        if body not in model.body_names:
            continue
        c = model.body_start(model.body_names.index(body))
        twist = np.zeros(6)
        mujoco.mj_objectVelocity(mm, data, mujoco.mjtObj.mjOBJ_XBODY, i, twist, 0)
        w = twist[:3]
        v0[c:c + 3] = twist[3:] + np.cross(w, data.xipos[i] - data.xpos[i])
        for k in range(3):
            v0[c + 3 + 3 * k:c + 6 + 3 * k] = np.cross(w, q0[c + 3 + 3 * k:c + 6 + 3 * k])
    for j in range(mm.njnt):         # armature rotors spin at their joints' rates
        rotor = f"{mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, j)}/rotor"
        if rotor in model.body_names:
            c = model.body_start(model.body_names.index(rotor))
            w = data.qvel[mm.jnt_dofadr[j]] * data.xaxis[j]
            for k in range(3):
                v0[c + 3 + 3 * k:c + 6 + 3 * k] = np.cross(w, q0[c + 3 + 3 * k:c + 6 + 3 * k])
    return v0


@pytest.mark.parametrize("name", GYM_MODELS)
def test_mjcf_mass_properties_are_mujocos(name):
    """Gymnasium's MuJoCo models (no one here wrote them; inertia from geoms: spheres,
    capsules, cylinders, boxes, fromto, defaults classes, settotalmass): each body's mass,
    centre of mass and principal moments against MuJoCo's own compiler, to round-off
    (measured 1e-15 relative at most)."""
    mujoco = pytest.importorskip("mujoco")
    path = gymnasium_file(name)
    mm = mujoco.MjModel.from_xml_path(path)
    data = mujoco.MjData(mm)
    mujoco.mj_forward(mm, data)
    model = quiet_load(path)
    state = linkdyn.consistent_state(model)
    specs = {b.name: b for b in model.description.bodies}
    for i, body in enumerate(mujoco_bodies(mm, mujoco)):
        if body not in model.body_names:
            continue
        col = model.body_start(model.body_names.index(body))
        assert model.mass[col] == pytest.approx(mm.body_mass[i], rel=1e-12)
        assert np.abs(state.q[col:col + 3] - data.xipos[i]).max() < 1e-12
        moments = np.sort(np.linalg.eigvalsh(np.asarray(specs[body].inertia)))
        np.testing.assert_allclose(moments, np.sort(mm.body_inertia[i]),
                                   rtol=1e-12, atol=1e-12 * mm.body_inertia[i].max())


@pytest.mark.parametrize("name", ["ant", "hopper", "inverted_double_pendulum"])
def test_mjcf_models_move_as_mujoco_computes_them(name):
    """From random joint rates, with contacts, limits and actuators off, joint damping and
    armature kept (armature as rotors, linkdyn.exchange.mjcf_actuators): every body's
    centre of mass and orientation after 0.2 s against MuJoCo's RK4 at 1e-4 s steps. The
    ant is a free body with welded and hinged legs, the hopper a planar root (two slides
    and a hinge) with hinged legs, both with armature on their hinges. Measured 3.9e-13 m
    and 3.0e-12 at most (the ant's 5e-15 m); the bound is the tolerance's (rtol 1e-10)."""
    mujoco = pytest.importorskip("mujoco")
    path = gymnasium_file(name)
    mm = mujoco.MjModel.from_xml_path(path)
    model = quiet_load(path)
    bits = mujoco.mjtDisableBit
    mm.opt.disableflags |= bits.mjDSBL_CONTACT | bits.mjDSBL_LIMIT | bits.mjDSBL_ACTUATION
    mm.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    mm.opt.timestep = 1e-4
    data = mujoco.MjData(mm)
    data.qvel[:] = np.random.default_rng(1).uniform(-1.0, 1.0, mm.nv)
    mujoco.mj_forward(mm, data)
    names = mujoco_bodies(mm, mujoco)
    v0 = mujoco_velocities(mm, data, model, mujoco)
    T = 0.2
    while data.time < T - 1e-12:
        mujoco.mj_step(mm, data)
    mujoco.mj_forward(mm, data)
    r = linkdyn.simulate(model, T, rtol=1e-10, atol=1e-10, t_out=[0.0, T], v0=v0)
    moved = 0.0
    for i, body in enumerate(names):
        if body not in model.body_names:
            continue
        assert np.abs(r.body_position(body)[1] - data.xipos[i]).max() < 1e-9
        assert np.abs(r.body_rotation(body)[1] - data.xmat[i].reshape(3, 3)).max() < 1e-9
        moved = max(moved, np.abs(r.body_position(body)[1] - r.body_position(body)[0]).max())
    assert moved > 0.1


MJCF_BAD = {
    "root": ("<robot/>", r"root element is <mujoco>"),
    "combination": ("<mujoco><worldbody>\n<body name='b'><geom size='0.1'/>"
                    "<joint name='x' type='slide' axis='1 0 0'/>"
                    "<joint name='y' type='slide' axis='1 1 0'/></body></worldbody></mujoco>",
                    r"line 2, <body name=\"b\">.*'x', 'y'.*make no joint"),
    "mesh": ("<mujoco><worldbody><body name='b'>\n<geom type='mesh' mesh='m'/>"
             "<joint/></body></worldbody></mujoco>", r"line 2, <geom>, attribute 'type'.*mesh"),
    "class": ("<mujoco><worldbody><body name='b'>\n<geom class='nowhere' size='0.1'/>"
              "</body></worldbody></mujoco>", r"line 2, <geom>, attribute 'class'"),
    "massless": ("<mujoco><worldbody>\n<body name='b'><joint/></body></worldbody></mujoco>",
                 r"line 2, <body name=\"b\">.*no mass"),
}


@pytest.mark.parametrize("case", sorted(MJCF_BAD))
def test_a_bad_mjcf_file_is_named(tmp_path, case):
    text, pattern = MJCF_BAD[case]
    path = tmp_path / "bad.xml"
    path.write_text(text)
    with pytest.raises(linkdyn.ModelFileError, match=pattern):
        linkdyn.load_model(path)


def test_what_an_mjcf_file_holds_beyond_linkdyn_is_named_once(tmp_path):
    path = tmp_path / "sensed.xml"
    path.write_text("<mujoco><worldbody><body name='b'><geom size='0.1'/><joint/></body>"
                    "</worldbody><sensor/><tendon/></mujoco>")
    with pytest.warns(linkdyn.ModelWarning) as caught:
        linkdyn.load_model(path)
    text = str(caught[0].message)
    assert "<sensor> (1: file)" in text and "<tendon> (1: file)" in text


DRAKE_BALL = """<drake:ball_constraint>
      <drake:ball_constraint_body_A>coupler</drake:ball_constraint_body_A>
      <drake:ball_constraint_body_B>rocker</drake:ball_constraint_body_B>
      <drake:ball_constraint_p_AP>3.1622776601683795 0 0</drake:ball_constraint_p_AP>
      <drake:ball_constraint_p_BQ>2 0 0</drake:ball_constraint_p_BQ>
    </drake:ball_constraint>"""


def test_drake_ball_constraints_close_the_four_bar(tmp_path):
    """Drake's ``<drake:ball_constraint>`` (point P of body A, p_AP in A's frame, held at
    point Q of body B) in SDFormat and in URDF: the four-bar closed by a ball instead of a
    hinge has one dependent row instead of three and moves as the hinge-closed one."""
    closure = FOURBAR_SDF[FOURBAR_SDF.index('    <joint name="closure"'):
                          FOURBAR_SDF.index("  </model>")]
    sdf_path = tmp_path / "fourbar_ball.sdf"
    sdf_path.write_text(FOURBAR_SDF.replace(closure, "    " + DRAKE_BALL + "\n"))
    with open(FOURBAR) as f:
        text = f.read()
    loop = text[text.index("  <loop_joint"):text.index("</robot>")]
    urdf_path = tmp_path / "fourbar_ball.urdf"
    urdf_path.write_text(text.replace(loop, re.sub(
        r"<(drake:ball_constraint_(?:body_[AB]))>(\w+)</\1>", r'<\1 name="\2"/>', re.sub(
            r"<(drake:ball_constraint_p_\w+)>([^<]+)</\1>", r'<\1 value="\2"/>',
            DRAKE_BALL)) + "\n"))
    t = np.linspace(0.0, 1.0, 11)
    options = dict(t_out=t, rtol=1e-10, atol=1e-10, redundant="allow")
    hinge = linkdyn.simulate(linkdyn.load_model(FOURBAR, gravity=(0.0, -9.81, 0.0)),
                             1.0, **options)
    assert len(hinge.stats["redundant_rows"]) == 3
    sdf = quiet_load(sdf_path)
    urdf = linkdyn.load_model(urdf_path, gravity=(0.0, -9.81, 0.0))
    for model in (sdf, urdf):
        assert "ball_coupler_rocker" in model.joint_names
        r = linkdyn.simulate(model, 1.0, **options)
        assert len(r.stats["redundant_rows"]) == 1
        for name in ("crank", "coupler", "rocker"):
            assert np.abs(r.body_position(name) - hinge.body_position(name)).max() < 1e-8
    assert np.ptp(hinge.body_position("crank")[:, 0]) > 0.1


MJCF_SLIDES = """<mujoco model="slides">
  <option timestep="1e-4" integrator="RK4"/>
  <worldbody>
    <body name="carriage" pos="0.2 0 1" euler="0.3 0.2 0.1">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <geom type="box" size="0.2 0.1 0.05" mass="2"/>
      <body name="pendulum" pos="0.1 0 0">
        <joint name="swing" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 -0.3" size="0.03" mass="0.5"/>
      </body>
    </body>
    <body name="target" pos=".1 -.1 .01">
      <joint name="tx" type="slide" axis="1 0 0" ref=".1"/>
      <joint name="ty" type="slide" axis="0 1 0" ref="-.1"/>
      <geom type="sphere" size=".05" mass="0.1"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_a_body_on_two_slides_moves_as_mujoco_computes_it(tmp_path):
    """Two slides at right angles make a planar slide (two translations, no turn): a tilted
    carriage on slides in x and z with a pendulum hinged to it, and a target on slides in x
    and y, from random joint rates under gravity, against MuJoCo's RK4 at 1e-4 s steps
    after 0.5 s; gymnasium's reacher and pusher, whose targets are such bodies, load."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "slides.xml"
    path.write_text(MJCF_SLIDES)
    mm = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mm)
    rates = dict(zip(("x", "z", "swing", "tx", "ty"),
                     np.random.default_rng(4).uniform(-1.0, 1.0, 5)))
    for name, rate in rates.items():
        data.qvel[mm.jnt_dofadr[mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, name)]] = rate
    mujoco.mj_forward(mm, data)
    model = linkdyn.load_model(path, initial={k: (data.qpos[mm.jnt_qposadr[
        mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, k)]], v) for k, v in rates.items()
        if k == "swing"})
    T = 0.5
    v0 = mujoco_velocities(mm, data, model, mujoco)
    while data.time < T - 1e-12:
        mujoco.mj_step(mm, data)
    mujoco.mj_forward(mm, data)
    r = linkdyn.simulate(model, T, rtol=1e-10, atol=1e-10, t_out=[0.0, T], v0=v0)
    for i, body in enumerate(mujoco_bodies(mm, mujoco)):
        if body not in model.body_names:
            continue
        assert np.abs(r.body_position(body)[1] - data.xipos[i]).max() < 1e-9
        assert np.abs(r.body_rotation(body)[1] - data.xmat[i].reshape(3, 3)).max() < 1e-9
    R0 = r.body_rotation("carriage")
    assert np.abs(R0[1] - R0[0]).max() < 1e-12            # the carriage does not turn
    assert np.ptp(r.body_position("carriage")[:, 2]) > 0.5
    for name, slides in (("reacher", 1), ("pusher", 2)):
        m = quiet_load(gymnasium_file(name))
        kinds = [getattr(m.joint_spec(j), "kind", None) for j in m.joint_names]
        assert kinds.count("planar_slide") == slides


MJCF_SPRING = """<mujoco model="springs">
  <option timestep="1e-4" integrator="RK4"/>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" stiffness="12" springref="20"
             ref="10"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04" mass="1"/>
      <body name="lower" pos="0.5 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" stiffness="3"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_hinge_stiffness_is_a_torsional_spring_at_springref(tmp_path):
    """A hinge's ``stiffness`` pulls its qpos to ``springref`` (degrees here, as the
    compiler's default says; the joint's ``ref`` is the qpos of the file's pose): a double
    pendulum of springs, started off its rest by initial=, moves as MuJoCo's RK4 computes
    it (1e-4 s steps, no damping) over 0.5 s."""
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "springs.xml"
    path.write_text(MJCF_SPRING)
    mm = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(mm)
    start = {"shoulder": (0.5, 0.3), "elbow": (-0.4, 0.0)}
    for name, (q, qd) in start.items():
        j = mujoco.mj_name2id(mm, mujoco.mjtObj.mjOBJ_JOINT, name)
        data.qpos[mm.jnt_qposadr[j]], data.qvel[mm.jnt_dofadr[j]] = q, qd
    mujoco.mj_forward(mm, data)
    model = linkdyn.load_model(path, initial=start)
    assert {"shoulder/stiffness", "elbow/stiffness"} <= set(model.force_names)
    T = 0.5
    while data.time < T - 1e-12:
        mujoco.mj_step(mm, data)
    mujoco.mj_forward(mm, data)
    r = linkdyn.simulate(model, T, rtol=1e-10, atol=1e-10, t_out=[0.0, T])
    moved = 0.0
    for i, body in enumerate(mujoco_bodies(mm, mujoco)):
        if body in model.body_names:
            assert np.abs(r.body_position(body)[1] - data.xipos[i]).max() < 1e-9
            moved = max(moved, np.abs(r.body_position(body)[1] - r.body_position(body)[0]).max())
    assert moved > 0.05
