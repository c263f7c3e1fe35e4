"""A 1,000-position sweep of the driven Jansen linkage with velocities and accelerations:
linkdyn.kinematics against the same equations solved with scipy.optimize.root and dense
numpy (the baseline a Python user would write), in the same run."""

import numpy as np
import pytest
from scipy.optimize import root

import linkdyn

TIMES = np.linspace(0.0, 1.0, 1000)


@pytest.fixture(scope="module")
def model():
    return linkdyn.load_model("jansen_driven")


def scipy_sweep(model, times, q0):
    q = q0.copy()
    Q, V, A = (np.empty((len(times), model.nq)) for _ in range(3))
    for k, t in enumerate(times):
        sol = root(lambda x: model.phi(x, t), q, jac=lambda x: model.phi_q(x, t).toarray(),
                   method="hybr", tol=1e-14)
        q = sol.x
        J = model.phi_q(q, t).toarray()
        v = np.linalg.solve(J, -model.phi_t(q, t))
        Q[k], V[k], A[k] = q, v, np.linalg.solve(J, model.gamma(q, v, t))
    return Q, V, A


def test_kinematics_linkdyn(benchmark, model):
    benchmark.group = "kinematics jansen 1000 positions"
    benchmark.extra_info["role"] = "linkdyn"
    r = benchmark(linkdyn.kinematics, model, TIMES)
    benchmark.extra_info["sweep_seconds"] = r.stats["sweep_seconds"]


def test_kinematics_scipy_root(benchmark, model):
    benchmark.group = "kinematics jansen 1000 positions"
    benchmark.extra_info["role"] = "baseline"
    q0 = linkdyn.consistent_state(model, hold=()).q
    Q, V, A = benchmark.pedantic(scipy_sweep, args=(model, TIMES, q0), rounds=3, iterations=1)
    r = linkdyn.kinematics(model, TIMES)
    # Same answers before comparing times.
    np.testing.assert_allclose(Q, r.q, atol=1e-10)
    np.testing.assert_allclose(A, r.a, atol=1e-7)
