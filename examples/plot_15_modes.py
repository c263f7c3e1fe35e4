"""
Static equilibrium and vibration modes
======================================

A chain of five bars with a torsional spring-damper at every joint hangs from the ground.
:func:`linkdyn.equilibrium` finds where it comes to rest (Newton on the equilibrium
equations with the exact Jacobian) and :func:`linkdyn.modes` linearises about that state in
independent coordinates: natural frequencies, damping ratios and mass-normalised shapes.
A simulation released from the equilibrium along the first mode's shape then oscillates at
that mode's frequency.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

model = linkdyn.chain(5, length=0.2, joint_stiffness=0.5, joint_damping=0.002)
eq = linkdyn.equilibrium(model)
md = linkdyn.modes(model, eq)
print("stable:", eq.stable)
print("frequencies (rad/s):", np.round(md.frequencies, 4))
print("damping ratios:", np.round(md.damping_ratios, 5))

fig, axes = plt.subplots(1, 3, figsize=(11, 3.8), sharey=True)
xs = slice(0, None, 4)
for k, ax in enumerate(axes):
    shape = np.real(md.shapes[:, k])
    scale = 0.05 / np.abs(shape).max()
    for sign, style in ((0.0, "k-"), (1.0, "C0-"), (-1.0, "C1-")):
        q = eq.q + sign * scale * shape
        # bar centres, and the ends between them, drawn as one polyline from the pivot
        ends = [np.zeros(2)]
        for i in range(model.nbody):
            r, u = q[4 * i:4 * i + 2], q[4 * i + 2:4 * i + 4]
            ends.append(r + 0.1 * u)
        ends = np.array(ends)
        ax.plot(ends[:, 0], ends[:, 1], style, lw=1.5)
    ax.set_aspect("equal")
    ax.set_title(f"mode {k + 1}: {md.frequencies[k]:.3f} rad/s")
fig.tight_layout()

# %%
# Released from the equilibrium displaced along mode 1, the chain oscillates at that mode's
# frequency: the period of the simulated motion against 2 pi / omega_1.

shape = np.real(md.shapes[:, 0])
q0 = eq.q + 0.01 * shape / np.abs(shape).max()
r = linkdyn.simulate(model, 20.0, q0=q0, rtol=1e-10, atol=1e-10, dt_out=0.005)
x_tip = r.q[:, 4 * (model.nbody - 1)]
crossings = r.t[1:][np.diff(np.sign(x_tip - eq.q[4 * (model.nbody - 1)])) > 0]
period = np.mean(np.diff(crossings))
print(f"simulated period {period:.4f} s; 2 pi / omega_1 = {2 * np.pi / md.frequencies[0]:.4f} s")
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(r.t, x_tip)
ax.set_xlabel("t (s)")
ax.set_ylabel("x of the last bar's centre (m)")
