"""
A flexible joint with rotor inertia
===================================

Vigne's note on the model Jiminy uses for flexibilities ("A note on the model used by
Jiminy to simulate flexibilities", 2020) compares two models of an elastic transmission: a
series-elastic actuator (the motor's rotor turns the output through a torsional spring) and
Jiminy's form, where the spring sits before the motor on an extra body of small inertia. The
note argues that the two agree as that inertia goes to zero. Here a one-joint arm is driven
by the same motor torque in both forms, and the difference of the output angles shrinks in
proportion to the extra inertia.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn


def arm(**flexible):
    b = linkdyn.ModelBuilder("flexible_arm", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("arm", length=1.0, mass=1.0, position=(0.5, 0.0), angle=0.0)
    b.add_revolute("joint", "ground.O", "arm.a")
    # The motor's torque (N m) is the law; the rotor (0.05 kg m^2) turns the arm through
    # a torsional spring of 50 N m/rad.
    b.add_flexible_joint("drive", "joint", stiffness=50.0, damping=0.5, rotor_inertia=0.05,
                         rotor_mass=0.2, law=linkdyn.laws.harmonic(0.0, 4.0, 3.0),
                         **flexible)
    return b.build()


t_out = np.linspace(0.0, 2.0, 401)
series = linkdyn.simulate(arm(), 2.0, rtol=1e-10, atol=1e-10, t_out=t_out)
inertia = 1.0 / 3.0                           # the arm's inertia about the joint
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
ax1.plot(t_out, series.body_angle("arm"), label="series-elastic form")
for fraction in (1e-2, 1e-3, 1e-4):
    jiminy = linkdyn.simulate(arm(form="jiminy", flex_inertia=fraction * inertia), 2.0,
                              rtol=1e-10, atol=1e-10, t_out=t_out)
    gap = np.abs(jiminy.body_angle("arm") - series.body_angle("arm"))
    ax2.semilogy(t_out[1:], gap[1:], label=f"I_f = {fraction:g} I")
    print(f"I_f = {fraction:g} I: largest difference {gap.max():.2e} rad")
ax1.set_xlabel("t (s)")
ax1.set_ylabel("output angle (rad)")
ax1.legend()
ax2.set_xlabel("t (s)")
ax2.set_ylabel("|difference| (rad)")
ax2.set_title("Jiminy's form against the series form")
ax2.legend()
fig.tight_layout()
