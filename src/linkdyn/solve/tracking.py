"""Following a branch of positions along a kinematic sweep (linkdyn.solve.kinematics): the
compiled sweep itself, the sub-steps where the given times are too coarse to follow, the
retries where positions jump to another branch, the steps over samples on a singular
configuration, and the bisection and reversal at limit positions. Their policy is described
in :mod:`linkdyn.solve.kinematics`; the functions here return the sweep's arrays
``(Q, V, A, rcond, sign)`` row by row, followed by the parameters' derivatives of Q, V and A
where a :class:`linkdyn._kinematics.DerivativePlan` is given (``plan``): every row solved,
whatever the path that reached it, carries its derivatives, formed in the same compiled
sweep with the factors that solved its velocities and accelerations."""

from __future__ import annotations

import numpy as np

from .._kinematics import STATUS, KinematicSweep, SensitivitySweep
from .._progress import Reporter
from ..compile.model import Model, check_output_size
from ..errors import ModelError
from .interrupt import requested
from . import lu_code

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


def _reverse_at_limits(model, t, out, done, status, tol, max_iterations, run, stats,
                       plan=None):
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
                                               sign0=int(Sm[0]), plan=plan)
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
    arrays = tuple(np.concatenate([p[i] for p in parts]) for i in range(len(out)))
    if total < len(t):
        # The next input of the schedule, for the stop's bisection and message.
        t_all = np.append(t_all, t_all[-1] + sign * steps[total - 1])
    return t_all, arrays, total, status, tuple(limits), tuple(changes)


def derivative_arrays(rows, nq, p, order) -> tuple:
    """Zero dq, dv, da (rows, nq, p) for a DerivativePlan of ``order``; those above it have
    no columns (the sweep leaves them alone)."""
    return tuple(np.zeros((rows, nq, p if k <= order else 0)) for k in range(3))


#: The compiled sweep's status for Ctrl-C.
INTERRUPTED = next(k for k, v in STATUS.items() if v == "interrupted")


def _sweep(model, times, q_start, tol, max_iterations, run, progress=None, sign0=0,
           plan=None):
    """One compiled sweep: (status, rows done, (Q, V, A, rcond, sign), the sweep); with a
    ``plan``, the arrays are followed by the rows' derivatives dQ, dV, dA (rows, nq, p; those
    above the plan's order have no columns)."""
    n = model.nq
    p = plan.p if plan is not None else 0
    check_output_size(len(times), 3 * n * (1 + p) + 1, f"kinematics of model {model.name!r}")
    out = tuple(np.empty((len(times), n)) for _ in range(3)) + (
        np.empty(len(times)), np.zeros(len(times), dtype=np.int8))
    if plan is None:
        sweep = KinematicSweep(run)
    else:
        derivatives = derivative_arrays(len(times), n, p, plan.order)
        out += derivatives
        sweep = SensitivitySweep(run)
        sweep.attach(plan, *derivatives)
    lu_code.attach(sweep, float(times[0]) if len(times) else 0.0, q_start)
    table = _law_table(model, times)
    reporter = None
    if progress is not None:
        def read():
            k = sweep.solved
            return (float(times[k - 1]) if k else float(times[0])), int(k)
        reporter = Reporter(read, progress)
    try:
        status, done = sweep.sweep(times, q_start, *out[:5], tol, max_iterations, table,
                                   sign0)
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


def _stepped_sweep(model, times, q_start, tol, max_iterations, run, progress=None,
                   plan=None):
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
                                                   run, progress, plan=plan)
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
                                               max_iterations, run, sign0=int(out[4][k0]),
                                               plan=plan)
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
                   step_over=True, plan=None):
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
    stats = dict(factorizations=0, generated_factorizations=0, newton_iterations=0,
                 branch_retries=0)
    changes = []

    def run_sweep(ts, q, sign, report=None):
        st, d, part, sw = _sweep(model, ts, q, tol, max_iterations, run, report, sign, plan)
        stats["factorizations"] += sw.factorizations
        stats["generated_factorizations"] += sw.generated_factorizations
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
            max_iterations, run, sign0=int(out[4][j - 1]), step_over=False, plan=plan)
        for key in stats:
            stats[key] += stats2[key]
        if st2 == 0 and (j + 1 == pos or
                         np.abs(part2[0][2] - out[0][j + 1]).max() > 1e-8 * scale):
            # The rest again from there; its singular samples are this loop's next j.
            st3, d3, part3, stats3, ch3 = _tracked_sweep(model, times[j + 1:], part2[0][2],
                                                         tol, max_iterations, run,
                                                         sign0=int(part2[4][2]),
                                                         step_over=False, plan=plan)
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

