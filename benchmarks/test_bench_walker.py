"""The passive walker's gaits, 10 s each: linkdyn (Cartesian coordinates, index-3 BDF with
switchable stick rows and events in C) against the paper's own method written in the
benchmark (benchmarks/walker_baseline.py: four generalised coordinates, SciPy LSODA with
solve_ivp events, stick-slip by enumeration), measured in the same run. extra_info: the
touchdowns, events and the hip's position after 10 s for each, and their difference."""

import sys
from pathlib import Path

import numpy as np
import pytest

import linkdyn
from linkdyn.models.walker import GAITS, PAPER

sys.path.insert(0, str(Path(__file__).parent))
from walker_baseline import Walker, initial_state, params_of  # noqa: E402

T_END = 10.0
HIP = {}


@pytest.mark.parametrize("name", sorted(GAITS))
def test_walker_linkdyn(benchmark, name):
    model = linkdyn.load_model(name)
    benchmark.group = f"walker-{name}"

    def run():
        return linkdyn.simulate(model, T_END, rtol=1e-9, atol=1e-11, t_out=[0.0, T_END])

    r = benchmark.pedantic(run, rounds=3, iterations=1)
    hip = r.marker("hip")[-1]
    touchdowns = [e for e in r.events if e.name in ("foot1", "foot2") and e.direction == 1]
    HIP.setdefault(name, {})["linkdyn"] = hip
    benchmark.extra_info.update(role="linkdyn", steps=r.stats["steps"],
                                events=r.stats["events"], touchdowns=len(touchdowns),
                                hip_x=float(hip[0]), hip_y=float(hip[1]))
    assert hip[1] > 0.35


@pytest.mark.parametrize("name", sorted(GAITS))
def test_walker_seed_method(benchmark, name):
    p = params_of(name, GAITS, PAPER)
    benchmark.group = f"walker-{name}"

    def run():
        w = Walker(p)
        return w, w.simulate(initial_state(p), T_END)

    w, (t, z, touchdowns) = benchmark.pedantic(run, rounds=1, iterations=1)
    HIP.setdefault(name, {})["baseline"] = z[:2]
    benchmark.extra_info.update(role="baseline", events=w.events, touchdowns=len(touchdowns),
                                hip_x=float(z[0]), hip_y=float(z[1]))
    if "linkdyn" in HIP[name]:
        diff = float(np.max(np.abs(HIP[name]["linkdyn"] - z[:2])))
        benchmark.extra_info["hip_difference_m"] = diff
        print(f"\n{name}: hip after {T_END} s differs by {diff:.2e} m between linkdyn and the "
              "paper's method")
