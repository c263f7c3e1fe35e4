"""Seed 001's planar linkages from points and lines (linkdyn.models.linkages): 180 positions of
one input turn with velocities and accelerations, linkdyn.kinematics against the same equations
solved with scipy.optimize.root and dense numpy in the same run (the baseline), and against
the MATLAB run-times the seed reports for its own method (Core i5-7300: Stephenson-II 3.79 s,
modified Jansen 3.81 s; a crank-rocker four-bar 1.4 s, against Autodesk Inventor's 5 s: our
crank_rocker has our own dimensions, the seed gives none)."""

import math

import numpy as np
import pytest

import linkdyn
from test_bench_kinematics import scipy_sweep

TIMES = np.linspace(0.0, 2 * math.pi, 181)[1:]      # 180 perturbations of 2 pi / 180
SEED_SECONDS = {"stephenson2": 3.79, "jansen_modified": 3.81, "crank_rocker": 1.4}
_seconds = {}


@pytest.mark.parametrize("name", sorted(SEED_SECONDS))
@pytest.mark.benchmark(group="seed-001 planar, 180 positions")
def test_linkdyn(benchmark, name):
    model = linkdyn.load_model(name)
    r = benchmark(linkdyn.kinematics, model, TIMES)
    assert len(r.t) == 180
    _seconds[name, "linkdyn"] = benchmark.stats.stats.median
    benchmark.extra_info.update(role="linkdyn", seed_matlab_seconds=SEED_SECONDS[name],
                                vs_seed=SEED_SECONDS[name] / _seconds[name, "linkdyn"])


@pytest.mark.parametrize("name", sorted(SEED_SECONDS))
@pytest.mark.benchmark(group="seed-001 planar, 180 positions")
def test_scipy_root(benchmark, name):
    model = linkdyn.load_model(name)
    q0 = linkdyn.consistent_state(model).q
    Q, V, A = benchmark.pedantic(scipy_sweep, args=(model, TIMES, q0), rounds=3, iterations=1)
    r = linkdyn.kinematics(model, TIMES)
    np.testing.assert_allclose(Q, r.q, atol=1e-10)       # the same answers
    np.testing.assert_allclose(A, r.a, atol=1e-7 * max(1.0, np.abs(r.a).max()))
    base = benchmark.stats.stats.median
    benchmark.extra_info.update(role="baseline")
    mine = _seconds.get((name, "linkdyn"))
    if mine:
        print(f"\n{name}: linkdyn {1e3 * mine:.2f} ms, scipy root {1e3 * base:.1f} ms "
              f"({base / mine:.0f}x), seed MATLAB {SEED_SECONDS[name]} s "
              f"({SEED_SECONDS[name] / mine:.0f}x)")
