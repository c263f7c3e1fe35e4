"""
A disk bouncing on a compliant floor
====================================

A disk dropped from 0.3 m onto a Hertz contact with Hunt-Crossley damping. The contact's
onset and separation are events located by the integrator; each impact loses energy to the
damping, whose work is integrated with the motion, so the energy balance closes. The
largest penetration of the first impact is checked against the one-degree-of-freedom
impact equation integrated by SciPy.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.integrate import solve_ivp

import linkdyn

g, m, K, n, c, radius = 9.81, 1.0, 1e6, 1.5, 0.5, 0.1
b = linkdyn.ModelBuilder("drop", gravity=(0.0, -g))
b.add_ground_point("O", (0.0, 0.0))
b.add_body("disk", mass=m, inertia=0.5 * m * radius**2, position=(0.0, 0.3))
b.add_contact("floor", "disk.cm", "ground.O", 0.0, radius, stiffness=K, exponent=n,
              damping=c)
b.add_marker("centre", "disk.cm")
model = b.build()

r = linkdyn.simulate(model, 1.5, rtol=1e-10, atol=1e-10, dt_out=1e-4)
penetration = radius - r.marker("centre")[:, 1]
onsets = [e.t for e in r.events if e.name == "floor" and e.direction > 0]      # d crosses 0 upwards
separations = [e.t for e in r.events if e.name == "floor" and e.direction < 0]
print(f"{len(onsets)} impacts; first impact at t = {onsets[0]:.6f} s "
      f"(free fall: {np.sqrt(2 * 0.2 / g):.6f} s)")
balance = r.energy - r.energy[0] - r.work
print(f"energy balance within {np.abs(balance).max():.1e} J")

# The first impact alone, as the ODE of the penetration d: m d'' = m g - K d^n (1 + c d').
v0 = np.sqrt(2 * g * 0.2)


def rhs(t, y):
    d, dv = y
    force = K * max(d, 0.0) ** n * (1.0 + c * dv) if d > 0 else 0.0
    return [dv, g - max(force, 0.0) / m]


ode = solve_ivp(rhs, (0.0, 0.02), [0.0, v0], method="DOP853", rtol=1e-12, atol=1e-14,
                dense_output=True)
deepest = ode.sol(np.linspace(0.0, 0.02, 40001))[0].max()
first = (r.t > onsets[0]) & (r.t < separations[0])
print(f"largest penetration {penetration[first].max():.6e} m; the ODE's {deepest:.6e} m")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
ax1.plot(r.t, r.marker("centre")[:, 1])
ax1.set_xlabel("t (s)")
ax1.set_ylabel("height of the centre (m)")
ax2.plot(r.t, r.energy - r.energy[0], label="E - E(0)")
ax2.plot(r.t, r.work, "--", label="work of the damping")
ax2.set_xlabel("t (s)")
ax2.set_ylabel("J")
ax2.legend()
fig.tight_layout()
