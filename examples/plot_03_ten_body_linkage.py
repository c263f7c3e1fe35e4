"""
A ten-body linkage driven by two actuators
==========================================

The mechanism of Nurye's report on a kinematic analysis tool in absolute coordinates
("Development of Kinematic Analysis Tool Using Absolute Coordinates for Planar Mechanism in
MATLAB Environment", 2024): ten plates, twelve revolute joints and two linear actuators, AD
and BH, driven by harmonic laws. The report compares its results with the commercial code
Adams; linkdyn's built-in ``ten_body_linkage`` reproduces those Adams results to their seven
printed digits (marker K within 1.7e-7 m, plate C10's angular velocity within 4.8e-7 rad/s).
The plots are the report's: position, velocity and acceleration of marker K, and the angular
velocity and acceleration of plate C10, over 5 s.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

model = linkdyn.load_model("ten_body_linkage")
print(f"{model.nbody} bodies, {model.nq} coordinates, {model.nc} constraint rows "
      "(two of them the actuators' drivers)")
kin = linkdyn.kinematics(model, np.linspace(0.0, 5.0, 501))
print(f"smallest reciprocal condition of the Jacobian: {kin.rcond.min():.2e} (far from singular)")

fig, axes = plt.subplots(2, 3, figsize=(12, 6), sharex=True)
series = [("position (m)", kin.marker("K")), ("velocity (m/s)", kin.marker_velocity("K")),
          ("acceleration (m/s^2)", kin.marker_acceleration("K"))]
for ax, (label, values) in zip(axes[0], series):
    ax.plot(kin.t, values[:, 0], label="x")
    ax.plot(kin.t, values[:, 1], label="y")
    ax.set_title(f"K: {label}")
    ax.legend(fontsize="small")
axes[1, 0].plot(kin.t, kin.body_angle("C10"))
axes[1, 0].set_title("C10: angle (rad)")
axes[1, 1].plot(kin.t, kin.body_angular_velocity("C10"))
axes[1, 1].set_title("C10: angular velocity (rad/s)")
axes[1, 2].plot(kin.t, kin.body_angular_acceleration("C10"))
axes[1, 2].set_title("C10: angular acceleration (rad/s^2)")
for ax in axes[1]:
    ax.set_xlabel("t (s)")
fig.tight_layout()

# %%
# The mechanism at t = 2.5 s, with the paths of K and of C10's centre of mass so far.

fig = kin.snapshot(2.5, size=(7, 5))
