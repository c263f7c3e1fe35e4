"""
Forces and contacts in space: a flexible arm, a slider-crank, a platform, a ball
================================================================================

Spatial models take the planar models' force elements: springs and dampers between points,
torsional springs and motors on revolute joints, servos, point forces and torques in global
or body axes, and series-elastic flexible joints whose rotors are full rigid bodies.

The built-in ``flexible_arm`` has two such joints on a turret that a servo swings about the
vertical. Its motors push harmonic torques into rotors that wind up the springs to the
links; the springs' deflections are reported like any force element's coordinate.
"""

import math

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

# %%
# Contacts in space: a ball dropped on a tilted plane (frictionless, Lankarani and
# Nikravesh's law with restitution 0.8). Each bounce is an event; between them the ball
# flies on parabolas, and it creeps down the slope as the bounces die out.

b = linkdyn.SpatialModelBuilder("ball_on_ramp")
b.add_ground_point("O", (0.0, 0.0, 0.0))
tilt = 0.2                                   # rad about y: the plane falls towards +x
normal = (math.sin(tilt), 0.0, math.cos(tilt))
b.add_body("ball", mass=0.5, inertia=(5e-4, 5e-4, 5e-4), position=(0.0, 0.0, 0.3))
b.add_contact("ramp", "ball.cm", "ground.O", normal=normal, radius=0.05, stiffness=1e6,
              exponent=1.5, model="lankarani_nikravesh", restitution=0.8)
b.add_marker("centre", "ball.cm")
ramp = linkdyn.simulate(b.build(), 2.0, rtol=1e-9, atol=1e-9, dt_out=1e-3)
touches = [e.t for e in ramp.events if e.direction == 1]
print(f"ball on a ramp: {len(touches)} bounces in 2 s, the first at {touches[0]:.4f} s; "
      f"the damping took {-ramp.element_work('ramp')[-1]:.3f} J")
fig, ax = plt.subplots(figsize=(7, 3.2))
centre = ramp.marker("centre")
ax.plot(centre[:, 0], centre[:, 2])
ax.plot([-0.1, 1.0], [math.tan(tilt) * 0.1 + 0.05 / math.cos(tilt),
                      -math.tan(tilt) + 0.05 / math.cos(tilt)], "k--", lw=0.8)
ax.set_xlabel("x (m)")
ax.set_ylabel("z (m)")
ax.set_title("the ball's centre; dashed: where it touches the plane")
ax.set_aspect("equal")
