"""
Forces in space: a flexible arm, a slider-crank and a platform on springs
=========================================================================

Spatial models take the planar models' force elements: springs and dampers between points,
torsional springs and motors on revolute joints, servos, point forces and torques in global
or body axes, and series-elastic flexible joints whose rotors are full rigid bodies.

The built-in ``flexible_arm`` has two such joints on a turret that a servo swings about the
vertical. Its motors push harmonic torques into rotors that wind up the springs to the
links; the springs' deflections are reported like any force element's coordinate.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

arm = linkdyn.load_model("flexible_arm")
r = linkdyn.simulate(arm, 3.0, rtol=1e-9, atol=1e-9, dt_out=0.005)
balance = np.abs(r.energy - r.energy[0] - r.work).max()
print(f"flexible arm: {r.stats['steps']} steps; energy(t) - energy(0) = work(t) "
      f"within {balance:.1e} J")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
for name in ("shoulder_drive/spring", "elbow_drive/spring"):
    ax1.plot(r.t, np.degrees(r.element_coordinate(name)), label=name)
ax1.set_xlabel("t (s)")
ax1.set_ylabel("spring deflection (deg)")
ax1.legend()
tip = r.marker("tip")
ax2.plot(tip[:, 0], tip[:, 1])
ax2.set_xlabel("x (m)")
ax2.set_ylabel("y (m)")
ax2.set_title("the tip seen from above")
ax2.set_aspect("equal")
fig.tight_layout()

# %%
# A spatial slider-crank: a crank turning about z drives a slider on a line along y through
# a rod with a spherical joint at the crank and a universal joint at the slider. Driven at
# one turn per second, the slider follows the closed form of ``|P - S| = rod``; free, a
# constant motor torque spins the crank up, and the motor's work is the energy gained.

from linkdyn.models.spatial import SLIDER_CRANK, slider_crank_position

driven = linkdyn.simulate("spatial_slider_crank", 1.0, rtol=1e-10, atol=1e-10)
along = driven.marker("S")[:, 1] - SLIDER_CRANK["slide_point"][1]
exact = slider_crank_position(SLIDER_CRANK["speed"] * driven.t)
print(f"driven slider-crank: slider within {np.abs(along - exact).max():.1e} m of the "
      f"closed form; driving torque {np.abs(driven.driver_effort('drive')).max():.2f} N m "
      "at most")
free = linkdyn.simulate(linkdyn.models.spatial.spatial_slider_crank(driven=False), 2.0,
                        rtol=1e-9, atol=1e-9)
print(f"free slider-crank: the motor did {free.element_work('motor')[-1]:.1f} J")

fig, ax = plt.subplots(figsize=(7, 3.4))
ax.plot(driven.t, driven.driver_effort("drive"), label="driving torque (N m)")
ax.plot(driven.t, 10 * along, label="slider position x 10 (m)")
ax.set_xlabel("t (s)")
ax.legend()

# %%
# The 5-SS platform of the point-line-plane paper given masses: five massless rods (distance
# rows, whose efforts are their forces) and an actuator that is either driven (a stroke of
# 0.5 m and back, short of the singular position the linkage nears 0.85 m out, where the
# rods' forces would grow without bound) or a spring-damper. On its spring-damper the 50 kg
# platform sags and rings down.

platform = linkdyn.simulate("five_ss_dynamic", 3.0, rtol=1e-10, atol=1e-10)
rods = [np.abs(platform.driver_effort(f"L{k}")).max() for k in range(1, 6)]
print("driven 5-SS: rod forces up to " + ", ".join(f"{f:.0f}" for f in rods) + " N")
ring = linkdyn.simulate(linkdyn.models.spatial.five_ss_dynamic(driven=False), 2.0,
                        rtol=1e-9, atol=1e-9)
fig, ax = plt.subplots(figsize=(7, 3.2))
ax.plot(ring.t, ring.marker("J11")[:, 2] - ring.marker("J11")[0, 2])
ax.set_xlabel("t (s)")
ax.set_ylabel("J11 height change (m)")
ax.set_title("the platform on its spring-damper")

# %%
# A spatial double pendulum (two bars on spherical joints) is chaotic, yet its energy drift
# shrinks with the tolerance.

for tol in (1e-6, 1e-9):
    swing = linkdyn.simulate("spatial_double_pendulum", 10.0, rtol=tol, atol=tol)
    print(f"double pendulum at rtol {tol:.0e}: energy varies {np.ptp(swing.energy):.1e} J "
          f"over 10 s in {swing.stats['steps']} steps")
