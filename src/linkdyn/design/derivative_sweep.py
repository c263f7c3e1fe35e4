"""The compiled sensitivity sweep's inputs (linkdyn._kinematics.SensitivitySweep): the
kernels whose weighted residuals are each parameter's derivatives of the rows, and the sweep
run on them. Either members compiled at shifted parameter values (linkdyn.design.sensitivity
differences them), restricted to the rows they change where that pays, or, for a linkage's
joint coordinates, kernels that give the derivatives exactly with no member compiled
(:func:`_linkage_sweep`)."""

from __future__ import annotations

import numpy as np

from .._kernels import Kernels
from ..compile.cartesian import point_arrays
from ..compile.natural import NaturalModel, parameter_kernels
from ..compile.rows import changed_rows, restricted_kernels
from ..describe import geometric
from ..errors import SingularConfigurationError
from ..solve.interrupt import requested


def _swept(base, models, start, index, weight, restricted, t, q, v, a) -> tuple:
    """The compiled sweep of :func:`_derivatives_compiled` on its members' kernels: (dq, dv,
    da, used), the rows done (all, or those before Ctrl-C) and whether each parameter's
    residual derivatives were nonzero anywhere."""
    from .._kinematics import STATUS, SensitivitySweep

    n, nq, p = len(t), base.nq, len(start) - 1
    dq, dv, da = (np.zeros((n, nq, p)) for _ in range(3))
    size = np.zeros(p)
    if requested():     # Ctrl-C pressed in Python (compiling the members): no rows done
        return dq[:0], dv[:0], da[:0], [False] * p
    sweep = SensitivitySweep(base.kernels)
    status, row = sweep.derivatives(
        np.ascontiguousarray(t, dtype=float), np.ascontiguousarray(q), np.ascontiguousarray(v),
        np.ascontiguousarray(a), models, np.array(start, dtype=np.intc),
        np.array(index, dtype=np.intc), np.array(weight), dq, dv, da, size,
        _affine_in_q(base), _time_columns(base), restricted)
    if STATUS[status] == "interrupted":     # the rows before ``row`` are complete
        return dq[:row], dv[:row], da[:row], [bool(x > 0.0) for x in size]
    if status != 0:
        raise SingularConfigurationError(
            f"model {base.name!r}: Phi_q is singular at t = {t[row]:.9g} s; the sensitivities "
            "do not exist there", t=float(t[row]))
    return dq, dv, da, [bool(x > 0.0) for x in size]


def _linkage_sweep(family, source, n) -> tuple | None:
    """The derivatives of a linkage's rows with respect to its joints' coordinates without
    compiled members, where they are known exactly: (kernels, start, index, weight,
    restricted, own) for :func:`_swept` and the markers' own derivatives ``own(q, v, a)``
    -> {(marker, part): (n, dim, p)}; None otherwise (differenced members then).

    - A spherical or spatial linkage: kernels of its rows' derivatives
      (linkdyn.compile.natural.parameter_kernels: one complex step each), weighted 1; a
      ground joint's marker moves with its own coordinates.
    - A planar linkage of revolute joints: the coordinates move only the bodies' and the
      ground's points, linearly (Linkage.point_derivatives), and the rows and markers are
      linear in those: the kernels with the points moved by their derivatives, less the
      model's own (weights 1 and -1), and the markers' A(u) ds/dp."""
    base = family.base
    if isinstance(base, NaturalModel):
        derived = parameter_kernels(base, family.names)
        if derived is None:
            return None
        p = len(derived)
        marks = np.stack([m for _, m in derived], axis=-1)           # (nmarkers, 3, p)
        return ([k for k, _ in derived], np.arange(p + 1, dtype=np.intc),
                np.arange(p, dtype=np.intc), np.ones(p), False,
                lambda q, v, a: {(name, "q"): np.broadcast_to(marks[k], (len(q),) +
                                                              marks[k].shape)
                                 for k, name in enumerate(base.marker_names)
                                 if np.any(marks[k] != 0.0)})
    if not isinstance(source, geometric.Linkage):
        return None
    moved = []
    for name in family.names:
        parts = name.split(".")
        if len(parts) != 4 or parts[:1] + parts[2:3] != ["joints", "coordinates"] or \
                parts[3] not in ("x", "y", "0", "1"):
            return None
        points = source.point_derivatives(parts[1], "xy01".index(parts[3]) % 2)
        if points is None:
            return None
        moved.append(point_arrays(base.description, points))
    kernels = [base.kernels]
    for rev, _ in moved:
        arrays = dict(base.kernels.arrays)
        arrays.update(rev_local=arrays["rev_local"] + rev, nc=base.nc,
                      body_stride=base.kernels.body_stride)
        kernels.append(Kernels(arrays))
    p = len(moved)
    kernels, restricted = _restricted(base, kernels, n)
    marks = np.stack([m for _, m in moved], axis=-1)                # (nmarkers, 2, p)
    body = base.marker_body

    def own(q, v, a):
        # a marker r + A(u) s moves with s at fixed q by A(u) ds = (ux dx - uy dy,
        # uy dx + ux dy), and its velocity and acceleration by the same with u's rates
        out = {}
        for k, name in enumerate(base.marker_names):
            if not np.any(marks[k] != 0.0):
                continue
            for part, x in (("q", q), ("v", v), ("a", a)):
                ux, uy = x[:, 4 * body[k] + 2, None], x[:, 4 * body[k] + 3, None]
                dx, dy = marks[k][0], marks[k][1]
                out[(name, part)] = np.stack([ux * dx - uy * dy, uy * dx + ux * dy], axis=1)
        return out
    return (kernels, np.arange(0, 2 * p + 1, 2, dtype=np.intc),
            np.ravel([(j + 1, 0) for j in range(p)]).astype(np.intc),
            np.tile([1.0, -1.0], p), restricted, own)


#: Restricting the members to the rows they change pays once the rows it spares, summed
#: over the sweep's positions, reach this many: building a member's restricted kernels
#: costs some 0.1 ms, and each row spared saves some 7 ns a position (the Jansen linkage,
#: benchmarks/test_bench_design.py: a break-even near 450 positions for one parameter).
RESTRICT_WORK = 20_000


def _restricted(base, models, positions) -> tuple:
    """(kernels, restricted): the members' kernels restricted to the rows where any of them
    differs from the model's (linkdyn.compile.rows), and True; ``models`` as they are and
    False where a member differs in structure, or where too few rows times ``positions``
    would be spared to pay for the restriction (RESTRICT_WORK)."""
    if positions * base.nc < RESTRICT_WORK:
        return models, False
    union = np.zeros(base.nc, dtype=bool)
    for kernels in models:
        rows = changed_rows(base.kernels, kernels)
        if rows is None:
            return models, False
        union |= rows
    if positions * int(np.count_nonzero(~union)) < RESTRICT_WORK:
        return models, False
    return [restricted_kernels(k, union) for k in models], True


def _affine_in_q(model) -> int:
    """1 if the model's Phi_q v + Phi_t and Phi_q a - gamma are affine in q: its constraints
    are at most quadratic in q, and no time factor multiplies a product of two coordinates
    (Phi_t and Phi_tt of such a term would be quadratic in q); the rows of a coordinate
    family's own kernels (unit vectors, revolute joints, frames) do not depend on time."""
    a = model.kernels.arrays
    product = (a["term_a"] >= 0) & (a["term_b"] >= 0)
    return int(not np.any(a["term_tf"][product] != 0))


def _time_columns(model) -> np.ndarray:
    """The coordinates that a time factor multiplies in some constraint term: the columns
    where Phi_t depends on q."""
    a = model.kernels.arrays
    timed = a["term_tf"] != 0
    cols = np.concatenate([a["term_a"][timed], a["term_b"][timed]])
    return np.unique(cols[cols >= 0]).astype(np.intc)
