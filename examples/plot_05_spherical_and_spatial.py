"""
Spherical and spatial linkages
==============================

The same point-line-plane description reaches linkages whose joint axes meet at one point
(spherical linkages: every point stays on a sphere) and spatial ones: the paper's spherical
RRPR and Watt-I linkages and its 5-SS platform, solved in natural coordinates on the same
compiled kernels as the planar models.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

fig = plt.figure(figsize=(12, 4))
for k, name in enumerate(["spherical_rrpr", "spherical_watt1", "five_ss"]):
    model = linkdyn.load_model(name)
    # The Watt-I linkage's input rocks between two limit positions: at_limit="reverse"
    # passes each limit onto the other branch and runs the input back.
    kin = linkdyn.kinematics(model, np.linspace(0.0, 2 * np.pi, 361), at_limit="reverse")
    P = model.marker_positions(kin.q)                 # (n, markers, 3)
    ax = fig.add_subplot(1, 3, k + 1, projection="3d")
    for i, marker in enumerate(model.marker_names):
        ax.plot(P[:, i, 0], P[:, i, 1], P[:, i, 2], lw=1)
    ax.set_title(f"{name} ({model.space})")
    radius = np.linalg.norm(P, axis=2)
    print(f"{name}: {len(model.marker_names)} points, distance from the origin "
          f"{radius.min():.3f} to {radius.max():.3f}, limit positions {len(kin.limits)}")
fig.tight_layout()

# %%
# The 5-SS linkage drawn at one input angle, with the paths of its coupler points.

kin = linkdyn.kinematics("five_ss", np.linspace(0.0, 2 * np.pi, 181), at_limit="reverse")
fig = kin.snapshot(1.0, size=(6, 5))
