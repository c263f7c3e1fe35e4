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

from ._version import __version__
from .assembly import ConsistentState, consistent_state
from .description import GROUND, Description, ModelBuilder
from . import laws
from . import contacts, events, forces, geometric, lcp
from .errors import (AssemblyError, ControllerError, ConvergenceError, EquilibriumError,
                     ForceElementError,
                     KinematicsError, LinkdynError, ModelError, ModelFileError, NonFiniteError,
                     NotRecordedError,
                     RedundantConstraintsError, SimulationError, SingularConfigurationError,
                     SingularJacobianError, StepSizeError)
from .kinematics import (AssemblyMode, KinematicsResult, Singularity, assembly_modes,
                         kinematics)
from .model import Model
from .natural import NaturalModel
from .output import Record
from .models import builtin_names, chain, load_model
from .simulate import ControlState, SimulationResult, simulate
from .accuracy import ErrorEstimate, estimate_error
from .statics import Equilibrium, Modes, equilibrium, modes
from .sweep import sweep
from .periodic import PeriodicOrbit, PeriodicOrbitError, periodic_orbit

__all__ = [
    "__version__",
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
    "StepSizeError",
    "assembly_modes",
    "builtin_names",
    "chain",
    "consistent_state",
    "contacts",
    "equilibrium",
    "estimate_error",
    "events",
    "forces",
    "geometric",
    "kinematics",
    "laws",
    "lcp",
    "load_model",
    "modes",
    "periodic_orbit",
    "simulate",
    "sweep",
]
