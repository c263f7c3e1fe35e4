"""Instructions instead of seconds on the Jansen benchmark (10 s): valgrind's callgrind counts
what the integration loops execute, which a shared, noisy machine cannot distort.

linkdyn: each run is its own Python process under ``valgrind --tool=callgrind
--toggle-collect=ld_bdf_integrate``, so that only the C integration loop is counted (its
steps, right-hand sides, output rows and the kernels it calls; not the imports, the model's
compilation, the consistent initial state or the result's assembly in Python). The peer: the
compiled SUNDIALS code of ../shared/peers/jansen_c/ (ARKODE's explicit RK 7(8) on the index-1
form with Baumgarte 10/10, hand-written C) under ``--toggle-collect=ERKStepEvolve``, its
solve loop. Both count the loop alone, warm, in the same run. Errors are the largest
distance of P3 from tests/data's reference over t = 0:0.01:10; linkdyn's instructions are
interpolated (log-log) at each peer run's error, as test_bench_methods.py does with times.

Skipped where valgrind is not installed; the peer's rows are left out where it cannot be
built. Some five minutes (Python under valgrind is slow to start).

Run:  python -m pytest benchmarks/test_bench_instructions.py -s
"""

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import time_at

HERE = Path(__file__).parent
REFERENCE = HERE.parent / "tests" / "data" / "jansen_reference.txt"
PEER = HERE.resolve().parents[1] / "shared" / "peers" / "jansen_c"
VALGRIND = shutil.which("valgrind")
DEFAULT_TOLS = [1e-4, 1e-6, 1e-8, 1e-10, 1e-11]
BDF_TOLS = [1e-6, 1e-8, 1e-10]
PEER_TOLS = [1e-5, 1e-7, 1e-9, 1e-10]

#: one linkdyn run, in a process of its own: prints the P3 error and the work counters
RUN = """
import sys
import numpy as np
import linkdyn
ref = np.loadtxt(sys.argv[1])
tol, method = float(sys.argv[2]), sys.argv[3]
r = linkdyn.simulate(linkdyn.load_model("jansen"), 10.0, rtol=tol, atol=tol, t_out=ref[:, 0],
                     method=method)
err = np.max(np.hypot(*(r.marker("P3") - ref[:, 1:3]).T))
print("err", err, "steps", r.stats["steps"], "rhs", r.stats["rhs_evaluations"],
      "rows", r.stats["output_rows"])
"""

pytestmark = pytest.mark.skipif(VALGRIND is None, reason="valgrind is not installed")


def callgrind(cmd, toggle, out, env=None):
    """(instructions inside ``toggle`` and its callees, the program's stdout)."""
    run = subprocess.run([VALGRIND, "--tool=callgrind", f"--toggle-collect={toggle}",
                          f"--callgrind-out-file={out}", *cmd], capture_output=True,
                         text=True, env=env, check=True)
    text = Path(out).read_text()
    found = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    return int(found.group(1)), run.stdout


def linkdyn_run(tmp, tol, method):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH")] + sys.path))
    count, out = callgrind([sys.executable, "-c", RUN, str(REFERENCE), f"{tol:g}", method],
                           "ld_bdf_integrate", tmp / f"ld-{method}-{tol:g}.cg", env)
    words = out.split()
    fields = dict(zip(words[::2], words[1::2]))
    return dict(tol=tol, instructions=count, error=float(fields["err"]),
                steps=int(fields["steps"]), rhs=int(fields["rhs"]), rows=int(fields["rows"]))


@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    """The peer's binary and reference file, or None where it cannot be built."""
    if not (PEER / "build.sh").exists() or shutil.which("gcc") is None:
        return None
    out = tmp_path_factory.mktemp("peer")
    build = subprocess.run(["bash", str(PEER / "build.sh"), str(out)], capture_output=True,
                           text=True)
    if build.returncode != 0:
        return None
    ref = out / "ref.txt"
    np.savetxt(ref, np.loadtxt(REFERENCE))
    return out / "jansen_ida", ref


def peer_runs(tmp, peer):
    binary, ref = peer
    runs = []
    for tol in PEER_TOLS:
        count, out = callgrind([str(binary), "erk", f"{tol:g}", "--baum", "10,10", "--repeat",
                                "1", "--ref", str(ref)], "ERKStepEvolve",
                               tmp / f"peer-{tol:g}.cg")
        fields = dict(f.split("=", 1) for f in out.split() if "=" in f)
        runs.append(dict(tol=tol, instructions=count, error=float(fields["errP3"])))
    return runs


def test_instructions_against_the_peer(benchmark, tmp_path, peer):
    mine = {"default": [linkdyn_run(tmp_path, tol, "auto") for tol in DEFAULT_TOLS],
            "bdf": [linkdyn_run(tmp_path, tol, "bdf") for tol in BDF_TOLS]}
    rows = ["| code | rtol | P3 error | instructions | steps | right-hand sides | "
            "per right-hand side |", "|---|---|---|---|---|---|---|"]
    for name, runs in mine.items():
        for r in runs:
            per = f"{r['instructions'] / r['rhs'] / 1e3:.1f} k" if r["rhs"] else "-"
            rows.append(f"| linkdyn ({name}) | {r['tol']:g} | {r['error']:.1e} m | "
                        f"{r['instructions'] / 1e6:.1f} M | {r['steps']} | {r['rhs']} | "
                        f"{per} |")
    matched = []
    if peer is not None:
        rows += ["", "| peer rtol | peer P3 error | peer instructions | linkdyn (default) at "
                 "that error | ratio | linkdyn (bdf) at that error | ratio |",
                 "|---|---|---|---|---|---|---|"]
        for p in peer_runs(tmp_path, peer):
            cells = [f"{p['tol']:g}", f"{p['error']:.1e} m", f"{p['instructions'] / 1e6:.1f} M"]
            for name in ("default", "bdf"):
                errs = np.array([r["error"] for r in mine[name]])
                counts = np.array([float(r["instructions"]) for r in mine[name]])
                at = time_at(errs, counts, p["error"])
                ratio = at / p["instructions"]
                matched.append((name, p["error"], ratio))
                cells += (["outside its runs", ""] if math.isnan(at)
                          else [f"{at / 1e6:.1f} M", f"{ratio:.2f}"])
            rows.append("| " + " | ".join(cells) + " |")
    table = "\n".join(rows)
    print(f"\nJansen, 10 s: instructions of the integration loops (callgrind)\n{table}")
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / "instructions.md").write_text(table + "\n")
    benchmark.group = "instructions"
    benchmark.extra_info["table"] = table
    benchmark.extra_info["matched"] = matched
    # the benchmark's own timing: one plain run of the default method at 1e-8
    benchmark.pedantic(subprocess.run, args=([sys.executable, "-c", RUN, str(REFERENCE),
                                               "1e-08", "auto"],),
                       kwargs=dict(capture_output=True, check=True), rounds=1, iterations=1)
    assert all(r["instructions"] > 0 for runs in mine.values() for r in runs)
