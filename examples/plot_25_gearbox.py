"""
A two-stage gearbox and a planetary train
=========================================

Spur gear pairs (:mod:`linkdyn.elements.gears`) couple the angles of two gears by their
teeth counts: ``r1 dtheta1 = -r2 dtheta2`` for an external pair. Each pair is one exact
constraint row whose multiplier is the tangential tooth force. Here a motor torque spins up
a two-stage reduction against a load. The input turns by the ratio product, the
acceleration follows the inertia reflected through the train, and the power the motor puts
in equals the power the load takes out plus the change of kinetic energy. A planetary train
then follows Willis' formula.
"""

import math

import matplotlib.pyplot as plt
import numpy as np

import linkdyn

z1, z2, z3, z4 = 20, 50, 18, 45          # teeth: stage 1 (z1:z2), stage 2 (z3:z4)
m1, m2 = 0.002, 0.003                    # modules (m)
a1, a2 = m1 * (z1 + z2) / 2, m2 * (z3 + z4) / 2
J1, J23, J4 = 2e-4, 3e-3, 5e-3           # polar inertias (kg m^2)
torque, load = 0.08, -0.4                # motor on gear 1, load on gear 4 (N m)

b = linkdyn.ModelBuilder("gearbox", gravity=(0.0, -9.81))
b.add_ground_point("O1", (0.0, 0.0))
b.add_ground_point("O2", (a1, 0.0))
b.add_ground_point("O3", (a1 + a2 * math.cos(math.pi / 3), a2 * math.sin(math.pi / 3)))
b.add_body("g1", mass=0.3, inertia=J1)
b.add_body("g23", mass=1.1, inertia=J23, position=(a1, 0.0))       # compound gear
b.add_body("g4", mass=1.5, inertia=J4,
           position=(a1 + a2 * math.cos(math.pi / 3), a2 * math.sin(math.pi / 3)))
b.add_revolute("p1", "ground.O1", "g1.cm")
b.add_revolute("p2", "ground.O2", "g23.cm")
b.add_revolute("p3", "ground.O3", "g4.cm")
b.add_gear_pair("stage1", "g1.cm", "g23.cm", teeth=(z1, z2), module=m1)
b.add_gear_pair("stage2", "g23.cm", "g4.cm", teeth=(z3, z4), module=m2)
b.add_torque("motor", "g1", torque)
b.add_torque("load", "g4", load)
model = b.build()
print(model)

# %%
# Two seconds from rest. The train's ratio is ``(z1 / z2)(z3 / z4) = 0.16``: gear 1 sees
# the inertia ``J1 + J23 (z1/z2)^2 + J4 (0.16)^2`` and the load's torque times 0.16.

result = linkdyn.simulate(model, 2.0, rtol=1e-10, dt_out=0.002)
q = result.q


def angle(body):
    return np.unwrap(np.arctan2(q[:, 4 * body + 3], q[:, 4 * body + 2]))


ratio = (z1 / z2) * (z3 / z4)
j_eff = J1 + J23 * (z1 / z2) ** 2 + J4 * ratio ** 2
theta1, theta4 = angle(0) - angle(0)[0], angle(2) - angle(2)[0]
exact = 0.5 * (torque + ratio * load) / j_eff * result.t ** 2
print(f"gear 1 turned {theta1[-1] / (2 * math.pi):.3f} turns; "
      f"closed form {exact[-1] / (2 * math.pi):.3f}")
print(f"largest |theta4 - 0.16 theta1|: {np.abs(theta4 - ratio * theta1).max():.1e} rad")

power_in = torque * theta1
power_out = -load * theta4
kinetic = result.kinetic_energy - result.kinetic_energy[0]
print(f"work in {power_in[-1]:.4f} J = work out {power_out[-1]:.4f} J "
      f"+ kinetic energy {kinetic[-1]:.4f} J")

tooth = result.gear_force("stage2")
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
ax1.plot(result.t, power_in, label="work in (motor)")
ax1.plot(result.t, power_out + kinetic, "--", label="work out + kinetic energy")
ax1.set_xlabel("t (s)")
ax1.set_ylabel("J")
ax1.legend()
ax2.plot(result.t, tooth[:, 0], label="tangential")
ax2.plot(result.t, tooth[:, 1], label="radial")
ax2.plot(result.t, tooth[:, 2], label="normal")
ax2.set_xlabel("t (s)")
ax2.set_ylabel("stage 2 tooth force (N)")
ax2.legend()
fig.tight_layout()

# %%
# A planetary train: the sun on the centre, a planet on a driven arm, and a fixed ring
# (the ground, an internal pair with the planet). Angles of the gears are measured from
# their carrier, the arm. Willis' formula gives the sun's speed, ``(1 + zr / zs)`` times
# the arm's.

zs, zp = 24, 18
zr = zs + 2 * zp
m = 0.0025
a = m * (zs + zp) / 2
p = linkdyn.ModelBuilder("planetary", gravity=(0.0, 0.0))
p.add_ground_point("O", (0.0, 0.0))
p.add_body("sun", mass=0.4, inertia=1e-4)
p.add_body("arm", mass=0.2, inertia=2e-4, points={"c": (a, 0.0)})
p.add_body("planet", mass=0.1, inertia=3e-5, position=(a, 0.0))
p.add_revolute("ps", "ground.O", "sun.cm")
p.add_revolute("pa", "ground.O", "arm.cm")
p.add_revolute("pp", "arm.c", "planet.cm")
p.add_gear_pair("sun_planet", "sun.cm", "planet.cm", teeth=(zs, zp), module=m,
                carrier="arm")
p.add_gear_pair("planet_ring", "planet.cm", "ground.O", teeth=(zp, zr), module=m,
                internal=True, carrier="arm")
p.add_angle_driver("arm_drive", "pa", {"law": "linear", "value": 0.0, "rate": 1.0})
train = linkdyn.kinematics(p.build(), np.linspace(0.0, 2.0, 41))
qs = train.q
sun = np.unwrap(np.arctan2(qs[:, 3], qs[:, 2]))
print(f"sun speed / arm speed: {(sun[-1] - sun[0]) / 2.0:.12f} "
      f"(Willis: {1 + zr / zs:.12f})")
train.snapshot(1.0)
