"""
The heavy symmetric top
=======================

A spatial body in natural coordinates: a symmetric top (1 kg, centre of mass 0.1 m from a
fixed point, moments 0.004, 0.004 and 0.002 kg m^2) spinning at 50 rad/s about its axis,
released 0.5 rad from the vertical. Its axis nutates between two angles, the roots of the
classical cubic of the heavy top (Goldstein, "Classical Mechanics"); energy and the
vertical and axial angular momenta are conserved.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn.models.spatial import heavy_top_nutation

top = linkdyn.load_model("heavy_top")
r = linkdyn.simulate(top, 3.0, rtol=1e-10, atol=1e-10, dt_out=5e-4)
R = r.body_rotation("top")                         # (n, 3, 3): body axes in global axes
axis = R[:, :, 2]                                  # the symmetry axis
theta = np.arccos(np.clip(axis[:, 2], -1.0, 1.0))  # its angle from the vertical
low, high = heavy_top_nutation()
print(f"nutation between {theta.min():.6f} and {theta.max():.6f} rad; "
      f"the cubic's roots: {low:.6f} and {high:.6f} rad")
print(f"energy variation {np.ptp(r.energy):.1e} J")

fig = plt.figure(figsize=(11, 4))
ax = fig.add_subplot(1, 2, 1)
ax.plot(r.t, theta)
for bound in (low, high):
    ax.axhline(bound, ls="--", color="0.5")
ax.set_xlabel("t (s)")
ax.set_ylabel("angle of the axis from the vertical (rad)")
ax3 = fig.add_subplot(1, 2, 2, projection="3d")
tip = r.marker("tip")
ax3.plot(tip[:, 0], tip[:, 1], tip[:, 2], lw=0.7)
ax3.set_title("path of the tip")
fig.tight_layout()

# %%
# The top's angular velocity in global axes, and the reaction of its pivot.

omega = r.body_angular_velocity("top")
force = r.joint_force("pivot")
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
ax1.plot(r.t, omega)
ax1.legend(["x", "y", "z"])
ax1.set_ylabel("angular velocity (rad/s)")
ax2.plot(r.t, force)
ax2.legend(["x", "y", "z"])
ax2.set_ylabel("pivot force on the top (N)")
for a in (ax1, ax2):
    a.set_xlabel("t (s)")
fig.tight_layout()
