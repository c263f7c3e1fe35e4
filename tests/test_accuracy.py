"""Global accuracy against the tolerance, from loose to tight: the global error of the IFToMM
problems A01 and A02 and of the Jansen benchmark is proportional to rtol across 1e-4 ... 1e-12
(half-decade steps), with a constant that is the problem's own sensitivity times a small
factor of the method."""

import math
import os
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from conftest import ctrl_c_after

import linkdyn
from linkdyn.models import nfourbar, simple_pendulum
from linkdyn.models.iftomm import GRAVITY, LUMP_INERTIA, nfourbar_exact, pendulum_exact

#: rtol = atol = 1e-4, 10^-4.5, ..., 1e-12.
HALF_DECADES = tuple(10.0 ** (-k / 2) for k in range(8, 25))
JANSEN_REFERENCE = np.loadtxt(Path(__file__).parent / "data" / "jansen_reference.txt")


def errors_against(model, t_end, tolerances, marker, exact, proportional=True, method="bdf"):
    """Largest distance of ``marker`` from ``exact(t)`` over 400 outputs, per tolerance."""
    t = np.linspace(0.0, t_end, 401)
    reference = exact(t)
    out = []
    for tol in tolerances:
        r = linkdyn.simulate(model, t_end, rtol=tol, atol=tol, t_out=t,
                             proportional=proportional, method=method)
        out.append(np.max(np.hypot(*(r.marker(marker) - reference).T)))
    return np.array(out)


def jansen_errors(tolerances, proportional=True, method="bdf"):
    model = linkdyn.load_model("jansen")
    out = []
    for tol in tolerances:
        r = linkdyn.simulate(model, 10.0, rtol=tol, atol=tol, t_out=JANSEN_REFERENCE[:, 0],
                             proportional=proportional, method=method)
        markers = model.marker_positions(r.q).reshape(len(r.t), 4)
        out.append(np.max(np.abs(markers - JANSEN_REFERENCE[:, 1:5])))
    return np.array(out)


def slope(tolerances, errors):
    """Least-squares slope of log(error) against log(tolerance): 1 is proportionality."""
    return np.polyfit(np.log10(tolerances), np.log10(errors), 1)[0]


def energy_sensitivity(rhs, y0, perturbed_y0, position, t_end, eps):
    """Largest distance (m) between the exact motions from two initial states whose energies
    differ by the fraction eps of the motion's energy range, divided by eps: how far an
    integrator's relative energy error moves the benchmark's point by the end."""
    t = np.linspace(0.0, t_end, 4001)
    runs = [solve_ivp(rhs, (0.0, t_end), y, method="DOP853", rtol=1e-13, atol=1e-13,
                      t_eval=t).y for y in (y0, perturbed_y0)]
    return np.max(np.hypot(*(position(runs[1]) - position(runs[0])))) / eps


def a01_sensitivity(eps=1e-7):
    # phi from the downward vertical, released at rest from phi0 = pi/2: the energy range is
    # m g L (1 - cos phi0); raising it by the fraction eps starts from cos phi0 = -eps.
    w2 = GRAVITY / (1.0 + LUMP_INERTIA)
    return energy_sensitivity(lambda _, y: [y[1], -w2 * math.sin(y[0])], [math.pi / 2, 0.0],
                              [math.acos(-eps), 0.0],
                              lambda y: np.array([np.sin(y[0]), -np.cos(y[0])]), 10.0, eps)


def a02_sensitivity(n, eps=1e-7):
    # The rockers' angle theta: J theta'' = -K cos theta (nfourbar_exact). The energy range
    # from the bottom (theta = -pi/2) is J w0^2 / 2 + 2 K; eps of it added as kinetic energy.
    J, K = (n + 1) / 3.0 + n, GRAVITY * ((n + 1) / 2.0 + n)
    w0 = -math.sqrt(1.0 + 2.0 * eps * (0.5 * J + 2.0 * K) / J)
    return energy_sensitivity(lambda _, y: [y[1], -K / J * math.cos(y[0])], [math.pi / 2, -1.0],
                              [math.pi / 2, w0],
                              lambda y: np.array([np.cos(y[0]), np.sin(y[0])]), 20.0, eps)


def test_energy_sensitivities_of_the_benchmark_problems():
    """The conditioning the global errors below are measured against: a relative energy
    error eps moves A01's mass by about 10 eps m over its 10 s and A02's B0 by about 900 eps
    m over 20 s (the bars creep over the top at 1 m/s after passing the bottom with some
    70 J of kinetic energy, so the time spent there is sensitive to the energy)."""
    assert a01_sensitivity() == pytest.approx(10.1, rel=0.02)
    assert a02_sensitivity(2) == pytest.approx(916, rel=0.02)
    assert a02_sensitivity(40) == pytest.approx(886, rel=0.02)


def test_global_error_is_proportional_to_the_tolerance_from_1e_4_to_1e_12():
    """Seventeen tolerances, half a decade apart. The fitted slope of log(error) against
    log(rtol) is 1 within 0.15 (measured 1.05 on A01, 0.97 on A02, 1.06 on Jansen), and every
    error lies between 0.5 and 100 times the problem's energy sensitivity times the
    tolerance (measured 3 to 15 on A01, 2 to 37 on A02): the method's own constant is the
    same on both, and the problems' conditioning (10 and 900 m per relative energy error) is
    what makes A02's errors larger. A02 starts at 10^-4.5: at 1e-4 the error is that of the
    motion's size (the phase is off by a large part of a turn). This is the BDF and its
    tolerance transform; the default method's accuracy is tested below."""
    a01 = errors_against(simple_pendulum(), 10.0, HALF_DECADES, "P1", pendulum_exact)
    a02_tols = HALF_DECADES[1:]
    a02 = errors_against(nfourbar(2), 20.0, a02_tols, "B0", lambda t: nfourbar_exact(2, t))
    jansen = jansen_errors(HALF_DECADES)
    assert 0.9 < slope(HALF_DECADES, a01) < 1.15
    assert 0.85 < slope(a02_tols, a02) < 1.15
    assert 0.9 < slope(HALF_DECADES, jansen) < 1.15
    for tols, errors, sensitivity in ((HALF_DECADES, a01, a01_sensitivity()),
                                      (a02_tols, a02, a02_sensitivity(2))):
        constant = errors / (sensitivity * np.array(tols))
        assert np.all(constant > 0.5) and np.all(constant < 100), constant


def test_the_default_methods_error_is_proportional_to_the_tolerance():
    """The default, method auto, over the same seventeen tolerances: the explicit method
    on A02 and Jansen, the BDF on A01 (its lumped mass makes the explicit accelerations
    ill-conditioned). Slopes near 1 (measured 1.05 to 1.09) and every error within the
    promise of 1000 tol (lengths of order 1 m), on A02 too, which magnifies a relative
    energy error by some 900 m. Measured: A01 29 to 152 tol, Jansen 0.4 to 37 tol, A02 54 to
    584 tol with N = 2 and 117 to 544 tol with N = 40, which reaches 40 m, so that at 1e-12
    its local tolerance is held at the round-off floor, 8.9e-13 (233 tol). The BDF alone
    reaches 34,000 tol on A02; the explicit method reached 5,100 tol on it while its stages
    could switch between two right-hand sides within a step (ld_rk.c, "Conditioning")."""
    a01 = errors_against(simple_pendulum(), 10.0, HALF_DECADES, "P1", pendulum_exact,
                         method="auto")
    a02 = errors_against(nfourbar(2), 20.0, HALF_DECADES, "B0", lambda t: nfourbar_exact(2, t),
                         method="auto")
    a02_40 = errors_against(nfourbar(40), 20.0, HALF_DECADES, "B0",
                            lambda t: nfourbar_exact(40, t), method="auto")
    jansen = jansen_errors(HALF_DECADES, method="auto")
    tols = np.array(HALF_DECADES)
    for errors in (a01, a02, a02_40, jansen):
        assert 0.85 < slope(HALF_DECADES, errors) < 1.2
        assert np.all(errors < 1000 * tols), errors / tols


def test_without_the_transform_the_error_falls_slower_than_the_tolerance():
    """proportional=False tests the local error against rtol itself; the global error of
    an order-k step then goes like rtol^(k/(k+1)) and less: measured slopes 0.79 (A02) and
    0.84 (Jansen) against 0.98 and 1.06 with the transform, over the same tolerances."""
    a02_tols = HALF_DECADES[1:]
    exact = lambda t: nfourbar_exact(2, t)  # noqa: E731
    plain = errors_against(nfourbar(2), 20.0, a02_tols, "B0", exact, proportional=False)
    assert slope(a02_tols, plain) < 0.9
    assert slope(HALF_DECADES, jansen_errors(HALF_DECADES, proportional=False)) < 0.9


# -- estimate_error: the global error from a run refine times tighter ----------------------

@pytest.mark.parametrize("problem", ["A01", "A02"])
def test_estimated_error_matches_the_true_error(problem):
    """At rtol 1e-5, 1e-7 and 1e-9 the largest estimated error of the benchmark's point is
    within 20% of the largest true error (measured 0.99 to 1.01 times on A02), and so is the
    error at each output row where it matters (rows above a tenth of the largest; within
    0.7% on A02), though A02's errors are a thousand times A01's at the same tolerance. At
    1e-10 the refined run (1e-12) comes near the round-off floor and A02's estimate is 1.2
    times its true error: the estimate needs a refined run well clear of the floor."""
    if problem == "A01":
        model, t_end, marker, exact = simple_pendulum(), 10.0, "P1", pendulum_exact
    else:
        model, t_end, marker = nfourbar(2), 20.0, "B0"
        exact = lambda t: nfourbar_exact(2, t)  # noqa: E731
    t = np.linspace(0.0, t_end, 401)
    reference = exact(t)
    for tol in (1e-5, 1e-7, 1e-9):
        e = linkdyn.estimate_error(model, t_end, rtol=tol, atol=tol, t_out=t)
        assert e.status == "success" and np.array_equal(e.t, t) and e.refine == 100.0
        true = np.hypot(*(e.result.marker(marker) - reference).T)
        estimate = e.marker(marker)
        assert e.max_marker(marker) == pytest.approx(true.max(), rel=0.2)
        big = true > 0.1 * true.max()
        assert np.all(np.abs(estimate[big] / true[big] - 1.0) < 0.5)
        # The reference run is the tighter one, with the same rows.
        assert e.reference.stats["local_rtol"] < e.result.stats["local_rtol"] / 10
        assert e.q.shape == e.v.shape == e.result.q.shape
        assert np.all(e.q >= 0.0)


def test_estimated_error_of_a_spatial_marker_is_its_distance_in_space():
    """The heavy top's tip, against a run at rtol 1e-13: at rtol 1e-6, 1e-8 and 1e-10 the
    largest estimated error is within 20% of the largest true one (measured 0.996 to
    0.999 times), row by row within 50% where it matters. The estimate is the distance in
    space: it used to leave out z (the tip's error along z is as large as across)."""
    t = np.linspace(0.0, 1.0, 201)
    reference = linkdyn.simulate("heavy_top", 1.0, rtol=1e-13, atol=1e-13,
                                 t_out=t).marker("tip")
    for tol in (1e-6, 1e-8, 1e-10):
        e = linkdyn.estimate_error("heavy_top", 1.0, rtol=tol, atol=tol, t_out=t)
        diff = e.result.marker("tip")[e.rows] - e.reference.marker("tip")[e.reference_rows]
        assert np.abs(diff[:, 2]).max() > 0.1 * np.abs(diff[:, :2]).max()
        np.testing.assert_array_equal(e.marker("tip"), np.linalg.norm(diff, axis=1))
        true = np.linalg.norm(e.result.marker("tip") - reference, axis=1)
        assert e.max_marker("tip") == pytest.approx(true.max(), rel=0.2)
        big = true > 0.1 * true.max()
        assert np.all(np.abs(e.marker("tip")[big] / true[big] - 1.0) < 0.5)


def test_estimate_with_a_terminal_event_covers_the_common_rows():
    """The pendulum stopped where its mass passes x = 0 (the event time differs between the
    two runs by about the first run's error): the rows both runs have are compared, the event
    row is not."""
    from linkdyn.events import marker_crosses

    t = np.linspace(0.0, 1.0, 101)
    e = linkdyn.estimate_error(simple_pendulum(), 1.0, rtol=1e-7, atol=1e-7, t_out=t,
                               events=[marker_crosses("P1", "x", 0.0, direction=-1)])
    assert e.result.status == e.reference.status == e.status == "event"
    t_event = e.result.t[-1]
    assert 0.3 < t_event < 1.0 and t_event not in t
    assert np.array_equal(e.t, t[t < t_event])
    true = np.hypot(*(e.result.marker("P1")[e.rows] - pendulum_exact(e.t)).T)
    assert e.max_marker("P1") == pytest.approx(true.max(), rel=0.2)


def test_estimate_error_refuses_what_it_cannot_do():
    model = simple_pendulum()
    for refine in (5.0, float("nan"), True, "100"):
        with pytest.raises(ValueError, match="refine must be a finite number of at least 10"):
            linkdyn.estimate_error(model, 1.0, refine=refine)
    with pytest.raises(ValueError, match=r"rtol / refine = 1e-15 is below .*\(1e-14\)"):
        linkdyn.estimate_error(model, 1.0, rtol=1e-13, atol=1e-10)
    with pytest.raises(ValueError, match="does not take controller"):
        linkdyn.estimate_error(model, 1.0, controller=lambda t, s: {}, control_period=0.1)
    with pytest.raises(ValueError, match="does not take record"):
        linkdyn.estimate_error(model, 1.0, record=linkdyn.Record(markers=["P1"]))
    # rtol 1e-12: the reference run at 1e-14 would be held at the local-tolerance floor,
    # hardly tighter than the first run (2.2e-14 against 2.7e-14).
    with pytest.raises(ValueError, match="round-off floor .* loosen rtol"):
        linkdyn.estimate_error(model, 1.0, rtol=1e-12, atol=1e-12)
    # What simulate refuses, estimate_error refuses alike.
    with pytest.raises(ValueError, match="t_end"):
        linkdyn.estimate_error(model, -1.0)


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_during_the_first_run_stops_the_estimate():
    model = linkdyn.chain(60)
    with ctrl_c_after(0.3):
        e = linkdyn.estimate_error(model, 1000.0, rtol=1e-8, atol=1e-8, dt_out=0.01)
    assert e.status == "interrupted" and e.reference is None
    assert e.result.status == "interrupted" and 0 < len(e.result.t) < 100_001
    assert e.t.size == 0 and e.q.shape == (0, model.nq)
    with pytest.raises(ValueError, match="no reference run"):
        e.marker("tip")


def test_rows_of_runs_with_repeated_times_pair_in_order():
    from linkdyn.accuracy import _common_rows

    a = np.array([0.0, 0.5, 0.5, 1.0, 1.5])      # an event row at an output time
    b = np.array([0.0, 0.5, 1.0, 1.25])          # stopped earlier, different last row
    ia, ib = _common_rows(a, b)
    assert ia.tolist() == [0, 1, 3] and ib.tolist() == [0, 1, 2]
    ia, ib = _common_rows(np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    assert ia.tolist() == ib.tolist() == [0, 1]
