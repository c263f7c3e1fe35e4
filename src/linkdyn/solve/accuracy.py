"""Global error estimates of a simulation: ``estimate_error(model, t_end, rtol=...)``.

The integrator controls the error it makes in each step; what a user wants to know is the
error of the trajectory, which also depends on how the problem amplifies those step errors
(a conservative mechanism turns a relative energy error into a phase error that grows with
time: a relative energy error eps moves B0 of the IFToMM N-four-bar by some 900 eps m over its
20 s, the A01 pendulum's mass by 10 eps m over 10 s; tests/test_accuracy.py). No tolerance
setting can know that amplification in advance, but it can be measured: the global error of
:func:`linkdyn.simulate` is proportional to the tolerance (the tolerance transform of
csrc/ld_bdf.c; measured slopes 0.97 to 1.06 across rtol 1e-4 ... 1e-12 on A01, A02 and the
Jansen linkage), so a second run with both tolerances ``refine`` times tighter is about
``refine`` times more accurate, and the difference of the two runs estimates the first one's
error, off by the second one's (about 1 / refine of it).

Measured at refine = 100 on A01 and A02 (tests/test_accuracy.py): the largest estimated error
of the benchmark's point is within 20% of the largest true error, and the error at each output
row is estimated as well. The price is the second run: at rtol 1e-6 a run 100 times tighter
takes about 2.5 times the steps of the first, so an estimate costs 2.5 to 3.4 times the run
alone (A02 at 1e-6 to 1e-10, benchmarks/test_bench_iftomm.py).

Because the error is proportional to the tolerance (within the scatter of a single run: the
ratio of error to tolerance of A02 varies by up to 15 times between tolerances half a decade
apart), a run that must meet a target error ``e`` asks for about ``rtol * e / estimate`` and
checks with a new estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..models import as_model
from ..errors import ArgumentError, summary
from ..compile.model import Model
from .dynamics_run import LOCAL_FLOOR
from .simulate import SimulationResult, simulate

__all__ = ["ErrorEstimate", "estimate_error"]

#: The finest tolerance simulate accepts.
FINEST_RTOL = 1e-14


@dataclass(frozen=True)
class ErrorEstimate:
    """Estimated global error of ``result`` by comparison with ``reference``.

    Attributes
    ----------
    result : SimulationResult
        The run at the requested tolerances: the one whose error is estimated.
    reference : SimulationResult or None
        The same run at tolerances ``refine`` times tighter (None when the first run was
        interrupted, which stops the estimate).
    refine : float
        The tightening factor of the reference run.
    rows : ndarray of int
        Rows of ``result`` that the estimate covers: those whose time the reference run also
        has (all of them, except rows at events located at slightly different times and rows
        past the end of an interrupted or event-stopped run).
    """

    result: SimulationResult
    reference: SimulationResult | None
    refine: float
    rows: np.ndarray
    reference_rows: np.ndarray

    def __repr__(self) -> str:
        return summary("ErrorEstimate", self.result.model.name, self.t, self.status,
                       f"reference {self.refine:g} times tighter")

    @property
    def status(self) -> str:
        """``"success"``, or the status of the run that did not finish (``"interrupted"``,
        ``"event"``)."""
        for r in (self.result, self.reference):
            if r is not None and r.status != "success":
                return r.status
        return "success"

    @property
    def t(self) -> np.ndarray:
        """Times (s) of the rows the estimate covers."""
        return self.result.t[self.rows]

    @property
    def q(self) -> np.ndarray:
        """Estimated error (len(t), nq) of each coordinate, in its unit: ``|q - q_reference|``."""
        return self._difference("q")

    @property
    def v(self) -> np.ndarray:
        """Estimated error (len(t), nq) of each velocity: ``|v - v_reference|``."""
        return self._difference("v")

    def marker(self, name) -> np.ndarray:
        """Estimated position error (len(t),) of the named marker: the distance (m) between
        its positions in the two runs, in the plane or in space (ArgumentError without a
        reference run)."""
        a = self.result.marker(name)[self.rows]
        b = self._reference().marker(name)[self.reference_rows]
        return np.linalg.norm(a - b, axis=1)

    def max_marker(self, name) -> float:
        """Largest estimated position error (m) of the named marker over the rows covered
        (0.0 when no row is covered; ArgumentError without a reference run)."""
        e = self.marker(name)
        return float(e.max()) if e.size else 0.0

    def _difference(self, field):
        if self.reference is None:
            return np.empty((0, self.result.model.nq))
        return np.abs(getattr(self.result, field)[self.rows]
                      - getattr(self.reference, field)[self.reference_rows])

    def _reference(self):
        if self.reference is None:
            raise ArgumentError("the estimate has no reference run (the first run was "
                                "interrupted)")
        return self.reference


def estimate_error(model: Model, t_end: float, *, rtol: float = 1e-8, atol: float = 1e-8,
                   refine: float = 100.0, **options) -> ErrorEstimate:
    """Simulate ``model`` to ``t_end`` at ``rtol``, ``atol`` and estimate the global error of
    that run from a second run with both tolerances divided by ``refine`` (see the module
    documentation for why this works and what it costs).

    Parameters
    ----------
    model, t_end, rtol, atol :
        As for :func:`linkdyn.simulate`.
    refine : float
        How much tighter the reference run is: at least 10 (the estimate is off by about
        1 / refine of itself; the scatter of single runs asks for more, hence the default
        100), and ``rtol / refine`` must be at least 1e-14, the finest tolerance simulate
        accepts.
    **options :
        Any other keyword of :func:`linkdyn.simulate` (output times, initial state, step
        limits, events...), passed to both runs, except ``controller`` (it would be called by
        both runs, and a controller that keeps state would carry the first run's into the
        second) and ``record`` (the estimate compares whole rows).

    Returns
    -------
    ErrorEstimate
        ``result`` (the run at rtol), ``reference`` and the estimated errors.

    Raises
    ------
    ValueError
        ``refine`` below 10 or not finite; ``rtol / refine`` below 1e-14; ``controller``
        or ``record`` given; the reference run's local tolerance held at the integrator's
        round-off floor (``100 eps max(1, max|q0|)``) so that it is not at least ten times
        tighter than the first run's (the estimate would be meaningless: loosen rtol).
    Whatever :func:`linkdyn.simulate` raises for either run.
    """
    model = as_model(model)
    if isinstance(refine, bool) or not isinstance(refine, (int, float)) or \
            not math.isfinite(refine) or refine < 10:
        raise ArgumentError(f"refine must be a finite number of at least 10, got {refine!r}")
    for name in ("controller", "record"):
        if options.get(name) is not None:
            raise ArgumentError(f"estimate_error does not take {name}: "
                                + ("it would be called by both runs, and a controller that "
                                "keeps state would carry the first run's into the second"
                                if name == "controller" else
                                "the estimate compares whole rows (q and v)"))
    if isinstance(rtol, (int, float)) and not isinstance(rtol, bool) and \
            math.isfinite(rtol) and 0 < rtol / refine < FINEST_RTOL:
        raise ArgumentError(f"rtol / refine = {rtol / refine:.3g} is below the finest tolerance "
                            f"simulate accepts ({FINEST_RTOL:g}): loosen rtol to at least "
                            f"{FINEST_RTOL * refine:.3g} or lower refine")
    result = simulate(model, t_end, rtol=rtol, atol=atol, **options)
    if result.status == "interrupted":
        empty = np.empty(0, dtype=int)
        return ErrorEstimate(result, None, float(refine), empty, empty)
    # The reference run's local tolerance stops at the floor 100 eps max(1, max|q0|)
    # (ld_bdf.c, from the initial state, which is the first output row): checked before the
    # reference runs, so that no time goes into a run that could not serve.
    coarse = result.stats["local_rtol"]
    floor = LOCAL_FLOOR * np.finfo(float).eps * max(1.0, float(np.max(np.abs(result.q[0]))))
    if max(floor, coarse / refine) > coarse / 10:
        raise ArgumentError(
            f"the reference run's local tolerance would be held at the integrator's "
            f"round-off floor ({floor:.3g} = 100 eps max(1, max|q0|)) and not be ten times "
            f"tighter than the first run's ({coarse:.3g}): no error estimate is possible at "
            f"rtol = {rtol:g}; loosen rtol")
    reference = simulate(model, t_end, rtol=rtol / refine, atol=atol / refine, **options)
    rows, reference_rows = _common_rows(result.t, reference.t)
    return ErrorEstimate(result, reference, float(refine), rows, reference_rows)


def _common_rows(a, b):
    """Indices (into a and into b) of the times both runs have, in order. Output times are
    taken from the same array in both runs, so they agree exactly; event rows do not. Both
    are non-decreasing; a time repeated (an event row at an output time) pairs its k-th
    occurrence in a with its k-th in b."""
    occurrence = np.arange(a.size) - np.searchsorted(a, a, side="left")
    pos = np.searchsorted(b, a, side="left") + occurrence
    inside = pos < b.size
    match = np.zeros(a.size, dtype=bool)
    match[inside] = b[pos[inside]] == a[inside]
    return np.flatnonzero(match), pos[match]
