"""Benchmark helpers: after the run, print each group's speed-up of linkdyn over the
baseline measured in the same run (median times), and write them to benchmarks/results/."""

import json
import os
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


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
