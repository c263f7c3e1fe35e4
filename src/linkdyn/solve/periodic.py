"""Periodic orbits of hybrid motions (gaits) by Newton shooting on a Poincare section, with
their Floquet multipliers.

The Poincare map P takes a state x = (q, v) on the section (a terminal event, e.g.
``events.touchdown("foot1")``: a heel strike) to the state at the ``crossings``-th next
crossing, by :func:`linkdyn.simulate` (so every contact, friction and swing event on the way
is handled as in any run). A periodic orbit is a fixed point of P. With ``translation="x"``
(or ``"y"``) it is a fixed point up to a shift of every body along that axis: a walker comes
back to the same posture one stride further on, so the map is compared after removing the
shift of the first body.

Newton's method on r(x) = P(x) - x (shift removed) with the Jacobian of P by forward
differences in every coordinate and velocity (perturbed states are made consistent by the
run's initial projection): the step is the least-squares minimum-norm solution of
(dP - I) dx = -r, since dP - I is singular along the free translation and acts on
constraint-violating directions as -I. Each Newton step competes with the map's own step
x <- P(x), which contracts toward a stable orbit: the one with the smaller residual is
taken. It stops when |r| (max
norm, coordinates in m and velocities in m/s or rad/s alike) is below ``tol``.

Tolerances: with stiff compliant contacts the map amplifies the rounding of its start state
(at heel strike a position error e along a contact normal changes the rebound velocity by
about the contact frequency times e: 1e3-1e4 times e for the walker's feet), so P is known
to about 1e-6 at integration tolerances of 1e-10; hence the defaults tol = 1e-6 and
differences of step 1e-5 (relative to max(1, |x_j|)), well above that noise.

Floquet multipliers: the eigenvalues of dP at the fixed point, without the one of the free
translation (1). dP includes directions the section and the projection absorb (the flow
direction and the constraint normals), whose eigenvalues are zero to the accuracy of the
differences; the orbit is asymptotically stable when every multiplier lies inside the unit
circle (``PeriodicOrbit.stable``), i.e. when the largest modulus is below 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import checked_choice
from ..models import as_model
from ..errors import ArgumentError, LinkdynError
from .assembly import consistent_state
from .interrupt import StopRequest, requested
from .run_options import _check_swinging
from .simulate import simulate

__all__ = ["periodic_orbit", "PeriodicOrbit", "PeriodicOrbitError", "poincare_map"]

MIN_RETURN = 1e-6   # s


class PeriodicOrbitError(LinkdynError):
    """The shooting failed: a trajectory did not reach the section within ``t_max`` (the
    walker fell, for instance), or Newton's method did not converge. ``x`` is the last
    state tried (q then v), ``residual`` its residual (NaN when the map failed)."""

    def __init__(self, message, x=None, residual=math.nan):
        super().__init__(message)
        self.x = x
        self.residual = residual


@dataclass(frozen=True)
class PeriodicOrbit:
    """A periodic orbit: the state on the section (``q``, ``v``), the ``period`` (s), the
    ``shift`` of the free translation per period (m), the contacts ``swinging`` on the
    section, the Floquet ``multipliers`` (complex,
    by decreasing modulus), the Newton ``iterations``, the final ``residual`` and those of
    every iteration (``residuals``)."""

    q: np.ndarray
    v: np.ndarray
    period: float
    shift: float
    multipliers: np.ndarray
    iterations: int
    residual: float
    residuals: tuple = ()
    swinging: tuple = ()

    @property
    def stable(self) -> bool:
        """Every Floquet multiplier inside the unit circle."""
        return bool(np.max(np.abs(self.multipliers)) < 1.0)


def poincare_map(model, section, q, v, *, crossings=1, t_max=10.0, swinging=(), **options):
    """(q, v, time, swinging) at the ``crossings``-th crossing of ``section`` from the state
    (q, v) at t = 0 with the contacts ``swinging`` swinging (``options`` go to
    :func:`linkdyn.simulate`). Raises PeriodicOrbitError when a crossing does not come
    within ``t_max`` seconds."""

    t = 0.0
    count = 0
    while count < crossings:
        r = simulate(model, t + t_max, t0=t, q0=q, v0=v, events=[section],
                     t_out=[t, t + t_max], swinging=swinging, **options)
        if r.status == "interrupted" or requested():
            # Ctrl-C (in the run, or in Python since the search began): not a missed
            # section (a caller that tries another state on PeriodicOrbitError would go on)
            raise KeyboardInterrupt
        if r.status != "event":
            raise PeriodicOrbitError(
                f"periodic_orbit: no crossing of {section.name!r} within {t_max} s of "
                f"t = {t:.6g} s", np.concatenate([q, v]))
        # A crossing within MIN_RETURN of a start on the section is that start seen again
        # (its initial projection may put the state a rounding error before the section).
        if r.t[-1] - t > MIN_RETURN:
            count += 1
        t, q, v = float(r.t[-1]), r.q[-1], r.v[-1]
        swinging = r.swinging_at(t)
    return q, v, t, swinging


def periodic_orbit(model, section, q0=None, v0=None, *, swinging=(), crossings=1,
                   translation=None,
                   t_max=10.0, tol=1e-6, max_iter=30, fd_step=1e-5,
                   rtol=1e-10, atol=1e-12, **options) -> PeriodicOrbit:
    """Find a periodic orbit through the section (module notes) from the guess (q0, v0)
    (default: the model's initial state; a state on or near the section) with the contacts
    ``swinging`` swinging there (see :func:`linkdyn.simulate`). Returns a
    :class:`PeriodicOrbit`; raises :class:`PeriodicOrbitError` when it fails, and on Ctrl-C
    the KeyboardInterrupt with the search's latest state in its ``x`` (and that state's
    residual in ``residual``), to start again from. The swinging
    contacts on the section are those the first map reaches it with; they are kept for
    every later map (a periodic orbit crosses its section in one discrete state)."""
    model = as_model(model)

    if translation is not None:
        checked_choice("translation", translation, ("x", "y"))
    swinging = _check_swinging(model, swinging)
    if isinstance(crossings, bool) or not isinstance(crossings, int) or crossings < 1:
        raise ArgumentError(f"crossings must be a positive integer, got {crossings!r}")
    for name, value in (("t_max", t_max), ("tol", tol), ("fd_step", fd_step)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ArgumentError(f"{name} must be a positive number, got {value!r}")
    nq = model.nq
    axis = None if translation is None else (0 if translation == "x" else 1)
    opts = dict(crossings=crossings, t_max=t_max, rtol=rtol, atol=atol, **options)

    state = {"swinging": tuple(swinging)}

    def P(x):
        q, v, t, _ = poincare_map(model, section, x[:nq], x[nq:],
                                  swinging=state["swinging"], **opts)
        y = np.concatenate([q, v])
        shift = 0.0
        if axis is not None:
            shift = y[axis] - x[axis]
            y[axis:nq:4] -= shift
        return y, t, shift

    s = consistent_state(model, q=q0, v=v0)
    history = []
    state["x"] = np.concatenate([s.q, s.v])
    # Ctrl-C between the runs (Newton's algebra) is a request the maps poll (.interrupt)
    with StopRequest() as request:
        try:
            # Start on the section: one map from the guess.
            q1, v1, _, state["swinging"] = poincare_map(model, section, s.q, s.v,
                                                        swinging=tuple(swinging), **opts)
            x = np.concatenate([q1, v1])
            return _newton(model, P, x, history, state, swinging, axis, max_iter, tol,
                           fd_step)
        except KeyboardInterrupt as stop:
            # Ctrl-C: the search's latest state goes with it (``x``: on the section once
            # the first map is done, the consistent guess before; ``residual``: its
            # residual, NaN before the first), to start again from
            request.consume()
            stop.x, stop.residual = state["x"], history[-1] if history else math.nan
            raise


def _newton(model, P, x, history, state, swinging, axis, max_iter, tol, fd_step):
    """periodic_orbit's Newton iterations from x on the section (module notes)."""
    nq = model.nq
    for it in range(1, max_iter + 1):
        y, period, shift = P(x)
        res = y - x
        norm = float(np.max(np.abs(res)))
        history.append(norm)
        state["x"] = x              # the state whose residual history ends with
        J = np.empty((2 * nq, 2 * nq))
        for j in range(2 * nq):
            h = fd_step * max(1.0, abs(x[j]))
            xp = x.copy()
            xp[j] += h
            J[:, j] = (P(xp)[0] - y) / h
        if norm < tol:
            return _orbit(x, nq, period, shift, J, axis, it, norm, tuple(history),
                          state["swinging"])
        dx = np.linalg.lstsq(J - np.eye(2 * nq), -res, rcond=1e-10)[0]
        # Damped: never move by more than a tenth of the state's scale at once.
        limit = 0.1 * max(1.0, float(np.max(np.abs(x))))
        step = float(np.max(np.abs(dx)))
        if step > limit:
            dx *= limit / step
        s = consistent_state(model, q=x[:nq] + dx[:nq], v=x[nq:] + dx[nq:])
        trial = np.concatenate([s.q, s.v])
        # Safeguard: the Newton step competes with the map's own step x <- P(x), which
        # contracts toward a stable orbit (the differences of a map with stiff contacts
        # carry its rounding noise, so the Newton step may not be the better one).
        best, best_norm = y, float(np.max(np.abs(P(y)[0] - y)))
        try:
            trial_norm = float(np.max(np.abs(P(trial)[0] - trial)))
            if trial_norm < best_norm:
                best = trial
        except PeriodicOrbitError:
            pass
        x = best
    y, period, shift = P(x)
    history.append(float(np.max(np.abs(y - x))))
    raise PeriodicOrbitError(_why(history, max_iter, tol, swinging, state["swinging"]), x,
                             history[-1])


def _why(history, max_iter, tol, given, found) -> str:
    """Why the shooting failed, and what usually helps."""
    shown = history if len(history) <= 8 else history[:3] + ["..."] + history[-4:]
    text = ", ".join(h if isinstance(h, str) else f"{h:.2g}" for h in shown)
    # Stalled: not even halved from the start, or not over the last four iterations.
    stalled = history[-1] > 0.5 * history[0] or (
        len(history) > 4 and history[-1] > 0.5 * min(history[:-4]))
    reason = (f"the residual |P(x) - x| stalled at {history[-1]:.3g}: the iteration sits in "
              "a local minimum of the residual, not at a fixed point" if stalled else
              f"the residual fell to {history[-1]:.3g}, not below tol = {tol:g}")
    hints = ["start from a state on or near the orbit (for a gait, a state of a long run "
             "after its transient: result.q[i], result.v[i])"]
    if not given and found:
        hints.append(f"give the contacts swinging at the start (swinging=result.swinging_at("
                     f"t); the first crossing found {', '.join(found)} swinging)")
    hints.append("check that the section is crossed once per period (crossings=)")
    return (f"periodic_orbit: no periodic orbit after {max_iter} iterations: {reason} "
            f"(residuals {text}). What usually helps: {'; '.join(hints)}")


def _orbit(x, nq, period, shift, J, axis, iterations, residual, history, swinging):
    lam, vec = np.linalg.eig(J)
    keep = np.ones(lam.shape[0], dtype=bool)
    if axis is not None:
        # The free translation: the eigenvector along the uniform shift of every body.
        e = np.zeros(J.shape[0])
        e[axis:nq:4] = 1.0
        e /= np.linalg.norm(e)
        overlap = np.abs(e @ vec) / np.linalg.norm(vec, axis=0)
        keep[int(np.argmax(overlap))] = False
    mult = lam[keep]
    mult = mult[np.argsort(-np.abs(mult))]
    return PeriodicOrbit(q=x[:nq].copy(), v=x[nq:].copy(), period=period, shift=shift,
                         multipliers=mult, iterations=iterations, residual=residual,
                         residuals=history, swinging=swinging)
