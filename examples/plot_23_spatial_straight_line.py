"""
Path generation in space: a 5-SS platform point on a straight line
==================================================================

The 5-SS of the point-line-plane examples is a platform on five legs with spherical joints
at both ends; one leg is a linear actuator. Over half a metre of stroke its platform point
J11 swings along a curve some 6 cm off the chord between its ends. Here path generation
asks for eight points evenly spaced on that chord, in order but with free timing (each
point's stroke is found with the dimensions), and lets the platform point and the platform
ends of two legs (J8, J10) move, each coordinate within 3 m of where it was: nine design
variables, least squares with their exact Jacobian (:func:`linkdyn.kinematic_sensitivities`
on the spatial linkage) from three starts, every trial checked to assemble over the whole
stroke on its branch.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn.design.synthesis import linkage_parameters
from linkdyn.models.linkages import linkage

five_ss = linkage("five_ss")
stroke = np.linspace(0.0, 0.5, 201)             # the actuator's extension, m (rate 1 m/s)
before = linkdyn.kinematics(five_ss.build(), stroke).marker("J11")
start, end = before[0], before[-1]
chord = (end - start) / np.linalg.norm(end - start)
targets = start + np.linspace(0.0, 1.0, 8)[:, None] * (end - start)


def off_the_line(path):
    """Each point's distance from the chord's line, m."""
    relative = path - start
    return np.linalg.norm(relative - (relative @ chord)[:, None] * chord, axis=1)


names = [f"joints.{j}.coordinates.{x}" for j in ("J11", "J8", "J10") for x in "xyz"]
initial = dict(zip(linkage_parameters(five_ss),
                   [c for joint in five_ss.joints.values() for c in joint.coordinates]))
bounds = {name: (initial[name] - 3.0, initial[name] + 3.0) for name in names}
found = linkdyn.synthesis.path_generation(five_ss, "J11", targets, times=None,
                                          parameters=names, bounds=bounds,
                                          cycle=(0.0, 0.5), starts=3, seed=1)
after = linkdyn.kinematics(found.linkage.build(), stroke).marker("J11")
between = (stroke >= found.times[0]) & (stroke <= found.times[-1])
print(f"largest distance from a target {found.residual:.2e} m after {found.evaluations} "
      f"analyses ({found.seconds:.1f} s)")
print(f"off the line: {off_the_line(before).max() * 1e3:.1f} mm before, "
      f"{off_the_line(after[between]).max() * 1e3:.1f} mm after (between the first and "
      "last target)")
for joint in ("J8", "J10", "J11"):
    moved = [found.parameters[f"joints.{joint}.coordinates.{x}"] - initial[
        f"joints.{joint}.coordinates.{x}"] for x in "xyz"]
    print(f"{joint} moved by ({moved[0]:+.3f}, {moved[1]:+.3f}, {moved[2]:+.3f}) m")

fig = plt.figure(figsize=(10, 4.5))
ax = fig.add_subplot(1, 2, 1, projection="3d")
ax.plot(*before.T, "--", color="0.6", label="initial design")
ax.plot(*after.T, label="synthesised")
ax.plot(*targets.T, "kx", ms=7, label="targets")
ax.set_xlabel("x [m]")
ax.set_ylabel("y [m]")
ax.set_zlabel("z [m]")
ax.legend(loc="upper left", fontsize=8)
ax.set_title("path of J11")
ax = fig.add_subplot(1, 2, 2)
ax.plot(stroke, off_the_line(before) * 1e3, "--", color="0.6", label="initial design")
ax.plot(stroke, off_the_line(after) * 1e3, label="synthesised")
ax.axvspan(found.times[0], found.times[-1], color="C0", alpha=0.08)
ax.set_xlabel("actuator stroke [m]")
ax.set_ylabel("distance from the line [mm]")
ax.legend()
fig.tight_layout()
