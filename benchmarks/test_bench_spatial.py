"""Spatial bodies against planar ones (issue 27): a chain of n bars on spherical joints
(linkdyn.models.spatial.spatial_chain, 12 coordinates and 9 rows per bar) against the planar
chain of n bars on revolute joints (linkdyn.chain, 4 coordinates and 3 rows per bar), from 10^2
to 10^4 bars, over 2 ms at rtol = atol = 1e-6 with one output row: integration seconds per
body and step of each, and their ratio (the target: the spatial chain within 3 times the
planar one's cost per body-step).

Run:  python -m pytest benchmarks/test_bench_spatial.py -s
"""

import math

import pytest

import linkdyn
from linkdyn.models.spatial import spatial_chain

SIZES = (100, 1_000, 10_000)
_cost = {}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("family", ["planar", "spatial"])
def test_chain_cost_per_body_step(benchmark, family, n):
    length = 1.0 / math.sqrt(n)
    model = (linkdyn.chain(n, length=length) if family == "planar"
             else spatial_chain(n, length=length))
    benchmark.group = f"chain of {n} bars"
    benchmark.extra_info["role"] = "baseline" if family == "planar" else "linkdyn"
    result = benchmark.pedantic(linkdyn.simulate, args=(model, 2e-3),
                                kwargs=dict(rtol=1e-6, atol=1e-6, t_out="final"),
                                rounds=3, iterations=1)
    st = result.stats
    per = st["integration_seconds"] / (st["steps"] * n)
    _cost[(family, n)] = per
    benchmark.extra_info.update(steps=st["steps"], rk_steps=st["rk_steps"],
                                seconds_per_body_step=per)
    if ("planar", n) in _cost and ("spatial", n) in _cost:
        ratio = _cost[("spatial", n)] / _cost[("planar", n)]
        benchmark.extra_info["spatial_over_planar"] = ratio
        print(f"\n{n} bars: planar {_cost[('planar', n)] * 1e6:.3f} us, spatial "
              f"{_cost[('spatial', n)] * 1e6:.3f} us per body-step: ratio {ratio:.2f}")
