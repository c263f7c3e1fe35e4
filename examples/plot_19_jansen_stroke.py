"""
A flatter, longer stride for the Jansen linkage
===============================================

A design study with exact gradients: change the lengths of the Jansen linkage's links (all
but the crank, within 10 percent) so that the part of the foot's path that touches the
ground is flatter and its stride longer, at the same crank speed, while the linkage still
assembles over the whole turn. The objective is a least-squares one: the heights of the
foot over the contact part (the lowest third of the path, chosen on the initial design) from
their mean, and the stride against a target 15 percent longer; its Jacobian comes from
:func:`linkdyn.kinematic_sensitivities`, which needs only the positions' derivatives here
(``order=0``).
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import least_squares

import linkdyn
from linkdyn.design.family import ParameterFamily

links = [f"L{i}" for i in range(2, 12)]
names = [f"bodies.{link}.length" for link in links]
family = ParameterFamily("jansen_driven", names)
turn = np.linspace(0.0, 1.0, 73)                     # one turn of the crank (1 s)

foot0 = linkdyn.kinematics(family.base, turn).marker("foot")
low = foot0[:, 1] <= foot0[:, 1].min() + (np.ptp(foot0[:, 1])) / 3
contact = np.flatnonzero(low)                        # the contact part's rows (fixed)
first, last = contact[0], contact[-1]
stride0 = abs(foot0[last, 0] - foot0[first, 0])
target = 1.15 * stride0
weight = 0.2                                         # the stride's weight against flatness


def analyse(x):
    s = linkdyn.kinematic_sensitivities(family.source(x), names, turn, at=turn[contact],
                                        order=0)
    foot = s.model.marker_positions(s.q)[:, s.model.marker_index("foot")]
    return foot, s.marker("foot")


cache = {}


def residuals(x):
    try:
        foot, dfoot = cache[x.tobytes()] = analyse(x)
    except linkdyn.LinkdynError:
        return np.full(len(contact) + 1, 1.0)    # does not assemble: refuse the step
    y = foot[:, 1]
    stride = abs(foot[-1, 0] - foot[0, 0])
    return np.concatenate([y - y.mean(), [weight * (stride - target)]])


def jacobian(x):
    foot, dfoot = cache[x.tobytes()]
    dy = dfoot[:, 1, :]
    sign = np.sign(foot[-1, 0] - foot[0, 0])
    dstride = sign * (dfoot[-1, 0, :] - dfoot[0, 0, :])
    return np.vstack([dy - dy.mean(axis=0), weight * dstride])


x0 = family.values
fit = least_squares(residuals, x0, jac=jacobian, bounds=(0.9 * x0, 1.1 * x0), x_scale="jac",
                    max_nfev=25)
before, after = residuals(x0), residuals(fit.x)
print(f"{fit.nfev} analyses; flatness (rms height variation over the contact part) "
      f"{1e3 * np.sqrt(np.mean(before[:-1] ** 2)):.2f} mm -> "
      f"{1e3 * np.sqrt(np.mean(after[:-1] ** 2)):.2f} mm; stride {stride0:.4f} m -> "
      f"{stride0 + (after[-1] - before[-1]) / weight:.4f} m (target {target:.4f} m)")
for link, old, new in zip(links, x0, fit.x):
    print(f"  {link}: {old:.4f} -> {new:.4f} m")

new = linkdyn.kinematics(family.model(fit.x), turn).marker("foot")
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(foot0[:, 0], foot0[:, 1], "--", color="0.5", label="Jansen's lengths")
ax.plot(new[:, 0], new[:, 1], label="optimised lengths")
ax.plot(foot0[contact, 0], foot0[contact, 1], ".", color="0.5", ms=3)
ax.plot(new[contact, 0], new[contact, 1], ".", color="C0", ms=3)
ax.set_aspect("equal")
ax.set_xlabel("x (m)")
ax.set_ylabel("y (m)")
ax.set_title("the foot's path (dots: the contact part)")
ax.legend()
