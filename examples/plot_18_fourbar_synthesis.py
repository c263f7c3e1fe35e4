"""
Path generation: a four-bar through six points
==============================================

Dimensional synthesis with exact gradients: a four-bar's coupler point must pass through six
points that lie roughly on a straight stroke and back, in order but with free timing (each
point's crank angle is found with the dimensions). The design variables are the coordinates
of the four joints and the coupler point, 10 numbers; least squares uses the Jacobian of the
coupler point with respect to all of them (:func:`linkdyn.kinematic_sensitivities`) from
several starts, and keeps the linkage a crank-rocker that assembles over the whole turn.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn.models.linkages import four_bar

initial = four_bar({"A": (0.0, 0.0), "B": (0.12, 0.0), "C": (0.3, 0.35), "D": (0.45, 0.0),
                   "P": (0.15, 0.5)})
targets = np.array([[0.05, 0.45], [0.15, 0.45], [0.25, 0.45], [0.35, 0.46], [0.3, 0.6],
                    [0.1, 0.58]])
found = linkdyn.synthesis.path_generation(initial, "P", targets, times=None, starts=3,
                                          seed=3, grashof="crank-rocker")
print(f"largest distance from a target {found.residual:.2e} m after {found.evaluations} "
      f"analyses ({found.seconds:.1f} s), {len(found.failures)} of {found.starts} starts failed")
for start, reason in found.failures:
    print(f"  start {start}: {reason[:100]}")
print("crank angles at the targets (rad):", np.round(found.times, 3))

turn = np.linspace(0.0, 2 * np.pi, 361)
before = linkdyn.kinematics(initial.build(), turn).marker("P")
after_kin = linkdyn.kinematics(found.linkage.build(), turn)
after = after_kin.marker("P")
fig, ax = plt.subplots(figsize=(6.5, 5))
ax.plot(before[:, 0], before[:, 1], "--", color="0.6", label="initial design")
ax.plot(after[:, 0], after[:, 1], label="synthesised")
ax.plot(targets[:, 0], targets[:, 1], "kx", ms=9, label="targets")
ax.set_aspect("equal")
ax.legend()
ax.set_title("coupler curves")

# %%
# The synthesised linkage at the first target's crank angle.

fig = after_kin.snapshot(found.times[0], size=(6, 4.5))
