"""Dimensional synthesis: find the dimensions of a linkage that make it do what is asked,
by gradient-based least squares (scipy.optimize.least_squares) with the exact Jacobians of
:mod:`linkdyn.design.sensitivity`, from several starts.

``path_generation(linkage, "P", targets, times=...)`` moves the joints of a
:class:`linkdyn.geometric.Linkage` (or any parameters of a model) so that marker ``P``
passes through the target points: at the given input positions (prescribed timing, ``times``:
seconds of the input's motion, radians for an input turning at 1 rad/s), or at input
positions found with the dimensions (free timing, ``times=None``: each target's time is a
variable too, its derivative the marker's velocity).

The linkage must stay on the branch it starts on and assemble over the whole input range
asked for (``cycle``): every trial is analysed step by step over that range, and a trial that
does not assemble (a limit position, a dead centre) is refused as the optimiser's step and
counted. Constraints a designer states are checked on each start's solution and a solution
that breaks them is reported with the reason: ``grashof`` (the kind a four-bar must be,
:func:`linkdyn.design.grashof`) and ``transmission`` (the range a joint's transmission angle
must keep over the cycle, :func:`linkdyn.design.transmission_angle`); parameter bounds are
the optimiser's (``bounds``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..describe import geometric
from ..errors import ArgumentError, ArgumentTypeError, LinkdynError, SynthesisError
from .metrics import grashof as grashof_of, transmission_angle
from .sensitivity import ParameterFamily, kinematic_sensitivities

__all__ = ["path_generation", "SynthesisResult", "linkage_parameters",
           "fourbar_lengths"]

#: Positions per turn of the input at which each trial is analysed (its branch followed).
CYCLE_POSITIONS = 180


@dataclass(frozen=True)
class SynthesisResult:
    """The best linkage found.

    ``linkage``: its description (a Linkage, or the model-file dict of a model);
    ``parameters``: name -> value; ``times``: each target's time (given or found);
    ``points`` (k, 2): where the marker passes at those times; ``residual``: the largest
    distance from a target (m); ``starts``: how many starts ran; ``failures``: the reasons
    of the starts that failed; ``evaluations``: analyses made (each with its branch followed
    over the cycle); ``seconds``: wall time."""

    linkage: object
    parameters: dict
    times: np.ndarray
    points: np.ndarray
    residual: float
    starts: int
    failures: tuple = ()
    evaluations: int = 0
    seconds: float = 0.0
    model: object = field(default=None, repr=False)


def linkage_parameters(linkage) -> list:
    """Every coordinate of every joint of a planar :class:`linkdyn.geometric.Linkage`
    (``joints.<name>.coordinates.x``, ``.y``; a prismatic joint's line: ``.0``, ``.1``,
    ``.2``), the default design variables of a synthesis."""
    if not isinstance(linkage, geometric.Linkage):
        raise ArgumentTypeError("linkage_parameters: expected a linkdyn.geometric.Linkage")
    out = []
    for joint in linkage.joints.values():
        keys = "xy" if len(joint.coordinates) == 2 else "012"[:len(joint.coordinates)]
        out += [f"joints.{joint.name}.coordinates.{k}" for k in keys]
    return out


def _cycle_times(cycle, extra):
    grid = np.linspace(cycle[0], cycle[1], CYCLE_POSITIONS + 1)
    return np.unique(np.concatenate([grid, np.asarray(extra, dtype=float)]))


class _Problem:
    """The residuals and their Jacobian for least_squares, over one parameter family."""

    def __init__(self, family, marker, targets, times, cycle, first_time=None):
        self.family, self.marker, self.targets = family, marker, targets
        self.first_time = first_time
        self.fixed_times = times
        self.cycle = cycle
        self.k, self.p = len(targets), len(family.names)
        self.evaluations = 0
        self.refused = 0
        self._cache = {}

    def split(self, x):
        values = x[:self.p]
        if self.fixed_times is not None:
            return values, np.asarray(self.fixed_times, dtype=float)
        return values, np.concatenate([[self.first_time], x[self.p:]])

    def analyse(self, x):
        key = x.tobytes()
        if key not in self._cache:
            values, times = self.split(x)
            self.evaluations += 1
            try:
                order = np.argsort(times)
                s = kinematic_sensitivities(self.family.source(values), self.family.names,
                                            _cycle_times(self.cycle, times), at=times[order])
                inverse = np.empty_like(order)
                inverse[order] = np.arange(len(order))
                self._cache = {key: (s.model, s, inverse, None)}
            except LinkdynError as exc:     # no assembly, a limit, a singular position
                self.refused += 1
                self._cache = {key: (None, None, None, exc)}
        return self._cache[key]

    def design(self, values):
        """The description at ``values``: a Linkage, or a compiled model."""
        return self.family.source(values)

    def residuals(self, x):
        _, s, inverse, error = self.analyse(x)
        if error is not None:
            # Refuse the step: a large, constant residual makes the trust region shrink.
            return np.full(2 * self.k, 1e3 * (1.0 + np.abs(self.targets).max()))
        points = s.model.marker_positions(s.q)[:, s.model.marker_index(self.marker)][inverse]
        return (points - self.targets).ravel()

    def jacobian(self, x):
        _, s, inverse, error = self.analyse(x)
        if error is not None:
            return np.zeros((2 * self.k, len(x)))
        J = s.marker(self.marker)[inverse]                      # (k, 2, p)
        blocks = [J.reshape(2 * self.k, self.p)]
        if self.fixed_times is None:
            vel = s.model.marker_velocities(s.v)[:, s.model.marker_index(self.marker)][inverse]
            T = np.zeros((2 * self.k, self.k - 1))
            for i in range(1, self.k):
                T[2 * i:2 * i + 2, i - 1] = vel[i]
            blocks.append(T)
        return np.hstack(blocks)


def path_generation(linkage, marker, targets, *, times=None, parameters=None, bounds=None,
                    cycle=(0.0, 2 * math.pi), starts=8, spread=0.05, seed=0, grashof=None,
                    transmission=None, tol=1e-12, max_evaluations=200) -> SynthesisResult:
    """Find dimensions that take ``marker`` through ``targets`` (module notes).

    Parameters
    ----------
    linkage : Linkage, Model or str
        The initial design: a planar :class:`linkdyn.geometric.Linkage` (its joints'
        coordinates are the default parameters) or a fully driven model.
    marker : str
        The point that must pass through the targets (a Linkage's coupler point or joint).
    targets : array_like, (k, 2)
        Precision points, m; with ``times`` each is reached at its time, else in any order
        of the input's motion within ``cycle``.
    times : array_like, (k,), optional
        Prescribed timing: the input's time at each target (s of the analysis; rad for an
        input turning at 1 rad/s). None: free timing.
    parameters : sequence of str, optional
        Design variables (paths, :mod:`linkdyn.describe.parameters`); default: every joint
        coordinate of a Linkage.
    bounds : dict, optional
        ``{path: (low, high)}`` for some of the parameters.
    cycle : (float, float)
        The input range over which the linkage must assemble on one branch (default: a turn
        of an input at 1 rad/s).
    starts, spread, seed :
        Multistart: the initial design, then ``starts - 1`` random perturbations of its
        parameters by ``spread`` times the design's size (seeded).
    grashof : str, optional
        The kind the four-bar must be ("crank-rocker", ...), for a four-bar Linkage.
    transmission : (str, float, float), optional
        ``(joint, low, high)``: the transmission angle at ``joint`` (rad) must stay in
        [low, high] over the cycle.
    tol : float
        least_squares' ftol, xtol and gtol.

    Raises
    ------
    SynthesisError
        No start met the targets and constraints; ``failures`` gives each start's reason.
    """
    started = time.perf_counter()
    targets = np.asarray(targets, dtype=float)
    if targets.ndim != 2 or targets.shape[1] != 2 or len(targets) == 0:
        raise ArgumentError(f"targets: expected (k, 2) points, got shape {targets.shape}")
    if parameters is None:
        parameters = linkage_parameters(linkage)
    family = ParameterFamily(linkage, parameters)
    if marker not in family.base.marker_names:
        raise ArgumentError(f"marker {marker!r} is not a marker of {family.base.name!r} "
                            f"(markers: {', '.join(family.base.marker_names)})")
    if times is not None:
        times = np.asarray(times, dtype=float)
        if times.shape != (len(targets),):
            raise ArgumentError(f"times: expected {len(targets)} times, one per target")
        if times.min() < cycle[0] or times.max() > cycle[1]:
            raise ArgumentError("times must lie within the cycle")
    lo = np.full(len(family.names), -np.inf)
    hi = np.full(len(family.names), np.inf)
    for name, (low, high) in (bounds or {}).items():
        if name not in family.names:
            raise ArgumentError(f"bounds: {name!r} is not one of the parameters")
        lo[family.names.index(name)], hi[family.names.index(name)] = low, high
    free = times is None
    if free:
        guess_times = _ordered_times(family.base, marker, targets, cycle)
        lo = np.concatenate([lo, np.full(len(targets), cycle[0])])
        hi = np.concatenate([hi, np.full(len(targets), cycle[1])])
        # A common shift of every time is a change of the input's starting position: the
        # first target's time stays where it is found, which takes that freedom out.
        lo, hi = lo[:-1], hi[:-1]
    problem = _Problem(family, marker, targets, times, cycle,
                       first_time=guess_times[0] if free else None)
    size = float(np.max(np.abs(family.values))) or 1.0
    rng = np.random.default_rng(seed)
    best, failures = None, []
    from scipy.optimize import least_squares

    for start in range(starts):
        x0 = family.values.copy()
        if start:
            x0 = x0 + spread * size * rng.standard_normal(len(x0))
        if free:
            x0 = np.concatenate([x0, guess_times[1:]])
        x0 = np.clip(x0, np.where(np.isfinite(lo), lo + 1e-12, -np.inf),
                     np.where(np.isfinite(hi), hi - 1e-12, np.inf))
        if problem.analyse(x0)[3] is not None:
            failures.append((start, f"the start does not assemble over the cycle: "
                                    f"{problem.analyse(x0)[3]}"))
            continue
        fit = least_squares(problem.residuals, x0, jac=problem.jacobian, bounds=(lo, hi),
                            method="trf", ftol=tol, xtol=tol, gtol=tol,
                            max_nfev=max_evaluations, x_scale="jac")
        member, s, inverse, error = problem.analyse(fit.x)
        if error is not None:
            failures.append((start, f"ended where the linkage does not assemble: {error}"))
            continue
        reason = _broken_constraint(problem.design(fit.x[:len(family.names)]), member,
                                    grashof, transmission, cycle)
        if reason:
            failures.append((start, reason))
            continue
        residual = float(np.max(np.linalg.norm(fit.fun.reshape(-1, 2), axis=1)))
        if best is None or residual < best[0]:
            best = (residual, fit.x, member, s, inverse)
    if best is None:
        raise SynthesisError(f"path_generation: none of {starts} starts gave a linkage that "
                             f"meets the targets and constraints; "
                             + "; ".join(f"start {i}: {r}" for i, r in failures), failures)
    residual, x, member, s, inverse = best
    values, found_times = problem.split(x)
    points = s.model.marker_positions(s.q)[:, s.model.marker_index(marker)][inverse]
    data = problem.design(values)
    return SynthesisResult(data if isinstance(data, geometric.Linkage) else data.description,
                           dict(zip(family.names, map(float, values))),
                           np.asarray(found_times, dtype=float), points, residual, starts,
                           tuple(failures), problem.evaluations,
                           time.perf_counter() - started, member)


def _ordered_times(model, marker, targets, cycle):
    """Initial times for free timing: the times at which the initial design's marker passes
    nearest the targets taken in their order along the cycle (a monotone assignment found by
    dynamic programming over every starting position; the cycle is taken as a period of the
    motion, so the assignment may wrap around its end)."""
    from ..solve.kinematics import kinematics

    grid = np.linspace(cycle[0], cycle[1], CYCLE_POSITIONS + 1)[:-1]
    path = kinematics(model, np.append(grid, cycle[1])).marker(marker)[:-1]
    n, k = len(grid), len(targets)
    if k > n:
        raise ArgumentError(f"free timing: more targets ({k}) than positions per cycle ({n})")
    distance = np.linalg.norm(targets[:, None, :] - np.concatenate([path, path])[None],
                              axis=2)                                  # (k, 2n)
    best = (np.inf, None)
    for start in range(n):
        d = distance[:, start:start + n]
        cost = np.full(n, np.inf)
        cost[0] = d[0, 0]
        back = []
        for i in range(1, k):
            # the best earlier position for each j: the minimum of cost[:j] and where it is
            shifted = np.concatenate([[np.inf], cost[:-1]])
            prior = np.minimum.accumulate(shifted)
            at = np.maximum.accumulate(np.where(shifted == prior, np.arange(n) - 1, 0))
            back.append(np.maximum(at, 0))
            cost = d[i] + prior
        end = int(np.argmin(cost))
        if cost[end] < best[0]:
            chosen = [end]
            for arg in reversed(back):
                chosen.append(int(arg[chosen[-1]]))
            best = (cost[end], [start + j for j in reversed(chosen)])
    period = cycle[1] - cycle[0]
    return np.array([cycle[0] + (grid[j % n] - cycle[0]) % period for j in best[1]])


def _broken_constraint(design, member, grashof, transmission, cycle):
    """The reason a solution breaks a designer's constraint, or None."""
    if grashof is not None:
        lengths = fourbar_lengths(design)
        if lengths is None:
            return "grashof: the linkage is not a four-bar Linkage"
        kind = grashof_of(*lengths).kind
        if kind != grashof:
            return f"grashof: the solution is a {kind}, not a {grashof}"
    if transmission is not None:
        joint, low, high = transmission
        from ..solve.kinematics import kinematics

        kin = kinematics(member, np.linspace(cycle[0], cycle[1], CYCLE_POSITIONS + 1))
        mu = transmission_angle(kin, joint)
        if mu.min() < low or mu.max() > high:
            return (f"transmission angle at {joint} spans {mu.min():.3f} to {mu.max():.3f} "
                    f"rad, outside [{low:.3f}, {high:.3f}]")
    return None


def fourbar_lengths(linkage):
    """(ground, input, coupler, output) lengths of a planar four-bar
    :class:`linkdyn.geometric.Linkage` (four revolute joints, four links), or None."""
    if not isinstance(linkage, geometric.Linkage):
        return None
    revolute = {n: np.asarray(j.coordinates, dtype=float) for n, j in linkage.joints.items()
                if j.kind == "revolute"}
    links = {name: [j for j in members if j in revolute]
             for name, members in linkage.links.items()}
    if len(revolute) != 4 or len(links) != 4 or any(len(m) != 2 for m in links.values()):
        return None
    ground = links[linkage.ground]
    entry = linkage.input_joint
    length = {name: float(np.linalg.norm(revolute[m[0]] - revolute[m[1]]))
              for name, m in links.items()}
    side = [name for name, m in links.items() if name != linkage.ground and set(m) & set(ground)]
    if len(side) != 2 or entry not in ground:
        return None
    crank = next(name for name in side if entry in links[name])
    rocker = next(name for name in side if name != crank)
    coupler = next(name for name in links if name not in (linkage.ground, crank, rocker))
    return length[linkage.ground], length[crank], length[coupler], length[rocker]
