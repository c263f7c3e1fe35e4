"""Coulomb friction of contacts: sliding, sticking, and the transitions between them.

A contact built with ``add_contact(..., friction=mu, static_friction=mu0)`` is at any time
in one of four modes::

    open      no penetration: no forces
    slide +1  slipping forward along the line (v_T > 0): friction -mu F_N
    slide -1  slipping backward: friction +mu F_N
    stick     at rest: the rolling coordinate s_T (its rate is the slip velocity v_T, see
              :mod:`linkdyn.contacts`) is held at its value c0 from the moment of sticking by
              a constraint row; the row's multiplier lam gives the friction force -lam

The modes change only at events the integrator locates (``csrc/ld_run.c``, no Python in
the step loop): a contact's onset and separation, a sliding contact whose v_T reaches zero
(``"<contact>/stop"``), a sticking contact whose friction reaches mu0 F_N
(``"<contact>/slip"``). At each such event (and at the start), every contact is classified
again: open if it does not penetrate; sliding in the direction of v_T if ``|v_T|`` exceeds its
``stick_velocity``; otherwise it is a candidate, and the candidates' modes are decided
together (both feet of a walker at once) by the linear complementarity problem of Pfeiffer
and Glocker for planar friction. With the friction forces F (along s_T) of the m candidates
and the tangential accelerations a = W F + w they cause (W, w from the index-1 equations of
the mechanism with the other contacts' forces), a = a+ - a-, reserves r+ = mu_b N + F and
r- = mu_b N - F:

    r+ = 2 mu_b N - r-                     a+ >= 0, r+ >= 0, a+ r+ = 0
    a- = a+ + W r- - (W mu_b N + w)        r- >= 0, a- >= 0, r- a- = 0

solved by Lemke's method (:func:`linkdyn.lcp.solve_lcp`). A candidate sticks when its
acceleration is zero, else slides in the direction of a. The bound mu_b is the static mu0
for contacts arriving at rest and the kinetic mu for contacts whose sticking force has just
reached mu0 F_N (they break away: the force needed to hold them exceeds what kinetic
friction gives). A contact that sticks has its velocity made exactly consistent (the
mass-weighted projection onto v_T = 0 with the mechanism's constraints: the plastic
tangential impulse of a contact slower than the stick velocity).

Contacts with a ``swing_partner`` (:mod:`linkdyn.contacts`) are switched off while they
swing and on again when clear ahead of the partner; that decision is taken at the same
events (and at the passing event), before the friction modes.

Closure. Every compliant contact (with friction or without) is also *open* or *closed*,
decided at the same events: closed where it penetrates. An open contact applies no force
whatever its penetration, so a step that carries a circle into its line integrates a smooth
motion (free flight) on which the onset is then located; the integration restarts there with
the contact closed. Were the force switched on by the penetration itself, as it is in the
stateless evaluation (``Model.force``, statics), the step across the onset would integrate a
right-hand side whose derivatives jump, which an error estimate does not see: a disk dropped
on a Hertz floor lost energy at its onset that did not fall with the tolerance (1.1e-7 J at
rtol 1e-10 against 1.6e-9 J at 1e-9), and on the walker such steps were a third of the
rejected ones. The separation needs no such care: a closed contact's force falls to zero
with its penetration. A contact at exactly zero penetration (a body placed on its floor, a
follower built on its cam) is closed unless it is moving apart: its penetration rises from
zero, not through it, so there is no onset to locate. Open and closed are not kept in
``result.friction_modes``.

Every mode change is kept in ``result.friction_modes`` as (t, contact, mode) with mode
"open", "slide+", "slide-" or "stick", and "swing" / "clear" where a swinging contact is
switched off / on again; ``result.friction_force(contact)`` is the friction force along the
line's direction on the circle, per output row.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import NonFiniteError
from .lcp import LCPError, solve_lcp

__all__ = ["stick_arrays", "gradient", "ContactModes", "MODE_NAMES", "OPEN", "STICK"]

OPEN, STICK = 0, 2
#: The gate of an open contact (csrc/ld_forces.h: no force, its events as when on).
OPEN_GATE = 2.0
MODE_NAMES = {0: "open", 1: "slide+", -1: "slide-", 2: "stick"}
#: Largest [M A^T; A 0] factorised densely: below it, assembling a sparse matrix costs more
#: than a dense LU (the walker: 21 rows, 0.05 ms against 1 ms per mode decision).
DENSE_KKT_MAX = 200
# LAPACK's LU, called directly: a walker decides its contacts' modes at some fifteen events
# a second, and SciPy's wrappers around these calls cost more than the 21-row LU itself.
_getrf, _getrs = sla.lapack.dgetrf, sla.lapack.dgetrs


def coordinate_components(model) -> np.ndarray:
    """The connected component (nq,) of each coordinate in the graph the constraint rows
    make (two coordinates are joined when a row involves both): bodies in different
    components move independently of each other's constraint forces."""
    from scipy.sparse.csgraph import connected_components

    nq, nc = model.nq, model.nc
    rows, cols = np.asarray(model.phiq_rowind), np.asarray(model.phiq_colind)
    # the bipartite graph of coordinates (0 .. nq-1) and rows (nq .. nq+nc-1)
    graph = sp.coo_matrix((np.ones(rows.size), (cols, nq + rows)), shape=(nq + nc,) * 2)
    _, labels = connected_components(graph, directed=False)
    return labels[:nq]


def coupled_groups(component, grads) -> list:
    """Indices of the contacts (by their gradients) in groups that share a component of
    the mechanism, directly or through a contact that spans two; in their order."""
    parent = {}

    def find(c):
        while parent.setdefault(c, c) != c:
            c = parent[c]
        return c

    keys = []
    for G in grads:
        touched = np.unique(component[np.flatnonzero(G)]).tolist() or [-1 - len(keys)]
        root = find(touched[0])
        for c in touched[1:]:
            parent[find(c)] = root
        keys.append(touched[0])
    groups = {}
    for i, key in enumerate(keys):
        groups.setdefault(find(key), []).append(i)
    return list(groups.values())


def kkt_solver(mass, A):
    """A solve with [M A^T; A 0] (M = diag(mass), A sparse or dense): ``solve(b)``. Dense
    LU for small mechanisms, SuperLU otherwise; both raise ``RuntimeError`` on an exactly
    singular matrix."""
    nq = mass.size
    n = nq + A.shape[0]
    if n <= DENSE_KKT_MAX:
        K = np.zeros((n, n), order="F")
        K[np.arange(nq), np.arange(nq)] = mass
        a = A.toarray() if sp.issparse(A) else A
        K[nq:, :nq] = a
        K[:nq, nq:] = a.T
        lu, piv, info = _getrf(K, overwrite_a=True)
        if info != 0:
            raise RuntimeError("Factor is exactly singular")

        def solve(b):
            x, _ = _getrs(lu, piv, b)
            return x
        return solve
    A = sp.csc_matrix(A)
    return spla.splu(sp.bmat([[sp.diags(mass), A.T], [A, None]], format="csc")).solve


def gradient(state, record, q, v):
    """(grad s (nq,), v^T H v) of force record ``record``'s coordinate at (q, v), on the
    branch of run state ``state``: s'' = grad s . q'' + v^T H v."""
    _, idx, g, vhv = state.coordinate_derivs(record, q, v)
    G = np.zeros(q.shape[0])
    on = idx >= 0
    np.add.at(G, idx[on], g[on])
    return G, vhv


def stick_arrays(model) -> dict:
    """The run system's patterns with one stick row per contact with friction: the model's
    Phi_q and Hessian patterns merged with the rows' local blocks, and the maps that scatter
    the model's values into them (``RunState.enable_stick_rows``)."""
    k = model.kernels
    a = k.arrays
    nq, nc = k.nq, k.nc
    body = a["rec_body"].reshape(-1, 2)
    frictions = model.force_info["frictions"]
    ns = len(frictions)

    stride = k.body_stride                    # coordinates per body: 4 planar, 12 spatial
    view = a.get("body_view")                 # spatial: each body's 12 (-1: a rod's absent)
    width = 2 * stride

    def local_index(r):
        out = []
        for i in range(width):
            b = int(body[r][i // stride])
            out.append(-1 if b < 0 else
                       int(view[stride * b + i % stride]) if view is not None else
                       stride * b + i % stride)
        return out

    # Phi_q: the model's entries keep their rows; stick row k is row nc + k.
    cols = list(np.repeat(np.arange(nq), np.diff(a["phiq_colptr"])))
    rows = list(a["phiq_rowind"])
    src = list(range(len(rows)))
    nbase = len(rows)
    for s, f in enumerate(frictions):
        for i, gi in enumerate(local_index(f[1])):
            if gi >= 0:
                cols.append(gi)
                rows.append(nc + s)
                src.append(nbase + width * s + i)
    order = np.lexsort((np.array(rows), np.array(cols)))
    slot = np.full(nbase + width * ns, -1, dtype=np.intc)
    slot[np.array(src)[order]] = np.arange(len(order), dtype=np.intc)
    phiq_colptr = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=nq))])
    phiq_rowind = np.array(rows)[order]

    # Hessian: the union of the model's entries and each row's local block.
    hcols = np.repeat(np.arange(nq), np.diff(a["hess_colptr"]))
    keys = {(int(c), int(r)) for c, r in zip(hcols, a["hess_rowind"])}
    blocks = []
    for f in frictions:
        idx = local_index(f[1])
        blk = [((gj, gi) if gi >= 0 and gj >= 0 else None) for gi in idx for gj in idx]
        keys.update(e for e in blk if e is not None)
        blocks.append(blk)
    sorted_keys = sorted(keys)
    where = {key: n for n, key in enumerate(sorted_keys)}
    hess_colptr = np.concatenate([[0], np.cumsum(np.bincount(
        [c for c, _ in sorted_keys], minlength=nq))]) if sorted_keys else np.zeros(nq + 1)
    hess_rowind = np.array([r for _, r in sorted_keys], dtype=np.intc)
    base_hess_map = np.array([where[(int(c), int(r))] for c, r in zip(hcols, a["hess_rowind"])],
                             dtype=np.intc)
    stick_hslot = np.array([(-1 if e is None else where[e]) for blk in blocks for e in blk],
                           dtype=np.intc)
    return dict(stick_rec=np.array([f[1] for f in frictions], dtype=np.intc),
                stick_slot=slot[nbase:], stick_hslot=stick_hslot,
                base_phiq_map=slot[:nbase], base_hess_map=base_hess_map,
                phiq_colptr=phiq_colptr, phiq_rowind=phiq_rowind,
                hess_colptr=hess_colptr, hess_rowind=hess_rowind)


class ContactModes:
    """The modes of one run's contacts with friction or a swing partner (module notes): owns
    the decisions at events; the modes themselves live in the run's state (sliding
    directions, gates of swinging contacts, active stick rows and their c0) where the
    kernels read them."""

    def __init__(self, model, run, swinging=(), t0=0.0):
        self.model = model
        self.run = run
        self.frictions = model.force_info["frictions"]
        self.swings = model.force_info["swings"]
        self.history = []          # (t, contact name, mode name)
        self.row_changes = []      # (first output row, "slip" | "gate", record, value)
        self.names = [f[0] for f in self.frictions]
        self.mode = np.zeros(len(self.frictions), dtype=int)
        self.arcs = model.force_info.get("arcs", ())
        self.off_arc = np.zeros(len(self.arcs), dtype=bool)
        self.swinging = np.array([w[0] in swinging for w in self.swings], dtype=bool)
        # Compliant contacts closed at the last decision (module notes, "Closure"); all
        # closed until the first decision, as the stateless force evaluation has them.
        self.contacts = tuple(c[0] for c in model.force_info.get("contacts", ()))
        self.closed = dict.fromkeys(self.contacts, True)
        for k, w in enumerate(self.swings):
            if self.swinging[k]:
                self.history.append((float(t0), w[0], "swing"))
                self._update_gate(w[1], 0)
        self.decisions = 0         # LCPs solved
        if self.frictions:
            run.enable_stick_rows(stick_arrays(model))
        # Phi_q's entries: (row, column) of each value in the fixed pattern
        self._jrows = np.asarray(model.phiq_rowind)
        self._jcols = model.phiq_colind
        self._component = coordinate_components(model)

    @property
    def nstick(self) -> int:
        return len(self.frictions)

    def _state_terms(self, t, q, v):
        """Normal forces, penetrations and slip velocities of the contacts."""
        rec, depth = self._penetrations(t, q, v)
        normal = np.array([f[2] for f in self.frictions])
        fric = np.array([f[1] for f in self.frictions])
        # A joint's friction (no normal record, -1) is always closed, with its own bound
        # (its mu, mu0 are the limits themselves: F_N = 1).
        joint = normal < 0
        return (np.where(joint, 1.0, rec[normal, 2]),
                np.where(joint, 1.0, depth[normal]), rec[fric, 1])

    def _penetrations(self, t, q, v):
        """The force records' values at (t, q, v) and each record's penetration, its law's
        onset (parameter 3) less its coordinate: positive where a contact would press."""
        rec, _ = self.model.kernels.force_values(q, v, t, self.run)
        onset = self.model.kernels.arrays["rec_law_par"].reshape(-1, 4)[:, 3]
        return rec, onset - rec[:, 0]

    def decide(self, t, q, v, breaking=(), row=0, crossed=None):
        """Classify every contact at the state (t, q, v) (module notes) and set the run's
        modes; ``breaking`` names the contacts whose sticking force reached its limit,
        ``row`` is the first output row the new modes apply to, ``crossed`` maps the contact
        records whose onset (+1) or separation (-1) just fired to its direction. Returns the
        velocities to restart from (projected when a contact sticks)."""
        nc = self.model.nc
        run = self.run
        if self.contacts:
            self._decide_closure(t, q, v, row, crossed or {})
        if self.swings:
            self._decide_swings(t, q, v, row)
        if self.arcs:
            self._decide_arcs(t, q, row)
        if not self.frictions:
            return v
        fn, depth, vt = self._state_terms(t, q, v)
        new = np.zeros_like(self.mode)
        cand = []
        for k, f in enumerate(self.frictions):
            if not depth[k] > 0.0 or (f[2] >= 0 and run.gate[f[2]] == 0.0):
                new[k] = OPEN
            elif abs(vt[k]) > f[5]:
                new[k] = 1 if vt[k] > 0 else -1
            else:
                cand.append(k)
        # Candidates feel no sliding friction while W and w are formed; stick rows off.
        for k, f in enumerate(self.frictions):
            run.slip[f[1]] = new[k] if new[k] in (1, -1) else 0.0
        run.row_active[nc:] = 0
        if cand:
            self._decide_candidates(t, q, v, cand, fn, breaking, new)
        velocity = v
        for k, f in enumerate(self.frictions):
            run.slip[f[1]] = new[k] if new[k] in (1, -1) else 0.0
            if new[k] == STICK:
                s, _, _, _ = run.coordinate_derivs(f[1], q, v)
                run.stick_c0[k] = s
                run.row_active[nc + k] = 1
            if new[k] != self.mode[k]:
                self.history.append((float(t), f[0], MODE_NAMES[int(new[k])]))
                self.row_changes.append((row, "slip", f[1],
                                         float(new[k]) if new[k] in (1, -1) else 0.0))
        self.mode = new
        if np.any(new == STICK):
            velocity = self._project(t, q, v)
        return velocity

    def _decide_swings(self, t, q, v, row):
        """Switch swinging contacts off and on (linkdyn.contacts, swinging feet)."""
        _, depth = self._penetrations(t, q, v)

        def along(x, body, local, angle):   # x = q: position along the line; v: its rate
            xb = x[4 * body:4 * body + 4]
            px = xb[0] + local[0] * xb[2] - local[1] * xb[3]
            py = xb[1] + local[0] * xb[3] + local[1] * xb[2]
            return px * np.cos(angle) + py * np.sin(angle)

        for k, (name, r, _, rp, b, loc, bp, locp, angle) in enumerate(self.swings):
            clear = not depth[r] > 0.0
            partner_down = depth[rp] > 0.0 and self.run.gate[rp] != 0.0
            ahead = along(q, b, loc, angle) > along(q, bp, locp, angle)
            forward = along(v, b, loc, angle) > along(v, bp, locp, angle)
            if not self.swinging[k] and clear and partner_down and not ahead and forward:
                self.swinging[k] = True
            elif self.swinging[k] and ((clear and ahead) or not forward):
                self.swinging[k] = False
            else:
                continue
            self.history.append((float(t), name, "swing" if self.swinging[k] else "clear"))
            self._update_gate(r, row)

    def _decide_closure(self, t, q, v, row, crossed):
        """Open the contacts that do not penetrate, close those that do (module notes); a
        contact whose onset or separation fired is closed or opened by it (its penetration
        at the event is the event function's, within rounding of zero)."""
        rec, depth = self._penetrations(t, q, v)
        sense = self.model.kernels.arrays["rec_law_sense"]
        for r in self.contacts:
            # Exactly touching (a body placed on its floor, a follower on its cam): closed
            # unless it is moving apart; it presses from zero on, and its onset would not be
            # seen, the penetration rising from zero and not through it.
            pressing = sense[r] * depth[r]
            closed = crossed[r] > 0 if r in crossed else \
                bool(pressing > 0.0 or (pressing == 0.0 and sense[r] * rec[r, 1] <= 0.0))
            if closed != self.closed[r]:
                self.closed[r] = closed
                self._update_gate(r, row)

    def switched_off(self, record) -> bool:
        """Whether contact record ``record`` is off for a reason other than being open: it
        swings, or its direction is off its arc (its circle may pass through its line)."""
        return any(self.swinging[k] for k, w in enumerate(self.swings) if w[1] == record) or \
            any(self.off_arc[k] for k, a in enumerate(self.arcs) if a[1] == record)

    def _decide_arcs(self, t, q, row):
        """Switch arcs off while the contact direction is outside them (linkdyn.contacts)."""
        for k, (name, r, b, a_min, a_max, (nx, ny)) in enumerate(self.arcs):
            ux, uy = q[4 * b + 2], q[4 * b + 3]
            psi = np.arctan2(-ux * ny + uy * nx, -ux * nx - uy * ny)   # -n from u
            off = not (np.sin(psi - a_min) > 0.0 and np.sin(a_max - psi) > 0.0)
            if off != self.off_arc[k]:
                self.off_arc[k] = off
                self.history.append((float(t), name, "off arc" if off else "on arc"))
                self._update_gate(r, row)

    def _update_gate(self, record, row):
        """A contact record's gate (csrc/ld_forces.h): 0 (off) while it swings or its
        direction is off its arc, 2 while it is open, else 1. Only 0 gates the events of a
        swinging contact (its "back")."""
        value = 0.0 if self.switched_off(record) else \
            (1.0 if self.closed.get(record, True) else OPEN_GATE)
        if self.run.gate[record] != value:
            self.run.gate[record] = value
            self.row_changes.append((row, "gate", record, value))

    def _jacobian(self, t, q, v=None):
        """Phi_q at q, dense for a small mechanism (what kkt_solver factorises densely) and
        sparse otherwise; with ``v``, (Phi_q, Phi_q v)."""
        m = self.model
        if m.nq + m.nc > DENSE_KKT_MAX:
            J = m.phi_q(q, t, self.run)
            return J if v is None else (J, J @ v)
        vals = m.kernels.phi_q_values(q, t, state=self.run)
        J = np.zeros((m.nc, m.nq))
        J[self._jrows, self._jcols] = vals
        if v is None:
            return J
        # summed entry by entry in the pattern's order, as the sparse product does
        return J, np.bincount(self._jrows, vals * v[self._jcols], minlength=m.nc)

    def _index1(self, t, q):
        """A solve with the index-1 matrix [M Phi_q^T; Phi_q 0] of the mechanism at q."""
        return kkt_solver(self.model.kernels.arrays["mass"], self._jacobian(t, q))

    def _decide_candidates(self, t, q, v, cand, fn, breaking, new):
        """The modes of the candidate contacts from the LCP of their tangential
        accelerations, one LCP for each group of contacts the mechanism couples (contacts on
        bodies that no joint connects do not act on each other's accelerations: W is block
        diagonal, and solving the blocks apart makes the cost grow with the contacts, not
        with their cube)."""
        m = self.model
        nq = m.nq
        solve = self._index1(t, q)
        grads = []
        curv = []
        for k in cand:
            G, vhv = gradient(self.run, self.frictions[k][1], q, v)
            grads.append(G)
            curv.append(vhv)
        rhs = np.concatenate([m.kernels.force(q, v, t, state=self.run),
                              m.kernels.gamma(q, v, t, state=self.run)])
        a0 = solve(rhs)[:nq]
        w = np.array([G @ a0 + c for G, c in zip(grads, curv)])
        for group in coupled_groups(self._component, grads):
            self._decide_group(t, [cand[i] for i in group], [grads[i] for i in group],
                               w[group], solve, fn, breaking, new)

    def _decide_group(self, t, cand, grads, w, solve, fn, breaking, new):
        """One coupled group's LCP (see _decide_candidates)."""
        m = self.model
        nq = m.nq
        nm = len(cand)
        W = np.zeros((nm, nm))
        for j, Gj in enumerate(grads):
            aj = solve(np.concatenate([Gj, np.zeros(m.nc)]))[:nq]
            W[:, j] = [Gi @ aj for Gi in grads]
        W = 0.5 * (W + W.T)
        bound = np.array([(self.frictions[k][3] if self.frictions[k][0] in breaking
                           else self.frictions[k][4]) * max(fn[k], 0.0) for k in cand])
        eye = np.eye(nm)
        Mlcp = np.zeros((2 * nm, 2 * nm))
        Mlcp[:nm, nm:] = -eye
        Mlcp[nm:, :nm] = eye
        Mlcp[nm:, nm:] = W
        qlcp = np.concatenate([2.0 * bound, -(W @ bound + w)])
        if not (np.all(np.isfinite(Mlcp)) and np.all(np.isfinite(qlcp))):
            names = [self.frictions[k][0] for k in cand]
            raise NonFiniteError(f"model {m.name!r}: the contact forces of "
                                 f"{', '.join(repr(n) for n in names)} are not finite at "
                                 f"t = {t:.9g} s (the state or the contact law overflowed): the "
                                 "stick-slip decision cannot be made", float(t), 0.0, None,
                                 names)
        self.decisions += 1
        try:
            z = solve_lcp(Mlcp, qlcp).z
            force = bound - z[nm:]
        except LCPError:
            # The problem has a solution for positive semi-definite W (Lemke may still end
            # on a ray on degenerate data): fall back to each contact alone.
            force = np.clip(-w / np.maximum(np.diag(W), 1e-300), -bound, bound)
        acc = W @ force + w
        scale = max(1.0, np.max(np.abs(w)), np.max(np.abs(W @ bound)) if nm else 0.0)
        for i, k in enumerate(cand):
            if abs(acc[i]) > 1e-9 * scale or force[i] != force[i]:
                new[k] = 1 if acc[i] > 0 else -1
            elif bound[i] > 0 and abs(force[i]) >= bound[i] * (1.0 - 1e-9):
                # At the friction limit with no acceleration: it slides the way the
                # force needed to hold it says (friction opposes the motion).
                new[k] = -1 if force[i] > 0 else 1
            else:
                new[k] = STICK

    def _project(self, t, q, v):
        """Mass-weighted projection of v onto the mechanism's velocity constraints and
        v_T = 0 of the sticking contacts."""
        m = self.model
        J, Jv = self._jacobian(t, q, v)
        rows = [gradient(self.run, f[1], q, v)[0] for k, f in enumerate(self.frictions)
                if self.mode[k] == STICK]
        rhs = np.concatenate([-(Jv + m.phi_t(q, t, self.run)), [-(G @ v) for G in rows]])
        if m.nq + m.nc + len(rows) <= DENSE_KKT_MAX:
            A = np.vstack([J] + [G[None, :] for G in rows])   # J is dense here (_jacobian)
        else:
            A = sp.vstack([sp.csc_matrix(J)] + [sp.csr_matrix(G) for G in rows], format="csc")
        sol = kkt_solver(m.kernels.arrays["mass"], A)(np.concatenate([np.zeros(m.nq), rhs]))
        return v + sol[:m.nq]
