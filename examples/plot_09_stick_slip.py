"""
Coulomb friction: a block that sticks, a block that slides
==========================================================

A block rests on a 20 degree incline on a Hertz contact with Coulomb friction (kinetic
coefficient 0.3). With a static coefficient of 0.5 (above tan 20 deg = 0.364) it sticks:
the sticking contact is a constraint row switched on inside the integrator, so the block
does not creep. With a static coefficient of 0.3 it slides down with the constant
acceleration g (sin a - mu cos a). This is the built-in ``block_on_incline``, built here
from its parts.
"""

import math

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

slope, mass, stiffness, g = math.radians(20.0), 1.0, 1e6, 9.81


def block(static_friction):
    normal = np.array([-math.sin(slope), math.cos(slope)])
    depth = (mass * g * math.cos(slope) / stiffness) ** (2.0 / 3.0)   # static penetration
    b = linkdyn.ModelBuilder("block", gravity=(0.0, -g))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("block", mass=mass, inertia=mass / 600.0, position=tuple(-depth * normal),
               u=(math.cos(slope), math.sin(slope)))
    b.add_contact("contact", "block.cm", "ground.O", line_angle=slope, radius=0.0,
                  stiffness=stiffness, exponent=1.5, damping=1.0, friction=0.3,
                  static_friction=static_friction)
    b.add_marker("centre", "block.cm")
    return b.build()


fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
along = np.array([math.cos(slope), math.sin(slope)])
for mu0 in (0.5, 0.3):
    r = linkdyn.simulate(block(mu0), 2.0, rtol=1e-10, atol=1e-10, dt_out=0.01)
    s = (r.marker("centre") - r.marker("centre")[0]) @ along
    modes = sorted({mode for _, _, mode in r.friction_modes})
    print(f"static friction {mu0}: moved {s[-1]:+.6f} m along the incline, modes {modes}")
    ax1.plot(r.t, s, label=f"mu0 = {mu0}")
    if mu0 == 0.3:
        a = g * (math.sin(slope) - 0.3 * math.cos(slope))
        exact = -0.5 * a * r.t**2
        print(f"  against s = -a t^2 / 2: largest difference {np.abs(s - exact).max():.1e} m")
        ax2.plot(r.t, r.friction_force("contact"), label="friction force")
        ax2.axhline(0.3 * mass * g * math.cos(slope), ls="--", color="0.5", label="mu m g cos a")
ax1.set_xlabel("t (s)")
ax1.set_ylabel("displacement along the incline (m)")
ax1.legend()
ax2.set_xlabel("t (s)")
ax2.set_ylabel("N")
ax2.legend()
fig.tight_layout()

# %%
# The built-in model is the sticking block: over 100 s it stays where it was put, to
# round-off.

builtin = linkdyn.simulate("block_on_incline", 100.0, rtol=1e-10, atol=1e-10)
drift = np.abs(builtin.marker("centre") - builtin.marker("centre")[0]).max()
print(f"block_on_incline over 100 s: moved {drift:.1e} m, {builtin.stats['steps']} steps")
