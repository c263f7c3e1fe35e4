"""Force elements of spatial models (linkdyn.elements.spatial_forces, csrc/ld_forces3.c):
exact derivatives against finite differences, closed-form motions, the power balance, the
flexible arm against an independent model in minimal coordinates, model files and bad
input."""

import json
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import linkdyn
from linkdyn import SpatialModelBuilder
from linkdyn.errors import ModelError, ModelFileError
from linkdyn.laws import harmonic, linear
from linkdyn.models.spatial import FLEXIBLE_ARM, flexible_arm

from conftest import central_difference

TILT = Rotation.from_rotvec([0.3, -0.5, 0.4]).as_matrix()
TENSOR = np.array([[0.03, 0.001, 0.0], [0.001, 0.02, 0.002], [0.0, 0.002, 0.04]])


def two_bodies(prismatic=True):
    """An arm on a cylindrical joint to the ground and a link pinned to it by a revolute
    joint (and, with ``prismatic``, also on a prismatic joint to the ground, which
    overconstrains it: for the kernels' derivatives only), both turned and moving."""
    b = SpatialModelBuilder("two", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_ground_point("A", (0.3, 0.2, 0.5))
    b.add_body("arm", mass=2.0, inertia=TENSOR, position=(0.1, 0.2, 0.3), orientation=TILT,
               points={"p": (0.2, -0.1, 0.05), "q": (0.0, 0.0, -0.2)},
               angular_velocity=(0.3, -0.5, 1.1), velocity=(0.2, 0.1, -0.3))
    b.add_body("link", mass=1.0, inertia=(0.01, 0.012, 0.015), position=(0.4, 0.1, 0.2),
               points={"a": (0.1, 0.0, 0.0)}, angular_velocity=(0.7, 0.2, -0.4))
    b.add_revolute("hinge", "link.a", "arm.p", axis=(0.2, 0.3, 0.9))
    b.add_cylindrical("cyl", "arm.q", "ground.O", axis=(0.1, 0.0, 1.0))
    if prismatic:
        b.add_prismatic("pr", "link.cm", "ground.A", axis=(0.1, 0.0, 1.0))
    return b


ELEMENTS = {
    "spring_to_ground": lambda b: b.add_spring_damper("e", "arm.p", "ground.A", 50.0, 2.0,
                                                      free_length=0.2),
    "spring_between_bodies": lambda b: b.add_spring_damper("e", "arm.q", "link.a", 30.0, 1.0),
    "torsional_revolute": lambda b: b.add_torsional_spring_damper("e", "hinge", 5.0, 0.3,
                                                                  rest_angle=0.2),
    "torsional_cylindrical": lambda b: b.add_torsional_spring_damper("e", "cyl", 3.0, 0.2),
    "motor_law": lambda b: b.add_motor("e", "hinge", harmonic(0.1, 0.5, 3.0)),
    "joint_damper": lambda b: b.add_joint_damper("e", "hinge", 0.7),
    "servo_slide": lambda b: b.add_servo("e", "pr", linear(0.1, 0.2), kp=10.0, kd=1.0),
    "force_body_frame": lambda b: b.add_force("e", "arm.p", 1.0, harmonic(0.0, 2.0, 1.5),
                                              -0.5, frame="body"),
    "force_global": lambda b: b.add_force("e", "link.a", 0.3, 0.2, -1.0),
    "torque_body_frame": lambda b: b.add_torque("e", "arm", 0.2, harmonic(0.1, 0.4, 2.0), 0.1,
                                                frame="body"),
    "torque_global": lambda b: b.add_torque("e", "link", 0.5, -0.2, 0.3),
}


@pytest.mark.parametrize("element", sorted(ELEMENTS))
def test_force_derivatives_match_finite_differences(element):
    b = two_bodies()
    ELEMENTS[element](b)
    model = b.build()
    rng = np.random.default_rng(1)
    q = model.q0 + 0.05 * rng.standard_normal(model.nq)
    v = model.v0 + 0.3 * rng.standard_normal(model.nq)
    t = 0.37
    bare = two_bodies().build()
    assert np.abs(model.force(q, v, t) - bare.force(q, v, t)).max() > 1e-2   # it acts
    fq = central_difference(lambda x: model.force(x, v, t), q)
    fv = central_difference(lambda x: model.force(q, x, t), v)
    assert np.allclose(model.force_q(q, v, t).toarray(), fq, rtol=0, atol=1e-7)
    assert np.allclose(model.force_v(q, v, t).toarray(), fv, rtol=0, atol=1e-7)


def test_the_power_balance_closes_to_the_tolerance():
    b = two_bodies(prismatic=False)
    for name in ("spring_to_ground", "torsional_revolute", "torsional_cylindrical",
                 "force_body_frame", "torque_body_frame", "torque_global"):
        ELEMENTS[name](b)
        b._forces[name] = b._forces.pop("e")
    model = b.build()
    gaps = []
    for tol in (1e-6, 1e-8, 1e-10):
        r = linkdyn.simulate(model, 2.0, rtol=tol, atol=tol)
        assert np.ptp(r.energy) > 1.0                # energy is exchanged ...
        gaps.append(np.abs(r.energy - r.energy[0] - r.work).max())
    # ... and E(t) - E(0) = W(t) to the tolerance: the gap shrinks with it
    assert gaps[0] < 1e-4 and gaps[1] < 1e-6 and gaps[2] < 1e-8
    assert gaps[2] < 1e-2 * gaps[0]


def test_a_body_on_a_spring_oscillates_at_its_natural_frequency():
    k, m, L0, amp = 80.0, 2.0, 1.0, 0.2
    b = SpatialModelBuilder("bob", gravity=(0.0, 0.0, 0.0))
    b.add_ground_point("A", (0.0, 0.0, 0.0))
    b.add_body("bob", mass=m, inertia=TENSOR, orientation=TILT, position=(0.0, 0.0, L0 + amp))
    b.add_spring_damper("s", "bob.cm", "ground.A", k, free_length=L0)
    r = linkdyn.simulate(b.build(), 3.0, rtol=1e-10, atol=1e-10)
    w = math.sqrt(k / m)
    z = r.body_position("bob")[:, 2]
    assert np.abs(z - (L0 + amp * np.cos(w * r.t))).max() < 1e-7
    assert np.abs(r.element_force("s") + k * amp * np.cos(w * r.t)).max() < 1e-5
    assert np.abs(r.body_angular_velocity("bob")).max() < 1e-9


def test_a_torsional_spring_about_a_skew_axis_through_the_centre():
    axis = np.array([0.3, -0.4, 0.8]) / np.linalg.norm([0.3, -0.4, 0.8])
    k, w0 = 2.0, 1.5
    b = SpatialModelBuilder("wheel")
    b.add_ground_point("C", (0.5, 0.2, 0.1))
    b.add_body("wheel", mass=3.0, inertia=TENSOR, orientation=TILT, position=(0.5, 0.2, 0.1),
               angular_velocity=tuple(w0 * axis))
    b.add_revolute("axle", "wheel.cm", "ground.C", axis=tuple(axis))
    b.add_torsional_spring_damper("spring", "axle", k)
    r = linkdyn.simulate(b.build(), 4.0, rtol=1e-10, atol=1e-10)
    inertia = axis @ (TILT @ TENSOR @ TILT.T) @ axis
    big = math.sqrt(k / inertia)
    theta = r.element_coordinate("spring")
    assert np.ptp(theta) > 0.3
    assert np.abs(theta - w0 / big * np.sin(big * r.t)).max() < 1e-7
    # the spring's torque is -k theta about the axis on the wheel
    assert np.allclose(r.element_force("spring"), -k * theta, atol=1e-12)
    # and the angle rises through half its amplitude at (pi / 6 + 2 pi k) / w, located as
    # an event
    half = 0.5 * w0 / big
    ev = linkdyn.events.coordinate_crosses("spring", half, direction=+1, terminal=False)
    r = linkdyn.simulate(r.model, 4.0, rtol=1e-10, atol=1e-10, events=[ev])
    times = np.array([e.t for e in r.events])
    expected = (np.pi / 6 + 2 * np.pi * np.arange(10)) / big
    expected = expected[expected < 4.0]
    assert len(expected) >= 2 and len(times) == len(expected)
    np.testing.assert_allclose(times, expected, atol=1e-8)


@pytest.mark.parametrize("frame", ["global", "body"])
def test_a_constant_torque_spins_up_a_free_body(frame):
    """Euler's law: L(t) = L(0) + T t. In the body frame, a torque along a principal axis
    keeps the body spinning about that axis: omega = T t / I_k."""
    T = np.array([0.0, 0.0, 0.3])
    b = SpatialModelBuilder("spin", gravity=(0.0, 0.0, 0.0))
    b.add_body("box", mass=1.0, inertia=(0.02, 0.03, 0.04), orientation=TILT)
    if frame == "global":
        b.add_torque("t", "box", *T)
        r = linkdyn.simulate(b.build(), 2.0, rtol=1e-10, atol=1e-10)
        R = r.body_rotation("box")
        L = np.einsum("nij,jk,nlk,nl->ni", R, np.diag([0.02, 0.03, 0.04]), R,
                      r.body_angular_velocity("box"))
        assert np.abs(L - np.outer(r.t, T)).max() < 1e-8
        assert np.allclose(r.element_force("t"), T)
    else:
        b.add_torque("t", "box", *T, frame="body")
        r = linkdyn.simulate(b.build(), 2.0, rtol=1e-10, atol=1e-10)
        omega = r.body_angular_velocity("box")
        axis = TILT @ np.array([0.0, 0.0, 1.0])
        assert np.abs(omega - np.outer(r.t * 0.3 / 0.04, axis)).max() < 1e-8
        assert np.allclose(r.element_force("t"), 0.3 * axis, atol=1e-9)
    assert np.abs(r.energy - r.energy[0] - r.work).max() < 1e-8


def test_a_follower_force_turns_with_a_spinning_body():
    """A body spinning at w about z with a force F along its own x at its centre: the
    centre's velocity is F / (m w) (sin wt, 1 - cos wt, 0), the spin unchanged."""
    m, w, F = 2.0, 3.0, 0.8
    b = SpatialModelBuilder("puck", gravity=(0.0, 0.0, 0.0))
    b.add_body("puck", mass=m, inertia=(0.02, 0.02, 0.03), angular_velocity=(0.0, 0.0, w))
    b.add_force("push", "puck.cm", F, 0.0, 0.0, frame="body")
    r = linkdyn.simulate(b.build(), 2.0, rtol=1e-10, atol=1e-10)
    v = r.body_velocity("puck")
    expected = F / (m * w) * np.stack([np.sin(w * r.t), 1 - np.cos(w * r.t), 0 * r.t], 1)
    assert np.abs(v - expected).max() < 1e-8
    assert np.allclose(r.body_angular_velocity("puck"), [0.0, 0.0, w], atol=1e-9)


def test_a_servo_on_a_prismatic_joint_is_a_damped_oscillator():
    m, kp, kd, target = 1.5, 60.0, 3.0, 0.1
    b = SpatialModelBuilder("slide", gravity=(0.0, 0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("cart", mass=m, inertia=TENSOR, orientation=TILT)
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    b.add_prismatic("rail", "cart.cm", "ground.O", axis=tuple(axis))
    b.add_servo("servo", "rail", target, kp=kp, kd=kd)
    r = linkdyn.simulate(b.build(), 3.0, rtol=1e-10, atol=1e-10)
    # m x'' = kp (target - x) - kd x', x(0) = x'(0) = 0
    zeta_w, wd = kd / (2 * m), math.sqrt(kp / m - (kd / (2 * m)) ** 2)
    x = target * (1 - np.exp(-zeta_w * r.t) * (np.cos(wd * r.t) +
                                                zeta_w / wd * np.sin(wd * r.t)))
    assert np.abs(r.element_coordinate("servo") - x).max() < 1e-8
    assert np.abs(r.body_position("cart") - np.outer(x, axis)).max() < 1e-8


def _arm_in_minimal_coordinates(t_eval):
    """The flexible arm without its turret in the link angles (theta1 of the upper link from
    the x axis, theta2 of the forearm relative to it, about +y: the plane (x, -z)) and the
    rotor angles (phi1 from the ground, phi2 from the upper link), by Lagrange's equations
    written here, integrated by scipy's DOP853. Returns the tip's (x, z) at t_eval."""
    d = FLEXIBLE_ARM
    (L1, L2), (m1, m2), w = d["lengths"], d["masses"], d["side"]
    c1, c2 = L1 / 2, L2 / 2
    I1, I2 = m1 * (L1**2 + w**2) / 12, m2 * (L2**2 + w**2) / 12
    J1, J2 = d["rotor_inertia"]
    mr2 = d["rotor_mass"][1]
    (k1, k2), (b1, b2), g = d["stiffness"], d["damping"], d["g"]
    th10, th20 = d["angles"][0], d["angles"][1]

    def rhs(t, y):
        th1, th2, ph1, ph2, w1, w2, u1, u2 = y
        h = m2 * L1 * c2 * math.sin(th2)
        M = np.zeros((4, 4))
        M[0, 0] = (m1 * c1**2 + I1 + m2 * (L1**2 + c2**2 + 2 * L1 * c2 * math.cos(th2)) + I2
                   + mr2 * L1**2 + J2)
        M[0, 1] = M[1, 0] = m2 * (c2**2 + L1 * c2 * math.cos(th2)) + I2
        M[1, 1] = m2 * c2**2 + I2
        M[2, 2] = J1
        M[0, 3] = M[3, 0] = M[3, 3] = J2
        # Gravity along -z = +b in the (x, -z) plane: V = -g sum m b.
        G1 = -g * ((m1 * c1 + (m2 + mr2) * L1) * math.cos(th1) + m2 * c2 * math.cos(th1 + th2))
        G2 = -g * m2 * c2 * math.cos(th1 + th2)
        s1 = -k1 * ((th1 - th10) - ph1) - b1 * (w1 - u1)     # the springs' torques on the links
        s2 = -k2 * ((th2 - th20) - ph2) - b2 * (w2 - u2)
        (a1, bb1, o1), (a2, bb2, o2) = d["torque"]
        tau1, tau2 = a1 + bb1 * math.sin(o1 * t), a2 + bb2 * math.sin(o2 * t)
        Q = np.array([h * (2 * w1 * w2 + w2**2) - G1 + s1, -h * w1**2 - G2 + s2,
                      tau1 - s1, tau2 - s2])
        return np.concatenate([[w1, w2, u1, u2], np.linalg.solve(M, Q)])

    sol = solve_ivp(rhs, (0.0, t_eval[-1]), [th10, th20, 0, 0, 0, 0, 0, 0], method="DOP853",
                    rtol=1e-12, atol=1e-12, t_eval=t_eval)
    th1, th2 = sol.y[0], sol.y[1]
    a = L1 * np.cos(th1) + L2 * np.cos(th1 + th2)
    bcoord = L1 * np.sin(th1) + L2 * np.sin(th1 + th2)
    return np.stack([a, -bcoord], axis=1)


def test_flexible_arm_matches_its_model_in_minimal_coordinates():
    model = flexible_arm(turret=False)
    r = linkdyn.simulate(model, 2.0, rtol=1e-10, atol=1e-10, dt_out=0.01)
    tip = r.marker("tip")
    expected = _arm_in_minimal_coordinates(r.t)
    assert np.ptp(tip[:, 0]) > 0.1                    # the arm moves ...
    assert np.abs(tip[:, 1]).max() < 1e-12             # ... in its plane
    assert np.abs(tip[:, [0, 2]] - expected).max() < 1e-9
    # the springs deflect, and the rotors' angles are the links' less the deflection
    defl = r.element_coordinate("shoulder_drive/spring")
    assert np.ptp(defl) > 1e-3
    assert np.abs(r.energy - r.energy[0] - r.work).max() < 1e-8


def test_flexible_arm_on_its_turret_equals_rotors_built_by_hand():
    """The flexible joints' expansion against the same arm built from rotor bodies, each
    pinned to the base with the motor on its pin, and the link hinged to the rotor with the
    torsional spring on that hinge; and the power balance with gyroscopic rotors."""
    model = flexible_arm(turret=True)
    d, desc = FLEXIBLE_ARM, model.description
    servo = next(f for f in desc.forces if f.name == "yaw_servo")
    b = SpatialModelBuilder("by_hand", gravity=desc.gravity)
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    for body in desc.bodies:
        b.add_body(body.name, mass=body.mass, inertia=body.inertia, position=body.position,
                   orientation=body.orientation, points=dict(body.points))
    b.add_revolute("yaw", "turret.top", "ground.O", axis=(0.0, 0.0, 1.0))
    b.add_servo("yaw_servo", "yaw", servo.target, kp=servo.kp, kd=servo.kd)
    axis_y = ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0), (0.0, -1.0, 0.0))   # body z along global y
    for k, (link, base) in enumerate((("upper", "turret.top"), ("fore", "upper.end"))):
        body = next(x for x in desc.bodies if x.name == link)
        at = np.array(body.position) + np.array(body.orientation) @ np.array(
            dict(body.points)["base"])
        jt, ja = d["rotor_transverse"][k], d["rotor_inertia"][k]
        b.add_body(f"rotor{k}", mass=d["rotor_mass"][k], inertia=(jt, jt, ja),
                   position=tuple(at), orientation=axis_y)
        b.add_revolute(f"pin{k}", f"rotor{k}.cm", base, axis=(0.0, 1.0, 0.0))
        b.add_motor(f"motor{k}", f"pin{k}", harmonic(*d["torque"][k]))
        b.add_revolute(f"flex{k}", f"{link}.base", f"rotor{k}.cm", axis=(0.0, 1.0, 0.0))
        b.add_torsional_spring_damper(f"spring{k}", f"flex{k}", d["stiffness"][k],
                                      d["damping"][k])
    b.add_marker("tip", "fore.end")
    twin = b.build()
    r = linkdyn.simulate(model, 1.5, rtol=1e-10, atol=1e-10, dt_out=0.01)
    r2 = linkdyn.simulate(twin, 1.5, rtol=1e-10, atol=1e-10, dt_out=0.01)
    assert np.ptp(r.marker("tip")[:, 1]) > 0.05            # the turret turns the arm
    assert np.abs(r.marker("tip") - r2.marker("tip")).max() < 1e-7
    assert np.abs(r.element_coordinate("elbow_drive/spring") -
                  r2.element_coordinate("spring1")).max() < 1e-7
    assert np.abs(r.energy - r.energy[0] - r.work).max() < 1e-7


def test_spatial_force_elements_round_trip_through_model_files(tmp_path):
    b = two_bodies(prismatic=False)
    b.add_spring_damper("s", "arm.p", "ground.A", 50.0, 2.0)
    b.add_torsional_spring_damper("t", "hinge", 5.0, 0.3, rest_angle=0.2)
    b.add_motor("m", "hinge", harmonic(0.1, 0.5, 3.0))
    b.add_force("f", "arm.p", 1.0, harmonic(0.0, 2.0, 1.5), -0.5, frame="body")
    b.add_torque("tq", "link", 0.5, -0.2, 0.3)
    model = b.build()
    path = tmp_path / "two.json"
    model.save(path)
    again = linkdyn.load_model(path)
    assert again.description.forces == model.description.forces
    rng = np.random.default_rng(4)
    q = model.q0 + 1e-2 * rng.standard_normal(model.nq)
    v = model.v0 + rng.standard_normal(model.nq)
    np.testing.assert_allclose(again.force(q, v, 0.3), model.force(q, v, 0.3), atol=1e-12)
    data = json.loads(path.read_text())
    data["forces"][0]["stiffness"] = -1.0
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"forces\[0\].*stiffness"):
        linkdyn.load_model(path)
    data["forces"][0] = {"type": "spring", "name": "s"}
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"forces\[0\].*'type' must be one of"):
        linkdyn.load_model(path)
    flex = tmp_path / "arm.json"
    arm = flexible_arm()
    arm.save(flex)
    loaded = linkdyn.load_model(flex)
    assert loaded.description.forces == arm.description.forces
    assert loaded.body_names == arm.body_names and loaded.nc == arm.nc


def test_a_controller_drives_a_spatial_motor():
    b = SpatialModelBuilder("wheel", gravity=(0.0, 0.0, 0.0))
    b.add_ground_point("C", (0.0, 0.0, 0.0))
    b.add_body("wheel", mass=1.0, inertia=(0.12, 0.12, 0.2))
    b.add_revolute("axle", "wheel.cm", "ground.C", axis=(0.0, 0.0, 1.0))
    b.add_motor("m", "axle")
    r = linkdyn.simulate(b.build(), 1.0, rtol=1e-10, atol=1e-10, controller=lambda t, s: {
        "m": 0.4}, control_period=0.1)
    # a constant input torque 0.4 N m on I = 0.2 kg m^2: theta = t^2 (from rest)
    assert np.allclose(r.element_coordinate("m"), r.t**2, atol=1e-8)


def test_bad_spatial_force_elements_are_refused_with_their_names():
    b = two_bodies(prismatic=False)
    with pytest.raises(ModelError, match="force element 'x': unknown joint 'nope'"):
        b.add_motor("x", "nope")
    with pytest.raises(ModelError, match="'cyl' is cylindrical, which both turns"):
        b.add_motor("x", "cyl")
    with pytest.raises(ModelError, match="apply the force to a body point"):
        b.add_force("x", "ground.A", 1.0)
    with pytest.raises(ModelError, match="frame must be 'global' or 'body'"):
        b.add_torque("x", "arm", 1.0, frame="local")
    with pytest.raises(ModelError, match="unknown body 'nope'"):
        b.add_torque("x", "nope", 1.0)
    with pytest.raises(ModelError, match="stiffness must be"):
        b.add_spring_damper("x", "arm.p", "ground.A", -3.0)
    with pytest.raises(ModelError, match="same point"):
        b.add_spring_damper("x", "arm.p", "arm.p", 3.0)
    with pytest.raises(ModelError, match="less than twice"):
        b.add_flexible_joint("x", "hinge", 10.0, 0.1, rotor_inertia=0.3, rotor_mass=1.0,
                             rotor_transverse_inertia=0.1)
    with pytest.raises(ModelError, match="a flexible joint needs a revolute joint"):
        b.add_flexible_joint("x", "cyl", 10.0, 0.1, rotor_inertia=0.3, rotor_mass=1.0)
    b.add_motor("m", "hinge")
    with pytest.raises(ModelError, match="already used by a force element"):
        b.add_marker("m", "arm.p")
    # Two points brought together stop the run with the element named.
    c = SpatialModelBuilder("collapse", gravity=(0.0, 0.0, 0.0))
    c.add_ground_point("O", (0.0, 0.0, 0.0))
    c.add_body("bob", mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, 1.0),
               velocity=(0.0, 0.0, -1.0))
    c.add_spring_damper("rope", "bob.cm", "ground.O", 0.0, 0.0, free_length=1.0)
    with pytest.raises(linkdyn.errors.SimulationError, match="rope"):
        linkdyn.simulate(c.build(), 2.0)


def test_flexible_arm_reports_its_rotor_pins_and_draws():
    """The compiled rotor bodies and pins are the model's own: the shoulder's rotor sits on
    the turret's fixed axis point, so its pin holds exactly its weight; pictures draw the
    rotors too."""
    r = linkdyn.simulate(flexible_arm(), 0.5, rtol=1e-10, atol=1e-10)
    assert "shoulder_drive/rotor" in r.model.body_names
    weight = FLEXIBLE_ARM["rotor_mass"][0] * FLEXIBLE_ARM["g"]
    np.testing.assert_allclose(r.joint_force("shoulder_drive/rotor.pin"),
                               [[0.0, 0.0, weight]] * len(r.t), atol=1e-8)
    assert r.snapshot(0.25) is not None


def test_flexible_arm_html_page(tmp_path):
    pytest.importorskip("plotly")
    r = linkdyn.simulate(flexible_arm(), 0.5, rtol=1e-8, atol=1e-8)
    r.to_html(tmp_path / "arm.html")
    assert (tmp_path / "arm.html").stat().st_size > 10_000


def test_equilibrium_and_modes_of_a_body_hanging_on_a_spring():
    """Statics with spatial force elements: the spring stretches by m g / k; the modes are
    the bounce sqrt(k / m), two pendulum swings sqrt(g / L) about the stretched length L and
    three free spins."""
    m, k, free, g = 2.0, 500.0, 0.5, 9.81
    b = SpatialModelBuilder("bob", gravity=(0.0, 0.0, -g))
    b.add_ground_point("A", (0.0, 0.0, 0.0))
    b.add_body("bob", mass=m, inertia=(0.01, 0.012, 0.014), orientation=TILT,
               position=(0.0, 0.0, -free - 0.05))
    b.add_spring_damper("s", "bob.cm", "ground.A", k, free_length=free)
    model = b.build()
    eq = linkdyn.equilibrium(model)
    stretched = free + m * g / k
    np.testing.assert_allclose(eq.q[:3], [0.0, 0.0, -stretched], atol=1e-12)
    w = np.sort(linkdyn.modes(model, eq).frequencies)
    assert np.all(w[:3] ** 2 < 1e-9)     # free spins: zero to round-off (w^2 ~ eps k / m)
    np.testing.assert_allclose(w[3:], [math.sqrt(g / stretched)] * 2 + [math.sqrt(k / m)],
                               rtol=1e-9)
