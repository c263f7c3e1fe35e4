"""linkdyn: kinematics and dynamics of planar mechanisms in fully Cartesian coordinates, and
kinematics of spherical and spatial linkages in natural coordinates.

Describe a mechanism with :class:`ModelBuilder`, :class:`linkdyn.geometric.Linkage` (points,
lines and planes) or a model file, compile it into a frozen :class:`Model`, and hand it to the
solvers::

    import linkdyn
    model = linkdyn.load_model("jansen")
    state = linkdyn.consistent_state(model)
    result = linkdyn.simulate(model, 10.0, rtol=1e-10, atol=1e-10)
"""

import sys as _sys

from ._version import __version__
from .errors import (ArgumentError, ArgumentTypeError, AssemblyError, ControllerError,
                     ConvergenceError, EquilibriumError, ForceElementError, UnknownNameError,
                     KinematicsError, LinkdynError, ModelError, ModelFileError, NonFiniteError,
                     NotRecordedError,
                     RedundantConstraintsError, SimulationError, SingularConfigurationError,
                     SingularJacobianError, StepSizeError, SynthesisError,
                     ToleranceWarning, InterruptedWarning, ModelWarning, OutOfMemoryError)
from .elements import contacts, events, forces, friction, laws, lcp
from .elements.bodies import GROUND
from .elements.clearance import clearance_stiffness
from .elements.description import Description
from . import compile as _compile_package
from .compile.model import Model
from .compile.natural import NaturalModel
from .compile.spatial import SpatialModel
from .describe import builder, geometric, modelfile
from .describe.builder import ModelBuilder
from .describe.spatial import SpatialModelBuilder
from .models import builtin_names, chain, load_model
from .results import accessors, animation, html, output, plotting
from .results.output import Record
from .solve import accuracy, assembly, periodic, statics
from .solve import kinematics as _kinematics_module
from .solve import simulate as _simulate_module
from .solve.assembly import ConsistentState, consistent_state
from .solve.assembly_modes import AssemblyMode, assembly_modes
from .solve.kinematics import KinematicsResult, Singularity, kinematics
from .solve.simulate import ControlState, SimulationResult, simulate
from .solve.accuracy import ErrorEstimate, estimate_error
from .solve.statics import Equilibrium, Modes, equilibrium, modes
from .solve.periodic import PeriodicOrbit, PeriodicOrbitError, periodic_orbit
from . import design
from .design import synthesis
from .design.sensitivity import KinematicSensitivities, kinematic_sensitivities
from .design.dynamic_sensitivity import SimulationSensitivities, simulation_sensitivities
from .batch import sweep as _sweep_module
from .batch.sweep import sweep

# The package is laid out by stage (elements, compile, describe, results, solve, batch; see
# docs/architecture.md). Modules that used to sit at the top keep their old import
# paths, so that ``import linkdyn.forces`` or ``from linkdyn.model import compile_model`` in
# existing code finds the module in its new home (``model`` and ``natural``: the compile
# package, which exports what they did). Names bound above (the functions simulate,
# kinematics, sweep) stay what they are.
for _old, _module in {"laws": laws, "forces": forces, "contacts": contacts, "events": events,
                      "friction": friction, "lcp": lcp, "model": _compile_package,
                      "natural": _compile_package,
                      "description": builder, "modelfile": modelfile, "geometric": geometric,
                      "output": output, "plotting": plotting, "animation": animation,
                      "assembly": assembly, "kinematics": _kinematics_module,
                      "simulate": _simulate_module, "statics": statics, "periodic": periodic,
                      "accuracy": accuracy, "sweep": _sweep_module}.items():
    _sys.modules[f"{__name__}.{_old}"] = _module
    globals().setdefault(_old, _module)
del _old, _module, _sys, _compile_package, builder, accessors, _kinematics_module, \
    _simulate_module, _sweep_module

__all__ = [
    "__version__",
    "ArgumentError",
    "ArgumentTypeError",
    "UnknownNameError",
    "ToleranceWarning",
    "InterruptedWarning",
    "ModelWarning",
    "OutOfMemoryError",
    "AssemblyError",
    "AssemblyMode",
    "ConsistentState",
    "ControlState",
    "ControllerError",
    "ConvergenceError",
    "Description",
    "Equilibrium",
    "EquilibriumError",
    "ErrorEstimate",
    "ForceElementError",
    "GROUND",
    "KinematicsError",
    "KinematicsResult",
    "LinkdynError",
    "Model",
    "Modes",
    "ModelBuilder",
    "SpatialModel",
    "SpatialModelBuilder",
    "ModelError",
    "ModelFileError",
    "NaturalModel",
    "NonFiniteError",
    "NotRecordedError",
    "PeriodicOrbit",
    "PeriodicOrbitError",
    "Record",
    "RedundantConstraintsError",
    "SimulationError",
    "SimulationResult",
    "Singularity",
    "SingularConfigurationError",
    "SingularJacobianError",
    "SynthesisError",
    "StepSizeError",
    "assembly_modes",
    "builtin_names",
    "chain",
    "clearance_stiffness",
    "consistent_state",
    "contacts",
    "design",
    "equilibrium",
    "estimate_error",
    "events",
    "forces",
    "geometric",
    "html",
    "kinematics",
    "laws",
    "lcp",
    "load_model",
    "modes",
    "periodic_orbit",
    "simulate",
    "sweep",
    "synthesis",
    "kinematic_sensitivities",
    "KinematicSensitivities",
    "simulation_sensitivities",
    "SimulationSensitivities",
]
