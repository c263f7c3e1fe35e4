"""Prismatic joints and drivers (generic quadratic rows): kernels against finite differences,
closed-form kinematics, motor torques in dynamics, files and bad input."""

import math

import numpy as np
import pytest
import scipy.sparse.linalg as spla

import linkdyn
from linkdyn import ModelError, laws
from conftest import central_difference, random_state

R, L, E = 0.1, 0.3, 0.02      # slider-crank: crank, rod, slider offset (m)
W = 2 * math.pi               # crank speed (rad/s)


def slider_crank(theta0=0.4):
    b = linkdyn.ModelBuilder("slider_crank")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("S", (0.0, E))
    ax, ay = R * math.cos(theta0), R * math.sin(theta0)
    xb = ax + math.sqrt(L**2 - (ay - E) ** 2)
    b.add_bar("crank", length=R, density=1.0, position=(ax / 2, ay / 2), angle=theta0)
    b.add_bar("rod", length=L, density=1.0, position=((ax + xb) / 2, (ay + E) / 2),
              angle=math.atan2(E - ay, xb - ax) + 0.01)
    b.add_body("slider", mass=0.5, inertia=0.01, position=(xb + 0.003, E))
    b.add_revolute("pivot", "ground.O", "crank.a")
    b.add_revolute("pin", "crank.b", "rod.a")
    b.add_revolute("wrist", "rod.b", "slider.cm")
    b.add_prismatic("guide", "ground.S", "slider.cm", axis=0.0, angle=0.0)
    b.add_angle_driver("motor", "pivot", laws.linear(theta0, W))
    b.add_marker("B", "slider.cm")
    return b.build()


def sink():
    """Every new element once: body-body prismatic at an angle, slide, coordinate and
    body-body angle drivers with harmonic and polynomial laws."""
    b = linkdyn.ModelBuilder("sink")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("arm", length=0.5, density=1.0, position=(0.25, 0.0))
    b.add_body("block", mass=1.0, inertia=0.02, points={"p": (0.05, -0.02)},
               position=(0.4, 0.1), angle=0.2)
    b.add_bar("link", length=0.3, density=2.0, position=(0.6, 0.2), angle=1.0)
    b.add_revolute("base", "arm.a", "ground.O")
    b.add_prismatic("slide", "arm.cm", "block.p", axis=0.3)
    b.add_revolute("hinge", "block.cm", "link.a")
    b.add_slide_driver("ram", "slide", laws.harmonic(0.05, -0.08, math.pi, math.pi / 4))
    b.add_angle_driver("bend", "hinge", laws.polynomial(0.8, 0.3, -0.2))
    b.add_coordinate_driver("lift", "link.b", "y", laws.harmonic(0.04, -0.1, math.pi / 4,
                                                                   -math.pi / 3))
    return b.build()


@pytest.fixture(params=["slider_crank", "sink"])
def model(request):
    return slider_crank() if request.param == "slider_crank" else sink()


def test_jacobian_hessian_and_phi_t_by_differences(model):
    for seed in range(3):
        q, _ = random_state(model, seed)
        t = 0.37 + seed
        np.testing.assert_allclose(model.phi_q(q, t).toarray(),
                                   central_difference(lambda x: model.phi(x, t), q), atol=1e-8)
        lam = np.random.default_rng(seed).standard_normal(model.nc)
        np.testing.assert_allclose(model.constraint_hessian(q, lam, t).toarray(),
                                   central_difference(lambda x: model.phi_q(x, t).T @ lam, q),
                                   atol=1e-8)
        h = 1e-6
        np.testing.assert_allclose(model.phi_t(q, t),
                                   (model.phi(q, t + h) - model.phi(q, t - h)) / (2 * h),
                                   atol=1e-8)


def test_gamma_by_differences_along_the_motion(model):
    # gamma = -d/ds [Phi_q(q + s v, t + s) v + Phi_t(q + s v, t + s)] at s = 0.
    for seed in range(3):
        q, v = random_state(model, seed)
        t, h = 0.81, 1e-6

        def phid(s):
            return model.phi_q(q + s * v, t + s) @ v + model.phi_t(q + s * v, t + s)

        np.testing.assert_allclose(model.gamma(q, v, t), -(phid(h) - phid(-h)) / (2 * h),
                                   atol=1e-7)


def test_laws_derivatives():
    for law in (laws.constant(2.0), laws.linear(1.0, -3.0), laws.polynomial(0.5, 1.0, -2.0, 0.3),
                laws.harmonic(0.05, -0.08, math.pi, math.pi / 4)):
        t, h = 0.7, 1e-5
        f, f1, f2 = law(t)
        assert f1 == pytest.approx((law(t + h)[0] - law(t - h)[0]) / (2 * h), abs=1e-8)
        assert f2 == pytest.approx((law(t + h)[1] - law(t - h)[1]) / (2 * h), abs=1e-7)
    assert laws.harmonic(0.05, -0.08, math.pi, math.pi / 4)(0.0)[0] == pytest.approx(
        0.05 - 0.08 * math.sin(math.pi / 4))


def closed_form(t, theta0=0.4):
    th = theta0 + W * t
    s = R * math.sin(th) - E
    D = math.sqrt(L**2 - s**2)
    x = R * math.cos(th) + D
    dx = -R * math.sin(th) - s * R * math.cos(th) / D
    ddx = (-R * math.cos(th) - (R**2 * math.cos(th) ** 2 - s * R * math.sin(th)) / D
           - s**2 * R**2 * math.cos(th) ** 2 / D**3)
    return x, dx * W, ddx * W**2


def test_slider_crank_against_closed_form():
    model = slider_crank()
    assert model.nq == model.nc == 12   # fully driven
    q = model.q0
    i = model.marker_index("B")
    for t in np.linspace(0.0, 1.0, 23):
        s = linkdyn.consistent_state(model, q=q, t=t, hold=())
        q = s.q
        acc = spla.spsolve(model.phi_q(s.q, t).tocsc(), model.gamma(s.q, s.v, t))
        x, xd, xdd = closed_form(t)
        np.testing.assert_allclose(model.marker_positions(s.q)[i], [x, E], atol=1e-12)
        np.testing.assert_allclose(model.marker_velocities(s.v)[i], [xd, 0.0], atol=1e-11)
        np.testing.assert_allclose(model.marker_velocities(acc)[i], [xdd, 0.0], atol=1e-9)
        # The crank angle follows the law without wrapping.
        assert math.atan2(s.q[3], s.q[2]) == pytest.approx(
            math.remainder(0.4 + W * t, 2 * math.pi), abs=1e-12)


def test_driven_pendulum_motor_torque():
    # A bar turned about its end at constant speed under gravity: the motor supplies
    # m g (L/2) cos(phi) (no angular acceleration), phi the bar's angle.
    m, length, w, phi0 = 2.0, 0.8, 3.0, -0.3
    b = linkdyn.ModelBuilder("motor")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=length, mass=m, position=(0.4 * math.cos(phi0), 0.4 * math.sin(phi0)),
              angle=phi0)
    b.add_revolute("pin", "ground.O", "rod.a")
    b.add_angle_driver("motor", "pin", laws.linear(phi0, w))
    model = b.build()
    errors = []
    for tol in (1e-8, 1e-10, 1e-12):
        r = linkdyn.simulate(model, 2.0, rtol=tol, atol=tol, dt_out=0.05)
        phi = phi0 + w * r.t
        errors.append(np.abs(r.driver_effort("motor") - m * 9.81 * length / 2 * np.cos(phi)).max())
        np.testing.assert_allclose(np.arctan2(r.q[:, 3], r.q[:, 2]),
                                   np.remainder(phi + np.pi, 2 * np.pi) - np.pi, atol=1e-8)
    # Multipliers are outside the error test; output rows take them from the index-1
    # equations at the output state, so they are as accurate as (q, v), down to round-off.
    scale = m * 9.81 * length / 2
    assert errors[0] <= 1e-8 * scale
    floor = 100 * np.finfo(float).eps * scale
    assert errors[1] <= max(errors[0] / 10, floor)
    assert errors[2] <= max(errors[1] / 10, floor)


def test_files_round_trip_every_element(tmp_path):
    for model in (slider_crank(), sink()):
        path = tmp_path / f"{model.name}.json"
        model.save(path)
        assert linkdyn.load_model(path) == model


def test_bad_elements():
    b = linkdyn.ModelBuilder("bad")
    b.add_ground_point("O", (0, 0))
    b.add_bar("a", length=1.0, density=1.0)
    b.add_bar("c", length=1.0, density=1.0)
    b.add_revolute("r", "a.a", "ground.O")
    b.add_prismatic("p", "a.b", "c.a")
    with pytest.raises(ModelError, match="unknown joint 'x'"):
        b.add_angle_driver("d1", "x", laws.constant(0.0))
    with pytest.raises(ModelError, match="joint 'p' is not a revolute joint"):
        b.add_angle_driver("d1", "p", laws.constant(0.0))
    with pytest.raises(ModelError, match="joint 'r' is not a prismatic joint"):
        b.add_slide_driver("d1", "r", laws.constant(0.0))
    with pytest.raises(ModelError, match="axis must be 'x' or 'y'"):
        b.add_coordinate_driver("d1", "c.b", "z", laws.constant(0.0))
    with pytest.raises(ModelError, match="drive a body point"):
        b.add_coordinate_driver("d1", "ground.O", "x", laws.constant(0.0))
    with pytest.raises(ModelError, match="'a' to itself"):
        b.add_prismatic("p2", "a.a", "a.b")
    with pytest.raises(ModelError, match="axis must be finite"):
        b.add_prismatic("p2", "a.a", "c.b", axis=math.inf)
    with pytest.raises(ModelError, match="law 'harmonic' takes a, b, omega, phase; missing: b"):
        b.add_angle_driver("d1", "r", {"law": "harmonic", "a": 1.0, "omega": 2.0})
    with pytest.raises(ModelError, match="'law' one of"):
        b.add_angle_driver("d1", "r", {"law": "cubic"})
    with pytest.raises(ModelError, match="coefficient 1 must be finite"):
        laws.polynomial(1.0, math.nan)
    b.add_angle_driver("d1", "r", {"law": "linear", "value": 0.0, "rate": 1.0})
    with pytest.raises(ModelError, match="already used by a driver"):
        b.add_marker("d1", "a.b")
