"""Results: what a run returns and what is made of it. The accessors of bodies and markers
over time that simulation and kinematics results share (:mod:`.accessors`), recorded series
(:mod:`.output`), the drawn geometry (:mod:`.geometry`), plots (:mod:`.plotting`) and
animations (:mod:`.animation`). Solvers import this package; it imports no solver."""

from .accessors import TrajectoryAccessors, needs_rows, recordable
from .geometry import PointGeometry

__all__ = ["TrajectoryAccessors", "PointGeometry", "recordable", "needs_rows"]
