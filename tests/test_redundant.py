"""Redundant constraints (redundant="allow"): a parallelogram with a third rocker moves as
its one angle says, its reactions add up to the exact resultant, and constraints that
contradict each other are still refused with the rows named."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import linkdyn
from linkdyn.description import ModelBuilder
from linkdyn.errors import RedundantConstraintsError

G = 9.81
TILT = 0.5  # initial rocker angle from the vertical (rad); the linkage swings between +-TILT


def parallelogram(rockers=3, tilt=TILT):
    """``rockers`` equal rockers (1 m, 1 kg) pinned to the ground 1 m apart and to one
    coupler (3 kg, 1 kg m^2, its pins 1 m apart), released at rest: with three rockers one
    of them is redundant."""
    b = ModelBuilder(f"parallelogram{rockers}")
    u = (math.sin(tilt), math.cos(tilt))
    for i in range(rockers):
        b.add_ground_point(f"O{i}", (float(i), 0.0))
        b.add_bar(f"R{i}", length=1.0, mass=1.0, position=(i + u[0] / 2, u[1] / 2), u=u)
        b.add_revolute(f"G{i}", f"R{i}.a", f"ground.O{i}")
    b.add_body("C", mass=3.0, inertia=1.0,
               points={f"p{i}": (i - 1.0, 0.0) for i in range(3)},
               position=(1.0 + u[0], u[1]))
    for i in range(rockers):
        b.add_revolute(f"T{i}", f"C.p{i}", f"R{i}.b")
    b.add_marker("B0", "R0.b")
    return b.build()


def exact_angle(rockers, t):
    """The rockers' angle from +x and its rates: J theta'' = -K cos(theta), with J and K of
    the rockers (rotating about their pins) and the translating coupler."""
    J = rockers / 3.0 + 3.0
    K = G * (rockers * 0.5 + 3.0)

    def rhs(_, y):
        return [y[1], -K / J * math.cos(y[0])]

    sol = solve_ivp(rhs, (0.0, t[-1]), [math.pi / 2 - TILT, 0.0], method="DOP853",
                    rtol=1e-13, atol=1e-13, t_eval=t)
    th, om = sol.y
    return th, om, -K / J * np.cos(th)


def test_redundant_rocker_is_refused_by_default():
    model = parallelogram(3)
    with pytest.raises(RedundantConstraintsError) as info:
        linkdyn.simulate(model, 0.1)
    assert "G0.y" in info.value.constraints and "G2.y" in info.value.constraints
    with pytest.raises(ValueError, match="redundant must be"):
        linkdyn.simulate(model, 0.1, redundant="yes")


def test_consistent_state_allows_redundant_rows():
    model = parallelogram(3)
    q = model.q0.copy()
    q[0] += 1e-3  # a disturbed guess: the projection must still land on the constraints
    state = linkdyn.consistent_state(model, q=q, redundant="allow")
    assert state.phi_norm < 1e-12 and state.velocity_norm < 1e-12


@pytest.mark.parametrize("rockers", [2, 3])
def test_parallelogram_follows_its_one_angle(rockers):
    model = parallelogram(rockers)
    errors = []
    for tol in (1e-8, 1e-10):
        r = linkdyn.simulate(model, 3.0, rtol=tol, atol=tol, dt_out=0.01, redundant="allow")
        th, _, _ = exact_angle(rockers, r.t)
        b0 = r.marker("B0")
        errors.append(np.max(np.hypot(b0[:, 0] - np.cos(th), b0[:, 1] - np.sin(th))))
    assert errors[0] < 1e-4 and errors[1] < 1e-6
    assert errors[1] < errors[0] / 10


def test_reactions_sum_to_the_resultant():
    """Newton for the whole linkage: the ground reactions add up to the rate of momentum
    minus the weight, however the redundant rockers share them."""
    model = parallelogram(3)
    r = linkdyn.simulate(model, 2.0, rtol=1e-10, atol=1e-10, dt_out=0.01, redundant="allow")
    th, om, al = exact_angle(3, r.t)
    # Mass moment: rockers 3 x 1 kg x 0.5 m, coupler 3 kg x 1 m, all turning with theta.
    moment = 3 * 0.5 + 3.0
    accel = moment * np.column_stack([-np.sin(th) * al - np.cos(th) * om**2,
                                      np.cos(th) * al - np.sin(th) * om**2])
    total = sum(r.joint_force(f"G{i}") for i in range(3))
    expected = accel + np.array([0.0, 6.0 * G])
    assert np.max(np.abs(total - expected)) < 1e-5 * np.max(np.abs(expected))
    # The outer rockers are alike: their reactions are equal (the least-norm share), to the
    # accuracy the regularisation leaves (the position error, 1e-11 m here, divided by it).
    g0, g2 = r.joint_force("G0"), r.joint_force("G2")
    assert np.max(np.abs(g0 - g2)) < 1e-4 * np.max(np.abs(g0))


def test_conflicting_pins_are_refused_with_their_rows():
    """A bar pinned at one end to two ground points 1 cm apart: the rows are redundant and
    contradict each other."""
    b = ModelBuilder("double_pin")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("P", (0.01, 0.0))
    b.add_bar("B", length=1.0, mass=1.0, position=(0.5, 0.0), u=(1.0, 0.0))
    b.add_revolute("J1", "B.a", "ground.O")
    b.add_revolute("J2", "B.a", "ground.P")
    model = b.build()
    with pytest.raises(RedundantConstraintsError, match="conflict") as info:
        linkdyn.consistent_state(model, redundant="allow")
    assert {"J1.x", "J2.x"} <= set(info.value.constraints)
    with pytest.raises(RedundantConstraintsError, match="conflict"):
        linkdyn.simulate(model, 0.1, redundant="allow")


def driven_parallelogram(third_length=1.0):
    """The three-rocker parallelogram with rocker 0 turned at 1 rad/s from the vertical.
    A third rocker of another length is pinned that much lower: it fits the vertical start,
    but is no longer parallel once the crank turns."""
    b = ModelBuilder("driven3")
    for i in range(3):
        length = third_length if i == 2 else 1.0
        base = 1.0 - length
        b.add_ground_point(f"O{i}", (float(i), base))
        b.add_bar(f"R{i}", length=length, mass=1.0, position=(float(i), base + length / 2),
                  u=(0.0, 1.0))
        b.add_revolute(f"G{i}", f"R{i}.a", f"ground.O{i}")
    b.add_body("C", mass=3.0, inertia=1.0, points={f"p{i}": (i - 1.0, 0.0) for i in range(3)},
               position=(1.0, 1.0))
    for i in range(3):
        b.add_revolute(f"T{i}", f"C.p{i}", f"R{i}.b")
    # G0 pins R0.a (first) to the ground (second): relative angle = -(rocker angle).
    b.add_angle_driver("crank", "G0", linkdyn.laws.linear(-math.pi / 2, -1.0))
    b.add_marker("B0", "R0.b")
    return b.build()


def test_kinematics_of_a_redundant_linkage():
    model = driven_parallelogram()
    t = np.linspace(0.0, 1.0, 11)
    with pytest.raises(linkdyn.ModelError, match="redundant='allow'"):
        linkdyn.kinematics(model, t)
    k = linkdyn.kinematics(model, t, redundant="allow")
    theta = math.pi / 2 + t
    b0 = k.marker("B0")
    assert np.allclose(b0, np.column_stack([np.cos(theta), np.sin(theta)]), atol=1e-12)
    assert np.allclose(k.marker_velocity("B0"),
                       np.column_stack([-np.sin(theta), np.cos(theta)]), atol=1e-12)
    assert np.allclose(k.marker_acceleration("B0"),
                       np.column_stack([-np.cos(theta), -np.sin(theta)]), atol=1e-10)
    assert np.allclose(k.body_angle("R2"), theta) and np.all(k.rcond > 1e-3)


def test_kinematics_refuses_contradicting_redundant_rows():
    """A third rocker 10 cm longer (and lower): the linkage assembles at the start, but the
    crank cannot turn it."""
    model = driven_parallelogram(third_length=1.1)
    with pytest.raises(linkdyn.KinematicsError, match="no configuration at t = 0.1 s") as info:
        linkdyn.kinematics(model, np.linspace(0.0, 1.0, 11), redundant="allow")
    assert len(info.value.result.t) == 1


@pytest.mark.parametrize("offset", [1e-4, 1e-3])
def test_a_parallelogram_made_rigid_assembles_in_its_one_position(offset):
    """The middle rocker's pivot moved ``offset`` along x: the rows are no longer redundant
    and the linkage holds in one position only, where (sin(theta) - d)^2 + cos(theta)^2 = 1,
    sin(theta) = d / 2 (theta: the rockers' tilt from the vertical). The regularised
    iteration that the redundant start calls for creeps there (at the rate 1e-10 /
    sigma^2, sigma of the order of d); plain Newton steps after it finish the assembly.
    Before, a pivot 1e-4 off raised a conflict "off by 0" that named no constraint."""
    from linkdyn.design.sensitivity import ParameterFamily

    family = ParameterFamily(parallelogram(), ["ground.O1.x"])
    model = family.model(family.values + offset)
    s = linkdyn.consistent_state(model, redundant="allow")
    assert np.abs(model.phi(s.q, 0.0)).max() < 1e-13
    np.testing.assert_allclose(s.q[2], offset / 2, rtol=1e-9)     # R0's u_x = sin(theta)


def test_sensitivities_of_redundant_rows_are_refused_where_they_do_not_exist():
    """A parameter that enters an overconstrained linkage's rows (a pivot's position) locks
    it when it changes: the sensitivities are refused with the reason. A mass, which keeps
    the geometry, is differentiated: against central differences of whole runs."""
    from linkdyn.design.sensitivity import ParameterFamily

    with pytest.raises(linkdyn.ModelError, match="more constraint rows"):
        linkdyn.kinematic_sensitivities(driven_parallelogram(), ["ground.O1.x"],
                                        np.linspace(0.0, 1.0, 11), redundant="allow")
    with pytest.raises(linkdyn.ModelError, match="'ground.O1.x' enter the constraints"):
        linkdyn.simulation_sensitivities(parallelogram(), ["ground.O1.x"], 0.2,
                                         redundant="allow")
    opts = dict(rtol=1e-11, atol=1e-11, dt_out=0.05, redundant="allow")
    s = linkdyn.simulation_sensitivities(parallelogram(), ["bodies.C.mass"], 0.2, **opts)
    family = ParameterFamily(parallelogram(), ["bodies.C.mass"])
    runs = [linkdyn.simulate(family.model(family.values + h), 0.2, **opts)
            for h in (1e-3, -1e-3)]
    fd = (runs[0].q - runs[1].q) / 2e-3      # (2e-6 of the largest here)
    np.testing.assert_allclose(s.dq[:, :, 0], fd, rtol=0.0, atol=1e-4 * np.abs(fd).max())


def dense_jacobian(model, q, t):
    J = np.zeros((model.nc, model.nq))
    J[model.phiq_rowind, model.phiq_colind] = model.kernels.phi_q_values(q, float(t))
    return J


@pytest.mark.parametrize("name", ["parallelogram", "bricard"])
def test_output_multipliers_are_the_least_norm_share(name):
    """The dropped rows' multipliers are not left at zero in the output: every row's lam
    is orthogonal to the self-stresses null(Phi_q^T), which makes it the pseudo-inverse's
    (least-norm) lam of its constraint force."""
    import scipy.linalg

    model = parallelogram(3) if name == "parallelogram" else linkdyn.load_model("bricard")
    r = linkdyn.simulate(model, 1.0, rtol=1e-10, atol=1e-10, dt_out=0.05, redundant="allow")
    assert r.stats["redundant_rows"]
    for k in range(0, len(r.t), 4):
        J = dense_jacobian(model, r.q[k], r.t[k])
        lam = r.lam[k]
        scale = np.abs(lam).max()
        N = scipy.linalg.null_space(J.T, rcond=1e-9)
        assert N.shape[1] == len(r.stats["redundant_rows"])
        assert np.abs(N.T @ lam).max() < 1e-9 * scale
        least = np.linalg.lstsq(J.T, J.T @ lam, rcond=1e-9)[0]
        assert np.abs(lam - least).max() < 1e-9 * scale


def test_alike_redundant_rockers_share_the_load_alike():
    """Three equal rockers carry the translating coupler: the least-norm share gives each
    the same reaction (the equal split balances the coupler's moment as well), where
    switching the middle rocker's row off left that rocker unloaded along y."""
    model = parallelogram(3)
    r = linkdyn.simulate(model, 2.0, rtol=1e-10, atol=1e-10, dt_out=0.02, redundant="allow")
    g = [r.joint_force(f"G{i}") for i in range(3)]
    scale = np.abs(g[0]).max()
    assert np.abs(g[1] - g[0]).max() < 1e-8 * scale
    assert np.abs(g[2] - g[0]).max() < 1e-8 * scale
    t = [r.joint_force(f"T{i}") for i in range(3)]
    assert np.abs(t[1] - t[0]).max() < 1e-8 * np.abs(t[0]).max()
    recorded = linkdyn.simulate(model, 2.0, rtol=1e-10, atol=1e-10, dt_out=0.02,
                                redundant="allow", record=linkdyn.Record(joints=["G1"]))
    np.testing.assert_array_equal(recorded.joint_force("G1"), g[1])
