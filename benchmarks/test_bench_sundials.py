"""linkdyn's default method against SUNDIALS on linkdyn's own kernels (issue 26): ARKODE's
explicit RK-Fehlberg 7(8) and CVODE's Adams, both on the index-1 form with Baumgarte 10/10,
their right-hand side in C over the model's ld_system callbacks
(benchmarks/sundials_baseline.py), so that the comparison isolates the method. Problems: the
Jansen benchmark (P3 against tests/data's reference, 10 s), IFToMM A01 (the pendulum's mass
against its exact motion, 10 s) and A02 with N = 40 (B0 against its exact motion, 20 s).

Each code runs rtol = atol = 1e-4 ... 1e-11 (a decade apart, best of two; the times are of
the integration: linkdyn's integration_seconds, as in test_bench_methods.py, without the
projection that makes its output rows consistent, and the baseline's loop over the output
times, with the interpolation that gives its rows). A
baseline run that fails, or spends its step budget (STEP_BUDGET), is reported, and that
method is not run at tighter tolerances. For every baseline run, linkdyn's time at the same
error is interpolated (log-log) from its own runs; the table gives their ratio, and
benchmarks/results/work_precision_sundials.png the curves. Skipped where the baseline cannot
be built (libsundials-dev, a C compiler). About two minutes, most of it the baseline on A02.

Run:  python -m pytest benchmarks/test_bench_sundials.py -s
"""

import math
from pathlib import Path

import numpy as np
import pytest

import linkdyn
from conftest import time_at
from linkdyn.models import iftomm

import sundials_baseline

DATA = Path(__file__).parents[1] / "tests" / "data"
RESULTS = Path(__file__).parent / "results"
TOLS = [10.0 ** -k for k in range(4, 12)]
BASELINES = ("arkode-rkf78", "cvode-adams")
CURVES = {}
TABLES = {}


def jansen():
    ref = np.loadtxt(DATA / "jansen_reference.txt")
    model = linkdyn.load_model("jansen")
    return model, ref[:, 0], "P3", ref[:, 1:3]


def a01():
    t = np.linspace(0.0, 10.0, 401)
    return iftomm.simple_pendulum(), t, "P1", iftomm.pendulum_exact(t)


def a02():
    t = np.linspace(0.0, 20.0, 401)
    return iftomm.nfourbar(40), t, "B0", iftomm.nfourbar_exact(40, t)


PROBLEMS = {"Jansen, 10 s": jansen, "IFToMM A01, 10 s": a01, "IFToMM A02 (N = 40), 20 s": a02}
#: the baseline's steps per run, per problem (A02's right-hand side is some 30 us there)
STEP_BUDGET = {"Jansen, 10 s": 200_000, "IFToMM A01, 10 s": 200_000,
               "IFToMM A02 (N = 40), 20 s": 100_000}


def marker_error(model, q, marker, exact) -> float:
    """Largest distance of ``marker`` (from coordinates q, rows as ``exact``) from exact."""
    k = model.marker_index(marker)
    pos = model.marker_positions(q).reshape(len(q), -1, model.marker_dimension)[:, k]
    return float(np.max(np.linalg.norm(pos - exact[:len(q)], axis=1)))


@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_against_sundials_on_linkdyn_kernels(benchmark, problem):
    if sundials_baseline.build() is None:
        pytest.skip("the SUNDIALS baseline cannot be built here (libsundials-dev, cc)")
    model, t, marker, exact = PROBLEMS[problem]()
    mine = []
    for tol in TOLS:
        runs = [linkdyn.simulate(model, t[-1], rtol=tol, atol=tol, t_out=t)
                for _ in range(2)]
        secs = min(r.stats["integration_seconds"] for r in runs)
        mine.append((tol, secs, marker_error(model, runs[0].q, marker, exact)))
    errors, seconds = np.array([m[2] for m in mine]), np.array([m[1] for m in mine])
    rows = [f"| code | rtol | time | steps | right-hand sides | {marker} error | "
            "linkdyn at that error | ratio |", "|---|---|---|---|---|---|---|---|"]
    for tol, secs, err in mine:
        rows.append(f"| linkdyn (default) | {tol:g} | {secs * 1e3:.1f} ms | | | {err:.1e} m "
                    "| | |")
    curves = {"linkdyn (default)": (errors, seconds)}
    for method in BASELINES:
        errs, times = [], []
        for tol in TOLS:
            run = sundials_baseline.run(model, method, tol, t,
                                        max_steps=STEP_BUDGET[problem])
            _, q, steps, rhs, status = run
            if status != 0 or len(q) < len(t):
                why = ("step budget spent" if status == sundials_baseline.BUDGET
                       else f"failed (SUNDIALS flag {status})")
                rows.append(f"| {method} | {tol:g} | {why} at t = {t[len(q) - 1]:.4g} s | "
                            f"{steps} | {rhs} | | | |")
                break
            secs = min(run[0], sundials_baseline.run(model, method, tol, t,
                                                     max_steps=STEP_BUDGET[problem])[0])
            err = marker_error(model, q, marker, exact)
            at = time_at(errors, seconds, err)
            errs.append(err)
            times.append(secs)
            ratio = "" if math.isnan(at) else f"{at / secs:.2f}"
            mine_at = "outside linkdyn's runs" if math.isnan(at) else f"{at * 1e3:.1f} ms"
            rows.append(f"| {method} | {tol:g} | {secs * 1e3:.1f} ms | {steps} | {rhs} | "
                        f"{err:.1e} m | {mine_at} | {ratio} |")
        curves[method] = (np.array(errs), np.array(times))
    CURVES[problem] = curves
    table = "\n".join(rows)
    TABLES[problem] = table
    print(f"\n{problem}: linkdyn against SUNDIALS on linkdyn's kernels\n{table}")
    benchmark.group = f"sundials baseline {problem}"
    benchmark.extra_info["table"] = table
    benchmark.pedantic(sundials_baseline.run, args=(model, BASELINES[0], 1e-8, t),
                       rounds=1, iterations=1)


def teardown_module():
    if not CURVES:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(CURVES), figsize=(4.5 * len(CURVES), 4.0))
    for ax, (problem, curves) in zip(np.atleast_1d(axes), CURVES.items()):
        for name, (errs, secs) in curves.items():
            if len(errs):
                ax.loglog(errs, secs * 1e3, "o-", label=name)
        ax.set_title(problem)
        ax.set_xlabel("largest error (m)")
        ax.set_ylabel("time (ms)")
        ax.invert_xaxis()
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    RESULTS.mkdir(exist_ok=True)
    fig.savefig(RESULTS / "work_precision_sundials.png", dpi=110)
    plt.close(fig)
    (RESULTS / "work_precision_sundials.md").write_text(
        "\n\n".join(f"{problem}\n\n{table}" for problem, table in TABLES.items()) + "\n")
