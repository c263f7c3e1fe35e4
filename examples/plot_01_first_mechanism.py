"""
A crank and a rod under gravity
===============================

The smallest complete use of linkdyn: describe two bars and two pins with a
:class:`linkdyn.ModelBuilder`, compile the description into a frozen model, simulate it and
plot the path of a marker and the energy balance.
"""

import matplotlib.pyplot as plt

import linkdyn

b = linkdyn.ModelBuilder("crank_and_rod", gravity=(0.0, -9.81))
b.add_ground_point("O", (0.0, 0.0))
b.add_bar("crank", length=0.2, density=1.0, position=(0.1, 0.0), angle=0.0,
          velocity=(0.0, 0.5), omega=5.0, hold=True)
b.add_bar("rod", length=0.5, density=1.0, position=(0.2, -0.25), angle=-1.37)
b.add_revolute("pivot", "crank.a", "ground.O")
b.add_revolute("pin", "crank.b", "rod.a")
b.add_marker("tip", "rod.b")
model = b.build()
print(model)

# %%
# Simulate three seconds. The initial state is made consistent first: the crank, marked
# ``hold``, stays where it was put and the rod is moved onto the joints.

result = linkdyn.simulate(model, 3.0, rtol=1e-9, atol=1e-9, dt_out=0.005)
print(result.status, result.stats["steps"], "steps")

tip = result.marker("tip")
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.8))
ax1.plot(tip[:, 0], tip[:, 1], lw=0.8)
ax1.plot(*tip[0], "o", label="start")
ax1.set_aspect("equal")
ax1.set_xlabel("x (m)")
ax1.set_ylabel("y (m)")
ax1.set_title("path of the rod's end")
ax1.legend()
ax2.plot(result.t, result.energy - result.energy[0])
ax2.set_xlabel("t (s)")
ax2.set_ylabel("E(t) - E(0) (J)")
ax2.set_title("energy: conserved to the tolerance")
fig.tight_layout()
