"""
A slider-crank with a worn wrist pin
====================================

The slider-crank that Flores, Ambrósio, Claro and Lankarani study in "Kinematics and
Dynamics of Multibody Systems with Imperfect Joints": a crank of 0.05 m (0.30 kg, 1e-5 kg
m^2) turning at a constant 5000 rpm, a connecting rod of 0.12 m (0.21 kg, 2.5e-4 kg m^2)
and a slider of 0.14 kg, with a revolute joint with clearance between rod and slider: a
journal of 10 mm in a bearing of 10.5 mm (0.5 mm of radial clearance), steel on steel
(E = 207 GPa, nu = 0.3), Lankarani and Nikravesh's contact law with a restitution of 0.9,
no friction. The joint with clearance (:mod:`linkdyn.elements.clearance`) has no constraint
rows: the rod's end flies free inside the bearing, strikes it and rebounds or stays in
contact, each onset and separation located as an event.
"""

import dataclasses
import math

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn import laws

W = 5000 * 2 * math.pi / 60                   # crank speed (rad/s)
PERIOD = 2 * math.pi / W
K = linkdyn.clearance_stiffness(10.5e-3, 10e-3, 207e9, 0.3)


def slider_crank(size=None):
    """The mechanism, its wrist pin ideal (size None) or with radial clearance ``size``."""
    b = linkdyn.ModelBuilder("slider_crank", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("S", (0.17, 0.0))
    b.add_bar("crank", length=0.05, mass=0.30, inertia=1e-5, position=(0.025, 0.0))
    b.add_bar("rod", length=0.12, mass=0.21, inertia=2.5e-4, position=(0.11, 0.0))
    b.add_body("slider", mass=0.14, inertia=1e-4, position=(0.17, 0.0),
               points={"pin": (0.0, 0.0)})
    b.add_revolute("main", "ground.O", "crank.a")
    b.add_revolute("crankpin", "crank.b", "rod.a")
    b.add_revolute("wrist", "slider.pin", "rod.b", clearance=None if size is None else {
        "size": size, "stiffness": K, "model": "lankarani_nikravesh", "restitution": 0.9})
    b.add_prismatic("guide", "ground.S", "slider.pin")
    b.add_angle_driver("drive", "main", laws.linear(0.0, W))
    return b.build()


# %%
# The same machine ships as the built-in model ``"clearance_slider_crank"``, a model file
# whose notes give these data, whose wrist joint carries its ``"clearance"`` object and
# whose own horizon (``linkdyn simulate clearance_slider_crank``) is four crank turns.

builtin = linkdyn.load_model("clearance_slider_crank")
same = dataclasses.replace(builtin.description, name="slider_crank", run_defaults=())
print(builtin, "- as built here:", same == slider_crank(0.5e-3).description)

# %%
# Four crank turns (48 ms) of each mechanism; the last two are shown, once the start (the
# journal centred in its bearing) has been forgotten.

ideal = linkdyn.simulate(slider_crank(), 4 * PERIOD, rtol=1e-9, dt_out=2e-6)
worn = linkdyn.simulate(slider_crank(0.5e-3), 4 * PERIOD, rtol=1e-9, dt_out=2e-6)
contacts = [e for e in worn.events if e.name == "wrist" and e.direction > 0]
print(f"K = {K:.3g} N/m^1.5; {len(contacts)} impacts in four turns; "
      f"{worn.stats['steps']} steps against the ideal's {ideal.stats['steps']}")

turns = W * ideal.t / (2 * math.pi)
shown = turns >= 2.0
a_ideal = ideal.body_acceleration("slider")[:, 0]
a_worn = worn.body_acceleration("slider")[:, 0]
# the ideal slider's acceleration has a closed form: r w^2 (cos th + (r/l) cos 2 th) to
# first order in r/l; the simulation's is exact, its peak r w^2 (1 + r/l) at th = 0
print(f"ideal peak {-a_ideal.min():.0f} m/s^2 (closed form r w^2 (1 + r/l) = "
      f"{0.05 * W ** 2 * (1 + 0.05 / 0.12):.0f}); with play up to {np.abs(a_worn).max():.0f}")

fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True, layout="constrained")
axes[0].plot(turns[shown], a_worn[shown], lw=0.7, label="0.5 mm clearance")
axes[0].plot(turns[shown], a_ideal[shown], "k", lw=1.2, label="ideal joint")
axes[0].set_ylabel("slider acceleration [m/s²]")
axes[0].legend(loc="upper right")
force_worn = np.linalg.norm(worn.clearance_force("wrist"), axis=1)
force_ideal = np.linalg.norm(ideal.joint_force("wrist"), axis=1)
axes[1].plot(turns[shown], force_worn[shown], lw=0.7)
axes[1].plot(turns[shown], force_ideal[shown], "k", lw=1.2)
axes[1].set_ylabel("wrist pin force [N]")
axes[2].plot(turns[shown], 1e3 * worn.element_coordinate("wrist")[shown], lw=0.7)
axes[2].axhline(0.5, color="k", lw=0.5)
axes[2].set_ylabel("eccentricity [mm]")
axes[2].set_xlabel("crank turns")
for ax in axes:
    ax.grid(True)
fig.suptitle("slider-crank at 5000 rpm with a worn wrist pin")

# %%
# The journal's centre relative to the bearing's: free flights across the clearance circle
# between impacts, and arcs along its wall where the contact stays closed.

rel = worn.body_position("rod")
rod_u = worn.q[:, 6:8]
journal = rel + 0.06 * rod_u                      # the rod's end b, 0.06 m from its centre
centre = worn.body_position("slider")
e = 1e3 * (journal - centre)[shown]
fig, ax = plt.subplots(figsize=(5, 5), layout="constrained")
ax.plot(e[:, 0], e[:, 1], lw=0.6)
circle = np.linspace(0.0, 2 * math.pi, 200)
ax.plot(0.5 * np.cos(circle), 0.5 * np.sin(circle), "k", lw=0.8)
ax.set_aspect("equal")
ax.set_xlabel("x [mm]")
ax.set_ylabel("y [mm]")
ax.set_title("journal centre in the bearing")

# %%
# As the clearance shrinks, the motion converges to the ideal mechanism's: the largest
# departure of the slider from the ideal one falls with the clearance, down to the scale of
# the contact's penetration.

for size in (0.5e-3, 0.1e-3, 0.02e-3):
    r = linkdyn.simulate(slider_crank(size), 2 * PERIOD, rtol=1e-9, dt_out=2e-6)
    gap = np.abs(r.body_position("slider")[:, 0]
                 - ideal.body_position("slider")[:r.t.size, 0]).max()
    print(f"clearance {1e3 * size:.2f} mm: slider within {1e3 * gap:.3f} mm of the ideal's")
