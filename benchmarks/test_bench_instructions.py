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
built. Some ten minutes (Python under valgrind is slow to start).

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
DEFAULT_TOLS = [1e-3, 1e-4, 1e-6, 1e-8, 1e-10, 1e-11]
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


#: One thread for BLAS: callgrind's collection is switched on for the whole process while
#: the main thread is in the integration loop, and OpenBLAS's idle workers spinning after the
#: consistent state's last matrix product were counted with it (a run at rtol 1e-6 with the
#: BDF counted 487 M instructions in one process, 1,176 M in another, the same steps).
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def linkdyn_run(tmp, tol, method, generated="auto"):
    env = dict(os.environ, LINKDYN_GENERATED_CODE=generated, **ONE_THREAD)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH")] + sys.path))
    count, out = callgrind([sys.executable, "-c", RUN, str(REFERENCE), f"{tol:g}", method],
                           "ld_bdf_integrate", tmp / f"ld-{method}-{generated}-{tol:g}.cg", env)
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
    # "default, loops": the same runs with the Schur plan's loops in place of its
    # straight-line code (LINKDYN_GENERATED_CODE=off), the baseline of linkdyn.solve.generated;
    # "bdf, KLU": the BDF with KLU in place of the straight-line LU code (linkdyn.solve.lu_code)
    mine = {"default": [linkdyn_run(tmp_path, tol, "auto") for tol in DEFAULT_TOLS],
            "default, loops": [linkdyn_run(tmp_path, tol, "auto", "off")
                               for tol in DEFAULT_TOLS],
            "bdf": [linkdyn_run(tmp_path, tol, "bdf") for tol in BDF_TOLS],
            "bdf, KLU": [linkdyn_run(tmp_path, tol, "bdf", "off") for tol in BDF_TOLS]}
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
                 "that error | ratio | the same with the plan's loops | ratio | linkdyn (bdf) "
                 "at that error | ratio | the same with KLU | ratio |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        for p in peer_runs(tmp_path, peer):
            cells = [f"{p['tol']:g}", f"{p['error']:.1e} m", f"{p['instructions'] / 1e6:.1f} M"]
            for name in ("default", "default, loops", "bdf", "bdf, KLU"):
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


def inclusive_per_call(path, name):
    """(instructions, calls) of the function ``name`` in a callgrind file: the inclusive
    cost and the count of every call to it that was collected."""
    names, cost, calls = {}, 0, 0
    lines = Path(path).read_text().splitlines()
    for k, line in enumerate(lines):
        found = re.match(r"^c?fn=\((\d+)\)(?: (.*))?$", line)
        if not found:
            continue
        if found.group(2):
            names[found.group(1)] = found.group(2)
        if line.startswith("cfn=") and names.get(found.group(1)) == name:
            calls += int(lines[k + 1].split()[0].split("=")[1])
            cost += int(lines[k + 2].split()[-1])
    return cost, calls


def test_one_right_hand_side_against_the_peer(benchmark, tmp_path, peer, monkeypatch):
    """The instructions of one right-hand side of the index-1 form on the Jansen linkage:
    linkdyn's ``rhs`` (csrc/ld_rk.c: Phi_q, S's factorisation, the multipliers and the
    accelerations) with the straight-line Schur code and with the plan's loops
    (LINKDYN_GENERATED_CODE=off), against the peer's hand-written ``rhs_i1`` (its
    straight-line Cholesky, no Baumgarte terms); each the inclusive cost over all calls in
    a run at rtol 1e-9, divided by the calls."""
    rows = ["| code | instructions per right-hand side | calls |", "|---|---|---|"]
    per = {}
    for how in ("require", "off"):
        monkeypatch.setenv("LINKDYN_GENERATED_CODE", how)
        out = tmp_path / f"rhs-{how}.cg"
        linkdyn_run_file(tmp_path, 1e-9, out)
        cost, calls = inclusive_per_call(out, "rhs")
        per[how] = cost / calls
        label = "straight-line code" if how == "require" else "the plan's loops"
        rows.append(f"| linkdyn, {label} | {cost / calls:,.0f} | {calls} |")
    if peer is not None:
        binary, ref = peer
        out = tmp_path / "rhs-peer.cg"
        callgrind([str(binary), "erk", "1e-9", "--repeat", "1", "--ref", str(ref)],
                  "ERKStepEvolve", out)
        cost, calls = inclusive_per_call(out, "rhs_i1")
        per["peer"] = cost / calls
        rows.append(f"| peer (`rhs_i1`) | {cost / calls:,.0f} | {calls} |")
        rows.append(f"| linkdyn (straight-line) / peer | {per['require'] / per['peer']:.2f} | |")
    table = "\n".join(rows)
    print(f"\nJansen: one right-hand side of the index-1 form (callgrind)\n{table}")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "right_hand_side.md").write_text(table + "\n")
    benchmark.group = "instructions"
    benchmark.extra_info["table"] = table
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    assert per["require"] > 0 and per["off"] > 0


def linkdyn_run_file(tmp, tol, out):
    """One default-method run under callgrind (as linkdyn_run) into the file ``out``."""
    env = dict(os.environ, **ONE_THREAD)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH")] + sys.path))
    return callgrind([sys.executable, "-c", RUN, str(REFERENCE), f"{tol:g}", "auto"],
                     "ld_bdf_integrate", out, env)
