"""What exact sensitivities cost, and synthesis against finite differences.

1. Kinematic sensitivities of the driven Jansen linkage over 361 positions with p = 1, 4
   and 10 parameters (link lengths), against the plain analysis and against what finite
   differences would cost (1 + p analyses: one per parameter, plus the base), in the same
   run. The issue's target is well under (1 + p) analyses.
2. The four-bar synthesis of tests/test_synthesis.py (ten points, prescribed timing) with
   the exact Jacobian against least_squares' own finite-difference Jacobian ("2-point"),
   in the same run: analyses used, time, and the parameters' error.
"""

import time

import numpy as np
import pytest
from scipy.optimize import least_squares

import linkdyn
from linkdyn.design.sensitivity import ParameterFamily
from linkdyn.design.synthesis import linkage_parameters, path_generation
from linkdyn.models.linkages import four_bar

TIMES = np.linspace(0.0, 1.0, 361)
LENGTHS = [f"bodies.L{i}.length" for i in range(2, 12)]


@pytest.fixture(scope="module")
def model():
    return linkdyn.load_model("jansen_driven")


def test_plain_analysis(benchmark, model):
    benchmark.group = "jansen sensitivities, 361 positions"
    benchmark.extra_info["role"] = "baseline"
    benchmark(linkdyn.kinematics, model, TIMES)


@pytest.mark.parametrize("p", [1, 4, 10])
def test_sensitivities(benchmark, model, p):
    benchmark.group = "jansen sensitivities, 361 positions"
    names = LENGTHS[:p]
    s = benchmark.pedantic(linkdyn.kinematic_sensitivities, args=(model, names, TIMES),
                           rounds=3, iterations=1)
    start = time.perf_counter()
    for _ in range(5):
        linkdyn.kinematics(model, TIMES)
    analysis = (time.perf_counter() - start) / 5
    ratio = benchmark.stats.stats.median / analysis
    benchmark.extra_info.update(p=p, analyses=ratio, finite_difference_analyses=1 + p)
    print(f"\n  p = {p}: sensitivities cost {ratio:.0f} analyses (finite differences: "
          f"{1 + p}); exact: {all(s.exact)}")


def fourbar(points):
    return four_bar(points)


TRUTH = {"A": (0.0, 0.0), "B": (0.1, 0.02), "C": (0.32, 0.3), "D": (0.4, 0.0),
         "P": (0.25, 0.37)}
SYN_TIMES = np.linspace(0.3, 6.0, 10)


def test_synthesis_exact_jacobian_against_finite_differences():
    grid = np.union1d(np.linspace(0.0, 2 * np.pi, 181), SYN_TIMES)
    k = linkdyn.kinematics(fourbar(TRUTH).build(), grid)
    targets = k.marker("P")[np.searchsorted(k.t, SYN_TIMES)]
    rng = np.random.default_rng(1)
    start = fourbar({n: np.array(v) + 0.01 * rng.standard_normal(2) for n, v in TRUTH.items()})
    truth = np.array([TRUTH[n][i] for n in "ABCDP" for i in range(2)])

    began = time.perf_counter()
    exact = path_generation(start, "P", targets, times=SYN_TIMES, starts=1)
    exact_seconds = time.perf_counter() - began
    found = np.array(list(exact.parameters.values()))

    family = ParameterFamily(start, linkage_parameters(start))
    calls = [0]

    def residuals(x):
        calls[0] += 1
        kin = linkdyn.kinematics(family.model(x), grid)
        return (kin.marker("P")[np.searchsorted(kin.t, SYN_TIMES)] - targets).ravel()

    began = time.perf_counter()
    fd = least_squares(residuals, family.values, jac="2-point", method="trf", ftol=1e-12,
                       xtol=1e-12, gtol=1e-12, x_scale="jac", max_nfev=400)
    fd_seconds = time.perf_counter() - began
    print(f"\n  exact Jacobian: {exact.evaluations} analyses with sensitivities, "
          f"{exact_seconds:.2f} s, parameter error {np.abs(found - truth).max():.1e}")
    print(f"  finite differences: {calls[0]} analyses, {fd_seconds:.2f} s, parameter error "
          f"{np.abs(fd.x - truth).max():.1e}")
