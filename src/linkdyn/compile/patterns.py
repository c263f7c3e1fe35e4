"""Numbering and patterns shared by every coordinate family: the kernels' generic rows
(quadratic forms in the coordinates), the CSC patterns of Phi_q, of the constraint Hessian
and of the force derivatives with the slot of every entry, and the law table.

A linear form in q is a dict {coordinate index: coefficient, -1: constant}. Products of two
forms give the terms coef * q_a * q_b (a, b >= 0), coef * q_a (b = -1) and coef (a = b = -1)
that the kernels evaluate, each with a time factor: 0 none, 1 cos f, 2 sin f, 3 f, 4 f^2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..elements import forces as _forces
from ..elements.contacts import contact_records
from ..elements.records import compile_records, reference_angles
from ..elements.stops import planar_records as planar_stop_records
from ..elements.clearance import planar_records as planar_clearance_records
from ..elements.joint_friction import planar_records as planar_joint_frictions
from ..elements import cams as _cams
from ..elements import gears as _gears

__all__ = ["Numbering", "compile_rows", "force_arrays", "law_arrays", "assign_slots", "mul"]


@dataclass
class Numbering:
    """What a coordinate family (:mod:`.cartesian`, :mod:`.natural`) hands the shared compile
    steps of :func:`linkdyn.compile.compiler.compile_model`: its coordinates with their
    initial values and masses, the constraint rows its own kernels evaluate (``rows``,
    ``cols``: their Jacobian entries, ``nc`` of them), its generic rows and laws, what its
    force elements and markers need, and the model type to build."""

    description: object            # what the model is compiled from (its identity)
    model_type: type
    model_args: tuple              # the model type's own constructor arguments
    q0: np.ndarray
    v0: np.ndarray
    hold: np.ndarray
    mass: np.ndarray               # diagonal of the constant mass matrix
    q_applied: np.ndarray          # constant applied forces (gravity)
    coordinates: list
    rows: list
    cols: list
    row_names: list
    owners: list
    nc: int
    hdiag: np.ndarray              # coordinates whose (i, i) Hessian entries the rows need,
                                   # or (k, 2) pairs (i, j) of entries
    generic: list                  # [(row name, owner, [(terms, time factor, law)])]
    laws: list
    force_description: object      # the description whose forces and contacts compile
    body_index: dict
    local_of: Callable | None
    ground: dict
    marker_body: np.ndarray
    marker_local: np.ndarray
    names: dict                    # bodies, joints, markers, drivers, forces
    family_arrays: Callable        # (Phi_q slot of each row entry, Hessian slots) -> arrays
    #: (add_law, nq) -> the force kernels' (arrays, info) of a family with force records of
    #: its own geometry (spatial); None: the planar records of force_description
    compile_forces: Callable | None = None
    #: rows in angles (gear pairs, racks): :class:`linkdyn.compile.angles.AngleRow`, numbered
    #: after the family's own rows
    angle_rows: list = field(default_factory=list)


def _csc_pattern(rows: np.ndarray, cols: np.ndarray, nrows: int, ncols: int):
    """CSC pattern of the given (row, col) entries and, for each entry, its position (slot)
    in the CSC value array. Entries must be distinct."""
    keys = np.asarray(cols, dtype=np.int64) * max(nrows, 1) + rows   # by column, then row
    order = np.argsort(keys, kind="stable")
    if len(order) > 1 and not np.all(np.diff(keys[order])):
        raise AssertionError("duplicate Jacobian entry in the compiled pattern")
    r, c = rows[order], cols[order]
    colptr = np.zeros(ncols + 1, dtype=np.intc)
    np.cumsum(np.bincount(c, minlength=ncols), out=colptr[1:])
    slot = np.empty(len(order), dtype=np.intc)
    slot[order] = np.arange(len(order), dtype=np.intc)
    return colptr, r.astype(np.intc), slot


def mul(f, g, coef=1.0):
    terms = {}
    for a, x in f.items():
        for b, y in g.items():
            key = (min(a, b), max(a, b)) if a >= 0 and b >= 0 else (max(a, b), -1)
            terms[key] = terms.get(key, 0.0) + coef * x * y
    return terms


def assign_slots(blocks, n: int):
    """CSC pattern (n x n) of the distinct (row, col) pairs in ``blocks`` (lists of pairs or
    None) and, per block, the slot of each pair (-1 for None)."""
    pairs = sorted({p for block in blocks for p in block if p is not None})
    rows = np.array([p[0] for p in pairs], dtype=np.int64)
    cols = np.array([p[1] for p in pairs], dtype=np.int64)
    colptr, rowind, slot = _csc_pattern(rows, cols, n, n)
    slot_of = {p: int(slot[k]) for k, p in enumerate(pairs)}
    slots = np.array([-1 if p is None else slot_of[p] for block in blocks for p in block],
                     dtype=np.intc)
    return colptr, rowind, slots


def compile_rows(generic, nq: int, nc: int, rows: list, cols: list, row_names: list,
                 owners: list, hdiag=()):
    """Number the generic rows after the ``nc`` rows already made and fix the patterns.

    ``generic``: [(row name, owner, [(terms, time factor, law index)])], terms as
    {(a, b): coef} (see the generic-row helpers above). ``rows``/``cols``: the Jacobian
    entries of the rows before them (extended here); ``hdiag``: coordinates whose (i, i)
    Hessian entries those rows need. Returns (kernel arrays of the patterns and terms, row
    names, owners, nc, slot of each entry of ``rows``/``cols`` in the CSC values, Hessian
    slot of each ``hdiag`` entry). A row's terms are consecutive (the kernels sum each run
    of them as one compensated sum)."""
    nc0, t_row, t_a, t_b, t_tf, t_law, t_coef = nc, [], [], [], [], [], []
    for rname, owner, parts in generic:
        row_names.append(rname)
        owners.append(owner)
        for terms, tf, law in parts:
            law = max(law, 0)
            for (a, b), coef in terms.items():
                if coef != 0.0:
                    t_row.append(nc)
                    t_a.append(a)
                    t_b.append(b)
                    t_tf.append(tf)
                    t_law.append(law)
                    t_coef.append(coef)
        nc += 1
    ab = np.array([t_a, t_b], dtype=np.int64).T.reshape(-1, 2)     # (terms, 2)
    base = max(nq, 1)   # entries and pairs as the keys row * base + column
    term_rows = np.array(t_row, dtype=np.int64)
    # The rows' Jacobian entries (row, column), in the order the terms first name them.
    used = ab.ravel() >= 0
    keys = (np.repeat(term_rows, 2) * base + ab.ravel())[used].tolist()
    index = {key: k for k, key in enumerate(dict.fromkeys(keys))}   # first occurrences
    entries = np.fromiter(index, dtype=np.int64, count=len(index))
    before = len(rows)
    rows.extend((entries // base).tolist())
    cols.extend((entries % base).tolist())
    entry_index = np.fromiter((index[key] for key in keys), dtype=np.int64, count=len(keys))
    colptr, rowind, slot = _csc_pattern(np.asarray(rows, dtype=np.int64),
                                        np.asarray(cols, dtype=np.int64), nc, nq)
    term_slot = np.full(2 * len(term_rows), -1, dtype=np.intc)
    term_slot[used] = slot[before + entry_index]
    gen_slot = np.sort(slot[before:]).astype(np.intc)
    # Pattern of d/dq (Phi_q^T lam): the (i, i) of hdiag (or its pairs), and each quadratic
    # term's (a, b) and (b, a).
    hdiag = np.asarray(hdiag, dtype=np.int64)
    wanted = hdiag.reshape(-1, 2) if hdiag.ndim == 2 else np.repeat(hdiag, 2).reshape(-1, 2)
    quadratic = (ab[:, 0] >= 0) & (ab[:, 1] >= 0)
    pairs = np.concatenate([wanted, ab[quadratic], ab[quadratic, ::-1]])
    pair_keys = pairs[:, 0] * base + pairs[:, 1]
    hkeys = np.unique(pair_keys)        # sorted as the pairs (row, column) are
    hess_colptr, hess_rowind, hslot_all = _csc_pattern(hkeys // base, hkeys % base, nq, nq)
    pair_slot = hslot_all[np.searchsorted(hkeys, pair_keys)]
    hess_slot = pair_slot[:len(wanted)].astype(np.intc)
    term_hslot = np.full((len(term_rows), 2), -1, dtype=np.intc)
    term_hslot[quadratic] = pair_slot[len(wanted):].reshape(2, -1).T
    arrays = dict(
        phiq_colptr=colptr, phiq_rowind=rowind,
        hess_colptr=hess_colptr, hess_rowind=hess_rowind,
        gen_row=np.arange(nc0, nc, dtype=np.intc), gen_slot=gen_slot,
        term_row=term_rows.astype(np.intc), term_a=ab[:, 0].astype(np.intc),
        term_b=ab[:, 1].astype(np.intc), term_tf=np.array(t_tf, dtype=np.intc),
        term_law=np.array(t_law, dtype=np.intc),
        term_coef=np.array(t_coef, dtype=float),
        term_slot=term_slot, term_hslot=term_hslot.ravel())
    return arrays, row_names, owners, nc, slot, hess_slot


def force_arrays(desc, body_index, local_of, ground, add_law, nq: int, q0):
    """The kernels' force-element arrays of ``desc`` (the records of its force elements and
    contacts, see :mod:`linkdyn.elements.records`) with their Q_q and Q_v patterns:
    (arrays, info)."""
    recs, loads = _forces.force_records(desc, body_index, local_of, ground)
    contact_recs, *modes = contact_records(desc, body_index, local_of, ground, len(recs))
    contact_recs = (contact_recs + planar_stop_records(desc, body_index, local_of, ground)
                    + planar_clearance_records(desc, body_index, local_of, ground)
                    + _cams.planar_records(desc, body_index, local_of)
                    + _gears.planar_records(desc, body_index))
    friction_recs, joint_frictions = planar_joint_frictions(
        desc, body_index, local_of, ground, len(recs) + len(contact_recs))
    contact_recs += friction_recs
    modes[0] = tuple(modes[0]) + tuple(joint_frictions)
    farrays, finfo, fq_blocks, fv_blocks = compile_records(recs, loads, contact_recs, *modes,
                                                           add_law)
    nrec = finfo["nrec"]
    fq_colptr, fq_rowind, fq_slots = assign_slots(fq_blocks, nq)
    fv_colptr, fv_rowind, fv_slots = assign_slots(fv_blocks, nq)
    farrays["rec_slot_q"] = fq_slots[:64 * nrec]
    farrays["load_slot_q"] = fq_slots[64 * nrec:]
    farrays["rec_slot_v"] = fv_slots
    farrays["angle_ref0"] = reference_angles(farrays, q0)
    farrays.update(fq_colptr=fq_colptr, fq_rowind=fq_rowind, fv_colptr=fv_colptr,
                   fv_rowind=fv_rowind, **_cams.kernel_arrays(desc))
    return farrays, finfo


def law_arrays(laws) -> dict:
    """The kernels' law table (csrc/ld_laws.h) of ``laws``, in order."""
    law_kind, law_start, law_par = [], [0], []
    for law in laws:
        kind, params = law.compiled()
        law_kind.append(kind)
        law_par += params
        law_start.append(len(law_par))
    return dict(law_kind=np.array(law_kind, dtype=np.intc),
                law_start=np.array(law_start, dtype=np.intc),
                law_par=np.array(law_par, dtype=float))



