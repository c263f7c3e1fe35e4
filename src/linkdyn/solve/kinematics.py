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
from .._kinematics import STATUS, KinematicSweep
from .._progress import Reporter, check_callback
from ..compile.model import Model, check_output_size, checked_count, checked_positive
from ..errors import (ArgumentError, ArgumentTypeError, KinematicsError, ModelError,
                      SingularConfigurationError, counted, summary)
from ..results.accessors import TrajectoryAccessors
from .assembly import (DIAGNOSIS_MAX_COORDINATES, check_redundant, consistent_state,
                       describe_rows, nearly_singular_rows, residual_roundoff)
from .interrupt import StopRequest, requested

__all__ = ["kinematics", "KinematicsResult", "Singularity", "BRANCH_HALVINGS", "STEP_MOTION"]

#: Halvings of a step whose positions came out on another branch before the change is taken
#: as the branch's own (a singular configuration passed) rather than a jump.
BRANCH_HALVINGS = 8

#: A sample whose condition estimate is below this lies on a singular configuration: the
#: sweep steps over it from the sample before (see _tracked_sweep).
SAMPLE_SINGULAR = 1e-8

#: The largest motion of a coordinate over one step, relative to the larger of its own size
#: and the mechanism's (a unit vector's: its rotation in rad; see _coordinate_scales),
#: that the sweep takes in one step; coarser steps are cut into sub-steps (see
#: _stepped_sweep).
STEP_MOTION = 0.5
#: The most sub-steps a step is cut into in one refinement, and the most points the refined
#: schedule may have beyond the times asked for: near a singular configuration the
#: velocities, and so the motion estimated from them, grow without bound (a fuzzed linkage
#: asked for 10^18 sub-steps, and the process was killed for its memory); past these the
#: sweep goes on with the schedule it has.
MAX_CUTS = 1000
MAX_SUB_STEPS = 100_000


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
    :class:`Singularity`). ``stats``: factorizations, newton_iterations, branch_retries
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


def _law_table(model: Model, times):
    """Values (f, f', f'') of the drivers' Python-function laws at ``times``, or None."""
    drivers = model.driver_laws
    if not any(law.is_function for _, law in drivers):
        return None
    table = np.zeros((len(times), 3 * len(drivers)))
    for j, (name, law) in enumerate(drivers):
        if law.is_function:
            for k, t in enumerate(times):
                try:
                    table[k, 3 * j:3 * j + 3] = law(float(t))
                except ValueError as exc:
                    raise ModelError(f"driver '{name}': {exc}", name) from None
    return table


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


def _find_limit(model, lo, q_lo, hi, tol, max_iterations, run, sign=0):
    """Bisection between the input ``lo`` (solved: ``q_lo``, on the branch of det Phi_q's
    ``sign``) and ``hi`` (no position on that branch) for the last input with a position,
    to 1e-12 relative: (input, position)."""
    for _ in range(60):
        if abs(hi - lo) <= 1e-12 * max(1.0, abs(hi)):
            break
        mid = 0.5 * (lo + hi)
        st, _, (Qm, _, _, _, _), _ = _sweep(model, np.array([lo, mid]), q_lo, tol,
                                            max_iterations, run, sign0=sign)
        if st == 0:
            lo, q_lo = mid, Qm[1]
        else:
            hi = mid
    return lo, q_lo


def _reverse_at_limits(model, t, out, done, status, tol, max_iterations, run, stats):
    """Pass each limit position onto the other branch and run the input back with the
    remaining increments of ``t`` (kinematics, at_limit="reverse"). Returns the schedule, the
    arrays and the count of the rows solved, the last status, the limits passed and the
    branch changes met."""
    steps = np.diff(t)
    times, parts, limits, changes = [t[:done]], [tuple(a[:done] for a in out)], [], []
    total, sign = done, 1.0
    while total < len(t) and status != 0 and STATUS[status] not in ("interrupted",
                                                                      "non-finite"):
        t_last, q_last = float(times[-1][-1]), parts[-1][0][-1]
        s_last = int(parts[-1][4][-1])
        t_lim, q_lim = _find_limit(model, t_last, q_last, t_last + sign * steps[total - 1],
                                   tol, max_iterations, run, s_last)
        # Near a limit both branches are q_lim -/+ c sqrt(|t - t_lim|) n: the mirror of the
        # last position through the limit's is the other branch's at the same input, where
        # det Phi_q has the other sign.
        st, _, (Qm, _, _, _, Sm), _ = _sweep(model, np.array([t_last]), 2.0 * q_lim - q_last,
                                             tol, max_iterations, run)
        if st != 0 or int(Sm[0]) == s_last or np.abs(Qm[0] - q_last).max() <= 1e-9 * max(
                1.0, np.abs(q_last).max()):
            break                  # no other branch found there: a limit that stays one
        sign = -sign
        schedule = t_last + sign * np.cumsum(steps[total - 1:])
        st, d, arrays, sw, ch = _tracked_sweep(model, np.concatenate([[t_last], schedule]),
                                               Qm[0], tol, max_iterations, run,
                                               sign0=int(Sm[0]))
        for key in sw:
            stats[key] += sw[key]
        changes += ch
        status = st
        if d <= 1:
            break
        limits.append((float(t_lim), total))
        times.append(schedule[:d - 1])     # the mirrored row at t_last is not an output
        parts.append(tuple(a[1:d] for a in arrays))
        total += d - 1
    t_all = np.concatenate(times)
    arrays = tuple(np.concatenate([p[i] for p in parts]) for i in range(5))
    if total < len(t):
        # The next input of the schedule, for the stop's bisection and message.
        t_all = np.append(t_all, t_all[-1] + sign * steps[total - 1])
    return t_all, arrays, total, status, tuple(limits), tuple(changes)


#: The compiled sweep's status for Ctrl-C.
INTERRUPTED = next(k for k, v in STATUS.items() if v == "interrupted")


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


def _sweep(model, times, q_start, tol, max_iterations, run, progress=None, sign0=0):
    """One compiled sweep: (status, rows done, (Q, V, A, rcond, sign), the sweep)."""
    n = model.nq
    check_output_size(len(times), 3 * n + 1, f"kinematics of model {model.name!r}")
    out = tuple(np.empty((len(times), n)) for _ in range(3)) + (
        np.empty(len(times)), np.zeros(len(times), dtype=np.int8))
    sweep = KinematicSweep(run)
    table = _law_table(model, times)
    reporter = None
    if progress is not None:
        def read():
            k = sweep.solved
            return (float(times[k - 1]) if k else float(times[0])), int(k)
        reporter = Reporter(read, progress)
    try:
        status, done = sweep.sweep(times, q_start, *out, tol, max_iterations, table, sign0)
    finally:
        if reporter is not None:
            reporter.stop()
    if requested():     # Ctrl-C pressed in Python since (kinematics): stop with the rows
        status = INTERRUPTED
    return status, done, out, sweep


def _coordinate_scales(model, q) -> np.ndarray:
    """The size each coordinate's motion over a step is measured against: 1 for a direction
    (a unit vector's component, a point of a spherical linkage on its unit sphere: the
    motion is a rotation in rad), the mechanism's size for a point's coordinate (the spread
    of the points' coordinates at ``q``). The size was 1 for every coordinate, a metre:
    a linkage described in millimetres had its steps cut as if each point's coordinate
    near zero were its size (705 sub-steps and 90 times the time for a crank-rocker's
    37 positions)."""
    names = model.coordinate_names
    point = np.array([model.space != "spherical" and n.rsplit(".", 1)[-1] in ("x", "y", "z")
                      for n in names], dtype=bool)
    scales = np.ones(len(names))
    if point.any():
        values = np.abs(q[point])
        size = float(np.ptp(q[point])) or float(values.max()) or 1.0
        scales[point] = size
    return scales


#: Rows of the motion's temporaries at a time: small enough (90 kB for 44 coordinates) that
#: the allocator reuses them instead of mapping fresh pages for every sweep.
MOTION_BLOCK = 256


def _row_motion(Q, V, scales, steps) -> np.ndarray:
    """max_i abs(v_i) / max(s_i, abs(q_i)) of each of the first ``steps`` rows, in blocks
    of MOTION_BLOCK rows: whole-array temporaries (four of 1.3 MB at 3601 positions of the
    Jansen linkage) were fresh pages on every call, some 5% of its analysis."""
    motion = np.empty(steps)
    for lo in range(0, steps, MOTION_BLOCK):
        hi = min(lo + MOTION_BLOCK, steps)
        size = np.abs(Q[lo:hi])
        np.maximum(size, scales, out=size)
        rate = np.abs(V[lo:hi])
        np.divide(rate, size, out=rate)
        motion[lo:hi] = rate.max(axis=1, initial=0.0)
    return motion


def _stepped_sweep(model, times, q_start, tol, max_iterations, run, progress=None):
    """_tracked_sweep at ``times`` through sub-steps where the given ones are too coarse to
    follow: from a far-off Taylor predictor Newton converges to another assembly mode (the
    Jansen linkage sampled every half turn of its crank came out 2 m off, silently) or not
    at all (every 0.4 turn: a limit position reported where there is none). A step whose
    motion, max_i |v_i| dt / max(s_i, |q_i|) with the velocities at its start (s_i: 1 for a
    direction, the mechanism's size for a point, _coordinate_scales), exceeds
    STEP_MOTION is cut into as many equal sub-steps as that takes, and the sweep goes on
    again from the first such step on the finer schedule (a step into which the sweep could
    not go is cut by the last row's velocities), until no step is too coarse. Outputs are
    the rows at ``times``; a sweep whose steps are all fine enough runs once, unchanged.
    Returns _tracked_sweep's (status, rows done, arrays, stats, branch changes) at ``times``
    and, where the sweep stopped, the last row solved on the schedule and the time it could
    not reach, (t, q, sign, t_next): the bracket of a limit search (None otherwise)."""
    grid = times
    st, done, out, stats, changes = _tracked_sweep(model, grid, q_start, tol, max_iterations,
                                                   run, progress)
    stats["sub_steps"] = 0
    scales = _coordinate_scales(model, out[0][0] if done else q_start)
    for _ in range(8):
        steps = min(done, len(grid) - 1)        # steps from a solved row
        if steps == 0:
            break
        motion = _row_motion(out[0], out[1], scales, steps) * np.diff(grid)[:steps]
        with np.errstate(invalid="ignore"):
            ratio = np.where(np.isfinite(motion), motion / STEP_MOTION, MAX_CUTS)
        cuts = np.ceil(np.minimum(ratio, MAX_CUTS)).astype(np.int64)
        coarse = np.flatnonzero(cuts > 1)
        if coarse.size == 0:
            break
        if int(cuts[coarse].sum()) - coarse.size + len(grid) > len(times) + MAX_SUB_STEPS:
            stats["sub_steps_capped"] = True
            break
        k0 = int(coarse[0])
        pieces = [grid[:k0]]
        for k in range(k0, len(grid) - 1):
            n = int(cuts[k]) if k < steps else 1
            pieces.append(np.linspace(grid[k], grid[k + 1], n + 1)[:-1])
        pieces.append(grid[-1:])
        refined = np.concatenate(pieces)
        stats["sub_steps"] += len(refined) - len(grid)
        # the rows before the first coarse step stand; the sweep goes on from its start
        st, d, part, more, ch = _tracked_sweep(model, refined[k0:], out[0][k0], tol,
                                               max_iterations, run, sign0=int(out[4][k0]))
        for key in more:
            stats[key] += more[key]
        out = tuple(np.concatenate([a[:k0], b]) for a, b in zip(out, part))
        changes = tuple(c for c in changes if c < grid[k0]) + tuple(ch)
        grid, done = refined, k0 + d
    else:       # eight refinements and the schedule still too coarse
        stats["sub_steps_capped"] = True
    last = ((float(grid[done - 1]), out[0][done - 1].copy(), int(out[4][done - 1]),
             float(grid[done])) if 0 < done < len(grid) else None)
    if len(grid) != len(times):
        keep = np.searchsorted(grid, times)       # the given times are among the grid's
        out = tuple(a[keep] for a in out)
        done = int(np.searchsorted(keep, done))
    return st, done, out, stats, tuple(changes), last


def _tracked_sweep(model, times, q_start, tol, max_iterations, run, progress=None, sign0=0,
                   step_over=True):
    """The compiled sweep, never jumping branch silently.

    Where the positions at a time come out on another branch than the previous time's (the
    sign of det Phi_q changes), the step is solved again in 2, 4, ... 2**BRANCH_HALVINGS
    sub-steps. If the sub-steps stay on the branch, the positions had jumped across a
    nearby limit position (the predictor overshoots there) and the sub-steps' end is taken
    (stats "branch_retries"). If the sign still changes across the smallest sub-step, the
    branch itself passes a singular configuration: a branch change, whose input value is
    recorded, and the sweep goes on with the new sign. With ``step_over``, samples on a
    singular configuration are stepped over (below); the sweeps made for that do not step
    over themselves, so that nothing recurses deeper than one level whatever the number of
    samples. Returns (status, rows done, (Q, V, A, rcond, sign), stats, branch changes)."""
    nt = len(times)
    stats = dict(factorizations=0, newton_iterations=0, branch_retries=0)
    changes = []

    def run_sweep(ts, q, sign, report=None):
        st, d, part, sw = _sweep(model, ts, q, tol, max_iterations, run, report, sign)
        stats["factorizations"] += sw.factorizations
        stats["newton_iterations"] += sw.iterations
        return st, d, part

    # The first sweep's arrays (one row per time) are the output: the rows it could not
    # reach are written below where the branch is followed further (3.8 MB at 3601
    # positions of the Jansen linkage, allocated and copied twice before).
    st, done, out = run_sweep(times, q_start, sign0, progress)
    pos = done
    while STATUS[st] == "branch change" and pos > 0:
        t0, t1 = float(times[pos - 1]), float(times[pos])
        q0, s0 = out[0][pos - 1], int(out[4][pos - 1])
        row = None
        for level in range(1, BRANCH_HALVINGS + 1):
            sub = np.linspace(t0, t1, 2**level + 1)
            st, d, sp = run_sweep(sub, q0, s0)
            if st == 0:
                stats["branch_retries"] += 1
                row = tuple(a[-1] for a in sp)
                break
            if STATUS[st] != "branch change":
                break
        if row is None and STATUS[st] == "branch change":
            # The sign changes between two inputs 2**-BRANCH_HALVINGS of a step apart: the
            # branch's own singular configuration. Accept the new sign from there.
            # (The sweep restarts at sub[d] from the position at sub[d - 1]: its first row
            # sets the new sign.)
            changes.append(0.5 * (float(sub[d - 1]) + float(sub[d])))
            st, d2, sp2 = run_sweep(sub[d:], sp[0][d - 1], 0)
            if st == 0:
                row = tuple(a[-1] for a in sp2)
        if row is None:
            break       # a limit in the step (the caller's bisection) or a singular sample
        for a, b in zip(out, row):
            a[pos] = b
        pos += 1
        if pos == nt:
            st = 0
            break
        # Go on from the accepted row (solved again, for the predictor's v and a).
        st, d, part = run_sweep(times[pos - 1:], out[0][pos - 1], int(out[4][pos - 1]))
        for a, b in zip(out, part):
            a[pos:pos + d - 1] = b[1:d]
        if d == 0:
            break
        pos += d - 1
    # A sample that falls on a singular configuration (a change point where branches cross)
    # leaves the next step no tangent to follow: Newton may take either branch from there,
    # or none. Step over it from the row before, with an intermediate input that avoids the
    # sample (and its sub-steps do too); where that ends elsewhere, or the sweep had stopped
    # right after the sample, go on from there.
    scale = max(1.0, float(np.abs(out[0][:pos]).max())) if pos else 1.0
    j = 1
    while step_over and (j < pos - 1 or (j == pos - 1 and st != 0 and pos < nt)):
        if not out[3][j] < SAMPLE_SINGULAR:
            j += 1
            continue
        t_mid = times[j] + 0.37 * (times[j + 1] - times[j])
        st2, d2, part2, stats2, ch2 = _tracked_sweep(
            model, np.array([times[j - 1], t_mid, times[j + 1]]), out[0][j - 1], tol,
            max_iterations, run, sign0=int(out[4][j - 1]), step_over=False)
        for key in stats:
            stats[key] += stats2[key]
        if st2 == 0 and (j + 1 == pos or
                         np.abs(part2[0][2] - out[0][j + 1]).max() > 1e-8 * scale):
            # The rest again from there; its singular samples are this loop's next j.
            st3, d3, part3, stats3, ch3 = _tracked_sweep(model, times[j + 1:], part2[0][2],
                                                         tol, max_iterations, run,
                                                         sign0=int(part2[4][2]),
                                                         step_over=False)
            for key in stats:
                stats[key] += stats3[key]
            for a, b in zip(out, part3):
                a[j + 1:j + 1 + d3] = b[:d3]
            ahead = (lambda c: c > times[j]) if times[-1] > times[0] else (
                lambda c: c < times[j])
            changes = [c for c in changes if not ahead(c)] + list(ch2) + list(ch3)
            pos, st = j + 1 + d3, st3
        j += 1
    return st, pos, out, stats, tuple(changes)


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
        result = _kinematics(model, times, q0, tol, singular_rcond, on_singular,
                             max_iterations, progress, redundant, at_limit)
        if result.status == "interrupted":
            stop.consume()
    return result


def _kinematics(model, times, q0, tol, singular_rcond, on_singular, max_iterations, progress,
                redundant, at_limit) -> KinematicsResult:
    """kinematics, inside its Ctrl-C guard."""
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
            model, t, q_start, tol, max_iterations, run, progress)
        if done == 0 and STATUS[status] != "interrupted":
            q_start = None
    if q_start is None:
        q_start = consistent_state(model, q=q0, t=float(t[0]), hold=(), state=state0,
                                   redundant=redundant).q
        tic = _time.perf_counter()
        if model.nc != model.nq:
            return _least_squares_sweep(model, t, q_start, tol, max_iterations, run,
                                        singular_rcond, on_singular)
        status, done, out, stats, changes, last = _stepped_sweep(
            model, t, q_start, tol, max_iterations, run, progress)
    limits = ()
    if at_limit == "reverse" and status != 0 and done > 0 and STATUS[status] not in (
            "interrupted", "non-finite"):
        t, out, done, status, limits, more = _reverse_at_limits(
            model, t, out, done, status, tol, max_iterations, run, stats)
        changes += more
    Q, V, A, rc, signs = out
    stats["sweep_seconds"] = _time.perf_counter() - tic

    singular = _singularities(model, t, Q, rc, done, singular_rcond, run)
    stop = None
    interrupted = STATUS[status] == "interrupted"
    if interrupted:
        warnings.warn(f"linkdyn: kinematic sweep interrupted after {done} of {t.size} times; "
                      "the result holds what was computed", RuntimeWarning, stacklevel=3)
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
    return result


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
        raise ModelError(f"model {model.name!r} is {kind}: {dofs} and {drivers}; kinematic "
                         f"analysis needs one driver per degree of freedom{hint}")
    if on_singular not in ("raise", "continue"):
        raise ArgumentError(f"on_singular must be 'raise' or 'continue', got {on_singular!r}")
    if at_limit not in ("raise", "reverse"):
        raise ArgumentError(f"at_limit must be 'raise' or 'reverse', got {at_limit!r}")
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
