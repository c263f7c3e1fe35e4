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
from ._progress import Reporter, check_callback
from .assembly import (check_redundant, consistent_state, describe_rows,
                       nearly_singular_rows)
from .description import GROUND, PrismaticSpec
from .errors import (ControllerError, ConvergenceError, ForceElementError, ModelError,
                     NonFiniteError, SimulationError, SingularJacobianError, StepSizeError)
from .events import (ARC, BACK, CONTACT, FRICTION_SLIP, FRICTION_STOP, PASS, EventRecord,
                     compile_events)
from .friction import ContactModes, gradient
from .forces import INPUT_TARGET, reference_angles
from .model import Model, require_dynamic
from .output import Record, RecordedSeries, WholeRows, check_size
from .results import PointGeometry, TrajectoryAccessors, needs_rows, recordable

__all__ = ["simulate", "SimulationResult", "ControlState", "output_times", "DEFAULT_MAX_STEPS"]

#: Default step budget of simulate (documented there).
DEFAULT_MAX_STEPS = 5_000_000
#: The integrator's regularisation with redundant="allow" (ld_bdf.c, "Redundant constraints").
BDF_REGULARIZATION = 1e-12
OUTPUT_REGULARIZATION = 1e-8


@dataclass(frozen=True)
class SimulationResult(TrajectoryAccessors):
    """Trajectories at the output times.

    Attributes
    ----------
    model : Model
    t : ndarray (n,)
        Output times (s); the last is ``t_end`` unless the run was interrupted.
    recorded : dict or None
        With ``simulate(..., record=Record(...))``: the recorded series by (accessor,
        argument), which the accessors return; ``q``, ``v``, ``lam``, ``z`` and
        ``stick_lam`` are then None (see :mod:`linkdyn.output`).
    q, v : ndarray (n, nq)
        Coordinates and their velocities (output velocities are projected onto the
        velocity constraints unless ``project_output=False``).
    lam : ndarray (n, nc)
        Lagrange multipliers of the constraint rows (``model.constraint_names``).
    stats : dict
        Work counters (``steps``, ``rejected_steps``, ``newton_iterations``,
        ``residual_evaluations``, ``jacobian_evaluations``, ``factorizations``, ...) and
        ``integration_seconds``, the wall time of the integration alone, and
        ``output_seconds``, the time spent on output rows (interpolation, projection and
        the reduction to recorded series) with ``output_rows`` their number; with a controller
        also ``controller_samples``, ``controller_restarts`` and ``controller_seconds``
        (time spent in the controller function).
    status : str
        ``"success"``, ``"event"`` (a terminal event stopped the run: the last row is the
        state at the event) or ``"interrupted"`` (Ctrl-C: the arrays hold what was
        computed).
    events : tuple of linkdyn.events.EventRecord
        The events that happened, in time order (time, name, direction).
    z : ndarray (n, nz)
        Quadratures integrated with the state: the work of each force record and load, then
        each record's coordinate tracked over turns (use ``work``, ``element_work``,
        ``element_coordinate``).
    control_t, control_inputs, control_active : ndarray
        Sample times (m,) of the controller and the inputs held from each (m, ninput), with
        the flags of inputs replacing a servo's target (empty without a controller).
    impacts : tuple of (t, record, speed)
        Approach speeds recorded at the onsets of Lankarani-Nikravesh contacts (they set the
        contact's damping from then on).
    friction_modes : tuple of (t, contact, mode)
        Every change of mode of a contact with friction ("open", "slide+", "slide-",
        "stick"; see :mod:`linkdyn.friction`), from the start on.
    stick_lam : ndarray (n, ncontact) or None
        Multipliers of the stick rows of the contacts with friction (zero while a contact
        does not stick); ``friction_force(contact)`` turns them into forces.
    """

    model: Model
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    lam: np.ndarray
    stats: dict
    status: str = "success"
    events: tuple = ()
    z: np.ndarray | None = None
    control_t: np.ndarray | None = None
    control_inputs: np.ndarray | None = None
    control_active: np.ndarray | None = None
    impacts: tuple = ()
    friction_modes: tuple = ()
    stick_lam: np.ndarray | None = None
    _friction_rows: tuple = field(default=(), repr=False, compare=False)
    recorded: dict | None = field(default=None, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    @needs_rows
    def a(self) -> np.ndarray:
        """Accelerations (n, nq) of the output rows from the equations of motion,
        M a = Q(q, v, t) - Phi_q^T lam, with the forces the run applied at each row."""
        if "a" not in self._cache:
            m, k = self.model, self.model.kernels
            a = np.empty_like(self.v)
            for i, state in self._row_states():
                q, v, t = self.q[i], self.v[i], self.t[i]
                a[i] = (k.force(q, v, t, state=state) - m.phi_q(q, t).T @ self.lam[i]
                        - self._stick_force(i, state)) / m.mass
            self._cache["a"] = a
        return self._cache["a"]

    @property
    @recordable
    def kinetic_energy(self) -> np.ndarray:
        return 0.5 * np.sum(self.model.mass * self.v**2, axis=1)

    @property
    @recordable
    def potential_energy(self) -> np.ndarray:
        """Potential energy of gravity (zero at y = 0) plus the energy stored in springs (J)."""
        # Row by row alike whatever the number of rows (a matrix product is not: BLAS
        # blocks by shape), so that recorded series equal whole-row ones bit for bit.
        return -np.sum(self.q * self.model.kernels.arrays["q_applied"], axis=1) + \
            self._elements()[2]

    @property
    @recordable
    def energy(self) -> np.ndarray:
        """Total mechanical energy (J) at each output time: kinetic, gravity and springs.
        ``energy - energy[0]`` equals ``work`` to the integrator's tolerance."""
        return self.kinetic_energy + self.potential_energy

    @property
    @recordable
    def work(self) -> np.ndarray:
        """Work (J) done since t0 by everything in the force elements but the springs'
        stored energy: dampers, motors, servos, loads, moving free lengths and rest angles."""
        info = self.model.force_info
        return self._z()[:, :info["nrec"] + info["nload"]].sum(axis=1)

    def swinging_at(self, t) -> tuple:
        """The contacts that were swinging (:mod:`linkdyn.contacts`) at time ``t`` of this
        run: what ``simulate(..., swinging=...)`` needs to continue from a state at t."""
        out = set()
        for when, name, mode in self.friction_modes:
            if when > t:
                break
            if mode == "swing":
                out.add(name)
            elif mode == "clear":
                out.discard(name)
        return tuple(sorted(out))

    def _stick_force(self, i, state):
        """Generalised force of the stick rows at row i: -sum lam_k grad s_T,k."""
        out = np.zeros(self.model.nq)
        if self.stick_lam is None:
            return out
        for k, f in enumerate(self.model.force_info["frictions"]):
            lam = self.stick_lam[i, k]
            if lam != 0.0:
                out -= lam * gradient(state, f[1], self.q[i], self.v[i])[0]
        return out

    @needs_rows
    def friction_force(self, contact: str) -> np.ndarray:
        """Friction force (N) on the circle of ``contact`` along the line's direction, per
        output row: -mu F_N sign(v_T) while it slides, the stick row's force while it
        sticks, 0 while open (see :mod:`linkdyn.friction`)."""
        frictions = self.model.force_info["frictions"]
        names = [f[0] for f in frictions]
        if contact not in names:
            raise KeyError(f"model {self.model.name!r} has no contact {contact!r} with "
                           f"friction (contacts with friction: {', '.join(names) or 'none'})")
        k = names.index(contact)
        rec = self._elements()[0][:, frictions[k][1], 2]
        return rec - (self.stick_lam[:, k] if self.stick_lam is not None else 0.0)

    def _z(self):
        n = self.t.shape[0]
        return self.z if self.z is not None else np.zeros((n, 0))

    def _element(self, name):
        info = self.model.force_info
        if name not in info["elements"]:
            raise KeyError(f"model {self.model.name!r} has no force element {name!r} (force "
                           f"elements: {', '.join(self.model.force_names) or 'none'})")
        return info["elements"][name]

    @recordable
    def element_work(self, name: str) -> np.ndarray:
        """Work (J) done by force element ``name`` since t0 (its non-conservative part)."""
        recs, loads = self._element(name)
        nrec = self.model.force_info["nrec"]
        cols = list(recs) + [nrec + i for i in loads]
        return self._z()[:, cols].sum(axis=1)

    @recordable
    def element_force(self, name: str) -> np.ndarray:
        """What force element ``name`` applies: for elements along a coordinate (n,), the
        force or torque f along it (N or N m; a spring's f is minus its tension); for
        ``add_force`` loads (n, 2), the global force (N)."""
        recs, loads = self._element(name)
        rec, load, _ = self._elements()
        return rec[:, recs[0], 2] if recs else load[:, loads[0]]

    @recordable
    def element_coordinate(self, name: str) -> np.ndarray:
        """The coordinate (n,) an element acts along: a spring's length (m), a joint's
        relative angle (rad, continuous over turns) or slide (m), a body's angle."""
        recs, _ = self._element(name)
        if not recs:
            raise KeyError(f"force element {name!r} is a point load: it has no coordinate")
        return self._elements()[0][:, recs[0], 0]

    def _row_states(self):
        """(row, state) for each output row: a run state with the force elements' branches
        (tracked angles), the controller inputs held and the contact impact speeds recorded
        at that row, as the run had them."""
        k = self.model.kernels
        info = self.model.force_info
        nrec, nload = info["nrec"], info["nload"]
        state = k.run_state()
        z = self._z()
        tracked = z[:, nrec + nload:] if z.shape[1] else None
        sample = (np.searchsorted(self.control_t, self.t, side="left") - 1
                  if self.control_t is not None and len(self.control_t) else None)
        impacts, next_impact = sorted(self.impacts), 0
        changes, next_change = self._friction_rows, 0
        for i in range(self.t.shape[0]):
            # Sliding directions of contacts with friction from the row they applied to.
            while next_change < len(changes) and changes[next_change][0] <= i:
                _, what, r, value = changes[next_change]
                (state.slip if what == "slip" else state.gate)[r] = value
                next_change += 1
            # Impact speeds recorded at onsets before this row (a row at the event time was
            # written before the event was handled).
            while next_impact < len(impacts) and impacts[next_impact][0] < self.t[i]:
                _, r, speed = impacts[next_impact]
                state.impact[r] = speed
                next_impact += 1
            if tracked is not None:
                state.angle_ref[:nrec] = tracked[i]
            if sample is not None and sample[i] >= 0:
                state.inputs[:k.ninput] = self.control_inputs[sample[i]]
                state.active[:k.ninput] = self.control_active[sample[i]]
            yield i, state

    def _elements(self):
        """Per row: records (n, nrec, 3) of (s, s', f), loads (n, nload, 2), spring energy
        (n,), each evaluated on the branch the run tracked and with the inputs held then."""
        if "elements" in self._cache:
            return self._cache["elements"]
        k = self.model.kernels
        info = self.model.force_info
        nrec, nload, n = info["nrec"], info["nload"], self.t.shape[0]
        rec = np.zeros((n, nrec, 3))
        load = np.zeros((n, nload, 2))
        spring = np.zeros(n)
        if nrec + nload:
            for i, state in self._row_states():
                rec[i], load[i] = k.force_values(self.q[i], self.v[i], self.t[i], state)
                spring[i] = (k.potential_energy(self.q[i], self.t[i], state)
                             + self.q[i] @ k.arrays["q_applied"])
        self._cache["elements"] = (rec, load, spring)
        return self._cache["elements"]

    def _norms(self):
        if "norms" not in self._cache:
            self._cache["norms"] = np.array(
                [self.model.constraint_norms(q, v, t) for t, q, v in zip(self.t, self.q, self.v)]
            ).reshape(-1, 2)
        return self._cache["norms"]

    @property
    @recordable
    def phi_norm(self) -> np.ndarray:
        """|Phi(q, t)| at each output time."""
        return self._norms()[:, 0]

    @property
    @recordable
    def phid_norm(self) -> np.ndarray:
        """|Phi_q v + Phi_t| at each output time."""
        return self._norms()[:, 1]

    @recordable
    def driver_effort(self, driver: str) -> np.ndarray:
        """What driver ``driver`` applies (n,): for an angle driver the torque (N m) on the
        joint's second body (the first receives the opposite), for a slide driver the force
        (N) along the axis on the second body, for a coordinate driver the force (N) along
        its axis on the body: ``-lam`` of the driver's row."""
        if driver not in self.model.driver_names:
            raise KeyError(f"model {self.model.name!r} has no driver {driver!r} (drivers: "
                           f"{', '.join(self.model.driver_names) or 'none'})")
        return -self.lam[:, self.model.constraint_names.index(driver)]

    def _joint(self, joint):
        specs = {j.name: j for j in self.model.description.joints}
        if not isinstance(joint, str) or joint not in specs:
            raise KeyError(f"model {self.model.name!r} has no joint {joint!r} (joints: "
                           f"{', '.join(specs) or 'none'})")
        return specs[joint]

    @recordable
    def joint_force(self, joint: str) -> np.ndarray:
        """Force (n, 2) in N that ``joint`` exerts on its first body (the second body
        receives the opposite). A revolute joint's acts at the joint point: ``-lam`` of its x
        and y rows. A prismatic joint's is its constraint force, normal to the axis (a slide
        driver's force along the axis is ``driver_effort``); with it goes the moment
        ``joint_moment``."""
        spec = self._joint(joint)
        if isinstance(spec, PrismaticSpec):
            return self._prismatic(spec)[0]
        row = self.model.constraint_names.index(f"{joint}.x")
        return -self.lam[:, row:row + 2]

    @recordable
    def joint_moment(self, joint: str) -> np.ndarray:
        """Moment (n,) in N m that ``joint`` exerts on its first body about the joint's first
        point (counter-clockwise positive; the second body receives the opposite force and
        moment about the same point): what a prismatic joint's rotation and axis rows apply
        besides ``joint_force``; zero for a revolute joint."""
        spec = self._joint(joint)
        if isinstance(spec, PrismaticSpec):
            return self._prismatic(spec)[1]
        return np.zeros(len(self.t))

    def _prismatic(self, spec):
        """Force and moment of a prismatic joint on its first body, from the generalised
        constraint forces -Phi_q^T lam of its two rows on one of its bodies."""
        m = self.model
        rows = [m.constraint_names.index(f"{spec.name}.rotation"),
                m.constraint_names.index(f"{spec.name}.axis")]
        # The forces on the second body, negated; on the first when the second is ground.
        body, sign = ((spec.second[0], -1.0) if spec.second[0] != GROUND
                      else (spec.first[0], 1.0))
        i = 4 * m.body_names.index(body)
        point = PointGeometry(m, self.q).ref(spec.first, np.arange(len(self.t)))
        force = np.empty((len(self.t), 2))
        moment = np.empty(len(self.t))
        for k in range(len(self.t)):
            J = m.phi_q(self.q[k], float(self.t[k]))[rows][:, i:i + 4].toarray()
            g = -J.T @ self.lam[k, rows]
            ux, uy = self.q[k, i + 2], self.q[k, i + 3]
            # A moment about the centre of mass does work on u through du = (-uy, ux) dtheta.
            m_centre = -g[2] * uy + g[3] * ux
            r = self.q[k, i:i + 2] - point[k]
            force[k] = sign * g[:2]
            moment[k] = sign * (m_centre + r[0] * g[1] - r[1] * g[0])
        return force, moment


class ControlState:
    """What a controller sees at a sample time: ``t``, the coordinates ``q`` and velocities
    ``v`` (read-only arrays) and helpers for the usual measurements."""

    def __init__(self, model: Model, t: float, q: np.ndarray, v: np.ndarray, run):
        self.model, self.t, self._run = model, t, run
        self.q, self.v = q, v
        self.q.flags.writeable = False
        self.v.flags.writeable = False

    def element_coordinate(self, name: str) -> tuple[float, float]:
        """(s, s') of force element ``name``'s coordinate: a joint's relative angle (rad,
        continuous over turns) or slide (m), a spring's length (m) and their rates."""
        info = self.model.force_info
        if name not in info["elements"] or not info["elements"][name][0]:
            raise KeyError(f"model {self.model.name!r} has no force element {name!r} with a "
                           f"coordinate (force elements: {', '.join(self.model.force_names)})")
        rec, _ = self.model.kernels.force_values(self.q, self.v, self.t, self._run)
        r = info["elements"][name][0][0]
        return float(rec[r, 0]), float(rec[r, 1])

    def marker(self, name: str) -> np.ndarray:
        """Position (2,) of marker ``name``."""
        return self.model.marker_positions(self.q)[self.model.marker_index(name)]

    def marker_velocity(self, name: str) -> np.ndarray:
        """Velocity (2,) of marker ``name``."""
        return self.model.marker_velocities(self.v)[self.model.marker_index(name)]


def _apply_controller(model, controller, t, y, run):
    """Call the controller at sample time t and hold its inputs; returns whether any input
    changed (then the integrator restarts: the forces jump)."""
    nq = model.nq
    names = model.force_info["inputs"]
    modes = model.kernels.arrays["rec_input_mode"]
    recs = model.force_info["elements"]
    state = ControlState(model, t, y[:nq].copy(), y[nq:2 * nq].copy(), run)
    try:
        out = controller(t, state)
    except Exception as exc:
        raise ControllerError(f"model {model.name!r}: the controller raised "
                              f"{type(exc).__name__} at t = {t:.9g} s: {exc}", t, 0.0) from exc
    if out is None:
        return False
    if not hasattr(out, "items"):
        raise ControllerError(f"model {model.name!r}: the controller must return a mapping "
                              f"{{motor or servo name: input}}, got {type(out).__name__} at "
                              f"t = {t:.9g} s", t, 0.0)
    changed = False
    for name, value in out.items():
        if not isinstance(name, str) or name not in names:
            raise ControllerError(f"model {model.name!r}: the controller returned an input for "
                                  f"{name!r} at t = {t:.9g} s; motors and servos: "
                                  f"{', '.join(names) or 'none'}", t, 0.0)
        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            value = math.nan
        if not math.isfinite(value):
            raise ControllerError(f"model {model.name!r}: the controller's input for {name!r} "
                                  f"at t = {t:.9g} s must be a finite number, got {out[name]!r}",
                                  t, 0.0)
        i = names.index(name)
        target = modes[recs[name][0][0]] == INPUT_TARGET
        if run.inputs[i] != value or run.active[i] != target:
            changed = True
        run.inputs[i] = value
        run.active[i] = int(target)
    return changed


def output_times(t0: float, t_end: float, dt: float) -> np.ndarray:
    """t0, t0 + dt, ..., ending exactly at t_end (the last interval may be shorter)."""
    count = (t_end - t0) / dt
    if not count < 1e12:
        raise ValueError(f"output_times: {count:.3g} output times from {t0} to {t_end} every "
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


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def simulate(model: Model, t_end: float, *, rtol: float = 1e-8, atol: float = 1e-8,
             t_out=None, dt_out: float | None = None, t0: float = 0.0, q0=None, v0=None,
             hold=None, h_init: float = 0.0, h_max: float = 0.0, max_order: int = 5,
             max_steps: int | None = None, newton_tol: float = 0.0,
             project_output: bool = True,
             proportional: bool = True, controller=None,
             control_period: float | None = None, events=None,
             event_tol: float = 0.0, swinging=(), redundant: str = "raise",
             progress=None, record: Record | None = None) -> SimulationResult:
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
        Highest BDF order, 1 to 5.
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
        Time tolerance (s) of the event location (0: 1e-12 max(1, |t|)).
    swinging : sequence of str
        Contacts with a swing partner that start swinging (no force until their circle is
        clear ahead of the partner's; :mod:`linkdyn.contacts`). Which foot swings is not a
        function of the state alone: a run started mid-step must be told (the result's
        ``swinging_at(t)`` gives it for a time of an earlier run).
    redundant : {"raise", "allow"}
        ``"raise"`` (default): redundant constraints raise
        :class:`~linkdyn.errors.RedundantConstraintsError` (from the consistent initial
        state). ``"allow"``: redundant but consistent constraints are accepted. The linear
        systems of the integrator are then regularised (ld_bdf.c, "Redundant constraints"):
        the output multipliers of a redundant set are the least-norm ones in the metric
        diag(Phi_q M^-1 Phi_q^T) (Tikhonov-regularised with 1e-8 of it: alike rockers get
        alike reactions to about 1e-5 relative at rtol 1e-10), and their resultant is the
        exact one. Conflicting constraints still raise.
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
    require_dynamic(model, "simulate")
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
    if t_end - t0 < 1e-13 * max(1.0, abs(t0), abs(t_end)):
        raise ValueError(f"t_end - t0 = {t_end - t0:.3g} s is below the time resolution of "
                         f"double precision at t = {t0:g} s (the span must be at least "
                         "1e-13 max(1, |t|))")
    rtol, atol = _positive("rtol", rtol), _positive("atol", atol)
    if rtol >= 1.0:
        raise ValueError(f"rtol = {rtol:g} is not a relative tolerance (use rtol < 1)")
    if rtol < 1e-14:
        raise ValueError(f"rtol = {rtol:g} is below what double precision can deliver "
                         "(use rtol >= 1e-14)")
    if isinstance(max_order, bool) or not isinstance(max_order, int) or not 1 <= max_order <= 5:
        raise ValueError(f"max_order must be an integer from 1 to 5, got {max_order!r}")
    if max_steps is None:
        max_steps = DEFAULT_MAX_STEPS
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or \
            not 0 <= max_steps < 2**63:
        raise ValueError(f"max_steps must be a non-negative integer below 2**63, got "
                         f"{max_steps!r}")
    for name, value in (("h_init", h_init), ("h_max", h_max), ("newton_tol", newton_tol),
                        ("event_tol", event_tol)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    nstick = len(model.force_info["frictions"])    # stick rows of contacts with friction
    width = 2 * model.nq + model.nc + nstick + model.kernels.nz   # (q, v, lam, z)
    if record is not None and not isinstance(record, Record):
        raise TypeError(f"record must be a linkdyn.Record, got {type(record).__name__}")
    # The series kept (names checked before any work), or None for whole rows.
    series = record.series(model) if record is not None else None
    event_rows = isinstance(t_out, str) and t_out == "events"
    if isinstance(t_out, str):
        if t_out not in ("final", "events"):
            raise ValueError(f"t_out must be an array of times, 'final' or 'events', got "
                             f"{t_out!r}")
        if dt_out is not None:
            raise ValueError("give t_out or dt_out, not both")
        times = np.array([t_end] if t_out == "final" else [t0, t_end])
    elif t_out is None:
        dt = (t_end - t0) / 1000 if dt_out is None else _positive("dt_out", dt_out)
        # Before the times exist: their number alone may not fit.
        check_size(int(min((t_end - t0) / dt, 1e18)) + 2, series, width,
                   f"model {model.name!r}")
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
        check_size(times.size, series, width, f"model {model.name!r}")

    if controller is not None:
        if not callable(controller):
            raise TypeError(f"controller must be callable as controller(t, state), got "
                            f"{controller!r}")
        if control_period is None:
            raise ValueError("a controller needs control_period (the sample period, s)")
        control_period = _positive("control_period", control_period)
        if not model.force_info["inputs"]:
            raise ValueError(f"model {model.name!r} has no motor or servo for a controller "
                             "to drive")
    elif control_period is not None:
        raise ValueError("control_period was given without a controller")

    allow_redundant = check_redundant(redundant)
    state = consistent_state(model, q=q0, v=v0, t=t0, hold=hold, redundant=redundant)
    # Per-run state: reference angles start at the consistent state's angles on the branch
    # of the guesses; the tracked coordinates start there too.
    try:
        rec0, _ = model.kernels.force_values(state.q, state.v, t0)
    except ValueError as exc:
        owner = _owner(model, exc.args[1])
        raise ForceElementError(f"model {model.name!r}: force element '{owner}' cannot be "
                                f"evaluated at t = {t0:.9g} s: its two points coincide, where "
                                "the direction of its force is undefined", t0, 0.0, None,
                                owner) from None
    run = model.kernels.run_state(reference_angles(model.kernels.arrays, state.q, rec0[:, 0]))
    if isinstance(swinging, str):
        swinging = (swinging,)
    known = [w[0] for w in model.force_info["swings"]]
    for name in swinging:
        if name not in known:
            raise ValueError(f"swinging: model {model.name!r} has no contact {name!r} with a "
                             f"swing partner (swinging contacts: {', '.join(known) or 'none'})")
    friction = (ContactModes(model, run, swinging, t0)
                if nstick or model.force_info["swings"] or model.force_info["arcs"] else None)
    info = model.force_info
    z0 = np.concatenate([np.zeros(info["nrec"] + info["nload"]), rec0[:, 0]])
    ev = compile_events(model, events)
    run.set_events(ev)
    integ = BDFIntegrator(run, rtol, atol, h_init=h_init, h_max=h_max,
                          max_order=max_order, max_steps=max_steps, newton_tol=newton_tol,
                          project_output=project_output, proportional=proportional,
                          event_tol=event_tol,
                          regularization=BDF_REGULARIZATION if allow_redundant else 0.0,
                          output_regularization=OUTPUT_REGULARIZATION,
                          stop_when_full=series is not None)
    samples, held, active = [], [], []
    records, impacts = [], []
    if series is None:
        sink = WholeRows(times, integ.n)
    else:
        def reduce(t, rows, first):
            part = _result(model, t, rows, {}, 0, samples, held, active, records, impacts,
                           friction, first)
            return {(a, n): (getattr(part, a) if n is None else getattr(part, a)(n))
                    for a, n, _ in series}
        sink = RecordedSeries(times, integ.n, series, reduce)
    ninput = model.kernels.ninput
    control_seconds, restarts = 0.0, 0

    def sample(t, y_now):
        nonlocal control_seconds
        c0 = time.perf_counter()
        changed = _apply_controller(model, controller, t, y_now, run)
        control_seconds += time.perf_counter() - c0
        samples.append(t)
        held.append(run.inputs[:ninput].copy())
        active.append(run.active[:ninput].copy())
        return changed

    mode_kinds = (CONTACT, FRICTION_STOP, FRICTION_SLIP, PASS, BACK, ARC)

    def advance(target):
        """Integrate to target through the non-terminal events; 2 after a terminal one."""
        while True:
            status = sink.integrate(integ, target)
            if status != 2:
                return status
            t_ev, fired = integ.event()
            stop = False
            for k in np.flatnonzero(fired):
                if ev["kind"][k] == CONTACT and run.gate[ev["record"][k]] == 0.0:
                    continue   # the circle of a swinging contact passing through its line
                records.append(EventRecord(float(t_ev), ev["events"][k].name, int(fired[k])))
                stop = stop or ev["events"][k].terminal
                if ev["kind"][k] == CONTACT and fired[k] > 0:
                    # Onset: the approach speed sets Lankarani-Nikravesh damping (per run).
                    s_now = integ.state()
                    rec, _ = model.kernels.force_values(s_now[:model.nq],
                                                        s_now[model.nq:2 * model.nq], t_ev,
                                                        run)
                    run.impact[ev["record"][k]] = -rec[ev["record"][k], 1]
                    impacts.append((float(t_ev), int(ev["record"][k]),
                                    float(run.impact[ev["record"][k]])))
            if friction is not None and any(ev["kind"][k] in mode_kinds
                                            for k in np.flatnonzero(fired)):
                # Contacts change modes (linkdyn.friction): decide, restart from the state
                # with the velocity of sticking contacts made consistent.
                y_now = integ.state()
                breaking = {ev["events"][k].target for k in np.flatnonzero(fired)
                            if ev["kind"][k] == FRICTION_SLIP}
                v_new = friction.decide(t_ev, y_now[:model.nq], y_now[model.nq:2 * model.nq],
                                        breaking, sink.written)
                status = integ.restart_at(y_now[:model.nq], v_new)
                if status != 0:
                    return status
                restarted = True
            else:
                restarted = False
            if stop:
                return 2
            if event_rows:
                # The event's state, consistent (a restart there), as a row of its own.
                status = 0 if restarted else integ.restart()
                if status != 0:
                    return status
                sink.append(float(integ.t), integ.state())

    check_callback(progress)
    start = time.perf_counter()
    reporter = (Reporter(lambda: (float(integ.t), int(integ.stats()["steps"])), progress)
                if progress is not None else None)
    try:
        if controller is not None:
            sample(t0, np.concatenate([state.q, state.v]))
        v_start = state.v
        if friction is not None:
            v_start = friction.decide(t0, state.q, state.v)
        status = integ.init(t0, state.q, v_start, z0)
        k = 0
        while status == 0:
            target = t_end
            if controller is not None:
                t_next = t0 + (k + 1) * control_period
                if t_next < t_end - 1e-9 * control_period:
                    target = t_next
            status = advance(target)
            if status != 0 or target == t_end:
                break
            k += 1
            if sample(target, integ.state()):
                restarts += 1
                status = integ.restart()
        if status == 2:
            # Stopped at a terminal event: the last row is the event state, made consistent
            # (multipliers from the index-1 equations) by a restart there.
            status = integ.restart()
            if sink.written == 0 or integ.t > sink.last_t:
                sink.append(float(integ.t), integ.state())
            status = 2 if status == 0 else status
    except ControllerError as exc:
        exc.result = _finish(model, sink, integ, 0, samples, held, active,
                             time.perf_counter() - start - control_seconds, control_seconds,
                             restarts, True, records, impacts, friction)
        raise
    finally:
        if reporter is not None:
            reporter.stop()
    elapsed = time.perf_counter() - start - control_seconds
    result = _finish(model, sink, integ, status, samples, held, active, elapsed,
                     control_seconds, restarts, controller is not None, records, impacts,
                     friction)
    if status == 1:
        warnings.warn(f"linkdyn: simulation interrupted at t = {integ.t:.6g} s; the result "
                      f"holds the {len(result.t)} output rows computed so far", RuntimeWarning,
                      stacklevel=2)
    elif status not in (0, 2):
        raise _failure(model, integ, status, result, run)
    return result


def _finish(model, sink, integ, status, samples, held, active, elapsed, control_seconds,
            restarts, controlled, records, impacts, friction):
    """The run's result from its output sink, with its stats."""
    stats = integ.stats()
    stats["output_seconds"] += sink.seconds
    stats["integration_seconds"] = max(0.0, elapsed - stats["output_seconds"])
    if controlled:
        stats.update(controller_samples=len(samples), controller_restarts=restarts,
                     controller_seconds=control_seconds)
    if model.force_info["frictions"]:
        stats["friction_decisions"] = friction.decisions
    t, rows = sink.result()
    if isinstance(sink, WholeRows):
        return _result(model, t, rows, stats, status, samples, held, active, records,
                       impacts, friction)
    return _result(model, t, None, stats, status, samples, held, active, records, impacts,
                   friction, recorded=rows)


def _result(model, t, rows, stats, status, samples, held, active, records, impacts, friction,
            first=0, recorded=None):
    """A result of whole rows (q, v, lam, stick multipliers, z), or with ``rows`` None of
    ``recorded`` series. ``first``: the index in the run of the first row (the friction
    modes' row changes before it apply from row 0)."""
    nq, nc = model.nq, model.nc
    ns = len(model.force_info["frictions"])
    ninput = model.kernels.ninput
    changes = ()
    if friction is not None:
        changes = tuple((max(0, row - first), *rest) for row, *rest in friction.row_changes)
    columns = (dict(q=None, v=None, lam=None, z=None, stick_lam=None) if rows is None else
               dict(q=rows[:, :nq], v=rows[:, nq:2 * nq], lam=rows[:, 2 * nq:2 * nq + nc],
                    z=rows[:, 2 * nq + nc + ns:],
                    stick_lam=rows[:, 2 * nq + nc:2 * nq + nc + ns] if ns else None))
    return SimulationResult(
        model=model, t=t, stats=stats, **columns,
        status={1: "interrupted", 2: "event"}.get(status, "success"), events=tuple(records),
        impacts=tuple(impacts),
        friction_modes=tuple(friction.history) if friction is not None else (),
        _friction_rows=changes, recorded=recorded,
        control_t=np.array(samples, dtype=float),
        control_inputs=np.array(held, dtype=float).reshape(len(samples), ninput),
        control_active=np.array(active, dtype=np.intc).reshape(len(samples), ninput))


def _owner(model: Model, record: int) -> str:
    """The force element a kernel record belongs to."""
    return next(name for name, (recs, _) in model.force_info["elements"].items()
                if record in recs)


def _failure(model: Model, integ: BDFIntegrator, status: int, result, run) -> SimulationError:
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
