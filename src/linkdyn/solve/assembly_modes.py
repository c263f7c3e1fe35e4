"""Assembly modes of a fully driven model: its distinct configurations at one value of its
drivers (a four-bar has two at a crank angle, a six-bar of two loops up to four), found by
deflated Newton iterations, so that a kinematic sweep (:func:`linkdyn.kinematics`, whose
compiled sweep this uses) can start on the one the user wants."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import checked_int
from ..compile.model import Model, _readonly, checked_time
from ..errors import ArgumentTypeError, ModelError
from ..models import as_model
from .assembly import consistent_state
from .kinematics import _guess, _state_at
from .tracking import _coordinate_scales, _sweep

__all__ = ["AssemblyMode", "assembly_modes"]


@dataclass(frozen=True)
class AssemblyMode:
    """One assembled configuration of a fully driven model at a time ``t``: positions ``q``
    (nq,), the sign of det Phi_q there (+1/-1, the branch a sweep from it keeps) and the
    reciprocal condition estimate of Phi_q."""

    t: float
    q: np.ndarray
    sign: int
    rcond: float


def _terms(model, q, t, state):
    """Phi_q at q and the largest row's terms, |Phi_q| |q| (the size its residual is
    measured in)."""
    J = model.phi_q(q, t, state)
    return J, max(float((abs(J) @ np.abs(q)).max(initial=0.0)), 1e-300)


def _solve(model, q, t, state, scales, size, known):
    """Newton from q, deflated by the solutions ``known`` (none: plain Newton), then plain
    Newton to round-off; None when it does not converge. Distances are in ``scales`` (see
    :func:`assembly_modes`)."""
    import scipy.sparse.linalg as spla

    for it in range(80):
        r = model.phi(q, t, state)
        if not (np.all(np.isfinite(r)) and np.all(np.isfinite(q))):
            return None
        J, magnitude = _terms(model, q, t, state)
        if np.abs(r).max() <= 1e-9 * magnitude:
            break
        try:
            delta = -spla.splu(J.tocsc()).solve(r)
        except RuntimeError:            # exactly singular
            return None
        if known:
            # Deflation with M(q) = prod(1/|e_i|^2 + 1), e_i = (q - r_i) / scales: the step
            # is the Newton step divided by 1 - grad(log M) . delta (Sherman-Morrison).
            g = np.zeros_like(q)
            for root in known:
                e = (q - root) / scales
                d2 = float(e @ e)
                if d2 == 0.0:
                    return None
                g -= (2.0 * e / scales / d2**2) / (1.0 / d2 + 1.0)
            denom = 1.0 - float(g @ delta)
            if abs(denom) < 1e-14:
                return None
            delta = delta / denom
        q = q + delta
        if np.abs(q / scales).max() > 1e6 * size:
            return None
    else:
        return None
    for _ in range(4):                  # polish to round-off without deflation
        try:
            q = q - spla.splu(model.phi_q(q, t, state).tocsc()).solve(model.phi(q, t, state))
        except RuntimeError:
            return None
    if not np.abs(model.phi(q, t, state)).max() <= 1e-12 * _terms(model, q, t, state)[1]:
        return None
    return q


#: Most starts (and modes) assembly_modes takes: some ms each, so at most minutes.
MAX_STARTS = 100_000


def assembly_modes(model: Model, t: float = 0.0, *, q0=None, starts: int = 16,
                   max_modes: int = 64, seed: int = 0) -> tuple:
    """The assembly modes of a fully driven model at time ``t``: its distinct configurations
    with the drivers at their values there (a four-bar has two at a crank angle, a six-bar of
    two loops up to four), so that a sweep can start on the one the user wants::

        modes = linkdyn.assembly_modes(model)
        r = linkdyn.kinematics(model, times, q0=modes[1].q)     # times[0] == t

    They are found by deflated Newton iterations (Farrell, Birkisson and Funke, 2015): after
    each solution r_i the residual is multiplied by ``prod(1 / |e_i|^2 + 1)``, e_i the
    distance q - r_i with each point's coordinates in the mechanism's size (and unit
    vectors' as they are), which keeps Newton away from the solutions already found, from
    the guess ``q0`` (default the model's) and then from ``starts`` random perturbations of
    it by half that size (seeded by ``seed``, so the result is reproducible); residuals are
    judged against the size of the rows' terms. The modes are thus the same in any unit of
    length. The first mode is the one a plain Newton iteration finds from
    the guess (the one ``kinematics`` starts on). The search is thorough for small linkages
    but not a proof that no other mode exists.

    Returns a tuple of :class:`AssemblyMode`. Raises ModelError for a model that is not
    fully driven, and AssemblyError (from :func:`linkdyn.consistent_state`) where even the
    guess cannot be assembled."""
    model = as_model(model)
    if not isinstance(model, Model):
        raise ArgumentTypeError(f"model must be a linkdyn.Model, got {type(model).__name__}")
    if model.nc != model.nq:
        raise ModelError(f"model {model.name!r}: assembly modes are isolated configurations "
                         f"of a fully driven model (as many constraint rows as coordinates), "
                         f"got {model.nc} rows for {model.nq} coordinates")
    # Each start is a Newton solve: the count is bounded so that a run ends (some ms each).
    starts = checked_int("starts", starts, 0, MAX_STARTS)
    max_modes = checked_int("max_modes", max_modes, 0, MAX_STARTS)
    seed = checked_int("seed", seed, 0, 2**63 - 1)
    t = checked_time(t)
    run = model.kernels.run_state()
    state = _state_at(model, run, t)
    guess = _guess(model, q0)
    if guess is None:       # let consistent_state say what is wrong with it
        guess = consistent_state(model, q=q0, t=t, hold=(), state=state).q
    # Every length below is measured in the mechanism's size and every residual in the size
    # of its rows' terms, so that the search finds the same modes in any unit of length (in
    # metres, the deflation's shift of 1 and the tolerances were a metre: the 5-SS in
    # millimetres had no mode, the Stephenson-II six-bar 2 of its 3).
    scales = _coordinate_scales(model, guess)
    size = max(1.0, float(np.abs(guess / scales).max()))
    roots = []          # assembly modes found
    flipped = []        # solutions with a driver or prismatic joint half a turn off

    def add(q):
        if q is None or any(np.abs((q - r) / scales).max() <= 1e-7 * size
                            for r in roots + flipped):
            return False
        # A driver or prismatic joint turned by half a turn meets its sine row too: such a
        # solution is no assembly mode, but it is deflated like one.
        if np.any(model.orientation_cosines(q, t, state) <= 0.0):
            flipped.append(q)
        else:
            roots.append(q)
        return True

    add(_solve(model, guess.copy(), t, state, scales, size, ()))
    rng = np.random.default_rng(seed)
    candidates = [guess] + [guess + 0.5 * scales * rng.standard_normal(guess.shape)
                            for _ in range(starts)]
    for start in candidates:
        while len(roots) < max_modes and len(flipped) < 4 * max_modes and add(
                _solve(model, start.copy(), t, state, scales, size, roots + flipped)):
            pass
        if len(roots) >= max_modes:
            break
    modes = []
    for q in roots:
        st, _, (_, _, _, rc, sg), _ = _sweep(model, np.array([t]), q, 1e-14, 20, run)
        modes.append(AssemblyMode(t, _readonly(q.copy()), int(sg[0]) if st == 0 else 0,
                                  float(rc[0]) if st == 0 else 0.0))
    return tuple(modes)

