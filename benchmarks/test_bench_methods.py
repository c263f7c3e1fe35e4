"""Work against precision on the Jansen benchmark (10 s): linkdyn's explicit method
(method="rk") against its BDF, and, where it can be built, against the compiled SUNDIALS peer
(ARKODE's explicit RK 7(8) on the index-1 form with Baumgarte 10/10, hand-written C; its
source and README are in ../shared/peers/jansen_c/ beside a linkdyn checkout). Each group
times one tolerance; the peer's time comes from its own best-of-5 loop in the same run.

Run:  python -m pytest benchmarks/test_bench_methods.py
"""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import linkdyn

REFERENCE = np.loadtxt(Path(__file__).parents[1] / "tests" / "data" / "jansen_reference.txt")
PEER = Path(__file__).resolve().parents[2] / "shared" / "peers" / "jansen_c"
TOLS = [1e-6, 1e-8, 1e-10]


@pytest.fixture(scope="module")
def jansen():
    return linkdyn.load_model("jansen")


def p3_error(result):
    return float(np.max(np.hypot(*(result.marker("P3") - REFERENCE[:, 1:3]).T)))


@pytest.mark.parametrize("tol", TOLS)
@pytest.mark.parametrize("method", ["rk", "bdf"])
def test_jansen_method(benchmark, jansen, method, tol):
    benchmark.group = f"jansen methods rtol {tol:g}"
    benchmark.extra_info["role"] = "linkdyn" if method == "rk" else "baseline"
    result = benchmark.pedantic(linkdyn.simulate, args=(jansen, 10.0),
                                kwargs=dict(rtol=tol, atol=tol, t_out=REFERENCE[:, 0],
                                            method=method),
                                rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(p3_error=p3_error(result), steps=result.stats["steps"],
                                integration_seconds=result.stats["integration_seconds"])


@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    """The SUNDIALS peer, built from its source (skipped where it or SUNDIALS is missing)."""
    if not (PEER / "build.sh").exists() or shutil.which("gcc") is None:
        pytest.skip("the SUNDIALS peer's source is not beside this checkout")
    out = tmp_path_factory.mktemp("peer")
    build = subprocess.run(["bash", str(PEER / "build.sh"), str(out)], capture_output=True,
                           text=True)
    if build.returncode != 0:
        pytest.skip("the SUNDIALS peer does not build here (libsundials-dev missing?)")
    ref = out / "ref.txt"
    np.savetxt(ref, REFERENCE)
    return out / "jansen_ida", ref


@pytest.mark.parametrize("tol", TOLS)
def test_jansen_against_the_sundials_peer(benchmark, jansen, peer, tol):
    """linkdyn's explicit method and the peer at the same tolerance: time and P3 error of
    each (the peer's best of 5 in its own loop; linkdyn's best integration time of 5)."""
    binary, ref = peer
    run = subprocess.run([str(binary), "erk", f"{tol:g}", "--baum", "10,10", "--repeat", "5",
                          "--ref", str(ref)], capture_output=True, text=True, check=True)
    fields = dict(f.split("=", 1) for f in run.stdout.split() if "=" in f)
    peer_seconds, peer_error = float(fields["wall"].rstrip("s")), float(fields["errP3"])
    benchmark.group = f"jansen vs SUNDIALS rtol {tol:g}"
    result = benchmark.pedantic(linkdyn.simulate, args=(jansen, 10.0),
                                kwargs=dict(rtol=tol, atol=tol, t_out=REFERENCE[:, 0],
                                            method="rk"),
                                rounds=5, iterations=1, warmup_rounds=1)
    ours = result.stats["integration_seconds"]
    benchmark.extra_info.update(p3_error=p3_error(result), integration_seconds=ours,
                                peer_seconds=peer_seconds, peer_p3_error=peer_error,
                                time_ratio=ours / peer_seconds)
    print(f"\nrtol {tol:g}: linkdyn rk {ours * 1e3:.1f} ms, P3 error {p3_error(result):.2e} m;"
          f" SUNDIALS ARKODE RK 7(8) {peer_seconds * 1e3:.1f} ms, P3 error {peer_error:.2e} m")
