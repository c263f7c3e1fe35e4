"""Compiling a description into a frozen :class:`Model`.

Compiling numbers the coordinates (body i owns q[4i:4i+4] = x, y, ux, uy) and the constraint
rows (first one unit-vector row per body, in body order, then each joint's rows in joint
order), fixes the CSC sparsity pattern of Phi_q once, and hands flat arrays to the kernels.
Nothing after this point looks anything up by name.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._kernels import Kernels
from .description import GROUND, Description
from .errors import ModelError

__all__ = ["Model", "compile_model", "COORDINATES"]

#: Names of a body's four coordinates, in storage order.
COORDINATES = ("x", "y", "ux", "uy")


def _csc_pattern(rows: np.ndarray, cols: np.ndarray, nrows: int, ncols: int):
    """CSC pattern of the given (row, col) entries and, for each entry, its position (slot)
    in the CSC value array. Entries must be distinct."""
    order = np.lexsort((rows, cols))
    r, c = rows[order], cols[order]
    if len(r) > 1 and np.any((np.diff(r) == 0) & (np.diff(c) == 0)):
        raise AssertionError("duplicate Jacobian entry in the compiled pattern")
    colptr = np.zeros(ncols + 1, dtype=np.intc)
    np.cumsum(np.bincount(c, minlength=ncols), out=colptr[1:])
    slot = np.empty(len(order), dtype=np.intc)
    slot[order] = np.arange(len(order), dtype=np.intc)
    return colptr, r.astype(np.intc), slot


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class Model:
    """A compiled, immutable planar multibody model.

    Attributes
    ----------
    description : Description
        The validated description it was compiled from (``Model`` equality compares these).
    body_names, joint_names, marker_names : tuple of str
    nq, nc : int
        Number of coordinates (4 per body) and of constraint rows.
    coordinate_names : tuple of str
        ``"<body>.<x|y|ux|uy>"`` for each coordinate.
    constraint_names : tuple of str
        ``"<body>.unit"`` for unit-vector rows, ``"<joint>.x"`` / ``"<joint>.y"`` for
        revolute rows.
    mass : ndarray (nq,)
        Diagonal of the constant mass matrix, diag(m, m, Jz, Jz) per body.
    q0, v0 : ndarray (nq,)
        Initial guesses from the description (not yet consistent).
    hold : ndarray of bool (nq,)
        Coordinates the initial projection keeps fixed (bodies marked ``hold``).
    kernels : linkdyn._kernels.Kernels
        The compiled kernels (Phi, Phi_q values, gamma, Q, energies).
    """

    def __init__(self, description: Description, arrays: dict, names: dict):
        self.description = description
        self.name = description.name
        self.body_names = names["bodies"]
        self.joint_names = names["joints"]
        self.marker_names = names["markers"]
        self.coordinate_names = names["coordinates"]
        self.constraint_names = names["constraints"]
        self.constraint_owner = names["owners"]
        self.nbody = len(self.body_names)
        self.nq = 4 * self.nbody
        self.nc = int(arrays["nc"])
        self.kernels = Kernels(arrays)
        self.mass = self.kernels.arrays["mass"]
        self.phiq_colptr = self.kernels.arrays["phiq_colptr"]
        self.phiq_rowind = self.kernels.arrays["phiq_rowind"]
        self.q0 = _readonly(arrays["q0"])
        self.v0 = _readonly(arrays["v0"])
        self.hold = _readonly(arrays["hold"])
        self.marker_body = _readonly(arrays["marker_body"])
        self.marker_local = _readonly(arrays["marker_local"])

    # -- identity ------------------------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, Model):
            return NotImplemented
        return self.description == other.description

    __hash__ = None

    def __repr__(self):
        return (f"<linkdyn.Model {self.name!r}: {self.nbody} bodies, {len(self.joint_names)} "
                f"joints, {self.nq} coordinates, {self.nc} constraints>")

    @property
    def nominal_dof(self) -> int:
        """nq - nc: the degrees of freedom if every constraint row is independent."""
        return self.nq - self.nc

    # -- evaluation (Python edge of the kernels) -----------------------------------------
    def phi(self, q, t: float = 0.0) -> np.ndarray:
        """Constraint residuals Phi(q, t), shape (nc,)."""
        return self.kernels.phi(q, t)

    def phi_q(self, q, t: float = 0.0) -> sp.csc_matrix:
        """The constraint Jacobian as a SciPy CSC matrix (nc x nq) in the fixed pattern."""
        vals = self.kernels.phi_q_values(q, t)
        return sp.csc_matrix((vals, self.phiq_rowind, self.phiq_colptr),
                             shape=(self.nc, self.nq))

    def phi_t(self, q, t: float = 0.0) -> np.ndarray:
        return self.kernels.phi_t(q, t)

    def gamma(self, q, v, t: float = 0.0) -> np.ndarray:
        """gamma = Phi_q qdd: -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt, shape (nc,)."""
        return self.kernels.gamma(q, v, t)

    def force(self, q, v, t: float = 0.0) -> np.ndarray:
        """Generalised applied forces Q(q, v, t), shape (nq,)."""
        return self.kernels.force(q, v, t)

    def _nq_by_nq(self, vals, pattern: str) -> sp.csc_matrix:
        a = self.kernels.arrays
        return sp.csc_matrix((vals, a[f"{pattern}_rowind"], a[f"{pattern}_colptr"]),
                             shape=(self.nq, self.nq))

    def force_q(self, q, v, t: float = 0.0) -> sp.csc_matrix:
        """dQ/dq (nq x nq, CSC)."""
        return self._nq_by_nq(self.kernels.force_q_values(q, v, t), "fq")

    def force_v(self, q, v, t: float = 0.0) -> sp.csc_matrix:
        """dQ/dv (nq x nq, CSC)."""
        return self._nq_by_nq(self.kernels.force_v_values(q, v, t), "fv")

    def constraint_hessian(self, q, lam, t: float = 0.0) -> sp.csc_matrix:
        """d/dq (Phi_q^T lam) (nq x nq, CSC): constraint second derivatives weighted by the
        multipliers ``lam`` (nc,)."""
        return self._nq_by_nq(self.kernels.phi_qq_lam_values(q, lam, t), "hess")

    def energy(self, q, v) -> tuple[float, float]:
        """(kinetic, potential) energy in J; the potential is zero at y = 0."""
        return self.kernels.kinetic_energy(v), self.kernels.potential_energy(q)

    def constraint_norms(self, q, v, t: float = 0.0) -> tuple[float, float]:
        """Euclidean norms of the position and velocity constraint violations:
        ``|Phi(q, t)|`` and ``|Phi_q v + Phi_t|``."""
        return self.kernels.constraint_norms(q, v, t)

    def marker_index(self, name: str) -> int:
        try:
            return self.marker_names.index(name)
        except ValueError:
            raise KeyError(f"model {self.name!r} has no marker {name!r} (markers: "
                           f"{', '.join(self.marker_names) or 'none'})") from None

    def marker_positions(self, q) -> np.ndarray:
        """Global positions of all markers: q of shape (..., nq) -> (..., nmarkers, 2)."""
        return self._markers_linear(q)

    def marker_velocities(self, v) -> np.ndarray:
        """Marker velocities from v of shape (..., nq) -> (..., nmarkers, 2); likewise
        accelerations from qdd."""
        return self._markers_linear(v)

    def _markers_linear(self, z) -> np.ndarray:
        # r + xi u + eta perp(u) is linear in (r, u): one map serves q, v and qdd.
        z = np.asarray(z, dtype=float)
        zb = z.reshape(z.shape[:-1] + (self.nbody, 4))[..., self.marker_body, :]
        xi, eta = self.marker_local[:, 0], self.marker_local[:, 1]
        x = zb[..., 0] + xi * zb[..., 2] - eta * zb[..., 3]
        y = zb[..., 1] + xi * zb[..., 3] + eta * zb[..., 2]
        return np.stack([x, y], axis=-1)

    # -- files -----------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the model description to a JSON model file (see :mod:`linkdyn.modelfile`)."""
        from .modelfile import save

        save(self.description, path)


def compile_model(desc: Description) -> Model:
    """Number coordinates and constraint rows, fix the sparsity pattern, build the kernels."""
    if not desc.bodies:
        raise ModelError(f"model {desc.name!r} has no bodies")
    body_index = {b.name: i for i, b in enumerate(desc.bodies)}
    nbody = len(desc.bodies)
    nq = 4 * nbody
    ground = dict(desc.ground)

    mass = np.empty(nq)
    q_applied = np.zeros(nq)
    q0 = np.empty(nq)
    v0 = np.empty(nq)
    hold = np.zeros(nq, dtype=bool)
    coord_names, row_names, owners = [], [], []
    for i, b in enumerate(desc.bodies):
        m, jz = b.resolved_mass(), b.resolved_inertia()
        mass[4 * i:4 * i + 4] = (m, m, jz, jz)
        q_applied[4 * i:4 * i + 2] = (m * desc.gravity[0], m * desc.gravity[1])
        q0[4 * i:4 * i + 4] = (*b.position, *b.u)
        v0[4 * i:4 * i + 4] = (*b.velocity, *b.ud)
        hold[4 * i:4 * i + 4] = b.hold
        coord_names += [f"{b.name}.{c}" for c in COORDINATES]

    rows, cols = [], []
    # Unit-vector rows: row i, entries d/dux, d/duy of body i.
    unit_row = np.arange(nbody, dtype=np.intc)
    for i, b in enumerate(desc.bodies):
        row_names.append(f"{b.name}.unit")
        owners.append(b.name)
        rows += [i, i]
        cols += [4 * i + 2, 4 * i + 3]
    nc = nbody

    nrev = len(desc.joints)
    rev_body = np.full((nrev, 2), -1, dtype=np.intc)
    rev_local = np.zeros((nrev, 4))
    rev_row = np.empty(nrev, dtype=np.intc)
    rev_entry = np.full((nrev, 12), -1, dtype=np.int64)  # index into rows/cols lists
    for k, j in enumerate(desc.joints):
        rev_row[k] = nc
        row_names += [f"{j.name}.x", f"{j.name}.y"]
        owners += [j.name, j.name]
        for s, (bname, pname) in enumerate((j.first, j.second)):
            if bname == GROUND:
                rev_local[k, 2 * s:2 * s + 2] = ground[pname]
                continue
            bi = body_index[bname]
            rev_body[k, s] = bi
            rev_local[k, 2 * s:2 * s + 2] = desc.bodies[bi].local_points()[pname]
            c = 4 * bi
            for e, (r, col) in enumerate(((nc, c), (nc, c + 2), (nc, c + 3),
                                          (nc + 1, c + 1), (nc + 1, c + 2), (nc + 1, c + 3))):
                rev_entry[k, 6 * s + e] = len(rows)
                rows.append(r)
                cols.append(col)
        nc += 2

    colptr, rowind, slot = _csc_pattern(np.asarray(rows, dtype=np.int64),
                                        np.asarray(cols, dtype=np.int64), nc, nq)
    # Pattern of d/dq (Phi_q^T lam): the unit-vector rows' (ux, ux) and (uy, uy) entries.
    hdiag = np.stack([4 * np.arange(nbody) + 2, 4 * np.arange(nbody) + 3], axis=1).ravel()
    hess_colptr, hess_rowind, hess_slot = _csc_pattern(hdiag, hdiag, nq, nq)
    unit_slot = slot[: 2 * nbody].reshape(nbody, 2)
    rev_slot = np.where(rev_entry >= 0, slot[np.maximum(rev_entry, 0)], -1).astype(np.intc)

    marker_body = np.array([body_index[m.body] for m in desc.markers], dtype=np.intp)
    marker_local = np.array([desc.bodies[body_index[m.body]].local_points()[m.point]
                             for m in desc.markers], dtype=float).reshape(-1, 2)

    empty_colptr = np.zeros(nq + 1, dtype=np.intc)
    arrays = dict(
        nc=nc, mass=mass, q_applied=q_applied,
        unit_row=unit_row, unit_slot=unit_slot.ravel(), unit_hslot=hess_slot,
        rev_body=rev_body.ravel(), rev_local=rev_local.ravel(), rev_row=rev_row,
        rev_slot=rev_slot.ravel(),
        phiq_colptr=colptr, phiq_rowind=rowind,
        fq_colptr=empty_colptr, fq_rowind=np.zeros(0, dtype=np.intc),
        fv_colptr=empty_colptr, fv_rowind=np.zeros(0, dtype=np.intc),
        hess_colptr=hess_colptr, hess_rowind=hess_rowind,
        q0=q0, v0=v0, hold=hold, marker_body=marker_body, marker_local=marker_local,
    )
    names = dict(
        bodies=tuple(b.name for b in desc.bodies),
        joints=tuple(j.name for j in desc.joints),
        markers=tuple(m.name for m in desc.markers),
        coordinates=tuple(coord_names),
        constraints=tuple(row_names),
        owners=tuple(owners),
    )
    return Model(desc, arrays, names)
