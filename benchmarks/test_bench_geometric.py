"""The point-line-plane paper's linkages of points, lines and planes
(linkdyn.models.linkages): 180 positions with velocities and accelerations, linkdyn.kinematics
against the same equations solved with scipy.optimize.root and dense numpy in the same run (the
baseline), and against the MATLAB run-times the paper reports for its own method (Core
i5-7300): Stephenson-II 3.79 s, modified Jansen 3.81 s, a crank-rocker four-bar 1.4 s (Autodesk
Inventor: 5 s; our crank_rocker has our own dimensions, the paper gives none), spherical RRPR
1.49 s, spherical Watt-I 3.33 s, 5-SS 0.28 s.

Inputs: the planar linkages' and the RRPR's cranks turn in 180 steps of 2 pi / 180; the
Watt-I's input rocks between limit positions (1.694 and -0.757 rad), so its 180 steps span
0 .. 1.6 rad; the 5-SS actuator grows by the paper's 0.01 units per step."""

import math

import numpy as np
import pytest

import linkdyn
from test_bench_kinematics import scipy_sweep

TURN = np.linspace(0.0, 2 * math.pi, 181)[1:]
TIMES = {"stephenson2": TURN, "jansen_modified": TURN, "crank_rocker": TURN,
         "spherical_rrpr": TURN, "spherical_watt1": np.linspace(0.0, 1.6, 181)[1:],
         "five_ss": 0.01 * np.arange(1, 181)}
SEED_SECONDS = {"stephenson2": 3.79, "jansen_modified": 3.81, "crank_rocker": 1.4,
                "spherical_rrpr": 1.49, "spherical_watt1": 3.33, "five_ss": 0.28}
_seconds = {}


@pytest.mark.parametrize("name", sorted(SEED_SECONDS))
@pytest.mark.benchmark(group="seed-001 linkages, 180 positions")
def test_linkdyn(benchmark, name):
    model = linkdyn.load_model(name)
    r = benchmark(linkdyn.kinematics, model, TIMES[name])
    assert len(r.t) == 180 and r.branch_changes == ()
    _seconds[name] = benchmark.stats.stats.median
    benchmark.extra_info.update(role="linkdyn", seed_matlab_seconds=SEED_SECONDS[name],
                                vs_seed=SEED_SECONDS[name] / _seconds[name])


@pytest.mark.parametrize("name", sorted(SEED_SECONDS))
@pytest.mark.benchmark(group="seed-001 linkages, 180 positions")
def test_scipy_root(benchmark, name):
    model = linkdyn.load_model(name)
    times = TIMES[name]
    r = linkdyn.kinematics(model, times)
    Q, V, A = benchmark.pedantic(scipy_sweep, args=(model, times, r.q[0]), rounds=3,
                                 iterations=1)
    np.testing.assert_allclose(Q, r.q, atol=1e-10 * max(1.0, np.abs(r.q).max()))  # same answers
    np.testing.assert_allclose(A, r.a, atol=1e-7 * max(1.0, np.abs(r.a).max()))
    base = benchmark.stats.stats.median
    benchmark.extra_info.update(role="baseline")
    mine = _seconds.get(name)
    if mine:
        print(f"\n{name}: linkdyn {1e3 * mine:.2f} ms, scipy root {1e3 * base:.1f} ms "
              f"({base / mine:.0f}x), paper's MATLAB {SEED_SECONDS[name]} s "
              f"({SEED_SECONDS[name] / mine:.0f}x)")
