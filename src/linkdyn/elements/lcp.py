"""Linear complementarity problems: find z, w with

    w = M z + q,    z >= 0,    w >= 0,    z . w = 0,

by Lemke's complementary pivoting (``csrc/ld_lcp.c``; its pivoting rule is documented in
``csrc/ld_lcp.h``: minimum ratio, ties broken lexicographically, z0 leaving first). The
stick-slip transitions of contacts with friction are decided by such problems.

Lemke's method finds a solution whenever M is a P-matrix (for instance symmetric positive
definite: then the solution is unique) and, for copositive-plus M, proves that none exists
when it ends on a ray. It may fail on other matrices even where a solution exists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._lcp import lemke
from ..errors import ArgumentError, LinkdynError

__all__ = ["solve_lcp", "LCPSolution", "LCPError"]


class LCPError(LinkdynError):
    """Lemke's method ended without a solution: ``status`` is ``"ray"`` (ray termination;
    for a copositive-plus M no solution exists) or ``"max_pivots"`` (the pivot budget ran
    out)."""

    def __init__(self, message: str, status: str, pivots: int):
        super().__init__(message)
        self.status = status
        self.pivots = pivots


@dataclass(frozen=True)
class LCPSolution:
    """z and w (n,), and the number of pivots taken."""

    z: np.ndarray
    w: np.ndarray
    pivots: int


def solve_lcp(M, q, *, max_pivots: int | None = None, pivot_tol: float = 1e-12) -> LCPSolution:
    """Solve LCP(M, q) by Lemke's method.

    ``max_pivots`` defaults to 50 (n + 1); ``pivot_tol`` is the relative size below which a
    pivot candidate counts as zero. Raises ``ValueError`` for arrays of the wrong shape or
    with NaN or Inf, and :class:`LCPError` when no solution was found.
    """
    M = np.asarray(M, dtype=float)
    q = np.asarray(q, dtype=float)
    if q.ndim != 1 or M.shape != (q.shape[0], q.shape[0]):
        raise ArgumentError(f"solve_lcp: M must be (n, n) and q (n,); got {M.shape} and {q.shape}")
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(q))):
        raise ArgumentError("solve_lcp: M and q must be finite")
    if max_pivots is None:
        max_pivots = 0
    elif isinstance(max_pivots, bool) or not isinstance(max_pivots, int) or max_pivots < 1:
        raise ArgumentError(f"solve_lcp: max_pivots must be a positive integer, got {max_pivots!r}")
    if not (isinstance(pivot_tol, (int, float)) and math.isfinite(pivot_tol) and
            0 < pivot_tol < 1):
        raise ArgumentError(f"solve_lcp: pivot_tol must be in (0, 1), got {pivot_tol!r}")
    status, z, w, pivots = lemke(M, q, max_pivots, pivot_tol)
    if status == -1:
        raise LCPError(f"solve_lcp: ray termination after {pivots} pivots: no solution found "
                       "(none exists when M is copositive-plus)", "ray", pivots)
    if status == -2:
        raise LCPError(f"solve_lcp: no solution within {pivots} pivots", "max_pivots", pivots)
    return LCPSolution(z, w, pivots)
