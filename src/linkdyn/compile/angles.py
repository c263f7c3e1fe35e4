"""Angle rows (the C row kind of ``csrc/ld_angles.h``): constraint rows in the angles of
bodies and the slides of joints, which gear pairs and racks compile to
(:mod:`linkdyn.elements.gears` says what each pair's row is; the coordinate families say
where its angles lie in q).

A row is ``scale * wrap(sum_k n_k f_k(q) - offset)``, each ``f_k`` either ``atan2(S, C)``
(kind 0) or ``S`` (kind 1), with ``S`` and ``C`` quadratic forms in q given as terms
``{(a, b): coef}`` (``b = -1``: linear, ``a = b = -1``: constant; see
:mod:`linkdyn.compile.patterns`). The offset is the sum in the initial guesses (plus the
row's ``shift``), so each row holds where the description puts its bodies.

Cam rows (:mod:`linkdyn.elements.cams`) add kinds 2 (a point's gap from a cam's curve, the
point's cam-frame coordinates being C and S) and 3 (minus a cam's support function at the
angle atan2(S, C)), each angle with the index of its cam in the model's cam table
(:func:`linkdyn.elements.cams.kernel_arrays`); such a row is ``absolute``: it holds where its sum is zero (its ``shift``), not relative to
the guesses, and it is not wrapped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["AngleRow", "AnglePlan", "plan_angle_rows"]


@dataclass(frozen=True)
class AngleRow:
    """One angle row: ``angles`` are (kind, n, S terms, C terms) (C empty for kind 1), a
    cam's angles (kinds 2, 3) with their cam's index as a fifth item; the row holds where the sum
    is ``shift`` beyond its value in the initial guesses (``absolute``: where it is
    ``shift``)."""

    name: str
    owner: str
    scale: float
    angles: tuple
    shift: float = 0.0
    absolute: bool = False


def _value(kind, S, C, q) -> float:
    def form(terms):
        return sum(c * (1.0 if a < 0 else q[a]) * (1.0 if b < 0 else q[b])
                   for (a, b), c in terms.items())

    return math.atan2(form(S), form(C)) if kind == 0 else form(S)


@dataclass
class AnglePlan:
    """The rows' numbering and pattern entries, and (once the slots are known) their kernel
    arrays."""

    rows: list          # the AngleRow of each row, in row order from ``first_row``
    first_row: int
    entry_rows: list    # their Phi_q entries (row, column), distinct
    entry_cols: list
    hess_pairs: np.ndarray   # (k, 2) Hessian entries the rows need: each angle's full block
    static: dict        # arrays that need no slot
    jentry: np.ndarray  # per angle coordinate, its index in the entries

    def arrays(self, entry_slot, hess_slot) -> dict:
        """The kernel arrays (csrc/ld_angles.h), given the Phi_q slot of each of the plan's
        entries and the Hessian slot of each of its pairs."""
        out = dict(self.static)
        out["ang_jslot"] = np.asarray(entry_slot, dtype=np.intc)[self.jentry]
        out["ang_hslot"] = np.asarray(hess_slot, dtype=np.intc)
        return out


def plan_angle_rows(rows, first_row: int, q0) -> AnglePlan | None:
    """Number ``rows`` (AngleRow) from ``first_row`` and lay out their arrays; None for no
    rows."""
    if not rows:
        return None
    entry_rows, entry_cols, jentry, hess = [], [], [], []
    a_first, kind, mult, var_start, var, hstart = [0], [], [], [0], [], [0]
    form_start, form_a, form_b, form_coef, offset = [0], [], [], [], []
    cam_of = []
    for r, row in enumerate(rows):
        at = {}         # this row's entries: column -> index
        total = 0.0
        for k, n, S, C, *curve in row.angles:
            cam_of.append(curve[0] if curve else -1)
            coords = sorted({c for (a, b) in (*S, *C) for c in (a, b) if c >= 0})
            local = {c: i for i, c in enumerate(coords)}
            for c in coords:
                if c not in at:
                    at[c] = len(entry_rows)
                    entry_rows.append(first_row + r)
                    entry_cols.append(c)
                jentry.append(at[c])
            hess += [(a, b) for a in coords for b in coords]
            for terms in (S, C):
                for (a, b), coef in terms.items():
                    if coef != 0.0:
                        form_a.append(local.get(a, -1))
                        form_b.append(local.get(b, -1))
                        form_coef.append(coef)
                form_start.append(len(form_a))
            kind.append(k)
            mult.append(float(n))
            var += coords
            var_start.append(len(var))
            hstart.append(hstart[-1] + len(coords) ** 2)
            if not row.absolute:
                f = n * _value(k, S, C, q0)
                total += math.remainder(f, 2.0 * math.pi) if k == 0 else f
        offset.append(total + row.shift)
        a_first.append(len(kind))
    ints = lambda x: np.asarray(x, dtype=np.intc)
    static = dict(ang_row=ints(range(first_row, first_row + len(rows))),
                  ang_scale=np.array([row.scale for row in rows], dtype=float),
                  ang_offset=np.array(offset, dtype=float), ang_first=ints(a_first),
                  ang_kind=ints(kind), ang_mult=np.array(mult, dtype=float),
                  ang_var_start=ints(var_start), ang_var=ints(var), ang_hstart=ints(hstart),
                  ang_form_start=ints(form_start), ang_form_a=ints(form_a),
                  ang_form_b=ints(form_b), ang_form_coef=np.array(form_coef, dtype=float),
                  ang_cam=ints(cam_of))
    return AnglePlan(list(rows), first_row, entry_rows, entry_cols,
                     np.array(hess, dtype=np.int64).reshape(-1, 2), static,
                     np.array(jentry, dtype=np.int64))
