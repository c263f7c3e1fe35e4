"""
A chain of spatial pendulums: rods
==================================

A body whose mass lies on a line (principal moments (0, I, I)) is a rod: linkdyn gives it
six coordinates (its centre of mass and unit axis) and one row, against twelve coordinates
and six rows for a body with a frame. Here twelve slender rods hang end to end from the
ground by spherical joints, released at rest in a skew posture, and swing in space.

The same chain built from axisymmetric bars with a small axial moment and the same
transverse one moves the same way: a bar that starts without spin about its axis keeps
none (Euler's equations), so its axis moves as the rod's. The rods need half the
coordinates and less than half the rows.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.spatial.transform import Rotation

import linkdyn


def chain(n, axial, length=0.1, mass=0.1):
    """n bars of transverse moment m L^2 / 12 and the given axial moment (0: rods),
    hanging from O by spherical joints, each turned about z and tilted from the horizontal
    a little more than the last."""
    inertia = mass * length**2 / 12.0
    b = linkdyn.SpatialModelBuilder(f"chain of {n}", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    end = np.zeros(3)
    for i in range(n):
        R = Rotation.from_euler("zy", [0.5 * i, 0.3 + 0.08 * i]).as_matrix()   # x: the bar
        b.add_body(f"B{i}", mass=mass, inertia=(axial, inertia, inertia),
                   points={"a": (-0.5 * length, 0.0, 0.0), "b": (0.5 * length, 0.0, 0.0)},
                   position=end + 0.5 * length * R[:, 0], orientation=R)
        b.add_spherical(f"S{i}", f"B{i}.a", "ground.O" if i == 0 else f"B{i - 1}.b")
        end = end + length * R[:, 0]
    b.add_marker("tip", f"B{n - 1}.b")
    return b.build()


rods, bars = chain(12, 0.0), chain(12, 1e-6)
print(f"rods: {rods.nq} coordinates, {rods.nc} rows; bars with a frame: {bars.nq} "
      f"coordinates, {bars.nc} rows")
runs = {}
for name, model in (("rods", rods), ("bars", bars)):
    runs[name] = r = linkdyn.simulate(model, 1.5, rtol=1e-9, atol=1e-9, dt_out=2e-3)
    print(f"{name}: {r.stats['steps']} steps, {1e3 * r.stats['integration_seconds']:.1f} ms, "
          f"energy variation {np.ptp(r.energy):.1e} J")
gap = np.abs(runs["rods"].marker("tip") - runs["bars"].marker("tip")).max()
print(f"largest distance between the two chains' tips: {gap:.1e} m")

# %%
# The tip's path in space, and the angle of the last rod's axis from the vertical
# (``result.body_axis``: a rod's orientation is its axis; it has no frame to turn).

r = runs["rods"]
tip = r.marker("tip")
axis = r.body_axis("B11")
fig = plt.figure(figsize=(11, 4))
ax3 = fig.add_subplot(1, 2, 1, projection="3d")
ax3.plot(tip[:, 0], tip[:, 1], tip[:, 2], lw=0.8)
ax3.set_title("path of the tip")
ax = fig.add_subplot(1, 2, 2)
ax.plot(r.t, np.degrees(np.arccos(np.clip(-axis[:, 2], -1.0, 1.0))))
ax.set_xlabel("t (s)")
ax.set_ylabel("last rod from the downward vertical (deg)")
fig.tight_layout()
