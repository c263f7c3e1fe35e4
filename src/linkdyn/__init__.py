"""linkdyn: kinematics and dynamics of planar mechanisms in fully Cartesian coordinates.

Describe a mechanism with :class:`ModelBuilder` or a model file, compile it into a frozen
:class:`Model`, and hand it to the solvers::

    import linkdyn
    model = linkdyn.load_model("jansen")
    state = linkdyn.consistent_state(model)
"""

from ._version import __version__
from .assembly import ConsistentState, consistent_state
from .description import GROUND, Description, ModelBuilder
from .errors import (AssemblyError, LinkdynError, ModelError, ModelFileError,
                     RedundantConstraintsError)
from .model import Model
from .models import builtin_names, chain, load_model

__all__ = [
    "__version__",
    "AssemblyError",
    "ConsistentState",
    "Description",
    "GROUND",
    "LinkdynError",
    "Model",
    "ModelBuilder",
    "ModelError",
    "ModelFileError",
    "RedundantConstraintsError",
    "builtin_names",
    "chain",
    "consistent_state",
    "load_model",
]
