"""Dynamics: ``simulate(model, t_end)`` integrates the index-3 equations of motion

    q' = v,    M v' + Phi_q^T lam = Q(q, v, t),    Phi(q, t) = 0

with linkdyn's variable-order BDF integrator in C (csrc/ld_bdf.c: the method, its error
control and its choices are described there) and returns a :class:`SimulationResult`.

A run has three stages, each in a module of its own: the options are checked at the edge
(:mod:`linkdyn.solve.run_options`), the run is prepared and integrated between its stops
(:mod:`linkdyn.solve.dynamics_run`), and the result is what
:mod:`linkdyn.results.simulation` describes.
"""

from __future__ import annotations

from ..models import as_model
from ..compile.model import Model, memory_limit
from ..errors import OutOfMemoryError
from ..results.output import Record
from ..results.simulation import SimulationResult
from .control import ControlState
from .dynamics_run import BDF_REGULARIZATION, OUTPUT_REGULARIZATION, DynamicsRun
from .run_options import DEFAULT_MAX_STEPS, check_options, output_times

__all__ = ["simulate", "SimulationResult", "ControlState", "output_times", "DEFAULT_MAX_STEPS",
           "BDF_REGULARIZATION", "OUTPUT_REGULARIZATION"]


def simulate(model: Model, t_end: float, *, rtol: float = 1e-8, atol: float = 1e-8,
             t_out=None, dt_out: float | None = None, t0: float = 0.0, q0=None, v0=None,
             hold=None, h_init: float = 0.0, h_max: float = 0.0, max_order: int = 5,
             max_steps: int | None = None, newton_tol: float = 0.0,
             project_output: bool = True,
             proportional: bool = True, controller=None,
             control_period: float | None = None, events=None,
             event_tol: float = 0.0, swinging=(), redundant: str = "raise",
             progress=None, record: Record | None = None,
             method: str = "auto") -> SimulationResult:
    """Integrate ``model`` from ``t0`` to ``t_end`` (s).

    Parameters
    ----------
    rtol, atol : float
        Error tolerances (positions in m or unit-vector components; see ld_bdf.c and
        ``proportional``).
    t_out : array_like or {"final", "events"}, optional
        Non-decreasing output times in [t0, t_end]; ``"final"``: one row, at the end of the
        run; ``"events"``: rows at t0, at each event (after its mode changes) and at the end.
    dt_out : float, optional
        Output interval when ``t_out`` is not given (default (t_end - t0) / 1000); the
        outputs are t0, t0 + dt_out, ..., t_end exactly.
    q0, v0, hold :
        Initial guesses and held coordinates, made consistent by
        :func:`linkdyn.consistent_state` (defaults: the model's own).
    h_init, h_max : float
        First and largest step (0: automatic, no limit).
    max_order : int
        Highest BDF order, 1 to 5. ``max_order``, ``newton_tol`` and ``proportional`` are
        the BDF's options: with ``method="auto"`` they apply to its BDF stretches, with
        ``"rk"`` to nothing (the explicit method's local tolerances are rtol / 3 and
        atol / 3).
    max_steps : int, optional
        Step budget (default 5,000,000; 0: none); exceeding it raises
        :class:`SimulationError`, so that a run that cannot progress (a step size driven to
        round-off by an unreasonable model) stops with a message instead of grinding on.
    newton_tol : float
        Newton convergence threshold as a fraction of the (local) position tolerance (0:
        the default 1e-3); never below the round-off floor 10 eps / local_rtol, which a
        Newton iteration cannot reach. In the index-3 formulation a Newton residue in q
        reaches v divided by h/gamma_k, so loose tolerances want a small newton_tol.
    project_output : bool
        Make output rows consistent: project the velocity onto the velocity constraints
        (the raw largest violation is in ``stats["max_output_velocity_violation"]``) and
        take the multipliers from the index-1 equations at the output state (the BDF's own
        multipliers carry the Newton residue divided by h^2).
    proportional : bool
        Tolerance proportionality (default): below 2e-6 the local error test uses
        ``rtol * (rtol / 2e-6) ** 0.25`` (atol scaled alike, never below
        ``100 * eps * max(1, max|q0|)``), so that
        the global error falls in proportion to the tolerance (measured from 1e-4 to 1e-12;
        :func:`linkdyn.estimate_error` estimates it). ``stats["local_rtol"]`` and
        ``stats["local_atol"]`` report what was used. False tests the local error against
        rtol and atol themselves.
    controller : callable, optional
        Feedback control written in Python: ``controller(t, state)`` is called at t0 and
        every ``control_period`` seconds after (a :class:`ControlState` gives ``q``, ``v``
        and measurements) and returns ``{name: input}`` for motors (an added torque or
        force) and servos (a new target) of the model. The inputs are held until the next
        sample (zero-order hold, as a digital controller does); the integrator runs compiled
        between samples. When an input changes the forces jump, so the integrator restarts
        at the sample from the current state (consistent accelerations, order 1: the BDF
        history across a jump would be wrong); an unchanged input costs no restart.
    control_period : float
        Sample period (s) of the controller; required with it.
    events : sequence of linkdyn.events.Event, optional
        Conditions located in time while the integrator runs (see :mod:`linkdyn.events`):
        terminal ones stop the run at the event, the others are recorded in
        ``result.events`` and the integration restarts there.
    event_tol : float
        Time tolerance (s) of the event location (0: ``1e-12 max(1, |t|)``).
    swinging : sequence of str
        Contacts with a swing partner that start swinging (no force until their circle is
        clear ahead of the partner's; :mod:`linkdyn.contacts`). Which foot swings is not a
        function of the state alone: a run started mid-step must be told (the result's
        ``swinging_at(t)`` gives it for a time of an earlier run).
    redundant : {"raise", "allow"}
        ``"raise"`` (default): redundant constraints raise
        :class:`~linkdyn.errors.RedundantConstraintsError` (from the consistent initial
        state). ``"allow"``: redundant but consistent constraints are accepted. The rows
        that depend on the others at the start are found by a rank-revealing factorisation
        and switched off (:mod:`linkdyn.solve.redundant`; their names are in
        ``stats["redundant_rows"]``): the run is exact, at the tolerance, with either
        method. A redundant set's reactions are statically indeterminate: the dropped rows
        carry none, the kept rows the set's whole load (their resultant is the exact one).
        Where the dropped rows stop holding (the rank changed on the way) the run raises
        :class:`SimulationError` naming them. Runs with sensitivities, and models with more
        than 4e6 entries in a dense Phi_q, are regularised instead (ld_bdf.c, "Redundant
        constraints": least-norm reactions, two to three digits less accurate).
        Conflicting constraints still raise.
    record : linkdyn.Record, optional
        Keep only the named series (markers, bodies, joints, drivers, force elements,
        invariants) instead of whole rows: for big models or many output times (see
        :mod:`linkdyn.output`; the series equal a whole-row run's bit for bit).
    progress : callable, optional
        ``progress(t, steps)`` is called about every 0.5 s of wall time
        while the integrator runs, from a helper thread, with the time reached and the steps
        taken (for display: the compiled integrator runs without the GIL and is not slowed;
        the values are read while it runs). An exception from it stops the calls, not the
        run. The command uses it to show progress on a terminal.

    method : {"auto", "bdf", "rk"}
        The integration method. ``"auto"`` (default): the explicit method, handing over to
        the BDF where it detects stiffness, where the accelerations are too ill-conditioned
        for the tolerance (a body of tiny inertia held by heavy ones) or where it cannot go
        on, and coming back at the next restart (an event, a controller's new input); models
        whose redundant constraints are regularised (see ``redundant``) stay on the BDF.
        Where the explicit steps come near their stability limit without passing it, or
        after 4,096 explicit step attempts in a row (doubling after each trial the explicit
        method wins), cost trials run the other method for a while and keep the one that
        advances further per unit of counted work (deterministic), the BDF then at a
        hundredth of its own local tolerances so that the run keeps the explicit method's
        accuracy; models with compliant contacts take none (``stats["cost_trials"]``,
        ``stats["trials_kept"]``).
        ``"rk"``: an explicit Runge-Kutta method of order 8 (Dormand and Prince's 8(5,3)
        pair with its dense output of order 7) on the index-1 form, positions and
        velocities projected onto the constraints after every step, velocities error-tested
        in their own right, local tolerances a third of ``rtol`` and ``atol``: several
        times faster on non-stiff mechanisms, and its global error follows the tolerance
        closely; on stiff ones (stiff springs, contacts at rest, flexible joints with small
        inertia) its step is limited by stability. ``"bdf"``: the index-3 BDF, for stiff
        and non-stiff mechanisms alike; ``max_order``, ``newton_tol`` and ``proportional``
        are its options. ``stats["rk_steps"]``, ``stats["bdf_steps"]`` and
        ``stats["switches_to_bdf"]`` say what ran. The explicit method's Schur
        factorisation runs as straight-line C compiled for the model where a C compiler is
        found and the model is small (``stats["schur_kernels"]``: ``"generated"``, else
        ``"plan"``; the same numbers either way; ``LINKDYN_GENERATED_CODE``, see
        :mod:`linkdyn.solve.generated`).

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        Bad arguments (each names the argument and what was expected).
    AssemblyError
        No consistent initial state.
    ModelError
        The coordinates reach so far from the origin (beyond about 4.5e10) that the local
        error test's round-off floor, ``100 * eps * max|q|``, passes 1e-3: no error would
        be controlled. Names the coordinate.
    OutOfMemoryError
        The run's workspace (or the projection's normal matrix) does not fit in the memory
        this process may use.
    StepSizeError, ConvergenceError, SingularJacobianError, NonFiniteError
        The integration failed; the exception carries ``t``, ``h`` and the partial
        ``result``.
    SimulationError
        The output rows violate the constraints by more than ten times what the
        tolerances allow, in the norm (``stats["max_output_phi"]``, against
        ``atol + rtol * max|q|``) or in one row against its own terms
        (``stats["max_output_row_ratio"]``, the row ``stats["max_output_row"]``: its
        violation over ``atol * sum|Phi_q,ij| + rtol * sum|Phi_q,ij q_j|``); the error
        names the row.
    """
    model = as_model(model)
    opt = check_options(
        model, t_end, rtol=rtol, atol=atol, t_out=t_out, dt_out=dt_out, t0=t0, q0=q0, v0=v0,
        hold=hold, h_init=h_init, h_max=h_max, max_order=max_order, max_steps=max_steps,
        newton_tol=newton_tol, project_output=project_output, proportional=proportional,
        controller=controller, control_period=control_period, events=events,
        event_tol=event_tol, swinging=swinging, redundant=redundant, progress=progress,
        record=record, method=method)
    try:
        run = DynamicsRun(model, opt)    # consistent start, per-run state, integrator, sink
    except MemoryError as exc:
        if isinstance(exc, OutOfMemoryError):   # (consistent_state named it already)
            raise
        raise OutOfMemoryError(f"simulate: model {model.name!r} ({model.nq} coordinates, "
                               f"{model.nc} rows, "
                               f"{len(model.force_info['contacts'])} contacts) needs more "
                               "memory for its run's workspace than this process may use "
                               f"(about {memory_limit() / 2**30:.3g} GiB)") from None
    status = run.integrate()             # between stops: samples, events, mode switches
    return run.finish(status)            # the result, or the failure with the partial result
