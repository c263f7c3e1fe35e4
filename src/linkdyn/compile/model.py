"""Compiling a description into a frozen :class:`Model`.

Compiling numbers the coordinates (body i owns q[4i:4i+4] = x, y, ux, uy) and the constraint
rows (one unit-vector row per body in body order, then the revolute joints' rows, then the
prismatic joints' rows, then one row per driver, each group in description order), fixes the
CSC sparsity pattern of Phi_q once, and hands flat arrays to the kernels. Prismatic joints and
drivers are quadratic forms in these coordinates: they compile into the kernels' generic rows
(terms coef * g(t) * q_a * q_b, with g a driving law's 1, cos f, sin f or f).
Nothing after this point looks anything up by name.
"""

from __future__ import annotations

import math
import os

import numpy as np
import scipy.sparse as sp

from .._kernels import Kernels
from ..elements import forces as _forces
from ..elements.bodies import GROUND
from ..elements.contacts import contact_records
from ..elements.description import Description
from ..elements.description import save as save_description
from ..elements.joints import (AngleDriverSpec, CoordinateDriverSpec, PrismaticSpec,
                               RevoluteSpec, SlideDriverSpec)
from ..elements.records import compile_records, reference_angles
from ..errors import ModelError

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
        revolute rows, ``"<joint>.rotation"`` / ``"<joint>.axis"`` for prismatic rows and
        ``"<driver>"`` for driver rows.
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
        self.driver_names = names["drivers"]
        self.force_names = names["forces"]
        #: element name -> (record indices, load indices) in the force kernels' arrays;
        #: inputs: names of the elements a controller can drive, in input order.
        self.force_info = names["force_info"]
        self.coordinate_names = names["coordinates"]
        self.constraint_names = names["constraints"]
        self.constraint_owner = names["owners"]
        self.nbody = len(self.body_names)
        self.nq = len(arrays["mass"])
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

    def __reduce__(self):
        # A model travels as its description and is compiled again where it is unpickled
        # (the compiled kernels hold pointers that cannot cross processes).
        return (compile_model, (self.description,))

    def __repr__(self):
        return (f"<linkdyn.Model {self.name!r}: {self.nbody} bodies, {len(self.joint_names)} "
                f"joints, {self.nq} coordinates, {self.nc} constraints>")

    #: "planar" for models of bodies in the plane; the natural-coordinate models of
    #: :mod:`linkdyn.natural` are "spherical" or "spatial" (kinematics only).
    space = "planar"
    #: Components of a marker's position: 2 in the plane, 3 in natural-coordinate models.
    marker_dimension = 2

    @property
    def driver_laws(self) -> tuple:
        """(driver name, Law) of each driver, in row order."""
        return tuple((d.name, d.law) for d in self.description.drivers)

    def orientation_cosines(self, q, t: float = 0.0, state=None) -> np.ndarray:
        """Rows written as a sine (an angle driver: sin(angle - f); a prismatic joint's
        relative orientation) are also met half a turn away; their cosines, one per such row
        (angle drivers, then prismatic joints), are +1 at the intended configuration and -1
        at the flipped one. ``state``: a run's state holding Python-function law values."""
        q = np.asarray(q, dtype=float)
        index = {b: i for i, b in enumerate(self.body_names)}

        def u(ref_body):
            i = index.get(ref_body)
            return np.array([1.0, 0.0]) if i is None else q[4 * i + 2:4 * i + 4]

        joints = {j.name: j for j in self.description.joints}
        out = []
        for k, drv in enumerate(self.description.drivers):
            if not isinstance(drv, AngleDriverSpec):
                continue
            j = joints[drv.joint]
            u1, u2 = u(j.first[0]), u(j.second[0])
            f = (state.law_values[3 * k] if drv.law.is_function and state is not None
                 else drv.law(float(t))[0])
            dot, cross = u1 @ u2, u1[0] * u2[1] - u1[1] * u2[0]
            out.append(dot * math.cos(f) + cross * math.sin(f))
        for j in self.description.joints:
            if isinstance(j, PrismaticSpec):
                u1, u2 = u(j.first[0]), u(j.second[0])
                c, s_ = math.cos(j.angle), math.sin(j.angle)
                out.append((c * u1[0] - s_ * u1[1]) * u2[0] + (s_ * u1[0] + c * u1[1]) * u2[1])
        return np.array(out)

    @property
    def nominal_dof(self) -> int:
        """nq - nc: the degrees of freedom if every constraint row is independent."""
        return self.nq - self.nc

    # -- evaluation (Python edge of the kernels) -----------------------------------------
    def phi(self, q, t: float = 0.0, state=None) -> np.ndarray:
        """Constraint residuals Phi(q, t), shape (nc,). ``state``: a run's
        :class:`linkdyn._kernels.RunState` (values of laws given as Python functions), by
        default the model's own."""
        return self.kernels.phi(q, t, state=state)

    def phi_q(self, q, t: float = 0.0, state=None) -> sp.csc_matrix:
        """The constraint Jacobian as a SciPy CSC matrix (nc x nq) in the fixed pattern."""
        vals = self.kernels.phi_q_values(q, t, state=state)
        return sp.csc_matrix((vals, self.phiq_rowind, self.phiq_colptr),
                             shape=(self.nc, self.nq))

    def phi_t(self, q, t: float = 0.0, state=None) -> np.ndarray:
        return self.kernels.phi_t(q, t, state=state)

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

    def energy(self, q, v, t: float = 0.0) -> tuple[float, float]:
        """(kinetic, potential) energy in J: the potential of gravity (zero at y = 0) plus
        the energy stored in springs at time t (angles on the branch nearest to the initial
        guesses' relative angles)."""
        return self.kernels.kinetic_energy(v), self.kernels.potential_energy(q, t)

    def constraint_norms(self, q, v, t: float = 0.0, state=None) -> tuple[float, float]:
        """Euclidean norms of the position and velocity constraint violations:
        ``|Phi(q, t)|`` and ``|Phi_q v + Phi_t|``."""
        return self.kernels.constraint_norms(q, v, t, state=state)

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
        save_description(self.description, path)


# -- generic quadratic rows ---------------------------------------------------------------------
# A linear form in q is a dict {coordinate index: coefficient, -1: constant}. Products of two
# forms give the terms coef * q_a * q_b (a, b >= 0), coef * q_a (b = -1) and coef (a = b = -1)
# that the kernels evaluate, each with a time factor: 0 none, 1 cos f, 2 sin f, 3 f, 4 f^2.

def _point_form(body: int, local, ground_xy=None):
    if body < 0:
        return {-1: ground_xy[0]}, {-1: ground_xy[1]}
    xi, eta = local
    c = 4 * body
    return {c: 1.0, c + 2: xi, c + 3: -eta}, {c + 1: 1.0, c + 3: xi, c + 2: eta}


def _u_form(body: int):
    if body < 0:
        return {-1: 1.0}, {-1: 0.0}
    return {4 * body + 2: 1.0}, {4 * body + 3: 1.0}


def _comb(*pairs):
    """sum of coef * form."""
    out = {}
    for coef, form in pairs:
        for k, v in form.items():
            out[k] = out.get(k, 0.0) + coef * v
    return out


def _rotate(ux, uy, angle):
    c, s = math.cos(angle), math.sin(angle)
    return _comb((c, ux), (-s, uy)), _comb((s, ux), (c, uy))


def _mul(f, g, coef=1.0):
    terms = {}
    for a, x in f.items():
        for b, y in g.items():
            key = (min(a, b), max(a, b)) if a >= 0 and b >= 0 else (max(a, b), -1)
            terms[key] = terms.get(key, 0.0) + coef * x * y
    return terms


def _cross(a, b):
    t = _mul(a[0], b[1])
    for k, v in _mul(a[1], b[0], -1.0).items():
        t[k] = t.get(k, 0.0) + v
    return t


def _dot(a, b):
    t = _mul(a[0], b[0])
    for k, v in _mul(a[1], b[1]).items():
        t[k] = t.get(k, 0.0) + v
    return t


def _generic_rows(desc: Description, body_index, ground, armatures=()):
    """Rows of prismatic joints, drivers and rotor armatures: [(row name, owner, [(terms, tf,
    law)])], laws."""
    rows, laws = [], []

    def point(ref):
        b, p = ref
        if b == GROUND:
            return -1, _point_form(-1, None, ground[p])
        i = body_index[b]
        return i, _point_form(i, desc.bodies[i].local_points()[p])

    def prismatic_parts(j):
        i1, p1 = point(j.first)
        i2, p2 = point(j.second)
        u1, u2 = _u_form(i1), _u_form(i2)
        axis = _rotate(*u1, j.axis)
        d = (_comb((1.0, p2[0]), (-1.0, p1[0])), _comb((1.0, p2[1]), (-1.0, p1[1])))
        return u1, u2, axis, d

    joints = {j.name: j for j in desc.joints}
    for j in desc.joints:
        if isinstance(j, PrismaticSpec):
            u1, u2, axis, d = prismatic_parts(j)
            rows.append((f"{j.name}.rotation", j.name,
                         [(_cross(_rotate(*u1, j.angle), u2), 0, -1)]))
            rows.append((f"{j.name}.axis", j.name, [(_cross(axis, d), 0, -1)]))
    for drv in desc.drivers:
        law = len(laws)
        laws.append(drv.law)
        if isinstance(drv, AngleDriverSpec):
            j = joints[drv.joint]
            i1 = body_index.get(j.first[0], -1)
            i2 = body_index.get(j.second[0], -1)
            u1, u2 = _u_form(i1), _u_form(i2)
            neg_dot = {k: -v for k, v in _dot(u1, u2).items()}
            rows.append((drv.name, drv.name, [(_cross(u1, u2), 1, law), (neg_dot, 2, law)]))
        elif isinstance(drv, SlideDriverSpec):
            _, _, axis, d = prismatic_parts(joints[drv.joint])
            rows.append((drv.name, drv.name, [(_dot(axis, d), 0, -1), ({(-1, -1): -1.0}, 3, law)]))
        else:
            assert isinstance(drv, CoordinateDriverSpec)
            _, p = point(drv.point)
            lin = p[0] if drv.axis == "x" else p[1]
            terms = {((k, -1) if k >= 0 else (-1, -1)): v for k, v in lin.items()}
            rows.append((drv.name, drv.name, [(terms, 0, -1), ({(-1, -1): -1.0}, 3, law)]))
    for arm in armatures:
        # u_rotor = u2 conj(u1): x row uRx - u1.u2, y row uRy - u1 x u2 (bilinear).
        r = body_index[arm.rotor]
        u1 = _u_form(body_index.get(arm.body1, -1))
        u2 = _u_form(body_index.get(arm.body2, -1))
        for comp, form in ((2, _dot(u1, u2)), (3, _cross(u1, u2))):
            terms = {k: -v for k, v in form.items()}
            terms[(4 * r + comp, -1)] = terms.get((4 * r + comp, -1), 0.0) + 1.0
            rows.append((f"{arm.rotor}.{'x' if comp == 2 else 'y'}_turn", arm.owner,
                         [(terms, 0, -1)]))
    return rows, laws


def require_dynamic(model: Model, what: str) -> None:
    """Refuse the kinematic-only models of spherical and spatial linkages where dynamics is
    asked for (they have no masses, inertias or forces)."""
    if model.space != "planar":
        raise ModelError(f"{what}: model {model.name!r} is a {model.space} linkage in natural "
                         "coordinates, a kinematic description without masses or forces: "
                         "linkdyn.kinematics is its solver (dynamics of spherical and spatial "
                         "linkages is not available yet)", model.name)


def check_output_size(rows: int, row_values: int, what: str) -> None:
    """Refuse an output that would not fit: more than half the machine's memory (or 8 GiB
    where that is unknown), with the estimate and what to change."""
    size = 8.0 * rows * row_values
    try:
        limit = 0.5 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        limit = 8.0 * 2**30
    if size > limit:
        raise ValueError(f"{what}: {rows} output rows of {row_values} values need "
                         f"{size / 2**30:.3g} GiB, more than the {limit / 2**30:.3g} GiB allowed "
                         "(half of this machine's memory); ask for fewer output times")


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
    gen_row, term = [], dict(row=[], a=[], b=[], tf=[], law=[], coef=[])
    entry_of = {}  # (row, col) -> index into rows/cols
    for rname, owner, parts in generic:
        r = nc
        nc += 1
        gen_row.append(r)
        row_names.append(rname)
        owners.append(owner)
        for terms, tf, law in parts:
            for (a, b), coef in terms.items():
                if coef == 0.0:
                    continue
                for col in (a, b):
                    if col >= 0 and (r, col) not in entry_of:
                        entry_of[(r, col)] = len(rows)
                        rows.append(r)
                        cols.append(col)
                term["row"].append(r)
                term["a"].append(a)
                term["b"].append(b)
                term["tf"].append(tf)
                term["law"].append(max(law, 0))
                term["coef"].append(coef)
    colptr, rowind, slot = _csc_pattern(np.asarray(rows, dtype=np.int64),
                                        np.asarray(cols, dtype=np.int64), nc, nq)
    nterm = len(term["row"])
    term_slot = np.full((nterm, 2), -1, dtype=np.intc)
    for m in range(nterm):
        for s_, col in enumerate((term["a"][m], term["b"][m])):
            if col >= 0:
                term_slot[m, s_] = slot[entry_of[(term["row"][m], col)]]
    gen_slot = np.array(sorted({slot[e] for e in entry_of.values()}), dtype=np.intc)
    # Pattern of d/dq (Phi_q^T lam): the (i, i) of hdiag, and each quadratic term's (a, b)
    # and (b, a).
    hpairs = {(int(i), int(i)) for i in hdiag}
    for a, b in zip(term["a"], term["b"]):
        if a >= 0 and b >= 0:
            hpairs |= {(a, b), (b, a)}
    hlist = sorted(hpairs)
    hr = np.array([p[0] for p in hlist], dtype=np.int64)
    hc = np.array([p[1] for p in hlist], dtype=np.int64)
    hess_colptr, hess_rowind, hslot_all = _csc_pattern(hr, hc, nq, nq)
    hslot_of = {pair: hslot_all[k] for k, pair in enumerate(hlist)}
    hess_slot = np.array([hslot_of[(int(i), int(i))] for i in hdiag], dtype=np.intc)
    term_hslot = np.full((nterm, 2), -1, dtype=np.intc)
    for m, (a, b) in enumerate(zip(term["a"], term["b"])):
        if a >= 0 and b >= 0:
            term_hslot[m] = (hslot_of[(a, b)], hslot_of[(b, a)])
    arrays = dict(
        phiq_colptr=colptr, phiq_rowind=rowind,
        hess_colptr=hess_colptr, hess_rowind=hess_rowind,
        gen_row=np.array(gen_row, dtype=np.intc), gen_slot=gen_slot,
        term_row=np.array(term["row"], dtype=np.intc), term_a=np.array(term["a"], dtype=np.intc),
        term_b=np.array(term["b"], dtype=np.intc), term_tf=np.array(term["tf"], dtype=np.intc),
        term_law=np.array(term["law"], dtype=np.intc),
        term_coef=np.array(term["coef"], dtype=float),
        term_slot=term_slot.ravel(), term_hslot=term_hslot.ravel())
    return arrays, row_names, owners, nc, slot, hess_slot



def force_arrays(desc, body_index, local_of, ground, add_law, nq: int, q0):
    """The kernels' force-element arrays of ``desc`` (the records of its force elements and
    contacts, see :mod:`linkdyn.elements.records`) with their Q_q and Q_v patterns:
    (arrays, info)."""
    recs, loads = _forces.force_records(desc, body_index, local_of, ground)
    contact = contact_records(desc, body_index, local_of, ground, len(recs))
    farrays, finfo, fq_blocks, fv_blocks = compile_records(recs, loads, *contact, add_law)
    nrec = finfo["nrec"]
    fq_colptr, fq_rowind, fq_slots = assign_slots(fq_blocks, nq)
    fv_colptr, fv_rowind, fv_slots = assign_slots(fv_blocks, nq)
    farrays["rec_slot_q"] = fq_slots[:64 * nrec]
    farrays["load_slot_q"] = fq_slots[64 * nrec:]
    farrays["rec_slot_v"] = fv_slots
    farrays["angle_ref0"] = reference_angles(farrays, q0)
    farrays.update(fq_colptr=fq_colptr, fq_rowind=fq_rowind, fv_colptr=fv_colptr,
                   fv_rowind=fv_rowind)
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



def compile_model(desc: Description) -> Model:
    """Number coordinates and constraint rows, fix the sparsity pattern, build the kernels."""
    if not desc.bodies:
        raise ModelError(f"model {desc.name!r} has no bodies")
    user_desc = desc
    # Rotors of motors and flexible joints become bodies, pins and records of their own.
    desc, armatures = _forces.expand(desc)
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
    # Unit-vector rows: row k for the k-th body that has one (an armature's rotor has its
    # two turn rows instead), entries d/dux, d/duy.
    turned = {body_index[a.rotor] for a in armatures}
    unit_body = np.array([i for i in range(nbody) if i not in turned], dtype=np.intc)
    unit_row = np.arange(len(unit_body), dtype=np.intc)
    for k, i in enumerate(unit_body):
        row_names.append(f"{desc.bodies[i].name}.unit")
        owners.append(desc.bodies[i].name)
        rows += [k, k]
        cols += [4 * i + 2, 4 * i + 3]
    nc = len(unit_body)

    revolutes = [j for j in desc.joints if isinstance(j, RevoluteSpec)]
    nrev = len(revolutes)
    rev_body = np.full((nrev, 2), -1, dtype=np.intc)
    rev_local = np.zeros((nrev, 4))
    rev_row = np.empty(nrev, dtype=np.intc)
    rev_entry = np.full((nrev, 12), -1, dtype=np.int64)  # index into rows/cols lists
    for k, j in enumerate(revolutes):
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

    # Generic rows (prismatic joints, drivers): terms and their Jacobian entries.
    generic, laws = _generic_rows(desc, body_index, ground, armatures)
    hdiag = np.stack([4 * unit_body + 2, 4 * unit_body + 3], axis=1).ravel()
    garrays, row_names, owners, nc, slot, hess_slot = compile_rows(
        generic, nq, nc, rows, cols, row_names, owners, hdiag)

    def add_law(law):
        laws.append(law)
        return len(laws) - 1

    local_of = lambda i, p: desc.bodies[i].local_points()[p]  # noqa: E731
    farrays, finfo = force_arrays(desc, body_index, local_of, ground, add_law, nq, q0)
    unit_slot = slot[: 2 * len(unit_body)].reshape(len(unit_body), 2)
    rev_slot = np.where(rev_entry >= 0, slot[np.maximum(rev_entry, 0)], -1).astype(np.intc)

    marker_body = np.array([body_index[m.body] for m in desc.markers], dtype=np.intp)
    marker_local = np.array([desc.bodies[body_index[m.body]].local_points()[m.point]
                             for m in desc.markers], dtype=float).reshape(-1, 2)

    arrays = dict(**farrays,
        nc=nc, mass=mass, q_applied=q_applied,
        unit_row=unit_row, unit_body=unit_body, unit_slot=unit_slot.ravel(),
        unit_hslot=hess_slot,
        rev_body=rev_body.ravel(), rev_local=rev_local.ravel(), rev_row=rev_row,
        rev_slot=rev_slot.ravel(),
        **garrays, **law_arrays(laws),
        q0=q0, v0=v0, hold=hold, marker_body=marker_body, marker_local=marker_local,
    )
    names = dict(
        bodies=tuple(b.name for b in desc.bodies),
        joints=tuple(j.name for j in desc.joints),
        markers=tuple(m.name for m in desc.markers),
        drivers=tuple(d.name for d in desc.drivers),
        forces=tuple(f.name for f in desc.forces),
        force_info=finfo,
        coordinates=tuple(coord_names),
        constraints=tuple(row_names),
        owners=tuple(owners),
    )
    return Model(user_desc, arrays, names)
