"""Static equilibrium and small vibrations about a state.

``equilibrium(model)`` solves the statics of a model at rest,

    Phi_q(q)^T lam = Q(q, 0, t),    Phi(q, t) = 0,

by Newton's method on these equations with their exact Jacobian

    [ H(q, lam) - Q_q    Phi_q^T ] [dq  ]     [ Phi_q^T lam - Q ]
    [ Phi_q              0       ] [dlam] = - [ Phi             ]

(H = d/dq (Phi_q^T lam); each step is Newton on the reduced equations Z^T (Phi_q^T lam - Q) = 0
expressed in the full coordinates), with a backtracking line search on the residual. Gravity,
springs, constant loads and motor torques at time ``t`` count; dampers do not (v = 0). Where
Newton's method does not converge from the guess, the mechanism is released from it and
brought to rest by kinetic damping (:func:`equilibrium`), and Newton's method starts again
from there.

``modes(model, ...)`` linearises the equations of motion about a state in independent
coordinates: with Z an orthonormal basis of the null space of Phi_q (q = q0 + Z eta),

    Z^T M Z eta'' - Z^T Q_v Z eta' + Z^T (H - Q_q) Z eta = 0,

and returns the natural frequencies, damping ratios and mode shapes (dq = Z eta, in linkdyn's
coordinates). About an equilibrium this is the exact linearisation. About a moving state it is
the frozen-coefficient one: Q_q, Q_v and H at that state, without the terms of the
constraints' own motion.

The null space is computed densely (SciPy's SVD): fine up to a few thousand coordinates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..models import as_model
from ..compile.model import (Model, checked_count, checked_positive, checked_time,
                             require_dynamic)
from ..elements.joints import PrismaticSpec
from ..errors import (ArgumentError, ArgumentTypeError, EquilibriumError, LinkdynError,
                      RedundantConstraintsError, UnknownNameError, counted, name_list,
                      summary)
from ..compile.geometry import PointGeometry
from ..results.simulation import prismatic_reaction
from .assembly import check_redundant, consistent_state
from .interrupt import StopRequest

__all__ = ["equilibrium", "Equilibrium", "modes", "Modes"]


@dataclass(frozen=True)
class Equilibrium:
    """A static equilibrium.

    Attributes
    ----------
    q : ndarray (nq,)
        The configuration.
    lam : ndarray (nc,)
        Multipliers: the constraint forces that hold the loads (``joint_force``).
    t : float
        The time at which the loads were evaluated.
    stable : bool or None
        True when the reduced stiffness Z^T (H - Q_q) Z is positive definite (a minimum of the
        potential energy for conservative loads), False when it has a negative eigenvalue,
        None when its smallest eigenvalue is zero to round-off (neutral: a mechanism with a
        free motion, or a bifurcation).
    stiffness_eigenvalues : ndarray
        Eigenvalues of the (symmetric part of the) reduced stiffness, ascending.
    iterations : int
        Newton iterations (the last Newton solve's, after a release).
    residual : float
        Final max-norm of (Phi_q^T lam - Q, Phi).
    method : str
        "newton" (from the guess) or "release" (from where the released mechanism came to
        rest; see :func:`equilibrium`).
    restarts : int
        The stops of the kinetic damping (0 without a release).
    """

    model: Model
    q: np.ndarray
    lam: np.ndarray
    t: float
    stable: bool | None
    stiffness_eigenvalues: np.ndarray
    iterations: int
    residual: float
    method: str = "newton"
    restarts: int = 0

    def __repr__(self) -> str:
        stability = {True: "stable", False: "unstable", None: "neutral"}[self.stable]
        return summary("Equilibrium", self.model.name, None, self.method,
                       f"residual {self.residual:.1e}", stability,
                       f"potential energy {self.potential_energy:.6g} J")

    def joint_force(self, joint: str) -> np.ndarray:
        """Force (2,) in N that ``joint`` exerts on its first body (the second receives the
        opposite): a revolute joint's at the joint point; a prismatic joint's constraint
        force, normal to its axis, with the moment :meth:`joint_moment` (conventions of
        :meth:`linkdyn.SimulationResult.joint_force`). Spatial models: (3,), the force of
        the joint's rows on its first body (``SpatialModel.joint_reaction``)."""
        spec = self.model.joint_spec(joint)
        if self.model.space == "spatial":
            return self.model.joint_reaction(self.q, self.lam, self.t, joint)[0][0]
        if isinstance(spec, PrismaticSpec):
            return self._prismatic(spec)[0]
        row = self.model.constraint_names.index(f"{joint}.x")
        return -self.lam[row:row + 2]

    def joint_moment(self, joint: str):
        """Moment in N m that ``joint`` exerts on its first body about the joint's first
        point (counter-clockwise positive); zero for a revolute joint. Spatial models: the
        moment vector (3,) about that point."""
        spec = self.model.joint_spec(joint)
        if self.model.space == "spatial":
            return self.model.joint_reaction(self.q, self.lam, self.t, joint)[1][0]
        if isinstance(spec, PrismaticSpec):
            return self._prismatic(spec)[1]
        return 0.0

    def _prismatic(self, spec):
        point = PointGeometry(self.model, self.q[None, :]).ref(spec.first, np.arange(1))[0]
        return prismatic_reaction(self.model, spec, self.q, self.t, self.lam, point)

    def marker(self, name: str) -> np.ndarray:
        """Position (2,) or (3,) of marker ``name`` at the equilibrium, m."""
        m = self.model
        return m.marker_positions(self.q).reshape(len(m.marker_names), -1)[
            m.marker_index(name)]

    @property
    def potential_energy(self) -> float:
        """Potential energy (J) of gravity and the springs at the equilibrium."""
        return float(self.model.energy(self.q, np.zeros(self.model.nq), self.t)[1])

    @property
    def energy(self) -> float:
        """Mechanical energy (J): at rest, the potential energy."""
        return self.potential_energy

    def element_force(self, name: str):
        """What force element ``name`` applies at the equilibrium (at rest): along its
        coordinate, the force or torque f (float; a spring's f is minus its tension), or a
        load's global force (2,) or (3,) (as :meth:`linkdyn.SimulationResult.element_force`)."""
        recs, loads = self._element(name)
        rec, load = self.model.kernels.force_values(self.q, np.zeros(self.model.nq), self.t)
        return float(rec[recs[0], 2]) if recs else load[loads[0]]

    def element_coordinate(self, name: str) -> float:
        """The coordinate an element acts along at the equilibrium: a spring's length (m), a
        joint's relative angle (rad) or slide (m)."""
        recs, _ = self._element(name)
        if not recs:
            raise UnknownNameError(f"force element {name!r} is a point load: it has no "
                                   "coordinate")
        rec, _ = self.model.kernels.force_values(self.q, np.zeros(self.model.nq), self.t)
        return float(rec[recs[0], 0])

    def _element(self, name):
        return self.model.force_element_entries(name)

    @property
    def stats(self) -> dict:
        """The search's counters: newton_iterations (the last Newton solve's), restarts
        (of a release), residual and method, as a run's ``stats`` (for sweeps)."""
        return dict(newton_iterations=self.iterations, restarts=self.restarts,
                    residual=self.residual, method=self.method)

    def driver_effort(self, driver: str) -> float:
        """The torque or force driver ``driver`` applies to hold the equilibrium."""
        m = self.model
        if driver not in m.driver_names:
            raise UnknownNameError(f"model {m.name!r} has no driver {driver!r} (drivers: "
                                   f"{name_list(m.driver_names)})")
        return float(-self.lam[m.constraint_names.index(driver)] *
                     m.driver_effort_scale(driver, self.t))


@dataclass(frozen=True)
class Modes:
    """Small vibrations about a state.

    Attributes
    ----------
    frequencies : ndarray (k,)
        Undamped natural frequencies ``|s|`` (rad/s), ascending; one per mode (conjugate pairs
        counted once); 0 for a free motion (no stiffness against it, a body's free spin).
    damping_ratios : ndarray (k,)
        ``-Re(s) / |s|`` (0: undamped, 1: critical; > 1 overdamped, negative: unstable).
    eigenvalues : ndarray (k,) complex
        s, with Im(s) >= 0.
    shapes : ndarray (nq, k)
        Mode shapes dq in linkdyn's coordinates (real for undamped symmetric problems,
        complex otherwise), each normalised to unit mass: shape^H M shape = 1.
    q : ndarray (nq,)
        The state linearised about.
    """

    model: Model
    q: np.ndarray
    frequencies: np.ndarray
    damping_ratios: np.ndarray
    eigenvalues: np.ndarray
    shapes: np.ndarray

    def __repr__(self) -> str:
        f = self.frequencies
        band = [f"{f[0]:.6g} to {f[-1]:.6g} rad/s" if len(f) > 1 else f"{f[0]:.6g} rad/s"]
        return summary("Modes", self.model.name, None, counted(len(f), "mode"),
                       *(band if len(f) else []))

    @property
    def frequencies_hz(self) -> np.ndarray:
        return self.frequencies / (2 * math.pi)


def _kkt_residual(model, q, lam, t, zero):
    return np.concatenate([model.phi_q(q, t).T @ lam - model.force(q, zero, t),
                           model.phi(q, t)])


def _null_space(model, q, t):
    J = model.phi_q(q, t).toarray()
    return la.null_space(J, rcond=1e-10 * max(1.0, float(np.abs(J).max())))


def _reduced_stiffness(model, q, lam, t, v, Z):
    K = (model.constraint_hessian(q, lam, t) - model.force_q(q, v, t)).toarray()
    return Z.T @ K @ Z


#: Releasing the mechanism from the guess where Newton's method fails there (see
#: :func:`equilibrium`): the most restarts, the first span of each run (s), the longest span
#: (a mechanism that keeps gaining kinetic energy over it is not coming to rest), the output
#: rows a span is sampled on, and the Newton iterations tried from each restart.
RELEASE_RESTARTS = 60
RELEASE_SPAN = 0.05
RELEASE_MAX_SPAN = 10.0
RELEASE_ROWS = 200
RELEASE_NEWTON = 10


def equilibrium(model: Model, q=None, t: float = 0.0, tol: float = 1e-10,
                max_iterations: int = 50, redundant: str = "raise",
                release: bool = True) -> Equilibrium:
    """The static equilibrium nearest to ``q`` (default: the model's guesses, made
    consistent) under the loads at time ``t``.

    ``tol`` bounds the max-norm of the residual (N, N m, m), scaled by max(1, largest load).

    Motions without stiffness (a body free to slide or roll where nothing loads it) are left
    where they are: the Newton step is then the minimum-norm one, and ``stable`` is None.
    So are redundant constraints, with ``redundant="allow"`` (an overconstrained mechanism
    that moves all the same, such as Bricard's linkage): the multipliers are then the
    least-norm ones, as in :func:`linkdyn.simulate`.

    Where Newton's method does not converge from the guess (an equilibrium far from it: the
    flyball governor's balls hang a metre below where they start), with ``release`` (the
    default) the mechanism is let go from the guess, at rest, and simulated with kinetic
    damping: each time its kinetic energy peaks, it is stopped there and let go again, until
    Newton's method converges from where it is. That finds where it comes to rest, a stable
    equilibrium; ``method`` is then "release" and ``restarts`` counts the stops. Loads that
    vary in time are followed over each short run; the equilibrium itself is solved at ``t``.

    Raises
    ------
    EquilibriumError
        No equilibrium was found: Newton's method did not converge from the guess and,
        released, the mechanism did not come to rest (its loads keep it moving, such as a
        slider pushed along its free direction); the exception carries the last iterate and
        its residual.
    """
    model = as_model(model)
    if not isinstance(model, Model):
        raise ArgumentTypeError(f"model must be a linkdyn.Model, got {type(model).__name__}")
    require_dynamic(model, "equilibrium")
    t = checked_time(t)
    checked_positive("tol", tol)
    checked_count("max_iterations", max_iterations)
    if not isinstance(release, bool):
        raise ArgumentTypeError(f"release must be True or False, got {release!r}")
    zero = np.zeros(model.nq)
    q = consistent_state(model, q=q, v=zero, t=t, redundant=redundant).q.copy()
    method, restarts = "newton", 0
    try:
        q, lam, it, norm = _newton(model, q, t, tol, max_iterations)
    except EquilibriumError as first:
        if not release:
            raise
        (q, lam, it, norm), restarts = _released(model, q, t, tol, redundant, first)
        method = "release"
    Z = _null_space(model, q, t)
    if Z.shape[1] == 0:
        eig = np.zeros(0)
        stable = True
    else:
        Kr = _reduced_stiffness(model, q, lam, t, zero, Z)
        eig = np.linalg.eigvalsh(0.5 * (Kr + Kr.T))
        tiny = 1e-9 * max(1.0, float(np.abs(eig).max()))
        stable = None if abs(eig[0]) <= tiny else bool(eig[0] > 0)
    return Equilibrium(model, q, lam, t, stable, eig, it, norm, method, restarts)


def _newton(model, q, t, tol, max_iterations) -> tuple:
    """Newton's method with backtracking on the statics from ``q`` (module notes): (q, lam,
    iterations, residual), or EquilibriumError."""
    try:
        return _newton_steps(model, q, t, tol, max_iterations)
    except ValueError as exc:   # the kernels' refusal of a degenerate state (a spring's
        # two points met): the iterates left the model's domain
        raise EquilibriumError(f"model {model.name!r}: Newton's method for the equilibrium "
                               f"left the model's domain ({exc.args[0]})", q) from exc


def _newton_steps(model, q, t, tol, max_iterations) -> tuple:
    nq = model.nq
    zero = np.zeros(nq)
    # Multipliers of the starting point: least squares of Phi_q^T lam = Q.
    J = model.phi_q(q, t)
    lam = spla.lsqr(J.T, model.force(q, zero, t), atol=1e-14, btol=1e-14)[0]
    scale = max(1.0, float(np.abs(model.force(q, zero, t)).max()))
    res = _kkt_residual(model, q, lam, t, zero)
    norm = float(np.abs(res).max())
    if not math.isfinite(norm):     # NaN would compare as converged below
        raise EquilibriumError(f"model {model.name!r}: the equilibrium equations' residual "
                               "is not finite at the guess", q, norm)
    it = 0
    while norm > tol * scale:
        if it >= max_iterations:
            raise EquilibriumError(
                f"model {model.name!r}: no static equilibrium found near the guess after "
                f"{it} Newton iterations (residual {norm:.3g}); the loads may keep the "
                "mechanism moving", q, norm)
        J = model.phi_q(q, t)
        K = model.constraint_hessian(q, lam, t) - model.force_q(q, zero, t)
        A = sp.bmat([[K, J.T], [J, None]], format="csc")
        try:
            with np.errstate(all="ignore"):
                step = spla.splu(A).solve(-res)
        except RuntimeError:
            # Singular: a motion without stiffness (a disk free to roll on a frictionless
            # floor, a neutral mechanism). The minimum-norm step leaves such motions alone;
            # where the loads push along them there is no equilibrium and the residual
            # stops falling.
            if A.shape[0] > 4000:
                raise EquilibriumError(
                    f"model {model.name!r}: singular equilibrium equations at iteration {it} "
                    "(no stiffness against some motion) and too large for the dense "
                    "minimum-norm step", q, norm) from None
            step = np.linalg.lstsq(A.toarray(), -res, rcond=None)[0]
        if not np.all(np.isfinite(step)):
            raise EquilibriumError(f"model {model.name!r}: the Newton step is not finite at "
                                   f"iteration {it}", q, norm)
        alpha = 1.0
        while True:   # backtracking: accept the first step that lowers the residual
            q_new, lam_new = q + alpha * step[:nq], lam + alpha * step[nq:]
            res_new = _kkt_residual(model, q_new, lam_new, t, zero)
            norm_new = float(np.abs(res_new).max())
            if norm_new < norm or alpha < 1e-4:
                break
            alpha *= 0.5
        if not math.isfinite(norm_new):     # overflow: the residual cannot say it converged
            raise EquilibriumError(f"model {model.name!r}: the equilibrium equations' "
                                   f"residual overflowed at Newton iteration {it + 1} (the "
                                   "iterates ran away from the guess)", q, norm)
        q, lam, res, norm = q_new, lam_new, res_new, norm_new
        it += 1
    return q, lam, it, norm


def _released(model, q, t, tol, redundant, first) -> tuple:
    """Kinetic damping from ``q`` (see :func:`equilibrium`): ((q, lam, iterations, residual)
    of Newton's method from where the mechanism comes to rest, restarts), or
    EquilibriumError after ``first``, Newton's failure from the guess."""
    with StopRequest() as stop:     # Ctrl-C between the runs: the search stops
        found = _release_runs(model, q, t, tol, redundant, first, stop)
    if found is None:
        raise KeyboardInterrupt
    return found


def _release_runs(model, q, t, tol, redundant, first, stop):
    """The runs of :func:`_released`; None where Ctrl-C stopped them."""
    from .simulate import simulate     # (simulate does not import the statics)

    zero = np.zeros(model.nq)
    span, energy = RELEASE_SPAN, float("nan")
    for restart in range(1, RELEASE_RESTARTS + 1):
        try:
            run = simulate(model, t + span, t0=t, q0=q, v0=zero, rtol=1e-6, atol=1e-6,
                           dt_out=span / RELEASE_ROWS, redundant=redundant)
        except LinkdynError as exc:
            raise EquilibriumError(f"{first}; released from the guess, its motion could not "
                                   f"be followed: {exc}", first.q, first.residual) from exc
        if run.status == "interrupted":     # Ctrl-C (the run consumed it): nothing to keep
            return None
        ke = run.kinetic_energy
        peaks = np.flatnonzero((ke[1:-1] >= ke[:-2]) & (ke[1:-1] > ke[2:])) + 1
        if len(peaks):      # stop it at its fastest, and let it go again from rest
            row = int(peaks[0])
            if row < RELEASE_ROWS // 10:    # a span of several swings: sample it finer
                span *= 0.5
        else:               # still gaining speed at the end of the span: a longer one
            row = len(ke) - 1
            span *= 2.0
        moved = float(np.abs(run.q[row] - q).max()) > 1e-12 * max(1.0, float(np.abs(q).max()))
        q, energy = run.q[row], float(ke[row])
        if not moved:       # at rest where the statics have no equilibrium (held by friction)
            break
        try:
            return _newton(model, q, t, tol, RELEASE_NEWTON), restart
        except EquilibriumError:
            pass
        if stop.requested:
            stop.consume()
            return None
        if span > RELEASE_MAX_SPAN:
            break       # still speeding up after the longest span
    raise EquilibriumError(f"{first}; released from the guess, the mechanism did not come "
                           f"to rest where Newton's method converges in {restart} "
                           f"run{'' if restart == 1 else 's'} "
                           f"(kinetic energy {energy:.3g} J at the last stop; friction, which "
                           "holds a body at rest on a slope, is not part of the statics)",
                           q, first.residual)


#: Eigenvalues below this fraction of the largest are free motions (s = 0) in rounding noise.
RIGID_MODE = 1e-7


def modes(model: Model, state=None, t: float | None = None,
          redundant: str = "raise") -> Modes:
    """Natural frequencies, damping ratios and mode shapes about ``state``: an
    :class:`Equilibrium` (default: ``equilibrium(model, redundant=redundant)``), or a pair
    ``(q, v)`` at time ``t`` (default 0), whose multipliers are taken from the index-1
    equations (the least-norm ones where redundant constraints are allowed)."""
    model = as_model(model)
    if not isinstance(model, Model):
        raise ArgumentTypeError(f"model must be a linkdyn.Model, got {type(model).__name__}")
    require_dynamic(model, "modes")
    nq = model.nq
    allow = check_redundant(redundant)
    if state is None:
        state = equilibrium(model, t=0.0 if t is None else t, redundant=redundant)
    if isinstance(state, Equilibrium):
        q, v, lam, t = state.q, np.zeros(nq), state.lam, state.t
    else:
        try:
            q, v = (np.asarray(x, dtype=float).reshape(nq) for x in state)
        except (TypeError, ValueError):
            raise ArgumentError(f"state must be an Equilibrium or a pair (q, v) of arrays of "
                                f"length {nq}") from None
        t = 0.0 if t is None else float(t)
        J = model.phi_q(q, t)
        M = sp.diags(model.mass)
        K = sp.bmat([[M, J.T], [J, None]], format="csc")
        rhs = np.concatenate([model.force(q, v, t), model.gamma(q, v, t)])
        try:
            lam = spla.splu(K).solve(rhs)[nq:]
        except RuntimeError:
            if not allow:
                raise RedundantConstraintsError(
                    f"model {model.name!r}: Phi_q has lost rank at the given state (redundant "
                    "or conflicting constraints); pass redundant=\"allow\" for an "
                    "overconstrained mechanism that moves all the same", ()) from None
            lam = np.linalg.lstsq(K.toarray(), rhs, rcond=None)[0][nq:]
    Z = _null_space(model, q, t)
    if Z.shape[1] == 0:
        empty = np.zeros(0)
        return Modes(model, q, empty, empty, empty.astype(complex), np.zeros((nq, 0)))
    Mr = Z.T @ (model.mass[:, None] * Z)
    Kr = _reduced_stiffness(model, q, lam, t, v, Z)
    Cr = -Z.T @ model.force_v(q, v, t).toarray() @ Z
    if not np.any(Cr) and np.allclose(Kr, Kr.T, rtol=1e-12, atol=1e-12 * np.abs(Kr).max()):
        w2, eta = la.eigh(0.5 * (Kr + Kr.T), Mr)   # mass-normalised
        # s = i w; an unstable direction (w2 < 0) gives a real positive s.
        s = np.where(w2 >= 0, 1j * np.sqrt(np.abs(w2)), np.sqrt(np.abs(w2)))
        shapes = Z @ eta
    else:
        n = Z.shape[1]
        Minv = np.linalg.inv(Mr)
        A = np.block([[np.zeros((n, n)), np.eye(n)], [-Minv @ Kr, -Minv @ Cr]])
        s_all, vecs = la.eig(A)
        keep = np.flatnonzero(s_all.imag >= -1e-12 * np.maximum(1.0, np.abs(s_all)))
        # A conjugate pair is one mode; a real pair (overdamped) is kept as two entries.
        s, eta = s_all[keep], vecs[:n, keep]
        norms = np.sqrt(np.einsum("ik,ij,jk->k", eta.conj(), Mr, eta).real)
        eta = eta / np.where(norms > 0, norms, 1.0)
        shapes = Z @ eta
    # A free motion (no stiffness: a body spinning freely) is s = 0, found as rounding noise
    # (1e-8 rad/s here and there, real or complex): zero, not a noise's damping ratio of +-1.
    s = np.where(np.abs(s) <= RIGID_MODE * float(np.abs(s).max(initial=0.0)), 0.0, s)
    omega = np.abs(s)
    with np.errstate(invalid="ignore", divide="ignore"):
        zeta = np.where(omega > 0, -s.real / np.where(omega > 0, omega, 1.0), 0.0)
    order = np.argsort(omega, kind="stable")
    return Modes(model, q, omega[order], zeta[order], s[order], shapes[:, order])
