"""Forward sensitivities of a simulation: how a motion under forces changes with the design.

``simulation_sensitivities(model, ["bodies.crank.mass", "forces.S.stiffness"], t_end)`` runs
:func:`linkdyn.simulate` and returns, at every output time, the derivatives of the
coordinates and velocities (and of markers and body angles made of them) with respect to
each named parameter (a path into the model's file form, :mod:`linkdyn.describe.parameters`).

Method: the staggered direct method on the index-3 equations (csrc/ld_sens.c). At every
accepted BDF step the corrector is differentiated with respect to each parameter; that is a
linear system with the Newton iteration matrix, factorised once per step at the accepted
state for all parameters. The sensitivities share the step sequence, the history and the
interpolant of the state and are not error-tested themselves (as CVODES and IDAS with errconS
off): they are the exact derivatives of the discrete solution for its step sequence, which
converge to the true derivatives as the tolerance falls, like the state does.

The parameter derivatives of the equations of motion, d(M a + Phi_q^T lam - Q)/dp and
Phi_p at fixed (q, v, a, lam, t), are weighted sums over the model compiled at p +- h: the
central difference, exact where the parameter enters affinely (masses, stiffnesses, damping,
lengths in the constraints; checked per parameter by a zero second difference at states
moved off the motion, ``exact``), Richardson's extrapolation over p +- h and p +- h/2
otherwise (an error of order h^4, h = 1e-3 of the value's scale: some 1e-12 relative).
The initial state is assembled for each member (:func:`linkdyn.consistent_state`), and its
derivatives are Richardson-extrapolated differences of those starts (zero, without
assembling, for a parameter that changes neither the constraints nor the guesses); the
initial accelerations' derivatives, which the BDF's history needs, are solved in C from the
index-1 equations differentiated (csrc/ld_sens.c).

The integration uses the BDF (``method="bdf"``); a run with sensitivities refreshes the
iteration matrix at every step, so its state agrees with a plain run's to the Newton
tolerance, not bit for bit.

Events. At an event the sensitivities jump by (f+ - f-) dt_e/dp, f the state's derivative
just after and just before: where the equations of motion are continuous they go on
unchanged. That holds at the onset and separation of compliant contacts with the Hertz
(Hunt-Crossley) law, whose force grows from zero, and at non-terminal events of the user's
that change nothing; the integrator restarts there and the sensitivities with it. A run
that ends at a terminal marker event ends at a time t_e(p) that moves with the parameters:
``event_time`` is dt_e/dp = -(dg/dp) / (dg/dt) for g the marker's coordinate minus the
event's value (its derivative along the sensitivities, the marker's own included, over its
velocity there), and the state at the event moves by dq + v dt_e/dp. Refused
(:class:`ArgumentError`): terminal events on force-element coordinates, Lankarani-Nikravesh
contacts (their damping is set by the approach speed at the onset,
which moves with the parameters), friction, swinging contacts and arcs (modes that switch),
and controllers (their inputs jump, by amounts that depend on the state).
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field

import numpy as np

from ..compile.model import Model, require_dynamic
from ..elements.contacts import MODELS
from ..elements.events import MARKER, Event
from ..elements.records import reference_angles
from ..errors import (ArgumentError, ArgumentTypeError, ModelError,
                      RedundantConstraintsError)
from ..results.simulation import SimulationResult
from ..solve.assembly import consistent_state
from ..solve.dynamics_run import DynamicsRun
from ..solve.run_options import check_options, check_span
from ..solve.simulate import simulate
from .family import ParameterFamily
from .sensitivity import (_difference, _ParameterDerivatives, dynamic_affinity,
                          marker_parameter_terms)

__all__ = ["simulation_sensitivities", "SimulationSensitivities"]

#: The initial state's parameter steps, a fraction of the equations' (PARAMETER_STEP): an
#: assembled start can depend on a length strongly (the Jansen linkage's initial velocities
#: change by 195 m/s per m of a link, their third derivative is of order 1e7) and Richardson's
#: extrapolation is good only where h^4 times the fifth derivative is small; the round-off of
#: the assembly (1e-13) over these steps is still 1e-9.
INITIAL_STEP = 0.1

#: Options of :func:`linkdyn.simulate` that a run with sensitivities does not take.
REFUSED = ("controller", "control_period", "record", "swinging")


@dataclass(frozen=True, repr=False)
class SimulationSensitivities(_ParameterDerivatives):
    """Derivatives of a simulation with respect to named parameters.

    ``result``: the simulation itself (a :class:`linkdyn.SimulationResult`); ``dq``, ``dv``
    (n, nq, p): the derivatives of its coordinates and velocities at its output times with
    respect to ``parameters`` (p names, at ``values``); ``exact`` (p,): whether each
    parameter enters the equations affinely (their parameter derivatives are then exact to
    round-off; see the module notes). ``marker(name)``, ``marker_velocity(name)`` and
    ``body_angle(name)`` give the derivatives of those series, (n, dim, p) and (n, p), at the
    output times (fixed). ``event_time`` (p,): for a run that ended at a terminal marker
    event, the derivative of that end time (module notes); else None."""

    result: SimulationResult
    parameters: tuple
    values: np.ndarray
    dq: np.ndarray
    dv: np.ndarray
    exact: tuple
    event_time: np.ndarray | None = None
    _marker_p: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def model(self) -> Model:
        return self.result.model

    @property
    def t(self) -> np.ndarray:
        return self.result.t

    @property
    def q(self) -> np.ndarray:
        return self.result.q

    @property
    def v(self) -> np.ndarray:
        return self.result.v


@dataclass(frozen=True)
class _Spec:
    """What csrc/ld_sens.c is given (ld_bdf.h, ld_sensitivity) and the initial values."""
    members: tuple
    start: np.ndarray
    member: np.ndarray
    weight: np.ndarray
    scale: np.ndarray | None
    s0: np.ndarray


def simulation_sensitivities(model, parameters, t_end: float, *, error_control: bool = True,
                             **options) -> SimulationSensitivities:
    """Run ``linkdyn.simulate(model, t_end, **options)`` with the BDF and integrate the
    derivatives of its motion with respect to ``parameters`` along (module notes).

    Parameters
    ----------
    model : Model or str
        A model with a file form (built-in name, model file, or a model built from a
        description), with masses and forces.
    parameters : sequence of str
        Scalar parameter paths (:mod:`linkdyn.describe.parameters`), e.g.
        ``"bodies.crank.mass"``, ``"forces.S.stiffness"``, ``"joints.A.position.x"``.
    t_end : float
        End time (s).
    error_control : bool
        True (default): the sensitivities take part in the error test, each with the
        tolerances rtol and atol / abs(p_j) (abs(p_j) s_j is a length like q; 1 for a parameter
        whose value is 0), so their error follows the tolerance as the state's does; the steps
        are those both need. False: they follow the state's steps, solved once per accepted
        step (cheaper), and their error is whatever those steps give: close on smooth motions,
        far above the tolerance in a stiff contact. ``stats["sensitivity_error_control"]``
        says which ran.
    **options
        Those of :func:`linkdyn.simulate` except ``controller``, ``control_period``,
        ``swinging`` and ``record``; events must not be terminal; ``method`` may only be
        ``"bdf"`` (the default here) or ``"auto"`` (taken as ``"bdf"``).

    Returns
    -------
    SimulationSensitivities

    Raises
    ------
    ArgumentError
        A bad path (named), a parameter that is not a number or does not enter the motion
        (named), a refused option or event, or a model with friction or Lankarani-Nikravesh
        contacts (module notes).
    ModelError
        Changing a parameter changes the model's coordinates or rows.
    SimulationError
        As :func:`linkdyn.simulate`.
    """
    for name in REFUSED:
        if options.get(name) not in (None, ()):
            raise ArgumentError(f"simulation_sensitivities: option {name!r} is not "
                                "supported: the sensitivities would jump at controller "
                                "samples and contact mode switches (module notes)")
    if not isinstance(error_control, (bool, np.bool_)):
        raise ArgumentTypeError("simulation_sensitivities: error_control must be True or "
                                f"False, got {error_control!r}")
    method = options.pop("method", "bdf")
    if method not in ("bdf", "auto"):
        raise ArgumentError(f"simulation_sensitivities: method must be 'bdf' (the "
                            f"sensitivities are integrated with the BDF), got {method!r}")
    check_span(options.get("t0", 0.0), t_end)    # before any model is compiled
    family = ParameterFamily(model, parameters)
    base = family.base
    require_dynamic(base, "simulation_sensitivities")
    info = base.force_info
    if info.get("frictions") or info.get("swings") or info.get("arcs"):
        raise ArgumentError(f"simulation_sensitivities: model {base.name!r} has friction, "
                            "swinging contacts or arcs, whose mode switches make the "
                            "sensitivities jump")
    damped = [name for _, name, law in info["contacts"] if law != MODELS["hertz"]]
    if damped:
        raise ArgumentError(f"simulation_sensitivities: contact(s) {', '.join(map(repr, damped))}"
                            f" of model {base.name!r} use the Lankarani-Nikravesh law, whose "
                            "damping is set by the approach speed at the onset (which moves "
                            "with the parameters): use model='hertz' with a damping")
    events = options.get("events") or ()
    terminal = [e.name for e in ((events,) if isinstance(events, Event) else events)
                if getattr(e, "terminal", False) and getattr(e, "kind", MARKER) != MARKER]
    if terminal:
        raise ArgumentError(f"simulation_sensitivities: event(s) {', '.join(map(repr, terminal))}"
                            " are terminal on a force element's coordinate: only a marker "
                            "event may end a run with sensitivities (module notes)")
    opt = check_options(base, t_end, **_simulate_options(options))
    state = consistent_state(base, q=opt.q0, v=opt.v0, t=opt.t0, hold=opt.hold,
                             redundant=opt.redundant)
    steps, member = family.members()

    spec, exact, used = _spec(base, family.names, member, steps, opt, state,
                              _redundant_rows(base, opt, state))
    if error_control:
        spec = dataclasses.replace(spec, scale=np.where(family.values != 0.0,
                                                        np.abs(family.values), 1.0))
    run = DynamicsRun(base, opt, sensitivity=spec)
    status = run.integrate()
    result = run.finish(status)
    result.stats["sensitivity_error_control"] = bool(error_control)
    rows = run.sensitivity_rows.reshape(len(result.t), len(steps), 2, base.nq)
    dq = np.ascontiguousarray(np.moveaxis(rows[:, :, 0, :], 1, 2))
    dv = np.ascontiguousarray(np.moveaxis(rows[:, :, 1, :], 1, 2))
    marker_p = marker_parameter_terms(base, member, steps, dict(q=result.q, v=result.v),
                                      used, exact)
    # A parameter may enter only where the run goes (a contact's, out of touch at the sample
    # states): it enters if the run's sensitivities to it are not all zero.
    used = [u or bool(np.any(dq[:, :, j]) or np.any(dv[:, :, j])) for j, u in enumerate(used)]
    unused = [name for name, u in zip(family.names, used) if not u]
    if unused:
        raise ArgumentError(f"parameter(s) {', '.join(map(repr, unused))} do not enter the "
                            f"motion of model {base.name!r}: neither its equations of motion "
                            "nor its initial state nor its markers change with them")
    out = SimulationSensitivities(result, family.names, family.values, dq, dv,
                                  tuple(bool(e) for e in exact), None, marker_p)
    return dataclasses.replace(out, event_time=_event_time(out, run.ev["events"]))


def _event_time(s, events):
    """dt_e/dp of a run that ended at a terminal marker event (module notes), else None."""
    result = s.result
    if result.status != "event" or not result.events:
        return None
    last = result.events[-1]
    event = next((e for e in events if e.name == last.name and e.terminal), None)
    if event is None:
        return None
    axis = "xyz".index(event.axis)
    dg_dp = s.marker(event.target)[-1, axis, :]
    dg_dt = result.marker_velocity(event.target)[-1, axis]
    if dg_dt == 0.0:
        return np.full(len(s.parameters), np.nan)    # a tangential crossing
    return -dg_dp / dg_dt


def _simulate_options(options) -> dict:
    """``options`` over simulate's defaults, with the BDF (unknown names refused)."""
    defaults = {k: p.default for k, p in inspect.signature(simulate).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY}
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise ArgumentTypeError(f"simulation_sensitivities: unknown option(s) "
                                f"{', '.join(map(repr, unknown))} (those of linkdyn.simulate "
                                "are taken)")
    return {**defaults, **options, "method": "bdf"}


def _redundant_rows(base, opt, state) -> bool:
    """Whether the start's constraint rows are redundant (as redundant="allow" lets them
    be): the assembly of the consistent start refuses them otherwise."""
    if opt.redundant != "allow":
        return False
    try:
        consistent_state(base, q=state.q, v=state.v, t=opt.t0, hold=opt.hold)
    except RedundantConstraintsError:
        return True
    return False


def _spec(base, names, member, steps, opt, state, redundant=False):
    """Members and weights of each parameter's derivative, the initial sensitivities, and
    per parameter whether it enters affinely and whether it enters at the sample states.
    A contact's force vanishes at most states (out of touch), where affinity cannot be
    judged: contact parameters are extrapolated (Richardson) and not called exact.
    ``redundant``: the rows are redundant at the start, and a parameter that enters them
    is refused."""
    nq, t0 = base.nq, opt.t0
    zero = np.zeros(nq)
    affinity, enters, constraints = dynamic_affinity(
        base, member, steps, [(t, state.q, state.v, zero) for t in (t0, 0.5 * (t0 + opt.t_end))],
        20261125)
    moved = [name for name, c in zip(names, constraints) if c]
    if redundant and moved:
        raise ModelError(f"simulation_sensitivities: parameter(s) {', '.join(map(repr, moved))}"
                         f" enter the constraints of model {base.name!r}, whose rows are "
                         "redundant (redundant='allow'): an overconstrained mechanism moves "
                         "only while its special geometry holds, and most changes of it lock "
                         "the mechanism, so these derivatives do not exist in general; "
                         "masses, inertias, forces and gravity can be differentiated",
                         moved[0])
    runs, index, weights, start = {}, [], [], [0]
    exact, used, s0 = [], [], np.zeros((len(steps), 2, nq))
    # The assembly projects the guesses with the mass matrix as the metric: where it moved
    # them (guesses off the constraints), the start depends on the masses too.
    projected = _projected(base, opt, state)
    for j, h in enumerate(steps):
        affine = affinity[j] and not names[j].startswith("contacts.")
        exact.append(affine)
        shifts = ({h: 0.5 / h, -h: -0.5 / h} if affine else
                  {h: -1.0 / (6.0 * h), -h: 1.0 / (6.0 * h), 0.5 * h: 4.0 / (3.0 * h),
                   -0.5 * h: -4.0 / (3.0 * h)})
        for shift, w in shifts.items():
            if (j, shift) not in runs:
                runs[(j, shift)] = (len(runs), _run_state(member(j, shift), state, t0))
            index.append(runs[(j, shift)][0])
            weights.append(w)
        start.append(len(index))

        def start_of(step, j=j):
            m = member(j, step)
            s = consistent_state(m, q=opt.q0, v=opt.v0, t=t0, hold=opt.hold,
                                 redundant=opt.redundant)
            return np.concatenate([s.q, s.v])

        # A start that the parameter does not move has zero derivatives: where the
        # constraints (bit for bit at the sample states) and the guesses are the members'
        # and the base's alike (a stiffness; a mass where the guesses met the constraints),
        # the assembly sees the same numbers. The others are extrapolated over steps of
        # INITIAL_STEP h.
        compared = ("q0", "v0", "hold", "mass") if projected else ("q0", "v0", "hold")
        if constraints[j] or any(np.any(getattr(member(j, sh), x) != getattr(base, x))
                                 for sh in (h, -h) for x in compared):
            s0[j] = _start_derivative(start_of, INITIAL_STEP * h,
                                      np.concatenate([state.q, state.v])).reshape(2, nq)
        used.append(bool(enters[j] or np.any(s0[j] != 0.0)))
    members = tuple(r for _, r in sorted(runs.values(), key=lambda x: x[0]))
    spec = _Spec(members, np.array(start, dtype=np.intc), np.array(index, dtype=np.intc),
                 np.array(weights), None, s0)
    return spec, exact, used


def _start_derivative(start_of, h, own) -> np.ndarray:
    """The start's derivative, Richardson's extrapolation over the starts assembled at
    p +- h and p +- h/2 (``start_of(step)``), or zero where those at p +- h are the model's
    own start ``own`` bit for bit: a mass or an inertia whose metric the assembly's
    correction does not feel (the Jansen linkage's densities: its start moves by 5e-6 from
    the guesses, the same start whatever the densities), two assemblies instead of four."""
    cache = {}

    def values(step):
        if step not in cache:
            cache[step] = start_of(step)
        return cache[step]
    if np.array_equal(values(h), own) and np.array_equal(values(-h), own):
        return np.zeros_like(own)
    return _difference(values, h)[0]


def _projected(base, opt, state) -> bool:
    """Whether the assembly of the start moved the guesses (beyond its rounding): a
    projection in the mass matrix's metric, so that a mass or an inertia then moves the
    start. (A guessed velocity off the constraints, as a body's angular velocity given
    without its centre's velocity about a pivot: the sensitivities to its mass and inertia
    were 16 and 17% off, called exact.)"""
    for guess, assembled in ((opt.q0, state.q), (opt.v0, state.v)):
        guess = np.asarray(guess if guess is not None else
                           (base.q0 if assembled is state.q else base.v0), dtype=float)
        size = 1.0 + float(np.abs(guess).max(initial=0.0))
        if float(np.abs(assembled - guess).max(initial=0.0)) > 1e-12 * size:
            return True
    return False


def _run_state(model, state, t0):
    """A run state of a member for the run (its angle records on the branch of the start)."""
    rec0, _ = model.kernels.force_values(state.q, state.v, t0)
    return model.kernels.run_state(reference_angles(model.kernels.arrays, state.q,
                                                    rec0[:, 0]))
