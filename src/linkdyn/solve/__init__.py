"""Solve: the solvers of a compiled model, each with its own workspace. :mod:`.assembly`
(consistent states), :mod:`.kinematics` (driven sweeps, branches), :mod:`.assembly_modes`
(the configurations of a driven model at one input),
:mod:`.simulate` (the index-3 BDF integrator, events, contacts, controllers), :mod:`.statics`
(equilibria and vibration modes), :mod:`.periodic` (periodic orbits) and :mod:`.accuracy`
(global error estimates)."""
