"""One run of :func:`linkdyn.simulate`, in the shape of IDA's step loop: prepare the run
(:class:`DynamicsRun` takes a consistent start, makes the per-run state of the kernels, the
contact modes, the compiled integrator and the output sink), integrate between stops
(:meth:`DynamicsRun.integrate`: controller samples, events, contact mode switches), finish
(:meth:`DynamicsRun.finish`: the result, or the failure carrying the partial result).

Everything here belongs to the run, never to the model: a model can serve many runs at once.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from .._bdf import STATUS, BDFIntegrator
from .._progress import Reporter
from ..compile.model import Model
from ..elements.events import (ARC, BACK, CONTACT, FRICTION_SLIP, FRICTION_STOP, PASS,
                               EventRecord, compile_events)
from ..elements.friction import ContactModes
from ..elements.records import reference_angles
from ..errors import (ConvergenceError, ForceElementError, InterruptedWarning, ModelError,
                      NonFiniteError, SimulationError, SingularJacobianError, StepSizeError,
                      ToleranceWarning)
from ..results.output import RecordedSeries, WholeRows
from ..results.simulation import SimulationResult
from .assembly import consistent_state, describe_rows, nearly_singular_rows
from . import generated, lu_code
from .control import apply_controller
from .interrupt import StopRequest
from .redundant import dependent_rows, least_norm_multipliers
from .run_options import RunOptions

__all__ = ["DynamicsRun", "BDF_REGULARIZATION", "OUTPUT_REGULARIZATION",
           "constraint_violation"]

#: The integrator's regularisation with redundant="allow" (ld_bdf.c, "Redundant constraints").
BDF_REGULARIZATION = 1e-12
OUTPUT_REGULARIZATION = 1e-8

#: Events after which the contacts decide their modes again (linkdyn.friction).
MODE_EVENTS = (CONTACT, FRICTION_STOP, FRICTION_SLIP, PASS, BACK, ARC)

#: How far the output rows may violate the constraints, in (atol + rtol max|q|), and each
#: row in the violation that errors of atol + rtol |q_j| in its coordinates would make
#: (stats "max_output_row_ratio"; csrc/ld_run.c, track_output_phi). Measured on every
#: built-in, both methods, rtol = atol from 1e-3 to 1e-13 over 1 s: up to 3.6 and 1.5.
LIMIT_PHI = 10.0

#: The local tolerance's floor in units of eps max(1, max|q0|) (LD_LOCAL_FLOOR in
#: csrc/ld_work.h), and the largest floor a run accepts: beyond it (coordinates beyond
#: some 4.5e10) no error test is left, and the coordinates' rounding (eps |q|) comes near
#: the mechanism's own size.
LOCAL_FLOOR = 100.0
MAX_LOCAL_FLOOR = 1e-3

# Integrator status codes (csrc/ld_bdf.h): 0 on, 1 interrupted, 2 at a terminal event; and
# this module's own: the contacts chatter at one instant.
GOING, INTERRUPTED, AT_EVENT = 0, 1, 2
CHATTERING = -100

#: Chattering (a Zeno point of the contact modes): this many mode switches in a row while
#: the run gets no further than CHATTER_WINDOW max(1, |t|) seconds. Measured on the walker
#: (gait 1, 2 s): at rtol 1e-8 27 events, none closer than 1e-3 s; at rtol 1e-6 a storm of
#: 5,400 switches within 1e-7 s that passes; at rtol 1e-4 one that creeps 3e-8 s per 50,000
#: steps and never passes. Events closer than 1e-7 s are far below the time scales of a
#: mechanism; 20,000 of them in a row are a chattering point, not a motion.
CHATTER_SWITCHES, CHATTER_WINDOW = 20_000, 1e-7


class DynamicsRun:
    """The per-run state of one simulation and the loop that advances it. ``sensitivity``
    (:mod:`linkdyn.design.dynamic_sensitivity`): forward sensitivities integrated along,
    an object with ``members``, ``start``, ``member``, ``weight``, ``scale`` (csrc/ld_bdf.h,
    ld_sensitivity) and ``s0`` (np, 2, nq); their rows are kept in ``sensitivity_rows``."""

    def __init__(self, model: Model, opt: RunOptions, sensitivity=None):
        self.model, self.opt, self.sensitivity = model, opt, sensitivity
        self.sensitivity_rows = None
        self.dropped = np.zeros(0, dtype=np.intp)     # dependent rows switched off
        self.state = consistent_state(model, q=opt.q0, v=opt.v0, t=opt.t0, hold=opt.hold,
                                      redundant=opt.redundant)
        check_coordinate_range(model, self.state.q)
        # Per-run state: reference angles start at the consistent state's angles on the
        # branch of the guesses; the tracked coordinates start there too.
        rec0 = self._start_records()
        self.run = model.kernels.run_state(reference_angles(model.kernels.arrays,
                                                            self.state.q, rec0[:, 0]))
        info = model.force_info
        self.friction = (ContactModes(model, self.run, opt.swinging, opt.t0)
                         if info["contacts"] or info["frictions"] else None)
        self.z0 = np.concatenate([np.zeros(info["nrec"] + info["nload"]), rec0[:, 0],
                                  np.zeros(model.kernels.nz - 2 * info["nrec"]
                                           - info["nload"])])   # the drivers' work
        self.ev = compile_events(model, opt.events)
        self.run.set_events(self.ev)
        regularization = self._drop_redundant_rows() if opt.allow_redundant else 0.0
        self.integ = BDFIntegrator(
            self.run, opt.rtol, opt.atol, h_init=opt.h_init, h_max=opt.h_max,
            max_order=opt.max_order, max_steps=opt.max_steps, newton_tol=opt.newton_tol,
            project_output=opt.project_output, proportional=opt.proportional,
            event_tol=opt.event_tol,
            regularization=regularization,
            output_regularization=OUTPUT_REGULARIZATION,
            stop_when_full=opt.series is not None, method=opt.method,
            column_ordering=model.column_ordering,
            # Method auto's cost trials (csrc/ld_run.c) stay off where compliant contacts
            # are: at their onsets the BDF's velocity error is larger than the explicit
            # method's, and the cheaper method would be the less accurate one.
            cost_trials=not info["contacts"],
            sensitivities=None if sensitivity is None else (
                sensitivity.members, sensitivity.start, sensitivity.member,
                sensitivity.weight, sensitivity.scale))
        # What the run records besides the rows: controller samples, events, impacts.
        self.samples, self.held, self.active = [], [], []
        self.records, self.impacts = [], []
        self.control_seconds, self.restarts = 0.0, 0
        self.code_seconds = 0.0     # building or loading straight-line Schur code
        self.sink = (WholeRows(opt.times, self.integ.n) if opt.series is None else
                     RecordedSeries(opt.times, self.integ.n, opt.series, self._reduce))
        self.start = None
        self.stop = StopRequest()       # Ctrl-C between compiled calls (integrate())
        # Mode switches since the run last got further (chattering detection).
        self.switches, self.t_high, self.chatter = 0, opt.t0, None

    def _drop_redundant_rows(self) -> float:
        """(redundant="allow") Switch off the rows that depend on the others at the start
        (linkdyn.solve.redundant); the regularisation the integrator then needs: none,
        or BDF_REGULARIZATION for a model too large for the rank-revealing factorisation
        and for a run with sensitivities (whose rows cannot be switched: ld_sens.c)."""
        if self.sensitivity is not None:
            return BDF_REGULARIZATION
        drop = dependent_rows(self.model, self.state.q, self.opt.t0, state=self.run)
        if drop is None:
            return BDF_REGULARIZATION
        if drop.size:
            self.run.deactivate_rows(drop)
        self.dropped = drop
        return 0.0

    def _start_records(self) -> np.ndarray:
        """The force records' coordinates at the start (a force element whose direction is
        undefined there raises ForceElementError)."""
        model, t0 = self.model, self.opt.t0
        try:
            rec0, _ = model.kernels.force_values(self.state.q, self.state.v, t0)
        except ValueError as exc:
            owner = _owner(model, exc.args[1])
            raise ForceElementError(
                f"model {model.name!r}: force element '{owner}' cannot be evaluated at "
                f"t = {t0:.9g} s: its two points coincide, where the direction of its force "
                "is undefined", t0, 0.0, None, owner) from None
        return rec0

    def _reduce(self, t, rows, first):
        """A Record's series of a block of output rows."""
        part = self._result(t, rows, {}, GOING, first)
        return {(a, n): (getattr(part, a) if n is None else getattr(part, a)(n))
                for a, n, _ in self.opt.series}

    # -- integrate between stops -----------------------------------------------------------
    def integrate(self) -> int:
        """Run to t_end, or to a terminal event, an interrupt or a failure: its status."""
        opt, integ = self.opt, self.integ
        self.start = time.perf_counter()
        reporter = (Reporter(lambda: (float(integ.t), int(integ.stats()["steps"])),
                             opt.progress) if opt.progress is not None else None)
        # Ctrl-C while Python runs between compiled calls (events, mode decisions,
        # controller samples) is a request that _advance polls (see .interrupt): the run
        # stops there with what it computed.
        with StopRequest() as self.stop:
            try:
                status = self._initialise()
                k = 0
                while status == GOING:
                    target = self._next_stop(k)
                    status = self._advance(target)
                    if status != GOING or target == opt.t_end:
                        break
                    k += 1
                    if self._sample(target, integ.state()):
                        self.restarts += 1
                        status = integ.restart()
                    if self.stop.requested:     # pressed during the controller's sample
                        status = INTERRUPTED
                if status == AT_EVENT:
                    status = self._stop_at_event()
            except KeyboardInterrupt:     # a second Ctrl-C, or one outside the main thread
                status = INTERRUPTED
            except SimulationError as exc:
                # A controller's failure, or a failure found between compiled calls (a
                # contact decision on a non-finite state): with the rows computed so far.
                if exc.result is None:
                    exc.result = self._finish_result(GOING, self.opt.controller is not None)
                raise
            finally:
                if reporter is not None:
                    reporter.stop()
            if status == INTERRUPTED:
                self.stop.consume()
        return status

    def _initialise(self) -> int:
        """The first controller sample, the contacts' first modes, the integrator's start."""
        opt, state = self.opt, self.state
        # Straight-line Schur code where it can be built (a compilation, the first time):
        # a Ctrl-C meanwhile stops the run at its first step, as one pressed during it.
        c0 = time.perf_counter()
        generated.attach(self.integ)
        if opt.method == "bdf":     # and the BDF's LU factorisation of its iteration matrix
            lu_code.attach_integrator(self.integ, opt.t0, state.q)
        self.code_seconds = time.perf_counter() - c0
        self.integ.stop_requested = self.stop.requested
        if opt.controller is not None:
            self._sample(opt.t0, np.concatenate([state.q, state.v]))
        v_start = state.v
        if self.friction is not None:
            v_start = self.friction.decide(opt.t0, state.q, state.v)
        status = self.integ.init(opt.t0, state.q, v_start, self.z0)
        if status == GOING and self.sensitivity is not None:
            status = self.integ.init_sensitivities(self.sensitivity.s0)
        return status

    def _next_stop(self, k: int) -> float:
        """Where the integrator stops next: the next controller sample, or t_end."""
        opt = self.opt
        if opt.controller is not None:
            t_next = opt.t0 + (k + 1) * opt.control_period
            if t_next < opt.t_end - 1e-9 * opt.control_period:
                return t_next
        return opt.t_end

    def _sample(self, t, y_now) -> bool:
        """A controller sample at t: whether an input changed (the forces jump)."""
        c0 = time.perf_counter()
        changed = apply_controller(self.model, self.opt.controller, t, y_now, self.run)
        self.control_seconds += time.perf_counter() - c0
        ninput = self.model.kernels.ninput
        self.samples.append(t)
        self.held.append(self.run.inputs[:ninput].copy())
        self.active.append(self.run.active[:ninput].copy())
        return changed

    def _advance(self, target) -> int:
        """Integrate to target through the non-terminal events; AT_EVENT after a terminal
        one."""
        while True:
            status = self.sink.integrate(self.integ, target)
            if (self.integ.interrupted or self.stop.requested) and \
                    status in (GOING, AT_EVENT) and not (
                    status == GOING and target == self.opt.t_end):
                return INTERRUPTED
            if status != AT_EVENT:
                return status
            t_ev, fired = self.integ.event()
            stop = self._record_events(t_ev, fired)
            restarted = False
            if self.friction is not None and any(self.ev["kind"][k] in MODE_EVENTS
                                                 for k in np.flatnonzero(fired)):
                if self._chattering(t_ev, fired):
                    return CHATTERING
                status = self._switch_modes(t_ev, fired)
                if status != GOING:
                    return status
                restarted = True
            if stop:
                return AT_EVENT
            if self.opt.event_rows:
                # The event's state, consistent (a restart there), as a row of its own.
                status = GOING if restarted else self.integ.restart()
                if status != GOING:
                    return status
                self.sink.append(float(self.integ.t), self.integ.state())

    def _record_events(self, t_ev, fired) -> bool:
        """Record the events that fired at t_ev; whether one of them is terminal."""
        model, ev, run = self.model, self.ev, self.run
        stop = False
        for k in np.flatnonzero(fired):
            if ev["kind"][k] == CONTACT and self.friction.switched_off(ev["record"][k]):
                continue   # the circle of a swinging contact passing through its line
            self.records.append(EventRecord(float(t_ev), ev["events"][k].name, int(fired[k])))
            stop = stop or ev["events"][k].terminal
            if ev["kind"][k] == CONTACT and fired[k] > 0:
                # Onset: the approach speed sets Lankarani-Nikravesh damping (per run).
                s_now = self.integ.state()
                rec, _ = model.kernels.force_values(s_now[:model.nq],
                                                    s_now[model.nq:2 * model.nq], t_ev, run)
                r = ev["record"][k]   # the penetration's rate: -sense s'
                run.impact[r] = -model.kernels.arrays["rec_law_sense"][r] * rec[r, 1]
                self.impacts.append((float(t_ev), ev["events"][k].name,
                                     float(run.impact[r])))
        return stop

    def _chattering(self, t_ev, fired) -> bool:
        """Whether the contacts keep switching modes without the run getting further: a
        chattering (Zeno) point that no step size resolves. Records what chatters."""
        if t_ev > self.t_high + CHATTER_WINDOW * max(1.0, abs(self.t_high)):
            self.t_high, self.switches = float(t_ev), 0
            return False
        self.switches += 1
        if self.switches < CHATTER_SWITCHES:
            return False
        recent = {r.name for r in self.records[-CHATTER_SWITCHES:]}
        contacts = sorted({self.ev["events"][k].target for k in np.flatnonzero(fired)}
                          | {n.split("/")[0] for n in recent})
        self.chatter = (float(t_ev), contacts, sorted(recent))
        return True

    def _switch_modes(self, t_ev, fired) -> int:
        """Contacts change modes (linkdyn.friction): decide, restart from the state with the
        velocity of sticking contacts made consistent."""
        nq, ev = self.model.nq, self.ev
        y_now = self.integ.state()
        breaking = {ev["events"][k].target for k in np.flatnonzero(fired)
                    if ev["kind"][k] == FRICTION_SLIP}
        crossed = {int(ev["record"][k]): int(fired[k]) for k in np.flatnonzero(fired)
                   if ev["kind"][k] == CONTACT}
        v_now = y_now[nq:2 * nq]
        v_new = self.friction.decide(t_ev, y_now[:nq], v_now, breaking, self.sink.written,
                                     crossed)
        if v_new is v_now:        # no velocity moved: a plain restart (sensitivities go on)
            return self.integ.restart()
        return self.integ.restart_at(y_now[:nq], v_new)

    def _stop_at_event(self) -> int:
        """Stopped at a terminal event: the last row is the event state, made consistent
        (multipliers from the index-1 equations) by a restart there."""
        integ, sink = self.integ, self.sink
        status = integ.restart()
        if sink.written == 0 or integ.t > sink.last_t:
            sink.append(float(integ.t), integ.state())
        return AT_EVENT if status == GOING else status

    # -- finish ----------------------------------------------------------------------------
    def finish(self, status: int) -> SimulationResult:
        """The result; a warning if interrupted; the failure (with the partial result)
        raised."""
        result = self._finish_result(status, self.opt.controller is not None)
        self._say_floored_tolerance(result.stats)
        result.stats["redundant_rows"] = tuple(self.model.constraint_names[i]
                                               for i in self.dropped)
        if status in (GOING, AT_EVENT):
            qmax = np.abs(result.q if result.q is not None else self.state.q).max()
            failure = (constraint_violation(result, self.opt.rtol, self.opt.atol, float(qmax))
                       or dropped_rows_violation(result, self.dropped, self.opt.rtol,
                                                 self.opt.atol, float(qmax)))
            if failure is not None:
                raise failure
        if status == CHATTERING:
            t, contacts, events = self.chatter
            raise SimulationError(
                f"model {self.model.name!r}: contact{'s' if len(contacts) > 1 else ''} "
                f"{', '.join(repr(c) for c in contacts)} switched modes "
                f"{CHATTER_SWITCHES} times without the run getting past t = {t:.9g} s "
                f"(events {', '.join(events)}): a chattering (Zeno) point of the contact and "
                "friction model that the run cannot pass. Tighter rtol and atol, or a "
                "larger stick_velocity of the contact, usually let it through", t, 0.0,
                result, tuple(contacts))
        if status == INTERRUPTED:
            warnings.warn(f"linkdyn: simulation interrupted at t = {self.integ.t:.6g} s; the "
                          f"result holds the {len(result.t)} output rows computed so far",
                          InterruptedWarning, stacklevel=3)
        elif status not in (GOING, AT_EVENT):
            raise _failure(self.model, self.integ, status, result, self.run,
                           self.opt.max_steps)
        return result

    def _say_floored_tolerance(self, stats) -> None:
        """A tolerance is never floored silently: where the local error test stops at the
        round-off floor (ld_bdf.c: 100 eps max(1, max|q0|)) above the rtol the transform
        asks for, say what was used and why (ToleranceWarning; stats["tolerance_floored"])."""
        wanted, used, atol, _ = floor_factor(stats)
        stats["tolerance_floored"] = bool(used > wanted)
        if stats["tolerance_floored"]:
            qmax = float(np.abs(self.state.q).max()) if self.model.nq else 0.0
            warnings.warn(
                f"linkdyn: model {self.model.name!r}: the local error test uses rtol "
                f"{used:.3g} (atol {atol:.3g}) instead of {wanted:.3g}: that is "
                f"the round-off floor 100 eps max(1, max|q|) of a model whose coordinates "
                f"reach {qmax:.3g}; below it the steps would chase rounding errors. The "
                "global error is that of a looser rtol (linkdyn.estimate_error measures it)",
                ToleranceWarning, stacklevel=4)

    def _finish_result(self, status, controlled) -> SimulationResult:
        """The run's result from its output sink, with its stats."""
        elapsed = (time.perf_counter() - self.start - self.control_seconds -
                   self.code_seconds)
        stats = self.integ.stats()
        stats["schur_code_seconds"] = self.code_seconds     # not in integration_seconds
        stats["output_seconds"] += self.sink.seconds
        stats["integration_seconds"] = max(0.0, elapsed - stats["output_seconds"])
        if controlled:
            stats.update(controller_samples=len(self.samples),
                         controller_restarts=self.restarts,
                         controller_seconds=self.control_seconds)
        if self.model.force_info["frictions"]:
            stats["friction_decisions"] = self.friction.decisions
        t, rows = self.sink.result()
        if self.sensitivity is not None:
            width = rows.shape[1] - 2 * self.model.nq * self.integ.np
            self.sensitivity_rows = rows[:, width:]
            rows = rows[:, :width]
        if isinstance(self.sink, WholeRows):
            return self._result(t, rows, stats, status)
        return self._result(t, None, stats, status, recorded=rows)

    def _result(self, t, rows, stats, status, first=0, recorded=None) -> SimulationResult:
        """A result of whole rows (q, v, lam, stick multipliers, z), or with ``rows`` None of
        ``recorded`` series. ``first``: the index in the run of the first row (the friction
        modes' row changes before it apply from row 0)."""
        model, friction = self.model, self.friction
        nq, nc = model.nq, model.nc
        ns = len(model.force_info["frictions"])
        ninput = model.kernels.ninput
        changes = ()
        if friction is not None:
            changes = tuple((max(0, row - first), *rest) for row, *rest in friction.row_changes)
        if rows is not None and self.dropped.size:
            least_norm_multipliers(model, rows[:, :nq], rows[:, 2 * nq:2 * nq + nc], t,
                                   self.dropped, state=self.run)
        columns = (dict(q=None, v=None, lam=None, z=None, stick_lam=None) if rows is None else
                   dict(q=rows[:, :nq], v=rows[:, nq:2 * nq], lam=rows[:, 2 * nq:2 * nq + nc],
                        z=rows[:, 2 * nq + nc + ns:],
                        stick_lam=rows[:, 2 * nq + nc:2 * nq + nc + ns] if ns else None))
        samples = self.samples
        return SimulationResult(
            model=model, t=t, stats=stats, **columns,
            status={INTERRUPTED: "interrupted", AT_EVENT: "event"}.get(status, "success"),
            events=tuple(self.records), impacts=tuple(self.impacts),
            friction_modes=tuple(friction.history) if friction is not None else (),
            _friction_rows=changes, recorded=recorded,
            control_t=np.array(samples, dtype=float),
            control_inputs=np.array(self.held, dtype=float).reshape(len(samples), ninput),
            control_active=np.array(self.active, dtype=np.intc).reshape(len(samples), ninput))


def check_coordinate_range(model: Model, q) -> None:
    """ModelError for a model whose coordinates reach so far from the origin that the local
    error test's round-off floor (LOCAL_FLOOR eps max|q|) passes MAX_LOCAL_FLOOR: a run
    there controls no error (a bar 1e16 m out came back torn, |u|^2 - 1 = 2.4, before the
    output rows' own test caught it). Names the coordinate."""
    if not len(q):
        return
    k = int(np.argmax(np.abs(q)))
    floor = LOCAL_FLOOR * np.finfo(float).eps * max(1.0, abs(float(q[k])))
    if floor > MAX_LOCAL_FLOOR:
        name = model.coordinate_names[k]
        raise ModelError(
            f"model {model.name!r}: coordinate {name!r} is {q[k]:.3g}, so far from the "
            f"origin that the coordinates' rounding ({np.finfo(float).eps * abs(q[k]):.3g}) "
            f"leaves the error test a floor of {floor:.3g} relative ({LOCAL_FLOOR:g} eps "
            f"max|q|; at most {MAX_LOCAL_FLOOR:g} is accepted, coordinates up to "
            f"{MAX_LOCAL_FLOOR / (LOCAL_FLOOR * np.finfo(float).eps):.2g}): place the "
            "mechanism near the origin (its ground points and bodies shifted together)",
            name.split(".")[0])


def floor_factor(stats) -> tuple:
    """(the local rtol the transform asked for, the one the error test used, its atol, and
    how many times looser than asked it ran: 1 where not floored; csrc/ld_bdf.c,
    set_tolerances)."""
    wanted, used, atol = stats["transformed_rtol"], stats["local_rtol"], stats["local_atol"]
    if stats["rk_steps"] and not stats["bdf_steps"]:
        # only the explicit method ran: its test is floored alike (ld_rk.c)
        wanted, used, atol = (stats["rk_transformed_rtol"], stats["rk_local_rtol"],
                              stats["rk_local_atol"])
    return wanted, used, atol, max(1.0, used / wanted) if wanted > 0 else 1.0


def constraint_violation(result, rtol, atol, qmax) -> SimulationError | None:
    """The error for a run whose output rows break the constraints by more than the
    tolerances allow, or None. The integrator keeps the largest |Phi| of its output rows
    (stats "max_output_phi", max-norm, and its time; csrc/ld_run.c): measured up to
    1.2 (atol + rtol max|q|) at rtol = atol from 1e-6 to 0.03 on the Jansen and IFToMM A02
    linkages. Ten times that means the run did not hold the mechanism together, and its
    result is not returned as if it had. Each row is also held to its own terms (stats
    "max_output_row_ratio", see LIMIT_PHI; a unit vector's row is of order 1 wherever its
    body is), looser by as much as the round-off floor loosened the error test."""
    stats, name = result.stats, result.model.name
    worst, at = stats["max_output_phi"], stats["max_output_phi_t"]
    bound = LIMIT_PHI * (atol + rtol * qmax)
    if not worst <= bound:
        return SimulationError(
            f"model {name!r}: the output violates the constraints by {worst:.3g} at "
            f"t = {at:.9g} s, more than the tolerances allow ({bound:.3g} = {LIMIT_PHI:g} "
            "(atol + rtol max|q|)): the mechanism came apart; use tighter rtol and atol",
            float(at), 0.0, result, ())
    ratio, row = stats["max_output_row_ratio"], stats["max_output_row"]
    limit = LIMIT_PHI * floor_factor(stats)[3]
    if row < 0 or ratio <= limit:
        return None
    at = stats["max_output_row_ratio_t"]
    row = result.model.constraint_names[row]
    return SimulationError(
        f"model {name!r}: the output violates constraint {row!r} at t = {at:.9g} s by "
        f"{ratio:.3g} times what errors of atol + rtol |q| in its coordinates would make "
        f"(at most {limit:.3g} is allowed): the mechanism came apart; use tighter rtol and "
        "atol", float(at), 0.0, result, (row,))


def dropped_rows_violation(result, dropped, rtol, atol, qmax) -> SimulationError | None:
    """The error for a run whose dependent rows, switched off at its start, no longer
    hold at its output rows (the constraints' rank changed on the way: the rows were
    implied at the start only), or None. Same bound as the kept rows' norm test."""
    if not len(dropped) or result.q is None or not len(result.t):
        return None
    model, bound = result.model, LIMIT_PHI * (atol + rtol * qmax)
    for k, (t, q) in enumerate(zip(result.t, result.q)):
        phi = np.abs(model.phi(q, float(t))[dropped])
        if phi.max() > bound:
            names = [model.constraint_names[dropped[i]] for i in np.argsort(-phi)[:5]]
            return SimulationError(
                f"model {model.name!r}: the redundant rows dropped at the start "
                f"({', '.join(map(repr, names))}) are violated by {phi.max():.3g} at "
                f"t = {t:.9g} s, more than the tolerances allow ({bound:.3g}): the "
                "constraints' rank changed during the run, so the other rows no longer "
                "imply them", float(t), 0.0, result, tuple(names))
    return None


def _owner(model: Model, record: int) -> str:
    """The force element a kernel record belongs to."""
    return next(name for name, (recs, _) in model.force_info["elements"].items()
                if record in recs)


def _failure(model: Model, integ: BDFIntegrator, status: int, result, run,
             max_steps: int = 0) -> SimulationError:
    t, h, index = integ.failure()
    where = f"at t = {t:.9g} s with step h = {h:.3g} s"
    if status == -8 and run.fail >= 0:
        owner = _owner(model, run.fail)
        return ForceElementError(
            f"model {model.name!r}: force element '{owner}' cannot be evaluated {where}: its "
            "two points coincide, where the direction of its force is undefined", t, h,
            result, owner)
    if status == -6:
        names = []
        if 0 <= index < model.nq:
            names = [model.coordinate_names[index]]
        elif index >= model.nq:
            names = [model.constraint_names[index - model.nq]]
        detail = (f"; the zero pivot is at {'coordinate' if index < model.nq else 'constraint'} "
                  f"{names[0]}" if names else "")
        return SingularJacobianError(
            f"model {model.name!r}: the iteration matrix is singular {where}: the constraint "
            f"Jacobian lost rank (a singular configuration or redundant constraints){detail}",
            t, h, result, names)
    cls = {-4: StepSizeError, -5: ConvergenceError, -7: NonFiniteError}.get(status,
                                                                            SimulationError)
    detail, names = "", []
    if status == -3:
        detail = (f": the run's step budget, max_steps = {max_steps}, is spent (a larger "
                  "max_steps, or 0 for none, lets it go on)")
    if status in (-4, -5):
        y = integ.state()
        rc, names = nearly_singular_rows(model, y[:model.nq], float(integ.t), run,
                                         threshold=1e-6)
        names = list(names)
        if names:
            drivers = [n for n in names if n in model.driver_names]
            what = (f"the driver{'s' if len(drivers) > 1 else ''} "
                    f"{', '.join(repr(d) for d in drivers)} cannot be followed past this point "
                    "(pushed past a dead centre?)" if drivers else
                    "a singular configuration")
            detail = (f". The constraint Jacobian is nearly singular at the last accepted "
                      f"state, t = {float(integ.t):.9g} s (reciprocal condition {rc:.1e}): "
                      f"{what}; involved: {describe_rows(model, names)}")
    return cls(f"model {model.name!r}: integration failed {where}: {STATUS[status]}{detail}",
               t, h, result, names)
