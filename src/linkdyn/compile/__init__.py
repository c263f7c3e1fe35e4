"""Compile: a description becomes a frozen :class:`~linkdyn.compile.model.Model` (numbered
coordinates and constraint rows, fixed sparsity patterns, flat arrays for the compiled
kernels). :mod:`.model` compiles bodies in fully Cartesian coordinates; :mod:`.natural`
compiles spherical and spatial linkages into natural coordinates with the same kernels."""
