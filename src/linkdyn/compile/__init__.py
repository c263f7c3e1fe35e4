"""Compile: a description becomes a frozen :class:`~linkdyn.compile.model.Model` (numbered
coordinates and constraint rows, fixed sparsity patterns, flat arrays for the compiled
kernels) along one path, :func:`~.compiler.compile_model`. Each coordinate family numbers its
own coordinates and rows: :mod:`.cartesian` (planar bodies in fully Cartesian coordinates),
:mod:`.natural` (spherical and spatial linkages in natural coordinates); :mod:`.patterns`
holds the steps they share, :mod:`.model` the frozen model, :mod:`.rows` the rows in which two
models of one family differ."""

from .compiler import compile_linkage, compile_model
from .model import COORDINATES, Model, check_output_size, require_dynamic
from .natural import NaturalModel

__all__ = ["compile_model", "compile_linkage", "Model", "NaturalModel", "COORDINATES",
           "check_output_size", "require_dynamic"]
