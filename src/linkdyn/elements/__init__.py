"""Element families, one module each: what a model is made of. Every family keeps its records
(immutable specs), the checks of its fields, its model-file form and its step to the compiled
arrays together:

- :mod:`.bodies`: planar bodies, bars, markers, the ground; conventions of points and angles
- :mod:`.joints`: revolute and prismatic joints, and the drivers of joints and coordinates
- :mod:`.laws`: time laws of drivers, loads and actuators
- :mod:`.forces`: springs, dampers, loads, motors, servos, flexible joints, rotor inertia
- :mod:`.contacts`: compliant point-line contacts; :mod:`.friction` and :mod:`.lcp` decide
  their stick-slip modes
- :mod:`.events`: zero crossings that stop or mark a run
- :mod:`.records`: the flat records of the force kernels that forces and contacts compile to
- :mod:`.description`: the whole description as one record, and its file form
"""
