"""Kinematic sweeps against a closed form (issue 54, item 5): the built-in crank-rocker
(crank 1, coupler 4, rocker 3, ground 4; its driver turns the crank at 1 rad/s), the position,
velocity and acceleration of its coupler point P at N crank angles over one turn, by
``linkdyn.kinematics`` and by a vectorised numpy closed form of the same four-bar (the
circle intersection on the model's branch, velocities and accelerations from the loop
equations differentiated), in the same run: positions per second of each and their ratio,
at N = 1,000 and 100,000. The closed form is also the check: both agree to 1e-9 m.

Each code is timed as a user calls it (the result's arrays included), best of several
rounds interleaved. Where valgrind is installed, the instructions of linkdyn's compiled sweep
a position are counted too (callgrind, the sweep's loop alone, 10,000 and 100,000 positions
a turn), with the LU factorisations by straight-line code (linkdyn.solve.lu_code) and by KLU
alone.

Run:  python -m pytest benchmarks/test_bench_positions.py -s
"""

import math
import os
import sys
import time

import numpy as np
import pytest

import linkdyn

SIZES = (1_000, 100_000)


def closed_form(theta, omega):
    """P's position, velocity and acceleration (each (N, 2)) at crank angles theta, the crank
    turning at omega (constant): A = 0, D = (4, 0), |AB| = 1, |BC| = 4, |CD| = 3, P fixed on
    BC's frame as in the model, C on the branch above the line BD (the model's)."""
    d = np.array([4.0, 0.0])
    b = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    bd = d - b
    dist = np.hypot(bd[:, 0], bd[:, 1])
    along = (dist ** 2 + 16.0 - 9.0) / (2.0 * dist)           # from B towards D
    height = np.sqrt(16.0 - along ** 2)
    e = bd / dist[:, None]
    n = np.stack([-e[:, 1], e[:, 0]], axis=1)
    c = b + along[:, None] * e + height[:, None] * n
    # P in the coupler's frame: P = B + s u + h u_perp, u = (C - B) / 4 (from the model)
    s, h = P_IN_COUPLER
    u = (c - b) / 4.0
    up = np.stack([-u[:, 1], u[:, 0]], axis=1)
    p = b + s * u + h * up
    # velocities: B' = omega B_perp; C' = w3 (C - D)_perp; C' - B' = w2 (C - B)_perp
    bp = omega * np.stack([-b[:, 1], b[:, 0]], axis=1)
    cb, cd = c - b, c - d
    cbp = np.stack([-cb[:, 1], cb[:, 0]], axis=1)
    cdp = np.stack([-cd[:, 1], cd[:, 0]], axis=1)
    # w3 cdp - w2 cbp = bp: a 2 x 2 system per angle, by Cramer's rule
    det = -cdp[:, 0] * cbp[:, 1] + cbp[:, 0] * cdp[:, 1]
    w3 = (-bp[:, 0] * cbp[:, 1] + cbp[:, 0] * bp[:, 1]) / det
    w2 = (cdp[:, 0] * bp[:, 1] - bp[:, 0] * cdp[:, 1]) / det
    pb = p - b
    pv = bp + w2[:, None] * np.stack([-pb[:, 1], pb[:, 0]], axis=1)
    # accelerations: B'' = -omega^2 B; C'' = a3 cd_perp - w3^2 cd = B'' + a2 cb_perp - w2^2 cb,
    # so a3 cd_perp - a2 cb_perp = rhs, the same 2 x 2 system (a2 alone is needed)
    rhs = -omega ** 2 * b - (w2 ** 2)[:, None] * cb + (w3 ** 2)[:, None] * cd
    a2 = (cdp[:, 0] * rhs[:, 1] - rhs[:, 0] * cdp[:, 1]) / det
    pa = (-omega ** 2 * b + a2[:, None] * np.stack([-pb[:, 1], pb[:, 0]], axis=1)
          - (w2 ** 2)[:, None] * pb)
    return p, pv, pa


def _p_in_coupler():
    """P's coordinates along and across B->C, from the built-in model's description."""
    coupler = dict((b.name, b) for b in linkdyn.load_model("crank_rocker").description.bodies)
    pts = dict(coupler["coupler"].points)
    bc = np.subtract(pts["C"], pts["B"])
    u = bc / np.hypot(*bc)
    bp = np.subtract(pts["P"], pts["B"])
    return float(bp @ u), float(bp @ np.array([-u[1], u[0]]))


P_IN_COUPLER = _p_in_coupler()


def linkdyn_sweep(model, t):
    r = linkdyn.kinematics(model, t)
    return r.marker("P"), r.marker_velocity("P"), r.marker_acceleration("P")


def _klu_sweep(model, t):
    """linkdyn_sweep with KLU alone (LINKDYN_GENERATED_CODE=off: no straight-line LU code)."""
    before = os.environ.get("LINKDYN_GENERATED_CODE")
    os.environ["LINKDYN_GENERATED_CODE"] = "off"
    try:
        return linkdyn_sweep(model, t)
    finally:
        if before is None:
            del os.environ["LINKDYN_GENERATED_CODE"]
        else:
            os.environ["LINKDYN_GENERATED_CODE"] = before


def _best(run, *args, rounds=5):
    best = math.inf
    for _ in range(rounds):
        t0 = time.perf_counter()
        run(*args)
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.parametrize("n", SIZES)
def test_positions_per_second_against_the_closed_form(benchmark, n):
    model = linkdyn.load_model("crank_rocker")
    t = np.linspace(0.0, 2.0 * math.pi, n)
    mine = linkdyn_sweep(model, t)
    exact = closed_form(t, omega=1.0)
    for got, want in zip(mine, exact):
        assert np.abs(got - want).max() < 1e-9 * max(1.0, np.abs(want).max())
    rounds = 5 if n <= 10_000 else 3
    ours, klu, theirs = [], [], []
    for _ in range(rounds):                 # interleaved: all see the same machine load
        ours.append(_best(linkdyn_sweep, model, t, rounds=1))
        klu.append(_best(_klu_sweep, model, t, rounds=1))
        theirs.append(_best(closed_form, t, 1.0, rounds=1))
    ours, klu, theirs = min(ours), min(klu), min(theirs)
    benchmark.group = f"crank-rocker, {n} positions with velocities and accelerations"
    benchmark.extra_info.update(linkdyn_positions_per_second=n / ours,
                                closed_form_positions_per_second=n / theirs,
                                klu_positions_per_second=n / klu, ratio=ours / theirs)
    print(f"\n{n} positions: linkdyn {n / ours / 1e3:,.0f} k/s (on KLU alone "
          f"{n / klu / 1e3:,.0f} k/s), numpy closed form {n / theirs / 1e3:,.0f} k/s: linkdyn "
          f"takes {ours / theirs:.1f} times as long ({klu / theirs:.1f} on KLU)")
    benchmark.pedantic(linkdyn_sweep, args=(model, t), rounds=1, iterations=1)


#: One sweep of the crank-rocker in a process of its own (instructions: test_bench_instructions)
SWEEP = """
import sys
import numpy as np
import linkdyn
model = linkdyn.load_model("crank_rocker")
linkdyn.kinematics(model, np.linspace(0.0, 1.0, 11))      # code compiled, caches warm
r = linkdyn.kinematics(model, np.linspace(0.0, 2.0 * np.pi, int(sys.argv[1])))
print(r.stats["lu_kernels"], r.stats["generated_factorizations"])
"""


def _sweep_instructions(tmp, n, generated):
    from test_bench_instructions import ONE_THREAD, callgrind
    env = dict(os.environ, LINKDYN_GENERATED_CODE=generated, **ONE_THREAD)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH")] + sys.path))
    count, out = callgrind([sys.executable, "-c", SWEEP, str(n)], "*KinematicSweep_*sweep*",
                           tmp / f"sweep-{generated}.cg", env)
    return count / n, out.split()[0]


@pytest.mark.parametrize("n", (10_000, 100_000))
def test_instructions_a_position(benchmark, tmp_path, n):
    import shutil
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    klu, kind_klu = _sweep_instructions(tmp_path, n, "off")
    code, kind_code = _sweep_instructions(tmp_path, n, "auto")
    benchmark.group = f"crank-rocker sweep of {n} positions, instructions a position"
    benchmark.extra_info.update(klu=klu, straight_line=code, ratio=code / klu)
    print(f"\ninstructions a position ({n:,} positions): {kind_klu} {klu:,.0f}, "
          f"{kind_code} {code:,.0f} ({code / klu:.2f} of KLU's)")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
