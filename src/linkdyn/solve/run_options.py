"""The options of a dynamics run, checked once at the edge: :func:`check_options` turns the
keyword arguments of :func:`linkdyn.simulate` into one frozen :class:`RunOptions` (output
times planned, sizes estimated) or raises an error that names the argument and says what
was expected. Nothing after this point validates arguments."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import checked_flag
from .._progress import check_callback
from ..compile.model import Model, checked_positive, checked_time, require_dynamic
from ..elements.description import element_laws
from ..errors import ArgumentError, ArgumentTypeError, ModelError
from ..results.output import Record, check_size
from .assembly import check_redundant

__all__ = ["RunOptions", "check_options", "output_times", "DEFAULT_MAX_STEPS", "METHODS"]

#: The integration methods simulate offers (documented there).
METHODS = ("bdf", "rk", "auto")
#: Default step budget of simulate (documented there).
DEFAULT_MAX_STEPS = 5_000_000
#: The loosest tolerances simulate accepts: rtol, and atol relative to the largest
#: coordinate of the model's guess. Looser ones let the error test pass steps that tear the
#: mechanism apart (a 10% error per step is a link's length on a metre-sized mechanism).
MAX_RTOL, MAX_ATOL = 0.1, 0.1


@dataclass(frozen=True)
class RunOptions:
    """What :func:`linkdyn.simulate` was asked for, checked (see its parameters)."""

    t0: float
    t_end: float
    rtol: float
    atol: float
    times: np.ndarray          # planned output times
    event_rows: bool           # t_out="events": a row at each event
    series: tuple | None       # a Record's series, or None for whole rows
    q0: object
    v0: object
    hold: object
    h_init: float
    h_max: float
    max_order: int
    max_steps: int
    newton_tol: float
    project_output: bool
    proportional: bool
    controller: object
    control_period: float | None
    events: object
    event_tol: float
    swinging: tuple
    redundant: str
    allow_redundant: bool
    progress: object
    method: str


def output_times(t0: float, t_end: float, dt: float) -> np.ndarray:
    """t0, t0 + dt, ..., ending exactly at t_end (the last interval may be shorter)."""
    count = (t_end - t0) / dt
    if not count < 1e12:
        raise ArgumentError(f"output_times: {count:.3g} output times from {t0} to {t_end} every "
                            f"{dt} s are too many")
    n = int(math.floor(count * (1 + 1e-12)))
    t = t0 + dt * np.arange(n + 1)
    # k dt carries round-off (3 * 0.3 = 0.8999999999999999): round to 15 digits of the span
    # so that decimal output times come out as written.
    t = np.round(t, max(0, 15 - math.ceil(math.log10(max(abs(t0), abs(t_end), 1.0)))))
    if t_end - t[-1] > 1e-9 * dt:
        t = np.append(t, t_end)
    t[-1] = t_end if abs(t[-1] - t_end) <= 1e-9 * dt else t[-1]
    return t


def check_options(model, t_end, *, rtol, atol, t_out, dt_out, t0, q0, v0, hold, h_init,
                  h_max, max_order, max_steps, newton_tol, project_output, proportional,
                  controller, control_period, events, event_tol, swinging, redundant,
                  progress, record, method="auto") -> RunOptions:
    """The checked options of a run of ``model`` (ValueError, TypeError or ModelError
    naming what is wrong)."""
    _check_model(model)
    t0, t_end = check_span(t0, t_end)
    rtol, atol = checked_positive("rtol", rtol), checked_positive("atol", atol)
    if rtol > MAX_RTOL:
        raise ArgumentError(f"rtol = {rtol:g} lets every coordinate be off by "
                            f"{100 * min(rtol, 1.0):.3g}% at each step: the constraints cannot "
                            f"hold the mechanism together (use rtol <= {MAX_RTOL:g}; 1e-6 to "
                            "1e-10 are usual)")
    scale = float(np.abs(model.q0).max()) if model.nq else 1.0
    if atol > MAX_ATOL * scale:
        raise ArgumentError(f"atol = {atol:g} is not small against the model: its coordinates "
                            f"reach {scale:.3g} (m, or unit-vector components), so the "
                            "constraints could not hold the mechanism together (use atol <= "
                            f"{MAX_ATOL * scale:.3g}; 1e-6 to 1e-10 are usual)")
    if rtol < 1e-14:
        raise ArgumentError(f"rtol = {rtol:g} is below what double precision can deliver "
                            "(use rtol >= 1e-14)")
    if isinstance(max_order, bool) or not isinstance(max_order, int) or not 1 <= max_order <= 5:
        raise ArgumentError(f"max_order must be an integer from 1 to 5, got {max_order!r}")
    if max_steps is None:
        max_steps = DEFAULT_MAX_STEPS
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or \
            not 0 <= max_steps < 2**63:
        raise ArgumentError(f"max_steps must be a non-negative integer below 2**63, got "
                            f"{max_steps!r}")
    for name, value in (("h_init", h_init), ("h_max", h_max), ("newton_tol", newton_tol),
                        ("event_tol", event_tol)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise ArgumentError(f"{name} must be a non-negative finite number, got {value!r}")
    project_output = checked_flag("project_output", project_output)
    proportional = checked_flag("proportional", proportional)
    _check_law_speeds(model, t0, t_end, max_steps)
    if not isinstance(method, str) or method not in METHODS:
        raise ArgumentError(f"method must be one of {', '.join(map(repr, METHODS))}, got "
                            f"{method!r}")
    if record is not None and not isinstance(record, Record):
        raise ArgumentTypeError(f"record must be a linkdyn.Record, got {type(record).__name__}")
    # The series kept (names checked before any work), or None for whole rows.
    series = record.series(model) if record is not None else None
    times = _plan_outputs(model, t0, t_end, t_out, dt_out, series)
    control_period = _check_controller(model, controller, control_period)
    allow_redundant = check_redundant(redundant)
    swinging = _check_swinging(model, swinging)
    check_callback(progress)
    return RunOptions(
        t0=t0, t_end=t_end, rtol=rtol, atol=atol, times=times,
        event_rows=isinstance(t_out, str) and t_out == "events", series=series, q0=q0,
        v0=v0, hold=hold, h_init=h_init, h_max=h_max, max_order=max_order,
        max_steps=max_steps, newton_tol=newton_tol, project_output=project_output,
        proportional=proportional, controller=controller, control_period=control_period,
        events=events, event_tol=event_tol, swinging=swinging, redundant=redundant,
        allow_redundant=allow_redundant, progress=progress, method=method)


def row_width(model: Model) -> int:
    """Values in one whole output row: q, v, lam, the stick multipliers and z."""
    nstick = len(model.force_info["frictions"])    # stick rows of contacts with friction
    return 2 * model.nq + model.nc + nstick + model.kernels.nz


def _check_model(model) -> None:
    if not isinstance(model, Model):
        raise ArgumentTypeError(f"model must be a linkdyn.Model, got {type(model).__name__}")
    require_dynamic(model, "simulate")
    for d in model.description.drivers:
        if d.law.is_function:
            raise ModelError(f"driver '{d.name}': its law is a Python function, which the "
                             "compiled integrator cannot call; simulate needs constant, linear, "
                             "polynomial or harmonic laws (functions serve kinematics)", d.name)


#: Steps a harmonic law needs a period at the least (the explicit method of order 8 takes
#: some 10 on a smooth oscillation at loose tolerances; fewer cannot follow it at all).
STEPS_PER_PERIOD = 4


def _check_law_speeds(model, t0, t_end, max_steps) -> None:
    """Refuse a harmonic law faster than a run can follow: more periods over the span than
    the step budget has steps for (STEPS_PER_PERIOD a period), or a phase omega t beyond
    what double precision resolves (a law of omega 1e300 crawled at h = 4e-10 s through the
    budget for minutes)."""
    span, late = t_end - t0, max(abs(t0), abs(t_end), 1.0)
    for name, law in element_laws(model.description):
        if law.kind != "harmonic":
            continue
        omega = abs(law.params[2])
        periods = omega * span / (2.0 * math.pi)
        if omega * late * np.finfo(float).eps > 1.0:
            raise ArgumentError(f"element {name!r}: its harmonic law's omega = {omega:g} rad/s "
                                f"is too fast for its phase omega t to be computed at t = "
                                f"{late:g} s in double precision")
        if max_steps and periods * STEPS_PER_PERIOD > max_steps:
            raise ArgumentError(f"element {name!r}: its harmonic law (omega = {omega:g} rad/s) "
                                f"makes {periods:.3g} periods in the run's {span:g} s, more than "
                                f"its step budget can follow (max_steps = {max_steps}, at least "
                                f"{STEPS_PER_PERIOD} steps a period): a shorter run, a larger "
                                "max_steps (0: none), or a slower law")


def check_span(t0, t_end) -> tuple[float, float]:
    t0 = checked_time(t0, "t0")
    if isinstance(t_end, bool) or not isinstance(t_end, (int, float)) or not (
            math.isfinite(t_end) and t_end > t0):
        raise ArgumentError(f"t_end must be a finite time after t0 = {t0}, got {t_end!r}")
    t_end = float(t_end)
    if t_end - t0 < 1e-13 * max(1.0, abs(t0), abs(t_end)):
        raise ArgumentError(f"t_end - t0 = {t_end - t0:.3g} s is below the time resolution of "
                            f"double precision at t = {t0:g} s (the span must be at least "
                            "1e-13 max(1, |t|))")
    return t0, t_end


def _plan_outputs(model, t0, t_end, t_out, dt_out, series) -> np.ndarray:
    """The output times asked for, after checking that their rows fit in memory."""
    width = row_width(model)
    if isinstance(t_out, str):
        if t_out not in ("final", "events"):
            raise ArgumentError(f"t_out must be an array of times, 'final' or 'events', got "
                                f"{t_out!r}")
        if dt_out is not None:
            raise ArgumentError("give t_out or dt_out, not both")
        return np.array([t_end] if t_out == "final" else [t0, t_end])
    if t_out is None:
        dt = (t_end - t0) / 1000 if dt_out is None else checked_positive("dt_out", dt_out)
        # Before the times exist: their number alone may not fit.
        check_size(int(min((t_end - t0) / dt, 1e18)) + 2, series, width,
                   f"model {model.name!r}")
        return output_times(t0, t_end, dt)
    if dt_out is not None:
        raise ArgumentError("give t_out or dt_out, not both")
    times = np.array(t_out, dtype=float).ravel()
    if times.size == 0 or not np.all(np.isfinite(times)):
        raise ArgumentError("t_out must be a non-empty array of finite times")
    if np.any(np.diff(times) < 0):
        i = int(np.flatnonzero(np.diff(times) < 0)[0])
        raise ArgumentError(f"t_out must be non-decreasing: t_out[{i + 1}] = {times[i + 1]} "
                            f"< t_out[{i}] = {times[i]}")
    if times[0] < t0 or times[-1] > t_end:
        raise ArgumentError(f"t_out must lie in [t0, t_end] = [{t0}, {t_end}], got "
                            f"[{times[0]}, {times[-1]}]")
    check_size(times.size, series, width, f"model {model.name!r}")
    return times


def _check_controller(model, controller, control_period) -> float | None:
    if controller is not None:
        if not callable(controller):
            raise ArgumentTypeError(f"controller must be callable as controller(t, state), got "
                                    f"{controller!r}")
        if control_period is None:
            raise ArgumentError("a controller needs control_period (the sample period, s)")
        control_period = checked_positive("control_period", control_period)
        if not model.force_info["inputs"]:
            raise ArgumentError(f"model {model.name!r} has no motor or servo for a controller "
                                "to drive")
    elif control_period is not None:
        raise ArgumentError("control_period was given without a controller")
    return control_period


def _check_swinging(model, swinging) -> tuple:
    if isinstance(swinging, str):
        swinging = (swinging,)
    if not isinstance(swinging, (list, tuple, set, frozenset)):
        raise ArgumentError(f"swinging must be a contact's name or a sequence of them, got "
                            f"{swinging!r}")
    known = [w[0] for w in model.force_info["swings"]]
    for name in swinging:
        if name not in known:
            raise ArgumentError(f"swinging: model {model.name!r} has no contact {name!r} with a "
                                f"swing partner (swinging contacts: {', '.join(known) or 'none'})")
    return tuple(swinging)
