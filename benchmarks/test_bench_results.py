"""What a result's derived series cost after the run: the accelerations (M a = Q -
Phi_q^T lam, a row at a time with the forces the run applied) and a spatial joint's
reaction, per output row, against the integration that made the rows, in the same run.

Both evaluate the Jacobian's values in its fixed pattern from the kernels and sum Phi_q^T
lam there; building a sparse matrix for each row cost 25 to 34 us a row for the
accelerations and 116 to 146 us for a spatial joint's reaction (a simulation of 1000 s with
100,001 rows took 2.7 s more to make its table).

Run:  python -m pytest benchmarks/test_bench_results.py -s
"""

import pytest

import linkdyn


@pytest.fixture(scope="module")
def runs():
    return {name: linkdyn.simulate(name, 10.0, dt_out=1e-3)
            for name in ("jansen", "heavy_top")}


def _fresh(result):
    """The same result with its derived series not yet computed (they are cached)."""
    result._cache.clear()
    return result


@pytest.mark.parametrize("name", ["jansen", "heavy_top"])
def test_accelerations_per_row(benchmark, runs, name):
    r = runs[name]
    benchmark.group = "derived series, per output row"
    benchmark.pedantic(lambda: _fresh(r).a, rounds=5, iterations=1)
    per_row = benchmark.stats.stats.min / len(r.t)
    per_row_integration = r.stats["integration_seconds"] / len(r.t)
    benchmark.extra_info.update(us_per_row=per_row * 1e6,
                                integration_us_per_row=per_row_integration * 1e6)
    print(f"\n  {name}: accelerations {per_row * 1e6:.1f} us a row (the integration: "
          f"{per_row_integration * 1e6:.1f} us a row)")


def test_spatial_joint_reaction_per_row(benchmark, runs):
    r = runs["heavy_top"]
    benchmark.group = "derived series, per output row"
    benchmark.pedantic(r.joint_force, args=("pivot",), rounds=5, iterations=1)
    per_row = benchmark.stats.stats.min / len(r.t)
    benchmark.extra_info.update(us_per_row=per_row * 1e6)
    print(f"\n  heavy_top: the pivot's reaction {per_row * 1e6:.1f} us a row")
