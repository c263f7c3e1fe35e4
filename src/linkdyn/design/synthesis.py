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

Path generation takes spherical and spatial linkages too (a coupler point of a spherical
four-bar, a platform point of the 5-SS): its targets are then points in space, and the
default parameters every joint's x, y and z. A spherical linkage's points stay on the unit
sphere (the description projects them onto it): moving one along its radius changes
nothing, a direction the least-squares solve leaves alone (see ``_Reduced``). Function and
motion generation and the ``grashof`` and ``transmission`` constraints are planar.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..compile.model import Model, checked_array
from ..describe import geometric
from ..errors import (ArgumentError, ArgumentTypeError, InterruptedWarning, LinkdynError,
                      SynthesisError, counted, name_list, summary)
from ..solve.interrupt import StopRequest, requested
from .metrics import grashof as grashof_of, transmission_angle
from .family import ParameterFamily
from .sensitivity import _kinematic_sensitivities

__all__ = ["path_generation", "function_generation", "motion_generation", "SynthesisResult",
           "linkage_parameters", "fourbar_lengths"]

#: Positions per turn of the input at which each trial is analysed (its branch followed).
CYCLE_POSITIONS = 180
#: Jacobian columns smaller than this fraction of the largest are round-off (a parameter
#: that does not move the targets) and are zeroed; so are directions of the parameters
#: whose singular values are (see _Reduced).
NULL_COLUMN = 1e-10


@dataclass(frozen=True)
class SynthesisResult:
    """The best linkage found.

    ``linkage``: its description (a Linkage, or the model-file dict of a model);
    ``parameters``: name -> value; ``times``: each target's time (given or found);
    ``achieved`` (k, m): what the linkage does at those times (the marker's points for path
    generation, the output's angles for function generation, the poses for motion
    generation, angles there times the poses' size); ``residual``: the largest error (m, or
    rad for function generation); ``starts``: how many starts ran; ``failures``: the reasons
    of the starts that failed; ``evaluations``: analyses made (each with its branch followed
    over the cycle); ``seconds``: wall time; ``tolerance``: the largest error that counts as
    meeting the targets, :data:`TARGET_RTOL` times their extent (m; for function
    generation, times their range, rad); ``status``: "ok" (``residual`` within
    ``tolerance``), "approximate" (the best fit found misses the targets by more: a least-
    squares compromise, or a local minimum that more starts may improve on), or
    "interrupted" (Ctrl-C: the best linkage found until then, ``starts`` counting the start
    that was running)."""

    linkage: object
    parameters: dict
    times: np.ndarray
    achieved: np.ndarray
    residual: float
    starts: int
    failures: tuple = ()
    evaluations: int = 0
    seconds: float = 0.0
    model: object = field(default=None, repr=False)
    status: str = "ok"
    tolerance: float = 0.0

    def __repr__(self) -> str:
        name = (self.linkage.get("name", "?") if isinstance(self.linkage, dict)
                else getattr(self.linkage, "name", "?"))
        return summary("SynthesisResult", name, None,
                       counted(len(self.parameters), "parameter"),
                       counted(len(self.times), "target"),
                       f"largest error {self.residual:.3g} (tolerance {self.tolerance:.3g})",
                       counted(self.evaluations, "analysis", "analyses"),
                       f"{counted(self.starts, 'start')} ({len(self.failures)} failed)",
                       self.status)


def linkage_parameters(linkage) -> list:
    """Every coordinate of every joint of a :class:`linkdyn.geometric.Linkage`, the default
    design variables of a synthesis: a point's ``joints.<name>.coordinates.x``, ``.y`` (and
    ``.z`` in a spherical or spatial linkage); a prismatic joint's line or plane ``.0``,
    ``.1``, ``.2``."""
    if not isinstance(linkage, geometric.Linkage):
        raise ArgumentTypeError("linkage_parameters: expected a linkdyn.geometric.Linkage")
    out = []
    for joint in linkage.joints.values():
        keys = ("012" if joint.kind == "prismatic" else "xyz")[:len(joint.coordinates)]
        out += [f"joints.{joint.name}.coordinates.{k}" for k in keys]
    return out


def _cycle_times(cycle, extra):
    grid = np.linspace(cycle[0], cycle[1], CYCLE_POSITIONS + 1)
    return np.unique(np.concatenate([grid, np.asarray(extra, dtype=float)]))


class _PathMeasure:
    """A marker's position (2 or 3 values per target, the model's marker dimension); its
    rate is the marker's velocity."""

    def __init__(self, marker, dimension=2):
        self.marker, self.size = marker, dimension

    def values(self, s):
        return s.model.marker_positions(s.q)[:, s.model.marker_index(self.marker)]

    def jacobian(self, s):
        return s.marker(self.marker)

    def rates(self, s):
        return s.model.marker_velocities(s.v)[:, s.model.marker_index(self.marker)]


class _AngleMeasure:
    """A planar body's angle (1 value per target); relative: its change from the first
    target's time."""

    def __init__(self, body, relative):
        self.body, self.relative, self.size = body, relative, 1

    def values(self, s):
        angle = _angles(s, self.body)
        return (angle - angle[0] if self.relative else angle)[:, None]

    def jacobian(self, s):
        d = s.body_angle(self.body)
        return (d - d[0] if self.relative else d)[:, None, :]

    def rates(self, s):
        k = 4 * s.model.body_names.index(self.body)
        ux, uy, vx, vy = s.q[:, k + 2], s.q[:, k + 3], s.v[:, k + 2], s.v[:, k + 3]
        w = (ux * vy - uy * vx) / (ux**2 + uy**2)
        return (w - w[0] if self.relative else w)[:, None]


class _PoseMeasure:
    """A marker's position and its body's angle times ``length`` (3 values per target)."""

    def __init__(self, marker, body, length):
        self.path, self.angle = _PathMeasure(marker), _AngleMeasure(body, False)
        self.length, self.size = length, 3

    def values(self, s):
        return np.hstack([self.path.values(s), self.length * self.angle.values(s)])

    def jacobian(self, s):
        return np.concatenate([self.path.jacobian(s), self.length * self.angle.jacobian(s)],
                              axis=1)

    def rates(self, s):
        return np.hstack([self.path.rates(s), self.length * self.angle.rates(s)])


def _angles(s, body):
    """A planar body's angle (rad) at the rows of a sensitivities result, unwrapped."""
    k = 4 * s.model.body_names.index(body)
    return np.unwrap(np.arctan2(s.q[:, k + 3], s.q[:, k + 2]))


class _Problem:
    """The residuals and their Jacobian for least_squares, over one parameter family."""

    def __init__(self, family, measure, targets, times, cycle, first_time=None):
        self.family, self.measure, self.targets = family, measure, targets
        self.first_time = first_time
        self.fixed_times = times
        self.cycle = cycle
        self.k, self.p = len(targets), len(family.names)
        self.evaluations = 0
        self._cache = {}
        self._affine = None     # per parameter, affine (from the first analysis: see below)
        self.best = None        # (error, x, sensitivities) of the best design analysed

    def split(self, x):
        values = x[:self.p]
        if self.fixed_times is not None:
            return values, np.asarray(self.fixed_times, dtype=float)
        return values, np.concatenate([[self.first_time], x[self.p:]])

    def analyse(self, x):
        """(sensitivities at the targets in target order, None) or (None, the error)."""
        key = x.tobytes()
        if key not in self._cache:
            values, times = self.split(x)
            try:
                order = np.argsort(times)
                # after the first analysis, the parameters' affinity is known: one member
                # each where it holds (sensitivity._kinematic_sensitivities)
                with warnings.catch_warnings():     # the synthesis says it was interrupted
                    warnings.filterwarnings("ignore", message="linkdyn: .* interrupted")
                    s = _kinematic_sensitivities(self.family.source(values),
                                                 self.family.names,
                                                 _cycle_times(self.cycle, times), times[order],
                                                 self._affine, {}, 0)  # (order 0: dq)
                if s.status == "interrupted" or requested():
                    raise KeyboardInterrupt     # Ctrl-C in the sweeps or since: as anywhere
                self._affine = s.exact
                inverse = np.empty_like(order)
                inverse[order] = np.arange(len(order))
                self._cache = {key: (_reordered(s, inverse), None)}
            except ArgumentError:   # a parameter that moves no position: not the design's
                raise
            except LinkdynError as exc:     # no assembly, a limit, a singular position
                self._cache = {key: (None, exc)}
            self.evaluations += 1           # (not one that Ctrl-C interrupted)
        return self._cache[key]

    def design(self, values):
        """The description at ``values``: a Linkage, or a compiled model."""
        return self.family.source(values)

    def size(self, r) -> float:
        """The largest target's error in residuals ``r``."""
        return float(np.max(np.linalg.norm(np.reshape(r, (self.k, -1)), axis=1)))

    def residuals(self, x):
        s, error = self.analyse(x)
        if error is not None:
            # Refuse the step: a large, constant residual makes the trust region shrink.
            return np.full(self.targets.size, 1e3 * (1.0 + np.abs(self.targets).max()))
        r = (self.measure.values(s) - self.targets).ravel()
        size = self.size(r)
        if self.best is None or size < self.best[0]:
            self.best = (size, np.array(x, dtype=float), s)   # kept for Ctrl-C
        return r

    def jacobian(self, x):
        s, error = self.analyse(x)
        if error is not None:
            return np.zeros((self.targets.size, len(x)))
        m = self.measure.size
        J = self.measure.jacobian(s).reshape(m * self.k, self.p).copy()
        # A parameter that does not move the targets (a line's coefficients are free up to
        # scale) has a column of round-off: made exactly zero, the solver leaves it alone
        # instead of taking steps along noise.
        size = np.abs(J).max(axis=0)
        J[:, size <= NULL_COLUMN * max(float(size.max(initial=0.0)), 1e-300)] = 0.0
        blocks = [J]
        if self.fixed_times is None:
            rates = self.measure.rates(s)
            T = np.zeros((m * self.k, self.k - 1))
            for i in range(1, self.k):
                T[m * i:m * i + m, i - 1] = rates[i]
            blocks.append(T)
        return np.hstack(blocks)


class _Reduced:
    """A start's problem in the parameter directions that move the targets.

    Some parameters are free together, not one by one: a prismatic joint's line
    coefficients (a, b, c) up to scale, a point sliding along its own line. Their Jacobian
    has exact null directions whose singular values are round-off, and the trust-region
    solver, taking the matrix for rank-deficient, then only takes regularised steps that
    crawl along the weakest real direction, at a pace that moves with the LAPACK build.
    So each start solves for z in x = x0 + T z, where T's design block is an orthonormal
    basis of the directions whose singular values at x0 exceed NULL_COLUMN of the largest
    (the free times, if any, stay as they are): full rank there. Used only where the design
    parameters have no bounds (a bound does not map onto the basis); a start whose
    Jacobian has full rank keeps T = I.

    With nothing bounded (prescribed timing) the reduced problem goes to MINPACK's
    Levenberg-Marquardt (least_squares' "lm", SciPy's choice for small unconstrained
    problems), whose step scaling follows the columns of the Jacobian: on the Stephenson-II
    six-bar of tests/test_synthesis.py, nearly free along one curved valley (its weakest
    singular value is 8e-8 of the largest), "trf" halves its trust region on the first
    nonlinear steps, never regrows it and crawls, ending near 1e-7 m after 200 analyses,
    with or without the reduction; "lm" reaches 2e-15 m in 15. Free times are bounded by
    the cycle and stay with "trf", which handles bounds."""

    def __init__(self, problem, x0):
        self.problem, self.x0 = problem, x0
        p = problem.p
        _, sv, vt = np.linalg.svd(problem.jacobian(x0)[:, :p], full_matrices=True)
        rank = int(np.sum(sv > NULL_COLUMN * sv[0]))
        self.T = np.eye(len(x0))
        if rank < p:
            self.T = np.zeros((len(x0), len(x0) - p + rank))
            self.T[:p, :rank] = vt[:rank].T
            self.T[p:, rank:] = np.eye(len(x0) - p)

    def bounds(self, lo, hi):
        """z's bounds: none on the design directions, the free times' own."""
        p, free = self.problem.p, self.T.shape[1] - (len(self.x0) - self.problem.p)
        return (np.concatenate([np.full(free, -np.inf), lo[p:] - self.x0[p:]]),
                np.concatenate([np.full(free, np.inf), hi[p:] - self.x0[p:]]))

    def x(self, z):
        return self.x0 + self.T @ z

    def residuals(self, z):
        return self.problem.residuals(self.x(z))

    def jacobian(self, z):
        return self.problem.jacobian(self.x(z)) @ self.T


def _reordered(s, inverse):
    """A sensitivities result with its rows put in the targets' order."""
    from dataclasses import replace

    rows = {k: getattr(s, k)[inverse] for k in ("t", "q", "v", "a", "dq", "dv", "da")
            if getattr(s, k) is not None}
    own = {key: value[inverse] for key, value in s._marker_p.items()}
    return replace(s, _marker_p=own, **rows)


def _check_times(times, count, cycle):
    """(cycle, times) checked: the cycle an increasing pair of finite times, the times
    (None: free timing) one per target within it."""
    c = checked_array("cycle", cycle)
    if c.shape != (2,) or not c[1] > c[0]:
        raise ArgumentError(f"cycle must be (start, end) with end > start, got {cycle!r}")
    cycle = (float(c[0]), float(c[1]))
    if times is None:
        return cycle, None
    times = checked_array("times", times)
    if times.shape != (count,):
        raise ArgumentError(f"times: expected {count} times, one per target")
    if times.min() < cycle[0] or times.max() > cycle[1]:
        raise ArgumentError("times must lie within the cycle")
    return cycle, times


def _family(linkage, parameters):
    if not isinstance(linkage, (geometric.Linkage, Model, str, os.PathLike)):
        raise ArgumentTypeError(f"linkage must be a linkdyn.geometric.Linkage, a Model or a "
                                f"built-in name or model file, got {type(linkage).__name__}")
    if parameters is None:
        if not isinstance(linkage, geometric.Linkage):
            raise ArgumentTypeError(
                "parameters: only a linkdyn.geometric.Linkage has default design parameters "
                f"(its joints' coordinates); for {type(linkage).__name__} {linkage!r:.60} name "
                "them, e.g. parameters=['bodies.L5.length', 'ground.P2.x']")
        parameters = linkage_parameters(linkage)
    return ParameterFamily(linkage, parameters)


def _check_planar(family, what):
    if family.base.space != "planar":
        raise ArgumentError(f"{what}: a body's angle is planar; {family.base.name!r} is "
                            f"{family.base.space} (path_generation takes spherical and "
                            "spatial linkages)")


def _check_name(family, name, kind):
    names = family.base.marker_names if kind == "marker" else family.base.body_names
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{kind} must be the name of a {kind} of "
                                f"{family.base.name!r}, got {type(name).__name__} {name!r}")
    if name not in names:
        raise ArgumentError(f"{kind} {name!r} is not a {kind} of {family.base.name!r} "
                            f"({'bodies' if kind == 'body' else kind + 's'}: "
                            f"{name_list(names)})")


def path_generation(linkage, marker, targets, *, times=None, parameters=None, bounds=None,
                    cycle=(0.0, 2 * math.pi), starts=8, spread=0.05, seed=0, grashof=None,
                    transmission=None, tol=1e-12, max_evaluations=200) -> SynthesisResult:
    """Find dimensions that take ``marker`` through ``targets`` (module notes).

    Parameters
    ----------
    linkage : Linkage, Model or str
        The initial design: a :class:`linkdyn.geometric.Linkage`, planar, spherical or
        spatial (its joints' coordinates are the default parameters), or a fully driven
        model.
    marker : str
        The point that must pass through the targets (a Linkage's coupler point or joint).
    targets : array_like, (k, 2) or (k, 3)
        Precision points, m, in the plane or in space as the model's markers are; with
        ``times`` each is reached at its time, else in their order along the input's motion
        within ``cycle`` (taken as a period of the motion).
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
        The kind the four-bar must be ("crank-rocker", ...), for a planar four-bar Linkage.
    transmission : (str, float, float), optional
        ``(joint, low, high)``: the transmission angle at ``joint`` (rad) must stay in
        [low, high] over the cycle (planar linkages).
    tol : float
        least_squares' ftol, xtol and gtol.

    Raises
    ------
    SynthesisError
        No start met the targets and constraints; ``failures`` gives each start's reason.
    ArgumentError
        Bad targets, times, bounds, cycle or options (starts, spread, seed, grashof,
        transmission, tol, max_evaluations), an unknown marker, or parameters none of
        which moves the targets (a mass, a density); the message names them.
    ArgumentTypeError
        bounds that are not a dict, or no parameters named for a model that is not a
        Linkage (only a Linkage has default ones).
    """
    targets = checked_array("targets", targets)
    family = _family(linkage, parameters)
    dim = family.base.marker_dimension
    if targets.ndim != 2 or targets.shape[1] != dim or len(targets) == 0:
        raise ArgumentError(f"targets: expected (k, {dim}) points of the "
                            f"{family.base.space} model {family.base.name!r}, got shape "
                            f"{targets.shape}")
    _check_name(family, marker, "marker")
    cycle, times = _check_times(times, len(targets), cycle)
    guess = None if times is not None else _ordered_times(family.base, marker, targets, cycle)
    return _synthesise("path_generation", family, _PathMeasure(marker, dim), targets, times,
                       guess, bounds, cycle, starts, spread, seed, grashof, transmission,
                       tol, max_evaluations)


def function_generation(linkage, output, angles, times, *, relative=True, parameters=None,
                        bounds=None, cycle=(0.0, 2 * math.pi), starts=8, spread=0.05, seed=0,
                        grashof=None, transmission=None, tol=1e-12,
                        max_evaluations=200) -> SynthesisResult:
    """Find dimensions that make body ``output`` turn as asked while the input moves:
    its angle (rad) at the input's ``times``, by default relative to the first (the output
    turns by ``angles[k] - angles[0]`` while the input goes from ``times[0]`` to
    ``times[k]``), ``relative=False`` absolute. Other parameters as for
    :func:`path_generation`; the residual is the largest angle error (rad)."""
    angles = checked_array("angles", angles).ravel()
    family = _family(linkage, parameters)
    _check_planar(family, "function_generation")
    _check_name(family, output, "body")
    cycle, times = _check_times(times, len(angles), cycle)
    if times is None or len(angles) < 2:
        raise ArgumentError("function_generation: give at least two angles and their times")
    targets = (angles - angles[0] if relative else angles)[:, None]
    return _synthesise("function_generation", family, _AngleMeasure(output, relative),
                       targets, times, None, bounds, cycle, starts, spread, seed, grashof,
                       transmission, tol, max_evaluations)


def motion_generation(linkage, marker, body, poses, *, times=None, parameters=None,
                      bounds=None, cycle=(0.0, 2 * math.pi), starts=8, spread=0.05, seed=0,
                      grashof=None, transmission=None, tol=1e-12,
                      max_evaluations=200) -> SynthesisResult:
    """Find dimensions that carry a body through poses: ``poses`` (k, 3) of ``marker``'s
    position (m) and ``body``'s angle (rad), at the input's ``times`` or with free timing.
    Angles are weighed by the size of the poses' spread (m per rad), and the residual is
    the largest error in those units. Other parameters as for :func:`path_generation`."""
    poses = checked_array("poses", poses)
    if poses.ndim != 2 or poses.shape[1] != 3 or len(poses) == 0:
        raise ArgumentError(f"poses: expected (k, 3) rows (x, y, angle), got {poses.shape}")
    family = _family(linkage, parameters)
    _check_planar(family, "motion_generation")
    _check_name(family, marker, "marker")
    _check_name(family, body, "body")
    cycle, times = _check_times(times, len(poses), cycle)
    length = max(float(np.ptp(poses[:, :2], axis=0).max()), 1e-3)
    targets = np.hstack([poses[:, :2], length * np.unwrap(poses[:, 2:3], axis=0)])
    guess = None if times is not None else _ordered_times(family.base, marker, poses[:, :2],
                                                           cycle)
    return _synthesise("motion_generation", family, _PoseMeasure(marker, body, length),
                       targets, times, guess, bounds, cycle, starts, spread, seed, grashof,
                       transmission, tol, max_evaluations)


def _bounds(family, bounds, free, count, cycle):
    lo = np.full(len(family.names), -np.inf)
    hi = np.full(len(family.names), np.inf)
    if bounds is not None and not isinstance(bounds, dict):
        raise ArgumentTypeError("bounds must be a dict {parameter path: (low, high)}, got "
                                f"{type(bounds).__name__}")
    for name, pair in (bounds or {}).items():
        if name not in family.names:
            raise ArgumentError(f"bounds: {name!r} is not one of the parameters")
        try:
            low, high = (float(x) for x in pair)
        except (TypeError, ValueError):
            raise ArgumentError(f"bounds[{name!r}] must be (low, high), got {pair!r}") from None
        if not low < high or math.isnan(low) or math.isnan(high):
            raise ArgumentError(f"bounds[{name!r}] must be (low, high) with low < high, got "
                                f"{pair!r}")
        lo[family.names.index(name)], hi[family.names.index(name)] = low, high
    if free:
        # A common shift of every time is a change of the input's starting position: the
        # first target's time stays where it is found, which takes that freedom out.
        lo = np.concatenate([lo, np.full(count - 1, cycle[0])])
        hi = np.concatenate([hi, np.full(count - 1, cycle[1])])
    return lo, hi


def _synthesise(what, family, measure, targets, times, guess, bounds, cycle, starts, spread,
                seed, grashof, transmission, tol, max_evaluations) -> SynthesisResult:
    """The multistart least-squares loop shared by the three kinds of synthesis. Ctrl-C
    ends it with the best linkage found so far (the current start's best analysed design
    included, if it meets the constraints), status "interrupted" and an InterruptedWarning
    (a RuntimeWarning); with nothing found yet, the KeyboardInterrupt goes on."""
    started = time.perf_counter()
    starts, spread, tol, max_evaluations = _checked_options(
        family, starts, spread, seed, grashof, transmission, tol, max_evaluations)
    free = times is None
    lo, hi = _bounds(family, bounds, free, len(targets), cycle)
    problem = _Problem(family, measure, targets, times, cycle,
                       first_time=guess[0] if free else None)
    size = float(np.max(np.abs(family.values))) or 1.0
    rng = np.random.default_rng(seed)
    best, failures, status, ran = None, [], "ok", 0
    constraints = (grashof, transmission, cycle)
    # Ctrl-C in Python between the analyses (least squares' algebra) is a request the
    # analyses poll (linkdyn.solve.interrupt): a KeyboardInterrupt there could be lost
    with StopRequest() as request:
        try:
            for start in range(starts):
                x0 = family.values.copy()
                if start:
                    x0 = x0 + spread * size * rng.standard_normal(len(x0))
                if free:
                    x0 = np.concatenate([x0, guess[1:]])
                x0 = np.clip(x0, np.where(np.isfinite(lo), lo + 1e-12, -np.inf),
                             np.where(np.isfinite(hi), hi - 1e-12, np.inf))
                ran = start + 1
                found = _one_start(what, problem, x0, lo, hi, tol, max_evaluations, constraints)
                if isinstance(found, str):
                    failures.append((start, found))
                elif best is None or found[0] < best[0]:
                    best = found
        except KeyboardInterrupt:
            found = problem.best
            if found is not None and (best is None or found[0] < best[0]) and \
                    not _broken_constraint(problem.design(found[1][:problem.p]), found[2].model,
                                           *constraints):
                best = found
            request.consume()
            if best is None:
                raise
            status = "interrupted"
            warnings.warn(f"{what}: interrupted in start {ran - 1}; the result is the best "
                          "linkage found so far", InterruptedWarning, stacklevel=3)
    if best is None:
        raise SynthesisError(f"{what}: none of {starts} starts gave a linkage that meets the "
                             "targets and constraints; "
                             + "; ".join(f"start {i}: {r}" for i, r in failures), failures)
    residual, x, s = best
    values, found_times = problem.split(x)
    data = problem.design(values)
    tolerance = target_tolerance(targets)
    if status == "ok" and not residual <= tolerance:
        status = "approximate"
    return SynthesisResult(data if isinstance(data, geometric.Linkage) else data.description,
                           dict(zip(family.names, map(float, values))),
                           np.asarray(found_times, dtype=float), measure.values(s), residual,
                           ran, tuple(failures), problem.evaluations,
                           time.perf_counter() - started, s.model, status, tolerance)


#: Relative size of the largest error that counts as meeting a synthesis' targets.
TARGET_RTOL = 1e-8


def target_tolerance(targets) -> float:
    """The largest error that meets ``targets``: TARGET_RTOL times their extent (the
    diagonal of their bounding box, or the range of function generation's angles), at
    least TARGET_RTOL itself."""
    pts = np.asarray(targets, dtype=float)
    pts = pts.reshape(len(pts), -1)
    return TARGET_RTOL * max(1.0, float(np.linalg.norm(np.ptp(pts, axis=0))))


def _one_start(what, problem, x0, lo, hi, tol, max_evaluations, constraints):
    """One start of the synthesis from x0: (residual, x, sensitivities) of the linkage it
    ends at, or the reason it failed (no assembly at its start or end, a broken
    constraint)."""
    from scipy.optimize import least_squares

    p, targets = problem.p, problem.targets
    if problem.analyse(x0)[1] is not None:
        return f"the start does not assemble over the cycle: {problem.analyse(x0)[1]}"
    if not np.any(problem.jacobian(x0)[:, :p]):
        raise ArgumentError(f"{what}: none of the parameters moves the targets "
                            f"({name_list(problem.family.names)}): a mass or a density "
                            "does not move a linkage's positions")
    if np.isfinite(lo[:p]).any() or np.isfinite(hi[:p]).any():
        fun, jac, z0, z_lo, z_hi, to_x = (problem.residuals, problem.jacobian, x0, lo, hi,
                                          lambda z: z)
    else:
        reduced = _Reduced(problem, x0)
        fun, jac, to_x = reduced.residuals, reduced.jacobian, reduced.x
        z0 = np.zeros(reduced.T.shape[1])
        z_lo, z_hi = reduced.bounds(lo, hi)
    # "lm" where nothing is bounded (see _Reduced) and it can run (no fewer residuals than
    # unknowns); "trf" with bounds
    bounded = np.isfinite(z_lo).any() or np.isfinite(z_hi).any()
    method = "trf" if bounded or targets.size < len(z0) else "lm"
    fit = least_squares(fun, z0, jac=jac, bounds=(z_lo, z_hi), method=method, ftol=tol,
                        xtol=tol, gtol=tol, max_nfev=max_evaluations)
    x = to_x(fit.x)
    s, error = problem.analyse(x)
    if error is not None:
        return f"ended where the linkage does not assemble: {error}"
    reason = _broken_constraint(problem.design(x[:p]), s.model, *constraints)
    if reason:
        return reason
    return problem.size(fit.fun), x, s


#: The kinds of four-bar that ``grashof=`` may ask for (linkdyn.design.grashof's kinds).
GRASHOF_KINDS = ("crank-rocker", "double-crank", "double-rocker", "change-point",
                 "triple-rocker")


def _checked_options(family, starts, spread, seed, grashof, transmission, tol,
                     max_evaluations) -> tuple:
    """(starts, spread, tol, max_evaluations) checked, with seed, grashof and transmission
    (its joint a joint of the model): an ArgumentError naming the option otherwise."""
    from ..compile.model import checked_count, checked_positive

    starts = checked_count("starts", starts)
    max_evaluations = checked_count("max_evaluations", max_evaluations)
    tol = checked_positive("tol", tol)
    if spread != 0:
        spread = checked_positive("spread (a fraction of the design's size)", spread)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ArgumentError(f"seed must be a non-negative integer or None, got {seed!r}")
    space = family.base.space
    for option, value in (("grashof", grashof), ("transmission", transmission)):
        if value is not None and space != "planar":
            raise ArgumentError(f"{option}: a constraint on planar linkages; "
                                f"{family.base.name!r} is {space}")
    if grashof is not None and grashof not in GRASHOF_KINDS:
        raise ArgumentError(f"grashof must be one of {', '.join(GRASHOF_KINDS)}, got "
                            f"{grashof!r}")
    if transmission is not None:
        ok = isinstance(transmission, (tuple, list)) and len(transmission) == 3
        if ok:
            joint, low, high = transmission
            bound = checked_array("transmission's bounds", [low, high])
            ok = isinstance(joint, str) and 0.0 <= bound[0] < bound[1] <= math.pi
        if not ok:
            raise ArgumentError("transmission must be (joint, low, high) with 0 <= low < "
                                f"high <= pi (rad), got {transmission!r}")
        family.base.joint_spec(joint)      # an unknown joint is named
    return starts, float(spread), tol, max_evaluations


def _ordered_times(model, marker, targets, cycle):
    """Initial times for free timing: the times at which the initial design's marker passes
    nearest the targets taken in their order along the cycle (a monotone assignment found by
    dynamic programming over every starting position; the cycle is taken as a period of the
    motion, so the assignment may wrap around its end)."""
    from ..solve.kinematics import kinematics

    grid = np.linspace(cycle[0], cycle[1], CYCLE_POSITIONS + 1)[:-1]
    kin = kinematics(model, np.append(grid, cycle[1]))
    if kin.status == "interrupted":     # Ctrl-C: a partial cycle is no path
        raise KeyboardInterrupt
    path = kin.marker(marker)[:-1]
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
        if kin.status == "interrupted":     # Ctrl-C: a partial cycle proves nothing
            raise KeyboardInterrupt
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
