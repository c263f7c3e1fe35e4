"""Redundant constraints removed exactly: the dependent rows of Phi_q found by a
rank-revealing factorisation at the run's consistent start.

A planar loop of hinges written in space is overconstrained (a four-bar of four revolute
joints has three dependent rows; Bricard's linkage one): the rows are consistent but
Phi_q has lower rank than rows, so the iteration matrices are singular. Regularising them
(a compliance of 1e-12, ld_bdf.c, "Redundant constraints") runs, but costs two to three
digits and keeps the run on the BDF. Instead, with ``redundant="allow"``, a run finds a
largest independent set of rows at its start and switches the others off
(``RunState.deactivate_rows``): the remaining system is exact and of full rank, so both
methods run it at the tolerance. The dropped rows are implied by the others wherever the
rank stays what it was at the start (a structural redundancy); the run checks that they
still hold at its output rows, and stops with an error naming them where they do not
(the rank changed during the run).

The set is chosen by QR with column pivoting of the scaled Phi_q^T (rows of unit norm,
coordinates scaled by M^-1/2): the pivots pick rows greedily by the norm left once the
rows already chosen are projected out, so a row is dropped when it lies within RANK_TOL
(relative) of the span of the rows before it. The bodies' own rows (unit vectors, frames)
are weighted by BODY_WEIGHT so that they are chosen first: a body stays rigid, and the
joints' rows carry the redundancy. The reactions of a redundant set are statically
indeterminate; the dropped rows carry none (their multipliers are zero) and the kept
rows carry the set's load.
"""

from __future__ import annotations

import numpy as np

from ..compile.model import Model

__all__ = ["dependent_rows", "RANK_TOL", "DENSE_LIMIT"]

#: A row whose remaining norm is below this fraction of the largest pivot is dependent.
RANK_TOL = 1e-9
#: The bodies' own rows' weight in the pivoting (chosen before any joint's).
BODY_WEIGHT = 100.0
#: The largest nc * nq for the dense factorisation (about 1 s of QR); larger models keep
#: the regularisation.
DENSE_LIMIT = 4_000_000


def body_rows(model: Model) -> np.ndarray:
    """The rows that hold a body's own shape: unit-vector rows, spatial frames' six rows
    and a rod's axis row."""
    a = model.kernels.arrays
    rows = [np.asarray(a.get("unit_row", ()), dtype=np.intp)]
    frames = np.asarray(a.get("frame_row", ()), dtype=np.intp)
    if frames.size:
        rows.append((frames[:, None] + np.arange(6)).reshape(-1))
    rows.append(np.array([i for i, n in enumerate(model.constraint_names)
                          if n.endswith((".uu", ".unit"))], dtype=np.intp))
    return np.unique(np.concatenate(rows)) if rows else np.zeros(0, dtype=np.intp)


def dependent_rows(model: Model, q, t: float = 0.0, state=None):
    """The rows of Phi_q(q, t) that depend on the others (sorted indices), or None where
    the model is too large for the dense factorisation (DENSE_LIMIT)."""
    import scipy.linalg

    nc, nq = model.nc, model.nq
    if nc == 0:
        return np.zeros(0, dtype=np.intp)
    if nc * nq > DENSE_LIMIT:
        return None
    J = np.zeros((nc, nq))
    J[model.phiq_rowind, model.phiq_colind] = model.kernels.phi_q_values(q, t, state=state)
    J /= np.sqrt(np.asarray(model.mass, dtype=float))[None, :]
    norms = np.linalg.norm(J, axis=1)
    zero = norms == 0.0
    J[~zero] /= norms[~zero, None]
    J[body_rows(model)] *= BODY_WEIGHT
    _, R, order = scipy.linalg.qr(J.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int(np.count_nonzero(diag > RANK_TOL * diag[0])) if diag.size and diag[0] > 0 else 0
    return np.sort(order[rank:]).astype(np.intp)
