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
indeterminate: any multipliers lam + N y with N a basis of null(Phi_q^T) (the set's
self-stresses) give the same constraint force Phi_q^T lam. The integrator carries the
load on the kept rows (the dropped ones at zero); the output rows then get the
least-norm share (:func:`least_norm_multipliers`), the one solution orthogonal to every
self-stress, which divides a load among alike supports alike and is the convention of
the pseudo-inverse. The motion is the same either way.
"""

from __future__ import annotations

import numpy as np

from ..compile.model import Model

__all__ = ["dependent_rows", "least_norm_multipliers", "RANK_TOL", "DENSE_LIMIT"]

#: A row whose remaining norm is below this fraction of the largest pivot is dependent.
RANK_TOL = 1e-9
#: The bodies' own rows' weight in the pivoting (chosen before any joint's).
BODY_WEIGHT = 100.0
#: The largest nc * nq for the dense factorisation (about 1 s of QR); larger models keep
#: the regularisation.
DENSE_LIMIT = 4_000_000
#: The largest nc^2 whose least-norm multipliers are computed in dense arrays, all rows
#: at once (in blocks of BATCH_VALUES numbers, which stay in the cache); larger models go
#: row by row, sparse.
BATCH_LIMIT = 40_000
BATCH_VALUES = 250_000


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


def least_norm_multipliers(model: Model, q, lam, t, dropped, state=None) -> None:
    """Replace, in place, the multipliers ``lam`` (rows, nc) at positions ``q`` (rows, nq)
    and times ``t`` (rows,) of a run whose rows ``dropped`` depend on the others by the
    least-norm multipliers of the same constraint force Phi_q^T lam.

    At each row, with A the kept rows and D the dropped ones, Phi_q,D = C Phi_q,A (the
    dropped rows are combinations of the kept ones), so the columns of N = [-C^T; I] span
    null(Phi_q^T); the least-norm lam is lam - N (N^T N)^-1 N^T lam. C comes from the
    normal equations of the kept rows, Phi_q,A Phi_q,A^T C^T = Phi_q,A Phi_q,D^T (Phi_q,A
    has full row rank where the rank is what it was at the start, which the run checks):
    for a small model all rows at once in dense arrays (BATCH_LIMIT), else row by row with
    a sparse LU."""
    dropped = np.asarray(dropped, dtype=np.intp)
    if not dropped.size or not len(lam):
        return
    kept = np.setdiff1d(np.arange(model.nc), dropped)
    values = np.array([model.kernels.phi_q_values(q[k], float(t[k]), state=state)
                       for k in range(len(lam))])
    import scipy.sparse as sp
    import scipy.sparse.linalg as spl

    nc = model.nc
    if nc * nc <= BATCH_LIMIT:
        # Phi_q Phi_q^T of every row at once: the products of each column's pairs of
        # entries, summed into their (row, row) places by one sparse product
        cp, ri = model.kernels.arrays["phiq_colptr"], model.phiq_rowind
        cols = [np.arange(cp[j], cp[j + 1]) for j in range(model.nq)]
        a = np.concatenate([np.repeat(c, c.size) for c in cols])
        b = np.concatenate([np.tile(c, c.size) for c in cols])
        pos = np.empty(nc, dtype=np.intp)           # the kept rows first, then the dropped
        pos[np.concatenate([kept, dropped])] = np.arange(nc)
        scatter = sp.csc_matrix((np.ones(a.size), (np.arange(a.size),
                                                   pos[ri[a]] * nc + pos[ri[b]])),
                                shape=(a.size, nc * nc))
        chunk, r = max(1, BATCH_VALUES // (nc * nc)), kept.size
        for start in range(0, len(lam), chunk):
            part = slice(start, start + chunk)
            G = np.ascontiguousarray(values[part][:, a] * values[part][:, b] @ scatter)
            G = G.reshape(-1, nc, nc)
            CT = np.linalg.solve(G[:, :r, :r], G[:, :r, r:])
            _least_norm_update(lam[part], kept, dropped, CT)
        return

    for k in range(len(lam)):
        J = sp.csr_matrix((values[k], (model.phiq_rowind, model.phiq_colind)),
                          shape=(model.nc, model.nq))
        JA, JD = J[kept], J[dropped]
        CT = spl.splu((JA @ JA.T).tocsc()).solve((JA @ JD.T).toarray())
        _least_norm_update(lam[k:k + 1], kept, dropped, CT[None])


def _least_norm_update(lam, kept, dropped, CT) -> None:
    """lam (rows, nc) <- lam - N (N^T N)^-1 N^T lam for N = [-C^T; I] (CT: rows, kept,
    dropped)."""
    la, ld = lam[:, kept], lam[:, dropped]
    CTt = CT.transpose(0, 2, 1)
    gram = np.eye(dropped.size)[None] + CTt @ CT
    y = np.linalg.solve(gram, (ld - (CTt @ la[:, :, None])[:, :, 0])[:, :, None])[:, :, 0]
    lam[:, kept] = la + (CT @ y[:, :, None])[:, :, 0]
    lam[:, dropped] = ld - y
