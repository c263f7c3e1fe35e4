"""How cost grows with model size (issue 14): building and compiling a hanging chain of n bars
(n = 1e3, 1e4, 1e5), and the integrator's cost per body-step on chains of 1e2 to 1e4 bars
(two output rows, so output work does not count). Each reports its times in extra_info and
the exponent p of a fit time ~ n^p over the sizes, printed at the end of the group."""

import math
import time

import numpy as np
import pytest

import linkdyn

BUILD_SIZES = (1_000, 10_000, 100_000)
STEP_SIZES = (100, 1_000, 10_000)
_build, _step = {}, {}


def _exponent(table):
    n = np.array(sorted(table), dtype=float)
    cost = np.array([table[k] for k in sorted(table)])
    return float(np.polyfit(np.log(n), np.log(cost), 1)[0])


@pytest.mark.parametrize("n", BUILD_SIZES)
@pytest.mark.benchmark(group="scale-build")
def test_build_and_compile(benchmark, n):
    model = benchmark.pedantic(linkdyn.chain, args=(n,), rounds=1 if n >= 100_000 else 3,
                               iterations=1)
    assert model.nq == 4 * n
    _build[n] = benchmark.stats.stats.median
    benchmark.extra_info.update(n=n, seconds=_build[n], us_per_bar=1e6 * _build[n] / n)
    print(f"\nchain({n}): built and compiled in {_build[n]:.3f} s "
          f"({1e6 * _build[n] / n:.1f} us per bar)")
    if len(_build) == len(BUILD_SIZES):
        print(f"build time ~ n^{_exponent(_build):.2f}")


@pytest.mark.parametrize("n", STEP_SIZES)
@pytest.mark.benchmark(group="scale-step")
def test_cost_per_body_step(benchmark, n):
    model = linkdyn.chain(n, length=1.0 / math.sqrt(n))

    def run():
        return linkdyn.simulate(model, 0.05, rtol=1e-8, atol=1e-8, t_out=[0.0, 0.05])

    start = time.perf_counter()
    r = benchmark.pedantic(run, rounds=1 if n >= 10_000 else 3, iterations=1)
    per = r.stats["integration_seconds"] / (r.stats["steps"] * n)
    _step[n] = per
    benchmark.extra_info.update(n=n, steps=r.stats["steps"], seconds_per_body_step=per,
                                wall=time.perf_counter() - start)
    print(f"\nchain({n}): {r.stats['steps']} steps, {1e9 * per:.0f} ns per body-step")
    if len(_step) == len(STEP_SIZES):
        # Cost per step ~ n^(1 + p'); the per-body figure's own exponent is p'.
        print(f"cost per body-step ~ n^{_exponent(_step):.2f}")
