"""
How a motion under forces changes with the design
=================================================

:func:`linkdyn.simulation_sensitivities` integrates the derivatives of a simulation with
respect to named parameters along with it (the staggered direct method on the BDF, the
derivatives in the error test). Here the free Jansen linkage, started with its crank
turning, runs for 1 s; the derivatives of its foot's path with respect to the length of
link L5 and the density of link L2 give a first-order prediction of the path of a changed
design, which is set against a new simulation of that design.

The left panel shows the foot's path and the predicted and re-simulated paths after
lengthening L5 by 0.2 mm: the foot moves by up to 5 mm, and the first-order prediction
misses about 2 percent of that, the second-order part (it shrinks with the square of the
change). The right panel shows the size of the two sensitivities along the run: the
length's grows over the run, because it changes how fast the linkage turns.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn.design.family import ParameterFamily

names = ["bodies.L5.length", "bodies.L2.density"]
s = linkdyn.simulation_sensitivities("jansen", names, 1.0, rtol=1e-9, atol=1e-9,
                                     dt_out=0.005)
foot = s.result.marker("foot")
d_foot = s.marker("foot")                           # (n, 2, 2): per m, per kg/m

step = 2e-4                                         # L5 lengthened by 0.2 mm
predicted = foot + step * d_foot[:, :, 0]
family = ParameterFamily("jansen", names)
changed = linkdyn.simulate(family.model(family.values + [step, 0.0]), 1.0, rtol=1e-9,
                           atol=1e-9, t_out=s.t).marker("foot")

print(f"exact parameter derivatives: {s.exact} (a length moves the bar's inertia)")
change = np.abs(changed - foot).max()
miss = np.abs(changed - predicted).max()
print(f"largest change of the foot over 1 s: {change * 1e3:.2f} mm; the first-order "
      f"prediction misses {miss * 1e3:.4f} mm of it")

fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2))
ax.plot(foot[:, 0], foot[:, 1], color="0.6", label="as designed")
ax.plot(changed[:, 0], changed[:, 1], color="C0", label="L5 + 0.2 mm, simulated")
ax.plot(predicted[::4, 0], predicted[::4, 1], ".", color="C3", ms=3,
        label="L5 + 0.2 mm, predicted")
ax.set_aspect("equal")
ax.set_xlabel("x (m)")
ax.set_ylabel("y (m)")
ax.set_title("Foot path over 1 s")
ax.legend(fontsize=8)
bx.semilogy(s.t, np.linalg.norm(d_foot[:, :, 0], axis=1), label="d foot / d L5 (m/m)")
bx.semilogy(s.t, np.linalg.norm(d_foot[:, :, 1], axis=1),
            label="d foot / d density of L2 (m per kg/m)")
bx.set_xlabel("t (s)")
bx.set_title("Sensitivities of the foot")
bx.legend(fontsize=8)
fig.tight_layout()
plt.show()
