"""
Springs, motors, servos and a controller in Python
==================================================

A bar pinned to the ground is swung up by a motor whose torque comes from a PD controller
written in Python and sampled every millisecond, against a spring-damper to a ground point.
The controller runs between compiled integration stretches (zero-order hold); the work of
every element is integrated with the motion, so the energy balance closes.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

b = linkdyn.ModelBuilder("arm", gravity=(0.0, -9.81))
b.add_ground_point("O", (0.0, 0.0))
b.add_ground_point("C", (0.3, 0.4))
b.add_bar("arm", length=0.5, mass=1.0, position=(0.25, 0.0), angle=0.0)
b.add_revolute("shoulder", "ground.O", "arm.a")
b.add_spring_damper("spring", "ground.C", "arm.b", stiffness=40.0, damping=0.5,
                    free_length=0.3)
b.add_motor("motor", "shoulder", 0.0, rotor_inertia=2e-5, gear_ratio=50, rotor_mass=0.1)
b.add_marker("hand", "arm.b")
model = b.build()

target = np.pi / 3


def pd(t, state):
    angle, rate = state.element_coordinate("motor")
    return {"motor": 30.0 * (target - angle) - 3.0 * rate}


result = linkdyn.simulate(model, 3.0, rtol=1e-8, atol=1e-8, dt_out=0.002,
                          controller=pd, control_period=1e-3)
balance = result.energy - result.energy[0] - result.work
# A PD law has no integral action: gravity and the spring hold the arm short of its target.
print(f"final angle {result.body_angle('arm')[-1]:.4f} rad (target {target:.4f}); "
      f"energy balance within {np.abs(balance).max():.1e} J")

fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
axes[0].plot(result.t, result.body_angle("arm"))
axes[0].axhline(target, ls="--", color="0.5")
axes[0].set_title("arm angle (rad)")
axes[1].plot(result.t, result.element_force("motor"), label="motor")
axes[1].plot(result.t, result.element_force("spring"), label="spring")
axes[1].set_title("element forces (N m, N)")
axes[1].legend()
axes[2].plot(result.t, balance)
axes[2].set_title("E - E(0) - work (J)")
for ax in axes:
    ax.set_xlabel("t (s)")
fig.tight_layout()

# %%
# A servo does the same with a PD law of its own, inside the compiled step loop: no Python
# is called during the run.

b.add_servo("servo", "shoulder", target=linkdyn.laws.linear(0.0, 0.5), kp=30.0, kd=3.0)
servo_model = b.build()
servo = linkdyn.simulate(servo_model, 3.0, rtol=1e-8, atol=1e-8, dt_out=0.002)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(servo.t, servo.body_angle("arm"), label="arm")
ax.plot(servo.t, 0.5 * servo.t, "--", label="target 0.5 t")
ax.set_xlabel("t (s)")
ax.set_ylabel("angle (rad)")
ax.legend()
