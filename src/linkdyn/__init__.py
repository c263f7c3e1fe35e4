"""linkdyn: kinematics and dynamics of planar mechanisms in fully Cartesian coordinates.

Describe a mechanism with :class:`ModelBuilder` or a model file, compile it into a frozen
:class:`Model`, and hand it to the solvers::

    import linkdyn
    model = linkdyn.load_model("jansen")
    state = linkdyn.consistent_state(model)
    result = linkdyn.simulate(model, 10.0, rtol=1e-10, atol=1e-10)
"""

from ._version import __version__
from .assembly import ConsistentState, consistent_state
from .description import GROUND, Description, ModelBuilder
from .errors import (AssemblyError, ConvergenceError, LinkdynError, ModelError,
                     ModelFileError, NonFiniteError, RedundantConstraintsError, SimulationError,
                     SingularJacobianError, StepSizeError)
from .model import Model
from .models import builtin_names, chain, load_model
from .simulate import SimulationResult, simulate

__all__ = [
    "__version__",
    "AssemblyError",
    "ConsistentState",
    "ConvergenceError",
    "Description",
    "GROUND",
    "LinkdynError",
    "Model",
    "ModelBuilder",
    "ModelError",
    "ModelFileError",
    "NonFiniteError",
    "RedundantConstraintsError",
    "SimulationError",
    "SimulationResult",
    "SingularJacobianError",
    "StepSizeError",
    "builtin_names",
    "chain",
    "consistent_state",
    "load_model",
    "simulate",
]
