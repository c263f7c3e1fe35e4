"""Results: what a run returns and what is made of it. The accessors of bodies and markers
over time that simulation and kinematics results share (:mod:`.accessors`), recorded series
(:mod:`.output`), plots (:mod:`.plotting`) and
animations (:mod:`.animation`) and shareable pages (:mod:`.html`); the drawn geometry
(``PointGeometry``) is the compile stage's. Solvers import this package; it imports no solver."""

from .accessors import TrajectoryAccessors, needs_rows, recordable
from ..compile.geometry import PointGeometry

__all__ = ["TrajectoryAccessors", "PointGeometry", "recordable", "needs_rows"]
