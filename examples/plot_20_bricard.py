"""
Bricard's overconstrained linkage (IFToMM A04)
==============================================

Five rods and the ground closed by six revolute joints whose axes turn by a right angle
from one joint to the next. Grübler's count gives it no freedom, yet it moves with one: one
of its constraint rows is redundant. ``redundant="allow"`` accepts such rows (least-norm
reactions, a tiny compliance in the integrator's linear systems); the same linkage with the
redundant row left out (its last joint a universal joint) moves the same way.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn.models.spatial import bricard

t = np.linspace(0.0, 10.0, 1001)
r = linkdyn.simulate("bricard", 10.0, rtol=1e-10, atol=1e-10, t_out=t, redundant="allow")
twin = linkdyn.simulate(bricard(redundant_free=True), 10.0, rtol=1e-10, atol=1e-10, t_out=t)
gap = np.abs(r.marker("P3") - twin.marker("P3")).max()
print(f"redundant rows allowed: {r.stats['steps']} steps, energy varies {np.ptp(r.energy):.1e} J")
print(f"redundant row left out: {twin.stats['steps']} steps, energy varies "
      f"{np.ptp(twin.energy):.1e} J; P3 agrees within {gap:.1e} m")

fig, ax = plt.subplots(figsize=(7, 3.8))
for k, axis in enumerate("xyz"):
    ax.plot(t, r.marker("P3")[:, k], label=f"P3.{axis}")
ax.set_xlabel("t (s)")
ax.set_ylabel("m")
ax.set_title("the end of rod 2 (the benchmark's P3)")
ax.legend()

# %%
# The linkage at t = 2.5 s, in 3D.

fig = r.snapshot(2.5, size=(6, 5))

# %%
# IFToMM A05, the stiff flyball governor
# --------------------------------------
#
# A shaft turning freely about the vertical carries two rods with 5 kg balls at their ends;
# each rod is tied to a slider on the shaft by a stiff spring-damper (8e5 N/m, 4e4 N s/m)
# instead of a rigid link. Started at 2 pi rad/s, the balls fly out, the slider rises and
# the shaft slows, keeping the angular momentum about the vertical. The spring-dampers make
# the problem stiff: the BDF takes it in a few thousand steps.

gov = linkdyn.simulate("flyball_governor", 10.0, rtol=1e-8, atol=1e-8, dt_out=0.01,
                       method="bdf")
print(f"flyball governor: {gov.stats['steps']} steps, "
      f"{gov.stats['integration_seconds'] * 1e3:.0f} ms; the shaft slows from "
      f"{gov.body_angular_velocity('shaft')[0, 2]:.3f} to "
      f"{gov.body_angular_velocity('shaft')[-1, 2]:.3f} rad/s")

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(gov.t, gov.marker("S")[:, 2])
ax.set_xlabel("t (s)")
ax.set_ylabel("s (m)")
ax.set_title("the slider's height on the shaft (the benchmark's s)")
