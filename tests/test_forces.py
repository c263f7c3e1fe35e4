"""Force elements (linkdyn.forces, csrc/ld_forces.c): exact derivatives, closed-form motions,
energy balance, controllers and the documented errors."""

import json
import math

import numpy as np
import pytest

import linkdyn
from linkdyn import laws
from linkdyn.errors import ControllerError, ForceElementError, ModelError, ModelFileError

from conftest import central_difference


def every_element():
    """A pendulum with a slider on it carrying one of every force element."""
    b = linkdyn.ModelBuilder("every", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("C", (1.0, 0.5))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.4, -0.3), angle=-0.6435, omega=2.0)
    b.add_body("slider", mass=0.5, inertia=0.01, points={"p": (0.05, 0.02)},
               position=(0.2, -0.15), angle=-0.3)
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_prismatic("slide", "rod.cm", "slider.cm", axis=0.0, angle=0.3435)
    b.add_spring_damper("spring", "ground.C", "rod.b", 10.0, 0.5, laws.harmonic(0.9, 0.1, 3.0))
    b.add_spring_damper("slider_spring", "rod.b", "slider.p", 40.0, 0.2, 0.5)
    b.add_torsional_spring_damper("torsion", "pin", 2.0, 0.05, 0.1)
    b.add_joint_damper("slide_damper", "slide", 0.3)
    b.add_motor("motor", "pin", laws.harmonic(0.0, 0.4, 2.0), rotor_inertia=1e-4,
                gear_ratio=10.0, rotor_mass=0.05)
    b.add_motor("linear_motor", "slide", 0.2)
    b.add_servo("servo", "slide", laws.linear(-0.1, 0.05), 30.0, 1.0)
    b.add_torque("torque", "slider", laws.polynomial(0.1, -0.2))
    b.add_force("push", "slider.p", 0.3, laws.tabulated([0, 1, 2, 3], [0, 1, 0, 2]),
                frame="body")
    b.add_force("wind", "rod.b", laws.linear(0.1, 0.2), -0.1)
    return b


@pytest.fixture(scope="module")
def model():
    return every_element().build()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_force_jacobians_match_central_differences(model, seed):
    rng = np.random.default_rng(seed)
    q = model.q0 + 0.05 * rng.standard_normal(model.nq)
    v = rng.standard_normal(model.nq)
    t = 0.37 + seed
    fq = model.force_q(q, v, t).toarray()
    fv = model.force_v(q, v, t).toarray()
    fq_fd = central_difference(lambda x: model.force(x, v, t), q)
    fv_fd = central_difference(lambda x: model.force(q, x, t), v)
    scale = 1.0 + np.abs(fq_fd).max()
    np.testing.assert_allclose(fq, fq_fd, atol=1e-7 * scale)
    np.testing.assert_allclose(fv, fv_fd, atol=1e-7 * scale)
    assert np.abs(fq).max() > 1.0 and np.abs(fv).max() > 0.1   # not trivially zero


def test_every_element_pattern_is_exact(model):
    # Every stored Q_q entry is structurally needed somewhere: no dense fallback.
    assert 0 < model.kernels.fq_nnz <= model.nq**2
    assert model.kernels.nz == 2 * 8 + 2   # 8 records (work, coordinate), 2 loads (work)


def oscillator(k=50.0, c=0.0, m=2.0, x0=1.2, free=1.0):
    b = linkdyn.ModelBuilder("oscillator", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("mass", mass=m, inertia=0.1, position=(x0, 0.0))
    b.add_prismatic("rail", "ground.O", "mass.cm")
    b.add_spring_damper("spring", "ground.O", "mass.cm", k, c, free)
    return b.build()


def test_spring_mass_period():
    k, m = 50.0, 2.0
    r = linkdyn.simulate(oscillator(k, 0.0, m), 3.0, rtol=1e-10, atol=1e-10)
    w = math.sqrt(k / m)
    np.testing.assert_allclose(r.q[:, 0], 1.0 + 0.2 * np.cos(w * r.t), atol=1e-7)
    np.testing.assert_allclose(r.element_coordinate("spring"), r.q[:, 0], atol=1e-12)
    # The spring's f is -k (L - L0): it pulls the mass back.
    np.testing.assert_allclose(r.element_force("spring"), -k * (r.q[:, 0] - 1.0), atol=1e-8)
    assert np.ptp(r.energy) < 1e-6 * r.energy.max()


def test_damped_oscillator_decay():
    k, c, m = 50.0, 1.5, 2.0
    r = linkdyn.simulate(oscillator(k, c, m), 4.0, rtol=1e-10, atol=1e-10)
    zeta = c / (2 * math.sqrt(k * m))
    wn = math.sqrt(k / m)
    wd = wn * math.sqrt(1 - zeta**2)
    x = 0.2 * np.exp(-zeta * wn * r.t) * (np.cos(wd * r.t) + zeta * wn / wd * np.sin(wd * r.t))
    np.testing.assert_allclose(r.q[:, 0] - 1.0, x, atol=1e-7)
    # Energy lost = damper work: both about 0.7 J here.
    loss = r.energy[0] - r.energy[-1]
    assert loss > 0.5
    assert abs(r.energy[-1] - r.energy[0] - r.work[-1]) < 1e-6 * loss
    np.testing.assert_allclose(r.element_work("spring"), r.work)


@pytest.mark.parametrize("rtol", [1e-8, 1e-11])
def test_energy_balance_with_every_element(model, rtol):
    r = linkdyn.simulate(model, 3.0, rtol=rtol, atol=rtol)
    balance = r.energy - r.energy[0] - r.work
    assert abs(r.work).max() > 0.1      # the elements do real work
    assert np.abs(balance).max() < 300 * rtol * (1 + np.abs(r.energy).max())
    total = sum(r.element_work(n) for n in model.force_names)
    np.testing.assert_allclose(total, r.work, atol=1e-12)


def spinning_bar(k, omega0):
    b = linkdyn.ModelBuilder("spin", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0), omega=omega0,
              velocity=(0.0, 0.5 * omega0))
    b.add_revolute("pin", "ground.O", "rod.a")   # relative angle = the rod's angle
    b.add_torsional_spring_damper("torsion", "pin", k, 0.0, 0.0)
    return b.build()


def test_torsional_spring_through_twenty_turns():
    # J theta'' = -k theta about the pin, J = m L^2 / 3: theta = omega0 / w sin(w t), an
    # amplitude of 25 turns; the spring must see the unwrapped angle.
    j, k = 1.0 / 3.0, 0.01
    w = math.sqrt(k / j)
    omega0 = 25 * 2 * math.pi * w
    t_end = math.pi / (2 * w)
    r = linkdyn.simulate(spinning_bar(k, omega0), t_end, rtol=1e-10, atol=1e-10)
    theta = r.element_coordinate("torsion")
    exact = omega0 / w * np.sin(w * r.t)
    assert theta[-1] > 20 * 2 * math.pi
    np.testing.assert_allclose(theta, exact, atol=1e-5 * exact.max())
    np.testing.assert_allclose(r.element_force("torsion"), -k * exact, atol=1e-5 * k * exact.max())
    np.testing.assert_allclose(r.energy, r.energy[0], rtol=1e-6)


def servo_bar(kp, kd, target):
    b = linkdyn.ModelBuilder("servo", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_servo("servo", "pin", target, kp, kd)
    return b.build()


def test_servo_tracks_a_ramp_with_the_closed_form_error():
    # J e'' + kd e' + kp e = J target'' = 0 for e = target - theta; e(0) = 0, e'(0) = rate.
    j, kp, kd, rate = 1.0 / 3.0, 40.0, 2.0, 0.5
    r = linkdyn.simulate(servo_bar(kp, kd, laws.linear(0.0, rate)), 3.0, rtol=1e-10, atol=1e-10)
    e = rate * r.t - r.element_coordinate("servo")
    zeta = kd / (2 * math.sqrt(kp * j))
    wn = math.sqrt(kp / j)
    wd = wn * math.sqrt(1 - zeta**2)
    np.testing.assert_allclose(e, rate / wd * np.exp(-zeta * wn * r.t) * np.sin(wd * r.t),
                               atol=1e-8)
    assert abs(e[-1]) < 1e-3


def test_motor_with_rotor_inertia_on_a_fixed_base():
    # Reflected inertia n^2 J_r adds to the bar's: theta = tau t^2 / (2 (J + n^2 J_r)).
    tau, jr, n = 0.3, 2e-4, 20.0
    b = linkdyn.ModelBuilder("motor", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_motor("motor", "pin", tau, rotor_inertia=jr, gear_ratio=n, rotor_mass=0.3)
    r = linkdyn.simulate(b.build(), 2.0, rtol=1e-10, atol=1e-10)
    theta = r.element_coordinate("motor")
    np.testing.assert_allclose(theta, tau * r.t**2 / (2 * (1.0 / 3.0 + n * n * jr)), atol=1e-8)
    # The motor's work is the kinetic energy it produced.
    np.testing.assert_allclose(r.element_work("motor"), r.kinetic_energy, atol=1e-8)


def test_linear_actuator_spring_follows_its_free_length():
    # A very stiff, damped spring whose free length follows a law: the mass follows it.
    b = linkdyn.ModelBuilder("actuator", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("mass", mass=0.1, inertia=0.01, position=(1.0, 0.0))
    b.add_prismatic("rail", "ground.O", "mass.cm")
    b.add_spring_damper("act", "ground.O", "mass.cm", 1e6, 2e3, laws.harmonic(1.0, 0.1, 2.0))
    r = linkdyn.simulate(b.build(), 3.0, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(r.q[r.t > 0.1, 0], 1.0 + 0.1 * np.sin(2.0 * r.t[r.t > 0.1]),
                               atol=1e-5)
    assert np.abs(r.energy - r.energy[0] - r.work).max() < 1e-6


def test_tabulated_law_interpolates_and_holds_its_ends():
    law = laws.tabulated([0.0, 1.0, 2.0, 4.0], [0.0, 1.0, 4.0, 16.0])
    # Not-a-knot through points of t^2 reproduces t^2 exactly.
    for t in (0.0, 0.5, 1.7, 3.9, 4.0):
        f = law(t)
        np.testing.assert_allclose(f, (t * t, 2 * t, 2.0), atol=1e-12)
    assert law(5.0) == (16.0, 0.0, 0.0) and law(-1.0) == (0.0, 0.0, 0.0)
    pchip = laws.tabulated([0, 1, 2], [0, 1, 1], interpolant="pchip")
    assert all(0.0 <= pchip(t)[0] <= 1.0 for t in np.linspace(0, 2, 41))   # no overshoot
    # The kernels evaluate the same interpolant: a torque from the table on a free bar.
    b = linkdyn.ModelBuilder("table", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_torque("tq", "rod", law)
    m = b.build()
    r = linkdyn.simulate(m, 2.0, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(r.element_force("tq"), r.t**2, atol=1e-12)
    with pytest.raises(ModelError, match="strictly increasing"):
        laws.tabulated([0, 1, 1], [0, 1, 2])


def test_body_frame_force_turns_with_the_body():
    b = linkdyn.ModelBuilder("follower", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0), omega=1.0, velocity=(0, 0.5))
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_force("tangential", "rod.b", 0.0, 0.2, frame="body")   # along perp(u): a torque
    r = linkdyn.simulate(b.build(), 2.0, rtol=1e-10, atol=1e-10)
    # A constant torque 0.2 N m about the pin: omega = 1 + 0.2 t / J.
    omega = r.v[:, 3] * r.q[:, 2] - r.v[:, 2] * r.q[:, 3]
    np.testing.assert_allclose(omega, 1.0 + 0.2 * r.t * 3.0, atol=1e-8)
    f = r.element_force("tangential")
    np.testing.assert_allclose(f, 0.2 * np.stack([-r.q[:, 3], r.q[:, 2]], axis=1), atol=1e-12)


def test_controller_zero_order_hold_and_restarts():
    kp, kd, period = 20.0, 2.0, 0.01
    b = linkdyn.ModelBuilder("pd", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_motor("motor", "pin")
    model = b.build()
    calls = []

    def pd(t, state):
        theta, rate = state.element_coordinate("motor")
        calls.append(t)
        return {"motor": kp * (1.0 - theta) - kd * rate}

    r = linkdyn.simulate(model, 2.0, rtol=1e-9, atol=1e-9, dt_out=0.001, controller=pd,
                         control_period=period)
    assert r.stats["controller_samples"] == len(calls) == 200
    np.testing.assert_allclose(calls, period * np.arange(200), atol=1e-12)
    assert r.stats["controller_restarts"] == 199
    # The torque is held between samples: constant on each interval, equal to the sample's.
    torque = r.element_force("motor")
    inside = (r.t > 0.0101) & (r.t < 0.0199)
    np.testing.assert_allclose(torque[inside], r.control_inputs[1, 0], atol=1e-12)
    theta = r.element_coordinate("motor")
    assert abs(theta[-1] - 1.0) < 2e-3   # the PD loop settles at the target
    assert np.abs(r.energy - r.energy[0] - r.work).max() < 1e-6


def test_controller_sets_a_servo_target():
    model = servo_bar(40.0, 4.0, 0.0)
    r = linkdyn.simulate(model, 3.0, rtol=1e-9, atol=1e-9, controller=lambda t, s: (
        {"servo": 0.5} if t >= 1.0 else None), control_period=0.25)
    theta = r.element_coordinate("servo")
    assert abs(theta[r.t <= 1.0]).max() < 1e-12 and abs(theta[-1] - 0.5) < 1e-3
    assert r.stats["controller_restarts"] == 1


@pytest.mark.parametrize("bad, match", [
    (lambda t, s: {"nothing": 1.0}, "nothing"),
    (lambda t, s: {"motor": float("nan")}, "finite"),
    (lambda t, s: 3.0, "mapping"),
    (lambda t, s: 1 / 0, "ZeroDivisionError"),
])
def test_controller_errors_name_the_problem(bad, match):
    b = linkdyn.ModelBuilder("pd", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_motor("motor", "pin")
    with pytest.raises(ControllerError, match=match) as info:
        linkdyn.simulate(b.build(), 1.0, controller=bad, control_period=0.1)
    assert info.value.t == 0.0 and info.value.result is not None


def test_coincident_spring_points_raise_naming_the_element():
    b = linkdyn.ModelBuilder("coincide", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("mass", mass=1.0, inertia=0.1, position=(0.0, 0.0))
    b.add_prismatic("rail", "ground.O", "mass.cm")
    b.add_spring_damper("zero", "ground.O", "mass.cm", 10.0, 0.0, free_length=0.5)
    with pytest.raises(ForceElementError, match="'zero'") as info:
        linkdyn.simulate(b.build(), 1.0)
    assert info.value.element == "zero"


@pytest.mark.parametrize("call, match", [
    (lambda b: b.add_spring_damper("s", "ground.O", "rod.b", -1.0), "stiffness"),
    (lambda b: b.add_spring_damper("s", "ground.O", "rod.b", 1.0, -0.1), "damping"),
    (lambda b: b.add_spring_damper("s", "ground.O", "rod.b", float("nan")), "finite"),
    (lambda b: b.add_spring_damper("s", "ground.O", "rod.x", 1.0), "no point 'x'"),
    (lambda b: b.add_spring_damper("s", "ground.O", "ground.O", 1.0), "same point"),
    (lambda b: b.add_torsional_spring_damper("s", "nope", 1.0), "unknown joint 'nope'"),
    (lambda b: b.add_torsional_spring_damper("s", "slide", 1.0), "prismatic"),
    (lambda b: b.add_motor("s", "slide", 1.0, rotor_inertia=1e-3, rotor_mass=1.0),
     "rotor_inertia"),
    (lambda b: b.add_motor("s", "pin", 1.0, rotor_inertia=1e-3), "rotor_mass"),
    (lambda b: b.add_flexible_joint("s", "pin", 10.0, 0.1, 1e-3, 0.1), "second body"),
    (lambda b: b.add_flexible_joint("s", "slide", 10.0, 0.1, 1e-3, 0.1), "prismatic"),
    (lambda b: b.add_flexible_joint("s", "rev2", 10.0, 0.1, 1e-3, 0.1, form="jiminy"),
     "flex_inertia"),
    (lambda b: b.add_flexible_joint("s", "rev2", -10.0, 0.1, 1e-3, 0.1), "stiffness"),
    (lambda b: b.add_flexible_joint("s", "rev2", 10.0, 0.1, 1e-3, 0.1, form="b"), "form"),
    (lambda b: b.add_motor("s", "pin", laws.function(lambda t: (0, 0, 0))), "function"),
    (lambda b: b.add_servo("s", "pin", 0.0, kp=0.0), "kp"),
    (lambda b: b.add_torque("s", "ghost", 1.0), "unknown body 'ghost'"),
    (lambda b: b.add_force("s", "rod.b", frame="local"), "frame"),
    (lambda b: b.add_force("s", "ground.O", 1.0), "body point"),
    (lambda b: b.add_joint_damper("rod", "pin", 1.0), "already used"),
])
def test_bad_force_elements_raise_naming_the_element(call, match):
    b = linkdyn.ModelBuilder("bad")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_body("block", mass=1.0, inertia=0.1, position=(1.0, 0.0))
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_prismatic("slide", "rod.b", "block.cm")
    b.add_revolute("rev2", "ground.O", "block.cm")
    with pytest.raises(ModelError, match=match) as info:
        call(b)
    assert info.value.entry in ("s", "rod")


def test_model_file_round_trip_and_errors(model, tmp_path):
    path = tmp_path / "every.json"
    model.save(path)
    again = linkdyn.load_model(path)
    assert again == model
    q, v = model.q0, np.ones(model.nq)
    np.testing.assert_array_equal(again.force(q, v, 0.3), model.force(q, v, 0.3))
    data = json.loads(path.read_text())
    data["forces"][0]["stiffness"] = -3.0
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"forces\[0\].*stiffness"):
        linkdyn.load_model(path)
    data["forces"][0] = {"type": "rubber_band", "name": "x"}
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="spring_damper"):
        linkdyn.load_model(path)


def test_armature_on_a_moving_base_matches_the_lagrangian():
    # Double pendulum, motor with armature J at the elbow on a rotor of mass m_r riding
    # there: T gains J (w2 - w1)^2 / 2 + m_r |v_elbow|^2 / 2. Reference: the equations in
    # the two absolute angles, integrated by DOP853 at 1e-12.
    from scipy.integrate import solve_ivp

    g, L1, L2, m1, m2, jr, n, mr = 9.81, 0.8, 0.6, 1.2, 0.7, 2e-5, 25.0, 0.3
    J = n * n * jr
    tau = laws.harmonic(0.0, 1.5, 4.0)
    phi1, phi2 = -1.2, -0.4
    b = linkdyn.ModelBuilder("elbow", gravity=(0.0, -g))
    b.add_ground_point("O", (0.0, 0.0))
    e1, e2 = (math.cos(phi1), math.sin(phi1)), (math.cos(phi2), math.sin(phi2))
    b.add_bar("upper", length=L1, mass=m1, position=(0.5 * L1 * e1[0], 0.5 * L1 * e1[1]),
              angle=phi1)
    b.add_bar("lower", length=L2, mass=m2, position=(L1 * e1[0] + 0.5 * L2 * e2[0],
                                                     L1 * e1[1] + 0.5 * L2 * e2[1]), angle=phi2)
    b.add_revolute("shoulder", "ground.O", "upper.a")
    b.add_revolute("elbow", "upper.b", "lower.a")
    b.add_motor("motor", "elbow", tau, rotor_inertia=jr, gear_ratio=n, rotor_mass=mr)
    model = b.build()
    assert "motor/rotor" in model.body_names
    r = linkdyn.simulate(model, 2.0, rtol=1e-11, atol=1e-11, dt_out=0.01)

    c1, c2 = L1 / 2, L2 / 2
    I1, I2 = m1 * L1**2 / 12, m2 * L2**2 / 12

    def rhs(t, y):
        p1, p2, w1, w2 = y
        d = p1 - p2
        a = m2 * L1 * c2
        M = np.array([[m1 * c1**2 + I1 + (m2 + mr) * L1**2 + J, a * math.cos(d) - J],
                      [a * math.cos(d) - J, m2 * c2**2 + I2 + J]])
        torque = tau(t)[0]
        f = np.array([-a * math.sin(d) * w2**2 - g * (m1 * c1 + (m2 + mr) * L1) * math.cos(p1)
                      - torque,
                      a * math.sin(d) * w1**2 - g * m2 * c2 * math.cos(p2) + torque])
        return [w1, w2, *np.linalg.solve(M, f)]

    ref = solve_ivp(rhs, (0.0, 2.0), [phi1, phi2, 0.0, 0.0], method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=r.t)
    angles = [np.unwrap(np.arctan2(r.q[:, 4 * model.body_names.index(name) + 3],
                                   r.q[:, 4 * model.body_names.index(name) + 2]))
              for name in ("upper", "lower")]
    np.testing.assert_allclose(angles[0], ref.y[0], atol=1e-7)
    np.testing.assert_allclose(angles[1], ref.y[1], atol=1e-7)
    # The armature matters here: the same model without it moves measurably otherwise.
    desc = b.description()
    bare = linkdyn.ModelBuilder("bare", gravity=(0.0, -g))
    bare.add_ground_point("O", (0.0, 0.0))
    for body in desc.bodies:
        bare.add_bar(body.name, length=body.length, mass=body.mass, position=body.position,
                     u=body.u)
    bare.add_revolute("shoulder", "ground.O", "upper.a")
    bare.add_revolute("elbow", "upper.b", "lower.a")
    bare.add_motor("motor", "elbow", tau)
    r0 = linkdyn.simulate(bare.build(), 2.0, rtol=1e-11, atol=1e-11, dt_out=0.01)
    lower0 = np.unwrap(np.arctan2(r0.q[:, 7], r0.q[:, 6]))
    assert np.abs(lower0 - angles[1]).max() > 1e-2


def flexible_arm(form, flex_fraction=None):
    b = linkdyn.ModelBuilder(f"arm_{form}", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("arm", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("shoulder", "ground.O", "arm.a")
    extra = {} if form == "series" else dict(flex_inertia=flex_fraction / 3.0)
    b.add_flexible_joint("sea", "shoulder", stiffness=50.0, damping=0.5, rotor_inertia=0.05,
                         rotor_mass=0.2, law=laws.harmonic(0.0, 4.0, 3.0), form=form, **extra)
    return b.build()


def arm_angle(r):
    i = r.model.body_names.index("arm")
    return np.unwrap(np.arctan2(r.q[:, 4 * i + 3], r.q[:, 4 * i + 2]))


def test_flexible_joint_series_form_against_its_equations():
    # Vigne's note, equations (1) with a fixed base: rotor angle x2, deflection x1.
    from scipy.integrate import solve_ivp

    J, I, k, nu, m, g = 0.05, 1.0 / 3.0, 50.0, 0.5, 1.0, 9.81
    law = laws.harmonic(0.0, 4.0, 3.0)
    r = linkdyn.simulate(flexible_arm("series"), 2.0, rtol=1e-11, atol=1e-11, dt_out=0.01)

    def rhs(t, y):
        x1, x2, v1, v2 = y
        a2 = (law(t)[0] + k * x1 + nu * v1) / J
        grav = -m * g * 0.5 * math.cos(x1 + x2)
        return [v1, v2, (-k * x1 - nu * v1 + grav) / I - a2, a2]

    ref = solve_ivp(rhs, (0.0, 2.0), [0.0, 0.0, 0.0, 0.0], method="DOP853", rtol=1e-12,
                    atol=1e-12, t_eval=r.t)
    np.testing.assert_allclose(arm_angle(r), ref.y[0] + ref.y[1], atol=1e-7)
    np.testing.assert_allclose(r.element_coordinate("sea/spring"), ref.y[0], atol=1e-7)
    np.testing.assert_allclose(r.element_coordinate("sea"), ref.y[1], atol=1e-7)
    np.testing.assert_allclose(r.element_force("sea"), [law(t)[0] for t in r.t], atol=1e-12)
    assert np.abs(r.energy - r.energy[0] - r.work).max() < 1e-7


def test_jiminy_form_converges_to_the_series_form_like_I_f():
    series = linkdyn.simulate(flexible_arm("series"), 2.0, rtol=1e-12, atol=1e-12,
                              dt_out=0.01)
    fractions = np.array([1e-2, 1e-3, 1e-4, 1e-5, 1e-6])
    diffs = []
    for f in fractions:
        r = linkdyn.simulate(flexible_arm("jiminy", f), 2.0, rtol=1e-12, atol=1e-12,
                             dt_out=0.01)
        diffs.append(np.abs(arm_angle(r) - arm_angle(series)).max())
    slope = np.polyfit(np.log10(fractions), np.log10(diffs), 1)[0]
    assert 0.9 < slope < 1.1, (diffs, slope)
    assert diffs[-1] < 1e-5 * np.ptp(arm_angle(series))


def test_controller_arguments_are_checked():
    model = servo_bar(10.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="control_period"):
        linkdyn.simulate(model, 1.0, controller=lambda t, s: None)
    with pytest.raises(ValueError, match="without a controller"):
        linkdyn.simulate(model, 1.0, control_period=0.1)
    with pytest.raises(ValueError, match="control_period"):
        linkdyn.simulate(model, 1.0, controller=lambda t, s: None, control_period=-1.0)
    with pytest.raises(TypeError, match="callable"):
        linkdyn.simulate(model, 1.0, controller=3.0, control_period=0.1)
    with pytest.raises(ValueError, match="no motor or servo"):
        linkdyn.simulate(spinning_bar(0.1, 1.0), 1.0, controller=lambda t, s: None,
                         control_period=0.1)
