"""The compiled sensitivity sweep's inputs (linkdyn._kinematics.DerivativePlan): the kernels
whose weighted residuals are each parameter's derivatives of the rows, and the sweep run on
them after the analysis (:func:`_swept`; the exact kernels are also formed in the analysis'
own sweep: linkdyn.solve.kinematics.kinematics_with_derivatives). Either members compiled at
shifted parameter values (linkdyn.design.sensitivity differences them), restricted to the
rows they change where that pays, or, for parameters whose derivatives the compile knows (a
linkage's joint coordinates, a planar model's points and bar lengths), kernels that give the
derivatives exactly with no member compiled (:func:`_exact_sweep`)."""

from __future__ import annotations

import numpy as np

from ..compile.cartesian import point_arrays
from ..compile.natural import NaturalModel, parameter_kernels
from ..compile.rows import changed_rows, restricted_kernels
from ..describe import geometric
from ..elements.bodies import GROUND, BarSpec
from ..elements.description import Description
from ..errors import SingularConfigurationError
from ..solve import lu_code
from ..solve.interrupt import requested
from ..solve.tracking import derivative_arrays


def derivative_plan(base, models, start, index, weight, rows, moves=None, order=2):
    """The compiled plan of the parameters' derivatives on the kernels ``models`` (each
    parameter's residual derivatives: sum of weight[k] F(models[index[k]]) over k in
    start[j] .. start[j + 1]) for the model ``base``; ``rows``: None, or the rows that the
    models, restricted to them (:func:`_restricted`), write; ``moves``: None, or the
    revolute joints' point moves of :func:`_move_arrays` (no members then); ``order``: the
    highest time derivative formed (0 dq, 1 and dv, 2 and da)."""
    from .._kinematics import DerivativePlan

    return DerivativePlan(base.kernels, models, np.array(start, dtype=np.intc),
                          np.array(index, dtype=np.intc), np.array(weight, dtype=float),
                          _affine_in_q(base), _time_columns(base), rows, moves, order)



def _swept(base, models, start, index, weight, rows, moves, t, q, v, a, order=2) -> tuple:
    """The compiled sweep of :func:`derivative_plan` at the analysis' rows: (dq, dv, da,
    used), the rows done (all, or those before Ctrl-C) and whether each parameter's
    residual derivatives were nonzero anywhere; dv and da up to ``order`` (above it, no
    columns)."""
    from .._kinematics import STATUS, SensitivitySweep

    n, nq, p = len(t), base.nq, len(start) - 1
    dq, dv, da = derivative_arrays(n, nq, p, order)
    if requested():     # Ctrl-C pressed in Python (compiling the members): no rows done
        return dq[:0], dv[:0], da[:0], [False] * p
    plan = derivative_plan(base, models, start, index, weight, rows, moves, order)
    sweep = SensitivitySweep(base.kernels)
    if n:       # straight-line LU code for Phi_q where it can be built (linkdyn.solve.lu_code)
        lu_code.attach(sweep, float(t[0]), np.asarray(q)[0])
    status, row = sweep.derivatives(
        np.ascontiguousarray(t, dtype=float), np.ascontiguousarray(q), np.ascontiguousarray(v),
        np.ascontiguousarray(a), plan, dq, dv, da)
    size = plan.size
    if STATUS[status] == "interrupted":     # the rows before ``row`` are complete
        return dq[:row], dv[:row], da[:row], [bool(x > 0.0) for x in size]
    if status != 0:
        raise SingularConfigurationError(
            f"model {base.name!r}: Phi_q is singular at t = {t[row]:.9g} s; the sensitivities "
            "do not exist there", t=float(t[row]))
    return dq, dv, da, [bool(x > 0.0) for x in size]


def _exact_sweep(family, source) -> tuple | None:
    """The derivatives of the rows with respect to parameters that move only points,
    without compiled members, where they are known exactly: (kernels, start, index,
    weight, rows, moves) for :func:`_swept` (rows: see :func:`_restricted`; moves: see
    :func:`_move_arrays`) and the markers' own derivatives ``own(q, v=None, a=None)`` ->
    {(marker, part): (n, dim, p)}; None otherwise (differenced members then).

    - A spherical or spatial linkage's joint coordinates: kernels of its rows' derivatives
      (linkdyn.compile.natural.parameter_kernels: one complex step each), weighted 1; a
      ground joint's marker moves with its own coordinates.
    - Planar bodies' points (:func:`_point_moves`): the revolute rows and the markers are
      linear in them, so the rows' derivatives are the moves' own terms, formed in the
      compiled sweep (DerivativePlan's ``moves``: before, a copy of the model's kernels
      with the points moved, less the model's own, for every parameter, built at each
      call), and a marker r + A(u) s moves by A(u) ds/dp."""
    base = family.base
    if isinstance(base, NaturalModel):
        derived = parameter_kernels(base, family.names)
        if derived is None:
            return None
        p = len(derived)
        marks = np.stack([m for _, m in derived], axis=-1)           # (nmarkers, 3, p)
        return ([k for k, _ in derived], np.arange(p + 1, dtype=np.intc),
                np.arange(p, dtype=np.intc), np.ones(p), None, None,
                lambda q, v=None, a=None: {(name, "q"): np.broadcast_to(marks[k], (len(q),) +
                                                              marks[k].shape)
                                 for k, name in enumerate(base.marker_names)
                                 if np.any(marks[k] != 0.0)})
    moved = _point_moves(family, source)
    if moved is None:
        return None
    p = len(moved)
    moves = _move_arrays(base, [rev for rev, _ in moved])
    marks = np.stack([m for _, m in moved], axis=-1)                # (nmarkers, 2, p)
    body = base.marker_body

    def own(q, v=None, a=None):
        # a marker r + A(u) s moves with s at fixed q by A(u) ds = (ux dx - uy dy,
        # uy dx + ux dy), and its velocity and acceleration by the same with u's rates
        # (the parts given: a lower order leaves v and a out)
        out = {}
        for k, name in enumerate(base.marker_names):
            if not np.any(marks[k] != 0.0):
                continue
            for part, x in (("q", q), ("v", v), ("a", a)):
                if x is None:
                    continue
                ux, uy = x[:, 4 * body[k] + 2, None], x[:, 4 * body[k] + 3, None]
                dx, dy = marks[k][0], marks[k][1]
                out[(name, part)] = np.stack([ux * dx - uy * dy, uy * dx + ux * dy], axis=1)
        return out
    return ([], np.zeros(p + 1, dtype=np.intc), np.zeros(0, dtype=np.intc), np.zeros(0), None,
            moves, own)


def _move_arrays(base, revs) -> tuple:
    """The DerivativePlan ``moves`` of the parameters whose derivatives of the revolute
    records' local points (``rev_local``'s layout: per joint, (xi, eta) of each side) are
    ``revs``: (start, row, body, d), each side a point of which moves, with the side's
    sign (+1 for the first, -1 for the second) on its d."""
    a = base.kernels.arrays
    rev_row, rev_body = a["rev_row"], a["rev_body"].reshape(-1, 2)
    start, row, body, d = [0], [], [], []
    for rev in revs:
        moved = np.asarray(rev, dtype=float).reshape(-1, 2, 2)
        for k, side in zip(*np.nonzero(np.any(moved != 0.0, axis=2))):
            sign = 1.0 if side == 0 else -1.0
            row.append(rev_row[k])
            body.append(rev_body[k, side])
            d.append(sign * moved[k, side])
        start.append(len(row))
    return (np.array(start, dtype=np.intc), np.array(row, dtype=np.intc),
            np.array(body, dtype=np.intc), np.array(d, dtype=float).reshape(-1))


_AXIS = {"x": 0, "y": 1, "0": 0, "1": 1}


def _point_moves(family, source) -> list | None:
    """Per parameter, the derivatives of the revolute rows' and markers' local-point arrays
    (linkdyn.compile.cartesian.point_arrays) of a planar model whose parameters all move
    points only, linearly: a planar linkage's joint coordinates
    (:meth:`linkdyn.geometric.Linkage.point_derivatives`), and in a model file a ground
    point's or a body point's coordinate (``ground.P2.x``, ``bodies.crank.points.B.y``) or
    a bar's length (its ends at -+ length / 2). None for any other parameter, where a
    moved point enters a prismatic joint or a coordinate driver (generic rows), or where it
    enters no revolute joint and no marker (a force element's point: only the
    kinetostatics, which members judge)."""
    base = family.base
    if base.space != "planar" or isinstance(base, NaturalModel):
        return None
    linkage = isinstance(source, geometric.Linkage)
    desc = base.description
    if not linkage and not isinstance(desc, Description):
        return None
    bodies = {b.name: b for b in desc.bodies}
    moves = []
    for name in family.names:
        parts = name.split(".")
        step = np.zeros(2)
        if parts[-1] in _AXIS:
            step[_AXIS[parts[-1]]] = 1.0
        if linkage:
            points = (source.point_derivatives(parts[1], _AXIS[parts[3]])
                      if len(parts) == 4 and parts[:3:2] == ["joints", "coordinates"]
                      and parts[3] in _AXIS else None)
        elif len(parts) == 3 and parts[0] == "ground" and parts[2] in _AXIS:
            points = {(GROUND, parts[1]): step}
        elif len(parts) == 5 and parts[0] == "bodies" and parts[2] == "points" and \
                parts[4] in _AXIS:
            points = {(parts[1], parts[3]): step}
        elif len(parts) == 3 and parts[0] == "bodies" and parts[2] == "length" and \
                isinstance(bodies.get(parts[1]), BarSpec):
            points = {(parts[1], "a"): np.array([-0.5, 0.0]),
                      (parts[1], "b"): np.array([0.5, 0.0])}
        else:
            points = None
        if points is None:
            return None
        moves.append(points)
    out = point_arrays(desc, moves)
    for arrays in out:
        if arrays is None or not (np.any(arrays[0] != 0.0) or np.any(arrays[1] != 0.0)):
            return None     # (a point only a force element holds: the kinetostatics')
    return out


#: Restricting the members to the rows they change pays once the rows it spares, summed
#: over the sweep's positions, reach this many: building a member's restricted kernels
#: costs some 0.1 ms, and each row spared saves some 7 ns a position (the Jansen linkage,
#: benchmarks/test_bench_design.py: a break-even near 450 positions for one parameter).
RESTRICT_WORK = 20_000


def _restricted(base, models, positions) -> tuple:
    """(kernels, rows): the members' kernels restricted to the rows where any of them
    differs from the model's (linkdyn.compile.rows), and the rows they write (those, with
    a revolute joint's other row); ``models`` as they are and None where a member differs
    in structure, or where too few rows times ``positions`` would be spared to pay for the
    restriction (RESTRICT_WORK)."""
    if positions * base.nc < RESTRICT_WORK:
        return models, None
    union = np.zeros(base.nc, dtype=bool)
    for kernels in models:
        rows = changed_rows(base.kernels, kernels)
        if rows is None:
            return models, None
        union |= rows
    if positions * int(np.count_nonzero(~union)) < RESTRICT_WORK:
        return models, None
    kept = [restricted_kernels(k, union) for k in models]
    a = kept[0].arrays
    written = np.unique(np.concatenate([a["rev_row"], a["rev_row"] + 1, a["term_row"],
                                        a["gen_row"]]))
    return kept, written.astype(np.intc)


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
