"""Spatial rigid bodies in natural coordinates (linkdyn.elements.spatial,
linkdyn.compile.spatial): the mass matrix against the inertia tensor, exact derivatives, the
heavy top against its classical solution and invariants, and bad input."""

import json
import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import linkdyn
from linkdyn import SpatialModelBuilder
from linkdyn.errors import ModelError, UnknownNameError
from linkdyn.models.spatial import HEAVY_TOP, heavy_top, heavy_top_nutation

from conftest import ROUNDOFF, assert_rows_match_differences, central_difference, sampled_peaks


def tumbling_body(seed=3):
    """A free body with a full (non-diagonal) inertia tensor, turned and spinning."""
    rng = np.random.default_rng(seed)
    Q = Rotation.random(random_state=seed).as_matrix()
    J = Q @ np.diag([0.3, 0.5, 0.6]) @ Q.T              # principal moments meet the triangle
    R = Rotation.random(random_state=seed + 1).as_matrix()
    omega, vel = rng.standard_normal(3), rng.standard_normal(3)
    b = SpatialModelBuilder("tumbling", gravity=(0.0, 0.0, -9.81))
    b.add_body("box", mass=2.5, inertia=J, points={"corner": (0.2, -0.1, 0.3)},
               position=(1.0, 2.0, 3.0), orientation=R, velocity=vel, angular_velocity=omega)
    b.add_marker("corner", "box.corner")
    return b.build(), J, R, omega, vel


def test_mass_matrix_gives_the_kinetic_energy_of_the_inertia_tensor():
    model, J, R, omega, vel = tumbling_body()
    q, v = model.q0, model.v0
    assert model.nq == 12 and model.nc == 6
    # T = m |v|^2 / 2 + omega . (R J R^T) omega / 2, with the diagonal natural-coordinate M
    expected = 0.5 * 2.5 * vel @ vel + 0.5 * omega @ (R @ J @ R.T) @ omega
    assert 0.5 * np.sum(model.mass * v**2) == pytest.approx(expected, rel=1e-13)
    # the state describes the given orientation and angular velocity
    np.testing.assert_allclose(model.body_rotation(q, "box"), R, atol=ROUNDOFF)
    np.testing.assert_allclose(model.body_angular_velocity(q, v, "box"), omega, atol=ROUNDOFF)
    # a body point: r + R p, its velocity v + omega x R p
    p = R @ np.array([0.2, -0.1, 0.3])
    np.testing.assert_allclose(model.marker_positions(q)[0], np.array([1.0, 2.0, 3.0]) + p,
                               atol=ROUNDOFF)
    np.testing.assert_allclose(model.marker_velocities(v)[0], vel + np.cross(omega, p),
                               atol=ROUNDOFF)
    # consistent already: the frame is orthonormal and moves rigidly
    assert np.abs(model.phi(q)).max() < ROUNDOFF
    assert np.abs(model.phi_q(q) @ v).max() < ROUNDOFF


def test_jacobian_gamma_and_hessian_match_finite_differences():
    model = heavy_top()
    rng = np.random.default_rng(7)
    q = model.q0 + 1e-3 * rng.standard_normal(model.nq)
    v = rng.standard_normal(model.nq)
    # gamma = -(Phi_q v)_q v: the rate of Phi_q v along v, negated
    assert_rows_match_differences(model, q, v, rng.standard_normal(model.nc))


def top_invariants(r):
    """Energy, the vertical angular momentum about the pivot and the spin about the axis."""
    J = np.diag([HEAVY_TOP["transverse"], HEAVY_TOP["transverse"], HEAVY_TOP["axial"]])
    R = r.body_rotation("top")
    w = r.body_angular_velocity("top")
    about_cm = np.einsum("nij,jk,nlk,nl->ni", R, J, R, w)
    h = HEAVY_TOP["mass"] * np.cross(r.body_position("top"), r.body_velocity("top")) + about_cm
    return r.energy, h[:, 2], np.einsum("ni,ni->n", w, R[:, :, 2])


def nutation_extremes(theta):
    """The axis' polar angle at its sampled turning points, each refined by the parabola
    through its neighbours."""
    out = []
    for k in range(1, len(theta) - 1):
        a, b, c = theta[k - 1:k + 2]
        if (b - a) * (c - b) < 0:
            out.append(b - 0.125 * (c - a) ** 2 / (a - 2 * b + c))
    return np.array(out)


def test_heavy_top_against_its_classical_solution():
    # The axis nutates between theta0 = 0.5 rad and the second root of the classical cubic
    # (2.2953 rad: the top, spinning slowly for its weight, dips below the horizontal);
    # energy, the vertical angular momentum and the spin about the axis are constant.
    # Default method, 5 s (seven nutations): measured errors of the bounds 1.2e-6, 5.4e-9,
    # 2.7e-11 rad and relative drifts of the invariants 0.7 to 2.2 tol at rtol 1e-6, 1e-8,
    # 1e-10.
    model = heavy_top()
    theta_min, theta_max = heavy_top_nutation()
    assert theta_max == pytest.approx(2.2952728, abs=1e-6)
    bounds, drifts = [], []
    for tol in (1e-6, 1e-8, 1e-10):
        r = linkdyn.simulate(model, 5.0, rtol=tol, atol=tol, dt_out=1e-4)
        theta = np.arccos(np.clip(r.marker("tip")[:, 2] / 0.2, -1.0, 1.0))
        ext = nutation_extremes(theta)
        high, low = ext[ext > 1.5], ext[ext < 1.5]
        assert len(high) == 7 and len(low) == 7
        bounds.append(max(np.abs(high - theta_max).max(), np.abs(low - theta_min).max()))
        energy, hz, spin = top_invariants(r)
        drift = max(np.ptp(energy) / abs(energy[0]), np.ptp(hz) / abs(hz[0]),
                    np.ptp(spin) / HEAVY_TOP["spin"])
        drifts.append(drift)
        assert bounds[-1] < 20 * tol and drift < 50 * tol, (tol, bounds[-1], drift)
        assert r.phi_norm.max() < 1e-10
    for errors in (bounds, drifts):
        assert errors[1] < errors[0] / 30 and errors[2] < errors[1] / 30


def test_heavy_top_methods_agree():
    # The BDF alone (measured: bounds off by 9.2e-6 rad at 1e-8, 7.9e-8 at 1e-10) and the
    # default agree; the tip's path within the BDF's error.
    model = heavy_top()
    auto = linkdyn.simulate(model, 2.0, rtol=1e-10, atol=1e-10, dt_out=0.01)
    bdf = linkdyn.simulate(model, 2.0, rtol=1e-10, atol=1e-10, dt_out=0.01, method="bdf")
    assert auto.stats["rk_steps"] > 0 and bdf.stats["rk_steps"] == 0
    assert np.abs(auto.marker("tip") - bdf.marker("tip")).max() < 1e-6
    # the pivot holds the top: its reaction balances gravity and the centre's acceleration
    force = auto.joint_force("pivot")
    accel = auto.body_acceleration("top")
    np.testing.assert_allclose(force + np.array([0.0, 0.0, -9.81]), accel, atol=1e-7)


def test_quaternions_are_unit_and_continuous():
    r = linkdyn.simulate(heavy_top(), 1.0, rtol=1e-9, atol=1e-9, dt_out=1e-3)
    quat = r.body_quaternion("top")
    np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1.0, atol=1e-12)
    assert quat[0, 0] >= 0 and np.all(np.sum(quat[1:] * quat[:-1], axis=1) > 0)
    back = Rotation.from_quat(quat[:, [1, 2, 3, 0]]).as_matrix()
    np.testing.assert_allclose(back, r.body_rotation("top"), atol=1e-12)
    # a recorded run keeps the same series
    rec = linkdyn.simulate(heavy_top(), 1.0, rtol=1e-9, atol=1e-9, dt_out=1e-3,
                           record=linkdyn.Record(bodies=["top"], joints=["pivot"]))
    np.testing.assert_array_equal(rec.body_quaternion("top"), quat)
    np.testing.assert_array_equal(rec.joint_force("pivot"), r.joint_force("pivot"))
    # and its rotation matrices from them (they were "not recorded")
    np.testing.assert_allclose(rec.body_rotation("top"), r.body_rotation("top"), atol=1e-12)
    markers_only = linkdyn.simulate(heavy_top(), 0.01, record=linkdyn.Record(markers="tip"))
    with pytest.raises(linkdyn.NotRecordedError, match=r"body_rotation\('top'\) was not "):
        markers_only.body_rotation("top")


def test_a_free_body_keeps_its_momenta():
    # No joint, no gravity: the centre moves uniformly, the angular momentum is constant
    # and the energy too, while the body tumbles about its intermediate axis.
    model, J, R, omega, vel = tumbling_body()
    b = SpatialModelBuilder("free", gravity=(0.0, 0.0, 0.0))
    b.add_body("box", mass=2.5, inertia=J, position=(0.0, 0.0, 0.0), orientation=R,
               velocity=vel, angular_velocity=omega)
    r = linkdyn.simulate(b.build(), 3.0, rtol=1e-10, atol=1e-10, dt_out=0.01)
    np.testing.assert_allclose(r.body_position("box"), r.t[:, None] * vel, atol=1e-9)
    Rt = r.body_rotation("box")
    h = np.einsum("nij,jk,nlk,nl->ni", Rt, J, Rt, r.body_angular_velocity("box"))
    assert np.abs(h - h[0]).max() < 1e-8 * np.linalg.norm(h[0])
    assert np.ptp(r.energy) < 1e-8 * r.energy[0]


@pytest.mark.parametrize("inertia, match", [
    ((0.1, 0.1, -0.1), "positive definite"),
    ((0.1, 0.1, 0.2), "triangle inequality"),
    (((0.1, 0.2, 0.0), (0.0, 0.1, 0.0), (0.0, 0.0, 0.1)), "symmetric"),
    ((0.1, 0.1), "3 x 3 matrix"),
])
def test_bad_inertia_is_refused_with_the_body_named(inertia, match):
    b = SpatialModelBuilder("bad")
    with pytest.raises(ModelError, match=match) as caught:
        b.add_body("disk", mass=1.0, inertia=inertia)
    assert "body 'disk'" in str(caught.value)


def test_bad_bodies_and_joints_are_refused():
    b = SpatialModelBuilder("bad")
    with pytest.raises(ModelError, match="rotation matrix"):
        b.add_body("a", mass=1.0, inertia=(1, 1, 1), orientation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ModelError, match="mass must be positive"):
        b.add_body("a", mass=0.0, inertia=(1, 1, 1))
    with pytest.raises(ModelError, match="three numbers"):
        b.add_body("a", mass=1.0, inertia=(1, 1, 1), position=(0.0, 1.0))
    b.add_body("a", mass=1.0, inertia=(1, 1, 1), points={"p": (1.0, 0.0, 0.0)})
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    with pytest.raises(ModelError, match="has no point 'q'"):
        b.add_spherical("s", "a.q", "ground.O")
    with pytest.raises(ModelError, match="unknown body 'b'"):
        b.add_spherical("s", "b.p", "ground.O")
    with pytest.raises(ModelError, match="two different bodies"):
        b.add_spherical("s", "a.p", "a.cm")
    with pytest.raises(ModelError, match="already used by a body"):
        b.add_spherical("a", "a.p", "ground.O")
    with pytest.raises(ModelError, match="at least one body"):
        SpatialModelBuilder("empty").build()
    model = heavy_top()
    r = linkdyn.simulate(model, 0.01)
    with pytest.raises(UnknownNameError, match="no body 'disk'"):
        r.body_rotation("disk")
    with pytest.raises(linkdyn.ArgumentError, match="body_rotation or body_quaternion"):
        r.body_angle("top")
    with pytest.raises(linkdyn.ArgumentError, match="no spatial bodies"):
        linkdyn.simulate(linkdyn.models.simple_pendulum(), 0.01).body_rotation("lump")
    # a linkage of points has no bodies: the message said "(a planar body's orientation is
    # body_angle)", and body_quaternion's named body_rotation
    k = linkdyn.kinematics("five_ss", [0.0, 0.1])
    for what in ("body_rotation", "body_quaternion"):
        with pytest.raises(linkdyn.ArgumentError, match=rf"^{what}: model 'five_ss' is a "
                           "spatial linkage of points, lines and planes: it has no bodies"):
            getattr(k, what)("L1")


def test_heavy_top_is_a_built_in():
    model = linkdyn.load_model("heavy_top")
    assert isinstance(model, linkdyn.SpatialModel) and model.marker_dimension == 3
    assert "heavy_top" in linkdyn.builtin_names()
    assert model.marker_positions(model.q0)[0] == pytest.approx(
        [0.2 * math.sin(0.5), 0.0, 0.2 * math.cos(0.5)])


def hinged_bar(width=0.1):
    """A 1 m, 1 kg bar of square section hinged at one end about the global y axis."""
    b = SpatialModelBuilder("hinged", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    transverse = (1.0 + width**2) / 12.0
    b.add_body("bar", mass=1.0, inertia=(width**2 / 6.0, transverse, transverse),
               points={"a": (-0.5, 0.0, 0.0), "b": (0.5, 0.0, 0.0)}, position=(0.5, 0.0, 0.0))
    b.add_revolute("hinge", "bar.a", "ground.O", axis=(0.0, 1.0, 0.0))
    b.add_marker("tip", "bar.b")
    return b.build(), transverse + 0.25


def test_revolute_joint_makes_the_compound_pendulum():
    # Released from the horizontal, the bar swings in the xz plane with the compound
    # pendulum's period 4 K(sin^2(pi/4)) / w, w^2 = m g (L/2) / I_O: the tip's height peaks
    # at T/2 (the opposite horizontal) and T. The tip stays in its plane.
    from scipy.special import ellipk

    model, inertia_o = hinged_bar()
    assert model.nc == 6 + 5
    period = 4.0 * ellipk(0.5) / math.sqrt(9.81 * 0.5 / inertia_o)
    r = linkdyn.simulate(model, 1.1 * period, rtol=1e-10, atol=1e-10, dt_out=1e-4)
    assert np.abs(r.marker("tip")[:, 1]).max() < 1e-12
    # the tip's height peaks (at the opposite horizontal, then back) at T/2 and T: each
    # peak refined by the parabola through the samples around it
    np.testing.assert_allclose(sampled_peaks(r.t, r.marker("tip")[:, 2]),
                               [0.5 * period, period], atol=1e-7)
    # marker events in space: the tip passes below the pivot (x = 0) at T/4 and 3T/4, and
    # its height falls through -0.5 m once in each half swing, half a period apart
    events = [linkdyn.events.marker_crosses("tip", "x", 0.0, terminal=False),
              linkdyn.events.marker_crosses("tip", "z", -0.5, direction=-1, terminal=False)]
    crossing = linkdyn.simulate(model, period, rtol=1e-10, atol=1e-10, events=events)
    bottom = [e.t for e in crossing.events if e.name == "tip.x"]
    np.testing.assert_allclose(bottom, [0.25 * period, 0.75 * period], atol=1e-8)
    down = [e.t for e in crossing.events if e.name == "tip.z"]
    assert len(down) == 2 and down[0] < 0.25 * period
    assert down[1] - down[0] == pytest.approx(0.5 * period, abs=1e-8)
    assert np.ptp(r.energy) < 1e-9
    # the hinge holds the bar against gravity and the centre's acceleration
    np.testing.assert_allclose(r.joint_force("hinge") + [0.0, 0.0, -9.81],
                               r.body_acceleration("bar"), atol=1e-7)


def test_universal_and_revolute_rows_match_finite_differences():
    b = SpatialModelBuilder("chain3", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    R = Rotation.from_rotvec([0.2, -0.3, 0.4]).as_matrix()
    for k, name in enumerate(("a", "b")):
        b.add_body(name, mass=1.0, inertia=(0.02, 0.03, 0.04),
                   points={"top": (0.0, 0.0, 0.2), "bottom": (0.0, 0.0, -0.2)},
                   position=(0.0, 0.0, -0.2 - 0.4 * k), orientation=R if k else None,
                   angular_velocity=(4.0, 2.0, 1.0) if k else (0.0, 5.0, 0.0))
    b.add_universal("cardan", "a.top", "ground.O", axis_first=(1.0, 0.0, 0.0),
                    axis_second=(0.0, 1.0, 0.0))
    b.add_revolute("knee", "b.top", "a.bottom", axis=(1.0, 1.0, 0.0))
    model = b.build()
    # the sliding joints' rows as well, on a copy with a sleeve and a slider added
    b.add_body("c", mass=0.2, inertia=(0.002, 0.003, 0.004), position=(0.0, 0.0, -0.9),
               orientation=R)
    b.add_body("d", mass=0.2, inertia=(0.002, 0.003, 0.004), position=(0.0, 0.1, -0.9))
    b.add_cylindrical("sleeve", "c.cm", "b.bottom", axis=(0.3, 0.2, 1.0))
    b.add_prismatic("slider", "d.cm", "c.cm", axis=(0.0, 1.0, 0.2))
    b.add_rigid("weld", "d.cm", "ground.O")
    sliding = b.build()
    assert sliding.constraint_names[-15:] == (
        "sleeve.line1", "sleeve.line2", "sleeve.axis1", "sleeve.axis2", "slider.line1",
        "slider.line2", "slider.axis1", "slider.axis2", "slider.lock", "weld.x", "weld.y",
        "weld.z", "weld.axis1", "weld.axis2", "weld.lock")
    rng = np.random.default_rng(5)
    qs = sliding.q0 + 1e-3 * rng.standard_normal(sliding.nq)
    np.testing.assert_allclose(sliding.phi_q(qs).toarray(), central_difference(sliding.phi, qs),
                               atol=1e-9)
    vs = rng.standard_normal(sliding.nq)
    rate = central_difference(lambda x: sliding.phi_q(x).toarray() @ vs, qs) @ vs
    np.testing.assert_allclose(sliding.gamma(qs, vs), -rate, atol=1e-8)
    assert model.constraint_names[-9:] == (
        "cardan.x", "cardan.y", "cardan.z", "cardan.cross", "knee.x", "knee.y", "knee.z",
        "knee.axis1", "knee.axis2")
    rng = np.random.default_rng(11)
    q = model.q0 + 1e-3 * rng.standard_normal(model.nq)
    v = rng.standard_normal(model.nq)
    assert_rows_match_differences(model, q, v, rng.standard_normal(model.nc))
    # Set turning, the double pendulum swings in space; its energy is kept in proportion
    # to the tolerance (measured relative drifts 2.2e-9 and 1.1e-11 at 1e-7 and 1e-9).
    state = linkdyn.consistent_state(model)
    drifts = []
    for tol in (1e-7, 1e-9):
        r = linkdyn.simulate(model, 3.0, rtol=tol, atol=tol, dt_out=0.01)
        drifts.append(np.ptp(r.energy) / np.abs(r.energy).max())
        assert drifts[-1] < 100 * tol and r.phi_norm.max() < 1e-10
    assert drifts[1] < drifts[0] / 20
    assert np.abs(model.phi(state.q)).max() < 1e-12


def test_axis_joints_refuse_bad_axes():
    b = SpatialModelBuilder("bad")
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("a", mass=1.0, inertia=(1, 1, 1))
    with pytest.raises(ModelError, match="non-zero vector"):
        b.add_revolute("r", "a.cm", "ground.O", axis=(0.0, 0.0, 0.0))
    with pytest.raises(ModelError, match="must be perpendicular"):
        b.add_universal("u", "a.cm", "ground.O", axis_first=(1, 0, 0), axis_second=(1, 1, 0))


def test_drivers_in_space():
    # A 0.2 m crank (1 kg) on a horizontal revolute axis (+y), turned at 1 turn/s by an
    # angle driver: the tip follows the circle and the motor holds the crank against
    # gravity, torque -m g (L/2) cos(theta) about +y (the rotation is right-handed about
    # the axis: x turns towards -z). A distance driver and a coordinate driver move a second
    # body on a universal joint; both are met along the run.
    from linkdyn.laws import harmonic, linear

    b = SpatialModelBuilder("drivers", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_ground_point("A", (1.0, 0.0, 0.0))
    b.add_ground_point("B", (0.0, 0.0, 1.0))
    b.add_body("crank", mass=1.0, inertia=(0.0005, 0.004, 0.004),
               points={"a": (-0.1, 0.0, 0.0), "b": (0.1, 0.0, 0.0)}, position=(0.1, 0.0, 0.0))
    b.add_revolute("hinge", "crank.a", "ground.O", axis=(0.0, 1.0, 0.0))
    b.add_angle_driver("motor", "hinge", linear(0.0, 2.0 * math.pi))
    b.add_body("arm", mass=0.5, inertia=(0.001, 0.02, 0.02),
               points={"base": (-0.25, 0.0, 0.0), "end": (0.25, 0.0, 0.0)},
               position=(1.25, 0.0, 0.0))
    b.add_universal("cardan", "arm.base", "ground.A", axis_first=(0.0, 1.0, 0.0),
                    axis_second=(0.0, 0.0, 1.0))
    reach = math.hypot(1.5, 1.0)
    b.add_distance_driver("actuator", "arm.end", "ground.B",
                          harmonic(reach, 0.05, 2.0 * math.pi, 0.0))
    b.add_coordinate_driver("lift", "arm.end", "y", linear(0.0, 0.1))
    b.add_marker("tip", "crank.b")
    b.add_marker("end", "arm.end")
    model = b.build()
    assert model.driver_names == ("motor", "actuator", "lift") and model.nominal_dof == 0
    t = np.linspace(0.0, 1.0, 41)
    theta = 2.0 * math.pi * t
    circle = np.column_stack([0.2 * np.cos(theta), np.zeros_like(t), -0.2 * np.sin(theta)])
    for r in (linkdyn.kinematics(model, t),
              linkdyn.simulate(model, 1.0, rtol=1e-10, atol=1e-10, t_out=t)):
        np.testing.assert_allclose(r.marker("tip"), circle, atol=1e-9)
        end = r.marker("end")
        np.testing.assert_allclose(np.linalg.norm(end - [0.0, 0.0, 1.0], axis=1),
                                   reach + 0.05 * np.sin(2.0 * math.pi * t), atol=1e-9)
        np.testing.assert_allclose(end[:, 1], 0.1 * t, atol=1e-9)
    # r is the dynamic run: the motor's torque about +y balances gravity's
    np.testing.assert_allclose(r.driver_effort("motor"), -9.81 * 0.1 * np.cos(theta),
                               atol=1e-6)


def test_drivers_refuse_bad_references():
    from linkdyn.laws import linear

    b = SpatialModelBuilder("bad")
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("a", mass=1.0, inertia=(1, 1, 1), points={"p": (1.0, 0.0, 0.0)})
    b.add_spherical("ball", "a.cm", "ground.O")
    with pytest.raises(ModelError, match="not a revolute joint.*revolute joints: none"):
        b.add_angle_driver("m", "ball", linear(0.0, 1.0))
    with pytest.raises(ModelError, match="axis must be 'x', 'y' or 'z'"):
        b.add_coordinate_driver("c", "a.p", "w", linear(0.0, 1.0))
    with pytest.raises(ModelError, match="law must be a number or a linkdyn.laws law"):
        b.add_distance_driver("d", "a.p", "ground.O", "1 m")
    with pytest.raises(ModelError, match="law must be finite"):
        b.add_distance_driver("d", "a.p", "ground.O", float("nan"))
    with pytest.raises(ModelError, match="same point"):
        b.add_distance_driver("d", "a.p", "a.p", linear(1.0, 0.0))


def test_prismatic_cylindrical_and_rigid_joints():
    # A block on an inclined prismatic rail slides with g times the rail's slope, without
    # turning; the rail pushes it normal to the rail.
    axis = np.array([1.0, 0.5, -0.8]) / np.linalg.norm([1.0, 0.5, -0.8])
    b = SpatialModelBuilder("rail", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("block", mass=2.0, inertia=(0.02, 0.025, 0.03))
    b.add_prismatic("rail", "block.cm", "ground.O", axis=tuple(axis))
    model = b.build()
    assert model.nominal_dof == 1
    r = linkdyn.simulate(model, 1.0, rtol=1e-10, atol=1e-10, dt_out=0.1)
    expected = np.outer(0.5 * (-9.81 * axis[2]) * r.t**2, axis)
    np.testing.assert_allclose(r.body_position("block"), expected, atol=1e-12)
    np.testing.assert_allclose(r.body_rotation("block"), np.broadcast_to(np.eye(3), (11, 3, 3)),
                               atol=1e-12)
    force = r.joint_force("rail")
    np.testing.assert_allclose(force @ axis, 0.0, atol=1e-9)
    np.testing.assert_allclose(force + [0.0, 0.0, -2.0 * 9.81],
                               2.0 * r.body_acceleration("block"), atol=1e-8)
    np.testing.assert_allclose(r.joint_moment("rail"), 0.0, atol=1e-9)

    # Cylindrical: the same block, now free to turn about the rail too: set spinning about
    # it, it keeps its spin (no moment about the axis) while it slides.
    b = SpatialModelBuilder("sleeve", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("sleeve", mass=2.0, inertia=(0.02, 0.025, 0.03),
               angular_velocity=tuple(3.0 * axis))
    b.add_cylindrical("rod", "sleeve.cm", "ground.O", axis=tuple(axis))
    model = b.build()
    assert model.nominal_dof == 2
    r = linkdyn.simulate(model, 1.0, rtol=1e-10, atol=1e-10, dt_out=0.1)
    np.testing.assert_allclose(r.body_position("sleeve"), expected, atol=1e-9)
    np.testing.assert_allclose(r.body_angular_velocity("sleeve") @ axis, 3.0, atol=1e-9)
    np.testing.assert_allclose(r.joint_moment("rod") @ axis, 0.0, atol=1e-9)

    # Rigid: a 1 m bar made of two welded halves swings as the whole bar (test above).
    from scipy.special import ellipk

    width = 0.1
    b = SpatialModelBuilder("welded", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    half = ((0.5 * width**2) / 6.0, 0.5 * (0.25 + width**2) / 12.0,
            0.5 * (0.25 + width**2) / 12.0)
    for k, name in enumerate(("inner", "outer")):
        b.add_body(name, mass=0.5, inertia=half, position=(0.25 + 0.5 * k, 0.0, 0.0),
                   points={"a": (-0.25, 0.0, 0.0), "b": (0.25, 0.0, 0.0)})
    b.add_revolute("hinge", "inner.a", "ground.O", axis=(0.0, 1.0, 0.0))
    b.add_rigid("weld", "outer.a", "inner.b")
    b.add_marker("tip", "outer.b")
    model = b.build()
    assert model.nominal_dof == 1
    single, inertia_o = hinged_bar(width)
    period = 4.0 * ellipk(0.5) / math.sqrt(9.81 * 0.5 / inertia_o)
    t = np.linspace(0.0, period, 21)
    welded = linkdyn.simulate(model, period, rtol=1e-10, atol=1e-10, t_out=t)
    whole = linkdyn.simulate(single, period, rtol=1e-10, atol=1e-10, t_out=t)
    np.testing.assert_allclose(welded.marker("tip"), whole.marker("tip"), atol=1e-8)
    # At release the weld bends: about the weld point, the outer half needs I alpha about
    # its centre plus the moment of the force that accelerates it (0.25 m arm).
    alpha = 9.81 * 0.5 / inertia_o
    bending = half[1] * alpha + 0.25 * 0.5 * (0.75 * alpha - 9.81)
    assert abs(welded.joint_moment("weld")[0, 1]) == pytest.approx(bending, rel=1e-6)


def test_spatial_model_files_round_trip_and_name_bad_fields(tmp_path):
    model = heavy_top()
    path = tmp_path / "top.json"
    model.save(path)
    again = linkdyn.load_model(path)
    assert isinstance(again, linkdyn.SpatialModel) and again.description == model.description
    # bodies in general orientations read back bit for bit: the reader re-orthonormalised
    # the saved rotation matrices, whose last bits moved (the double pendulum's and the
    # governor's runs differed by 7e-14 and 9e-15 after a save)
    for name in ("spatial_double_pendulum", "flyball_governor"):
        model = linkdyn.load_model(name)
        model.save(tmp_path / f"{name}.json")
        again = linkdyn.load_model(tmp_path / f"{name}.json")
        assert again.description.bodies == model.description.bodies
        assert np.array_equal(linkdyn.simulate(again, 0.05).q, linkdyn.simulate(model, 0.05).q)
    # every joint and driver kind, through a file: the same model
    from linkdyn.laws import linear

    b = SpatialModelBuilder("kinds", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    R = Rotation.from_rotvec([0.1, 0.2, 0.3]).as_matrix()
    for k in range(5):
        b.add_body(f"b{k}", mass=1.0, inertia=(0.02, 0.03, 0.04), position=(0.0, 0.0, -k),
                   orientation=R if k % 2 else None, points={"p": (0.1, 0.0, 0.0)})
    b.add_revolute("j0", "b0.cm", "ground.O", axis=(0.0, 1.0, 0.0))
    b.add_universal("j1", "b1.cm", "b0.p", axis_first=(1.0, 0.0, 0.0),
                    axis_second=(0.0, 0.0, 1.0))
    b.add_cylindrical("j2", "b2.cm", "b1.p", axis=(0.0, 0.0, 1.0))
    b.add_prismatic("j3", "b3.cm", "b2.p", axis=(1.0, 1.0, 0.0))
    b.add_rigid("j4", "b4.cm", "b3.p")
    b.add_spherical("j5", "b4.p", "b2.cm")
    b.add_angle_driver("d0", "j0", linear(0.0, 1.0))
    b.add_distance_driver("d1", "b2.p", "ground.O", linear(2.0, 0.0))
    b.add_coordinate_driver("d2", "b1.p", "z", linear(-1.0, 0.0))
    b.add_marker("m", "b4.p")
    kinds = b.build()
    kinds.save(tmp_path / "kinds.json")
    loaded = linkdyn.load_model(tmp_path / "kinds.json")
    assert loaded.constraint_names == kinds.constraint_names
    rng = np.random.default_rng(2)
    q = kinds.q0 + 1e-2 * rng.standard_normal(kinds.nq)
    np.testing.assert_allclose(loaded.phi(q, 0.3), kinds.phi(q, 0.3), atol=ROUNDOFF)
    np.testing.assert_allclose(loaded.q0, kinds.q0, atol=ROUNDOFF)
    # bad files name the field
    data = json.loads(path.read_text())
    data["joints"][0]["type"] = "hinge"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(linkdyn.ModelFileError, match=r"joints\[0\].*must be one of"):
        linkdyn.load_model(bad)
    data = json.loads(path.read_text())
    data["bodies"][0]["inertia"] = [0.1, 0.1, 0.3]
    bad.write_text(json.dumps(data))
    with pytest.raises(linkdyn.ModelFileError, match=r"bodies\[0\].*triangle inequality"):
        linkdyn.load_model(bad)
    data = json.loads(path.read_text())
    data["bodies"][0]["colour"] = "red"
    bad.write_text(json.dumps(data))
    with pytest.raises(linkdyn.ModelFileError, match=r"unknown field\(s\): colour"):
        linkdyn.load_model(bad)


def test_statics_modes_and_error_estimates_take_spatial_models():
    from linkdyn.models.spatial import spatial_chain

    # One bar hanging on a spherical joint: two pendulum modes, w^2 = m g (L/2) / I_pivot,
    # and a free spin about its axis (frequency zero).
    bar = spatial_chain(1, length=1.0, angle=-math.pi / 2)
    modes = linkdyn.modes(bar)
    inertia = (1.0 + 0.01) / 12.0 + 0.25
    np.testing.assert_allclose(modes.frequencies[1:], math.sqrt(9.81 * 0.5 / inertia),
                               rtol=1e-10)
    assert modes.frequencies[0] < 1e-5
    # The global error estimate of the heavy top's tip against its true error (a run at
    # 1e-12): within a factor of two.
    top = heavy_top()
    t = np.linspace(0.0, 1.0, 101)
    estimate = linkdyn.estimate_error(top, 1.0, rtol=1e-6, atol=1e-6, t_out=t)
    ref = linkdyn.simulate(top, 1.0, rtol=1e-12, atol=1e-12, t_out=t).marker("tip")
    true = np.abs(estimate.result.marker("tip") - ref).max()
    assert 0.5 * true < estimate.max_marker("tip") < 2.0 * true


def test_sweeps_take_spatial_models():
    # A sweep over a body's mass: each case is the model built with that mass.
    pytest.importorskip("pandas")
    top = heavy_top()
    table = linkdyn.sweep(top, {"bodies.top.mass": [1.0, 2.0]}, run_options={"t_end": 0.2})
    assert list(table["status"]) == ["ok", "ok"]
    heavier = json.loads(json.dumps(linkdyn.describe.modelfile.to_dict(top.description)))
    heavier["bodies"][0]["mass"] = 2.0
    from linkdyn.compile.compiler import compile_model

    direct = linkdyn.simulate(compile_model(linkdyn.describe.modelfile.from_dict(heavier)),
                              0.2)
    assert table["steps"].iloc[1] == direct.stats["steps"]


def test_a_factorisation_that_fills_beyond_its_estimate_is_reordered():
    # The BDF's KLU pivots leave the diagonal on spatial models' iteration matrices, so AMD's
    # symmetric ordering fills far beyond its estimate; spatial models are ordered by COLAMD
    # from the start. Forced to AMD, the integrator re-orders after its first factorisation
    # (stats["reorderings"]) and continues with the same COLAMD order: the same result.
    from linkdyn.models.spatial import spatial_chain

    model = spatial_chain(500, length=1.0 / math.sqrt(500))
    colamd = linkdyn.simulate(model, 2e-3, rtol=1e-8, atol=1e-8, t_out="final", method="bdf")
    assert colamd.stats["reorderings"] == 0
    model.column_ordering = False          # this instance only: AMD first
    amd = linkdyn.simulate(model, 2e-3, rtol=1e-8, atol=1e-8, t_out="final", method="bdf")
    assert amd.stats["reorderings"] == 1
    np.testing.assert_array_equal(amd.q, colamd.q)
    # planar models fill as AMD promises: never re-ordered
    assert linkdyn.simulate(linkdyn.chain(500), 2e-3, method="bdf").stats["reorderings"] == 0


def test_assembly_modes_of_a_driven_spatial_crank_skip_flipped_and_mirrored_frames():
    # A crank on a revolute joint, its angle driven to 0.3 rad: one assembly mode. The rows
    # also admit the crank half a turn away (the driver's sine row), its axis reversed, and a
    # mirrored frame (the frame rows fix lengths and right angles, not handedness); the
    # orientation cosines mark those (handedness, axis, driver), so they are not modes.
    from linkdyn.laws import linear

    b = SpatialModelBuilder("crank", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("crank", mass=1.0, inertia=(0.001, 0.01, 0.01),
               points={"a": (-0.1, 0.0, 0.0), "b": (0.1, 0.0, 0.0)}, position=(0.1, 0.0, 0.0))
    b.add_revolute("hinge", "crank.a", "ground.O", axis=(0.0, 1.0, 0.0))
    b.add_angle_driver("motor", "hinge", linear(0.3, 2.0 * math.pi))
    model = b.build()
    np.testing.assert_allclose(model.orientation_cosines(model.q0, 0.0),
                               [1.0, 1.0, math.cos(0.3)], atol=ROUNDOFF)
    modes = linkdyn.assembly_modes(model)
    assert len(modes) == 1
    np.testing.assert_allclose(modes[0].q[:3], [0.1 * math.cos(0.3), 0.0,
                                                -0.1 * math.sin(0.3)], atol=1e-12)
    mirrored = model.q0.copy()
    mirrored[9:12] *= -1.0                    # w reversed: a left-handed frame
    assert model.orientation_cosines(mirrored, 0.0)[0] == pytest.approx(-1.0)


def test_planar_joint_and_point_primitives_rows_match_finite_differences():
    b = SpatialModelBuilder("surfaces", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    R = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    for name, z in (("puck", 0.0), ("bead", 0.5), ("probe", 1.0)):
        b.add_body(name, mass=1.0, inertia=(0.02, 0.03, 0.04), points={"p": (0.1, 0.0, 0.0)},
                   position=(0.2, 0.1, z), orientation=R, angular_velocity=(1.0, 2.0, 3.0))
    b.add_planar("floor", "puck.cm", "ground.O", normal=(0.0, 0.3, 1.0))
    b.add_point_on_line("wire", "bead.cm", "puck.p", axis=(1.0, 0.0, 0.2))
    b.add_point_on_plane("touch", "probe.p", "bead.cm", normal=(0.2, 1.0, 0.0))
    model = b.build()
    assert model.constraint_names[-6:] == ("floor.plane", "floor.axis1", "floor.axis2",
                                          "wire.line1", "wire.line2", "touch.plane")
    # freedoms: 6 per body, less 3 (planar), 2 (point on line), 1 (point on plane)
    assert model.nq - model.nc == 18 - 6
    rng = np.random.default_rng(3)
    q = model.q0 + 1e-3 * rng.standard_normal(model.nq)
    v = rng.standard_normal(model.nq)
    np.testing.assert_allclose(model.phi_q(q).toarray(), central_difference(model.phi, q),
                               atol=1e-9)
    rate = central_difference(lambda x: model.phi_q(x).toarray() @ v, q) @ v
    np.testing.assert_allclose(model.gamma(q, v), -rate, atol=1e-8)
    # the file form keeps them
    from linkdyn.describe import spatialfile

    again = linkdyn.compile.compiler.compile_model(
        spatialfile.from_dict(json.loads(spatialfile.dumps(model.description))))
    assert [j.kind for j in again.description.joints] == ["planar", "point_line", "point_plane"]
    np.testing.assert_allclose(again.phi_q(q).toarray(), model.phi_q(q).toarray(), atol=1e-12)
    with pytest.raises(ModelError, match="must be on a moving body"):
        b.add_point_on_line("bad", "ground.O", "bead.cm", axis=(1.0, 0.0, 0.0))


def test_a_block_slides_down_a_tilted_planar_joint_and_keeps_its_spin():
    # Frictionless plane tilted by a about x: the centre accelerates at g sin(a) down the
    # slope; a body symmetric about the plane's normal spins about it at a constant rate.
    a, g, spin = 0.4, 9.81, 3.0
    normal = np.array([0.0, math.sin(a), math.cos(a)])
    down = np.array([0.0, -math.cos(a), math.sin(a)])       # in the plane, downhill (z falls)
    down = -down if down[2] > 0 else down
    R = Rotation.align_vectors([normal], [[0.0, 0.0, 1.0]])[0].as_matrix()
    b = SpatialModelBuilder("block", gravity=(0.0, 0.0, -g))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("block", mass=2.0, inertia=(0.05, 0.05, 0.08), position=(0.0, 0.0, 0.0),
               orientation=R, angular_velocity=tuple(spin * normal))
    b.add_marker("c", "block.cm")
    b.add_planar("slope", "block.cm", "ground.O", normal=tuple(normal))
    model = b.build()
    assert model.nq - model.nc == 3
    r = linkdyn.simulate(model, 1.0, rtol=1e-10, atol=1e-10, dt_out=0.01)
    expected = 0.5 * g * math.sin(a) * r.t[:, None] ** 2 * down
    np.testing.assert_allclose(r.marker("c"), expected, atol=1e-8)
    np.testing.assert_allclose(r.body_angular_velocity("block"),
                               np.tile(spin * normal, (len(r.t), 1)), atol=1e-8)
    # the plane carries the weight's normal part
    force = r.joint_force("slope")
    np.testing.assert_allclose(force @ normal, 2.0 * g * math.cos(a), rtol=1e-7)


def test_a_bead_falls_along_a_vertical_wire_and_turns_freely():
    b = SpatialModelBuilder("bead", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 1.0))
    b.add_body("bead", mass=0.1, inertia=(0.002, 0.002, 0.003), position=(0.0, 0.0, 1.0),
               angular_velocity=(1.0, -2.0, 0.5))
    b.add_point_on_line("wire", "bead.cm", "ground.O", axis=(0.0, 0.0, 1.0))
    b.add_marker("c", "bead.cm")
    model = b.build()
    assert model.nq - model.nc == 4
    r = linkdyn.simulate(model, 0.5, rtol=1e-10, atol=1e-10, dt_out=0.01)
    np.testing.assert_allclose(r.marker("c")[:, 2], 1.0 - 0.5 * 9.81 * r.t**2, atol=1e-9)
    np.testing.assert_allclose(r.marker("c")[:, :2], 0.0, atol=1e-10)
    kinetic = r.energy - r.energy[0]
    assert np.abs(kinetic).max() < 1e-8          # free rotation and free fall: energy kept


def test_principal_frame_is_the_one_nearest_the_body_axes_and_does_not_jump():
    from linkdyn.elements.spatial import principal_frame

    # a diagonal tensor: the body axes themselves, whatever the order or equality of the
    # moments (ascending moments swapped axes as two moments passed each other)
    for moments in ((1.0, 2.0, 3.0), (3.0, 2.0, 1.0), (2.0, 2.0, 1.0), (1.0, 1.0, 1.0)):
        E, P = principal_frame(np.diag(moments))
        assert np.array_equal(E, np.eye(3))
        np.testing.assert_array_equal(P, 0.5 * sum(moments) - np.array(moments))
    # a general tensor: a proper rotation to principal axes, the signed ordering nearest
    # the body axes; a moment passing another leaves the frame in place
    R = Rotation.from_rotvec([0.3, -0.2, 0.25]).as_matrix()
    frames = []
    for b in (1.9, 2.1):
        J = R @ np.diag([1.0, b, 2.0]) @ R.T
        E, P = principal_frame(J)
        assert np.linalg.det(E) == pytest.approx(1.0)
        D = E.T @ J @ E
        np.testing.assert_allclose(D - np.diag(np.diag(D)), 0.0, atol=ROUNDOFF)
        np.testing.assert_allclose(P, 0.5 * np.trace(J) - np.diag(D), atol=ROUNDOFF)
        assert np.all(np.diag(E) > 0.8)
        frames.append(E)
    np.testing.assert_allclose(frames[0], frames[1], atol=1e-12)


def test_bricard_moves_with_its_one_freedom_like_its_redundant_free_twin():
    # IFToMM A04: Grubler counts no freedom, one constraint row is redundant. The same
    # linkage without that row (its last joint a universal joint) is an independent model
    # of the same motion, integrated without any redundant-constraint handling.
    from linkdyn.models.spatial import BRICARD_T_END, bricard

    model, twin = bricard(), bricard(redundant_free=True)
    J = model.phi_q(model.q0).toarray()
    assert model.nq == model.nc and np.linalg.matrix_rank(J) == model.nc - 1
    assert twin.nq - twin.nc == 1
    assert np.linalg.matrix_rank(twin.phi_q(twin.q0).toarray()) == twin.nc
    # the refusal says what to do about an overconstrained mechanism that moves
    with pytest.raises(linkdyn.RedundantConstraintsError, match='redundant="allow"'):
        linkdyn.simulate(model, 0.1)
    t = np.linspace(0.0, BRICARD_T_END, 501)
    r = linkdyn.simulate(model, BRICARD_T_END, rtol=1e-10, atol=1e-10, t_out=t,
                         redundant="allow")
    s = linkdyn.simulate(twin, BRICARD_T_END, rtol=1e-10, atol=1e-10, t_out=t)
    # The dependent row is switched off at the start (linkdyn.solve.redundant): the run is
    # exact, and explicit, like the twin's. Measured: 139 steps against 138, P3 within
    # 4.8e-11 and 3.9e-11 m of a 1e-13 run of the twin; with the regularisation this
    # replaced, 2,015 steps and 7.9e-8 m.
    assert len(r.stats["redundant_rows"]) == 1
    assert r.stats["steps"] < 2 * s.stats["steps"]
    assert np.abs(r.marker("P3") - s.marker("P3")).max() < 1e-8
    assert np.ptp(r.marker("P3")[:, 0]) > 0.5            # it does move, far
    # energy (-29.43 J at the start) varies by 2.4e-10 J in the twin and 2.0e-10 J as
    # posed (5.0e-7 J with the regularisation)
    assert np.ptp(s.energy) < 1e-8 and np.ptp(r.energy) < 1e-8


def test_bricard_equilibrium_and_mode_with_redundant_allow_match_its_twin():
    # The static equilibrium of A04 under its gravity and the one mode about it, found with
    # the redundant row in (least-norm multipliers, minimum-norm Newton steps) and without
    # it (the twin): the same configuration, stiffness and frequency. Measured: P3 at
    # (0, -sqrt(3)/2, -1/2) m, stiffness eigenvalue 0.2942237, 1.2412987 rad/s, both ways.
    from linkdyn.models.spatial import bricard

    model, twin = bricard(), bricard(redundant_free=True)
    with pytest.raises(linkdyn.RedundantConstraintsError, match='redundant="allow"'):
        linkdyn.equilibrium(model)
    # a guess from the swing's middle (the start is the top of the swing)
    r = linkdyn.simulate(twin, 1.25, rtol=1e-8, atol=1e-8, t_out="final")
    eq = linkdyn.equilibrium(model, q=r.q[-1], redundant="allow")
    ref = linkdyn.equilibrium(twin, q=r.q[-1])
    assert eq.stable and ref.stable
    np.testing.assert_allclose(model.marker_positions(eq.q)[0],
                               [0.0, -math.sqrt(3.0) / 2.0, -0.5], atol=1e-9)
    np.testing.assert_allclose(model.marker_positions(eq.q), twin.marker_positions(ref.q),
                               atol=1e-9)
    np.testing.assert_allclose(eq.stiffness_eigenvalues, ref.stiffness_eigenvalues,
                               rtol=1e-8)
    w, w_ref = (linkdyn.modes(m, state=e).frequencies for m, e in ((model, eq), (twin, ref)))
    assert len(w) == 1 and w[0] == pytest.approx(w_ref[0], rel=1e-8)
    # about the pair (q, v) the multipliers come from the index-1 equations, least-norm
    assert linkdyn.modes(model, state=(eq.q, np.zeros(model.nq)), redundant="allow"
                         ).frequencies[0] == pytest.approx(w_ref[0], rel=1e-8)


def _four_bar_in_the_plane(spatial: bool):
    """A four-bar swinging freely under gravity in the xy plane: crank O-A and rocker C-B
    on revolute joints (about z in space), coupler A-B with an off-axis point P. In space
    the coupler hangs on spherical joints (an RSSR linkage: with four parallel revolute
    joints it would be overconstrained), so it may spin about its own axis A-B; its inertia
    is symmetric about that axis and every force on it acts on the axis, so that spin stays
    zero and the motion is the planar linkage's."""
    crank, coupler, rocker, base, theta = 0.1, 0.35, 0.3, 0.4, 1.0
    ax, ay = crank * math.cos(theta), crank * math.sin(theta)
    dx, dy = base - ax, -ay
    d = math.hypot(dx, dy)
    a = (coupler**2 - rocker**2 + d**2) / (2 * d)
    h = math.sqrt(coupler**2 - a**2)
    bx, by = ax + a * dx / d - h * dy / d, ay + a * dy / d + h * dx / d
    links = {"crank": (crank, 0.2, 0.2 * crank**2 / 12, theta, (ax / 2, ay / 2)),
             "coupler": (coupler, 0.7, 0.008, math.atan2(by - ay, bx - ax),
                         ((ax + bx) / 2, (ay + by) / 2)),
             "rocker": (rocker, 0.25, 0.003, math.atan2(by, bx - base),
                        ((base + bx) / 2, by / 2))}
    if not spatial:
        b = linkdyn.ModelBuilder("fourbar", gravity=(0.0, -9.81))
        b.add_ground_point("O", (0.0, 0.0))
        b.add_ground_point("C", (base, 0.0))
    else:
        b = SpatialModelBuilder("rssr", gravity=(0.0, -9.81, 0.0))
        b.add_ground_point("O", (0.0, 0.0, 0.0))
        b.add_ground_point("C", (base, 0.0, 0.0))
    for name, (length, mass, inertia, angle, centre) in links.items():
        points = {"a": (-length / 2, 0.0), "b": (length / 2, 0.0)}
        if name == "coupler":
            points["P"] = (0.05, 0.08)
        if not spatial:
            b.add_body(name, mass=mass, inertia=inertia, points=points, position=centre,
                       angle=angle)
            continue
        c, s = math.cos(angle), math.sin(angle)
        # body x along the link; about it a tenth of the in-plane moment
        b.add_body(name, mass=mass, inertia=(0.1 * inertia, inertia, inertia),
                   points={k: (*p, 0.0) for k, p in points.items()},
                   position=(*centre, 0.0),
                   orientation=[[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    pin = (lambda *a: b.add_revolute(*a, axis=(0.0, 0.0, 1.0))) if spatial else b.add_revolute
    ball = b.add_spherical if spatial else b.add_revolute
    pin("O_crank", "crank.a", "ground.O")
    ball("A", "crank.b", "coupler.a")
    ball("B", "coupler.b", "rocker.b")
    pin("C_rocker", "rocker.a", "ground.C")
    b.add_marker("P", "coupler.P")
    return b.build()


@pytest.mark.parametrize("tol", [1e-8, 1e-11])
def test_a_four_bar_built_in_space_moves_as_the_planar_one(tol):
    """The spatial core against the planar one (an independent formulation: natural
    coordinates with principal axes against planar Cartesian ones) on a closed loop: the
    coupler point's path over 2 s of free swinging agrees within the tolerance (measured
    9e-11 m at 1e-8 and 7e-12 m at 1e-10, the point sweeping 0.17 m), and the motion stays
    in its plane with the coupler not spinning."""
    t = np.linspace(0.0, 2.0, 401)
    flat = linkdyn.simulate(_four_bar_in_the_plane(False), 2.0, rtol=tol, atol=tol, t_out=t)
    space = linkdyn.simulate(_four_bar_in_the_plane(True), 2.0, rtol=tol, atol=tol, t_out=t)
    P, Q = flat.marker("P"), space.marker("P")
    assert np.ptp(P[:, 0]) > 0.1
    assert np.abs(Q[:, :2] - P).max() < tol
    assert np.abs(Q[:, 2]).max() < 1e-12
    assert np.abs(space.body_angular_velocity("coupler")[:, :2]).max() < 1e-9
    np.testing.assert_allclose(space.energy - space.energy[0], flat.energy - flat.energy[0],
                               rtol=0, atol=10 * tol)


def test_a_planar_slide_translates_in_its_plane_without_turning(tmp_path):
    """add_planar_slide: a tilted box slides under gravity on a plane of the ground through
    a point, normal (1, 1, 0)/sqrt(2): it falls along the plane's steepest line with g (the
    plane holds gravity's normal part), keeps its orientation to round-off, and its rows
    match finite differences; the model file keeps the joint."""
    b = SpatialModelBuilder("slide", gravity=(0.0, 0.0, -9.81))
    R = Rotation.from_euler("xyz", [0.3, -0.2, 0.5]).as_matrix()
    b.add_body("box", mass=2.0, inertia=(0.2, 0.25, 0.3), points={"p": (0.1, 0.0, 0.0)},
               position=(0.0, 0.0, 1.0), orientation=R, velocity=(0.3, -0.3, 0.2),
               angular_velocity=(0.0, 0.0, 0.0))
    b.add_ground_point("g", tuple(R @ (0.1, 0.0, 0.0) + (0.0, 0.0, 1.0)))
    b.add_planar_slide("slide", "box.p", "ground.g", normal=(1.0, 1.0, 0.0))
    model = b.build()
    assert model.nc == 6 + 4
    rng = np.random.default_rng(3)
    q = model.q0 + 1e-3 * rng.standard_normal(model.nq)
    assert_rows_match_differences(model, q, rng.standard_normal(model.nq),
                                  rng.standard_normal(model.nc))
    t = np.linspace(0.0, 1.0, 11)
    r = linkdyn.simulate(model, 1.0, t_out=t, rtol=1e-10, atol=1e-10)
    assert np.abs(r.body_rotation("box") - R).max() < 1e-12
    expected = np.array([0.0, 0.0, 1.0]) + np.outer(t, (0.3, -0.3, 0.2)) - \
        0.5 * 9.81 * np.outer(t ** 2, (0.0, 0.0, 1.0))
    assert np.abs(r.body_position("box") - expected).max() < 1e-9
    path = tmp_path / "slide.json"
    path.write_text(json.dumps(linkdyn.elements.spatial.to_dict(model.description)))
    joint = linkdyn.load_model(path).description.joints[0]
    assert joint.kind == "planar_slide" and joint.first == ("box", "p")
    np.testing.assert_allclose(joint.axis_first, model.description.joints[0].axis_first,
                               atol=1e-12)
