"""
The Jansen linkage: dynamics and kinematics
===========================================

Theo Jansen's eleven-bar leg, as the planar benchmark of Roupa, Gonçalves and Silva (2018)
specifies it: the crank starts turning and the linkage moves under gravity alone for ten
seconds. The benchmark asks for rtol = atol = 1e-10; the published Python run took 76 s.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

jansen = linkdyn.load_model("jansen")
result = linkdyn.simulate(jansen, 10.0, rtol=1e-10, atol=1e-10, dt_out=0.01)
print(f"{result.stats['steps']} steps, integration {result.stats['integration_seconds']:.3f} s")
print(f"energy variation {np.ptp(result.energy):.1e} J, "
      f"largest constraint violation {result.phi_norm.max():.1e}")

# %%
# The foot (marker ``P3``) and the crank's angle. Without a motor the crank slows down and
# swings back: the linkage is a pendulum of eleven bars.

p3 = result.marker("P3")
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
ax1.plot(p3[:, 0], p3[:, 1], lw=0.8)
ax1.set_aspect("equal")
ax1.set_xlabel("x (m)")
ax1.set_ylabel("y (m)")
ax1.set_title("path of P3 over 10 s")
ax2.plot(result.t, result.body_angle("L1"))
ax2.set_xlabel("t (s)")
ax2.set_ylabel("crank angle (rad)")
fig.tight_layout()

# %%
# ``jansen_driven`` is the same linkage with its crank driven at one turn per second: a
# kinematic analysis gives the foot's closed path, its velocity and acceleration.

driven = linkdyn.load_model("jansen_driven")
kin = linkdyn.kinematics(driven, np.linspace(0.0, 1.0, 721))
foot = kin.marker("foot")
speed = np.linalg.norm(kin.marker_velocity("foot"), axis=1)
fig, ax = plt.subplots(figsize=(6, 4))
points = ax.scatter(foot[:, 0], foot[:, 1], c=speed, s=4)
fig.colorbar(points, label="foot speed (m/s)")
ax.set_aspect("equal")
ax.set_title("the foot's path, crank at 1 turn/s")
