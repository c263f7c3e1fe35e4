"""The constraint rows in which two compiled models of one family differ, and a model's
kernels restricted to some of its rows.

Sensitivities (:mod:`linkdyn.design.sensitivity`) take weighted differences of the
constraints of member models compiled at shifted parameter values. A member differs from
the model itself in the data of a few rows only (a joint's local point, a term's
coefficient, a driving law's parameters); every other row is the same computation on the
same data, and its weighted sum is zero (a difference's weights add up to zero). Evaluated
on those few rows, the others taken as zero, the members give the same differences, bit
for bit, at a fraction of the cost.
"""

from __future__ import annotations

import numpy as np

from .._kernels import ANGLE_DBL, ANGLE_INT, Kernels

#: Kernel arrays that fix which computation each row is: two models whose arrays agree in
#: these differ only in data (rev_local, term_coef, law_par), row by row.
STRUCTURE = ("phiq_colptr", "phiq_rowind", "unit_body", "unit_row", "unit_slot",
             "frame_base", "frame_row", "frame_slot", "rev_body", "rev_row", "rev_slot",
             "gen_row", "gen_slot", "term_row", "term_a", "term_b", "term_tf", "term_law",
             "term_slot", "law_kind", "law_start")


def changed_rows(base: Kernels, other: Kernels) -> np.ndarray | None:
    """A mask of ``base``'s constraint rows whose data differ in ``other`` (kernels of two
    models with the same coordinates and rows), or None where their kernels differ in
    structure (every row must then be evaluated)."""
    a, b = base.arrays, other.arrays
    if base.nc != other.nc or base.nq != other.nq:
        return None
    for name in ("rev_local", "term_coef", "law_par"):
        if a[name].shape != b[name].shape:
            return None
    # Angle rows (gear pairs) are compared whole: members that differ in one evaluate all.
    for name in (*STRUCTURE, *ANGLE_INT, *ANGLE_DBL):   # (contiguous, of one dtype each)
        if a[name].shape != b[name].shape or a[name].tobytes() != b[name].tobytes():
            return None
    rows = np.zeros(base.nc, dtype=bool)
    joints = np.flatnonzero((a["rev_local"] != b["rev_local"]).reshape(-1, 4).any(axis=1))
    rows[a["rev_row"][joints]] = True
    rows[a["rev_row"][joints] + 1] = True
    rows[a["term_row"][a["term_coef"] != b["term_coef"]]] = True
    start, moved = a["law_start"], a["law_par"] != b["law_par"]
    laws = [k for k in range(len(a["law_kind"])) if moved[start[k]:start[k + 1]].any()]
    timed = (a["term_tf"] != 0) & np.isin(a["term_law"], laws)
    rows[a["term_row"][timed]] = True
    return rows


def restricted_kernels(kernels: Kernels, rows) -> Kernels:
    """``kernels`` with only the constraint rows in the mask ``rows`` (each kept whole: a
    revolute joint's two rows, a generic row's every term): Phi, Phi_q, Phi_t and gamma
    write those rows and their Jacobian slots, the same values as ``kernels``, and nothing
    else (the caller zeroes the rest). Unit-vector, frame and angle rows, which
    :func:`changed_rows` never names, are never kept; force elements are kept but not meant to be evaluated."""
    a = dict(kernels.arrays)
    rows = np.asarray(rows, dtype=bool)
    for name in ("unit_body", "unit_row", "unit_slot", "unit_hslot", "frame_base",
                 "frame_row", "frame_slot", "frame_hslot"):
        a[name] = a[name][:0]
    rev = rows[a["rev_row"]] | rows[a["rev_row"] + 1]
    for name, per in (("rev_body", 2), ("rev_local", 4), ("rev_row", 1), ("rev_slot", 12)):
        a[name] = a[name].reshape(-1, per)[rev].ravel()
    term = rows[a["term_row"]]
    for name, per in (("term_row", 1), ("term_a", 1), ("term_b", 1), ("term_tf", 1),
                      ("term_law", 1), ("term_coef", 1), ("term_slot", 2), ("term_hslot", 2)):
        a[name] = a[name].reshape(-1, per)[term].ravel()
    a["gen_row"] = a["gen_row"][rows[a["gen_row"]]]
    a["gen_slot"] = a["gen_slot"][rows[a["phiq_rowind"][a["gen_slot"]]]]
    for name in (*ANGLE_INT, *ANGLE_DBL):       # the same in every member: never kept
        a[name] = a[name][:0]
    a.update(nc=kernels.nc, nbody=0, body_stride=kernels.body_stride)
    return Kernels(a)
