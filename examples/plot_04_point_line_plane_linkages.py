"""
Linkages from points, lines and planes
======================================

The geometric-constraint paper on unified kinematic simulation of planar, spherical and
spatial linkages describes each linkage by its joints alone: revolute joints as points,
prismatic joints as lines, links as the joints they carry. linkdyn reads that description
(:class:`linkdyn.geometric.Linkage`) and builds three of the paper's planar examples in:
``stephenson2`` (a Stephenson-II six-bar), ``jansen_modified`` (a Jansen linkage with a
prismatic joint) and ``crank_rocker``. One input turn each, with the coupler point's path.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

fig, axes = plt.subplots(1, 3, figsize=(12, 4))
for ax, name in zip(axes, ["stephenson2", "jansen_modified", "crank_rocker"]):
    model = linkdyn.load_model(name)
    kin = linkdyn.kinematics(model, np.linspace(0.0, 2 * np.pi, 721))
    for marker in model.marker_names:
        path = kin.marker(marker)
        ax.plot(path[:, 0], path[:, 1], lw=1, label=marker)
    ax.set_aspect("equal")
    ax.set_title(name)
    ax.legend(fontsize="small")
    print(f"{name}: {len(model.body_names)} links, smallest rcond {kin.rcond.min():.2e}")
fig.tight_layout()

# %%
# The whole Stephenson-II linkage at one position of its input, as the animations draw it.

kin = linkdyn.kinematics("stephenson2", np.linspace(0.0, 2 * np.pi, 361))
fig = kin.snapshot(np.pi / 2, size=(6, 4.5))
