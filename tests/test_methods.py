"""The integration methods of simulate: the explicit Runge-Kutta method on the index-1 form
(method="rk", csrc/ld_rk.c), method="auto" and the BDF, against known solutions and each
other."""

import os
import signal
from pathlib import Path

import numpy as np
import pytest

import linkdyn
from linkdyn import simulate
from linkdyn.models.iftomm import nfourbar, nfourbar_exact, simple_pendulum

from conftest import ctrl_c_after


@pytest.fixture(scope="module")
def jansen():
    return linkdyn.load_model("jansen")


@pytest.fixture(scope="module")
def reference():
    """Jansen's P3 over 10 s from the test data (an independent solution, see
    tests/data/make_jansen_reference.py): rows t, P3 x, P3 y, ..."""
    return np.loadtxt(Path(__file__).parent / "data" / "jansen_reference.txt")


def p3_error(result, reference):
    """Largest distance of P3 from the reference, the run's output times being the
    reference's first ones."""
    ref = reference[:len(result.t)]
    np.testing.assert_array_equal(result.t, ref[:, 0])
    return float(np.max(np.hypot(*(result.marker("P3") - ref[:, 1:3]).T)))


def test_explicit_error_follows_the_tolerance_on_jansen(jansen, reference):
    # Global error at rtol = atol = tol against the independent reference: within 1000 tol
    # (the promise for the default method, lengths of order 1 m), and falling with the
    # tolerance at least in proportion (measured: 4.5e-6, 4.0e-8, 8.9e-11 m at 1e-6, 1e-8,
    # 1e-10: slope 1.18; the order-8 method gains more than proportionally at tight ones).
    tols = [1e-6, 1e-8, 1e-10]
    errors = []
    for tol in tols:
        r = simulate(jansen, reference[-1, 0], rtol=tol, atol=tol, t_out=reference[:, 0],
                     method="rk")
        assert r.stats["rk_steps"] == r.stats["steps"] > 0
        errors.append(p3_error(r, reference))
    for tol, err in zip(tols, errors):
        assert err < 1000 * tol, (tol, err)
    slope = np.polyfit(np.log(tols), np.log(errors), 1)[0]
    assert 0.8 < slope < 1.5, (errors, slope)


def test_explicit_method_is_of_high_order(jansen, reference):
    # Error against the work: an order-8 method's global error falls like steps^-8 (for
    # the BDF, order <= 5, it falls like steps^-5 at best). Measured: 446, 597, 799 steps
    # for 2.5e-9, 1.8e-10, 4.5e-12 m (rtol 1e-7, 1e-8, 1e-9; at 1e-10 and below the error
    # meets the reference's, some 1e-11 m), slope -10.8; the bound -6 leaves margin to
    # machine-dependent step sequences and still refuses a method of order 5.
    steps, errors = [], []
    for tol in (1e-7, 1e-8, 1e-9):
        r = simulate(jansen, 4.0, rtol=tol, atol=tol, t_out=reference[:401, 0], method="rk")
        steps.append(r.stats["steps"])
        errors.append(p3_error(r, reference))
    slope = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert slope < -6.0, (steps, errors, slope)


def test_methods_agree_and_explicit_work_counters(jansen):
    bdf = simulate(jansen, 2.0, rtol=1e-10, atol=1e-10, method="bdf")
    rk = simulate(jansen, 2.0, rtol=1e-10, atol=1e-10, method="rk")
    # BDF's own error at 1e-10 is 2.4e-7 m on this linkage; the explicit one's 1e-9.
    assert np.abs(rk.marker("P3") - bdf.marker("P3")).max() < 2e-6
    st = rk.stats
    assert st["bdf_steps"] == 0 and st["rk_steps"] == st["steps"]
    # 12 right-hand sides per step attempt, 3 more for each step that writes output rows
    # (at most one per row), one per start.
    attempts = st["steps"] + st["rejected_steps"]
    assert 11 * attempts <= st["rhs_evaluations"] <= 12 * attempts + 3 * len(rk.t) + 10
    assert st["schur_factorizations"] >= st["rhs_evaluations"]
    # Rows are consistent: positions, velocities, and no BDF statistics involved.
    assert rk.phi_norm.max() < 1e-11
    assert st["newton_iterations"] == 0


def test_explicit_method_through_singular_configurations():
    # IFToMM A02 (two windows): the N-four-bar passes through configurations where all its
    # bars lie on the ground line, twice per turn, and Phi_q loses rank there. The explicit
    # method's stages and projections go through them (against the BDF at a tight
    # tolerance).
    model = nfourbar(2)
    rk = simulate(model, 5.0, rtol=1e-9, atol=1e-9, method="rk")
    bdf = simulate(model, 5.0, rtol=1e-11, atol=1e-11, method="bdf")
    assert rk.status == "success"
    assert np.abs(rk.q - bdf.q).max() < 1e-5
    assert rk.stats["steps"] < bdf.stats["steps"]


def test_events_are_located_alike_by_each_method(jansen):
    event = linkdyn.events.marker_crosses("P3", "x", 0.0, terminal=False)
    times = {}
    for method in ("bdf", "rk", "auto"):
        r = simulate(jansen, 3.0, rtol=1e-10, atol=1e-10, events=[event], method=method)
        times[method] = np.array([e.t for e in r.events])
        assert len(times[method]) >= 4
    assert len(times["rk"]) == len(times["bdf"]) == len(times["auto"])
    # Each method's event times carry its own global error (BDF: 2.4e-7 m at 1e-10, at
    # speeds of order 1 m/s).
    np.testing.assert_allclose(times["rk"], times["bdf"], atol=1e-6)
    np.testing.assert_array_equal(times["rk"], times["auto"])


def test_auto_hands_a_stiff_mechanism_to_the_bdf():
    # A mass hung from a stiff, heavily damped spring (k = 1e7 N/m, c = 1e5 N s/m on 1 kg:
    # a mode that decays at 1e5 1/s beside the swing's 3 rad/s) is stiff for an explicit
    # method. Auto detects it, switches and agrees with the BDF alone; "rk" stays explicit.
    b = linkdyn.ModelBuilder("stiff", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("bob", mass=1.0, inertia=0.01, points={"c": (0.0, 0.0)}, position=(0.6, -0.8))
    b.add_spring_damper("spring", "ground.O", "bob.c", stiffness=1e7, damping=1e5,
                        free_length=1.0)
    model = b.build()
    auto = simulate(model, 0.5, rtol=1e-8, atol=1e-8, method="auto")
    bdf = simulate(model, 0.5, rtol=1e-8, atol=1e-8, method="bdf")
    assert auto.stats["switches_to_bdf"] >= 1 and auto.stats["bdf_steps"] > 0
    assert auto.stats["steps"] < 3 * bdf.stats["steps"]
    assert np.abs(auto.q[-1] - bdf.q[-1]).max() < 1e-6
    rk = simulate(model, 0.05, rtol=1e-8, atol=1e-8, method="rk")
    assert rk.stats["bdf_steps"] == 0 and rk.stats["switches_to_bdf"] == 0


def test_record_with_the_explicit_method_matches_whole_rows(jansen):
    full = simulate(jansen, 1.0, rtol=1e-9, atol=1e-9, method="rk")
    record = linkdyn.Record(markers=["P3"], bodies=["L1"])
    r = simulate(jansen, 1.0, rtol=1e-9, atol=1e-9, record=record, method="rk")
    np.testing.assert_allclose(r.marker("P3"), full.marker("P3"), rtol=0, atol=1e-13)
    np.testing.assert_allclose(r.body_angle("L1"), full.body_angle("L1"), rtol=0, atol=1e-12)
    assert r.stats["steps"] == full.stats["steps"]


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_stops_the_explicit_method_and_keeps_what_it_computed():
    model = linkdyn.chain(60)
    with ctrl_c_after(0.3) as caught:
        r = simulate(model, 1000.0, rtol=1e-10, atol=1e-10, dt_out=0.01, method="rk")
    assert r.status == "interrupted"
    assert any("interrupted" in str(w.message) for w in caught)
    assert 0 < len(r.t) < 100_001 and r.t[-1] < 1000.0
    assert np.all(np.isfinite(r.q)) and r.phi_norm.max() < 1e-8
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("method", ["Rk", "dopri", 3, None])
def test_unknown_method_is_refused_by_name(method):
    with pytest.raises(ValueError, match="method must be one of 'bdf', 'rk', 'auto'"):
        simulate(linkdyn.chain(2), 0.1, method=method)


def test_energy_of_a_free_chain_is_kept_in_proportion_to_the_tolerance():
    # A free 4-bar chain under gravity is chaotic; its energy is an invariant. With the
    # explicit method the relative drift falls with the tolerance (measured 2.6e-9 and
    # 3.3e-11 at rtol 1e-7 and 1e-9).
    model = linkdyn.chain(4, length=0.25)
    drifts = []
    for tol in (1e-7, 1e-9):
        r = simulate(model, 2.0, rtol=tol, atol=tol, method="rk")
        drifts.append(float(np.ptp(r.energy)) / max(1.0, float(np.abs(r.energy).max())))
        assert drifts[-1] < 1000 * tol
    assert drifts[1] < drifts[0] / 10


def test_the_default_method_is_auto(jansen):
    r = simulate(jansen, 0.2)
    assert r.stats["rk_steps"] == r.stats["steps"] > 0
    assert r.stats["bdf_steps"] == 0 and r.stats["switches_to_bdf"] == 0


def test_auto_starts_the_bdf_where_the_accelerations_are_ill_conditioned():
    # IFToMM A01's lumped mass has 1e-12 kg m^2 about its centre: S = Phi_q M^-1 Phi_q^T has
    # a relative pivot of 1e-12, so the explicit method's accelerations would carry
    # rounding errors of 1e-4 (its steps shrank like the tolerance: 1.2 million at 1e-8).
    # Auto starts the BDF at once, and at a hundredth of its tolerances, as a cost trial
    # brings it in (csrc/ld_run.c, "Cost trials"): the accuracy the explicit method would
    # give, not the BDF's own. Measured against the exact motion: 8.3e-7 and 1.3e-10 m at
    # rtol 1e-6 and 1e-10, the BDF alone 3.7e-5 and 2.2e-9 m.
    from linkdyn.models.iftomm import pendulum_exact

    model = simple_pendulum()
    for tol in (1e-6, 1e-10):
        auto = simulate(model, 5.0, rtol=tol, atol=tol, dt_out=0.01)
        bdf = simulate(model, 5.0, rtol=tol, atol=tol, dt_out=0.01, method="bdf")
        assert auto.stats["rk_steps"] == 0 and auto.stats["switches_to_bdf"] == 1
        assert auto.stats["bdf_steps"] == auto.stats["steps"] > bdf.stats["steps"]
        err_auto, err_bdf = (np.abs(r.marker("P1") - pendulum_exact(r.t)).max()
                             for r in (auto, bdf))
        assert err_auto < 10 * tol and err_auto < err_bdf / 5


@pytest.mark.parametrize("tol", [1e-11, 1e-12])
def test_explicit_method_crosses_singular_configurations_at_tight_tolerances(tol):
    # IFToMM A02 with 40 windows (81 bars), 20 s, eight crossings of the ground line. Near
    # them the stages take their accelerations at velocities projected onto the velocity
    # constraints, every stage of a step alike (ld_rk.c, "Conditioning"); without that the
    # step shrank towards the singular point and stalled at these tolerances, and with a
    # switch between stages the crossings cost up to 5,100 tol. Measured: 1.4e-9 and
    # 2.3e-10 m (142 and 233 tol), with no hand-over to the BDF (whose own error here is
    # 1.3e-7 m at 1e-12).
    t = np.linspace(0.0, 20.0, 401)
    r = simulate(nfourbar(40), 20.0, rtol=tol, atol=tol, t_out=t)
    assert r.stats["bdf_steps"] == 0 and r.stats["switches_to_bdf"] == 0
    error = np.max(np.hypot(*(r.marker("B0") - nfourbar_exact(40, t)).T))
    assert error < 1000 * tol
    # the steps near the crossings project, the others do not (measured: 54 of 386 steps
    # at 1e-9, 73 of 682 at 1e-11)
    assert 8 <= r.stats["rk_projected_steps"] < r.stats["rk_steps"] / 3


def test_a_long_regular_chain_is_not_taken_for_a_singular_configuration():
    # A planar chain of a thousand bars never comes near a singular configuration, but its
    # S's pivot ratio is some 2.5e-4 (it falls like the inverse of the length), below the
    # 1e-3 that marks one for a well-conditioned model: the limits are relative to the
    # run's start (ld_rk.c, "Conditioning"), so no step projects, and the energy is kept to
    # the tolerance all the same.
    model = linkdyn.chain(1000, length=0.03)
    r = simulate(model, 0.2, rtol=1e-6, atol=1e-6, method="rk", dt_out=0.01)
    assert r.stats["rk_steps"] > 100 and r.stats["rk_projected_steps"] == 0
    energy = r.energy
    assert np.ptp(energy) < 1e-6 * np.abs(energy).max()     # measured: 5e-15


def test_auto_agrees_with_the_bdf_on_a_contact_that_turns_stiff():
    # A disk dropped on a stiff, damped Hertz floor (K = 1e9 N/m^1.5, damping 20 s/m)
    # bounces (8 contact events, the explicit method between and through them) and comes
    # to rest on the floor, where the contact is stiff: auto hands over to the BDF there.
    # Against a BDF run at 1e-12, its event times are off by 2.5e-8 s at rtol 1e-8 (the
    # BDF alone's by 3.0e-6 s) and its resting height by 1e-14 m (the BDF's 1e-8 m).
    b = linkdyn.ModelBuilder("drop", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("disk", mass=1.0, inertia=0.005, position=(0.0, 0.3))
    b.add_contact("floor", "disk.cm", "ground.O", 0.0, 0.1, stiffness=1e9, exponent=1.5,
                  damping=20.0)
    model = b.build()
    ref = simulate(model, 1.0, rtol=1e-12, atol=1e-12, dt_out=1e-3, method="bdf")
    auto = simulate(model, 1.0, rtol=1e-8, atol=1e-8, dt_out=1e-3)
    bdf = simulate(model, 1.0, rtol=1e-8, atol=1e-8, dt_out=1e-3, method="bdf")
    assert auto.stats["rk_steps"] > 0 and auto.stats["switches_to_bdf"] >= 1
    assert len(auto.events) == len(bdf.events) == len(ref.events) >= 8
    times = np.array([e.t for e in ref.events])
    np.testing.assert_allclose([e.t for e in auto.events], times, rtol=0, atol=1e-6)
    np.testing.assert_allclose([e.t for e in bdf.events], times, rtol=0, atol=1e-5)
    # At rest: m g = K d^1.5, d = 4.6e-6 m.
    depth = 0.1 - auto.q[-1, 1]
    assert depth == pytest.approx((9.81 / 1e9) ** (2 / 3), rel=1e-3)
    assert abs(auto.q[-1, 1] - ref.q[-1, 1]) < 1e-7


def test_cost_trials_hand_a_damped_governor_to_the_bdf():
    # IFToMM A05's stiff dampers keep the explicit method's steps near its stability limit
    # without tripping its stiffness test (h |lambda| about 1.9 and 0.85 at rtol 1e-6 and 1e-8
    # against 6.1). Auto tries the BDF, finds it cheaper and keeps it; the run then costs
    # 13 to 20 times less work than the explicit method (asserted: over 5), and its BDF,
    # at a hundredth of its own tolerances, is within a tolerance of a 1e-12 reference
    # (measured 0.1 to 0.2 tol; the BDF alone at its own tolerances: 5 to 11 tol).
    from linkdyn.models.spatial import flyball_governor

    model, t = flyball_governor(), np.linspace(0.0, 2.0, 201)
    ref = simulate(model, 2.0, rtol=1e-12, atol=1e-12, t_out=t, method="bdf").marker("S")
    for tol in (1e-6, 1e-8):
        auto = simulate(model, 2.0, rtol=tol, atol=tol, t_out=t)
        rk = simulate(model, 2.0, rtol=tol, atol=tol, t_out=t, method="rk")
        assert auto.stats["trials_kept"] >= 1 and auto.stats["cost_trials"] >= 1
        assert auto.stats["bdf_steps"] > 3 * auto.stats["rk_steps"] > 0
        assert auto.stats["work_units"] < rk.stats["work_units"] / 5
        assert rk.stats["cost_trials"] == 0
        assert np.abs(auto.marker("S") - ref).max() < 10 * tol


def test_no_cost_trials_where_the_explicit_method_is_cheaper_or_contacts_are(jansen):
    # Jansen's steps stay far from the stability limit (h |lambda| below 0.33): no trial, the
    # run is explicit throughout. The walker's stance phases come near it (h |lambda| up to
    # 18), but with compliant contacts the trials stay off: at their onsets the BDF's
    # velocity error is the larger one.
    r = simulate(jansen, 2.0, rtol=1e-8, atol=1e-8)
    assert r.stats["cost_trials"] == 0 and r.stats["bdf_steps"] == 0
    walker = simulate(linkdyn.load_model("walker_gait1"), 2.0, rtol=1e-8, atol=1e-8)
    assert walker.stats["cost_trials"] == 0 and walker.stats["bdf_steps"] == 0


def test_cost_trials_are_deterministic_and_pay_off():
    # A flexible arm at rtol 1e-6: its springs bring the explicit steps near the limit, the
    # BDF is tried and kept, and a trial of the explicit method later loses. Work is counted,
    # not timed, so two runs are the same to the bit; the run's work is two thirds of the
    # explicit method's alone (measured 2,294 against 3,451 units).
    model = linkdyn.load_model("flexible_arm")
    a = simulate(model, 2.0, rtol=1e-6, atol=1e-6)
    b = simulate(model, 2.0, rtol=1e-6, atol=1e-6)
    rk = simulate(model, 2.0, rtol=1e-6, atol=1e-6, method="rk")
    assert a.stats["cost_trials"] >= 2 and a.stats["trials_kept"] >= 1
    np.testing.assert_array_equal(a.q, b.q)
    assert a.stats["work_units"] < 0.8 * rk.stats["work_units"]


def test_a_long_explicit_stretch_asks_for_a_trial(monkeypatch):
    """A flexible arm whose joints are 1e14 N m/rad: the fast oscillation the start excites
    (some 1e-13 rad) keeps the explicit steps at 2e-9 s for accuracy, well inside the
    stability limit, so the stiffness test never fires; 0.01 s took five million steps
    and failed at the step budget. A stretch of 4,096 explicit attempts now asks for a trial
    of the BDF, which damps that oscillation and is kept. The tip follows a tight BDF
    reference (measured 1.7e-11 m over a 2.9 mm motion)."""
    from linkdyn.models import spatial

    monkeypatch.setitem(spatial.FLEXIBLE_ARM, "stiffness", [1e14, 1e14])
    model, t = spatial.flexible_arm(), np.linspace(0.0, 0.01, 11)
    auto = simulate(model, 0.01, t_out=t)
    ref = simulate(model, 0.01, t_out=t, method="bdf", rtol=1e-10, atol=1e-10)
    s = auto.stats
    assert s["cost_trials"] == 1 and s["trials_kept"] == 1
    assert s["rk_steps"] + s["rejected_error_test"] <= 4096 + 100
    assert 0 < s["bdf_steps"] < 1000
    assert np.abs(auto.marker("tip") - ref.marker("tip")).max() < 1e-6


@pytest.mark.parametrize("method", ["bdf", "auto"])
def test_tolerances_near_the_round_off_floor_on_the_driven_jansen_linkage(method):
    """At rtol 1e-12 the BDF's local tolerance (2.7e-14) sits near the round-off floor; at
    t = 0.9357 s its order-5 corrector noise once failed every other error test whatever
    the step, and the run stopped with a step of 1e-14 s. A driven linkage's positions and
    velocities are its kinematic analysis' (Phi(q, t) = 0 fixes them), an independent
    solution to round-off: each method must reach it, with few rejected steps."""
    model = linkdyn.load_model("jansen_driven")
    times = np.linspace(0.0, 2.0, 201)
    r = simulate(model, 2.0, rtol=1e-12, atol=1e-12, method=method, t_out=times)
    k = linkdyn.kinematics(model, times)
    assert np.abs(r.q - k.q).max() < 1e-10
    assert np.abs(r.v - k.v).max() < 1e-9
    assert r.stats["rejected_error_test"] < 0.2 * r.stats["steps"]
