"""Straight-line LU code for kinematic sweeps (linkdyn.solve.lu_code): the factorisation of
Phi_q's pattern in a fixed pivot order solves what numpy's dense LU solves, gives the sign of
the determinant and its pivot ratio; sweeps with it agree with sweeps on KLU alone to
round-off, hand over to KLU near singular configurations and limit positions (and find the
same ones), refuse code for another pattern, and say why there is none."""

import ctypes
import math
from pathlib import Path

import numpy as np
import pytest

import linkdyn
from linkdyn._kinematics import KinematicSweep
from linkdyn.errors import ArgumentError
from linkdyn.solve import generated, lu_code
from conftest import triple_rocker_linkage, without_and_with_code

pytestmark = pytest.mark.skipif(generated.compiler() is None, reason="no C compiler")


def both(monkeypatch, model, t, **kw):
    return without_and_with_code(monkeypatch, linkdyn.kinematics, model, t, **kw)


def _dense(n, colptr, rowind, values):
    a = np.zeros((n, n))
    for j in range(n):
        for p in range(colptr[j], colptr[j + 1]):
            a[rowind[p], j] = values[p]
    return a


def _library(model):
    sweep = KinematicSweep(model.kernels.run_state())
    n, colptr, rowind = sweep.pattern()
    rows, cols = sweep.pivot_order(0.0, model.q0)
    source, size = lu_code.lu_source(n, colptr, rowind, rows, cols,
                                     sweep.pattern_signature(), 10**7)
    lib = generated._library(generated.compiler(), source, lu_code.FUNCTIONS,
                             "ldk_signature")[0]
    lib.ldk_factor.restype = ctypes.c_double
    return lib, n, colptr, rowind, size


def _ptr(x):
    return x.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


@pytest.mark.parametrize("name", ["crank_rocker", "jansen_driven", "spatial_slider_crank"])
def test_the_factors_solve_what_a_dense_lu_solves(code_cache, name):
    """Values at random on the model's pattern (its Jacobian's entries plus a multiple of
    the identity, in the Jacobian's pivot order: the order must serve other values too): x
    agrees with numpy's solve to 1e-12 of its size on matrices whose condition is some 1e3,
    the sign is det's, the pivot ratio lies in (0, 1], and the residual is b - A x with
    |b| + |A| |x|."""
    model = linkdyn.load_model(name)
    lib, n, colptr, rowind, size = _library(model)
    rng = np.random.default_rng(7)
    jac = model.phi_q(model.q0, 0.0)
    jac = jac.toarray() if hasattr(jac, "toarray") else np.asarray(jac)
    for trial in range(20):
        values = np.array([jac[rowind[p], j] * (1.0 + 0.05 * rng.standard_normal())
                           for j in range(n) for p in range(colptr[j], colptr[j + 1])])
        a = _dense(n, colptr, rowind, values)
        if np.linalg.cond(a) > 1e6:
            continue
        lu = np.zeros(size)
        sign = ctypes.c_int(0)
        ratio = lib.ldk_factor(_ptr(values), _ptr(lu), ctypes.byref(sign))
        assert 0.0 < ratio <= 1.0
        assert sign.value == int(np.sign(np.linalg.det(a)))
        b = rng.standard_normal(n)
        x = b.copy()
        lib.ldk_solve(_ptr(lu), _ptr(x), _ptr(np.zeros(n)))
        want = np.linalg.solve(a, b)
        assert np.abs(x - want).max() < 1e-12 * np.linalg.cond(a) * np.abs(want).max()
        r, d = np.zeros(n), np.zeros(n)
        lib.ldk_residual(_ptr(values), _ptr(want), _ptr(b), _ptr(r), _ptr(d))
        assert np.allclose(r, b - a @ want, rtol=0, atol=1e-13 * np.abs(b).max())
        assert np.allclose(d, np.abs(b) + np.abs(a) @ np.abs(want), rtol=1e-14)


def test_a_zero_pivot_or_a_nan_gives_a_ratio_that_fails_every_threshold(code_cache):
    model = linkdyn.load_model("crank_rocker")
    lib, n, colptr, rowind, size = _library(model)
    jac = model.phi_q(model.q0, 0.0)
    jac = jac.toarray() if hasattr(jac, "toarray") else np.asarray(jac)
    values = np.array([jac[rowind[p], j] for j in range(n)
                       for p in range(colptr[j], colptr[j + 1])])
    sign = ctypes.c_int(0)
    zero_column = values.copy()
    zero_column[colptr[0]:colptr[1]] = 0.0        # a whole column of zeros: singular
    assert lib.ldk_factor(_ptr(zero_column), _ptr(np.zeros(size)), ctypes.byref(sign)) == 0.0
    bad = values.copy()
    bad[3] = np.nan
    ratio = lib.ldk_factor(_ptr(bad), _ptr(np.zeros(size)), ctypes.byref(sign))
    assert not ratio > 1e-300


def test_a_pivot_order_with_a_structural_zero_is_refused():
    # [[0, 1], [1, 1]] in the identity order: the first pivot is structurally zero
    colptr, rowind = [0, 1, 3], [1, 0, 1]
    with pytest.raises(ValueError, match="pivot 0"):
        lu_code.elimination(2, colptr, rowind, [0, 1], [0, 1])
    entries, lower, upper = lu_code.elimination(2, colptr, rowind, [1, 0], [0, 1])
    assert lower == [[], []] and upper == [[1], []]


def test_fill_in_is_found():
    # an arrow matrix with its dense row and column first fills in completely
    n = 4
    cols = [[0, 1, 2, 3]] + [[0, j] for j in range(1, n)]
    colptr = np.cumsum([0] + [len(c) for c in cols])
    rowind = [i for c in cols for i in c]
    entries, lower, upper = lu_code.elimination(n, colptr, rowind, range(n), range(n))
    assert len(entries) == n * n
    assert sum(p is None for p in entries.values()) == (n - 1) * (n - 2)


def _true_rcond(model, q, t):
    """1 / cond_1 of Phi_q at (q, t), its rows and then its columns scaled to a largest
    entry of 1 (as the sweep's estimates are made)."""
    jac = model.phi_q(q, t)
    jac = jac.toarray() if hasattr(jac, "toarray") else np.asarray(jac)
    jac = jac / np.abs(jac).max(axis=1)[:, None]
    jac = jac / np.abs(jac).max(axis=0)[None, :]
    return 1.0 / np.linalg.cond(jac, 1)


@pytest.mark.parametrize("name", ["crank_rocker", "jansen_driven", "spatial_slider_crank"])
def test_a_sweep_with_the_code_is_the_sweep_on_klu(code_cache, monkeypatch, name):
    """One turn of the input: positions to 1e-12 of the mechanism's size, velocities and
    accelerations to 1e-10 of theirs (both refined against Phi_q's values to its backward
    error either way). The condition estimates are pivot ratios above 1e-2 and KLU's
    estimate below: both within the same band around the true 1 / cond_1 (measured on these
    three: 0.24 to 37 times it, for both; the pivot ratio depends on the pivot order, and
    KLU's changes on the way). The code made most factorisations (all but
    a third on the spatial slider-crank, whose true estimate is 0.03 to 0.05 and whose pivot
    ratio often falls below 1e-2, where KLU and its condition estimate take over)."""
    model = linkdyn.load_model(name)
    t = np.linspace(0.0, 2.0 * np.pi, 721)
    klu, code = both(monkeypatch, model, t)
    assert klu.stats["lu_kernels"] == "klu" and code.stats["lu_kernels"] == "generated"
    assert code.stats["generated_factorizations"] > 0.5 * code.stats["factorizations"]
    assert klu.stats["generated_factorizations"] == 0
    assert klu.stats["factorizations"] == code.stats["factorizations"]
    for x, y in ((klu.q, code.q), (klu.v, code.v), (klu.a, code.a)):
        size = max(1.0, float(np.abs(x).max()))
        tol = 1e-12 if x is klu.q else 1e-10
        assert np.abs(x - y).max() < tol * size
    rows = range(0, len(t), 20)
    true = np.array([_true_rcond(model, klu.q[k], t[k]) for k in rows])
    for estimate in (klu.rcond[::20], code.rcond[::20]):
        assert np.all(estimate > 0.1 * true) and np.all(estimate < 100.0 * true)


def test_limits_are_met_alike(code_cache, monkeypatch):
    """A non-Grashof four-bar (conftest.triple_rocker_linkage) run through its limit
    positions with at_limit="reverse": near them Phi_q's pivots shrink, KLU takes over
    (fewer straight-line factorisations than factorisations) and the same limits come out
    at the same inputs, at crank angles +-acos(-1/15) (test_geometric.py)."""
    model = triple_rocker_linkage().build()
    t = np.linspace(0.0, 10.0, 1001)
    klu, code = both(monkeypatch, model, t, at_limit="reverse")
    limit = math.acos(-1.0 / 15.0)
    np.testing.assert_allclose([s for s, _ in code.limits],
                               [limit - 1.2, -limit - 1.2, limit - 1.2], atol=1e-9)
    # near the limits no order's pivots are large, a fresh one's neither: no order is kept
    # beyond the first (lu_code.START_FRACTION)
    assert not any(lu_code._orders.values())
    assert [k for _, k in klu.limits] == [k for _, k in code.limits]
    assert 0 < code.stats["generated_factorizations"] < code.stats["factorizations"]
    assert np.abs(klu.q - code.q).max() < 1e-9
    assert np.array_equal(np.sign(klu.rcond), np.sign(code.rcond))


def test_code_for_another_pattern_is_refused(code_cache, monkeypatch):
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    model = linkdyn.load_model("crank_rocker")
    lib, n, colptr, rowind, size = _library(model)
    other = KinematicSweep(linkdyn.load_model("jansen_driven").kernels.run_state())
    addresses = [ctypes.cast(getattr(lib, f), ctypes.c_void_p).value for f in lu_code.FUNCTIONS]
    assert not other.set_lu_code(*addresses, size, int(lib.ldk_signature()))
    assert other.lu_kernels == "klu"
    mine = KinematicSweep(model.kernels.run_state())
    lib.ldk_signature.restype = ctypes.c_ulonglong
    assert mine.set_lu_code(*addresses, size, int(lib.ldk_signature()))
    assert mine.lu_kernels == "generated"


def test_without_a_compiler_klu_runs_and_require_says_why(code_cache, monkeypatch):
    model = linkdyn.load_model("crank_rocker")
    t = np.linspace(0.0, 1.0, 11)
    monkeypatch.setenv("CC", str(code_cache / "no-such-compiler"))
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    assert linkdyn.kinematics(model, t).stats["lu_kernels"] == "klu"
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    with pytest.raises(ArgumentError, match="no straight-line LU code.*no C compiler"):
        linkdyn.kinematics(model, t)


def test_a_pattern_too_large_is_left_to_klu(code_cache, monkeypatch):
    model = linkdyn.load_model("crank_rocker")
    t = np.linspace(0.0, 1.0, 11)
    monkeypatch.setenv("LINKDYN_GENERATED_MAX_SOURCE", "1000")
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    r = linkdyn.kinematics(model, t)
    assert r.stats["lu_kernels"] == "klu" and r.stats["generated_factorizations"] == 0
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    with pytest.raises(ArgumentError, match="more than 1,000 characters"):
        linkdyn.kinematics(model, t)


# ---------------------------------------------------------------------------------------------
# The BDF's iteration matrix (csrc/ld_linear.c, ld_bdf_set_lu_code)


def test_the_bdf_with_the_code_is_as_accurate_as_with_klu(code_cache, monkeypatch):
    """Jansen's benchmark with method="bdf" at rtol 1e-10: P3 within 1e-6 m of the 1e-13
    reference with either factorisation (measured 2.4e-7 m with KLU, 2.6e-7 m with the
    code: the trajectories differ by their round-off, the global error is the method's),
    the same work to 1%, and the code made the factorisations (the pivot ratio of Jansen's
    iteration matrix stays far above eps^(2/3))."""
    ref = np.loadtxt(Path(__file__).parent / "data" / "jansen_reference.txt")
    model = linkdyn.load_model("jansen")
    runs = {}
    for how in ("off", "auto"):
        monkeypatch.setenv("LINKDYN_GENERATED_CODE", how)
        runs[how] = r = linkdyn.simulate(model, 10.0, rtol=1e-10, atol=1e-10,
                                         t_out=ref[:, 0], method="bdf")
        assert np.hypot(*(r.marker("P3") - ref[:, 1:3]).T).max() < 1e-6
    klu, code = runs["off"], runs["auto"]
    assert klu.stats["lu_kernels"] == "klu" and klu.stats["generated_factorizations"] == 0
    assert code.stats["lu_kernels"] == "generated"
    assert code.stats["generated_factorizations"] > 0.9 * code.stats["factorizations"]
    assert abs(code.stats["steps"] - klu.stats["steps"]) < 0.01 * klu.stats["steps"]


def test_a_dead_centre_with_the_bdf_is_reported_alike(code_cache, monkeypatch):
    """The crank-rocker's rocker driven into its dead centre (test_simulate.py) with the
    BDF: the same error at the same time, naming the same rows, with either factorisation
    (where the code's pivots fail, KLU's fresh pivoting and its diagnosis take over)."""
    from conftest import dead_centre_errors

    klu, code = dead_centre_errors(monkeypatch, "bdf", ("off", "auto"))
    assert code.result.stats["lu_kernels"] == "generated"
    assert type(klu) is type(code) and klu.constraints == code.constraints
    assert code.t == pytest.approx(klu.t, rel=1e-9)


def test_the_integrator_refuses_code_for_another_pattern(code_cache):
    from linkdyn._bdf import BDFIntegrator

    model = linkdyn.load_model("crank_rocker")
    lib, n, colptr, rowind, size = _library(model)
    addresses = [ctypes.cast(getattr(lib, f), ctypes.c_void_p).value for f in lu_code.FUNCTIONS]
    integ = BDFIntegrator(linkdyn.load_model("jansen").kernels.run_state(), 1e-6, 1e-6)
    lib.ldk_signature.restype = ctypes.c_ulonglong
    assert not integ.set_lu_code(lib, addresses[0], addresses[1], size,
                                 int(lib.ldk_signature()))
    assert integ.lu_kernels == "klu"
    assert integ.stats()["lu_kernels"] == "klu"


def test_a_failing_compiler_is_tried_once_a_pattern(code_cache, monkeypatch):
    """A compiler that fails is not run again for every sweep (a kinematic analysis runs
    several: sub-steps, branch retries) nor for every analysis: the reason is kept for the
    pattern, and KLU runs."""
    calls = []

    def failing(cmd, source, path):
        calls.append(path)
        raise generated._Unbuildable("the C compiler failed: (a stand-in)")

    monkeypatch.setattr(generated, "_compile", failing)
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    model = linkdyn.load_model("crank_rocker")
    for _ in range(2):
        r = linkdyn.kinematics(model, np.linspace(0.0, 6.0, 61))
        assert r.stats["lu_kernels"] == "klu"
    assert len(calls) == 1


def test_close_times_take_one_factorisation_a_position(code_cache, monkeypatch):
    """Where the times lie close (100,000 a turn of the crank-rocker; the predictor's error
    goes with the step cubed), Newton converges in one step on the last solution's factors
    and each position takes one factorisation (1.06 measured) instead of two; the rows agree
    with KLU's sweep, which factorises twice, to 1e-12. Coarser (1,000 a turn, where that
    step is not enough), the attempts come every REUSE_WAIT positions: 3% more Newton steps,
    the same factorisations."""
    model = linkdyn.load_model("crank_rocker")
    fine = np.linspace(0.0, 2.0 * np.pi, 100_000)
    klu, code = both(monkeypatch, model, fine)
    assert klu.stats["factorizations"] == 2 * len(fine)
    assert code.stats["factorizations"] < 1.2 * len(fine)
    for x, y in ((klu.q, code.q), (klu.v, code.v), (klu.a, code.a)):
        assert np.abs(x - y).max() < 1e-12 * max(1.0, float(np.abs(x).max()))
    coarse = np.linspace(0.0, 2.0 * np.pi, 1_000)
    klu, code = both(monkeypatch, model, coarse)
    assert code.stats["factorizations"] == klu.stats["factorizations"] == 2 * len(coarse)
    assert code.stats["newton_iterations"] < 1.05 * klu.stats["newton_iterations"]


def test_a_pattern_keeps_the_pivot_orders_its_sweeps_need(code_cache, monkeypatch):
    """The built-in crank-rocker and test_sensitivity.py's four-bar of bars share Phi_q's
    pattern, but the crank-rocker's pivot order has small pivots all along the other's
    turn (with it alone: 0 of 1,602 factorisations by the code). The other's sweep gets
    its own start's order compiled (lu_code.MAX_ORDERS) and makes nearly all of its
    factorisations with it; a third sweep of either takes the order kept for it."""
    from test_sensitivity import fourbar

    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "auto")
    crank_rocker, bars = linkdyn.load_model("crank_rocker"), fourbar()
    first = linkdyn.kinematics(crank_rocker, np.linspace(0.0, 2.0 * np.pi, 361))
    other = linkdyn.kinematics(bars, np.linspace(0.0, 8.0, 801))
    for r in (first, other):
        assert r.stats["generated_factorizations"] > 0.9 * r.stats["factorizations"]
    assert sum(len(v) for v in lu_code._orders.values()) == 1
    again = linkdyn.kinematics(bars, np.linspace(0.0, 8.0, 801))
    assert again.stats["generated_factorizations"] == other.stats["generated_factorizations"]
    assert sum(len(v) for v in lu_code._orders.values()) == 1
