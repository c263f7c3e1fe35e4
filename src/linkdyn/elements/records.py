"""The flat records of the force kernels (csrc/ld_forces.h) that force elements and contacts
compile to: each record acts along one scalar coordinate of the mechanism (a distance, a
relative angle, a slide along a line, a rolling angle, a follower's gap from a cam, the arc
of a gear mesh) between
two bodies, with a law of its own; point loads are records of their own. :func:`compile_records` packs the records of both
families into the kernels' arrays and the sparsity entries of Q_q and Q_v."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .laws import Law

__all__ = ["DISTANCE", "ANGLE", "SLIDE", "ROLL", "CAM", "MESH", "INPUT_NONE", "INPUT_ADD",
           "INPUT_TARGET", "FRICTION_LAW", "TABLE_LAW", "compile_records", "record_laws",
           "element_index", "reference_angles"]

# Coordinate kinds and input modes of csrc/ld_forces.h.
DISTANCE, ANGLE, SLIDE, ROLL, CAM, MESH = 0, 1, 2, 3, 4, 5
INPUT_NONE, INPUT_ADD, INPUT_TARGET = 0, 1, 2
FRICTION_LAW = 3                       # LD_FORCE_FRICTION
TABLE_LAW = 4                          # LD_FORCE_TABLE



@dataclass
class _Record:
    owner: str
    coord: int
    bodies: tuple[int, int]
    geom: tuple
    k: float = 0.0
    c: float = 0.0
    ref: Law | float = 0.0
    load: Law | None = None
    input_mode: int = INPUT_NONE
    law: int = 0                       # LD_FORCE_*: 0 linear, else a contact law
    law_par: tuple = (0.0, 0.0, 0.0, 0.0)
    sense: float = 1.0                 # contact laws: +1 delta = gap - s, -1 delta = s - gap
    cam: int = -1                      # CAM: the cam (linkdyn.elements.cams.kernel_arrays)
    table: object = None               # TABLE_LAW: its curve (a ForceTable: .params())


def _local_masks(rec: _Record):
    """Structural non-zeros of the record's gradient (8,) and of Q_q, Q_v (8, 8)."""
    g = np.zeros(8, dtype=bool)
    for side, b in enumerate(rec.bodies):
        if b >= 0:
            g[4 * side + (2 if rec.coord in (ANGLE, MESH) else 0):4 * side + 4] = True
    gg = np.outer(g, g)
    if rec.coord == SLIDE:
        u1 = np.zeros(8, dtype=bool)
        if rec.bodies[0] >= 0:
            u1[2:4] = True
        hess = (np.outer(u1, g) | np.outer(g, u1))
    else:
        hess = gg
    mask_q = hess | (gg if (rec.k or rec.c or rec.law) else np.zeros_like(gg))
    mask_v = gg if (rec.c or rec.law) else np.zeros_like(gg)
    return mask_q, mask_v


def record_laws(recs, add_law):
    """The kernels' arrays of the records' coordinates, bodies, gains, laws and inputs
    (all but their geometry), and the owners of the inputs in input order."""
    nrec = len(recs)
    inputs = [r.owner for r in recs if r.input_mode != INPUT_NONE]
    a = dict(
        rec_coord=np.array([r.coord for r in recs], dtype=np.intc),
        rec_body=np.array([r.bodies for r in recs], dtype=np.intc).reshape(-1),
        rec_k=np.array([r.k for r in recs], dtype=float),
        rec_c=np.array([r.c for r in recs], dtype=float),
        rec_ref_law=np.full(nrec, -1, dtype=np.intc),
        rec_ref_value=np.zeros(nrec),
        rec_load_law=np.full(nrec, -1, dtype=np.intc),
        rec_input_mode=np.array([r.input_mode for r in recs], dtype=np.intc),
        rec_input=np.full(nrec, -1, dtype=np.intc),
        rec_law=np.array([r.law for r in recs], dtype=np.intc),
        rec_law_par=np.array([r.law_par for r in recs], dtype=float).reshape(-1),
        rec_law_sense=np.array([r.sense for r in recs], dtype=float),
        rec_cam=np.array([r.cam for r in recs], dtype=np.intc),
        rec_table=np.full(nrec, -1, dtype=np.intc),
    )
    tables, tab_start = [], [0]
    for i, r in enumerate(recs):
        if r.table is not None:
            a["rec_table"][i] = len(tab_start) - 1
            tables += r.table.params()
            tab_start.append(len(tables))
    a["tab_start"] = np.array(tab_start, dtype=np.intc)
    a["tab_par"] = np.array(tables, dtype=float)
    for i, r in enumerate(recs):
        if isinstance(r.ref, Law):
            if r.ref.kind == "constant":
                a["rec_ref_value"][i] = r.ref.params[0]
            else:
                a["rec_ref_law"][i] = add_law(r.ref)
        else:
            a["rec_ref_value"][i] = r.ref
        if r.load is not None and not (r.load.kind == "constant" and r.load.params[0] == 0.0):
            a["rec_load_law"][i] = add_law(r.load)
        if r.input_mode != INPUT_NONE:
            a["rec_input"][i] = inputs.index(r.owner)
    return a, inputs


def element_index(recs, loads) -> dict:
    """Element name -> (its record indices, its load indices); a load's first field is its
    owner."""
    elements = {}
    for i, r in enumerate(recs):
        elements.setdefault(r.owner, ([], []))[0].append(i)
    for i, ld in enumerate(loads):
        elements.setdefault(ld[0], ([], []))[1].append(i)
    return elements


def compile_records(recs, loads, contact_recs, frictions, swings, arcs, add_law):
    """Flat arrays of csrc/ld_forces.h for the records of the force elements (``recs``, with
    the point ``loads``: :func:`linkdyn.elements.forces.force_records`) followed by the
    contacts' (``contact_recs``, ``frictions``, ``swings``, ``arcs``:
    :func:`linkdyn.elements.contacts.contact_records`).

    ``add_law(law)`` gives the index of a law in the model's law table. Returns ``(arrays,
    info, fq_entries, fv_entries)``: ``info`` describes the elements for the results
    (``element -> (records, loads)``, input names, initial references), the entry lists give
    each record's (row, col) pairs in local-block order for the Q_q and Q_v patterns
    (the compiler turns them into slots with ``assign_slots``)."""
    contacts_from = len(recs)
    recs = list(recs) + list(contact_recs)
    nrec, nload = len(recs), len(loads)
    a, inputs = record_laws(recs, add_law)
    a.update(
        rec_geom=np.array([r.geom for r in recs], dtype=float).reshape(-1),
        load_body=np.array([ld[1] for ld in loads], dtype=np.intc),
        load_point=np.array([ld[2] for ld in loads], dtype=float).reshape(-1),
        load_frame=np.array([ld[5] for ld in loads], dtype=np.intc),
        load_laws=np.full(2 * nload, -1, dtype=np.intc),
    )
    for i, ld in enumerate(loads):
        for c, law in enumerate((ld[3], ld[4])):
            if not (law.kind == "constant" and law.params[0] == 0.0):
                a["load_laws"][2 * i + c] = add_law(law)

    def global_index(rec, local):
        b = rec.bodies[local // 4]
        return -1 if b < 0 else 4 * b + local % 4

    fq_entries, fv_entries = [], []
    for r in recs:
        mq, mv = _local_masks(r)
        for mask, out in ((mq, fq_entries), (mv, fv_entries)):
            ent = []
            for i in range(8):
                for j in range(8):
                    gi, gj = global_index(r, i), global_index(r, j)
                    ent.append((gi, gj) if mask[i, j] and gi >= 0 and gj >= 0 else None)
            out.append(ent)
    load_fq = []
    for ld in loads:
        ent = [None] * 16
        if ld[5]:
            for i in range(4):
                for j in (2, 3):
                    ent[4 * i + j] = (4 * ld[1] + i, 4 * ld[1] + j)
        load_fq.append(ent)

    info = dict(elements=element_index(recs, loads), inputs=tuple(inputs), nrec=nrec,
                nload=nload,
                coord=tuple(r.coord for r in recs),
                # (friction records, on a rolling coordinate or a joint's, are not contacts)
                contacts=tuple((i, recs[i].owner, recs[i].law)
                               for i in range(contacts_from, nrec)
                               if recs[i].coord != ROLL and recs[i].law != FRICTION_LAW),
                frictions=tuple(frictions), swings=tuple(swings), arcs=tuple(arcs))
    return a, info, fq_entries + load_fq, fv_entries


def reference_angles(arrays, q0, values=None) -> np.ndarray:
    """Reference angles of the records at q0: for angle records the given ``values`` (a
    run's start: their angles on the model's branch) or, without them, the relative angle
    in q0 in (-pi, pi] (the branch of the stateless evaluation, Model.force and
    Model.energy); for rolling records the relative angle in q0; 0 for the others."""
    body = arrays["rec_body"].reshape(-1, 2)
    coord = arrays["rec_coord"]
    out = np.zeros(len(body)) if values is None else np.array(values, dtype=float)
    for r in np.flatnonzero((coord == ANGLE) if values is None else (coord == ROLL)):
        b1, b2 = body[r]
        a1 = 0.0 if b1 < 0 else math.atan2(q0[4 * b1 + 3], q0[4 * b1 + 2])
        a2 = 0.0 if b2 < 0 else math.atan2(q0[4 * b2 + 3], q0[4 * b2 + 2])
        out[r] = math.remainder(a2 - a1, 2 * math.pi)
    return out
