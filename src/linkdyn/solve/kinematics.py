"""Kinematic analysis of fully driven mechanisms: ``kinematics(model, times)``.

For a model whose degrees of freedom are all driven (as many constraint rows as coordinates),
each time gets the positions from Phi(q, t) = 0 (Newton from a Taylor predictor of the previous
solution), the velocities from Phi_q v = -Phi_t and the accelerations from Phi_q a = gamma, with
KLU in a compiled loop (linkdyn._kinematics). Along the sweep an estimate of the reciprocal
condition number of Phi_q is watched: where it falls below ``singular_rcond`` the configuration
is reported singular (time and constraints); where the sweep cannot go on (a driver pushed
past a dead centre, or a change point where branches meet) the critical time is found by
bisection.

Branches. The sign of det Phi_q, taken from the factors at each solution, is constant along a
branch of positions and opposite on the two branches that meet at a limit position. Where it
changes between two times, the step is solved again in 2, 4, ... 256 sub-steps: a jump
across a nearby limit (the Taylor predictor overshoots there) disappears and the sweep stays
on its branch (``stats["branch_retries"]``); a change that persists is the branch's own
passage through a singular configuration, reported in ``result.branch_changes``. A sample that
falls exactly on a singular configuration (reciprocal condition below 1e-8) gives the next
step no tangent; the sweep steps over it from the sample before, so that it goes on along the
branch it came on. Times too far apart for the predictor (another assembly mode can have
the same sign) are cut into sub-steps: a step in which a point would move more than
STEP_MOTION (0.5) of the mechanism's size (or of its own distance from the origin, if
larger), a unit vector more than half a radian, at the velocities of its start
(``stats["sub_steps"]``); the result holds the times asked for. The assembly
mode of the start is the one nearest to the guess ``q0``; :func:`linkdyn.assembly_modes`
lists the others.

The estimate is KLU's, of Phi_q at the solution with its rows and then its columns scaled to
unit largest entries: it does not depend on the units of length (a linkage described in
millimetres has the estimates of the same linkage in metres; unscaled, they were up to a
million times smaller and fell below the threshold). The default threshold, 1e-6, is far
from both ends: a sample that falls exactly on a parallelogram's change point shows round-off
(3e-17), and regular configurations of the built-in linkages stay above 2e-3 (the 5-SS over
a metre's stroke above 3.8e-4). Big slender structures are ill-conditioned without being
singular (the Warren truss of :mod:`linkdyn.models.warren`: 1e-4, 7e-7 and 1e-8 at 25, 300
and 2,500 panels, in KLU's estimate and in the singular values alike): give them a
``singular_rcond`` below their own level. Newton stops at ``tol`` times max(1, max abs(q)) or,
where its steps no longer cut the residual, at the residual's rounding noise
(:func:`linkdyn.solve.assembly.residual_roundoff`: squared distances in coordinates of some
10 units and more round above that test).
"""

from __future__ import annotations

import time as _time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..models import as_model
from .. import _html
from .._kinematics import STATUS
from .._checks import checked_choice
from .._progress import check_callback
from ..compile.model import Model, check_output_size, checked_count, checked_positive
from ..errors import (ArgumentError, ArgumentTypeError, InterruptedWarning, KinematicsError,
                      ModelError, SingularConfigurationError, counted, summary)
from ..results.accessors import TrajectoryAccessors
from .assembly import (DIAGNOSIS_MAX_COORDINATES, check_redundant, consistent_state,
                       describe_rows, nearly_singular_rows, residual_roundoff)
from .interrupt import StopRequest
from .tracking import (BRANCH_HALVINGS, MAX_CUTS, MAX_SUB_STEPS, STEP_MOTION, _find_limit,
                       _law_table, _reverse_at_limits, _stepped_sweep)

__all__ = ["kinematics", "KinematicsResult", "Singularity", "BRANCH_HALVINGS", "STEP_MOTION"]


@dataclass(frozen=True)
class Singularity:
    """A singular configuration met along a sweep: its time, the constraint rows in the
    Jacobian's left null space (largest share first) and the reciprocal condition estimate
    there."""

    t: float
    constraints: tuple
    rcond: float


@dataclass(frozen=True)
class KinematicsResult(TrajectoryAccessors):
    """Positions, velocities and accelerations at the solved times (all requested times
    unless the sweep was interrupted with Ctrl-C: then ``status == "interrupted"``).

    ``q``, ``v``, ``a``: (n, nq). ``rcond``: reciprocal 1-norm condition estimate of Phi_q at
    each time, its rows and columns scaled to unit largest entries (near zero close to
    singular configurations; the same in any unit of length). ``singularities``: what was met (see
    :class:`Singularity`). ``stats``: factorizations (generated_factorizations of them by
    straight-line LU code, lu_kernels "generated" where there were any, else "klu": see
    :mod:`linkdyn.solve.lu_code`), newton_iterations, branch_retries
    (steps solved again in sub-steps because their positions had jumped to another branch),
    sub_steps (times added between the given ones where those were too far apart to
    follow), sweep_seconds. ``limits``: with ``at_limit="reverse"``, (input time of the
    limit, index of the first row after it) for each limit position passed by reversing the
    input (``t`` then goes back and forth: it is the input's schedule, not a clock).
    ``branch_changes``: the input times where the branch followed passes a singular
    configuration and continues on the other side (the sign of det Phi_q changes along it),
    to within 2**-8 of a step.
    """

    model: Model
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    rcond: np.ndarray
    singularities: tuple = ()
    stats: dict = field(default_factory=dict)
    status: str = "success"
    limits: tuple = ()
    branch_changes: tuple = ()

    def __repr__(self) -> str:
        return summary("KinematicsResult", self.model.name, self.t, self.status,
                       counted(len(self.singularities), "singularity", "singularities"),
                       counted(len(self.limits), "limit position"))

    def _repr_html_(self) -> str:
        """The sweep's summary in a notebook."""
        rows = [("status", self.status),
                ("t", f"{self.t[0]:g} .. {self.t[-1]:g} s, {len(self.t)} positions"
                 if len(self.t) else "no positions"),
                ("sweep", f"{1e3 * self.stats.get('sweep_seconds', 0.0):.1f} ms"),
                ("smallest reciprocal condition",
                 f"{self.rcond.min():.3e}" if len(self.rcond) else "-"),
                ("singular configurations", str(len(self.singularities))),
                ("limit positions passed", str(len(self.limits)))]
        return _html.table(f"linkdyn kinematics of {self.model.name}", rows,
                           self._repr_png_())



def _left_null_rows(model: Model, q, t, run):
    """Constraint rows of the smallest singular value of Phi_q (see nearly_singular_rows)."""
    return nearly_singular_rows(model, q, t, _state_at(model, run, t))[1]


def _singularities(model, t, Q, rc, done, threshold, run):
    """Each local minimum of the condition estimate under ``threshold`` among the first
    ``done`` rows, with the rows involved there."""
    out = []
    for k in np.flatnonzero(rc[:done] < threshold):
        if (k == 0 or rc[k] <= rc[k - 1]) and (k == done - 1 or rc[k] <= rc[k + 1]):
            out.append(Singularity(float(t[k]), _left_null_rows(model, Q[k], t[k], run),
                                   float(rc[k])))
    return out


def _state_at(model: Model, run, t):
    """The run's state with the values of Python-function laws at time t."""
    table = _law_table(model, np.array([t]))
    if table is not None:
        run.law_values[:table.shape[1]] = table[0]
    return run


def _equilibrated(J) -> tuple:
    """(D_r J D_c, D_r, D_c): J (sparse) with each row, then each column, scaled to a
    largest entry of 1, and those scales (diagonals, as vectors)."""
    import scipy.sparse as sp

    J = sp.csr_matrix(J)
    rows = abs(J).max(axis=1).toarray().ravel()
    dr = np.where(rows > 0, 1.0 / np.where(rows > 0, rows, 1.0), 1.0)
    J = sp.diags(dr) @ J
    cols = abs(J).max(axis=0).toarray().ravel()
    dc = np.where(cols > 0, 1.0 / np.where(cols > 0, cols, 1.0), 1.0)
    return J @ sp.diags(dc), dr, dc


def _least_squares_sweep(model, t, q, tol, max_iterations, run, singular_rcond, on_singular):
    """kinematics with redundant="allow" and more rows than coordinates: Newton in least
    squares at each time (the rows are consistent, so the residual still goes to zero)."""
    import scipy.sparse.linalg as spla

    n, names = model.nq, model.constraint_names
    check_output_size(len(t), 3 * n + 1, f"kinematics of model {model.name!r}")
    Q, V, A = (np.empty((len(t), n)) for _ in range(3))
    rc = np.empty(len(t))
    v = a = np.zeros(n)
    q = np.array(q, dtype=float)
    factorizations = iterations = 0
    tic = _time.perf_counter()

    def factor(J):
        nonlocal factorizations
        factorizations += 1
        JtJ = (J.T @ J).tocsc()
        lu = spla.splu(JtJ, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options=dict(SymmetricMode=True))
        d = np.abs(lu.U.diagonal())
        return lu, float(np.sqrt(d.min() / d.max())) if d.size and d.max() > 0 else 0.0

    failure = None
    for k, tk in enumerate(t):
        state = _state_at(model, run, float(tk))
        if k > 0:
            dt = tk - t[k - 1]
            q = q + v * dt + 0.5 * a * dt * dt
        converged = False
        previous = np.inf
        for _ in range(max_iterations + 1):
            r = model.phi(q, float(tk), state)
            if not np.all(np.isfinite(r)):
                break
            size = np.max(np.abs(r))
            if size <= tol * max(1.0, np.max(np.abs(q))) and iterations or \
                    size > 0.5 * previous and \
                    size <= residual_roundoff(model, q, float(tk), state, np.inf):
                converged = True    # (the second: Newton stalled at the rounding noise)
                break
            previous = size
            J = model.phi_q(q, float(tk), state)
            try:
                lu, _ = factor(J)
            except RuntimeError:   # exactly singular
                break
            iterations += 1
            q = q - lu.solve(J.T @ r)
        if not converged:
            worst = np.argsort(-np.abs(np.nan_to_num(r, nan=np.inf)))[:5]
            failure = (k, [names[i] for i in worst], float(np.max(np.abs(r))))
            break
        # One factorisation of the equilibrated Phi_q: a unit-free condition estimate (as
        # KinematicSweep._solution_factors') and the solves of v and a (consistent rows).
        Je, dr, dc = _equilibrated(model.phi_q(q, float(tk), state))
        lu, rc[k] = factor(Je)
        v = dc * lu.solve(Je.T @ (dr * -model.kernels.phi_t(q, float(tk), state=state)))
        a = dc * lu.solve(Je.T @ (dr * model.kernels.gamma(q, v, float(tk), state=state)))
        Q[k], V[k], A[k] = q, v, a
    done = len(t) if failure is None else failure[0]
    singular = _singularities(model, t, Q, rc, done, singular_rcond, run)
    stats = dict(factorizations=factorizations, newton_iterations=iterations,
                 sweep_seconds=_time.perf_counter() - tic)
    result = KinematicsResult(model=model, t=t[:done].copy(), q=Q[:done], v=V[:done],
                              a=A[:done], rcond=rc[:done], singularities=tuple(singular),
                              stats=stats, status="success")
    if failure is not None:
        k, rows, size = failure
        raise KinematicsError(
            f"model {model.name!r}: no configuration at t = {t[k]:.9g} s satisfies the "
            f"(redundant) constraints: Newton in least squares stopped with |Phi| = "
            f"{size:.3g} (the redundant rows conflict there, or the mechanism locks); largest "
            f"residuals: {', '.join(rows)}", float(t[k]), tuple(rows), result)
    if singular and on_singular == "raise":
        s0 = singular[0]
        raise SingularConfigurationError(
            f"model {model.name!r}: singular configuration at t = {s0.t:.9g} s (reciprocal "
            f"condition {s0.rcond:.2g})", s0.t, (), result)
    return result


def _guess(model, q0):
    """The guess (q0, or the model's) as an array, or None when consistent_state must first
    say what is wrong with it."""
    try:
        q = model.q0 if q0 is None else np.asarray(q0, dtype=float)
    except (TypeError, ValueError):
        return None
    if q.shape != (model.nq,) or not np.all(np.isfinite(q)):
        return None
    return q.copy()


def kinematics(model: Model, times, *, q0=None, tol: float = 1e-14,
               singular_rcond: float = 1e-6, on_singular: str = "raise",
               max_iterations: int = 20, progress=None,
               redundant: str = "raise", at_limit: str = "raise") -> KinematicsResult:
    """Positions, velocities and accelerations of a fully driven model at ``times``.

    Parameters
    ----------
    times : array_like
        Increasing times (s).
    q0 : array_like, optional
        Guess of the positions at ``times[0]`` (default: the model's initial values). The
        sweep's Newton iteration starts from it; where that fails at ``times[0]`` (a guess far
        from any position), the guess is first projected by
        :func:`linkdyn.consistent_state`, whose errors then say what cannot be assembled.
    tol : float
        Newton stops when ``|Phi|_max <= tol * max(1, |q|_max)``.
    singular_rcond : float
        A reciprocal condition estimate below this marks a singular configuration (see the
        module notes for the default, 1e-6).
    on_singular : "raise" or "continue"
        Raise :class:`SingularConfigurationError` at the first singular configuration, or
        record it in ``result.singularities`` and go on while positions exist.
    progress : callable, optional
        ``progress(t, positions)`` is called about every 0.5 s of wall time during the sweep,
        from a helper thread, with the last time solved and the number of positions.
    redundant : {"raise", "allow"}
        ``"allow"`` accepts redundant but consistent constraints (more constraint rows than
        coordinates, e.g. a parallelogram with a third rocker driven by one crank): each
        time is then solved in least squares, ``J^T J dq = -J^T Phi`` (and alike for
        velocities and accelerations), with SciPy's sparse LU instead of the compiled KLU
        sweep, which needs a square Jacobian; ``rcond`` is then the square root of the pivot
        ratio of J^T J. Rows that contradict each other stop the sweep with a
        KinematicsError naming the largest residuals. ``progress`` is not reported there.
    at_limit : {"raise", "reverse"}
        Where the input cannot go on (a limit position: the positions stop existing),
        ``"raise"`` (default) finds the limit by bisection and raises
        SingularConfigurationError with the positions before it. ``"reverse"`` passes the
        limit onto the other branch (the last position mirrored through the limit's, then
        Newton) and runs the input back with the remaining increments, as often as limits
        come: a non-Grashof four-bar traces its whole closed coupler curve. Each limit is in
        ``result.limits``; a limit that cannot be passed still raises.

    Raises
    ------
    ModelError
        The model is not fully driven (the message gives degrees of freedom and drivers).
    SingularConfigurationError, KinematicsError
        As above; both carry ``t``, ``constraints`` and the partial ``result``.
    """
    # Ctrl-C between the compiled sweeps (sub-steps, branch retries) is a request that
    # _sweep polls (linkdyn.solve.interrupt), not a KeyboardInterrupt that could be lost.
    with StopRequest() as stop:
        result, _ = _kinematics(model, times, q0, tol, singular_rcond, on_singular,
                                max_iterations, progress, redundant, at_limit, None)
        if result.status == "interrupted":
            stop.consume()
    return result


def kinematics_with_derivatives(model, times, plan, *, q0=None, tol=1e-14,
                                singular_rcond=1e-6, on_singular="raise", max_iterations=20,
                                progress=None, redundant="raise", at_limit="raise") -> tuple:
    """:func:`kinematics` and, in the same compiled sweep, the derivatives of its rows with
    respect to the parameters of ``plan`` (a :class:`linkdyn._kinematics.DerivativePlan` on
    the model's kernels, or None): (result, (dq, dv, da)), each (rows, nq, p) for the
    result's rows, formed at each row with the factors that solved its velocities and
    accelerations (linkdyn.design.sensitivity). The derivatives are None without a plan
    and where the rows were not solved by the compiled sweep (redundant constraints, solved
    in least squares)."""
    with StopRequest() as stop:     # (as in kinematics)
        result, derivatives = _kinematics(model, times, q0, tol, singular_rcond, on_singular,
                                          max_iterations, progress, redundant, at_limit, plan)
        if result.status == "interrupted":
            stop.consume()
    return result, derivatives


def _kinematics(model, times, q0, tol, singular_rcond, on_singular, max_iterations, progress,
                redundant, at_limit, plan) -> tuple:
    """kinematics_with_derivatives, inside its Ctrl-C guard."""
    model = as_model(model)
    t = _checked_times(model, times, redundant, on_singular, at_limit, progress, tol,
                       singular_rcond, max_iterations)

    # Per-run state: the values of laws given as Python functions live in the run, never in
    # the model, so that runs of one model in several threads do not interfere.
    run = model.kernels.run_state()
    state0 = _state_at(model, run, float(t[0]))
    # A fully driven linkage has isolated positions at t0: the sweep's Newton iteration finds
    # the one near the guess, as at every later time (from the previous one). Only where that
    # fails is the guess projected first (consistent_state: least-norm corrections, and the
    # errors that name what cannot be assembled); its sparse set-up costs several times a
    # 180-position sweep of a small linkage.
    q_start = _guess(model, q0) if model.nc == model.nq else None
    if q_start is not None:
        tic = _time.perf_counter()
        status, done, out, stats, changes, last = _stepped_sweep(
            model, t, q_start, tol, max_iterations, run, progress, plan)
        if done == 0 and STATUS[status] != "interrupted":
            q_start = None
    if q_start is None:
        q_start = consistent_state(model, q=q0, t=float(t[0]), hold=(), state=state0,
                                   redundant=redundant).q
        tic = _time.perf_counter()
        if model.nc != model.nq:
            return _least_squares_sweep(model, t, q_start, tol, max_iterations, run,
                                        singular_rcond, on_singular), None
        status, done, out, stats, changes, last = _stepped_sweep(
            model, t, q_start, tol, max_iterations, run, progress, plan)
    limits = ()
    if at_limit == "reverse" and status != 0 and done > 0 and STATUS[status] not in (
            "interrupted", "non-finite"):
        t, out, done, status, limits, more = _reverse_at_limits(
            model, t, out, done, status, tol, max_iterations, run, stats, plan)
        changes += more
    Q, V, A, rc, signs = out[:5]
    stats["sweep_seconds"] = _time.perf_counter() - tic
    stats["lu_kernels"] = "generated" if stats.get("generated_factorizations") else "klu"

    singular = _singularities(model, t, Q, rc, done, singular_rcond, run)
    stop = None
    interrupted = STATUS[status] == "interrupted"
    if interrupted:
        warnings.warn(f"linkdyn: kinematic sweep interrupted after {done} of {t.size} times; "
                      "the result holds what was computed", InterruptedWarning, stacklevel=3)
    elif status != 0:
        # Localise where the positions stop existing between the last solved time and the
        # next (of the sub-steps where the given times were too coarse to follow).
        if last is not None and limits == ():
            t_lo, q_lo, s_lo, hi = last
        else:
            t_lo, q_lo, s_lo, hi = (float(t[done - 1]), Q[done - 1], int(signs[done - 1]),
                                    float(t[done])) if done > 0 else (None, None, 0, float(t[0]))
        stop = (_find_limit(model, t_lo, q_lo, hi, tol, max_iterations, run, s_lo)
                if t_lo is not None else (hi, q_start))

    result = KinematicsResult(model=model, t=t[:done].copy(), q=Q[:done], v=V[:done],
                              a=A[:done], rcond=rc[:done], singularities=tuple(singular),
                              stats=stats, status="interrupted" if interrupted else "success",
                              limits=limits, branch_changes=changes)
    if stop is not None and stats.get("sub_steps_capped") and STATUS[status] != "non-finite":
        raise KinematicsError(
            f"model {model.name!r}: the times are too far apart to follow the motion near t = "
            f"{t[done]:.9g} s: the drivers move the linkage so far between two times that "
            f"sub-steps (at most {MAX_CUTS} a step, {MAX_SUB_STEPS} in all) could not follow "
            "it; give times closer together",
            float(t[done]), (), result)
    if stop is not None:
        raise _stop_error(model, t, done, status, stop, run, result, at_limit)
    if singular and on_singular == "raise":
        raise _singular_error(model, singular[0], result)
    return result, (tuple(x[:done] for x in out[5:]) if plan is not None else None)


def _checked_times(model, times, redundant, on_singular, at_limit, progress, tol,
                   singular_rcond, max_iterations) -> np.ndarray:
    """The sweep's times, after checking that the model is fully driven and the options."""
    if not isinstance(model, Model):
        raise ArgumentTypeError(f"model must be a linkdyn.Model, got {type(model).__name__}")
    ndrv = len(model.driver_names)
    dof = model.nq - (model.nc - ndrv)
    allow = check_redundant(redundant)
    if model.nc != model.nq and not (allow and model.nc > model.nq and ndrv > 0):
        kind = "under-driven" if model.nc < model.nq else "over-driven"
        dofs = f"{dof} degree{'' if dof == 1 else 's'} of freedom"
        drivers = f"{ndrv} driver{'' if ndrv == 1 else 's'}"
        hint = (" (if the extra rows are redundant but consistent, pass redundant='allow')"
                if model.nc > model.nq and not allow else "")
        loose = [c.name for c in getattr(model.description, "clearances", ())]
        closed = [c.name for c in getattr(model.description, "cams", ())
                  if c.contact is not None]
        if loose and model.nc < model.nq:
            hint = (f" (its joints with clearance, {', '.join(loose)}, leave their play "
                    "free: their motion comes from the dynamics, linkdyn.simulate)")
        elif closed and model.nc < model.nq:
            hint = (f" (its force-closed cam followers, {', '.join(closed)}, are held on by "
                    "forces, not rows: their motion comes from the dynamics, "
                    "linkdyn.simulate; without contact= a pair is exact)")
        raise ModelError(f"model {model.name!r} is {kind}: {dofs} and {drivers}; kinematic "
                         f"analysis needs one driver per degree of freedom{hint}")
    if ndrv == 0 and model.nq > 0:
        # as many rows as coordinates, none of them a driver: a rigid structure, or
        # redundant rows that hide the mobility from the count (Bricard's linkage moves
        # with one degree of freedom); either way there is nothing to drive
        raise ModelError(f"model {model.name!r} has no drivers: kinematic analysis moves a "
                         f"model by its drivers, one per degree of freedom. Its {model.nc} "
                         f"rows for {model.nq} coordinates leave it rigid (consistent_state "
                         "gives its one configuration) or hold redundant rows where it moves "
                         "(an overconstrained linkage such as Bricard's: drive its input)")
    checked_choice("on_singular", on_singular, ("raise", "continue"))
    checked_choice("at_limit", at_limit, ("raise", "reverse"))
    check_callback(progress)
    checked_positive("tol", tol)
    checked_positive("singular_rcond", singular_rcond)
    checked_count("max_iterations", max_iterations)
    try:
        t = np.array(times, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentError(f"times must be an array of times (s), got {times!r}") from None
    if t.ndim > 1:
        raise ArgumentError(f"times must be a 1-D array of times (s), got an array of shape "
                            f"{t.shape}")
    t = t.ravel()
    if t.size == 0 or not np.all(np.isfinite(t)):
        raise ArgumentError("times must be a non-empty array of finite values")
    if np.any(np.diff(t) <= 0):
        i = int(np.flatnonzero(np.diff(t) <= 0)[0])
        raise ArgumentError(f"times must increase: times[{i + 1}] = {t[i + 1]} <= times[{i}] = "
                            f"{t[i]}")
    return t


def _stop_error(model, t, done, status, stop, run, result, at_limit="raise"):
    """Why the sweep stopped at t[done]: non-finite constraints, or a singular Jacobian (with
    ``at_limit="raise"``, how to run the input back there)."""
    t_stop, q_stop = stop
    if STATUS[status] == "non-finite":
        return KinematicsError(f"model {model.name!r}: the constraints evaluate to NaN or "
                               f"Inf at t = {t[done]:.9g} s (last solved t = {t_stop:.9g} "
                               "s); check the drivers' laws", float(t[done]), (), result)
    rows = _left_null_rows(model, q_stop, t_stop, run)
    return SingularConfigurationError(
        f"model {model.name!r}: the sweep cannot go on past t = {t_stop:.9g} s "
        f"({STATUS[status]} at t = {t[done]:.9g} s): the Jacobian becomes singular there, "
        "a limit position the driven input cannot pass or a change point where branches "
        f"meet (involved: {describe_rows(model, rows)})"
        + ("; if the input rocks between limit positions, at_limit='reverse' runs it back "
           "there (the commands: linkdyn kinematics or animate --kinematics with "
           "--at-limit reverse)"
           if at_limit == "raise" else ""), t_stop, rows, result)


def _singular_error(model, s0, result):
    """The first singular configuration a sweep passed, as the error it raises."""
    if s0.constraints:
        detail = f"involved: {describe_rows(model, s0.constraints)}"
    else:
        # No rows named: the dense diagnosis is for small models. A big slender structure
        # is ill-conditioned everywhere (a Warren truss: 1e-4, 7e-7 and 1e-8 at 25, 300
        # and 2,500 panels), which the threshold cannot tell from a singularity.
        detail = (f"the rows involved are not diagnosed for models over "
                  f"{DIAGNOSIS_MAX_COORDINATES} coordinates; if the mechanism is not at a "
                  "singular configuration, its Jacobian is ill-conditioned by its size and "
                  "shape (long slender structures are): lower singular_rcond below "
                  f"{s0.rcond:.1g} or pass on_singular='continue'")
    return SingularConfigurationError(
        f"model {model.name!r}: singular configuration at t = {s0.t:.9g} s (reciprocal "
        f"condition {s0.rcond:.2g}; {detail})", s0.t, s0.constraints, result)
