"""
The passive walker's four gaits
===============================

Zheng and Wang's passive walker with round feet walks down a shallow slope on Hertz
contacts with Coulomb stick-slip friction, decided at every transition by a linear
complementarity problem. Its four gaits are built in: ``walker_gait1`` (the stance foot
sticks), ``walker_gait2`` (a foot slides after heel strike), ``walker_gait3`` (every heel
strike bounces) and ``walker_gait4`` (the walk dies out and the walker stands, held by
static friction).
"""

import matplotlib.pyplot as plt

import linkdyn

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
for k in (1, 2, 3, 4):
    name = f"walker_gait{k}"
    r = linkdyn.simulate(name, 10.0, rtol=1e-8, atol=1e-8, dt_out=0.002)
    hip = r.marker("hip")
    touchdowns = sum(1 for e in r.events if e.name.startswith("foot") and e.direction > 0)
    print(f"{name}: walked {hip[-1, 0] - hip[0, 0]:.3f} m in 10 s, {touchdowns} foot contact "
          f"onsets, {len(r.friction_modes)} friction mode changes")
    ax1.plot(r.t, hip[:, 0] - hip[0, 0], label=name)
    if k == 1:
        swing = r.body_angle("leg1") - r.body_angle("leg2")
        ax2.plot(r.t, swing, lw=0.8)
ax1.set_xlabel("t (s)")
ax1.set_ylabel("hip's progress along x (m)")
ax1.legend()
ax2.set_xlabel("t (s)")
ax2.set_ylabel("angle between the legs (rad)")
ax2.set_title("gait I")
fig.tight_layout()

# %%
# Gait I after three seconds: legs, round feet, floor and the hip's path, as the animations
# draw them.

r = linkdyn.simulate("walker_gait1", 3.0, rtol=1e-8, atol=1e-8, dt_out=0.005)
fig = r.snapshot(3.0, markers=["hip"], size=(8, 3))
