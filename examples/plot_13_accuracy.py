"""
Error against tolerance, and estimating it
==========================================

linkdyn's global error falls in proportion to the tolerance (its local tolerances are
chosen for that). How large it is for a given tolerance depends on the problem's
sensitivity, which no tolerance knows in advance; :func:`linkdyn.estimate_error` measures it
by running the model again with tolerances 100 times tighter. Here both on IFToMM A01, a
pendulum with an exact solution, and on the Jansen linkage over two seconds.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn.models import iftomm

tols = 10.0 ** -np.arange(5, 11)
true, estimated, times = [], [], []
for tol in tols:
    e = linkdyn.estimate_error(iftomm.simple_pendulum(), 10.0, rtol=tol, atol=tol)
    exact = iftomm.pendulum_exact(e.result.t)
    true.append(np.linalg.norm(e.result.marker("P1") - exact, axis=1).max())
    estimated.append(e.max_marker("P1"))
    times.append(e.result.stats["integration_seconds"])
slope = np.polyfit(np.log10(tols), np.log10(true), 1)[0]
print(f"A01: slope of log(error) against log(rtol) {slope:.2f}")
for tol, t, s in zip(tols, true, estimated):
    print(f"  rtol {tol:.0e}: error {t:.2e} m, estimated {s:.2e} m")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
ax1.loglog(tols, true, "o-", label="error against the exact motion")
ax1.loglog(tols, estimated, "x--", label="estimate_error")
ax1.loglog(tols, tols, ":", color="0.5", label="rtol")
ax1.set_xlabel("rtol = atol")
ax1.set_ylabel("largest error of P1 (m)")
ax1.legend(fontsize="small")
ax2.loglog(true, times, "o-")
ax2.set_xlabel("error (m)")
ax2.set_ylabel("integration time (s)")
ax2.set_title("work-precision")
fig.tight_layout()

# %%
# The same estimate on a model without a known solution: the Jansen linkage, whose foot's
# error along the run it reports row by row.

e = linkdyn.estimate_error("jansen", 2.0, rtol=1e-8, atol=1e-8)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogy(e.result.t[1:], e.marker("P3")[1:])
ax.set_xlabel("t (s)")
ax.set_ylabel("estimated error of P3 (m)")
print(f"Jansen at rtol 1e-8: P3 within about {e.max_marker('P3'):.1e} m")
