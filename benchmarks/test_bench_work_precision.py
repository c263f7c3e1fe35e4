"""One work-precision table over the problems linkdyn is measured on: the Jansen benchmark,
IFToMM A01 and A02 (N = 40) and the passive walker (gait I), each with the default method
and with the BDF alone at rtol = atol = 1e-6, 1e-8 and 1e-10, in the same run. Each error
is against an independent solution: the Jansen reference of tests/data (a crank-angle ODE
by DOP853), the exact motions of A01 and A02, and the walker's hip after 10 s from the
paper's own method (tests/data/walker_reference.json: four generalised coordinates,
LSODA with events). Writes benchmarks/results/work_precision_problems.md."""

import json
from pathlib import Path

import numpy as np
import pytest

import linkdyn
from linkdyn.models import iftomm

DATA = Path(__file__).parents[1] / "tests" / "data"
RESULTS = Path(__file__).parent / "results"
TOLS = (1e-6, 1e-8, 1e-10)
ROWS = {}


def jansen(tol, method):
    ref = np.loadtxt(DATA / "jansen_reference.txt")
    r = linkdyn.simulate("jansen", 10.0, rtol=tol, atol=tol, t_out=ref[:, 0], method=method)
    return r, float(np.linalg.norm(r.marker("P3") - ref[:, 1:3], axis=1).max()), "P3"


def a01(tol, method):
    r = linkdyn.simulate(iftomm.simple_pendulum(), 10.0, rtol=tol, atol=tol, dt_out=0.025,
                         method=method)
    exact = iftomm.pendulum_exact(r.t)
    return r, float(np.linalg.norm(r.marker("P1") - exact, axis=1).max()), "P1"


def a02(tol, method):
    r = linkdyn.simulate(iftomm.nfourbar(40), 20.0, rtol=tol, atol=tol, dt_out=0.05,
                         method=method)
    exact = iftomm.nfourbar_exact(40, r.t)
    return r, float(np.linalg.norm(r.marker("B0") - exact, axis=1).max()), "B0"


def walker(tol, method):
    ref = json.loads((DATA / "walker_reference.json").read_text())["walker_gait1"]["10"]
    r = linkdyn.simulate("walker_gait1", 10.0, rtol=tol, atol=tol, t_out=[0.0, 10.0],
                         method=method)
    return r, float(np.linalg.norm(r.marker("hip")[-1] - ref["hip"])), "hip at 10 s"


PROBLEMS = {"Jansen, 10 s": jansen, "IFToMM A01, 10 s": a01,
            "IFToMM A02 (N = 40), 20 s": a02, "walker gait I, 10 s": walker}


@pytest.mark.parametrize("method", ["auto", "bdf"])
@pytest.mark.parametrize("tol", TOLS)
@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_work_precision(benchmark, problem, tol, method):
    benchmark.group = f"work-precision {problem}"
    r, error, what = benchmark.pedantic(PROBLEMS[problem], args=(tol, method), rounds=1,
                                        iterations=1)
    ROWS[(problem, tol, method)] = (r.stats["integration_seconds"], r.stats["steps"], error,
                                    what)
    benchmark.extra_info.update(error=error, steps=r.stats["steps"])


def teardown_module():
    if not ROWS:
        return
    lines = ["| problem (error of) | rtol | default: time, steps, error | "
             "BDF: time, steps, error |", "|---|---|---|---|"]
    for problem in PROBLEMS:
        for tol in TOLS:
            cells = []
            for method in ("auto", "bdf"):
                row = ROWS.get((problem, tol, method))
                cells.append("" if row is None else
                             f"{1e3 * row[0]:.1f} ms, {row[1]}, {row[2]:.1e} m")
            what = next((ROWS[k][3] for k in ROWS if k[0] == problem), "")
            lines.append(f"| {problem} ({what}) | {tol:g} | {cells[0]} | {cells[1]} |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "work_precision_problems.md").write_text("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))
