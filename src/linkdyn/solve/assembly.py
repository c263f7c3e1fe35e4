"""Consistent initial states: project guessed positions and velocities onto the constraints.

Positions: Newton iterations on Phi(q, t) = 0, each taking the smallest correction in the
mass-weighted norm (masses and inertias; where they span more than WEIGHT_SPREAD = 1e4, the
lightest weights are raised to 1e-4 of the heaviest, so that extreme units do not make a
full-rank Jacobian look rank-deficient),

    min 1/2 dq^T M dq   subject to   Phi + Phi_q dq = 0   (held coordinates fixed),

that is ``dq = -M^-1 Phi_q^T (Phi_q M^-1 Phi_q^T)^-1 Phi`` restricted to the free coordinates.
Velocities: the same projection of v onto ``Phi_q v = -Phi_t``. The symmetric positive-definite
matrix ``A A^T`` with ``A = Phi_q M^-1/2`` is factorised by CHOLMOD (scikit-sparse, the optional
extra ``linkdyn[cholmod]``): the symbolic analysis once, numeric refactorisations after. Without
scikit-sparse (or with LINKDYN_NO_CHOLMOD=1 in the environment) SciPy's SuperLU factorises
``A A^T`` instead: the same results, somewhat slower on large models (see benchmarks/).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

try:  # CHOLMOD through scikit-sparse is optional: pip install "linkdyn[cholmod]"
    from sksparse.cholmod import (CholmodNotPositiveDefiniteError, CholmodOutOfMemoryError,
                                  analyze_AAt)
    _OUT_OF_MEMORY = (MemoryError, CholmodOutOfMemoryError)
except ImportError:  # pragma: no cover - exercised where scikit-sparse is absent
    analyze_AAt = None
    _OUT_OF_MEMORY = (MemoryError,)

from ..models import as_model
from ..compile.model import (COORDINATES, Model, checked_count, checked_positive, checked_time,
                             check_normal_fill, memory_limit)
from ..elements.bodies import GROUND
from .._kernels import RunState
from ..errors import (ArgumentError, ArgumentTypeError, AssemblyError, ModelError, ModelWarning,
                      OutOfMemoryError, RedundantConstraintsError, name_list)

__all__ = ["ConsistentState", "consistent_state", "hold_mask", "spd_backend"]


def spd_backend() -> str:
    """``"cholmod"`` when scikit-sparse is importable and not disabled by the environment
    variable LINKDYN_NO_CHOLMOD=1, else ``"superlu"`` (SciPy)."""
    if analyze_AAt is not None and os.environ.get("LINKDYN_NO_CHOLMOD", "") in ("", "0"):
        return "cholmod"
    return "superlu"


class _RankLoss(Exception):
    """The factorised A A^T is singular to working precision."""


class _CholmodAAt:
    """A A^T factorised by CHOLMOD: symbolic analysis once, numeric refactorisations."""

    def __init__(self):
        self.factor = None
        self.pattern = None

    def factorize(self, A, beta=0.0):
        # The analysis holds for one pattern of A. Entries that were exactly zero at the last
        # state (a bar along an axis) and are not now change it: analyse again (a factorisation
        # on a stale analysis is correct but grows its factor entry by entry: 12 s instead of
        # 3 ms for an 8,000-coordinate linkage).
        pattern = (A.indptr, A.indices)
        if self.factor is not None and not (
                np.array_equal(pattern[0], self.pattern[0]) and
                np.array_equal(pattern[1], self.pattern[1])):
            self.factor = None
        try:
            if self.factor is None:
                self.factor = analyze_AAt(A)
                self.pattern = (A.indptr.copy(), A.indices.copy())
            self.factor.cholesky_AAt_inplace(A, beta=beta)
            pivots = self.factor.D()
        except CholmodNotPositiveDefiniteError:
            self.factor = None
            raise _RankLoss from None
        return pivots

    def solve(self, b):
        return self.factor(b)


class _SuperluAAt:
    """A A^T factorised by SciPy's SuperLU (no pivoting needed: the matrix is SPD)."""

    def __init__(self):
        self.lu = None

    def factorize(self, A, beta=0.0):
        AAt = (A @ A.T).tocsc()
        if beta:
            AAt = (AAt + beta * sp.identity(AAt.shape[0], format="csc")).tocsc()
        try:
            self.lu = spla.splu(AAt, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                                options=dict(SymmetricMode=True))
        except RuntimeError:  # "Factor is exactly singular"
            raise _RankLoss from None
        return np.abs(self.lu.U.diagonal())

    def solve(self, b):
        return self.lu.solve(b)

# Pivots of the factorisation of A A^T (A = Phi_q M^-1/2) scale like squared singular values
# of A: a pivot below 1e-12 of the largest means A has a singular value below ~1e-6 of its
# largest, and the projection would amplify residuals a millionfold: treat it as rank loss.
# (Measured: exact redundancy gives ~1e-14, the Jansen linkage 5e-4.)
_RANK_RTOL = 1e-12
#: Largest ratio of the weights of two coordinates in the projections.
WEIGHT_SPREAD = 1e4
# Singular values of M^-1/2-scaled Phi_q below this fraction of the largest count as zero when
# diagnosing which constraints are redundant.
_SVD_RTOL = 1e-9
# With redundant="allow": A A^T (rows of unit norm, so unit diagonal) + _TIKHONOV I is
# factorised instead; repeated corrections (Newton, refinement) converge to the least-norm
# correction, the redundant rows' share of it at the rate _TIKHONOV / sigma^2 per iteration.
_TIKHONOV = 1e-10
#: Plain Newton steps tried after the regularised ones ran out of iterations (in
#: consistent_state): where the redundant rows are independent at the last iterate.
RETRY_ITERATIONS = 5
#: Values of the ``redundant`` argument of consistent_state, simulate and kinematics.
REDUNDANT_MODES = ("raise", "allow")


def check_redundant(redundant) -> bool:
    """True for ``"allow"``, False for ``"raise"``; ValueError otherwise."""
    if not isinstance(redundant, str) or redundant not in REDUNDANT_MODES:
        raise ArgumentError(f"redundant must be 'raise' or 'allow', got {redundant!r}")
    return redundant == "allow"


@dataclass(frozen=True)
class ConsistentState:
    """Positions and velocities that satisfy the constraints at time ``t``.

    ``phi_norm`` = ``|Phi(q, t)|`` and ``velocity_norm`` = ``|Phi_q v + Phi_t|`` (Euclidean norms);
    ``iterations`` counts the Newton iterations of the position projection."""

    t: float
    q: np.ndarray
    v: np.ndarray
    iterations: int
    phi_norm: float
    velocity_norm: float


def hold_mask(model: Model, hold) -> np.ndarray:
    """Boolean mask (nq,) of held coordinates. ``hold`` is None (the bodies marked ``hold``
    in the model), or an iterable of body names (all four coordinates) and
    ``"body.coordinate"`` strings (coordinate one of x, y, ux, uy)."""
    if hold is None:
        return model.hold.copy()
    if isinstance(hold, str):
        hold = [hold]
    if not isinstance(hold, (list, tuple, set, frozenset)):
        raise ModelError(f"hold: expected body names or 'body.coordinate' strings, got {hold!r}")
    mask = np.zeros(model.nq, dtype=bool)
    for item in hold:
        if not isinstance(item, str):
            raise ModelError(f"hold: expected body names or 'body.coordinate' strings, got "
                             f"{item!r}")
        body, _, coord = item.partition(".")
        if body not in model.body_names:
            raise ModelError(f"hold: unknown body '{body}' (bodies: "
                             f"{name_list(model.body_names)})", body)
        base = 4 * model.body_names.index(body)
        if not coord:
            mask[base:base + 4] = True
        elif coord in COORDINATES:
            mask[base + COORDINATES.index(coord)] = True
        else:
            raise ModelError(f"hold: '{item}': coordinate must be one of "
                             f"{', '.join(COORDINATES)}", body)
    return mask


def _vector(model: Model, x, default, what: str) -> np.ndarray:
    if x is None:
        return np.array(default, dtype=float)
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"{what} must be an array of {model.nq} numbers, got {x!r}") \
            from None
    if arr.shape != (model.nq,):
        raise ArgumentError(f"{what} must have shape ({model.nq},), got {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ArgumentError(f"{what}: coordinate '{model.coordinate_names[bad[0]]}' is not finite "
                            f"({float(arr[bad[0]])!r})")
    return arr


class _Projector:
    """Mass-weighted least-norm corrections for the rows that touch free coordinates."""

    def __init__(self, model: Model, free: np.ndarray, t: float, state=None,
                 allow_redundant: bool = False):
        self.model = model
        self.allow_redundant = allow_redundant
        self.regularised = False
        self.t = checked_time(t)
        self.state = state
        self.free = np.flatnonzero(free)
        # The metric: the masses and inertias, their spread limited to WEIGHT_SPREAD (a
        # body of 1e15 kg next to an inertia of 1 kg m^2 would make the weighted Jacobian
        # look rank-deficient to working precision although Phi_q is not).
        w = model.mass[self.free]
        if w.size:
            w = np.maximum(w, w.max() / WEIGHT_SPREAD)
        self.scale = 1.0 / np.sqrt(w)
        # Rows with a structural entry in a free column (the pattern, not the values).
        col_of_entry = np.repeat(np.arange(model.nq), np.diff(model.phiq_colptr))
        touched = np.zeros(model.nc, dtype=bool)
        touched[model.phiq_rowind[free[col_of_entry]]] = True
        self.active = np.flatnonzero(touched)
        self.fixed_rows = np.flatnonzero(~touched)
        self.spd = _CholmodAAt() if spd_backend() == "cholmod" else _SuperluAAt()
        # The pattern's entries in the free columns (every one in an active row), renumbered
        # to the active rows and free columns: the scaled Jacobian is gathered from the
        # kernels' values in that order (column by column, rows ascending), without SciPy's
        # indexing and products, which were most of a small model's assembly.
        self._entries = np.flatnonzero(free[col_of_entry])
        row_index = np.cumsum(touched) - 1
        col_index = np.cumsum(free) - 1
        self._rows = row_index[model.phiq_rowind[self._entries]].astype(np.int32)
        self._cols = col_index[col_of_entry[self._entries]]
        self._entry_scale = self.scale[self._cols]

    def scaled_jacobian(self, q) -> sp.csc_matrix:
        """Phi_q of the active rows and free columns times M^-1/2, its exact zeros left out
        (their pattern is the one the factorisation analyses)."""
        model = self.model
        vals = model.kernels.phi_q_values(q, self.t, state=self.state)
        data = vals[self._entries] * self._entry_scale
        keep = data != 0.0
        indptr = np.zeros(self.free.size + 1, dtype=np.int32)
        np.cumsum(np.bincount(self._cols[keep], minlength=self.free.size), out=indptr[1:])
        return sp.csc_matrix((data[keep], self._rows[keep], indptr),
                             shape=(self.active.size, self.free.size))

    def factorize(self, A: sp.csc_matrix) -> None:
        # Rows scaled to unit norm: the rank test must not depend on the units of the
        # constraints or on the sizes of masses and inertias (a pendulum of 1e11 kg was
        # reported redundant without it); the scaling does not change the projection.
        norms = np.sqrt(np.bincount(A.indices, weights=A.data * A.data,
                                    minlength=A.shape[0]))
        self.row_scale = 1.0 / np.where(norms > 0, norms, 1.0)
        B = sp.csc_matrix((A.data * self.row_scale[A.indices], A.indices, A.indptr),
                          shape=A.shape)
        if self.regularised:
            self.spd.factorize(B, _TIKHONOV)
            return
        try:
            d = self.spd.factorize(B)
            lost = d.size and d.min() <= _RANK_RTOL * d.max()
        except _RankLoss:
            lost = True
        if lost:
            if not self.allow_redundant:
                self._raise_rank(B)
            self.regularised = True
            self.spd = type(self.spd)()
            self.spd.factorize(B, _TIKHONOV)

    def _left_null(self, B: np.ndarray):
        """(rank, left null basis, names of the rows in it, most involved first) of the
        row-scaled Jacobian B of the active rows (dense SVD, diagnosis only)."""
        u, sv, _ = np.linalg.svd(B, full_matrices=True)
        rank = int(np.sum(sv > _SVD_RTOL * (sv[0] if sv.size else 1.0)))
        left_null = u[:, rank:]
        weight = np.sqrt(np.sum(left_null**2, axis=1))
        involved = np.flatnonzero(weight > 1e-6)
        involved = involved[np.argsort(-weight[involved])]
        return rank, left_null, [self.model.constraint_names[self.active[i]] for i in involved]

    def raise_conflict(self, A: sp.csc_matrix, residual: np.ndarray, what: str):
        """Redundant rows whose residuals disagree: name them. Where no combination of the
        rows is redundant at the last iterate (they were where the iteration started: a
        redundant set made independent on the way, e.g. a parallelogram whose pivots moved
        apart, which then holds in one position only), name the rows with the largest
        residuals instead."""
        rank, left_null, names = self._left_null((sp.diags(self.row_scale) @ A).toarray())
        scaled = self.row_scale * residual
        if not names:
            worst = np.argsort(-np.abs(scaled))[:4]
            worst = [i for i in worst if scaled[i] != 0.0] or list(worst[:1])
            names = [self.model.constraint_names[self.active[i]] for i in worst]
            text = ", ".join(f"{n} = {residual[i]:.3g}" for n, i in zip(names, worst))
            raise RedundantConstraintsError(
                f"model {self.model.name!r}: the {what} cannot be met near the guess "
                f"(largest residuals {text}), and no redundant constraints conflict there: "
                f"the Jacobian of the "
                f"{len(self.active)} rows has rank {rank} at the last iterate, so the rows "
                "that were redundant at the start are no longer (an overconstrained linkage "
                "whose dimensions lost its special geometry holds in isolated positions "
                "only, if any); check the dimensions, the guess and the held coordinates",
                names)
        mismatch = float(np.linalg.norm(left_null.T @ scaled))
        raise RedundantConstraintsError(
            f"model {self.model.name!r}: the redundant constraints conflict: their {what} "
            f"cannot all hold (a combination of them is off by {mismatch:.3g}); constraints "
            f"involved: {', '.join(names)}", names)

    def _raise_rank(self, A: sp.csc_matrix):
        rank, _, names = self._left_null(A.toarray())
        raise RedundantConstraintsError(
            f"model {self.model.name!r}: the constraints are redundant or conflicting at this "
            f"configuration (Jacobian rank {rank} of {len(self.active)} rows on the free "
            f"coordinates). If the mechanism moves all the same (an overconstrained one such "
            "as Bricard's linkage, whose Grubler count is below its mobility), pass "
            "redundant=\"allow\" (the command: --redundant allow) and the redundant rows are "
            "handled by regularisation. Constraints involved, most first: "
            f"{short_list(names)}", names)

    def correction(self, A: sp.csc_matrix, rhs: np.ndarray) -> np.ndarray:
        """The free-coordinate correction dz minimising dz^T M dz with J dz = rhs."""
        y = self.row_scale * self.spd.solve(self.row_scale * rhs)
        return self.scale * (A.T @ y)


#: Largest model (coordinates) that gets a dense singular-value diagnosis of a failure.
DIAGNOSIS_MAX_COORDINATES = 2000


def nearly_singular_rows(model: Model, q, t, state=None, threshold: float = np.inf):
    """Diagnosis of a singular configuration: (reciprocal condition, rows) of the
    mass-scaled Phi_q with unit rows at q, the rows those of its smallest singular value
    (weight above 1e-3 of the largest), drivers first, or () when the condition is at least
    ``threshold``. (None, ()) for models over DIAGNOSIS_MAX_COORDINATES (a dense SVD) or
    when Phi_q cannot be evaluated there."""
    if model.nq > DIAGNOSIS_MAX_COORDINATES or model.nc == 0 or not np.all(np.isfinite(q)):
        return None, ()
    try:
        J = model.phi_q(q, t, state).toarray() / np.sqrt(model.mass)
    except Exception:  # noqa: BLE001 - a diagnosis must not hide the original failure
        return None, ()
    norms = np.linalg.norm(J, axis=1)
    rows = np.flatnonzero(norms > 0)
    u, sv, _ = np.linalg.svd(J[rows] / norms[rows, None], full_matrices=False)
    rc = float(sv[-1] / sv[0]) if sv.size and sv[0] > 0 else 0.0
    if rc >= threshold:
        return rc, ()
    w = np.abs(u[:, -1])
    names = [model.constraint_names[rows[i]] for i in np.argsort(-w) if w[i] > 1e-3 * w.max()]
    names.sort(key=lambda n: n not in model.driver_names)
    return rc, tuple(names)


#: How many names a message lists before it says how many more there are.
MESSAGE_NAMES = 6


def short_list(names, limit: int = MESSAGE_NAMES) -> str:
    """Names for a message: the first ``limit``, then how many more (the exception's
    ``constraints`` attribute has them all)."""
    names = list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return (f"{', '.join(names[:limit])} and {len(names) - limit} more (the error's "
            "constraints attribute lists them all)")


def describe_rows(model: Model, rows) -> str:
    """Constraint rows for a message, by element: drivers, then joints (their x/y or
    rotation/axis rows together), then the bodies whose unit vectors are involved."""
    drivers, joints, units, other = [], [], [], []
    for r in rows:
        base, _, part = r.rpartition(".")
        if r in model.driver_names:
            drivers.append(r)
        elif base in model.joint_names and part in ("x", "y", "rotation", "axis"):
            if base not in joints:
                joints.append(base)
        elif part == "unit" and base in model.body_names:
            units.append(base)
        else:
            other.append(r)
    parts = []
    if drivers:
        parts.append(f"driver{'s' if len(drivers) > 1 else ''} {', '.join(drivers)}")
    if joints:
        parts.append(f"joint{'s' if len(joints) > 1 else ''} {', '.join(joints)}")
    if units:
        parts.append(f"the unit vector{'s' if len(units) > 1 else ''} of {', '.join(units)}")
    parts += other
    return "; ".join(parts)


def _loop_hint(model: Model, q, t, state, phi, tol) -> str:
    """Which bodies and joints could not be assembled: the elements of the rows still
    violated, and the bodies they touch (a loop too short or too long to close)."""
    try:
        bad = np.flatnonzero(np.abs(np.nan_to_num(phi, nan=np.inf)) > max(tol, 1e-9))
        if not bad.size:
            return ""
        J = model.phi_q(np.nan_to_num(q), t, state).tocsr()
        cols = np.unique(J[bad].indices)
        bodies = sorted({model.body_names[c // 4] for c in cols},
                        key=model.body_names.index)
        body_set = set(bodies)
        joints = []
        for j in model.description.joints:
            ends = {j.first[0], j.second[0]} - {GROUND}
            if ends and ends <= body_set:
                joints.append(j.name)
    except Exception:  # noqa: BLE001 - a hint must not hide the original failure
        return ""
    if not bodies:
        return ""
    return (f": the bodies {', '.join(bodies)} with the joints {', '.join(joints) or 'none'} "
            "cannot be assembled as described (a loop whose links are too short or too long "
            "to close, or a guess too far from any configuration)")


def _warn_far_start(model, guess, q) -> None:
    """A ModelWarning when the projection moved a body's centre farther than the
    mechanism's size (``model.body_size``, its bodies end to end): the guesses were probably
    not meant (a point mistyped, a body placed far off), and the run starts where the
    projection landed."""
    if not model.nbody:   # (a spherical or spatial linkage of points has no bodies)
        return
    cols = model.body_position_columns
    moved = np.sqrt(np.sum((q[cols] - guess[cols]) ** 2, axis=1))
    worst = int(np.argmax(moved))
    size = model.body_size
    if moved[worst] > max(size, 1e-9):
        warnings.warn(f"model {model.name!r}: the consistent state is {moved[worst]:.3g} m "
                      f"from the guess of body {model.body_names[worst]!r}, more than the "
                      f"size of the mechanism ({size:.3g} m, its bodies end to end): check "
                      "the initial positions; the run starts where the projection landed",
                      ModelWarning, stacklevel=3)


def _check_state(state) -> None:
    if state is not None and not isinstance(state, RunState):
        raise ArgumentTypeError(f"state must be a run's state (model.kernels.run_state()) or "
                                f"None, got {type(state).__name__}")


def _own_scale(model, q, t, state, phi, tol):
    """(each row's rounding noise, the rows within ``tol`` or four times their noise). Each
    row is held to its own scale besides the norm test: a unit vector's row is
    dimensionless and not excused by coordinates far from the origin (a body 1e16 m out was
    returned with |u|^2 - 1 = 2 by the norm test alone)."""
    noise = row_roundoff(model, q, t, state)
    return noise, np.abs(phi) <= np.maximum(tol, 4 * noise)


def residual_roundoff(model: Model, q, t: float, state=None, ord=2) -> float:
    """The norm (``ord`` 2 or numpy.inf) below which Phi(q, t) is rounding noise: each row
    is a sum of terms as large as its |Phi_q| |q| (a squared distance |p1 - p2|^2 - L^2 has
    terms of the coordinates' size squared), and its computed value errs by some
    (entries + 1) eps times that. Newton cannot take a residual below it (the compiled
    kinematic sweep's test, ``KinematicSweep._roundoff_floor``, is the same in the max
    norm)."""
    return float(np.linalg.norm(row_roundoff(model, q, t, state), ord))


def row_roundoff(model: Model, q, t: float, state=None) -> np.ndarray:
    """Each row's rounding noise (nc,): (entries + 1) eps (|Phi_q| |q|)_i, the size of the
    row's own terms (a unit-vector row's are of order 1 wherever the body is; a joint's
    rows are of its points' coordinates), entries the most any row has. See
    :func:`residual_roundoff`."""
    rows = model.phiq_rowind
    if rows.size == 0:
        return np.zeros(model.nc)
    vals = model.kernels.phi_q_values(q, checked_time(t), state=state)
    terms = np.bincount(rows, np.abs(vals) * np.abs(q)[model.phiq_colind],
                        minlength=model.nc)
    return (model.phiq_row_entries + 1) * np.finfo(float).eps * terms


def _worst_rows(names, res, rows, count=5) -> tuple:
    """(names, "name (residual), ...") of the ``count`` rows among ``rows`` with the
    largest residuals."""
    order = rows[np.argsort(-np.abs(res[rows]))][:count]
    return [names[r] for r in order], ", ".join(f"{names[r]} ({res[r]:.3g})" for r in order)


def _check_held_rows(model, phi, fixed_rows, held, tol) -> None:
    """AssemblyError naming the rows on held coordinates only (which cannot be corrected)
    that do not hold, and the held bodies or the drivers that cause it."""
    bad = fixed_rows[np.abs(phi[fixed_rows]) > tol]
    if not bad.size:
        return
    rows, text = _worst_rows(model.constraint_names, phi, bad)
    held_bodies = [b for k, b in enumerate(model.body_names) if held[4 * k:4 * k + 4].all()]
    drivers = [r for r in rows if r in model.driver_names]
    what = (f"driver{'s' if len(drivers) > 1 else ''} {', '.join(map(repr, drivers))} "
            "cannot move held bodies: start the law at the held configuration or release "
            "the hold" if drivers else "these constraints cannot be met without moving "
            "held bodies")
    raise AssemblyError(f"model {model.name!r}: constraints conflict with the held bodies "
                        f"{', '.join(map(repr, held_bodies))} (residuals: {text}); {what}",
                        rows)


def consistent_state(model: Model, q=None, v=None, t: float = 0.0, hold=None,
                     tol: float = 1e-13, max_iterations: int = 30,
                     state=None, redundant: str = "raise") -> ConsistentState:
    """Project guesses of q and v onto the position and velocity constraints.

    Parameters
    ----------
    model : Model
    q, v : array_like (nq,), optional
        Guesses; default the model's initial values ``model.q0``, ``model.v0``.
    t : float
        Time at which the constraints are evaluated.
    hold : None or iterable of str
        Coordinates kept fixed (see :func:`hold_mask`); default the bodies marked ``hold``.
    tol : float
        Required Euclidean norm of Phi (in the model's length units), raised to the round-off
        level of the residual, ``4 eps sqrt(nc) max(1, |q|_max)``, where that is larger (large
        models far from the origin), and met as well where Newton's steps no longer cut a
        residual within the rounding of its rows' terms (:func:`residual_roundoff`: squared
        distances in coordinates of some 10 m or 10,000 mm round above ``tol``); the velocity
        constraints are met to round-off by a refined linear solve.
    max_iterations : int
        Newton iterations allowed for the positions.
    state : linkdyn._kernels.RunState, optional
        A run's state, for models whose laws are Python functions (their values at t);
        default the model's own.
    redundant : {"raise", "allow"}
        What to do when the Jacobian loses rank. ``"raise"`` (default):
        :class:`RedundantConstraintsError`. ``"allow"``: redundant but consistent constraints
        (a parallelogram with a third rocker) are accepted; the projections become
        least-norm ones (Tikhonov-regularised normal equations, refined by the iterations),
        and constraints that contradict each other still raise RedundantConstraintsError
        naming them.

    Raises
    ------
    AssemblyError
        No configuration within ``tol`` was reached near the guess (names the rows with the
        largest residuals), or a constraint involving only held coordinates is violated.
    RedundantConstraintsError
        The Jacobian lost rank (with ``redundant="raise"``), or redundant constraints conflict:
        the message names the constraints involved.
    OutOfMemoryError
        The projection's factorisation does not fit in the memory this process may use.
    """
    model = as_model(model)
    check_normal_fill(model, "consistent_state")
    try:
        return _project(model, q, v, t, hold, tol, max_iterations, state, redundant)
    except _OUT_OF_MEMORY as exc:
        if isinstance(exc, OutOfMemoryError):
            raise
        raise OutOfMemoryError(f"consistent_state: the projection of model {model.name!r} "
                               f"({model.nq} coordinates, {model.nc} rows) does not fit in "
                               f"the memory this process may use (about "
                               f"{memory_limit() / 2**30:.3g} GiB)") from None


def _project(model, q, v, t, hold, tol, max_iterations, state, redundant) -> ConsistentState:
    """consistent_state's work, on a model already resolved."""
    allow = check_redundant(redundant)
    t = checked_time(t)
    checked_positive("tol", tol)
    checked_count("max_iterations", max_iterations)
    _check_state(state)
    q = _vector(model, q, model.q0, "q")
    guess = q.copy()
    v = _vector(model, v, model.v0, "v")
    held = hold_mask(model, hold)
    proj = _Projector(model, ~held, t, state, allow)
    names = model.constraint_names

    # Rows on held coordinates only cannot be corrected: they must already hold.
    phi = model.phi(q, t, state)
    _check_held_rows(model, phi, proj.fixed_rows, held, tol)

    iterations = 0
    polished = retried = False
    phi0 = np.linalg.norm(phi)
    previous = np.inf
    eps = np.finfo(float).eps
    row_tol = tol
    tol = max(tol, 4 * eps * np.sqrt(model.nc) * max(1.0, np.max(np.abs(q))))
    while True:
        norm = np.linalg.norm(phi)
        scale = (_own_scale(model, q, t, state, phi, row_tol)   # where a stop test needs it
                 if norm <= tol or norm > 0.5 * previous else None)
        own = scale is not None and bool(scale[1].all())
        if not np.isfinite(norm) or norm > 1e6 * max(phi0, 1.0):
            rows, text = _worst_rows(names, np.nan_to_num(phi, nan=np.inf), proj.active)
            raise AssemblyError(f"model {model.name!r}: Newton diverged while assembling "
                                f"(|Phi| = {norm:.3g})"
                                f"{_loop_hint(model, q, t, state, phi, tol)}; largest "
                                f"residuals: {text}", rows)
        if norm <= tol and own:
            if polished or iterations >= max_iterations:
                break        # (within tol on the last iteration allowed: the polish is moot)
            polished = True  # one more iteration takes the residual to round-off
        elif norm > 0.5 * previous and own and norm <= float(np.linalg.norm(scale[0])):
            break            # Newton no longer cuts a residual that is rounding noise
        previous = norm
        if iterations >= max_iterations and proj.regularised and not retried:
            # Regularised steps converge at the rate _TIKHONOV / sigma^2: slowly where the
            # rows that were redundant at the guess are independent here but nearly
            # dependent (a parallelogram whose pivots moved 1e-3 apart: the residual crept
            # at 1e-12). Plain Newton steps from here, unless the rank is lost again.
            retried, max_iterations = True, max_iterations + RETRY_ITERATIONS
            proj.regularised = False
            proj.spd = type(proj.spd)()
        if iterations >= max_iterations:
            if proj.regularised:
                proj.raise_conflict(proj.scaled_jacobian(q), phi[proj.active], "positions")
            rows, text = _worst_rows(names, phi, proj.active)
            raise AssemblyError(
                f"model {model.name!r}: no assembled configuration found near the initial "
                f"guess (|Phi| = {norm:.3g} after {iterations} Newton iterations, tolerance "
                f"{tol:.1g}){_loop_hint(model, q, t, state, phi, tol)}; largest residuals: "
                f"{text}", rows)
        A = proj.scaled_jacobian(q)
        proj.factorize(A)
        # Where only rows held to their own scale are left, they are corrected alone: the
        # others' rounding noise (ulps of coordinates far out) would move them again.
        rhs = phi if norm > tol or own else np.where(scale[1], 0.0, phi)
        q[proj.free] -= proj.correction(A, rhs[proj.active])
        iterations += 1
        phi = model.phi(q, t, state)
    _warn_far_start(model, guess, q)

    # Velocities: project onto Phi_q v + Phi_t = 0, with one refinement solve.
    J = model.phi_q(q, t, state)
    phit = model.phi_t(q, t, state)
    A = proj.scaled_jacobian(q)
    proj.factorize(A)
    for _ in range(6 if proj.regularised else 2):
        r = J @ v + phit
        v[proj.free] -= proj.correction(A, r[proj.active])
    r = J @ v + phit
    if proj.regularised and np.linalg.norm(r[proj.active]) > max(
            1e3 * tol, 1e-9 * (1.0 + np.linalg.norm(v))):
        proj.raise_conflict(A, r[proj.active], "velocities")
    bad = proj.fixed_rows[np.abs(r[proj.fixed_rows]) > max(tol, 1e-12)]
    if bad.size:
        rows, text = _worst_rows(names, r, bad)
        raise AssemblyError(f"model {model.name!r}: velocity constraints involving only held "
                            f"coordinates are violated: {text}", rows)
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(q))):
        # Guesses near the largest floats overflow in the projection.
        worst_body = model.body_names[int(np.nanargmax(
            np.nan_to_num(np.abs(_vector(model, None, model.v0, "v")), nan=np.inf)
            .reshape(-1, 4).max(axis=1)))]
        raise AssemblyError(f"model {model.name!r}: the projected state is not finite (NaN or "
                            "Inf): the initial guesses are too large for double precision "
                            f"(the largest velocities are those of body '{worst_body}')")
    phi_norm, vel_norm = model.constraint_norms(q, v, t, state)
    return ConsistentState(t=float(t), q=q, v=v, iterations=iterations, phi_norm=phi_norm,
                           velocity_norm=vel_norm)
