"""Models out (linkdyn.exchange.write): spatial models written as MJCF and read back give
the same motion (every tree joint kind, free bodies, spherical, rigid and revolute loops);
MuJoCo itself loads what is written, with the bodies' masses and the loops as equalities;
what cannot be written is refused or named."""

import math
import warnings

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ModelError, ModelWarning
from linkdyn.exchange import load_mjcf
from linkdyn.exchange.write import mjcf_text, save_mjcf

G = (0.0, 0.0, -9.81)


def turned(angle, axis):
    """The rotation matrix of ``angle`` about unit ``axis``."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def chain(kinds):
    """A chain of boxes hung from the ground, one joint of each kind, each body tilted so
    that nothing lies along the global axes."""
    b = linkdyn.SpatialModelBuilder("chain", gravity=G)
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    previous, tip = ("ground", "O"), np.zeros(3)
    for i, kind in enumerate(kinds):
        R = turned(0.3 + 0.2 * i, (1.0, 2.0, 0.5 + i))
        centre = tip + R @ np.array([0.0, 0.0, -0.2])
        b.add_body(f"b{i}", mass=1.0 + 0.3 * i, inertia=(0.02, 0.015 + 0.002 * i, 0.01),
                   points={"top": (0.0, 0.0, 0.2), "bottom": (0.0, 0.0, -0.2)},
                   position=tuple(centre), orientation=R)
        here = (f"b{i}", "top")
        axis = tuple(R @ np.array([1.0, 0.3, 0.1]))
        if kind == "revolute":
            b.add_revolute(f"j{i}", here, previous, axis=axis)
        elif kind == "spherical":
            b.add_spherical(f"j{i}", here, previous)
        elif kind == "universal":
            b.add_universal(f"j{i}", here, previous, axis_first=tuple(R[:, 0]),
                            axis_second=tuple(R[:, 1]))
        elif kind == "cylindrical":
            b.add_cylindrical(f"j{i}", here, previous, axis=tuple(R[:, 2]))
        elif kind == "prismatic":
            b.add_prismatic(f"j{i}", here, previous, axis=tuple(R[:, 2]))
        elif kind == "planar":
            b.add_planar(f"j{i}", here, previous, normal=axis)
        elif kind == "planar_slide":
            b.add_planar_slide(f"j{i}", here, previous, normal=axis)
        elif kind == "rigid":
            b.add_rigid(f"j{i}", here, previous)
        previous, tip = (f"b{i}", "bottom"), centre + R @ np.array([0.0, 0.0, -0.2])
    return b


def closed(kinds, closure="spherical"):
    """``chain(kinds)`` with its last body's bottom joined back to the ground by a
    ``closure`` joint (spherical or revolute)."""
    b = chain(kinds)
    end = b._bodies[f"b{len(kinds) - 1}"]
    tip = np.array(end.position) + np.array(end.orientation) @ np.array([0.0, 0.0, -0.2])
    b.add_ground_point("E", tuple(tip))
    bottom = (f"b{len(kinds) - 1}", "bottom")
    if closure == "spherical":
        b.add_spherical("close", bottom, ("ground", "E"))
    else:
        b.add_revolute("close", bottom, ("ground", "E"),
                       axis=tuple(np.array(end.orientation)[:, 0]))
    return b


def same_urdf_motion(model, path, t_end=0.4, bodies=None, atol=1e-9, rotations=False):
    """The URDF at ``path`` read back (with the model's gravity) moves as ``model``."""
    back = linkdyn.load_model(str(path), gravity=G)
    a = linkdyn.simulate(model, t_end, dt_out=0.05, rtol=1e-11, atol=1e-12)
    r = linkdyn.simulate(back, t_end, dt_out=0.05, rtol=1e-11, atol=1e-12)
    for body in bodies or [b.name for b in model.description.bodies]:
        get = "body_rotation" if rotations else "body_position"
        np.testing.assert_allclose(getattr(r, get)(body), getattr(a, get)(body), atol=atol)
    return a, r


def same_motion(model, path, t_end=0.4, tol=1e-9, **simulate):
    back = load_mjcf(str(path))
    a = linkdyn.simulate(model, t_end, dt_out=0.05, rtol=1e-11, atol=1e-12, **simulate)
    r = linkdyn.simulate(back, t_end, dt_out=0.05, rtol=1e-11, atol=1e-12, **simulate)
    moved = 0.0
    for body in model.description.bodies:
        p, q = a.body_position(body.name), r.body_position(body.name)
        np.testing.assert_allclose(q, p, atol=tol)
        np.testing.assert_allclose(r.body_rotation(body.name), a.body_rotation(body.name),
                                   atol=tol * 10)
        moved = max(moved, np.abs(p - p[0]).max())
    assert moved > 1e-3          # the motion compared is not rest
    return back


@pytest.mark.parametrize("kinds", [("revolute", "spherical", "universal"),
                                   ("cylindrical", "revolute", "prismatic"),
                                   ("planar", "rigid", "revolute"),
                                   ("planar_slide", "spherical")],
                         ids=lambda k: "-".join(k))
def test_a_tree_written_as_mjcf_moves_as_the_model(tmp_path, kinds):
    model = chain(kinds).build()
    path = save_mjcf(model, tmp_path / "chain.xml")
    back = same_motion(model, path)
    assert back.nq - back.nc == model.nq - model.nc         # as many freedoms


def test_loops_become_equalities_that_read_back_as_the_same_mechanism(tmp_path):
    # a chain closed to the ground by a spherical joint, and one closed by a revolute (two
    # freedoms left each)
    for closure, kinds in (("spherical", ("revolute", "spherical", "revolute")),
                           ("revolute", ("revolute", "spherical", "spherical"))):
        model = closed(kinds, closure).build()
        text = mjcf_text(model)
        assert text.count("<connect") == (1 if closure == "spherical" else 2)
        path = tmp_path / f"{closure}.xml"
        path.write_text(text)
        extra = {} if closure == "spherical" else {"redundant": "allow"}
        same_motion(model, path, **extra)


def test_a_free_body_gets_a_free_joint(tmp_path):
    b = linkdyn.SpatialModelBuilder("drop", gravity=G)
    b.add_body("box", mass=2.0, inertia=(0.02, 0.03, 0.04), position=(0.1, 0.2, 0.3),
               orientation=turned(0.4, (1, 1, 0)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)   # a body with nothing attached
        model = b.build()
        text = mjcf_text(model)
        assert "<freejoint" in text
        path = tmp_path / "drop.xml"
        path.write_text(text)
        back = load_mjcf(str(path))
    r = linkdyn.simulate(back, 0.3, dt_out=0.1)
    np.testing.assert_allclose(r.body_position("box")[-1],
                               (0.1, 0.2, 0.3 - 0.5 * 9.81 * 0.09), atol=1e-9)


def test_mujoco_reads_the_written_file(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    model = closed(("revolute", "universal", "spherical")).build()
    path = save_mjcf(model, tmp_path / "loop.xml")
    m = mujoco.MjModel.from_xml_path(str(path))
    assert m.nbody == 4 and m.neq == 1 and m.njnt == 4
    masses = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, i): m.body_mass[i]
              for i in range(1, m.nbody)}
    assert masses == pytest.approx({f"b{i}": 1.0 + 0.3 * i for i in range(3)})
    # the same reference pose: each body's centre where linkdyn puts it
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    for i in range(3):
        body = model.description.bodies[i]
        np.testing.assert_allclose(d.xipos[i + 1], body.position, atol=1e-12)
        np.testing.assert_allclose(d.ximat[i + 1].reshape(3, 3) @ np.diag(
            m.body_inertia[i + 1]) @ d.ximat[i + 1].reshape(3, 3).T,
            np.array(body.orientation) @ np.array(body.inertia)
            @ np.array(body.orientation).T, atol=1e-12)


def test_what_cannot_be_written_is_refused_or_named(tmp_path):
    b = chain(("revolute", "revolute"))
    b.add_ground_point("E", (0.3, 0.0, -0.5))
    b.add_point_on_line("slot", ("b1", "bottom"), ("ground", "E"), axis=(0.0, 0.0, 1.0))
    with pytest.raises(ModelError, match="joint 'slot': a point_line joint"):
        mjcf_text(b.build())
    with pytest.raises(ModelError, match="a spatial model is written as MJCF"):
        mjcf_text(linkdyn.load_model("jansen"))
    b = chain(("revolute",))
    b.add_angle_driver("spin", "j0", {"law": "linear", "value": 0.0, "rate": 1.0})
    with pytest.warns(ModelWarning, match="written as MJCF without: driver 'spin'"):
        mjcf_text(b.build())


# -- URDF ----------------------------------------------------------------------------------

def test_a_tree_written_as_urdf_moves_as_the_model(tmp_path):
    from linkdyn.exchange.write import save_urdf

    model = chain(("revolute", "prismatic", "revolute", "rigid", "revolute")).build()
    with pytest.warns(ModelWarning, match="written as URDF without: its gravity"):
        path = save_urdf(model, tmp_path / "chain.urdf")
    with pytest.warns(ModelWarning, match="joint limits"):     # the prismatic's +-1e3 m
        back = linkdyn.load_model(str(path), gravity=G)
        a, _ = same_urdf_motion(model, path)
    for body in model.description.bodies:
        np.testing.assert_allclose(back.description.bodies[[b.name for b in
                                   back.description.bodies].index(body.name)].inertia,
                                   body.inertia, rtol=1e-15, atol=1e-18)
    assert np.abs(np.diff(a.body_position("b4"), axis=0)).max() > 1e-3


def test_a_loop_written_as_a_urdf_loop_joint_closes_the_same_mechanism(tmp_path):
    from linkdyn.exchange.write import urdf_text

    model = closed(("revolute", "revolute", "revolute")).build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        text = urdf_text(model)
    assert '<loop_joint name="close" type="spherical">' in text
    path = tmp_path / "loop.urdf"
    path.write_text(text)
    same_urdf_motion(model, path)


def test_urdf_refuses_what_a_urdf_tree_cannot_hold():
    from linkdyn.exchange.write import urdf_text

    with pytest.raises(ModelError, match="joint 'j1': a spherical joint cannot be written as "
                                         "URDF"):
        urdf_text(chain(("revolute", "spherical")).build())
    b = linkdyn.SpatialModelBuilder("drop", gravity=G)
    b.add_body("box", mass=2.0, inertia=(0.02, 0.03, 0.04))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        with pytest.raises(ModelError, match="bodies 'box' reach the ground through no joint"):
            urdf_text(b.build())


def test_the_export_command_writes_either_format(tmp_path, capsys):
    from linkdyn.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)     # the top's spin is not written
        assert main(["export", "heavy_top", str(tmp_path / "top.xml")]) == 0
        assert "as MJCF" in capsys.readouterr().out
        back = load_mjcf(str(tmp_path / "top.xml"))
    assert back.description.bodies[0].mass == linkdyn.load_model(
        "heavy_top").description.bodies[0].mass
    assert main(["export", "heavy_top", str(tmp_path / "top.json")]) == 2
    assert "must end in .xml (MJCF) or .urdf" in capsys.readouterr().err


def test_joint_dampers_springs_and_friction_go_with_their_joints(tmp_path):
    from linkdyn.exchange.write import save_urdf

    def damped(spring=True):
        b = chain(("revolute", "prismatic", "revolute"))
        b.add_joint_damper("d0", "j0", 0.05)
        b.add_joint_damper("d1", "j1", 2.0)
        if spring:
            b.add_torsional_spring_damper("k2", "j2", 3.0, 0.01, rest_angle=0.2)
        b.add_joint_friction("f0", "j0", coulomb=0.02)
        return b.build()

    model = damped()
    text = mjcf_text(model)          # every element written: no warning
    for attribute in ('damping="0.05"', 'frictionloss="0.02"', 'damping="2.0"',
                      'stiffness="3.0"', 'damping="0.01"'):
        assert attribute in text
    path = tmp_path / "damped.xml"
    path.write_text(text)
    same_motion(model, path, t_end=0.6)
    model = damped(spring=False)
    with pytest.warns(ModelWarning, match="without: its gravity") as record:
        path = save_urdf(model, tmp_path / "damped.urdf")
    assert not any("force element" in str(w.message) for w in record)
    with pytest.warns(ModelWarning, match="joint limits"):
        _, r = same_urdf_motion(model, path, t_end=0.6)
    # energy leaves through the dampers and the friction in both
    assert r.energy[-1] < r.energy[0] - 1e-3


def test_gear_pairs_between_tree_hinges_become_joint_equalities_and_mimics(tmp_path):
    """Two shafts on the ground geared 20:50 (opposite senses) with a phase, the second
    carrying a tilted arm: read back from MJCF and URDF the geared shafts move as the
    model's."""
    from linkdyn.exchange.write import save_urdf

    def geared():
        b = linkdyn.SpatialModelBuilder("geared", gravity=G)
        b.add_ground_point("A", (0.0, 0.0, 0.0))
        b.add_ground_point("B", (0.07, 0.0, 0.0))
        R = turned(0.5, (0.0, 1.0, 0.3))
        b.add_body("s1", mass=0.4, inertia=(1e-3, 1e-3, 2e-4), points={"o": (0.0, 0.0, 0.0)})
        b.add_body("s2", mass=1.2, inertia=(4e-3, 3e-3, 2e-3), position=(0.17, 0.0, 0.0),
                   points={"o": tuple(R.T @ np.array([-0.1, 0.0, 0.0]))}, orientation=R)
        # horizontal shafts: gravity swings the arm
        b.add_revolute("shaft1", "s1.o", "ground.A", axis=(0.0, 1.0, 0.0))
        b.add_revolute("shaft2", "ground.B", "s2.o", axis=(0.0, 1.0, 0.0))
        b.add_gear_pair("mesh", "shaft1", "shaft2", teeth=(20, 50), module=0.002,
                        phase=0.05)
        return b.build()

    model = geared()
    path = save_mjcf(model, tmp_path / "geared.xml")
    assert 'polycoef="' in path.read_text()
    same_motion(model, path, t_end=0.5)
    with pytest.warns(ModelWarning, match="its gravity"):
        path = save_urdf(model, tmp_path / "geared.urdf")
    assert "<mimic" in path.read_text()
    a, _ = same_urdf_motion(model, path, t_end=0.5, atol=1e-8, rotations=True)
    assert np.abs(a.body_rotation("s2")[-1] - a.body_rotation("s2")[0]).max() > 0.05
