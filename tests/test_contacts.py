"""Compliant contacts (linkdyn.contacts): exact derivatives, impacts against the contact
laws' own equations, onset and separation events, energy balance and bad input."""

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import linkdyn
from linkdyn import events as ev
from linkdyn.errors import ModelError, ModelFileError

from conftest import ROUNDOFF, central_difference

G = 9.81


def dropped_disk(height=0.3, radius=0.1, mass=1.0, **contact):
    b = linkdyn.ModelBuilder("drop", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("disk", mass=mass, inertia=0.5 * mass * radius**2, position=(0.0, height))
    b.add_contact("floor", "disk.cm", "ground.O", 0.0, radius, **contact)
    b.add_marker("centre", "disk.cm")
    return b.build()


def one_dof(K, n, law, v0, m=1.0, t_end=0.05):
    """The same impact as a 1-DOF ODE in the penetration: m delta'' = m g - F(delta, delta')
    from delta = 0, delta' = v0, until separation; returns the separation speed and the
    largest penetration."""
    def rhs(t, y):
        d, dv = y
        F = law(d, dv) if d > 0 else 0.0
        return [dv, G - max(F, 0.0) / m]

    def apart(t, y):
        return y[0]
    apart.terminal, apart.direction = True, -1
    sol = solve_ivp(rhs, (0.0, t_end), [0.0, v0], method="DOP853", rtol=1e-12, atol=1e-14,
                    events=apart, dense_output=True)
    t_sep = sol.t_events[0][0]
    ts = np.linspace(0, t_sep, 20001)
    return -sol.y_events[0][0][1], sol.sol(ts)[0].max()


def speed_at(res, t_sep):
    """The disk's upward speed at separation, from the first output row after it (free
    flight in between: v = v_sep - g (t - t_sep))."""
    i = int(np.searchsorted(res.t, t_sep))
    return res.v[i, 1] + G * (res.t[i] - t_sep)


def test_contact_jacobians_match_central_differences():
    b = linkdyn.ModelBuilder("contacts", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("beam", length=2.0, mass=1.0, position=(0.0, 0.0), angle=0.1)
    b.add_body("disk", mass=0.5, inertia=0.01, points={"rim": (0.0, 0.02)},
               position=(0.3, 0.08), angle=0.3)
    b.add_contact("on_beam", "disk.rim", "beam.cm", 0.0, 0.1, stiffness=1e5, damping=0.8)
    b.add_contact("on_ground", "disk.cm", "ground.O", 0.2, 0.15, stiffness=2e5, exponent=1.3,
                  model="hertz", damping=0.3)
    model = b.build()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = model.q0 + 0.002 * rng.standard_normal(model.nq)
        v = rng.standard_normal(model.nq)
        fq_fd = central_difference(lambda x: model.force(x, v, 0.0), q, h=1e-7)
        fv_fd = central_difference(lambda x: model.force(q, x, 0.0), v, h=1e-7)
        scale = np.abs(fq_fd).max()
        assert scale > 100.0     # both contacts are closed and stiff
        np.testing.assert_allclose(model.force_q(q, v).toarray(), fq_fd, atol=1e-6 * scale)
        np.testing.assert_allclose(model.force_v(q, v).toarray(), fv_fd,
                                   atol=1e-6 * max(1.0, np.abs(fv_fd).max()))


def test_elastic_hertz_impact_max_penetration_and_rebound():
    K, n, h, r = 1e6, 1.5, 0.3, 0.1
    v0 = math.sqrt(2 * G * (h - r))
    res = linkdyn.simulate(dropped_disk(h, r, stiffness=K, exponent=n), 0.5, rtol=1e-10,
                           atol=1e-10, dt_out=1e-4)
    onset, separation = res.events[0], res.events[1]
    assert (onset.name, onset.direction, separation.direction) == ("floor", 1, -1)
    assert abs(onset.t - math.sqrt(2 * (h - r) / G)) < 1e-9
    # Energy: m v0^2 / 2 + m g d = K d^(n+1) / (n + 1) at the deepest point.
    dmax = brentq(lambda d: K * d**(n + 1) / (n + 1) - 0.5 * v0**2 - G * d, 1e-9, 0.1)
    delta = r - res.q[:, 1]
    assert abs(delta.max() - dmax) < 1e-3 * dmax    # sampled at 0.1 ms
    # The rebound: the same speed up (elastic), and energy conserved throughout.
    assert abs(speed_at(res, separation.t) - v0) < 1e-6
    assert abs(res.work).max() == 0.0
    # Energy is conserved to the tolerance: the error, made in the stiff contact phase,
    # falls in proportion to it (measured: 1.6e-4, 2.4e-6 J at 1e-8, 1e-10).
    loose = linkdyn.simulate(dropped_disk(h, r, stiffness=K, exponent=n), 0.5, rtol=1e-8,
                             atol=1e-8, dt_out=1e-4)
    assert np.ptp(res.energy) < np.ptp(loose.energy) / 30
    assert np.ptp(loose.energy) < 1e-4 * res.energy[0]


def test_penetration_history_follows_the_contact_equation_with_each_method():
    """A disk striking a Hertz floor at rtol 1e-10, with no step cap: its penetration over
    the contact phase against the contact's own 1-DOF equation (m delta'' = m g - K delta^n,
    DOP853 at 1e-13). Velocities are error-tested in their own right by both methods, so the
    velocity error that the onset leaves stays proportional to the tolerance, and with it the
    penetration's: within 1e-6 of the depth with each (measured 3.5e-7 with the BDF, 1.3e-10
    with the default; the BDF's was 1.35e-6 when velocities were tested through h e_v
    against the position tolerance)."""
    K, n, h, r = 1e6, 1.5, 0.3, 0.1
    v0 = math.sqrt(2 * G * (h - r))
    t_on = math.sqrt(2 * (h - r) / G)

    def rhs(t, y):
        return [y[1], G - (K * y[0]**n if y[0] > 0 else 0.0)]
    exact = solve_ivp(rhs, (0.0, 0.004), [0.0, v0], method="DOP853", rtol=1e-13, atol=1e-15,
                      dense_output=True)
    t = t_on + np.linspace(0.0, 0.004, 2001)
    depth = exact.sol(t - t_on)[0]
    inside = depth > 0
    assert inside.sum() > 1000 and depth.max() > 6e-3        # the whole contact phase
    for method in ("bdf", "auto"):
        res = linkdyn.simulate(dropped_disk(h, r, stiffness=K, exponent=n), 0.5, rtol=1e-10,
                               atol=1e-10, t_out=np.concatenate([[0.0], t]), method=method)
        delta = r - res.q[1:, 1]
        assert np.abs(delta - depth)[inside].max() < 1e-6 * depth.max(), method


def test_hunt_crossley_rebound_against_the_contact_equation():
    K, n, c, h, r = 1e6, 1.5, 0.2, 0.3, 0.1
    v0 = math.sqrt(2 * G * (h - r))
    res = linkdyn.simulate(dropped_disk(h, r, stiffness=K, exponent=n, damping=c), 0.3,
                           rtol=1e-10, atol=1e-10, dt_out=1e-4,
                           events=[ev.marker_crosses("centre", "y", 0.15, direction=+1,
                                                     terminal=False)])
    sep = [e for e in res.events if e.name == "floor" and e.direction == -1][0]
    v_sep, _ = one_dof(K, n, lambda d, dv: K * d**n * (1 + c * dv), v0)
    assert abs(speed_at(res, sep.t) - v_sep) < 1e-6 * v0
    assert any(e.name == "centre.y" for e in res.events)   # back up through 0.15 m
    # Hunt and Crossley's estimate for small damping: e = 1 - (2/3) c v0 (to a few percent).
    assert abs(v_sep / v0 - (1 - 2 * c * v0 / 3)) < 0.05
    # The energy the damping took is the energy lost, to the integration error of the
    # contact phase (about 1e-6 of it at rtol 1e-10; see the elastic test's proportionality).
    assert res.work[-1] < -0.1
    assert abs(res.energy[-1] - res.energy[0] - res.work[-1]) < 1e-5 * abs(res.work[-1])


def test_lankarani_nikravesh_restitution():
    K, n, e, h, r = 1e6, 1.5, 0.8, 0.3, 0.1
    v0 = math.sqrt(2 * G * (h - r))
    res = linkdyn.simulate(dropped_disk(h, r, stiffness=K, exponent=n,
                                        model="lankarani_nikravesh", restitution=e),
                           0.3, rtol=1e-10, atol=1e-10, dt_out=1e-4)
    sep = [x for x in res.events if x.direction == -1][0]
    v_sep, _ = one_dof(K, n, lambda d, dv: K * d**n * (1 + 0.75 * (1 - e * e) * dv / v0), v0)
    assert abs(speed_at(res, sep.t) - v_sep) < 1e-6 * v0
    # The reported normal force carries the damping set at the onset: rebuilt from the
    # contact law with the recorded approach speed.
    (t_imp, contact, speed), = res.impacts
    assert contact == "floor"            # by the contact's name (it was a record index)
    assert abs(speed - v0) < 1e-6
    delta = r - res.q[:, 1]
    rate = -res.v[:, 1]
    inside = (res.t > t_imp) & (delta > 0)
    law = K * delta[inside]**n * (1 + 0.75 * (1 - e * e) * rate[inside] / speed)
    np.testing.assert_allclose(res.element_force("floor")[inside], np.maximum(law, 0.0),
                               rtol=1e-9, atol=1e-9)
    # The model is built for a restitution near e: within 10 % at e = 0.8.
    assert abs(v_sep / v0 - e) < 0.1 * e
    assert abs(res.energy[-1] - res.energy[0] - res.work[-1]) < 1e-5 * abs(res.work[-1])


def test_resting_disk_settles_on_the_static_penetration():
    K, n, m = 1e6, 1.5, 2.0
    # Starting slightly pressed in (at zero penetration a Hertz contact has no stiffness).
    model = dropped_disk(0.1 - 1e-4, 0.1, m, stiffness=K, exponent=n, damping=5.0)
    eq = linkdyn.equilibrium(model)
    assert abs((0.1 - eq.q[1]) - (m * G / K) ** (1 / n)) < 1e-12
    np.testing.assert_allclose(eq.q[[0, 2, 3]], model.q0[[0, 2, 3]], atol=ROUNDOFF)
    # Free to slide and turn on a frictionless floor: neutral, not stable.
    assert eq.stable is None
    np.testing.assert_allclose(eq.stiffness_eigenvalues[:2], 0.0, atol=1e-6)


def test_a_disk_placed_exactly_on_its_floor_rests_there_and_one_thrown_up_from_it_leaves():
    K, n = 1e6, 1.5
    static = (G / K) ** (1 / n)       # 4.6e-4 m for 1 kg
    model = dropped_disk(0.1, 0.1, 1.0, stiffness=K, exponent=n, damping=5.0)
    res = linkdyn.simulate(model, 0.5, dt_out=0.005)
    # Released from zero penetration it overshoots to at most 2.5^(2/3) = 1.84 times the
    # static penetration (no damping: m g d = K d^2.5 / 2.5) and settles (decay rate about
    # 25 /s) on it. A contact decided open at its touching start fell through the floor.
    assert res.q[:, 1].min() > 0.1 - 1.85 * static
    assert abs((0.1 - res.q[-1, 1]) - static) < 1e-7
    # Thrown up from the same place at 1 m/s: it leaves at once, and lands 2 v / g later
    # (then bounces, its damping taking part of the speed).
    v0 = np.zeros(model.nq)
    v0[1] = 1.0
    res = linkdyn.simulate(model, 0.3, dt_out=0.01, v0=v0)
    onsets = [e.t for e in res.events if e.name == "floor" and e.direction > 0]
    assert abs(onsets[0] - 2.0 / G) < 1e-8
    assert res.q[res.t < 0.2, 1].min() >= 0.1 - 1e-12


@pytest.mark.parametrize("kwargs, match", [
    (dict(stiffness=-1.0), "stiffness"),
    (dict(stiffness=1e5, exponent=0.5), "exponent"),
    (dict(stiffness=1e5, damping=-1.0), "damping"),
    (dict(stiffness=1e5, model="lankarani_nikravesh"), "restitution"),
    (dict(stiffness=1e5, model="lankarani_nikravesh", restitution=1.2), "at most 1"),
    (dict(stiffness=1e5, restitution=0.5), "restitution belongs"),
    (dict(stiffness=1e5, model="kelvin"), "model must be"),
])
def test_bad_contacts_raise(kwargs, match):
    b = linkdyn.ModelBuilder("bad")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("disk", mass=1.0, inertia=0.01, position=(0.0, 0.2))
    with pytest.raises(ModelError, match=match) as info:
        b.add_contact("c", "disk.cm", "ground.O", 0.0, 0.1, **kwargs)
    assert info.value.entry == "c"
    with pytest.raises(ModelError, match="unknown body 'ghost'"):
        b.add_contact("c", "ghost.cm", "ground.O", 0.0, 0.1, stiffness=1e5)
    with pytest.raises(ModelError, match="on a body"):
        b.add_contact("c", "ground.O", "disk.cm", 0.0, 0.1, stiffness=1e5)


def test_contact_model_file_round_trip(tmp_path):
    model = dropped_disk(stiffness=1e6, model="lankarani_nikravesh", restitution=0.7)
    path = tmp_path / "drop.json"
    model.save(path)
    assert linkdyn.load_model(path) == model
    text = path.read_text().replace('"restitution": 0.7', '"restitution": 7.0')
    path.write_text(text)
    with pytest.raises(ModelFileError, match=r"contacts\[0\].*at most 1"):
        linkdyn.load_model(path)


def test_frictionless_block_slides_down_an_incline():
    # Two corner points on a line inclined at alpha, contacts damped: after the contact
    # settles the block slides with a = g sin(alpha) exactly (no friction yet).
    alpha, m, K = 0.3, 2.0, 1e6
    ca, sa = math.cos(alpha), math.sin(alpha)
    b = linkdyn.ModelBuilder("incline", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    # Block 0.2 x 0.1 resting on the line (its bottom corners on it), turned by alpha.
    cx, cy = 1.0 * ca - 0.05 * sa, 1.0 * sa + 0.05 * ca
    b.add_body("block", mass=m, inertia=m * (0.2**2 + 0.1**2) / 12,
               points={"left": (-0.1, -0.05), "right": (0.1, -0.05)},
               position=(cx, cy), angle=alpha)
    for corner in ("left", "right"):
        # Hunt-Crossley damping is proportional to the (tiny) penetration: a large c.
        b.add_contact(corner, f"block.{corner}", "ground.O", alpha, stiffness=K, exponent=1.0,
                      damping=500.0)
    model = b.build()
    r = linkdyn.simulate(model, 1.0, rtol=1e-10, atol=1e-10, dt_out=0.01)
    along = r.q[:, 0] * ca + r.q[:, 1] * sa
    late = r.t > 0.3   # the normal vibration has died out by then
    acc = np.polyfit(r.t[late], along[late], 2)[0] * 2
    assert abs(acc + G * sa) < 1e-6 * G
    # Each corner carries half the normal load m g cos(alpha).
    np.testing.assert_allclose(r.element_force("left")[late], 0.5 * m * G * ca, rtol=1e-6)
    np.testing.assert_allclose(r.element_force("right")[late], 0.5 * m * G * ca, rtol=1e-6)
