"""Benchmark helpers: after the run, print each group's speed-up of linkdyn over the
baseline measured in the same run (median times), and write them to benchmarks/results/;
write the work-precision table (benchmarks/results/work_precision.md) when it was run;
``time_at`` for the comparisons at matched accuracy."""

import json
import os
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).parent / "results"


def time_at(errors, seconds, target) -> float:
    """The time at which a code with runs (errors, seconds) reaches the error ``target``,
    interpolated log-log (nan outside its runs)."""
    le, lt = np.log(errors), np.log(seconds)
    order = np.argsort(le)
    if not le.min() <= np.log(target) <= le.max():
        return float("nan")
    return float(np.exp(np.interp(np.log(target), le[order], lt[order])))


def pytest_terminal_summary(terminalreporter, config):
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    groups = {}
    for bench in session.benchmarks:
        role = bench.extra_info.get("role")
        if role in ("baseline", "linkdyn"):
            groups.setdefault(bench.group, {})[role] = bench.stats.median
    rows = []
    for group, times in sorted(groups.items()):
        if len(times) == 2:
            rows.append({"group": group, "baseline_median_s": times["baseline"],
                         "linkdyn_median_s": times["linkdyn"],
                         "speedup": times["baseline"] / times["linkdyn"]})
    _work_precision(terminalreporter, session)
    if not rows:
        return
    terminalreporter.section("linkdyn speed-up over the baseline (same run, medians)")
    for r in rows:
        terminalreporter.write_line(
            f"{r['group']:40s} baseline {r['baseline_median_s'] * 1e6:10.1f} us   linkdyn "
            f"{r['linkdyn_median_s'] * 1e6:10.1f} us   speed-up {r['speedup']:8.1f}x")
    RESULTS.mkdir(exist_ok=True)
    name = os.environ.get("LINKDYN_BENCH_NAME", "speedups")
    (RESULTS / f"{name}.json").write_text(json.dumps(rows, indent=2) + "\n")


def _work_precision(terminalreporter, session):
    rows = sorted(((b.extra_info["rtol"], b) for b in session.benchmarks
                   if b.group == "work-precision"), key=lambda r: -r[0])
    if not rows:
        return
    lines = ["| rtol = atol | wall time (median) | integration time | steps | max marker "
             "error [m] | energy variation [J] |", "|---|---|---|---|---|---|"]
    for tol, b in rows:
        e = b.extra_info
        lines.append(f"| {tol:g} | {b.stats.median * 1e3:.1f} ms | "
                     f"{e['integration_seconds'] * 1e3:.1f} ms | {e['steps']} | "
                     f"{e['error']:.2e} | {e['energy_variation']:.2e} |")
    table = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "work_precision.md").write_text(
        "Jansen mechanism, 10 s, errors against tests/data/jansen_reference.txt\n\n" + table)
    terminalreporter.section("work-precision (Jansen, 10 s)")
    for line in lines:
        terminalreporter.write_line(line)
