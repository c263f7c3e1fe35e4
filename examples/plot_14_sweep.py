"""
A parameter sweep
=================

:func:`linkdyn.sweep` runs a model over a grid of parameters, given as paths into its model
file (here the length of the Jansen linkage's link ``L5`` and the gravity of the Earth or the
Moon), and returns a pandas table with one row per case: the parameters, the outputs, the
work counters and the status of each run. ``executor="process"`` runs the cases on a
process pool and ``"dask"`` on a Dask cluster, with the same results bit for bit; this page
runs them one after the other.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

lengths = np.round(np.linspace(0.58, 0.64, 7), 4).tolist()
table = linkdyn.sweep(
    "jansen",
    {"gravity": [[0.0, -9.81], [0.0, -1.62]], "bodies.L5.length": lengths},
    run="simulate", run_options={"t_end": 2.0, "rtol": 1e-8, "atol": 1e-8},
    outputs=lambda r: {"foot_lowest": float(r.marker("foot")[:, 1].min()),
                       "crank_travel": float(np.ptp(r.body_angle("L1")))},
    executor="serial")
print(table[["gravity", "bodies.L5.length", "foot_lowest", "crank_travel", "status"]]
      .to_string(index=False))

# %%
# A case that fails does not stop the sweep: its row says why. With L5 at 0.64 m the
# linkage's loops cannot close.

for _, row in table[table["status"] == "error"].iterrows():
    print(row["bodies.L5.length"], row["error_type"], row["error_message"][:90], "...")

fig, ax = plt.subplots(figsize=(6, 3.6))
for g, label in ((-9.81, "Earth"), (-1.62, "Moon")):
    rows = table[table["gravity"].map(lambda v: v[1] == g)]
    ax.plot(rows["bodies.L5.length"], rows["crank_travel"], "o-", label=label)
ax.set_xlabel("length of L5 (m)")
ax.set_ylabel("crank's swing over 2 s (rad)")
ax.legend()
