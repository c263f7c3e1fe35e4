"""Work against precision on the Jansen benchmark (10 s): linkdyn's methods (the default,
"auto", which runs the explicit method on this linkage; "rk"; "bdf") and, where it can be
built, the compiled SUNDIALS peer (ARKODE's explicit RK 7(8) on the index-1 form with
Baumgarte 10/10, hand-written C; its source and README are in ../shared/peers/jansen_c/
beside a linkdyn checkout). Each group times one tolerance; the peer's time comes from its
own best-of-5 loop in the same run. test_matched_accuracy_against_the_peer interpolates each
code's time at the same error and draws the work-precision plot
(benchmarks/results/jansen_methods.png).

Run:  python -m pytest benchmarks/test_bench_methods.py -s
"""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import linkdyn
from conftest import time_at

REFERENCE = np.loadtxt(Path(__file__).parents[1] / "tests" / "data" / "jansen_reference.txt")
PEER = Path(__file__).resolve().parents[2] / "shared" / "peers" / "jansen_c"
TOLS = [1e-6, 1e-8, 1e-10]
#: the work-precision sweep: rtol = atol from 1e-3 to 1e-11, half a decade apart
SWEEP = [10.0 ** (-k / 2) for k in range(6, 23)]
RESULTS = Path(__file__).parent / "results"


@pytest.fixture(scope="module")
def jansen():
    return linkdyn.load_model("jansen")


def p3_error(result):
    return float(np.max(np.hypot(*(result.marker("P3") - REFERENCE[:, 1:3]).T)))


@pytest.mark.parametrize("tol", TOLS)
@pytest.mark.parametrize("method", ["auto", "rk", "bdf"])
def test_jansen_method(benchmark, jansen, method, tol):
    benchmark.group = f"jansen methods rtol {tol:g}"
    benchmark.extra_info["role"] = {"auto": "linkdyn", "bdf": "baseline"}.get(method, "other")
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
                                kwargs=dict(rtol=tol, atol=tol, t_out=REFERENCE[:, 0]),
                                rounds=5, iterations=1, warmup_rounds=1)
    ours = result.stats["integration_seconds"]
    benchmark.extra_info.update(p3_error=p3_error(result), integration_seconds=ours,
                                peer_seconds=peer_seconds, peer_p3_error=peer_error,
                                time_ratio=ours / peer_seconds)
    print(f"\nrtol {tol:g}: linkdyn auto {ours * 1e3:.1f} ms, P3 error {p3_error(result):.2e} m;"
          f" SUNDIALS ARKODE RK 7(8) {peer_seconds * 1e3:.1f} ms, P3 error {peer_error:.2e} m")


def best_of(runs, fn):
    """The best (integration seconds, result) of ``runs`` calls of ``fn``."""
    best = None
    for _ in range(runs):
        r = fn()
        if best is None or r.stats["integration_seconds"] < best[0]:
            best = (r.stats["integration_seconds"], r)
    return best


def test_matched_accuracy_against_the_peer(benchmark, jansen, peer):
    """Each code over the sweep (linkdyn: best integration time of 3; the peer: best of 3
    in its own loop), then linkdyn's time at each of the peer's errors, interpolated
    log-log: the ratio linkdyn / peer at matched accuracy, and the plot."""
    binary, ref = peer
    codes = {"linkdyn auto": [], "linkdyn bdf": [], "SUNDIALS ARKODE RK 7(8)": []}
    for tol in SWEEP:
        for method in ("auto", "bdf"):
            secs, r = best_of(3, lambda: linkdyn.simulate(jansen, 10.0, rtol=tol, atol=tol,
                                                          t_out=REFERENCE[:, 0],
                                                          method=method))
            codes[f"linkdyn {method}"].append((p3_error(r), secs))
        run = subprocess.run([str(binary), "erk", f"{tol:g}", "--baum", "10,10", "--repeat",
                              "3", "--ref", str(ref)], capture_output=True, text=True,
                             check=True)
        fields = dict(f.split("=", 1) for f in run.stdout.split() if "=" in f)
        codes["SUNDIALS ARKODE RK 7(8)"].append((float(fields["errP3"]),
                                                 float(fields["wall"].rstrip("s"))))
    # one timed call for pytest-benchmark's table: the default at 1e-10
    benchmark.group = "jansen matched accuracy"
    benchmark.pedantic(linkdyn.simulate, args=(jansen, 10.0),
                       kwargs=dict(rtol=1e-10, atol=1e-10, t_out=REFERENCE[:, 0]),
                       rounds=3, iterations=1)
    ours = np.array(codes["linkdyn auto"])
    lines = ["| peer rtol | peer P3 error | peer time | linkdyn auto at that error | ratio |",
             "|---|---|---|---|---|"]
    ratios = []
    for tol, (err, secs) in zip(SWEEP, codes["SUNDIALS ARKODE RK 7(8)"]):
        mine = time_at(ours[:, 0], ours[:, 1], err)
        ratios.append(mine / secs)
        lines.append(f"| {tol:.3g} | {err:.2e} m | {secs * 1e3:.1f} ms | {mine * 1e3:.1f} ms | "
                     f"{mine / secs:.2f} |")
    table = "\n".join(lines)
    print("\nJansen, 10 s: linkdyn's time at the peer's P3 error\n" + table)
    benchmark.extra_info.update(ratios=[None if np.isnan(x) else x for x in ratios])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "jansen_methods.md").write_text(
        "Jansen, 10 s: linkdyn's integration time at the SUNDIALS peer's P3 error "
        "(benchmarks/test_bench_methods.py)\n\n" + table + "\n")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, points in codes.items():
        e, t = np.array(points).T
        ax.loglog(e, t * 1e3, "o-", label=name, ms=3)
    ax.set_xlabel("largest P3 error over 10 s [m]")
    ax.set_ylabel("integration time [ms]")
    ax.set_title("Jansen benchmark: work against precision")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(RESULTS / "jansen_methods.png", dpi=120)
    plt.close(fig)


def test_cost_trials_on_stiff_models(benchmark):
    """Method auto against "rk" and "bdf" where the explicit method's stiffness test does
    not fire: IFToMM A05's dampers (10 s) and a flexible arm's springs (5 s), at rtol 1e-6,
    1e-8 and 1e-10. Per run: integration time (best of two), steps of each method, trials
    (kept), the largest error of a marker against a BDF run at 1e-12, and the time per unit
    of work, the cost model the trials rely on (a right-hand side, a Newton iteration or
    half a factorisation should cost about the same)."""
    from linkdyn.models.spatial import FLYBALL_T_END, flyball_governor

    cases = (("A05", flyball_governor(), FLYBALL_T_END, "S"),
             ("flexible arm", linkdyn.load_model("flexible_arm"), 5.0, "tip"))
    rows = ["| model | rtol | method | time | rk / bdf steps | trials (kept) | error | "
            "us per unit |", "|---|---|---|---|---|---|---|---|"]
    for name, model, t_end, marker in cases:
        t = np.linspace(0.0, t_end, 501)
        ref = linkdyn.simulate(model, t_end, rtol=1e-12, atol=1e-12, t_out=t,
                               method="bdf").marker(marker)
        for tol in TOLS:
            for method in ("auto", "rk", "bdf"):
                runs = [linkdyn.simulate(model, t_end, rtol=tol, atol=tol, t_out=t,
                                         method=method) for _ in range(2)]
                r = min(runs, key=lambda r: r.stats["integration_seconds"])
                s, secs = r.stats, r.stats["integration_seconds"]
                err = float(np.abs(r.marker(marker) - ref).max())
                rows.append(f"| {name} | {tol:g} | {method} | {secs * 1e3:.1f} ms | "
                            f"{s['rk_steps']} / {s['bdf_steps']} | {s['cost_trials']} "
                            f"({s['trials_kept']}) | {err:.1e} m | "
                            f"{secs / max(1, s['work_units']) * 1e6:.2f} |")
    table = "\n".join(rows)
    print("\nMethod auto's cost trials on stiff models\n" + table)
    benchmark.group = "cost trials"
    benchmark.extra_info["table"] = table
    model = flyball_governor()
    benchmark.pedantic(linkdyn.simulate, args=(model, FLYBALL_T_END),
                       kwargs=dict(rtol=1e-6, atol=1e-6, t_out="final"), rounds=3,
                       iterations=1)


def test_chain_of_ten_thousand_bars_at_matched_accuracy(benchmark):
    """The issue's large-model case: the hanging chain of 10^4 bars (linkdyn.chain, 1 cm
    bars, 40,000 coordinates) over 2 ms, the default method and the BDF at rtol 1e-6 ...
    1e-9, each against an explicit run at 1e-11 (the coordinates reach 70 m, so the error is
    the largest coordinate's distance). Per run: integration time (best of two), steps,
    integration seconds per body and step, and the error. An explicit step costs twelve
    right-hand sides, so its cost per body-step is several times a BDF step's; what the
    comparison is about is the time each method needs for a given error."""
    n = 10_000
    model = linkdyn.chain(n, length=1.0 / np.sqrt(n))
    t_end = 2e-3
    ref = linkdyn.simulate(model, t_end, rtol=1e-11, atol=1e-11, t_out="final",
                           method="rk").q[-1]
    rows = ["| method | rtol | time | steps | us per body-step | error |",
            "|---|---|---|---|---|---|"]
    for method, tols in (("auto", (1e-6, 1e-8)), ("bdf", (1e-6, 1e-8, 1e-9))):
        for tol in tols:
            runs = [linkdyn.simulate(model, t_end, rtol=tol, atol=tol, t_out="final",
                                     method=method) for _ in range(2)]
            r = min(runs, key=lambda r: r.stats["integration_seconds"])
            secs, steps = r.stats["integration_seconds"], r.stats["steps"]
            err = float(np.abs(r.q[-1] - ref).max())
            rows.append(f"| {method} | {tol:g} | {secs * 1e3:.0f} ms | {steps} | "
                        f"{secs / (steps * n) * 1e6:.2f} | {err:.1e} m |")
    table = "\n".join(rows)
    print(f"\nChain of {n} bars, {t_end * 1e3:g} ms, against an explicit run at 1e-11\n"
          + table)
    benchmark.group = "chain of 10^4 bars"
    benchmark.extra_info["table"] = table
    benchmark.pedantic(linkdyn.simulate, args=(model, t_end),
                       kwargs=dict(rtol=1e-6, atol=1e-6, t_out="final"), rounds=1,
                       iterations=1)
