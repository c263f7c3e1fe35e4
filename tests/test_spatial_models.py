"""The built-in spatial models of linkdyn.models.spatial with forces, motors and drivers:
each against an independent solution or an invariant (the heavy top and Bricard's linkage
are in test_spatial.py, the flexible arm in test_spatial_forces.py)."""

import numpy as np
import pytest
from scipy.integrate import cumulative_simpson

import linkdyn
from linkdyn.models import spatial as S


def test_spatial_double_pendulum_drifts_in_energy_in_proportion_to_the_tolerance():
    model = S.spatial_double_pendulum()
    drift = {}
    for tol in (1e-6, 1e-8, 1e-10):
        r = linkdyn.simulate(model, 10.0, rtol=tol, atol=tol)
        drift[tol] = np.ptp(r.energy)
        assert np.ptp(r.marker("tip")[:, 1]) > 0.3             # it swings out of any plane
    for tol, d in drift.items():
        assert d < 30 * tol
    assert drift[1e-10] < 1e-2 * drift[1e-6]


def test_driven_spatial_slider_crank_follows_its_closed_form_and_its_power():
    """The slider's position from |P - S|^2 = rod^2, and the driver's work: energy(t) -
    energy(0) = speed * integral of the driving torque (the only force that works)."""
    d = S.SLIDER_CRANK
    r = linkdyn.simulate(S.spatial_slider_crank(), 1.0, rtol=1e-10, atol=1e-10, dt_out=0.001)
    along = r.marker("S")[:, 1] - d["slide_point"][1]
    assert np.ptp(along) > 0.15
    assert np.abs(along - S.slider_crank_position(d["speed"] * r.t)).max() < 1e-12
    assert np.abs(r.marker("S")[:, [0, 2]] - np.array(d["slide_point"])[[0, 2]]).max() < 1e-12
    work = d["speed"] * cumulative_simpson(r.driver_effort("drive"), x=r.t, initial=0.0)
    assert np.ptp(r.energy) > 0.1
    assert np.abs(r.energy - r.energy[0] - work).max() < 1e-7


def test_free_spatial_slider_crank_balances_the_motor_work():
    for tol, bound in ((1e-7, 1e-3), (1e-9, 1e-5)):
        r = linkdyn.simulate(S.spatial_slider_crank(driven=False), 2.0, rtol=tol, atol=tol)
        assert np.ptp(r.energy) > 100.0
        assert np.abs(r.energy - r.energy[0] - r.work).max() < bound
    assert r.element_work("motor")[-1] == pytest.approx(2.0 * r.element_coordinate("motor")[-1])


def test_driven_five_ss_platform_moves_as_its_kinematics():
    """The platform with masses, driven by its actuator, against the kinematic analysis of
    the point-line-plane linkage (a different compile path and solver)."""
    t = np.linspace(0.0, 1.5, 76)
    r = linkdyn.simulate(S.five_ss_dynamic(), 1.5, rtol=1e-10, atol=1e-10, t_out=t)
    # the kinematic linkage lengthens its actuator at 1 m/s: the same stroke at t'
    k = linkdyn.kinematics(linkdyn.load_model("five_ss"), 0.25 * (1.0 - np.cos(2.0 * t)))
    assert np.ptp(r.marker("J11")[:, 1]) > 0.3
    assert np.abs(r.marker("J11") - k.marker("J11")).max() < 1e-10
    # Newton's law for the platform: m a = m g + the rods' and the actuator's forces, each
    # its effort along its direction from its ground joint to the platform
    model = r.model
    total = np.zeros((len(t), 3))
    for name, (ground, top) in [(f"L{k}", (f"J{k}", f"J{k + 5}")) for k in range(1, 6)] + \
            [("actuator", ("J1", "J7"))]:
        p = model.description.ground[[g[0] for g in model.description.ground].index(ground)][1]
        top_at = r.body_position("platform") + np.einsum(
            "nij,j->ni", r.body_rotation("platform"),
            dict(model.description.bodies[0].points)[top])
        n = top_at - np.array(p)
        n /= np.linalg.norm(n, axis=1)[:, None]
        effort = r.driver_effort(name)
        assert np.abs(effort).max() > 10.0
        total += effort[:, None] * n
    m = model.description.bodies[0].mass
    newton = m * r.body_acceleration("platform") - m * np.array([0.0, 0.0, -9.81]) - total
    assert np.abs(newton).max() < 1e-9 * m * 9.81


def test_free_five_ss_platform_on_its_spring_damper():
    gaps = []
    for tol in (1e-6, 1e-8, 1e-10):
        r = linkdyn.simulate(S.five_ss_dynamic(driven=False), 2.0, rtol=tol, atol=tol)
        assert np.ptp(r.marker("J11")[:, 1]) > 0.01            # it sags and rings
        gaps.append(np.abs(r.energy - r.energy[0] - r.work).max())
    assert gaps[0] < 3e-4 and gaps[2] < 3e-7 and gaps[2] < 1e-2 * gaps[0]
    assert r.work[-1] < 0                                      # the damper dissipates


def test_the_new_spatial_models_are_built_ins():
    names = linkdyn.builtin_names()
    for name in ("flexible_arm", "spatial_double_pendulum", "spatial_slider_crank",
                 "five_ss_dynamic", "flyball_governor"):
        assert name in names
        assert isinstance(linkdyn.load_model(name), linkdyn.SpatialModel)


def flyball_invariants(r):
    """The vertical angular momentum of the whole governor (gravity and the joints exert no
    torque about the shaft's axis), and the energy against the dampers' work."""
    model = r.model
    h = 0.0
    for spec in model.description.bodies:
        R, w = r.body_rotation(spec.name), r.body_angular_velocity(spec.name)
        h = h + spec.mass * np.cross(r.body_position(spec.name),
                                     r.body_velocity(spec.name))[:, 2]
        h = h + np.einsum("nij,jk,nlk,nl->ni", R, spec.inertia, R, w)[:, 2]
    work = r.element_work("spring1") + r.element_work("spring2")
    return h, r.energy - r.energy[0] - work


def test_flyball_governor_a05_keeps_its_invariants_and_its_symmetry():
    """IFToMM A05 over its 10 s (the BDF: the spring-dampers are stiff): the vertical angular
    momentum is constant and the energy balances the dampers' work, both closer as the
    tolerance falls; the two rods mirror each other; the start is the benchmark's (s = 0.5 m,
    springs at rest length, 2 pi rad/s) and the balls fly out."""
    d = S.FLYBALL
    model = S.flyball_governor()
    gaps = {}
    for tol in (1e-7, 1e-10):
        r = linkdyn.simulate(model, S.FLYBALL_T_END, rtol=tol, atol=tol, dt_out=0.01,
                             method="bdf")
        h, balance = flyball_invariants(r)
        gaps[tol] = (np.ptp(h) / abs(h[0]), np.abs(balance).max() / r.energy[0])
        b1, b2 = r.marker("ball1"), r.marker("ball2")
        assert np.abs(b1[:, 0] + b2[:, 0]).max() < 1e-12
        assert np.abs(b1[:, 2] - b2[:, 2]).max() < 1e-12
    # measured 1.1e-6 and 4.3e-10 (momentum), 2.1e-6 and 6.5e-10 (energy), relative
    assert gaps[1e-10][0] < 1e-8 and gaps[1e-10][1] < 1e-8
    assert gaps[1e-10][0] < 1e-2 * gaps[1e-7][0] and gaps[1e-10][1] < 1e-2 * gaps[1e-7][1]
    s = r.marker("S")[:, 2]
    assert abs(s[0] - d["s0"]) < 1e-12 and s.max() > 0.7          # the slider rises
    assert abs(r.body_angular_velocity("shaft")[0, 2] - d["omega"]) < 1e-12
    assert r.body_angular_velocity("shaft")[-1, 2] < d["omega"]  # it slows as they fly out
    spring = np.linalg.norm(r.marker("ball1")[0] - np.array([d["hinge"], 0.0, 1.0]))
    assert abs(spring - d["length"]) < 1e-12
