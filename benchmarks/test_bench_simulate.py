"""The Jansen benchmark (10 s, rtol = atol = 1e-10): linkdyn's simulate() against
scipy.integrate.solve_ivp on the index-1 form in the same run, and a work-precision table.

Run:  python -m pytest benchmarks            (about a minute: SciPy's Radau takes ~25 s)
"""

from pathlib import Path

import numpy as np
import pytest

import linkdyn
from index1_baseline import run

REFERENCE = np.loadtxt(Path(__file__).parents[1] / "tests" / "data" / "jansen_reference.txt")
TOL = 1e-10


@pytest.fixture(scope="module")
def jansen():
    return linkdyn.load_model("jansen")


def marker_error(model, q):
    return float(np.abs(model.marker_positions(q).reshape(len(q), 4) - REFERENCE[:, 1:5]).max())


def test_jansen_linkdyn(benchmark, jansen):
    benchmark.group = "jansen 10 s rtol 1e-10"
    benchmark.extra_info["role"] = "linkdyn"
    result = benchmark.pedantic(linkdyn.simulate, args=(jansen, 10.0),
                                kwargs=dict(rtol=TOL, atol=TOL, t_out=REFERENCE[:, 0]),
                                rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(error=marker_error(jansen, result.q),
                                steps=result.stats["steps"],
                                integration_seconds=result.stats["integration_seconds"],
                                energy_variation=float(np.ptp(result.energy)))


@pytest.mark.parametrize("method", ["LSODA", "BDF", "Radau"])
def test_jansen_scipy_index1(benchmark, jansen, method):
    benchmark.group = "jansen 10 s rtol 1e-10"
    benchmark.extra_info["role"] = "baseline" if method == "LSODA" else f"scipy-{method}"
    sol = benchmark.pedantic(run, args=(jansen, 10.0, TOL, TOL, method, REFERENCE[:, 0]),
                             rounds=1, iterations=1)
    benchmark.extra_info.update(error=marker_error(jansen, sol.y[:jansen.nq].T),
                                evaluations=int(sol.nfev))


@pytest.mark.parametrize("tol", [1e-6, 1e-8, 1e-10, 1e-12])
def test_work_precision(benchmark, jansen, tol):
    benchmark.group = "work-precision"
    benchmark.extra_info["rtol"] = tol
    result = benchmark.pedantic(linkdyn.simulate, args=(jansen, 10.0),
                                kwargs=dict(rtol=tol, atol=tol, t_out=REFERENCE[:, 0]),
                                rounds=3, iterations=1)
    benchmark.extra_info.update(error=marker_error(jansen, result.q),
                                steps=result.stats["steps"],
                                integration_seconds=result.stats["integration_seconds"],
                                energy_variation=float(np.ptp(result.energy)))
