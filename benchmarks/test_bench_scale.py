"""How cost grows with model size (issue 14), for three families: a hanging chain of n bars
(open loop), the IFToMM N-four-bar (n + 1 rockers and n couplers: closed loops side by side)
and a Warren truss (triangles: closed loops sharing bars).

- Build and compile: chain of 10^3..10^5 bars.
- Dynamics: integration seconds per body and step (``integration_seconds / (steps * bodies)``;
  output is one final row, so output work does not count) from about 10^2 to 10^5 bodies, at
  rtol = atol = 1e-8 (the chain 1e-6, see FAMILIES) over 2 ms.
- Kinematics: sweep seconds per body and position (181 positions) of the driven N-four-bar
  and the driven truss, from 10^2 to 10^5 bodies.

Each reports its figures in extra_info and, once a family's sizes are done, the exponent p of
a least-squares fit cost ~ bodies^p (p = 0: cost per body-step independent of size, i.e. cost
per step linear in size).

Run:  python -m pytest benchmarks/test_bench_scale.py   (about 4 minutes here)
"""

import math

import numpy as np
import pytest

import linkdyn
from linkdyn.models import nfourbar, truss

BUILD_SIZES = (1_000, 10_000, 100_000)
_build = {}
_cost = {}

# family -> (model builder, size parameters giving about 1e2, 1e3, 1e4, 1e5 bodies, rtol).
# The hanging chain runs at 1e-6: at 10^5 bars (a 316 m chain of 3 mm bars) the Newton
# corrections stagnate at round-off below that (measured: 1e-7 fails at t = 1.4 ms, 1e-8 at
# 1.2 ms), while 10^4 bars run at 1e-8 too.
FAMILIES = {
    "chain": (lambda n, driven=False: linkdyn.chain(n, length=1.0 / math.sqrt(n)),
              (100, 1_000, 10_000, 100_000), 1e-6),
    "nfourbar": (lambda n, driven=False: nfourbar(n, driven=driven),
                 (50, 500, 5_000, 50_000), 1e-8),
    "truss": (lambda n, driven=False: truss(n, length=1.0 / math.sqrt(n), driven=driven),
              (25, 250, 2_500, 25_000), 1e-8),
}


def _exponent(table):
    n = np.array(sorted(table), dtype=float)
    cost = np.array([table[k] for k in sorted(table)])
    return float(np.polyfit(np.log(n), np.log(cost), 1)[0])


def _record(kind, family, bodies, value, count):
    table = _cost.setdefault((kind, family), {})
    table[bodies] = value
    if len(table) == count:
        print(f"\n{kind} {family}: cost per body ~ bodies^{_exponent(table):.2f} "
              f"over {min(table)}..{max(table)} bodies")


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


@pytest.mark.parametrize("family,n", [(f, n) for f, (_, sizes, _) in FAMILIES.items()
                                      for n in sizes])
@pytest.mark.benchmark(group="scale-dynamics")
def test_cost_per_body_step(benchmark, family, n):
    make, sizes, tol = FAMILIES[family]
    model = make(n)
    t_end = 2e-3

    def run():
        # the BDF: the cost per body-step of one method across sizes (the explicit
        # method's steps are dearer and fewer; see docs/tutorials/big_models.md)
        return linkdyn.simulate(model, t_end, rtol=tol, atol=tol, t_out="final",
                                method="bdf")

    r = benchmark.pedantic(run, rounds=1 if model.nbody >= 10_000 else 3, iterations=1)
    per = r.stats["integration_seconds"] / (r.stats["steps"] * model.nbody)
    benchmark.extra_info.update(family=family, bodies=model.nbody, steps=r.stats["steps"],
                                rtol=tol,
                                seconds_per_body_step=per,
                                integration_seconds=r.stats["integration_seconds"],
                                noise_limited=r.stats["noise_limited"])
    print(f"\n{family} ({model.nbody} bodies): {r.stats['steps']} steps, "
          f"{1e9 * per:.0f} ns per body-step")
    _record("dynamics", family, model.nbody, per, len(sizes))


@pytest.mark.parametrize("family,n", [(f, n) for f, (_, sizes, _) in FAMILIES.items()
                                      for n in sizes if f != "chain"])
@pytest.mark.benchmark(group="scale-kinematics")
def test_cost_per_body_position(benchmark, family, n):
    make, sizes, _ = FAMILIES[family]
    model = make(n, driven=True)
    times = np.linspace(0.0, 0.5, 181)
    # The long trusses are ill-conditioned though regular (linkdyn.kinematics notes): the
    # singularity threshold is set below their level.
    r = benchmark.pedantic(linkdyn.kinematics, args=(model, times),
                           kwargs=dict(singular_rcond=1e-14),
                           rounds=1 if model.nbody >= 10_000 else 3, iterations=1)
    per = r.stats["sweep_seconds"] / (len(times) * model.nbody)
    benchmark.extra_info.update(family=family, bodies=model.nbody, seconds_per_body_position=per,
                                sweep_seconds=r.stats["sweep_seconds"])
    print(f"\n{family} kinematics ({model.nbody} bodies): {1e9 * per:.0f} ns per "
          "body-position")
    _record("kinematics", family, model.nbody, per, len(sizes))
