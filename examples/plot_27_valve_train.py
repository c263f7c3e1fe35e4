"""
A cam-driven valve train and its jump speed
===========================================

A direct-acting overhead-cam valve train, the built-in model ``"valve_train"``: the
camshaft turns at a constant speed and lifts a bucket tappet with its valve through the
tappet's flat face, 9 mm over 110 degrees of cam angle and back with the 4-5-6-7
polynomial law, on an 18 mm base circle. Only the valve spring (30 kN/m, 200 N of
preload) holds the tappet on the cam: the cam contact is force-closed
(:mod:`linkdyn.elements.cams`), a one-sided Hertz contact that lets go where the spring
can no longer decelerate the valve as fast as the cam's flank falls away. The tappet then
flies off the cam ("jumps") and strikes it again, each lift-off and impact located as an
event.
"""

import dataclasses
import math

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn import laws
from linkdyn.model import compile_model

model = linkdyn.load_model("valve_train")
desc = model.description
cam = desc.cams[0]
spring = desc.forces[0]
m = desc.bodies[1].mass
preload = spring.stiffness * (spring.free_length.params[0] - 0.035)
print(model, f"- tappet and valve {m} kg, spring {spring.stiffness:g} N/m, preload "
      f"{preload:g} N")

# %%
# The closed form of a rigid tappet: the contact presses while ``F0 + k s + m g + m s''
# omega^2 > 0``; ``s''`` is negative over the flanks' noses, so the spring holds the
# tappet on up to the speed ``omega = sqrt((F0 + k s + m g) / (-m s''))`` at the worst
# cam angle.

theta = np.linspace(0.0, 2.0 * math.pi, 200001)
s, s2 = cam.lift(theta), cam.lift(theta, 2)
hold = preload + spring.stiffness * s + m * 9.81
falling = s2 < 0.0
speeds = np.sqrt(hold[falling] / (-m * s2[falling]))
jump = speeds.min()
print(f"jump speed {jump:.1f} rad/s ({jump * 30 / math.pi:.0f} rpm of the camshaft) at "
      f"{math.degrees(theta[falling][speeds.argmin()]):.1f} degrees of cam angle")


def at_speed(omega):
    """The valve train with its camshaft driven at ``omega`` (rad/s)."""
    drive = dataclasses.replace(desc.drivers[0], law=laws.linear(0.0, omega))
    return compile_model(dataclasses.replace(desc, drivers=(drive,), run_defaults=()))


# %%
# Two cam turns each at 90 % and at 105 % of the jump speed: how far the tappet is off the
# cam (its lift less the cam's), and the contact's force against the closed form of the
# rigid tappet. Above the jump speed the tappet leaves the cam's nose on the way up and on
# the way down, and lands with an impact.

fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True, layout="constrained")
for omega, colour in ((0.9 * jump, "C0"), (1.05 * jump, "C3")):
    turn = 2.0 * math.pi / omega
    res = linkdyn.simulate(at_speed(omega), 2 * turn,
                           dt_out=turn / 720, rtol=1e-8, atol=1e-10)
    angle = np.degrees(omega * res.t) % 360.0
    second = res.t >= turn
    order = np.argsort(angle[second])
    lift = res.q[:, 5] - res.q[0, 5]
    off = [e.t for e in res.events if e.name == "cam" and e.direction < 0]
    label = f"{omega / jump:.0%} of the jump speed"
    print(f"{label}: {len(off)} lift-offs in two turns, largest gap between tappet and "
          f"cam {1e6 * max(0.0, np.max(lift - cam.lift(omega * res.t))):.0f} um")
    gap = lift - cam.lift(omega * res.t)      # negative: the contact's tiny penetration
    axes[0].plot(angle[second][order], 1e6 * gap[second][order], color=colour, label=label)
    axes[1].plot(angle[second][order], res.cam_force("cam")[second][order], color=colour,
                 label=label)
    rigid = m * cam.lift(omega * res.t, 2) * omega ** 2 + preload \
        + spring.stiffness * cam.lift(omega * res.t) + m * 9.81
    axes[1].plot(angle[second][order], rigid[second][order], ":", color=colour, lw=1)
axes[0].set_ylabel("tappet above the cam [um]")
axes[0].legend(loc="upper right", fontsize="small")
axes[1].axhline(0.0, color="k", lw=0.5)
axes[1].set_ylabel("contact force [N] (dotted: rigid)")
axes[1].set_xlabel("cam angle [degrees], second turn")
axes[1].set_xlim(40, 320)
fig.suptitle("Valve train: the tappet on its cam, below and above the jump speed")
plt.show()
