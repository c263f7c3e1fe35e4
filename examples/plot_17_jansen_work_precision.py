"""
Work and precision on the Jansen benchmark
==========================================

How long does the Jansen benchmark (11 bars, 10 s under gravity) take for a given accuracy?
linkdyn's default method at several tolerances against what a Python user would write
today: the index-1 form of the same model, integrated by SciPy's LSODA, with the
accelerations solved from the KKT system at every right-hand side (using linkdyn's own
kernels for the constraint Jacobian, forces and accelerations, so that the comparison is of
integrators). The error is the largest distance of marker P3 from a linkdyn run at rtol
1e-12 over the 10 s; times are measured on the machine that built this page, in this run.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from scipy.integrate import solve_ivp

import linkdyn

model = linkdyn.load_model("jansen")
t_out = np.linspace(0.0, 10.0, 1001)
reference = linkdyn.simulate(model, 10.0, rtol=1e-12, atol=1e-12, t_out=t_out).marker("P3")


def error(p3):
    return float(np.linalg.norm(p3 - reference, axis=1).max())


# linkdyn: the integration time it reports for each tolerance.
ours = []
for tol in (1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10):
    r = linkdyn.simulate(model, 10.0, rtol=tol, atol=tol, t_out=t_out)
    ours.append((tol, r.stats["integration_seconds"], error(r.marker("P3"))))

# SciPy: q' = v, [M Phi_q^T; Phi_q 0] [v'; lam] = [Q; gamma].
nq, nc = model.nq, model.nc
kkt = np.zeros((nq + nc, nq + nc))
kkt[np.arange(nq), np.arange(nq)] = model.mass
b = np.empty(nq + nc)


def index1(t, y):
    q, v = y[:nq], y[nq:]
    J = model.phi_q(q, t).toarray()
    kkt[:nq, nq:], kkt[nq:, :nq] = J.T, J
    b[:nq], b[nq:] = model.force(q, v, t), model.gamma(q, v, t)
    return np.concatenate([v, np.linalg.solve(kkt, b)[:nq]])


state = linkdyn.consistent_state(model)
p3 = model.marker_names.index("P3")
scipy_runs = []
for tol in (1e-5, 1e-6, 1e-7, 1e-8):
    start = time.perf_counter()
    sol = solve_ivp(index1, (0.0, 10.0), np.concatenate([state.q, state.v]), method="LSODA",
                    rtol=tol, atol=tol, t_eval=t_out)
    seconds = time.perf_counter() - start
    positions = np.array([model.marker_positions(q)[p3] for q in sol.y[:nq].T])
    scipy_runs.append((tol, seconds, error(positions)))

print(" rtol     linkdyn: time, P3 error       SciPy LSODA: time, P3 error")
for (tol, t1, e1), other in zip(ours, scipy_runs + [None] * len(ours)):
    row = f"{tol:.0e}   {1e3 * t1:7.1f} ms  {e1:.1e} m"
    if other:
        row += f"     {1e3 * other[1]:8.1f} ms  {other[2]:.1e} m"
    print(row)

fig, ax = plt.subplots(figsize=(6.5, 4.2))
ax.loglog([e for _, _, e in ours], [t for _, t, _ in ours], "o-", label="linkdyn (default)")
ax.loglog([e for _, _, e in scipy_runs], [t for _, t, _ in scipy_runs], "s--",
          label="SciPy LSODA, index-1 form")
for tol, t, e in ours:
    ax.annotate(f"{tol:.0e}", (e, t), textcoords="offset points", xytext=(4, 4),
                fontsize="x-small")
ax.set_xlabel("largest error of P3 over 10 s (m)")
ax.set_ylabel("time (s)")
ax.set_title("Jansen benchmark: work against precision")
ax.legend()
