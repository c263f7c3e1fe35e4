"""Dynamics: ``simulate(model, t_end)`` integrates the index-3 equations of motion

    q' = v,    M v' + Phi_q^T lam = Q(q, v, t),    Phi(q, t) = 0

with linkdyn's variable-order BDF integrator in C (csrc/ld_bdf.c: the method, its error
control and its choices are described there) and returns a :class:`SimulationResult`.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ._bdf import STATUS, BDFIntegrator
from .assembly import consistent_state
from .errors import (ConvergenceError, ModelError, NonFiniteError, SimulationError,
                     SingularJacobianError, StepSizeError)
from .model import Model

__all__ = ["simulate", "SimulationResult", "output_times"]


@dataclass(frozen=True)
class SimulationResult:
    """Trajectories at the output times.

    Attributes
    ----------
    model : Model
    t : ndarray (n,)
        Output times (s); the last is ``t_end`` unless the run was interrupted.
    q, v : ndarray (n, nq)
        Coordinates and their velocities (output velocities are projected onto the
        velocity constraints unless ``project_output=False``).
    lam : ndarray (n, nc)
        Lagrange multipliers of the constraint rows (``model.constraint_names``).
    stats : dict
        Work counters (``steps``, ``rejected_steps``, ``newton_iterations``,
        ``residual_evaluations``, ``jacobian_evaluations``, ``factorizations``, ...) and
        ``integration_seconds``, the wall time of the integration alone.
    status : str
        ``"success"`` or ``"interrupted"`` (Ctrl-C: the arrays hold what was computed).
    """

    model: Model
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    lam: np.ndarray
    stats: dict
    status: str = "success"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def marker(self, name: str) -> np.ndarray:
        """Positions (n, 2) of the named marker."""
        return self.model.marker_positions(self.q)[:, self.model.marker_index(name)]

    def marker_velocity(self, name: str) -> np.ndarray:
        """Velocities (n, 2) of the named marker."""
        return self.model.marker_velocities(self.v)[:, self.model.marker_index(name)]

    @property
    def kinetic_energy(self) -> np.ndarray:
        return 0.5 * np.sum(self.model.mass * self.v**2, axis=1)

    @property
    def potential_energy(self) -> np.ndarray:
        return -self.q @ self.model.kernels.arrays["q_applied"]

    @property
    def energy(self) -> np.ndarray:
        """Total mechanical energy (J) at each output time."""
        return self.kinetic_energy + self.potential_energy

    def _norms(self):
        if "norms" not in self._cache:
            self._cache["norms"] = np.array(
                [self.model.constraint_norms(q, v, t) for t, q, v in zip(self.t, self.q, self.v)]
            ).reshape(-1, 2)
        return self._cache["norms"]

    @property
    def phi_norm(self) -> np.ndarray:
        """|Phi(q, t)| at each output time."""
        return self._norms()[:, 0]

    @property
    def phid_norm(self) -> np.ndarray:
        """|Phi_q v + Phi_t| at each output time."""
        return self._norms()[:, 1]

    def driver_effort(self, driver: str) -> np.ndarray:
        """What driver ``driver`` applies (n,): for an angle driver the torque (N m) on the
        joint's second body (the first receives the opposite), for a slide driver the force
        (N) along the axis on the second body, for a coordinate driver the force (N) along
        its axis on the body: ``-lam`` of the driver's row."""
        if driver not in self.model.driver_names:
            raise KeyError(f"model {self.model.name!r} has no driver {driver!r}")
        return -self.lam[:, self.model.constraint_names.index(driver)]

    def joint_force(self, joint: str) -> np.ndarray:
        """Force (n, 2) in N that revolute ``joint`` exerts on its first body at the joint
        point (the second body receives the opposite): ``-lam`` of the joint's x and y rows."""
        if joint not in self.model.joint_names or f"{joint}.x" not in self.model.constraint_names:
            raise KeyError(f"model {self.model.name!r} has no revolute joint {joint!r}")
        row = self.model.constraint_names.index(f"{joint}.x")
        return -self.lam[:, row:row + 2]


def output_times(t0: float, t_end: float, dt: float) -> np.ndarray:
    """t0, t0 + dt, ..., ending exactly at t_end (the last interval may be shorter)."""
    n = int(math.floor((t_end - t0) / dt * (1 + 1e-12)))
    t = t0 + dt * np.arange(n + 1)
    # k dt carries round-off (3 * 0.3 = 0.8999999999999999): round to 15 digits of the span
    # so that decimal output times come out as written.
    t = np.round(t, max(0, 15 - math.ceil(math.log10(max(abs(t0), abs(t_end), 1.0)))))
    if t_end - t[-1] > 1e-9 * dt:
        t = np.append(t, t_end)
    t[-1] = t_end if abs(t[-1] - t_end) <= 1e-9 * dt else t[-1]
    return t


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def simulate(model: Model, t_end: float, *, rtol: float = 1e-8, atol: float = 1e-8,
             t_out=None, dt_out: float | None = None, t0: float = 0.0, q0=None, v0=None,
             hold=None, h_init: float = 0.0, h_max: float = 0.0, max_order: int = 5,
             max_steps: int = 0, newton_tol: float = 0.0,
             project_output: bool = True,
             proportional: bool = True) -> SimulationResult:
    """Integrate ``model`` from ``t0`` to ``t_end`` (s).

    Parameters
    ----------
    rtol, atol : float
        Error tolerances (positions in m or unit-vector components; see ld_bdf.c and
        ``proportional``).
    t_out : array_like, optional
        Non-decreasing output times in [t0, t_end].
    dt_out : float, optional
        Output interval when ``t_out`` is not given (default (t_end - t0) / 1000); the
        outputs are t0, t0 + dt_out, ..., t_end exactly.
    q0, v0, hold :
        Initial guesses and held coordinates, made consistent by
        :func:`linkdyn.consistent_state` (defaults: the model's own).
    h_init, h_max : float
        First and largest step (0: automatic, no limit).
    max_order : int
        Highest BDF order, 1 to 5.
    max_steps : int
        Step budget (0: none); exceeding it raises :class:`SimulationError`.
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
        the global error falls in proportion to the tolerance. ``stats["local_rtol"]`` and
        ``stats["local_atol"]`` report what was used. False tests the local error against
        rtol and atol themselves.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        Bad arguments (each names the argument and what was expected).
    AssemblyError
        No consistent initial state.
    StepSizeError, ConvergenceError, SingularJacobianError, NonFiniteError
        The integration failed; the exception carries ``t``, ``h`` and the partial
        ``result``.
    """
    if not isinstance(model, Model):
        raise TypeError(f"model must be a linkdyn.Model, got {type(model).__name__}")
    for d in model.description.drivers:
        if d.law.is_function:
            raise ModelError(f"driver '{d.name}': its law is a Python function, which the "
                             "compiled integrator cannot call; simulate needs constant, linear, "
                             "polynomial or harmonic laws (functions serve kinematics)", d.name)
    t0 = float(t0)
    if not math.isfinite(t0):
        raise ValueError(f"t0 must be finite, got {t0!r}")
    if isinstance(t_end, bool) or not isinstance(t_end, (int, float)) or not (
            math.isfinite(t_end) and t_end > t0):
        raise ValueError(f"t_end must be a finite time after t0 = {t0}, got {t_end!r}")
    t_end = float(t_end)
    rtol, atol = _positive("rtol", rtol), _positive("atol", atol)
    if rtol < 1e-14:
        raise ValueError(f"rtol = {rtol:g} is below what double precision can deliver "
                         "(use rtol >= 1e-14)")
    if not isinstance(max_order, int) or not 1 <= max_order <= 5:
        raise ValueError(f"max_order must be an integer from 1 to 5, got {max_order!r}")
    if not isinstance(max_steps, int) or max_steps < 0:
        raise ValueError(f"max_steps must be a non-negative integer, got {max_steps!r}")
    for name, value in (("h_init", h_init), ("h_max", h_max), ("newton_tol", newton_tol)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    if t_out is None:
        dt = (t_end - t0) / 1000 if dt_out is None else _positive("dt_out", dt_out)
        times = output_times(t0, t_end, dt)
    else:
        if dt_out is not None:
            raise ValueError("give t_out or dt_out, not both")
        times = np.array(t_out, dtype=float).ravel()
        if times.size == 0 or not np.all(np.isfinite(times)):
            raise ValueError("t_out must be a non-empty array of finite times")
        if np.any(np.diff(times) < 0):
            i = int(np.flatnonzero(np.diff(times) < 0)[0])
            raise ValueError(f"t_out must be non-decreasing: t_out[{i + 1}] = {times[i + 1]} "
                             f"< t_out[{i}] = {times[i]}")
        if times[0] < t0 or times[-1] > t_end:
            raise ValueError(f"t_out must lie in [t0, t_end] = [{t0}, {t_end}], got "
                             f"[{times[0]}, {times[-1]}]")

    state = consistent_state(model, q=q0, v=v0, t=t0, hold=hold)
    integ = BDFIntegrator(model.kernels, rtol, atol, h_init=h_init, h_max=h_max,
                          max_order=max_order, max_steps=max_steps, newton_tol=newton_tol,
                          project_output=project_output, proportional=proportional)
    status = integ.init(t0, state.q, state.v)
    y = np.empty((times.size, integ.n))
    written = 0
    start = time.perf_counter()
    if status == 0:
        status, written = integ.integrate(t_end, times, y, 0)
    elapsed = time.perf_counter() - start
    stats = integ.stats()
    stats["integration_seconds"] = elapsed
    nq = model.nq
    result = SimulationResult(model=model, t=times[:written].copy(), q=y[:written, :nq],
                              v=y[:written, nq:2 * nq], lam=y[:written, 2 * nq:], stats=stats,
                              status="interrupted" if status == 1 else "success")
    if status == 1:
        warnings.warn(f"linkdyn: simulation interrupted at t = {integ.t:.6g} s; the result "
                      f"holds the {written} output rows computed so far", RuntimeWarning,
                      stacklevel=2)
    elif status != 0:
        raise _failure(model, integ, status, result)
    return result


def _failure(model: Model, integ: BDFIntegrator, status: int, result) -> SimulationError:
    t, h, index = integ.failure()
    where = f"at t = {t:.9g} s with step h = {h:.3g} s"
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
    return cls(f"model {model.name!r}: integration failed {where}: {STATUS[status]}", t, h,
               result)
