"""IFToMM multibody benchmark problems A01 (simple pendulum) and A02 (N-four-bar through its
singular configurations) against their exact motions: errors fall as the tolerance
tightens, energy is conserved, and the windows stay parallelograms."""

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ModelError
from linkdyn.models import nfourbar, simple_pendulum
from linkdyn.models.iftomm import LUMP_INERTIA, nfourbar_exact, pendulum_exact
from conftest import ROUNDOFF


def test_pendulum_exact_solution_is_a_pendulum():
    """The closed form itself: released at (1, 0), through the bottom at the quarter
    period with the speed energy gives, back at (-1, 0) after half a period."""
    from scipy.special import ellipk

    quarter = ellipk(0.5) / np.sqrt(9.81 / (1.0 + LUMP_INERTIA))
    p = pendulum_exact([0.0, quarter, 2 * quarter])
    assert np.allclose(p, [[1, 0], [0, -1], [-1, 0]], atol=1e-12)


def test_a01_pendulum_errors_fall_with_the_tolerance():
    model = simple_pendulum()
    errors = []
    for tol in (1e-6, 1e-8, 1e-10):
        r = linkdyn.simulate(model, 10.0, rtol=tol, atol=tol, dt_out=0.01)
        errors.append(np.max(np.abs(r.marker("P1") - pendulum_exact(r.t))))
        energy = r.energy
        assert np.max(np.abs(energy - energy[0])) < 100 * tol * 9.81
    assert errors[0] < 1e-3 and errors[1] < 1e-5 and errors[2] < 1e-7
    assert errors[1] < errors[0] / 30 and errors[2] < errors[1] / 30


def test_a01_over_the_benchmarks_2000_seconds():
    """A01 as the benchmark specifies it: 2000 s (some 850 swings), error over 4000 outputs.
    rtol 1e-8 meets the low-precision bound (1e-1 m; measured 4.3e-4 m), rtol 1e-10 the
    high-precision bound (1e-3 m; measured 6.3e-6 m, 1,564,097 steps of the BDF, which method
    auto runs at a hundredth of its tolerances here)."""
    model = simple_pendulum()
    t = np.linspace(0.0, 2000.0, 4001)
    exact = pendulum_exact(t)
    errors = {}
    for tol in (1e-8, 1e-10):
        r = linkdyn.simulate(model, 2000.0, rtol=tol, atol=tol, t_out=t)
        errors[tol] = np.max(np.hypot(*(r.marker("P1") - exact).T))
        energy = r.energy
        assert np.max(np.abs(energy - energy[0])) < 1e4 * tol * 9.81
    assert errors[1e-8] < 1e-1 and errors[1e-10] < 1e-3
    assert errors[1e-10] < errors[1e-8] / 30      # measured 68 times


def singular_crossings(b0):
    """Times the bars lie on the ground line: B0 crosses y = 0."""
    y = b0[:, 1]
    return int(np.sum(np.sign(y[1:]) != np.sign(y[:-1])))


TOLERANCES = (1e-6, 1e-8, 1e-10, 1e-12)


def a02_run(n, tol, dt_out):
    """A02 with n windows over 20 s at rtol = atol = tol: the result, the number of crossings
    of the ground line, and the largest error of B0 against the exact motion."""
    model = nfourbar(n)
    r = linkdyn.simulate(model, 20.0, rtol=tol, atol=tol, dt_out=dt_out)
    b0 = r.marker("B0")
    return model, r, singular_crossings(b0), np.max(np.hypot(*(b0 - nfourbar_exact(n, r.t)).T))


def test_a02_two_windows_through_singular_configurations():
    """N = 2 over 20 s: twenty crossings of the ground line, where the degrees of freedom
    jump from 1 to 3, at every tolerance from 1e-6 to 1e-12. B0 follows the parallelogram's
    exact motion with an error proportional to the tolerance, every window stays a
    parallelogram (couplers horizontal), and energy is conserved."""
    errors = []
    for tol in TOLERANCES:
        model, r, crossings, error = a02_run(2, tol, 0.01)
        assert crossings >= 4
        errors.append(error)
        for c in ("C0", "C1"):   # the couplers stay horizontal: uy = 0
            assert np.max(np.abs(r.q[:, model.coordinate_names.index(f"{c}.uy")])) < 1e3 * tol
        energy = r.energy
        assert np.max(np.abs(energy - energy[0])) < 1e-2 * (tol / 1e-6) ** 0.8 * abs(energy[0])
    # The error is a phase error that grows over the run's ten swings (docs/theory/
    # redundant.md, "Where A02's error comes from"): measured 1.7e3 to 2.4e4 times the tolerance (2.4e-2, 1.7e-5,
    # 1.8e-6, 2.5e-8 m here). A single run's error varies by a few times with round-off (the
    # 1e-8 run gave 8.4e-5 m before the constraint residuals were compensated), so each is
    # held to 5e4 times its tolerance and the whole range to a fall of 1e5.
    for tol, error in zip(TOLERANCES, errors):
        assert error < 5e4 * tol
    assert all(b < a for a, b in zip(errors, errors[1:]))
    assert errors[-1] < errors[0] / 1e5


def test_nfourbar_arguments():
    with pytest.raises(ModelError, match="positive integer"):
        nfourbar(0)
    with pytest.raises(ModelError, match="finite"):
        nfourbar(2, speed=float("nan"))
    m = nfourbar(3)
    assert len(m.body_names) == 7 and m.nominal_dof == 1


def test_a02_forty_windows_through_singular_configurations():
    """The benchmark itself, N = 40 (81 bars) over 20 s, at every tolerance from 1e-6 to
    1e-12: the iteration matrix turns ill-conditioned at each crossing (KLU condition
    estimates up to 1e7), yet B0 follows the exact motion, within the benchmark's
    high-precision bound of 1e-3 m from rtol 1e-8 on, closer at each tighter tolerance."""
    errors = []
    for tol in TOLERANCES:
        model, r, crossings, error = a02_run(40, tol, 0.05)
        assert crossings >= 4
        errors.append(error)
        energy = r.energy
        assert np.max(np.abs(energy - energy[0])) < 1e-2 * (tol / 1e-6) ** 0.8 * abs(energy[0])
    # Measured 1.3e-2, 9.3e-5, 1.9e-6 and 1.3e-7 m. At 1e-12 the local tolerance stops at the
    # round-off floor 100 eps max|q0| (ld_bdf.c; the last rocker is 40 m out), about what
    # 1e-11 asks: its error is held to 5e4 times 1e-11.
    for tol, error in zip(TOLERANCES[:3], errors):
        assert error < 5e4 * tol
    assert errors[3] < 5e4 * 1e-11
    assert errors[1] < 1e-3
    assert all(b < a for a, b in zip(errors, errors[1:]))


def test_driven_nfourbar_kinematics_turns_every_rocker_alike():
    # 1,000 windows (2,001 bodies): the sweep and its exact velocities and accelerations.
    model = nfourbar(1_000, speed=1.0, driven=True)
    r = linkdyn.kinematics(model, np.linspace(0.0, 1.0, 21))
    theta = np.pi / 2 - r.t
    for rocker in ("R0", "R500", "R1000"):
        np.testing.assert_allclose(r.body_angle(rocker), theta, atol=1e-12)
        np.testing.assert_allclose(r.body_angular_velocity(rocker), -1.0, atol=1e-12)
        np.testing.assert_allclose(r.body_angular_acceleration(rocker), 0.0, atol=1e-10)
    # The couplers translate: their tops' path is the rockers' circle, shifted.
    np.testing.assert_allclose(r.body_position("C999"),
                               np.column_stack([999.5 + np.cos(theta), np.sin(theta)]),
                               atol=1e-11)
    # Per time: one factorisation for Newton, one at the solution (the branch's sign of
    # det Phi_q and the condition estimate).
    assert r.stats["factorizations"] == 2 * len(r.t)


def test_big_nfourbar_follows_the_exact_motion():
    # 2,000 windows: an iteration matrix of 36,000 rows, analysed without KLU's block
    # triangular form (ld_bdf.c, BTF_MAX_SIZE); the motion is the same one-angle motion.
    t = np.linspace(0.0, 0.5, 6)
    r = linkdyn.simulate(nfourbar(2_000), 0.5, rtol=1e-8, atol=1e-8, t_out=t,
                         record=linkdyn.Record(markers="B0", invariants=["energy"]))
    assert np.abs(r.marker("B0") - nfourbar_exact(2_000, t)).max() < 1e-6
    assert np.ptp(r.energy) < 1e-6 * abs(r.energy[0])


def test_a03_andrews_squeezer_against_the_test_set_reference():
    # The test set's reference angles at 0.03 s come from an independent formulation (seven
    # angles, six loop constraints). The error falls with the tolerance.
    from linkdyn.models.iftomm import (ANDREWS_INITIAL, ANDREWS_REFERENCE, ANDREWS_T_END,
                                       andrews, andrews_angles)

    model = andrews()
    assert model.nbody == 7 and model.nominal_dof == 1
    state = linkdyn.consistent_state(model)
    assert np.abs(state.q - model.q0).max() < ROUNDOFF      # the test set's state is consistent

    def run(method):
        errors, balance = [], []
        for tol in (1e-6, 1e-8, 1e-10):
            r = linkdyn.simulate(model, ANDREWS_T_END, rtol=tol, atol=tol, dt_out=1e-4,
                                 method=method)
            angles = andrews_angles(r)
            np.testing.assert_allclose(angles[0], ANDREWS_INITIAL, atol=ROUNDOFF)
            errors.append(np.abs(angles[-1] - ANDREWS_REFERENCE).max())
            # The energy balance: kinetic and spring energy against the torque's work.
            balance.append(np.abs(r.energy - r.energy[0] - r.work).max() / np.abs(r.work).max())
        assert balance[1] < balance[0] / 30 and balance[2] < balance[1] / 30
        return errors, balance

    # BDF: measured 1.7e-3, 1.7e-5, 1.4e-7 rad, a hundredfold per hundredfold tolerance; the
    # balance 2.6e-4, 2.6e-6, 2.1e-8 of the work.
    errors, balance = run("bdf")
    assert errors[0] < 5e-3 and errors[1] < 5e-5 and errors[2] < 5e-7
    assert errors[1] < errors[0] / 30 and errors[2] < errors[1] / 30
    assert balance[2] < 1e-7
    # The default (the explicit method throughout): measured 2.3e-8 rad at 1e-6, then 1.4e-9
    # at 1e-8 and 1e-10, where the reference's own digits end; the balance 5.3e-7, 2.6e-9,
    # 2.7e-11.
    errors, balance = run("auto")
    assert errors[0] < 1e-6 and max(errors[1:]) < 1e-8
    assert balance[2] < 1e-9
    # Too few output rows to count the crank's 2.5 turns: refused, not wrong.
    coarse = linkdyn.simulate(model, ANDREWS_T_END, t_out=[0.0, ANDREWS_T_END])
    with pytest.raises(ValueError, match="cannot be counted"):
        andrews_angles(coarse)
